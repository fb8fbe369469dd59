//! The recording format, read: JSON Lines, a header line, then one line
//! per message with its time and its sender. Writing is `writer.rs`.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

/// The header's key; its value is the format's version.
pub(crate) const FORMAT_KEY: &str = "golem_mcp_recording";

/// The format version this crate writes and reads.
pub(crate) const FORMAT_VERSION: u64 = 1;

/// The largest recording [`Recording::read`] and [`Recording::parse`]
/// accept, in bytes (256 MiB): a recording is held in memory whole.
pub const MAX_RECORDING_BYTES: u64 = 256 * 1024 * 1024;

/// Who sent a recorded message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// The client (or host) sent it to the server.
    Client,
    /// The server sent it to the client.
    Server,
}

impl Direction {
    /// The name the format gives it: `"client"` or `"server"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Client => "client",
            Direction::Server => "server",
        }
    }
}

/// One message of a recording.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedMessage {
    /// When it passed, in milliseconds since the recording started.
    pub t_ms: f64,
    /// Who sent it.
    pub from: Direction,
    /// The JSON-RPC message, as it was sent.
    pub message: Value,
}

/// A recorded session, read whole: its header and its messages in the
/// order they passed.
#[derive(Debug, Clone)]
pub struct Recording {
    started: String,
    target: String,
    messages: Vec<RecordedMessage>,
    /// Each message's text as recorded: a `Value` sorts an object's keys,
    /// and a replay sends what the server sent, schemas byte for byte.
    verbatim: Vec<Box<RawValue>>,
}

/// Why a recording could not be read. It does not name the file: the
/// caller that named it does.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecordingError {
    /// The file could not be read.
    #[error("cannot read the recording: {0}")]
    Io(#[source] io::Error),
    /// The file is larger than [`MAX_RECORDING_BYTES`].
    #[error("the recording is {bytes} bytes; at most {MAX_RECORDING_BYTES} (256 MiB) are read")]
    TooLarge {
        /// The file's size, or as much of it as was read.
        bytes: u64,
    },
    /// The first line is not a recording's header.
    #[error("line {line}: not a golem-mcp recording: {detail}")]
    NotARecording {
        /// The header's line number (1-based; blank lines before it count).
        line: usize,
        /// What is wrong with it.
        detail: String,
    },
    /// The header names a format version this crate does not read.
    #[error(
        "line {line}: recording format version {version}; this golem-mcp reads version {FORMAT_VERSION}"
    )]
    UnsupportedVersion {
        /// The header's line number.
        line: usize,
        /// The version the header names, as written.
        version: String,
    },
    /// A message line is not what the format says.
    #[error("line {line}: {detail}")]
    InvalidLine {
        /// The line number (1-based).
        line: usize,
        /// What is wrong with it.
        detail: String,
    },
}

/// A message line, its message kept as text.
#[derive(Deserialize)]
struct Line<'a> {
    t_ms: f64,
    from: Direction,
    #[serde(borrow)]
    message: &'a RawValue,
}

/// The header line, as far as it is read: extra keys are tolerated, so
/// that a later writer of version 1 may add some.
#[derive(Deserialize)]
struct Header {
    #[serde(rename = "golem_mcp_recording")]
    version: Option<Value>,
    #[serde(default)]
    started: String,
    #[serde(default)]
    target: String,
}

impl Recording {
    /// Reads the recording at `path`; refuses a file over
    /// [`MAX_RECORDING_BYTES`] before reading it.
    pub fn read(path: &Path) -> Result<Recording, RecordingError> {
        let file = File::open(path).map_err(RecordingError::Io)?;
        let size = file.metadata().map_err(RecordingError::Io)?.len();
        if size > MAX_RECORDING_BYTES {
            return Err(RecordingError::TooLarge { bytes: size });
        }
        // Bounded again while reading: the file may grow meanwhile.
        let mut bytes = Vec::new();
        file.take(MAX_RECORDING_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(RecordingError::Io)?;
        let text = String::from_utf8(bytes).map_err(|error| {
            let valid = &error.as_bytes()[..error.utf8_error().valid_up_to()];
            RecordingError::InvalidLine {
                line: 1 + valid.iter().filter(|byte| **byte == b'\n').count(),
                detail: "not UTF-8 text".to_owned(),
            }
        })?;
        Recording::parse(&text)
    }

    /// Parses a recording's text (see the module's documentation for the
    /// format). Blank lines are skipped; any other line that is not a
    /// message fails the whole recording, naming the line.
    pub fn parse(text: &str) -> Result<Recording, RecordingError> {
        if text.len() as u64 > MAX_RECORDING_BYTES {
            return Err(RecordingError::TooLarge {
                bytes: text.len() as u64,
            });
        }
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(index, line)| (index + 1, line))
            .filter(|(_, line)| !line.trim().is_empty());
        let Some((line, header)) = lines.next() else {
            return Err(RecordingError::NotARecording {
                line: 1,
                detail: "the file is empty".to_owned(),
            });
        };
        let header = parse_header(line, header)?;
        let (messages, verbatim) = lines
            .map(|(line, text)| parse_message(line, text))
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .unzip();
        Ok(Recording {
            started: header.started,
            target: header.target,
            messages,
            verbatim,
        })
    }

    /// When the recording started, as its header says (RFC 3339, UTC).
    pub fn started(&self) -> &str {
        &self.started
    }

    /// The server recorded, as the recorder described it.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// The messages, in the order they passed.
    pub fn messages(&self) -> &[RecordedMessage] {
        &self.messages
    }

    /// The text of each of [`messages`](Recording::messages), as recorded.
    pub(crate) fn verbatim(&self) -> &[Box<RawValue>] {
        &self.verbatim
    }

    /// Whether the recorded server spoke the 2026-07-28 era: it answered a
    /// client's `server/discover` with a result. A server that refused the
    /// probe, left it unanswered or was never probed was initialized.
    pub fn is_modern(&self) -> bool {
        let probes: Vec<&Value> = self
            .messages
            .iter()
            .filter(|recorded| recorded.from == Direction::Client)
            .filter(|recorded| {
                recorded.message.get("method") == Some(&Value::from("server/discover"))
            })
            .filter_map(|recorded| recorded.message.get("id"))
            .collect();
        self.messages
            .iter()
            .filter(|recorded| recorded.from == Direction::Server)
            .filter(|recorded| recorded.message.get("method").is_none())
            .filter(|recorded| recorded.message.get("result").is_some())
            .filter_map(|recorded| recorded.message.get("id"))
            .any(|id| probes.contains(&id))
    }
}

fn parse_header(line: usize, text: &str) -> Result<Header, RecordingError> {
    let not_a_recording = |detail: String| RecordingError::NotARecording { line, detail };
    let header: Header = serde_json::from_str(text).map_err(|error| {
        not_a_recording(format!(
            "the header is not a JSON object ({})",
            json_detail(&error)
        ))
    })?;
    match &header.version {
        None => Err(not_a_recording(format!(
            "the header has no \"{FORMAT_KEY}\" version"
        ))),
        Some(version) if version.as_u64() == Some(FORMAT_VERSION) => Ok(header),
        Some(version) => Err(RecordingError::UnsupportedVersion {
            line,
            version: version.to_string(),
        }),
    }
}

fn parse_message(
    line: usize,
    text: &str,
) -> Result<(RecordedMessage, Box<RawValue>), RecordingError> {
    let invalid = |detail: String| RecordingError::InvalidLine { line, detail };
    let recorded: Line<'_> = serde_json::from_str(text)
        .map_err(|error| invalid(format!("not a recorded message ({})", json_detail(&error))))?;
    if !recorded.message.get().starts_with('{') {
        return Err(invalid("\"message\" is not a JSON object".to_owned()));
    }
    let message = serde_json::from_str(recorded.message.get())
        .map_err(|error| invalid(format!("\"message\" is not JSON ({})", json_detail(&error))))?;
    let parsed = RecordedMessage {
        t_ms: recorded.t_ms,
        from: recorded.from,
        message,
    };
    Ok((parsed, recorded.message.to_owned()))
}

/// serde_json's description without its "at line 1 column N" (every line
/// is parsed on its own, so its line is always 1), with the column kept.
fn json_detail(error: &serde_json::Error) -> String {
    let text = error.to_string();
    let suffix = format!(" at line {} column {}", error.line(), error.column());
    match text.strip_suffix(&suffix) {
        Some(description) => format!("{description}, column {}", error.column()),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str =
        r#"{"golem_mcp_recording":1,"started":"2026-01-02T03:04:05Z","target":"stdio: x"}"#;

    #[test]
    fn a_header_and_messages_are_read_in_order() {
        let text = format!(
            "{HEADER}\n\n{}\n{}\n",
            r#"{"t_ms":0.5,"from":"client","message":{"jsonrpc":"2.0","id":1,"method":"ping"}}"#,
            r#"{"t_ms":1.25,"from":"server","message":{"jsonrpc":"2.0","id":1,"result":{}}}"#,
        );
        let recording = Recording::parse(&text).expect("parses");
        assert_eq!(recording.started(), "2026-01-02T03:04:05Z");
        assert_eq!(recording.target(), "stdio: x");
        let messages = recording.messages();
        assert_eq!(messages.len(), 2);
        assert_eq!(messages[0].from, Direction::Client);
        assert_eq!(messages[1].t_ms, 1.25);
        assert_eq!(messages[1].message["result"], serde_json::json!({}));
        assert!(!recording.is_modern());
    }

    #[test]
    fn a_bad_line_is_named_by_its_number() {
        let text = format!(
            "{HEADER}\n{}\nnot json\n",
            r#"{"t_ms":0,"from":"client","message":{}}"#
        );
        let error = Recording::parse(&text).expect_err("line 3 is bad");
        assert!(
            matches!(error, RecordingError::InvalidLine { line: 3, .. }),
            "{error:?}"
        );
        assert!(
            error
                .to_string()
                .starts_with("line 3: not a recorded message ("),
            "{error}"
        );

        let text = format!("{HEADER}\n{}\n", r#"{"t_ms":0,"from":"host","message":{}}"#);
        let error = Recording::parse(&text).expect_err("an unknown sender");
        assert!(error.to_string().contains("line 2:"), "{error}");

        let text = format!(
            "{HEADER}\n{}\n",
            r#"{"t_ms":0,"from":"server","message":[1]}"#
        );
        let error = Recording::parse(&text).expect_err("not an object");
        assert_eq!(
            error.to_string(),
            "line 2: \"message\" is not a JSON object"
        );
    }

    #[test]
    fn the_header_must_name_version_1() {
        let error = Recording::parse("").expect_err("empty");
        assert_eq!(
            error.to_string(),
            "line 1: not a golem-mcp recording: the file is empty"
        );
        let error = Recording::parse("{\"started\":\"x\"}\n").expect_err("no version");
        assert!(
            error
                .to_string()
                .contains("no \"golem_mcp_recording\" version"),
            "{error}"
        );
        let error = Recording::parse("\n{\"golem_mcp_recording\":2}\n").expect_err("version 2");
        assert_eq!(
            error.to_string(),
            "line 2: recording format version 2; this golem-mcp reads version 1"
        );
    }

    #[test]
    fn a_discovery_answered_with_a_result_is_a_modern_recording() {
        let text = format!(
            "{HEADER}\n{}\n{}\n",
            r#"{"t_ms":0,"from":"client","message":{"jsonrpc":"2.0","id":0,"method":"server/discover"}}"#,
            r#"{"t_ms":1,"from":"server","message":{"jsonrpc":"2.0","id":0,"result":{"supportedVersions":["2026-07-28"]}}}"#,
        );
        assert!(Recording::parse(&text).expect("parses").is_modern());
        let refused = text.replace(
            r#""result":{"supportedVersions":["2026-07-28"]}"#,
            r#""error":{"code":-32601,"message":"no"}"#,
        );
        assert!(!Recording::parse(&refused).expect("parses").is_modern());
    }
}
