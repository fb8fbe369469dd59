//! The recording format, written: one line per message, each written whole
//! with one `write` and no buffer, so that a process killed mid-session
//! leaves only whole lines behind.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde_json::value::RawValue;

use crate::transports::replay::recording::{Direction, FORMAT_KEY, FORMAT_VERSION};

/// Writes a session's messages to a recording file as they pass (see the
/// module's documentation for the format).
///
/// Shared by reference between the tasks that send and receive: each line
/// is written under a lock, so lines never interleave and their times
/// never go back. A write error stops the recording (the next line could
/// only follow half a line); it is reported once, as a `tracing` warning,
/// and kept ([`RecordWriter::write_error`]): recording never fails the
/// session it watches.
#[derive(Debug)]
pub struct RecordWriter {
    path: PathBuf,
    started: Instant,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    file: File,
    /// The first write error; nothing is written after it.
    failed: Option<String>,
}

impl RecordWriter {
    /// Creates the file at `path` (truncating one that is there; readable
    /// and writable by its owner only on Unix, as a session may carry
    /// secrets) and writes the header, naming the server as `target` says.
    pub fn create(path: &Path, target: &str) -> io::Result<Self> {
        let mut options = OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(path)?;
        // `mode` applies only to a file it creates: one that was there keeps
        // its permissions otherwise.
        #[cfg(unix)]
        file.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
        let header = format!(
            "{{\"{FORMAT_KEY}\":{FORMAT_VERSION},\"started\":\"{}\",\"target\":{}}}\n",
            rfc3339(SystemTime::now()),
            serde_json::Value::from(target),
        );
        file.write_all(header.as_bytes())?;
        Ok(RecordWriter {
            path: path.to_owned(),
            started: Instant::now(),
            state: Mutex::new(State { file, failed: None }),
        })
    }

    /// Records `message`, sent by `from`, with the time since the file was
    /// created. The text is written as it is when it is one JSON object;
    /// anything else (a transport's stray line) is left out. Line breaks
    /// between its tokens become spaces, so that it stays one line.
    pub fn record(&self, from: Direction, message: &str) {
        let Some(message) = one_object(message) else {
            tracing::debug!(path = %self.path.display(), "golem-mcp: not recorded: the message is not a JSON object");
            return;
        };
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.failed.is_some() {
            return;
        }
        // Microseconds are as fine as a clock of this kind is worth.
        let t_ms = self.started.elapsed().as_micros() as f64 / 1000.0;
        let line = format!(
            "{{\"t_ms\":{},\"from\":\"{}\",\"message\":{message}}}\n",
            serde_json::Value::from(t_ms),
            from.as_str()
        );
        if let Err(error) = state.file.write_all(line.as_bytes()) {
            tracing::warn!(path = %self.path.display(), %error, "golem-mcp: the recording stopped: a write failed");
            state.failed = Some(error.to_string());
        }
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The write error that stopped the recording, if one did: what a
    /// command reports at the end, the recording being incomplete.
    pub fn write_error(&self) -> Option<String> {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.failed.clone()
    }
}

/// `message` as one line of JSON, when it is one JSON object.
fn one_object(message: &str) -> Option<String> {
    let raw: &RawValue = serde_json::from_str(message).ok()?;
    let text = raw.get();
    if !text.starts_with('{') {
        return None;
    }
    // In valid JSON a raw line break can only be whitespace between tokens
    // (inside a string it is escaped), so replacing it changes nothing.
    Some(text.replace(['\n', '\r'], " "))
}

/// The file of a session's recording when each session gets its own: the
/// first (`n` = 1) is `base` itself, the `n`th `stem-n.ext` beside it
/// (`run.jsonl`, `run-2.jsonl`, `run-3.jsonl`, …). `n` counts from 1; 0 is
/// taken as 1.
pub fn session_path(base: &Path, n: usize) -> PathBuf {
    if n <= 1 {
        return base.to_owned();
    }
    let mut name = base.file_stem().unwrap_or_default().to_os_string();
    name.push(format!("-{n}"));
    if let Some(extension) = base.extension() {
        name.push(".");
        name.push(extension);
    }
    base.with_file_name(name)
}

/// `time` in RFC 3339, UTC, to the second (`2026-01-02T03:04:05Z`); a time
/// before 1970 is written as 1970's first second.
fn rfc3339(time: SystemTime) -> String {
    let seconds = time
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    let (days, of_day) = (seconds / 86_400, seconds % 86_400);
    let (year, month, day) = civil_date(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        of_day / 3600,
        of_day % 3600 / 60,
        of_day % 60
    )
}

/// The proleptic Gregorian date `days` after 1970-01-01, counted in
/// 400-year eras from 0000-03-01 so that the leap day ends each year.
fn civil_date(days: u64) -> (u64, u64, u64) {
    let shifted = days + 719_468;
    let era = shifted / 146_097;
    let day_of_era = shifted % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = era * 400 + year_of_era + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::transports::replay::recording::Recording;

    #[test]
    fn times_are_rfc3339_utc_seconds() {
        let at = |seconds| rfc3339(UNIX_EPOCH + Duration::from_secs(seconds));
        assert_eq!(at(0), "1970-01-01T00:00:00Z");
        assert_eq!(at(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(at(1_709_251_199), "2024-02-29T23:59:59Z");
        assert_eq!(at(1_735_689_600), "2025-01-01T00:00:00Z");
        assert_eq!(at(4_107_542_400), "2100-03-01T00:00:00Z");
    }

    #[test]
    fn each_session_after_the_first_gets_a_numbered_file() {
        let base = Path::new("/tmp/runs/run.jsonl");
        assert_eq!(session_path(base, 1), base);
        assert_eq!(session_path(base, 2), Path::new("/tmp/runs/run-2.jsonl"));
        assert_eq!(session_path(Path::new("run"), 3), Path::new("run-3"));
    }

    #[test]
    fn what_is_written_reads_back_verbatim() {
        let path =
            std::env::temp_dir().join(format!("golem-mcp-writer-{}.jsonl", std::process::id()));
        let writer = RecordWriter::create(&path, "stdio: \"quoted\" server").expect("creates");
        writer.record(
            Direction::Client,
            "{\"jsonrpc\":\"2.0\",\n\"id\":1,\"method\":\"ping\"}",
        );
        writer.record(Direction::Server, "not json");
        writer.record(Direction::Server, "[1]");
        writer.record(
            Direction::Server,
            r#"{"jsonrpc":"2.0","id":1,"result":{"big":12345678901234567890}}"#,
        );
        assert_eq!(writer.path(), path);
        assert_eq!(writer.write_error(), None);

        let text = std::fs::read_to_string(&path).expect("reads");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(
            lines[2].ends_with(
                r#""message":{"jsonrpc":"2.0","id":1,"result":{"big":12345678901234567890}}}"#
            ),
            "{text}"
        );
        let recording = Recording::parse(&text).expect("parses");
        assert_eq!(recording.target(), "stdio: \"quoted\" server");
        assert_eq!(recording.started().len(), "2026-01-02T03:04:05Z".len());
        let messages = recording.messages();
        assert_eq!(messages[0].message["method"], "ping");
        assert!(messages[0].t_ms <= messages[1].t_ms);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path)
                .expect("exists")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let _ = std::fs::remove_file(&path);
    }
}
