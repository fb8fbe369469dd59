//! The stdio face: one host, the process's own stdin and stdout, one
//! JSON-RPC message per line (what a desktop host spawns). Nothing but
//! messages is ever written to stdout; the session ends when stdin does.

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

use crate::serve::host::{self, HostMessage};
use crate::serve::service::{ServeError, Service};
use crate::transports::stdio::DEFAULT_MAX_MESSAGE_BYTES;

/// How long the last messages to the host may take to be written once the
/// session has ended.
const WRITE_TIME: std::time::Duration = std::time::Duration::from_secs(2);

/// Serves `service` to the host on this process's stdin and stdout until
/// stdin ends (the host went) and the service is done with the session.
/// A line longer than [`DEFAULT_MAX_MESSAGE_BYTES`](crate::DEFAULT_MAX_MESSAGE_BYTES),
/// or not JSON-RPC, is skipped with a warning (a `tracing` event).
///
/// Cancel safe: dropping the future stops reading stdin (a line half read
/// is lost with it); the session goes on on its own task until
/// [`Service::stop`] ends it (the `bridge` command's signal test).
pub async fn serve_stdio(service: Service) -> Result<(), ServeError> {
    let (session, ends) = host::session(service.recorder()?);
    let mut served = tokio::spawn(service.serves.clone().serve(session));
    let mut served_to_end = false;
    let mut outbox = ends.outbox;
    let write = async move {
        let mut stdout = tokio::io::stdout();
        while let Some(message) = outbox.recv().await {
            if message.body.is_empty() {
                continue;
            }
            let mut line = Vec::with_capacity(message.body.len() + 1);
            line.extend_from_slice(&message.body);
            line.push(b'\n');
            if stdout.write_all(&line).await.is_err() || stdout.flush().await.is_err() {
                return;
            }
        }
    };
    let writer = tokio::spawn(write);
    let inbox = ends.inbox;
    let mut stdin = BufReader::new(tokio::io::stdin());
    let mut line = Vec::new();
    loop {
        line.clear();
        // Bounded: a line is read at most one byte past the limit.
        let mut bounded = (&mut stdin).take(DEFAULT_MAX_MESSAGE_BYTES as u64 + 1);
        let read = tokio::select! {
            read = bounded.read_until(b'\n', &mut line) => read.map_err(ServeError::Io)?,
            // The service ended first (its server gone for good): the host
            // sees this process end.
            _ = &mut served => {
                served_to_end = true;
                break;
            }
        };
        if read == 0 {
            break;
        }
        if line.last() != Some(&b'\n') && line.len() > DEFAULT_MAX_MESSAGE_BYTES {
            // Skip the rest of the line.
            let mut rest = Vec::new();
            loop {
                rest.clear();
                let more = (&mut stdin)
                    .take(64 * 1024)
                    .read_until(b'\n', &mut rest)
                    .await
                    .map_err(ServeError::Io)?;
                if more == 0 || rest.last() == Some(&b'\n') {
                    break;
                }
            }
            tracing::warn!("golem-mcp serve: skipped a message over the size bound from the host");
            continue;
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        match HostMessage::parse(text) {
            Ok(message) => {
                if inbox.send(message).await.is_err() {
                    break;
                }
            }
            Err(problem) => {
                tracing::warn!(%problem, "golem-mcp serve: the host sent something that is not JSON-RPC");
            }
        }
    }
    drop(inbox);
    if !served_to_end {
        let _ = served.await;
    }
    // What the service sent last is written, within a bound.
    let _ = tokio::time::timeout(WRITE_TIME, writer).await;
    Ok(())
}
