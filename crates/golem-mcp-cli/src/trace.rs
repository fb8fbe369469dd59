//! `-v`'s protocol trace: every message, as sent and as received, on stderr.

use std::io::Write;

use golem_mcp::{Observed, Transport, WireEvent};

/// The longest part of a message the trace shows; the rest is counted.
const SHOWN_BYTES: usize = 4096;

/// `inner`, writing each message it carries to stderr: `→` for messages
/// to the server, `←` for messages from it and `×` for a request whose
/// answer the transport lost.
pub fn traced<T: Transport>(inner: T) -> Observed<T, fn(WireEvent<'_>)> {
    Observed::new(inner, trace_event)
}

fn trace_event(event: WireEvent<'_>) {
    match event {
        WireEvent::Sent(message) => trace("→", message.body()),
        WireEvent::Received(message) => trace("←", message),
        WireEvent::Lost { id, error } => trace("×", format!("request {id}: {error}").as_bytes()),
        _ => {}
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
