//! What a person at a terminal sees while a command runs: a spinner with the
//! elapsed time, and the server's own progress reports as a bar. Nothing at
//! all when stderr is not a terminal. [`Console`] writes other lines on
//! stderr (the server's log messages, notes) above the spinner, and hides it
//! while the user answers a prompt. It knows nothing of the server or the
//! subcommand: it is told the stage and given the reports.

use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use golem_mcp::{Progress, Task};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Progress positions are integers; reports are scaled by this much so that
/// fractional progress (0.25 of 1) still moves the bar.
const SCALE: f64 = 1000.0;

const SPINNER: &str = "{spinner} {msg} [{elapsed}]";
const BAR: &str = "{spinner} {msg} [{elapsed}] {wide_bar} {percent:>3}%";

/// The spinner and progress bar on stderr, or nothing.
#[derive(Debug)]
pub struct Feedback {
    bar: Option<ProgressBar>,
    /// What the command is doing, e.g. `calling echo`.
    stage: String,
    showing_bar: bool,
}

impl Feedback {
    /// A spinner on stderr when `enabled`; otherwise everything is a no-op.
    pub fn new(enabled: bool) -> Self {
        let bar = enabled.then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.set_style(style(SPINNER));
            bar.enable_steady_tick(Duration::from_millis(100));
            bar
        });
        Feedback {
            bar,
            stage: String::new(),
            showing_bar: false,
        }
    }

    /// Says what the command is doing now.
    pub fn stage(&mut self, stage: impl Into<String>) {
        self.stage = stage.into();
        if let Some(bar) = &self.bar {
            bar.set_message(self.stage.clone());
        }
    }

    /// What the command is doing now, for a timeout message.
    pub fn current_stage(&self) -> &str {
        &self.stage
    }

    /// Shows a progress report of the server's: a bar when it gave a total,
    /// otherwise the count next to the spinner.
    pub fn progress(&mut self, report: &Progress) {
        let Some(bar) = &self.bar else {
            return;
        };
        match report
            .total
            .filter(|total| total.is_finite() && *total > 0.0)
        {
            Some(total) => {
                if !self.showing_bar {
                    bar.set_style(style(BAR));
                    self.showing_bar = true;
                }
                bar.set_length(scaled(total));
                bar.set_position(scaled(report.progress).min(scaled(total)));
            }
            None => {
                if self.showing_bar {
                    bar.set_style(style(SPINNER));
                    self.showing_bar = false;
                }
            }
        }
        bar.set_message(progress_message(&self.stage, report));
    }

    /// Shows a task's status: on the spinner's line on a terminal,
    /// otherwise as a line on stderr (unless `quiet`).
    pub fn task_status(&mut self, task: &Task, console: &Console, quiet: bool) {
        let status = crate::render::status::task_status(task);
        match &self.bar {
            Some(bar) => bar.set_message(format!("{}: {status}", self.stage)),
            None if !quiet => console.line(format!("golem-mcp: {status}")),
            None => {}
        }
    }

    /// A handle for writing lines on stderr without breaking the spinner.
    pub fn console(&self) -> Console {
        Console {
            bar: self.bar.clone(),
            shared: Arc::default(),
        }
    }

    /// Removes the spinner from the terminal.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Feedback {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Writes whole lines on stderr next to the spinner: above it while it
/// runs, held back while the user answers a prompt. Clones share the state.
#[derive(Debug, Clone)]
pub struct Console {
    bar: Option<ProgressBar>,
    shared: Arc<Mutex<Shared>>,
}

#[derive(Debug, Default)]
struct Shared {
    /// Lines held while a prompt is on screen; `Some` while paused.
    held: Option<Vec<String>>,
    /// When the current pause began.
    paused_since: Option<Instant>,
    /// How long earlier pauses lasted, together.
    paused_before: Duration,
    /// How many pauses are open: a prompt and a browser login may overlap,
    /// and the console resumes when the last one ends.
    pauses: usize,
}

impl Console {
    /// Writes `line` (one line, without its newline) on stderr. It often
    /// carries a server's words (a log message, an elicitation's): what
    /// could drive the terminal is escaped, whatever the caller did
    /// (escaping twice changes nothing), and lines after the first are
    /// indented.
    pub fn line(&self, line: impl Into<String>) {
        let line = line.into();
        let line = golem_terminal::message(&line).into_owned();
        let mut shared = self.lock();
        if let Some(held) = shared.held.as_mut() {
            held.push(line);
            return;
        }
        match &self.bar {
            Some(bar) => bar.suspend(|| eprintln!("{line}")),
            None => eprintln!("{line}"),
        }
    }

    /// Hides the spinner and holds other lines back until the returned guard
    /// (and every other one open) is dropped: the user is answering a
    /// prompt, or authorizing in the browser. Time spent paused does not
    /// count against `--timeout` ([`Console::paused_for`]).
    pub fn pause(&self) -> Paused {
        let mut shared = self.lock();
        shared.pauses += 1;
        shared.held.get_or_insert_with(Vec::new);
        shared.paused_since.get_or_insert_with(Instant::now);
        if let Some(bar) = &self.bar {
            bar.set_draw_target(ProgressDrawTarget::hidden());
            // The spinner's line stays drawn after the switch: clear it.
            let mut stderr = std::io::stderr().lock();
            let _ = stderr.write_all(b"\r\x1b[2K").and_then(|()| stderr.flush());
        }
        Paused {
            console: self.clone(),
        }
    }

    /// How long the user has spent answering prompts, the current one
    /// included.
    pub fn paused_for(&self) -> Duration {
        let shared = self.lock();
        shared.paused_before
            + shared
                .paused_since
                .map_or(Duration::ZERO, |since| since.elapsed())
    }

    /// Whether a prompt is on screen.
    pub fn is_paused(&self) -> bool {
        self.lock().paused_since.is_some()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The elicitation handler's notes and prompts go through the console:
/// notes after `golem-mcp: `, prompts with the spinner paused.
impl golem_elicit::Screen for Console {
    fn note(&self, text: &str) {
        self.line(format!("golem-mcp: {text}"));
    }

    fn pause(&self) -> Box<dyn Send> {
        Box::new(Console::pause(self))
    }
}

/// A prompt is on screen until this is dropped; then the spinner comes back
/// and the lines held meanwhile are written.
#[derive(Debug)]
pub struct Paused {
    console: Console,
}

impl Drop for Paused {
    fn drop(&mut self) {
        let held = {
            let mut shared = self.console.lock();
            shared.pauses = shared.pauses.saturating_sub(1);
            if shared.pauses > 0 {
                return; // another prompt is still on screen
            }
            if let Some(since) = shared.paused_since.take() {
                shared.paused_before += since.elapsed();
            }
            shared.held.take().unwrap_or_default()
        };
        if let Some(bar) = &self.console.bar
            && !bar.is_finished()
        {
            bar.set_draw_target(ProgressDrawTarget::stderr());
        }
        for line in held {
            self.console.line(line);
        }
    }
}

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_spinner())
}

/// A report's value as a bar position; negative, NaN and infinite values
/// become 0 (the cast saturates).
fn scaled(value: f64) -> u64 {
    if value.is_finite() && value > 0.0 {
        (value * SCALE).round() as u64
    } else {
        0
    }
}

/// `calling echo: 2/5 step two`, or without a total `calling echo: 2 …`;
/// a message that already carries the counts (`step 2/5`) is shown alone.
fn progress_message(stage: &str, report: &Progress) -> String {
    let counts = match report.total {
        Some(total) => format!("{}/{total}", report.progress),
        None => report.progress.to_string(),
    };
    match report.message.as_deref().filter(|text| !text.is_empty()) {
        // The server's words, on the spinner line: escaped.
        Some(text) if report.total.is_some() && text.contains(&counts) => {
            format!("{stage}: {}", golem_terminal::one_line(text))
        }
        Some(text) => format!("{stage}: {counts} {}", golem_terminal::one_line(text)),
        None => format!("{stage}: {counts}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_reads_as_count_total_and_message() {
        let report = |progress, total, message: Option<&str>| {
            Progress::new(progress, total, message.map(str::to_owned))
        };
        assert_eq!(
            progress_message("calling slow", &report(2.0, Some(5.0), Some("step 2/5"))),
            "calling slow: step 2/5"
        );
        assert_eq!(
            progress_message("calling slow", &report(2.0, Some(5.0), Some("loading"))),
            "calling slow: 2/5 loading"
        );
        assert_eq!(
            progress_message("calling slow", &report(0.25, Some(1.0), None)),
            "calling slow: 0.25/1"
        );
        assert_eq!(
            progress_message("calling slow", &report(0.5, None, None)),
            "calling slow: 0.5"
        );
        assert_eq!(scaled(0.25), 250);
        assert_eq!(scaled(-1.0), 0);
        assert_eq!(scaled(f64::NAN), 0);
    }

    #[test]
    fn without_a_terminal_nothing_is_drawn() {
        let mut feedback = Feedback::new(false);
        feedback.stage("calling");
        feedback.progress(&Progress::new(1.0, Some(2.0), None));
        assert!(feedback.bar.is_none());
    }

    #[test]
    fn a_pause_is_timed_and_holds_lines_back() {
        let console = Feedback::new(false).console();
        assert!(!console.is_paused());
        let paused = console.pause();
        console.line("held while a prompt is on screen");
        assert!(console.is_paused());
        assert_eq!(console.lock().held.as_ref().map(Vec::len), Some(1));
        std::thread::sleep(Duration::from_millis(20));
        drop(paused);
        assert!(!console.is_paused());
        assert!(console.lock().held.is_none());
        let paused_for = console.paused_for();
        assert!(paused_for >= Duration::from_millis(20), "{paused_for:?}");
        assert_eq!(console.paused_for(), paused_for, "no pause is running");
    }

    #[test]
    fn overlapping_pauses_end_with_the_last_one() {
        let console = Feedback::new(false).console();
        let prompt = console.pause();
        let browser = console.pause();
        console.line("held until both are over");
        drop(prompt);
        assert!(console.is_paused(), "the browser wait still pauses it");
        assert_eq!(console.lock().held.as_ref().map(Vec::len), Some(1));
        drop(browser);
        assert!(!console.is_paused());
        assert!(console.lock().held.is_none());
    }

    #[test]
    fn a_progress_message_cannot_drive_the_terminal() {
        let report = Progress::new(1.0, Some(2.0), Some("step\x1b]52;c;aGk=\x07\r".into()));
        let shown = progress_message("calling x", &report);
        assert_eq!(shown, "calling x: 1/2 step\\u{1b}]52;c;aGk=\\u{7}\\r");
    }
}
