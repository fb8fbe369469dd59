//! The handshake, once per generation: the era decided (the
//! `server/discover` probe, or `initialize` at once on a legacy-only
//! transport or a pinned legacy revision), then `initialize` and
//! `notifications/initialized` in the legacy era. A state machine
//! ([`Lifecycle`]) whose every stage keeps what it waits for, so that a
//! dropped `initialize` is resumed by the next one, never repeated
//! (`state.rs`).

pub(crate) mod state;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::error::Error;
use crate::session::connection::{Connection, Request, decode, encode_notification, settle};
use crate::session::generation::{AbortOnDrop, Generation, lock, start_inbound};
use crate::session::handle::Client;
use crate::session::handshake::state::{AbortOnDropResult, Lifecycle, ProbeTask};
use crate::session::modern::era::{ModernError, ModernMeta, UNSUPPORTED_VERSION, newest_mutual};
use crate::session::modern::listen;
use crate::session::modern::probe::{Judge, Probe, Verdict};
use crate::session::operation::{Operation, failure};
use crate::session::protocol::{
    Era, HowChosen, InitializeParams, InitializeResult, MODERN_PROTOCOL_VERSION,
    MODERN_PROTOCOL_VERSIONS, ServerInfo,
};
use crate::session::telemetry;
use crate::wire::transport_error::TransportError;

impl Client {
    /// [`initialize`](Client::initialize), closing the client when it
    /// fails (a stdio server's process ends): the handshake of the
    /// connecting constructors, which hand out no half-made client.
    pub(crate) async fn initialize_or_close(&self) -> Result<(), Error> {
        if let Err(error) = self.initialize().await {
            // Best effort: the handshake's error is the one to report.
            let _ = self.close().await;
            return Err(error);
        }
        Ok(())
    }

    /// Connects to the server: decides the protocol era once, and records
    /// the server's identity, capabilities and instructions (ADR 0018).
    /// Starts the inbound task on the current Tokio runtime.
    ///
    /// By default ([`ProtocolChoice::Auto`](crate::ProtocolChoice::Auto)) the client probes with
    /// `server/discover`: a modern (2026-07-28) server's answer decides the
    /// revision, and nothing more is sent; a legacy server (any other
    /// error, an HTTP refusal without a modern error, or no answer within
    /// [`ClientConfig::probe_timeout`](crate::ClientConfig::probe_timeout))
    /// is then sent the `initialize` handshake on the same connection,
    /// offering [`LATEST_PROTOCOL_VERSION`](crate::LATEST_PROTOCOL_VERSION)
    /// and accepting any revision this client speaks (refusing others with
    /// [`Error::VersionMismatch`]). A pinned revision
    /// ([`ClientConfig::protocol`](crate::ClientConfig::protocol)) skips the
    /// probe (legacy) or the fallback (modern). A transport that carries the
    /// initialize era only ([`Transport::legacy_only`](crate::Transport::legacy_only),
    /// the HTTP+SSE one) gets `initialize` at once, unprobed.
    /// [`ServerInfo::chosen`] says which happened.
    ///
    /// Must succeed before any other operation. Calling it again once it has
    /// succeeded does nothing and returns the same server information.
    ///
    /// Cancel safe: neither the probe nor `initialize` is cancelled (the
    /// protocol forbids cancelling `initialize`); if the future is dropped,
    /// what was sent runs on, and the next call waits for that same answer
    /// rather than sending the request again.
    pub async fn initialize(&self) -> Result<&ServerInfo, Error> {
        let session = self.generation();
        self.handshake(&session).await?;
        self.server_or_invalid()
    }

    /// Runs `session`'s handshake to its end, or resumes it where a dropped
    /// one left it (see [`initialize`](Client::initialize)).
    pub(crate) async fn handshake(&self, session: &Arc<Generation>) -> Result<(), Error> {
        let mut lifecycle = session.lifecycle.lock().await;
        let result = self.advance(session, &mut lifecycle).await;
        // Under the lock, so that a handshake another call starts next is
        // not said to be over.
        session.set_waiting_on(lifecycle.waiting_on());
        result
    }

    /// Takes `lifecycle` to its end, noting before each wait which message
    /// it waits on: a bound around `initialize` that runs out names it
    /// ([`Client::handshake_waiting_on`]).
    async fn advance(
        &self,
        session: &Arc<Generation>,
        lifecycle: &mut Lifecycle,
    ) -> Result<(), Error> {
        let operation = Operation("initialize", None);
        let connection = &session.connection;
        loop {
            session.set_waiting_on(lifecycle.waiting_on());
            if matches!(*lifecycle, Lifecycle::Ready) {
                return Ok(());
            }
            // Closed, or the transport failed: say so at once.
            connection.check_open(&operation)?;
            match &mut *lifecycle {
                Lifecycle::Ready => return Ok(()),
                Lifecycle::New => {
                    start_inbound(session);
                    let pinned = self.inner.setup.protocol.pinned()?;
                    let legacy_only = connection.legacy_only();
                    *lifecycle = match pinned {
                        Some(version) if Era::of(version) == Era::Legacy => {
                            self.start_initialize(connection, HowChosen::Pinned, Some(version))?
                        }
                        Some(version) if legacy_only => return Err(modern_on_legacy(version)),
                        // A transport only legacy servers serve: nothing to
                        // probe (ADR 0018).
                        None if legacy_only => {
                            self.start_initialize(connection, HowChosen::LegacyTransport, None)?
                        }
                        _ => Lifecycle::Probing {
                            task: self.start_probe(connection, pinned),
                            late: false,
                        },
                    };
                }
                Lifecycle::Probing { task, late } => {
                    let late = *late;
                    let verdict = match (&mut task.0).await {
                        Ok(verdict) => verdict,
                        Err(error) => Err(Error::transport(
                            &operation.to_string(),
                            TransportError::Other(Box::new(error)),
                        )),
                    };
                    match verdict {
                        Ok(Verdict::Modern { mut info, meta }) => {
                            connection.set_modern(meta);
                            if late {
                                // Pinned to the revision the refusal named,
                                // but discovered, not pinned by the user.
                                info.chosen = HowChosen::Discovered;
                            }
                            let _ = session.server.set(*info);
                            // Idle until something is wanted; what an
                            // earlier connection's server acknowledged no
                            // longer holds.
                            self.inner.listening.reset();
                            *lock(&session.listener) = Some(AbortOnDrop(tokio::spawn(
                                listen::run(connection.clone(), self.inner.listening.clone()),
                            )));
                            *lifecycle = Lifecycle::Ready;
                            self.became_ready(session);
                        }
                        Ok(Verdict::Legacy { probe }) => {
                            *lifecycle = self.start_initialize(
                                connection,
                                HowChosen::FellBack { probe },
                                None,
                            )?;
                        }
                        Err(error) => {
                            *lifecycle = Lifecycle::New;
                            return Err(error);
                        }
                    }
                }
                Lifecycle::Initializing {
                    id,
                    sent,
                    reply,
                    chosen,
                    pinned,
                    traced,
                } => {
                    let answer = loop {
                        let Some(sending) = sent.as_mut() else {
                            break (&mut *reply).await;
                        };
                        let sent_result = tokio::select! {
                            biased;
                            answer = &mut *reply => Err(answer),
                            result = sending.wait() => Ok(result),
                        };
                        match sent_result {
                            Err(answer) => break answer,
                            Ok(Ok(())) => *sent = None,
                            Ok(Err(source)) => {
                                // No answer will come: forget the request.
                                connection.forget(*id);
                                let error = failure(connection, operation, source);
                                if let Some(traced) = traced {
                                    traced.settled(Some(&error));
                                }
                                *lifecycle = Lifecycle::New;
                                return Err(error);
                            }
                        }
                    };
                    let pinned = *pinned;
                    let accepted = settle::<InitializeResult>(connection, &operation, answer)
                        .and_then(|result| result.accept(pinned));
                    if let Some(traced) = traced {
                        traced.settled(accepted.as_ref().err());
                    }
                    let mut server = match accepted {
                        Ok(server) => server,
                        Err(error) => {
                            // A server that missed the probe's bound (busy
                            // CPUs, a slow start) and refuses `initialize`
                            // as a modern one: asked again, once, in the
                            // revision it serves.
                            let fell_back = matches!(chosen, HowChosen::FellBack { .. });
                            if let Some(version) = modern_refusal(&error).filter(|_| fell_back) {
                                tracing::debug!(%version, "mcp: the server refused initialize as a modern server does; probing again");
                                *lifecycle = Lifecycle::Probing {
                                    task: self.start_probe(connection, Some(version)),
                                    late: true,
                                };
                                continue;
                            }
                            // After an error a later call starts again from
                            // scratch (a dead transport then fails it at once).
                            *lifecycle = Lifecycle::New;
                            return Err(error);
                        }
                    };
                    server.info.chosen = std::mem::replace(chosen, HowChosen::Pinned);
                    connection.set_protocol_version(server.protocol_version);
                    // A session is initialized once; should a resumed
                    // handshake race a value in, the first one stays.
                    let _ = session.server.set(server.info);
                    let confirm = encode_notification("notifications/initialized", None::<&()>)
                        .map_err(|error| Error::encode("initialize", error))?;
                    *lifecycle = Lifecycle::Confirming {
                        sent: AbortOnDropResult::spawn(connection, confirm),
                    };
                }
                Lifecycle::Confirming { sent } => {
                    if let Err(source) = sent.wait().await {
                        *lifecycle = Lifecycle::New;
                        return Err(failure(connection, operation, source));
                    }
                    *lifecycle = Lifecycle::Ready;
                    self.became_ready(session);
                }
            }
        }
    }

    /// Marks `session` ready. The first session's server information is
    /// the client's; from then on a lost server is restarted, when asked
    /// for.
    fn became_ready(&self, session: &Generation) {
        self.inner
            .mirrors_headers
            .store(session.connection.mirrors_headers(), Ordering::Relaxed);
        session.initialized.store(true, Ordering::Release);
        if session.number == 0
            && let Some(info) = session.server.get()
        {
            let _ = self.inner.server.set(info.clone());
        }
        if let Some(restarts) = &self.inner.restarts {
            restarts.start(self.downgrade());
        }
    }

    /// Sends `initialize` on a task of its own: the legacy handshake's
    /// first stage.
    fn start_initialize(
        &self,
        connection: &Arc<Connection>,
        chosen: HowChosen,
        pinned: Option<&'static str>,
    ) -> Result<Lifecycle, Error> {
        let operation = Operation("initialize", None);
        let params = InitializeParams::new(
            &self.inner.setup.client_info,
            self.inner.offer.capabilities(),
            pinned,
        );
        // Sent here, answered in `Lifecycle::Initializing`: the span lives
        // in that state until the answer is settled.
        let traced = telemetry::request_span("initialize", None, || connection.reached());
        let request = Request::new("initialize", &params);
        let (in_flight, message) =
            connection.start(&operation, &request, false, traced.as_ref())?;
        Ok(Lifecycle::Initializing {
            id: in_flight.id(),
            sent: Some(AbortOnDropResult::spawn(connection, message)),
            reply: in_flight.detach(),
            chosen,
            pinned,
            traced,
        })
    }

    /// Runs the legacy handshake again on `generation`'s connection, whose
    /// server dropped the session: `initialize`, offering the revision
    /// negotiated first and accepting no other, then
    /// `notifications/initialized`. What the server says of itself now is
    /// not recorded: the client already knows it.
    pub(in crate::session) async fn initialize_again(
        &self,
        generation: &Generation,
    ) -> Result<(), Error> {
        let operation = Operation("initialize", None);
        let connection = &generation.connection;
        let version = connection.protocol_version();
        let params = InitializeParams::new(
            &self.inner.setup.client_info,
            self.inner.offer.capabilities(),
            version,
        );
        let reply = connection
            .exchange(&operation, &Request::new("initialize", &params), None)
            .await?;
        decode::<InitializeResult>(&operation, reply)?.accept(version)?;
        let confirm = encode_notification("notifications/initialized", None::<&()>)
            .map_err(|error| Error::encode("initialize", error))?;
        connection
            .send(confirm)
            .await
            .map_err(|source| failure(connection, operation, source))
    }

    /// Starts the era probe on a task of its own, asking for the pinned
    /// revision or the newest one.
    fn start_probe(&self, connection: &Arc<Connection>, pinned: Option<&'static str>) -> ProbeTask {
        let probe = Probe {
            connection: connection.clone(),
            timeout: self.inner.setup.probe_timeout,
            judge: Judge {
                version: pinned.unwrap_or(MODERN_PROTOCOL_VERSION),
                pinned: pinned.is_some(),
                remake: Box::new(self.meta_maker()),
            },
        };
        ProbeTask(tokio::spawn(probe.run()))
    }

    /// Makes the modern `_meta` entries for a revision: this client's
    /// identity and exactly the capabilities the application registered.
    fn meta_maker(&self) -> impl Fn(&'static str) -> ModernMeta + Send + Sync + 'static {
        let client_info = self.inner.setup.client_info.clone();
        let capabilities = self.inner.offer.modern_capabilities();
        move |version| ModernMeta::new(version, &client_info, &capabilities)
    }
}

/// The error for a modern revision pinned on a transport that carries the
/// initialize era only.
fn modern_on_legacy(version: &str) -> Error {
    Error::InvalidConfig {
        operation: "initialize",
        field: "protocol".into(),
        problem: format!(
            "protocol {version} is of the modern era, which this transport cannot carry (the \
             HTTP+SSE transport of 2024-11-05 speaks the initialize era only); pin a revision \
             of 2025-11-25 or earlier, or leave the choice to the client"
        ),
    }
}

/// The modern revision a refusal of `initialize` says the server serves:
/// an unsupported-version error (the newest mutual revision it lists, or
/// this client's newest when it lists none), or an answer in a modern
/// revision. `None` for any other failure.
fn modern_refusal(error: &Error) -> Option<&'static str> {
    match error {
        Error::Protocol { source, .. } if source.code == UNSUPPORTED_VERSION => {
            match ModernError::recognise(source) {
                Some(ModernError::UnsupportedVersion { supported }) => newest_mutual(&supported),
                _ => Some(MODERN_PROTOCOL_VERSION),
            }
        }
        Error::VersionMismatch { received, .. } => MODERN_PROTOCOL_VERSIONS
            .iter()
            .copied()
            .find(|version| version == received),
        _ => None,
    }
}
