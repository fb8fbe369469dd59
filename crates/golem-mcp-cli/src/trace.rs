//! `-v`'s protocol trace: every message, as sent and as received, on stderr;
//! and the library's log lines in the same style. It knows nothing of the
//! session: it wraps any transport.

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
    let line = golem_terminal::one_line(&line);
    // A trace line that cannot be written is not worth failing the command.
    let _ = writeln!(std::io::stderr().lock(), "golem-mcp: {direction} {line}");
}

/// The library's log events as `-v` lines: `golem-mcp: · ` then the
/// message (without the library's `mcp: ` prefix), its fields in
/// parentheses, and the level when it is a warning or worse.
pub struct LogLine;

impl<S, N> tracing_subscriber::fmt::FormatEvent<S, N> for LogLine
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    N: for<'a> tracing_subscriber::fmt::FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        _context: &tracing_subscriber::fmt::FmtContext<'_, S, N>,
        mut writer: tracing_subscriber::fmt::format::Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> std::fmt::Result {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let level = *event.metadata().level();
        let severity = if level <= tracing::Level::WARN {
            format!("{}: ", level.as_str().to_lowercase())
        } else {
            String::new()
        };
        let message = fields
            .message
            .strip_prefix("mcp: ")
            .unwrap_or(&fields.message);
        // Fields carry what servers sent (a method name, an error): escaped.
        let message = golem_terminal::one_line(message);
        write!(writer, "golem-mcp: · {severity}{message}")?;
        if !fields.pairs.is_empty() {
            let pairs = fields.pairs.join(", ");
            write!(writer, " ({})", golem_terminal::one_line(&pairs))?;
        }
        writeln!(writer)
    }
}

/// An event's message and its other fields as `name: value`.
#[derive(Default)]
struct Fields {
    message: String,
    pairs: Vec<String>,
}

impl tracing::field::Visit for Fields {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        if field.name() == "message" {
            self.message = value.to_owned();
        } else {
            self.pairs.push(format!("{}: {value}", field.name()));
        }
    }

    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        // `%value` fields and the message arrive here already formatted
        // with Display; only `?value` fields would show Rust syntax, and
        // the library uses none.
        let shown = format!("{value:?}");
        if field.name() == "message" {
            self.message = shown;
        } else {
            self.pairs.push(format!("{}: {shown}", field.name()));
        }
    }
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
