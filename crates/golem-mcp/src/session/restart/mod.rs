//! Restarting a server the client lost (ADR 0026): the policy and the loop
//! that applies it (`revive.rs` is what it does to a client), when the application
//! asked for it ([`ClientConfig::restart`](crate::ClientConfig::restart))
//! and the transport can start its server again ([`Transport::reopen`]: a
//! stdio server's command).
//!
//! One task per client watches the session in use. When its connection
//! fails (the server exited, its output broke), the requests in flight
//! have failed already, with the exit status and the server's last words,
//! and none is sent again: a tool call may not be safe to repeat. The task
//! then starts the server again, after a backoff and within a bound on
//! attempts, runs the whole handshake on the new connection (the era is
//! decided again, and must come out at the revision the first server
//! spoke), tells it again what the old one was told (the log level, the
//! legacy resource subscriptions; a modern listen re-opens by itself), and
//! puts it in the old one's place. Requests made meanwhile wait for it.
//! Subscribers hear [`ServerNotification::Restarted`], or
//! [`ServerNotification::RestartAbandoned`] when the attempts run out and
//! the client ends as it would have without a policy.
//!
//! [`Transport::reopen`]: crate::Transport::reopen

pub(crate) mod live;
pub(crate) mod renew;
pub(crate) mod revive;

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::error::Error;
use crate::session::notifications::ServerNotification;

/// How a client restarts a server it lost: opt-in through
/// [`ClientConfig::restart`](crate::ClientConfig::restart), for the
/// transports that can start their server again (stdio).
///
/// Calls in flight when the server is lost fail (never sent again: a tool
/// may not be safe to repeat); later calls wait for the restarted server.
/// Attempts are counted from the loss, and forgiven once a restarted server
/// has stayed up for [`healthy_after`](RestartPolicy::healthy_after).
///
/// ```
/// use golem_mcp::{ClientConfig, RestartPolicy};
/// use std::time::Duration;
///
/// let config = ClientConfig::default()
///     .with_restart(RestartPolicy::default().with_max_attempts(3));
/// assert_eq!(config.restart.as_ref().map(|policy| policy.max_attempts), Some(3));
/// # let _ = Duration::ZERO;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RestartPolicy {
    /// How many restarts in a row may be tried before the client gives up
    /// and ends (5).
    pub max_attempts: u32,
    /// The wait before the second attempt (100 ms), doubled before each
    /// later one; the first is made at once.
    pub initial_backoff: Duration,
    /// The longest wait between two attempts (5 s).
    pub max_backoff: Duration,
    /// How long a restarted server must stay up for the attempts to be
    /// forgiven (60 s): a server that crashes at once is given up after
    /// `max_attempts`, one that crashes once an hour is always restarted.
    pub healthy_after: Duration,
    /// How long the restarted server may take to answer the handshake
    /// (30 s: a command run through `npx` or `uvx` may install first).
    pub handshake_timeout: Duration,
}

impl Default for RestartPolicy {
    fn default() -> Self {
        RestartPolicy {
            max_attempts: 5,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
            healthy_after: Duration::from_secs(60),
            handshake_timeout: Duration::from_secs(30),
        }
    }
}

impl RestartPolicy {
    /// This policy with at most `attempts` restarts in a row.
    pub fn with_max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = attempts;
        self
    }

    /// This policy with `healthy` as the time a restarted server must stay
    /// up for its attempts to be forgiven.
    pub fn with_healthy_after(mut self, healthy: Duration) -> Self {
        self.healthy_after = healthy;
        self
    }

    /// This policy with `timeout` for the restarted server's handshake.
    pub fn with_handshake_timeout(mut self, timeout: Duration) -> Self {
        self.handshake_timeout = timeout;
        self
    }

    /// This policy with the first wait `initial` and the longest `max`.
    pub fn with_backoff(mut self, initial: Duration, max: Duration) -> Self {
        self.initial_backoff = initial;
        self.max_backoff = max;
        self
    }

    /// The wait before attempt `attempt` (from 1): none before the first.
    fn backoff(&self, attempt: u32) -> Duration {
        if attempt <= 1 {
            return Duration::ZERO;
        }
        let doublings = attempt.saturating_sub(2).min(16);
        self.initial_backoff
            .saturating_mul(1 << doublings)
            .min(self.max_backoff)
    }
}

/// Where the restarts stand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Standing {
    /// Session `generation` is the one in use.
    Up(u64),
    /// The server was lost; a new one is being started.
    Restarting,
    /// No more restarts: the attempts ran out, or the client was closed.
    Over,
}

/// What a new generation must be told again, after a restart or an HTTP
/// session renewed: the session state a legacy server keeps, and the log
/// level a modern one is told in every request.
#[derive(Debug, Default, Clone)]
pub(crate) struct Resume {
    /// The log level last asked for.
    pub(crate) log_level: Option<String>,
    /// The legacy resource subscriptions.
    pub(crate) subscriptions: BTreeSet<String>,
}

/// What a restart does to a client: the side of the restarts that knows
/// the client (`revive.rs`), so that the loop here does not.
pub(crate) trait Revive: Send + Sync + 'static {
    /// Waits until the session in use is lost, and says how (the exit
    /// status and last words); `None` once the client is closed or gone.
    fn lost(&self) -> impl Future<Output = Option<String>> + Send;

    /// Starts the server again as session `generation`, tells it what the
    /// old one was told, and puts it in use. [`Error::Closed`] when the
    /// client was closed or dropped meanwhile.
    fn start_again(&self, generation: u64) -> impl Future<Output = Result<(), Error>> + Send;

    /// Tells the application, through the client's notifications; `last`
    /// ends their streams after it.
    fn publish(&self, notification: ServerNotification, last: bool);
}

/// A client's restarts: the policy, where they stand, and the task that watches the session in use.
pub(crate) struct Restarts {
    policy: RestartPolicy,
    standing: Arc<watch::Sender<Standing>>,
    /// Set once the watching task runs: from then on a lost connection
    /// leaves the notification streams open (the inbound side reads it).
    supervised: Arc<AtomicBool>,
    /// The watching task, until `stop` takes it.
    task: Mutex<Option<JoinHandle<()>>>,
}

impl Drop for Restarts {
    fn drop(&mut self) {
        if let Some(task) = lock(&self.task).take() {
            task.abort();
        }
    }
}

/// Locks a mutex that no code path can leave inconsistent.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Restarts {
    /// Restarts by `policy`; `supervised` is the inbound side's view of
    /// whether they have started.
    pub(crate) fn new(policy: RestartPolicy, supervised: Arc<AtomicBool>) -> Self {
        Restarts {
            policy,
            standing: Arc::new(watch::Sender::new(Standing::Up(0))),
            supervised,
            task: Mutex::new(None),
        }
    }

    /// How long a restarted server's handshake may take.
    pub(crate) fn handshake_timeout(&self) -> Duration {
        self.policy.handshake_timeout
    }

    /// Starts watching the sessions of `client`, once (when the first is
    /// ready).
    pub(crate) fn start(&self, client: impl Revive) {
        if self.supervised.swap(true, Ordering::AcqRel) {
            return;
        }
        *lock(&self.task) = Some(tokio::spawn(watch_sessions(
            client,
            self.policy.clone(),
            self.standing.clone(),
        )));
    }

    /// No more restarts (the client is closing): the task is stopped, and
    /// what it had started is gone once this returns.
    pub(crate) async fn stop(&self) {
        self.standing.send_replace(Standing::Over);
        let task = lock(&self.task).take();
        if let Some(task) = task {
            task.abort();
            // Its end drops what it held (a server started, not yet used).
            let _ = task.await;
        }
    }

    /// Waits until a session newer than `generation` is in use (`true`),
    /// or there will be none (`false`).
    pub(crate) async fn replaced(&self, generation: u64) -> bool {
        let mut standing = self.standing.subscribe();
        let outcome = standing
            .wait_for(|standing| match standing {
                Standing::Up(current) => *current > generation,
                Standing::Restarting => false,
                Standing::Over => true,
            })
            .await
            .map(|standing| matches!(*standing, Standing::Up(_)));
        outcome.unwrap_or(false)
    }
}

/// Watches the session in use and starts the server again when it is
/// lost, until the attempts run out or the client goes away.
async fn watch_sessions(
    client: impl Revive,
    policy: RestartPolicy,
    standing: Arc<watch::Sender<Standing>>,
) {
    let mut attempts = 0;
    let mut next_generation = 1;
    let mut up_since = Instant::now();
    while let Some(cause) = client.lost().await {
        if up_since.elapsed() >= policy.healthy_after {
            attempts = 0;
        }
        standing.send_replace(Standing::Restarting);
        tracing::warn!(%cause, "mcp: lost the server; starting it again");
        loop {
            attempts += 1;
            if attempts > policy.max_attempts {
                // The attempts of the last losses were not forgiven yet.
                let error = format!(
                    "the server was started again {} times, and lost again within {:?} each time",
                    attempts - 1,
                    policy.healthy_after
                );
                give_up(&client, &standing, attempts - 1, cause, error);
                return;
            }
            tokio::time::sleep(policy.backoff(attempts)).await;
            let generation = next_generation;
            next_generation += 1;
            match client.start_again(generation).await {
                Ok(()) => {
                    up_since = Instant::now();
                    // Not over a close's `Over`.
                    standing.send_if_modified(|standing| {
                        let open = *standing != Standing::Over;
                        if open {
                            *standing = Standing::Up(generation);
                        }
                        open
                    });
                    tracing::warn!(attempt = attempts, %cause, "mcp: the server is running again");
                    let restarted = ServerNotification::Restarted {
                        attempt: attempts,
                        cause,
                    };
                    client.publish(restarted, false);
                    break;
                }
                Err(Error::Closed { .. }) => return,
                // Nothing to try again: the transport cannot start its server.
                Err(error @ Error::NotSupported { .. }) => {
                    give_up(&client, &standing, attempts - 1, cause, error.to_string());
                    return;
                }
                Err(error) if attempts >= policy.max_attempts => {
                    give_up(&client, &standing, attempts, cause, error.to_string());
                    return;
                }
                Err(error) => {
                    tracing::warn!(attempt = attempts, %error, "mcp: starting the server again failed");
                }
            }
        }
    }
}

/// Ends the restarts for good: subscribers hear why, then their streams
/// end, and requests fail as the lost connection ended.
fn give_up(
    client: &impl Revive,
    standing: &watch::Sender<Standing>,
    attempts: u32,
    cause: String,
    error: String,
) {
    tracing::warn!(attempts, %cause, %error, "mcp: gave up starting the server again");
    standing.send_replace(Standing::Over);
    let abandoned = ServerNotification::RestartAbandoned {
        attempts,
        cause,
        error,
    };
    client.publish(abandoned, true);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_its_bound() {
        let policy = RestartPolicy::default();
        let waits: Vec<_> = (1..=8).map(|attempt| policy.backoff(attempt)).collect();
        assert_eq!(waits[0], Duration::ZERO, "the first attempt at once");
        assert_eq!(waits[1], Duration::from_millis(100));
        assert_eq!(waits[2], Duration::from_millis(200));
        assert_eq!(waits[6], Duration::from_millis(3200));
        assert_eq!(waits[7], Duration::from_secs(5));
        assert_eq!(policy.backoff(u32::MAX), Duration::from_secs(5));
    }
}
