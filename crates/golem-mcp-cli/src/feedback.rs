//! What a person at a terminal sees while a command runs: a spinner with the
//! elapsed time, and the server's own progress reports as a bar. Nothing at
//! all when stderr is not a terminal.

use std::time::Duration;

use golem_mcp::Progress;
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

/// `calling echo: 2/5 step two`, or without a total `calling echo: 2 …`.
fn progress_message(stage: &str, report: &Progress) -> String {
    let mut message = format!("{stage}: {}", report.progress);
    if let Some(total) = report.total {
        message.push_str(&format!("/{total}"));
    }
    if let Some(text) = report.message.as_deref().filter(|text| !text.is_empty()) {
        message.push(' ');
        message.push_str(text);
    }
    message
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
            "calling slow: 2/5 step 2/5"
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
}
