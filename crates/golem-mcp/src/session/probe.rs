//! The era decision's probe: `server/discover`, sent before anything else
//! (ADR 0018).
//!
//! A discovery answer, or an error only a modern server gives, means a
//! modern server: the client speaks the newest revision both sides know,
//! correcting its choice when the server names its own. Any other error,
//! an HTTP refusal without a modern error in its body, or silence within
//! the bound means a legacy server, which the handshake then initializes on
//! the same connection. The fallback is never keyed on one error code:
//! legacy servers answer an unknown first request in many ways.
//! Authorization refusals, server failures (5xx) and broken connections
//! are errors, not verdicts.

use std::sync::Arc;
use std::time::Duration;

use crate::error::Error;
use crate::session::connection::{Connection, Request, decode};
use crate::session::era::{
    DiscoverResult, ModernError, ModernMeta, newest_mutual, no_mutual_version,
};
use crate::session::protocol::{HowChosen, SUPPORTED_PROTOCOL_VERSIONS, ServerInfo};
use crate::wire::transport_error::TransportError;

/// How many times the probe is sent again after a modern error (a revision
/// the server does not serve, a header it found wrong) before the client
/// gives up.
const MAX_CORRECTIONS: usize = 2;

/// What the probe found.
pub(crate) enum Verdict {
    /// A modern server, spoken to in this revision.
    Modern {
        info: Box<ServerInfo>,
        meta: ModernMeta,
    },
    /// A legacy server: `probe` says what the probe got instead.
    Legacy { probe: String },
}

/// What the probe needs: where to send it, and how.
pub(crate) struct Probe {
    pub(crate) connection: Arc<Connection>,
    /// The revision to ask for first.
    pub(crate) version: &'static str,
    /// Whether the application pinned that revision: then no other is
    /// accepted, and a legacy answer is an error, not a fallback.
    pub(crate) pinned: bool,
    /// How long to wait for an answer before deciding on a legacy server.
    pub(crate) timeout: Duration,
    /// Makes the `_meta` entries for a revision.
    pub(crate) remake: Box<dyn Fn(&'static str) -> ModernMeta + Send + Sync>,
}

#[derive(serde::Serialize)]
struct NoParams {}

impl Probe {
    /// Sends `server/discover` (again, after a modern error) until the era
    /// is known.
    pub(crate) async fn run(self) -> Result<Verdict, Error> {
        let operation = "server/discover";
        let mut version = self.version;
        let mut corrections = 0;
        loop {
            let meta = (self.remake)(version);
            let mut request = Request::new("server/discover", &NoParams {});
            request.modern = Some(&meta);
            let answer = tokio::time::timeout(
                self.timeout,
                self.connection.exchange_quietly(&operation, &request),
            )
            .await;
            let reply = match answer {
                Err(_) => {
                    return self.legacy(format!("no answer within {:?}", self.timeout));
                }
                Ok(Err(Error::Transport {
                    source: TransportError::HttpStatus(status),
                    ..
                })) if is_legacy_refusal(status.status) => {
                    return self.legacy(format!("HTTP {}", status.status));
                }
                Ok(Err(error)) => return Err(error),
                Ok(Ok(reply)) => reply,
            };
            let source = match decode::<DiscoverResult>(&operation, reply) {
                Ok(discovered) => return self.modern(discovered, version, meta),
                Err(Error::Protocol { source, .. }) => source,
                Err(Error::InvalidResponse { detail, .. }) => {
                    return self.legacy(format!(
                        "an answer that is not a discovery result ({detail})"
                    ));
                }
                Err(error) => return Err(error),
            };
            let correction = match ModernError::recognise(&source) {
                None => {
                    return self.legacy(format!("error {}: {}", source.code, source.message));
                }
                Some(_) if corrections >= MAX_CORRECTIONS => None,
                Some(ModernError::UnsupportedVersion { supported }) => {
                    let Some(mutual) = newest_mutual(&supported) else {
                        return self.legacy_listed(&supported, operation);
                    };
                    if self.pinned && mutual != self.version {
                        return Err(no_mutual_version(operation, &supported));
                    }
                    Some(mutual)
                }
                // The conformance suite's mock refuses a first request once;
                // asking again in the same revision is the correction.
                Some(ModernError::HeaderMismatch | ModernError::MissingCapability) => Some(version),
            };
            let Some(next) = correction else {
                return Err(Error::Protocol {
                    operation: operation.to_owned(),
                    source,
                });
            };
            tracing::debug!(%next, code = source.code, "mcp: the server refused the probe with a modern error; asking again");
            version = next;
            corrections += 1;
        }
    }

    /// A legacy server: a verdict, unless the revision was pinned.
    fn legacy(&self, probe: String) -> Result<Verdict, Error> {
        tracing::debug!(%probe, "mcp: no discovery answer; the server speaks a legacy revision");
        match self.pinned {
            false => Ok(Verdict::Legacy { probe }),
            true => Err(Error::invalid_response(
                "server/discover",
                format!(
                    "the server does not speak protocol {} (the client was pinned to it): {probe}",
                    self.version
                ),
            )),
        }
    }

    /// A server that lists no modern revision this client speaks: a legacy
    /// verdict when it lists a legacy one this client speaks (it answers
    /// `server/discover` but is served through `initialize`), else the
    /// error naming both lists.
    fn legacy_listed(&self, supported: &[String], operation: &str) -> Result<Verdict, Error> {
        let legacy = supported
            .iter()
            .find(|theirs| SUPPORTED_PROTOCOL_VERSIONS.contains(&theirs.as_str()));
        match legacy {
            Some(version) if !self.pinned => self.legacy(format!(
                "{operation} listed only legacy revisions ({version}, …)"
            )),
            _ => Err(no_mutual_version(operation, supported)),
        }
    }

    /// A modern server that answered: the revision it lists that this
    /// client prefers.
    fn modern(
        &self,
        discovered: DiscoverResult,
        asked: &'static str,
        meta: ModernMeta,
    ) -> Result<Verdict, Error> {
        let supported = discovered.supported_versions();
        let version = match supported.iter().any(|theirs| theirs == asked) {
            true => asked,
            false if self.pinned => return Err(no_mutual_version("server/discover", supported)),
            false => match newest_mutual(supported) {
                Some(version) => version,
                None => return self.legacy_listed(supported, "server/discover"),
            },
        };
        let meta = match version == meta.version() {
            true => meta,
            false => (self.remake)(version),
        };
        let chosen = match self.pinned {
            true => HowChosen::Pinned,
            false => HowChosen::Discovered,
        };
        Ok(Verdict::Modern {
            info: Box::new(discovered.into_info(version, chosen)),
            meta,
        })
    }
}

/// Whether an HTTP refusal of the probe (whose body held no modern error,
/// or the transport would have delivered it as the answer) marks a legacy
/// server: a 4xx other than the authorization ones, which stay errors.
fn is_legacy_refusal(status: u16) -> bool {
    (400..500).contains(&status) && status != 401 && status != 403
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_client_errors_other_than_authorization_mark_a_legacy_server() {
        for status in [400, 404, 405, 406, 415, 422] {
            assert!(is_legacy_refusal(status), "{status}");
        }
        for status in [401, 403, 500, 502, 503, 302] {
            assert!(!is_legacy_refusal(status), "{status}");
        }
    }
}
