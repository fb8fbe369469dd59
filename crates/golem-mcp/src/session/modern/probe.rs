//! The era decision's probe: `server/discover`, sent before anything else
//! (ADR 0018).
//!
//! A discovery answer, or an error only a modern server gives, means a
//! modern server: the client speaks the newest revision both sides know,
//! correcting its choice when the server names its own. Any other error,
//! an HTTP refusal without a modern error in its body, or silence within
//! the bound means a legacy server, which the handshake then initializes on
//! the same connection. The fallback is never keyed on one error code:
//! legacy servers answer an unknown first request in many ways, and some
//! (a popular git server over HTTP) with a server failure (5xx) to a request
//! without a session. Authorization refusals and broken connections are
//! errors, not verdicts.
//!
//! [`Probe::run`] does the sending; [`Judge::classify`] decides what each
//! answer means, without I/O.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;

use crate::error::Error;
use crate::session::connection::{Connection, Request, decode};
use crate::session::modern::era::{
    DiscoverResult, ModernError, ModernMeta, newest_mutual, no_mutual_version,
};
use crate::session::protocol::{HowChosen, SUPPORTED_PROTOCOL_VERSIONS, ServerInfo};
use crate::wire::transport_error::TransportError;

/// How many times the probe is sent again after a modern error (a revision
/// the server does not serve, a header it found wrong) before the client
/// gives up.
const MAX_CORRECTIONS: usize = 2;

/// The probe's method, and what its errors name.
const OPERATION: &str = "server/discover";

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

/// What the probe needs: where to send it, how long to wait, and how to
/// judge the answers.
pub(crate) struct Probe {
    pub(crate) connection: Arc<Connection>,
    /// How long to wait for an answer before deciding on a legacy server.
    pub(crate) timeout: Duration,
    pub(crate) judge: Judge,
}

/// What one `server/discover` brought back.
pub(crate) enum Answer {
    /// Nothing within the probe's bound.
    Silence,
    /// The reply's bytes, or why there is none.
    Reply(Result<Bytes, Error>),
}

/// What an answer decides: the verdict (or the error that ends the
/// handshake), or the revision to ask in again after a modern error.
pub(crate) enum Step {
    Decided(Result<Verdict, Error>),
    AskAgain(&'static str),
}

/// The probe's pure part: what each answer means. No I/O, so that every
/// way a server may answer can be tested on its own.
pub(crate) struct Judge {
    /// The revision to ask for first.
    pub(crate) version: &'static str,
    /// Whether the application pinned that revision: then no other is
    /// accepted, and a legacy answer is an error, not a fallback.
    pub(crate) pinned: bool,
    /// Makes the `_meta` entries for a revision.
    pub(crate) remake: Box<dyn Fn(&'static str) -> ModernMeta + Send + Sync>,
}

#[derive(serde::Serialize)]
struct NoParams {}

impl Probe {
    /// Sends `server/discover` (again, after a modern error) until the era
    /// is known.
    pub(crate) async fn run(self) -> Result<Verdict, Error> {
        let mut version = self.judge.version;
        let mut corrections = 0;
        loop {
            let meta = (self.judge.remake)(version);
            let mut request = Request::new(OPERATION, &NoParams {});
            request.modern = Some(&meta);
            let answer = tokio::time::timeout(
                self.timeout,
                self.connection.exchange_quietly(&OPERATION, &request),
            )
            .await;
            let answer = match answer {
                Err(_) => Answer::Silence,
                Ok(reply) => Answer::Reply(reply),
            };
            match self.judge.classify(answer, self.timeout, meta, corrections) {
                Step::Decided(verdict) => return verdict,
                Step::AskAgain(next) => {
                    version = next;
                    corrections += 1;
                }
            }
        }
    }
}

impl Judge {
    /// What `answer` to a probe in `meta`'s revision means, after
    /// `corrections` modern errors (the probe waited `waited` for it).
    pub(crate) fn classify(
        &self,
        answer: Answer,
        waited: Duration,
        meta: ModernMeta,
        corrections: usize,
    ) -> Step {
        let version = meta.version();
        let reply = match answer {
            Answer::Silence => return self.legacy(format!("no answer within {waited:?}")),
            Answer::Reply(Err(Error::Transport {
                source: TransportError::HttpStatus(status),
                ..
            })) if is_legacy_refusal(status.status) => {
                return self.legacy(format!("HTTP {}", status.status));
            }
            Answer::Reply(Err(error)) => return Step::Decided(Err(error)),
            Answer::Reply(Ok(reply)) => reply,
        };
        let source = match decode::<DiscoverResult>(&OPERATION, reply) {
            Ok(discovered) => return Step::Decided(self.modern(discovered, version, meta)),
            Err(Error::Protocol { source, .. }) => source,
            Err(Error::InvalidResponse { detail, .. }) => {
                return self.legacy(format!(
                    "an answer that is not a discovery result ({detail})"
                ));
            }
            Err(error) => return Step::Decided(Err(error)),
        };
        let correction = match ModernError::recognise(&source) {
            None => return self.legacy(format!("error {}: {}", source.code, source.message)),
            Some(_) if corrections >= MAX_CORRECTIONS => None,
            Some(ModernError::UnsupportedVersion { supported }) => {
                let Some(mutual) = newest_mutual(&supported) else {
                    return Step::Decided(self.legacy_listed(&supported, OPERATION));
                };
                if self.pinned && mutual != self.version {
                    return Step::Decided(Err(no_mutual_version(OPERATION, &supported)));
                }
                Some(mutual)
            }
            // The conformance suite's mock refuses a first request once;
            // asking again in the same revision is the correction.
            Some(ModernError::HeaderMismatch | ModernError::MissingCapability) => Some(version),
        };
        match correction {
            Some(next) => {
                tracing::debug!(%next, code = source.code, "mcp: the server refused the probe with a modern error; asking again");
                Step::AskAgain(next)
            }
            None => Step::Decided(Err(Error::Protocol {
                operation: OPERATION.to_owned(),
                source,
            })),
        }
    }

    /// A legacy server: a verdict, unless the revision was pinned.
    fn legacy(&self, probe: String) -> Step {
        Step::Decided(self.legacy_verdict(probe))
    }

    fn legacy_verdict(&self, probe: String) -> Result<Verdict, Error> {
        tracing::debug!(%probe, "mcp: no discovery answer; the server speaks a legacy revision");
        match self.pinned {
            false => Ok(Verdict::Legacy { probe }),
            true => Err(Error::invalid_response(
                OPERATION,
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
            Some(version) if !self.pinned => self.legacy_verdict(format!(
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
            false if self.pinned => return Err(no_mutual_version(OPERATION, supported)),
            false => match newest_mutual(supported) {
                Some(version) => version,
                None => return self.legacy_listed(supported, OPERATION),
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
/// server: any error status but the authorization ones (401, 403), which
/// stay errors. A 5xx included: a modern server does not fail
/// `server/discover`, and a legacy one may fail a request it does not know
/// (issue 38); a server that fails everything fails `initialize` next.
fn is_legacy_refusal(status: u16) -> bool {
    (400..600).contains(&status) && status != 401 && status != 403
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::protocol::{ClientInfo, MODERN_PROTOCOL_VERSION};

    fn judge(pinned: bool) -> Judge {
        Judge {
            version: MODERN_PROTOCOL_VERSION,
            pinned,
            remake: Box::new(|version| {
                ModernMeta::new(version, &ClientInfo::default(), &serde_json::json!({}))
            }),
        }
    }

    fn classify(judge: &Judge, answer: Answer) -> Step {
        let meta = (judge.remake)(judge.version);
        judge.classify(answer, Duration::from_secs(1), meta, 0)
    }

    fn reply(json: &str) -> Answer {
        Answer::Reply(Ok(Bytes::from(json.to_owned())))
    }

    #[track_caller]
    fn assert_legacy(step: Step, says: &str) {
        match step {
            Step::Decided(Ok(Verdict::Legacy { probe })) => {
                assert!(probe.contains(says), "{probe}")
            }
            Step::Decided(Ok(Verdict::Modern { .. })) => panic!("modern, not legacy"),
            Step::Decided(Err(error)) => panic!("an error, not legacy: {error}"),
            Step::AskAgain(version) => panic!("asks again in {version}, not legacy"),
        }
    }

    #[test]
    fn silence_and_errors_of_legacy_servers_are_a_legacy_verdict() {
        let judge = judge(false);
        assert_legacy(classify(&judge, Answer::Silence), "no answer within 1s");
        assert_legacy(
            classify(
                &judge,
                reply(
                    r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"Method not found"}}"#,
                ),
            ),
            "error -32601",
        );
        assert_legacy(
            classify(&judge, reply(r#"{"jsonrpc":"2.0","id":0,"result":[]}"#)),
            "not a discovery result",
        );
    }

    #[test]
    fn a_discovery_answer_is_a_modern_verdict_and_pinning_makes_legacy_an_error() {
        let answer = format!(
            r#"{{"jsonrpc":"2.0","id":0,"result":{{"supportedVersions":["{MODERN_PROTOCOL_VERSION}"],"capabilities":{{}},"serverInfo":{{"name":"s","version":"1"}}}}}}"#
        );
        match classify(&judge(false), reply(&answer)) {
            Step::Decided(Ok(Verdict::Modern { info, .. })) => {
                assert_eq!(info.protocol_version, MODERN_PROTOCOL_VERSION);
                assert_eq!(info.name, "s");
            }
            _ => panic!("not a modern verdict"),
        }
        match classify(&judge(true), Answer::Silence) {
            Step::Decided(Err(error)) => {
                assert!(error.to_string().contains("pinned"), "{error}")
            }
            _ => panic!("a pinned probe's silence must be an error"),
        }
    }

    #[test]
    fn a_modern_refusal_of_the_revision_asks_again_in_a_mutual_one() {
        let refusal = format!(
            r#"{{"jsonrpc":"2.0","id":0,"error":{{"code":-32022,"message":"unsupported","data":{{"supported":["{MODERN_PROTOCOL_VERSION}"]}}}}}}"#
        );
        match classify(&judge(false), reply(&refusal)) {
            Step::AskAgain(version) => assert_eq!(version, MODERN_PROTOCOL_VERSION),
            Step::Decided(Ok(_)) => panic!("decided, not asking again"),
            Step::Decided(Err(error)) => panic!("an error, not asking again: {error}"),
        }
    }

    #[test]
    fn error_statuses_other_than_authorization_mark_a_legacy_server() {
        for status in [400, 404, 405, 406, 415, 422, 500, 502, 503] {
            assert!(is_legacy_refusal(status), "{status}");
        }
        for status in [401, 403, 302, 200] {
            assert!(!is_legacy_refusal(status), "{status}");
        }
    }
}
