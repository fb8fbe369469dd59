//! The library's traces, captured for one test: to look for secrets in
//! them, or to wait for a line that is the only sign of what a background
//! task decided.

use std::io::Write;
use std::sync::Arc;

use tokio::sync::watch;
use tracing::subscriber::DefaultGuard;

/// Everything traced (at every level) on this thread while the guard
/// lives. A `#[tokio::test]` runs its tasks on its own thread, so their
/// traces are here too.
pub fn capture() -> (Logs, DefaultGuard) {
    let logs = Logs(Arc::new(watch::Sender::new(String::new())));
    let writer = {
        let logs = logs.clone();
        move || LogWriter(logs.clone())
    };
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(writer)
        .finish();
    (logs, tracing::subscriber::set_default(subscriber))
}

/// The text traced so far.
#[derive(Clone)]
pub struct Logs(Arc<watch::Sender<String>>);

impl Logs {
    pub fn text(&self) -> String {
        self.0.borrow().clone()
    }

    /// Returns once the traces contain `needle`; unbounded (the test
    /// bounds it).
    pub async fn contain(&self, needle: &str) {
        let mut text = self.0.subscribe();
        // The sender lives in `self`: the wait cannot fail.
        let _ = text.wait_for(|text| text.contains(needle)).await;
    }
}

struct LogWriter(Logs);

impl Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let written = String::from_utf8_lossy(buf);
        (self.0).0.send_modify(|text| text.push_str(&written));
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
