//! What the command writes: the answer on stdout as it streams, notes and
//! tool calls on stderr, one line each, and the usage totals.

use std::borrow::Cow;
use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use golem_agent::ToolOutcome;
use golem_agent::model::Usage;

/// The longest argument summary shown for a tool call, in characters.
const ARGUMENTS_SHOWN: usize = 120;
/// The longest error shown for a failed tool call, in characters.
const ERROR_SHOWN: usize = 200;

/// The command's two streams. Clones share the state.
#[derive(Debug, Clone)]
pub struct Output {
    state: Arc<Mutex<State>>,
}

#[derive(Debug)]
struct State {
    /// Whether the last byte written to stdout was not a newline.
    mid_line: bool,
    /// Stdout is a closed pipe: nothing more is written there.
    closed: bool,
    /// `--quiet`: notes are not written.
    quiet: bool,
    /// Stdout is a terminal, where the answer is escaped; a pipe or a file
    /// gets it exactly.
    escape: bool,
    /// Chat's `> ` is on stderr, waiting for the user's line.
    prompting: bool,
}

impl Output {
    /// The streams of a command; `quiet` leaves the notes out.
    pub fn new(quiet: bool) -> Self {
        use std::io::IsTerminal;
        let state = State {
            mid_line: false,
            closed: false,
            quiet,
            escape: std::io::stdout().is_terminal(),
            prompting: false,
        };
        Output {
            state: Arc::new(Mutex::new(state)),
        }
    }

    /// A fragment of the answer, on stdout at once. At a terminal, whatever
    /// in it would drive the terminal (escape sequences, carriage returns,
    /// bidi controls) is escaped: the model's text is shown, never run. In
    /// a pipe or a file it is the model's text, exactly: data.
    pub fn text(&self, fragment: &str) {
        if fragment.is_empty() {
            return;
        }
        let mut state = self.lock();
        if state.closed {
            return;
        }
        let fragment = match state.escape {
            true => golem_terminal::text(fragment),
            false => Cow::Borrowed(fragment),
        };
        let mut stdout = std::io::stdout().lock();
        match stdout
            .write_all(fragment.as_bytes())
            .and_then(|()| stdout.flush())
        {
            Ok(()) => state.mid_line = !fragment.ends_with('\n'),
            // `golem run ... | head -1`: the reader is gone, the run goes on.
            Err(_) => state.closed = true,
        }
    }

    /// Ends the answer's current line on stdout, if it has one open.
    pub fn end_line(&self) {
        if self.lock().mid_line {
            self.text("\n");
        }
    }

    /// A note on stderr, after `golem: ` (a tool call, a server's log, the
    /// usage totals): left out with `--quiet`.
    pub fn note(&self, line: &str) {
        if !self.lock().quiet {
            self.say(line);
        }
    }

    /// Whether notes are written (not `--quiet`).
    pub fn shows_notes(&self) -> bool {
        !self.lock().quiet
    }

    /// A line on stderr, after `golem: `, even with `--quiet` (what a
    /// server asks the user). When both streams go to a terminal, stdout's
    /// open line is ended first so that the two do not mix on screen;
    /// otherwise stdout is left as the model wrote it (a log line arriving
    /// mid-answer must not change `golem run ... > answer.txt`). A chat
    /// prompt waiting for a line is drawn again below it.
    pub fn say(&self, line: &str) {
        use std::io::IsTerminal;
        if std::io::stdout().is_terminal() && std::io::stderr().is_terminal() {
            self.end_line();
        }
        // Notes carry what servers and models said: escaped, and indented
        // past their first line so that none of it passes for ours.
        let shown = note_text(line, self.lock().prompting);
        let mut stderr = std::io::stderr().lock();
        let _ = stderr
            .write_all(shown.as_bytes())
            .and_then(|()| stderr.flush());
    }

    /// A question on stderr after `golem: `, its line left open for the
    /// answer ([`answer`](Self::answer)), even with `--quiet`.
    pub fn question(&self, text: &str) {
        use std::io::IsTerminal;
        if std::io::stdout().is_terminal() && std::io::stderr().is_terminal() {
            self.end_line();
        }
        let text = golem_terminal::one_line(text);
        let mut stderr = std::io::stderr().lock();
        let _ = write!(stderr, "golem: {text}").and_then(|()| stderr.flush());
    }

    /// Ends a [`question`](Self::question)'s line with the answer given.
    pub fn answer(&self, word: &str) {
        let _ = writeln!(std::io::stderr().lock(), "{word}");
    }

    /// Chat's `> ` on stderr, before a line is read at a terminal; it stays
    /// below the notes that come until [`answered`](Self::answered).
    pub fn prompt(&self) {
        let mut state = self.lock();
        let mut stderr = std::io::stderr().lock();
        let _ = stderr
            .write_all(PROMPT.as_bytes())
            .and_then(|()| stderr.flush());
        state.prompting = true;
    }

    /// The user's line was read: notes no longer draw the prompt again.
    pub fn answered(&self) {
        self.lock().prompting = false;
    }

    /// A line on stdout (a listing the user asked for).
    pub fn line(&self, line: &str) {
        self.end_line();
        self.text(line);
        self.text("\n");
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// What chat shows when it waits for a line.
const PROMPT: &str = "> ";

/// What stderr gets for the note `line`: `golem: ` and the line, escaped;
/// when chat's prompt is waiting, on a line of its own below the prompt,
/// which is drawn again after it.
fn note_text(line: &str, prompting: bool) -> String {
    let line = golem_terminal::message(line);
    match prompting {
        true => format!("\ngolem: {line}\n{PROMPT}"),
        false => format!("golem: {line}\n"),
    }
}

/// `[fs] read_file {"path":"a.txt"}`: a tool call starting.
pub fn call_started(server: &str, tool: &str, arguments: &str) -> String {
    format!("[{server}] {tool} {}", one_line(arguments, ARGUMENTS_SHOWN))
}

/// `[fs] read_file ok (12 ms)`, or `... error (12 ms): why`: a tool call
/// ending.
pub fn call_finished(
    server: &str,
    tool: &str,
    duration: Duration,
    outcome: &ToolOutcome,
) -> String {
    let took = took(duration);
    let error = |why: &str| {
        format!(
            "[{server}] {tool} error ({took}): {}",
            one_line(why, ERROR_SHOWN)
        )
    };
    match outcome {
        ToolOutcome::Ok(_) => format!("[{server}] {tool} ok ({took})"),
        ToolOutcome::Rejected(why) => error(why),
        // Said by the host: the library's `mcp: ` prefix adds nothing.
        ToolOutcome::Failed(why) => error(why.strip_prefix("mcp: ").unwrap_or(why)),
        ToolOutcome::TimedOut(limit) => error(&format!(
            "no answer within {}; raise --tool-timeout or --tool-max-time if it needs longer",
            seconds(*limit)
        )),
        ToolOutcome::Cancelled => format!("[{server}] {tool} cancelled ({took})"),
        other => format!("[{server}] {tool} {other:?} ({took})"),
    }
}

/// `the model called "echo", which no server offers; ...`: a call of a
/// tool there is not, which goes back to the model as a correction.
pub fn unknown_tool(called: &str, likely: &[String]) -> String {
    let mut line = format!(
        "the model called {:?}, which no server offers; it is told the tools there are",
        one_line(called, ARGUMENTS_SHOWN)
    );
    if let Some(first) = likely.first() {
        line.push_str(&format!(" (and that it may mean {first:?})"));
    }
    line
}

/// The longest description `/tools` shows, in characters.
const DESCRIPTION_SHOWN: usize = 100;

/// `/tools`: one line per (server, tool, description), in aligned columns
/// (two spaces apart), each description its first line, cut; what a server
/// wrote cannot break the table (control characters are spaces).
pub fn tool_table(tools: &[(String, String, String)]) -> Vec<String> {
    let cells: Vec<(String, String, String)> = tools
        .iter()
        .map(|(server, tool, description)| {
            (
                one_line(server, ARGUMENTS_SHOWN),
                one_line(tool, ARGUMENTS_SHOWN),
                one_line(
                    description.lines().next().unwrap_or_default(),
                    DESCRIPTION_SHOWN,
                ),
            )
        })
        .collect();
    let width = |text: &str| text.chars().count();
    let servers = cells.iter().map(|(s, _, _)| width(s)).max().unwrap_or(0);
    let names = cells.iter().map(|(_, t, _)| width(t)).max().unwrap_or(0);
    cells
        .iter()
        .map(|(server, tool, description)| {
            let pad = |text: &str, to: usize| " ".repeat(to - width(text));
            format!(
                "{server}{}  {tool}{}  {description}",
                pad(server, servers),
                pad(tool, names)
            )
            .trim_end()
            .to_owned()
        })
        .collect()
}

/// `usage: 2 requests, 1200 input tokens, 56 output tokens` (cache counts
/// when there are any).
pub fn usage(usage: &Usage) -> String {
    let mut line = format!(
        "usage: {} request{}, {} input tokens, {} output tokens",
        usage.requests,
        if usage.requests == 1 { "" } else { "s" },
        usage.input_tokens,
        usage.output_tokens
    );
    if usage.cache_read_tokens > 0 || usage.cache_write_tokens > 0 {
        line.push_str(&format!(
            " (cache: {} read, {} written)",
            usage.cache_read_tokens, usage.cache_write_tokens
        ));
    }
    line
}

/// `12 ms` below a second, `1.5 s` above.
fn took(duration: Duration) -> String {
    if duration < Duration::from_secs(1) {
        format!("{} ms", duration.as_millis())
    } else {
        seconds(duration)
    }
}

fn seconds(duration: Duration) -> String {
    format!("{:.1} s", duration.as_secs_f64())
}

/// `text` on one line: control characters and runs of whitespace as one
/// space, cut after `limit` characters with `…`.
pub fn one_line(text: &str, limit: usize) -> String {
    let mut out = String::new();
    let mut shown = 0;
    let mut space = false;
    for c in text.trim().chars() {
        if c.is_whitespace() || c.is_control() {
            space = true;
            continue;
        }
        if space {
            out.push(' ');
            shown += 1;
            space = false;
        }
        if shown >= limit {
            out.push('…');
            return out;
        }
        out.push(c);
        shown += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_while_chat_waits_for_a_line_draws_the_prompt_again_below_it() {
        assert_eq!(note_text("[py] log", false), "golem: [py] log\n");
        assert_eq!(
            note_text("[py] log [warning] careful", true),
            "\ngolem: [py] log [warning] careful\n> "
        );
        assert_eq!(
            note_text("a\u{1b}[2J", true),
            "\ngolem: a\\u{1b}[2J\n> ",
            "escaped as any note"
        );
    }

    #[test]
    fn a_note_while_chat_waits_is_drawn_by_the_output_in_that_state() {
        let output = Output::new(false);
        output.lock().prompting = true;
        assert!(output.lock().prompting);
        output.answered();
        assert!(!output.lock().prompting, "a line read ends the wait");
    }

    #[test]
    fn arguments_and_errors_are_one_short_line() {
        assert_eq!(
            one_line("{\n  \"path\": \"a.txt\",\n\t\"n\": 1\n}", 100),
            "{ \"path\": \"a.txt\", \"n\": 1 }"
        );
        assert_eq!(one_line("abcdef", 3), "abc…");
        assert_eq!(one_line("ab\u{1b}[2Jcd", 10), "ab [2Jcd");
    }

    #[test]
    fn tool_lines_name_the_server_the_tool_and_the_outcome() {
        assert_eq!(
            call_started("fs", "read_file", r#"{"path":"a.txt"}"#),
            r#"[fs] read_file {"path":"a.txt"}"#
        );
        let ms = Duration::from_millis(12);
        assert_eq!(
            call_finished("fs", "read_file", ms, &ToolOutcome::Ok("x".into())),
            "[fs] read_file ok (12 ms)"
        );
        assert_eq!(
            call_finished(
                "fs",
                "read_file",
                Duration::from_millis(1500),
                &ToolOutcome::Rejected("ENOENT:\nno such file".into())
            ),
            "[fs] read_file error (1.5 s): ENOENT: no such file"
        );
        assert!(
            call_finished(
                "fs",
                "slow",
                Duration::from_secs(2),
                &ToolOutcome::TimedOut(Duration::from_secs(2))
            )
            .contains("--tool-timeout")
        );
    }

    #[test]
    fn an_unknown_tool_is_named_with_what_the_model_may_mean() {
        assert_eq!(
            unknown_tool("echo", &["everything_echo".into()]),
            "the model called \"echo\", which no server offers; it is told the tools there are \
             (and that it may mean \"everything_echo\")"
        );
        assert!(!unknown_tool("x\n", &[]).contains('\n'));
    }

    #[test]
    fn the_tools_table_is_aligned() {
        let row = |server: &str, tool: &str, description: &str| {
            (server.to_owned(), tool.to_owned(), description.to_owned())
        };
        let table = tool_table(&[
            row("fs", "read_text_file", "Read a file.\nMore lines."),
            row("everything", "echo", ""),
            row("é", "add", "Adds\ttwo numbers"),
        ]);
        assert_eq!(
            table,
            [
                "fs          read_text_file  Read a file.",
                "everything  echo",
                "é           add             Adds two numbers",
            ]
        );
        assert!(tool_table(&[]).is_empty());
    }

    #[test]
    fn usage_reads_as_totals() {
        let total = Usage {
            input_tokens: 1200,
            output_tokens: 56,
            requests: 2,
            ..Usage::default()
        };
        assert_eq!(
            usage(&total),
            "usage: 2 requests, 1200 input tokens, 56 output tokens"
        );
        let cached = Usage {
            requests: 1,
            cache_read_tokens: 3,
            ..Usage::default()
        };
        assert_eq!(
            usage(&cached),
            "usage: 1 request, 0 input tokens, 0 output tokens (cache: 3 read, 0 written)"
        );
    }
}
