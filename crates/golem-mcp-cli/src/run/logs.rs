//! The server's log messages: `--log-level` asked for (when the server
//! declares logging), and each message printed on stderr as it arrives
//! (`--quiet` hides them), above the spinner; with `-v`, a stdio server's
//! stderr lines too. It knows nothing of the subcommand running meanwhile.

use std::time::Duration;

use golem_mcp::{Client, LogLevel, Notifications, ServerNotification, StderrLines};
use tokio::task::JoinHandle;

use crate::failure::describe;
use crate::feedback::Console;
use crate::render::status::{log_line, stderr_line};

/// Prints the server's log messages as they arrive, until the client is
/// gone.
pub async fn relay_logs(notifications: &mut Notifications, console: &Console, quiet: bool) {
    while let Some(notification) = notifications.recv().await {
        show(&notification, console, quiet);
    }
}

/// Prints the log messages already received.
pub async fn drain_logs(notifications: &mut Notifications, console: &Console, quiet: bool) {
    // A zero timeout still polls `recv` once: what is queued is returned.
    while let Ok(Some(notification)) =
        tokio::time::timeout(Duration::ZERO, notifications.recv()).await
    {
        show(&notification, console, quiet);
    }
}

fn show(notification: &ServerNotification, console: &Console, quiet: bool) {
    if let ServerNotification::Log(message) = notification
        && !quiet
    {
        console.line(log_line(message));
    }
}

/// `-v`: a stdio server's stderr lines printed as they come
/// (`golem-mcp: server stderr: …`, escaped), on a task of their own, from
/// the server's start until its stderr ends.
pub struct StderrRelay(JoinHandle<()>);

impl StderrRelay {
    /// Starts printing `lines` through `console` (held back, like log
    /// messages, while a prompt is on screen).
    pub fn start(mut lines: StderrLines, console: &Console) -> Self {
        let console = console.clone();
        StderrRelay(tokio::spawn(async move {
            while let Some(event) = lines.recv().await {
                console.line(stderr_line(&event));
            }
        }))
    }

    /// Waits, for at most `limit`, until the server's last line is printed:
    /// its stderr ends once it is gone with its process group, so only a
    /// process that left the group and kept stderr open makes this wait
    /// the whole limit. What it writes later is not printed.
    pub async fn finish(mut self, limit: Duration) {
        if tokio::time::timeout(limit, &mut self.0).await.is_err() {
            self.0.abort();
        }
    }
}

/// `--log-level`: sent when the server declares logging; a warning line
/// otherwise, or when the server refuses it. Either way the command goes on.
pub async fn set_log_level(client: &Client, level: LogLevel, console: &Console) {
    let server = client.server();
    let declared = server.is_some_and(|server| server.capabilities.get("logging").is_some());
    // A modern server is sent the level with each request, which asks
    // nothing of it: no capability is needed for that.
    let modern = server.is_some_and(|server| server.era() == golem_mcp::Era::Modern);
    if !declared && !modern {
        console.line(format!(
            "golem-mcp: warning: the server does not declare the logging capability; \
             --log-level {level} was not sent"
        ));
        return;
    }
    if let Err(error) = client.set_log_level(level).await {
        console.line(format!(
            "golem-mcp: warning: --log-level {level}: {}; going on",
            golem_terminal::message(&describe(&error))
        ));
    }
}
