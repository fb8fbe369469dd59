//! The server's log messages: `--log-level` asked for (when the server
//! declares logging), and each message printed on stderr as it arrives
//! (`--quiet` hides them), above the spinner. It knows nothing of the
//! subcommand running meanwhile.

use std::time::Duration;

use golem_mcp::{Client, LogLevel, Notifications, ServerNotification};

use crate::failure::describe;
use crate::feedback::Console;
use crate::render::status::log_line;

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
