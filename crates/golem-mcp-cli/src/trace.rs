//! `-v`'s protocol trace: every message, as sent and as received, on stderr.

use std::future::Future;
use std::io::Write;

use golem_mcp::{Inbound, Outgoing, Transport, TransportError};

/// The longest part of a message the trace shows; the rest is counted.
const SHOWN_BYTES: usize = 4096;

/// A transport that writes each message it carries to stderr, `→` for
/// messages to the server, `←` for messages from it and `×` for a
/// request whose answer the transport lost.
#[derive(Debug)]
pub struct Traced<T> {
    inner: T,
}

impl<T> Traced<T> {
    /// Traces `inner`'s messages.
    pub fn new(inner: T) -> Self {
        Traced { inner }
    }
}

impl<T: Transport> Transport for Traced<T> {
    fn send(&self, message: Outgoing) -> impl Future<Output = Result<(), TransportError>> + Send {
        trace("→", message.body());
        self.inner.send(message)
    }

    async fn recv(&self) -> Result<Inbound, TransportError> {
        let received = self.inner.recv().await?;
        match &received {
            Inbound::Message(message) => trace("←", message),
            Inbound::RequestFailed { id, error } => {
                trace("×", format!("request {id}: {error}").as_bytes());
            }
            _ => {}
        }
        Ok(received)
    }

    fn close(&self) -> impl Future<Output = Result<(), TransportError>> + Send {
        self.inner.close()
    }
}

fn trace(direction: &str, message: &[u8]) {
    let line = shown(message);
    // A trace line that cannot be written is not worth failing the command.
    let _ = writeln!(std::io::stderr().lock(), "golem-mcp: {direction} {line}");
}

/// The message as text, cut after [`SHOWN_BYTES`] (at a character boundary).
fn shown(message: &[u8]) -> String {
    let text = String::from_utf8_lossy(message);
    if text.len() <= SHOWN_BYTES {
        return text.into_owned();
    }
    let mut end = SHOWN_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes in all)", &text[..end], message.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_messages_are_cut_at_a_character_boundary() {
        assert_eq!(shown(b"{\"id\":1}"), "{\"id\":1}");
        let long = "é".repeat(SHOWN_BYTES);
        let cut = shown(long.as_bytes());
        assert!(
            cut.ends_with(&format!("… ({} bytes in all)", long.len())),
            "{cut}"
        );
        assert!(cut.len() < SHOWN_BYTES + 40);
    }
}
