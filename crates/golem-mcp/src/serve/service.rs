//! [`Service`]: what answers the hosts a face serves (a [`Proxy`], or a
//! recorded session), with the recording of their sessions, and
//! [`ServeError`], why a face stopped.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::serve::host::Serves;
use crate::serve::proxy::Proxy;
use crate::serve::replayed::Replayed;
use crate::transports::replay::{RecordWriter, Recording, session_path};

/// What answers the hosts a face serves: a [`Proxy`], or a recorded
/// session ([`Service::replay`]); each host's session recorded when
/// [`recorded`](Service::recorded).
#[derive(Clone)]
pub struct Service {
    pub(crate) serves: Arc<dyn Serves>,
    recorder: Option<Arc<Recorder>>,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service")
            .field("recorded", &self.recorder.as_ref().map(|r| &r.base))
            .finish_non_exhaustive()
    }
}

impl From<Proxy> for Service {
    fn from(proxy: Proxy) -> Self {
        Service {
            serves: proxy.into_settings(),
            recorder: None,
        }
    }
}

impl Service {
    /// Answers every host from `recording`, as `golem-mcp replay` does
    /// (see [`Replayer`](crate::replay::Replayer) for how requests are
    /// matched).
    pub fn replay(recording: Recording) -> Self {
        Service {
            serves: Arc::new(Replayed::new(recording)),
            recorder: None,
        }
    }

    /// Records each host's session to a JSON Lines file of its own: the
    /// first to `out`, the next to `out` with `-2`, `-3`, … before its
    /// extension. Every message is written with its direction and time;
    /// HTTP headers (and so credentials) never are.
    pub fn recorded(mut self, out: impl Into<PathBuf>, target: impl Into<String>) -> Self {
        self.recorder = Some(Arc::new(Recorder {
            base: out.into(),
            target: target.into(),
            sessions: AtomicUsize::new(0),
        }));
        self
    }

    /// Ends every session being served (a proxy's clients closed: an HTTP
    /// session ended with `DELETE`, a stdio server stopped), waiting for
    /// them at most `within`; what a command does on a signal. Cancel safe:
    /// dropped, the sessions already told to stop still end.
    pub async fn stop(&self, within: std::time::Duration) {
        let _ = tokio::time::timeout(within, self.serves.clone().stop()).await;
    }

    /// The writer for a new session, when sessions are recorded.
    pub(crate) fn recorder(&self) -> Result<Option<Arc<RecordWriter>>, ServeError> {
        let Some(recorder) = &self.recorder else {
            return Ok(None);
        };
        let n = recorder.sessions.fetch_add(1, Ordering::Relaxed) + 1;
        let path = session_path(&recorder.base, n);
        let writer = RecordWriter::create(&path, &recorder.target)
            .map_err(|source| ServeError::Record { path, source })?;
        Ok(Some(Arc::new(writer)))
    }
}

/// Where sessions are recorded.
struct Recorder {
    base: PathBuf,
    target: String,
    sessions: AtomicUsize,
}

/// Why a face stopped serving.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// Reading or writing the host's stream failed.
    #[error("golem-mcp serve: {0}")]
    Io(#[source] std::io::Error),
    /// The HTTP address could not be listened on.
    #[error("golem-mcp serve: cannot listen on {address}: {source}")]
    Listen {
        /// The address asked for.
        address: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The serving configuration is refused (an address not on this
    /// machine without a bearer token, say).
    #[error("golem-mcp serve: {0}")]
    Config(String),
    /// A session's recording could not be created.
    #[error("golem-mcp serve: cannot write the recording {}: {source}", path.display())]
    Record {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}
