//! The bound of `--timeout`: `within` runs a future until a deadline that
//! the time the user spends answering prompts moves back, `alongside` runs
//! a side task next to the job, and `timeout_message` says what a timeout
//! interrupted. It knows nothing of what the job asks the server.

use std::future::Future;
use std::time::Duration;

use golem_mcp::ServerStderr;

use crate::feedback::Console;

/// How many lines of a silent server's stderr a timeout message shows.
const STDERR_LINES_SHOWN: usize = 20;
/// While the user answers a prompt the deadline moves; how often it is
/// looked at again.
const PAUSE_CHECK: Duration = Duration::from_millis(100);

/// `future`, unless `deadline` passes first (`Err(())`); the time the user
/// spends answering prompts moves the deadline back.
pub async fn within<T>(
    deadline: tokio::time::Instant,
    console: &Console,
    future: impl Future<Output = T>,
) -> Result<T, ()> {
    let mut future = std::pin::pin!(future);
    loop {
        let now = tokio::time::Instant::now();
        let moved = deadline + console.paused_for();
        let wake = match console.is_paused() {
            true => moved.max(now + PAUSE_CHECK),
            false => moved,
        };
        tokio::select! {
            output = &mut future => return Ok(output),
            () = tokio::time::sleep_until(wake) => {
                if !console.is_paused() && deadline + console.paused_for() <= tokio::time::Instant::now() {
                    return Err(());
                }
            }
        }
    }
}

/// `job`, with `side` running next to it until `job` is done.
pub async fn alongside<T>(job: impl Future<Output = T>, side: impl Future<Output = ()>) -> T {
    let mut job = std::pin::pin!(job);
    tokio::select! {
        biased;
        output = &mut job => output,
        () = side => job.await,
    }
}

/// What a timeout says: what was being done and, for a server that never
/// finished its handshake (`unanswered` names the request it left
/// unanswered: `server/discover` or `initialize`; `None` once initialized),
/// what it wrote to stderr meanwhile (usually why: a port in use, a missing
/// key) instead of advice to wait longer.
pub fn timeout_message(
    timeout: Duration,
    stage: &str,
    unanswered: Option<&str>,
    stderr: Option<&ServerStderr>,
) -> String {
    let head = format!("timed out after {} s while {stage}", timeout.as_secs_f64());
    let Some(request) = unanswered else {
        return format!("{head}; raise --timeout if the server needs longer");
    };
    let tail = stderr.map(ServerStderr::tail).unwrap_or_default();
    let tail = tail.trim_end();
    if tail.is_empty() {
        format!(
            "{head}: the server never answered {request}; check that the command starts an \
             MCP server speaking on stdin/stdout (or the URL is its MCP endpoint), or raise \
             --timeout if it is slow to start"
        )
    } else {
        let lines: Vec<&str> = tail.lines().collect();
        let shown = lines[lines.len().saturating_sub(STDERR_LINES_SHOWN)..].join("\n");
        format!("{head}: the server never answered {request}; its stderr ended with:\n{shown}")
    }
}
