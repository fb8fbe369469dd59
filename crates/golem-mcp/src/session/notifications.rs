//! What a server tells the client without being asked: log messages, list
//! changes, resource updates, the end of a URL elicitation.
//!
//! Every such notification is broadcast by the client's [`Hub`] to
//! [`Notifications`] subscribers (a bounded queue each: a subscriber that
//! falls behind skips the oldest), and log messages also go to `tracing`.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::broadcast;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use crate::wire::task::Task;

/// How many notifications a subscriber may fall behind before the oldest
/// are skipped.
const SUBSCRIBER_QUEUE: usize = 256;

/// A notification from the server.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ServerNotification {
    /// The server's tools changed: list them again.
    ToolsListChanged,
    /// The server's resources changed.
    ResourcesListChanged,
    /// The server's prompts changed.
    PromptsListChanged,
    /// A subscribed resource changed (see
    /// [`Client::subscribe_resource`](crate::Client::subscribe_resource),
    /// whose handle reports the updates of its URI only).
    ResourceUpdated {
        /// The resource's URI.
        uri: String,
    },
    /// A URL-mode elicitation was completed.
    ElicitationComplete {
        /// The elicitation's id.
        elicitation_id: String,
    },
    /// A log message.
    Log(LogMessage),
    /// A task's status changed (`notifications/tasks/status`, 2025-11-25).
    /// A task called with
    /// [`Client::call_tool_as_task`](crate::Client::call_tool_as_task) is
    /// polled at once when one arrives for it.
    TaskStatus(Task),
    /// Not from the server: the client lost the server and started it
    /// again ([`RestartPolicy`](crate::RestartPolicy)). Requests in flight
    /// when it was lost failed; later ones go to the new server, which was
    /// told again the log level and the resource subscriptions (a legacy
    /// server that refuses one is used without it, with a warning). Its
    /// lists may differ: list them again.
    Restarted {
        /// Which attempt succeeded (from 1).
        attempt: u32,
        /// How the server was lost (its exit status and last words).
        cause: String,
    },
    /// Not from the server: the client gave up starting the lost server
    /// again; it has ended, and every later request fails as the
    /// connection ended. Notification streams end after this one.
    RestartAbandoned {
        /// How many attempts failed.
        attempts: u32,
        /// How the server was lost.
        cause: String,
        /// Why the last attempt failed.
        error: String,
    },
    /// Not from the server: it had dropped the HTTP session (a `404`), and
    /// the client started a new one on the same connection and sent the
    /// request again (`HttpConfig::reinitialize_expired_session`). The new
    /// session was told the log level and the resource subscriptions the
    /// old one had; anything else the server kept for the old session is
    /// gone.
    SessionRenewed,
    /// A notification this client does not interpret, as sent.
    Other {
        /// Its method.
        method: String,
        /// Its parameters, when any.
        params: Option<Value>,
    },
}

/// A log message from the server (`notifications/message`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct LogMessage {
    /// Its severity.
    pub level: LogLevel,
    /// The server's logger name, when given.
    #[serde(default)]
    pub logger: Option<String>,
    /// What it says: a string or any JSON value.
    #[serde(default)]
    pub data: Value,
}

/// A log severity (RFC 5424's, as MCP uses them), least severe first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Debugging detail.
    Debug,
    /// Information.
    Info,
    /// A normal but significant event.
    Notice,
    /// A warning.
    Warning,
    /// An error.
    Error,
    /// A critical condition.
    Critical,
    /// Action must be taken at once.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl std::fmt::Display for LogLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        })
    }
}

impl LogLevel {
    /// Every level, least severe first.
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];
}

/// A level's name (`"warning"`), in any case and with spaces around it
/// (`"Warning "`), as a command line gives it; anything else is
/// [`UnknownLogLevel`].
///
/// ```
/// use golem_mcp::LogLevel;
///
/// assert_eq!("Warning".parse(), Ok(LogLevel::Warning));
/// assert!("loud".parse::<LogLevel>().is_err());
/// ```
impl std::str::FromStr for LogLevel {
    type Err = UnknownLogLevel;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let name = text.trim().to_ascii_lowercase();
        LogLevel::ALL
            .into_iter()
            .find(|level| level.to_string() == name)
            .ok_or_else(|| UnknownLogLevel(text.to_owned()))
    }
}

/// A name that is not a [`LogLevel`]'s; its message lists the names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{0:?} is not a log level: debug, info, notice, warning, error, critical, alert or emergency"
)]
pub struct UnknownLogLevel(pub String);

impl LogMessage {
    /// The message as one line of text: a string as is, other JSON compact.
    pub fn text(&self) -> String {
        match &self.data {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        }
    }

    /// Emits the message as a `tracing` event at the matching level
    /// (notice as info; critical, alert and emergency as error), with the
    /// server's logger name as a field.
    pub(crate) fn trace(&self) {
        let logger = self.logger.as_deref().unwrap_or("");
        let text = self.text();
        match self.level {
            LogLevel::Debug => tracing::debug!(target: "mcp::server", logger, "{text}"),
            LogLevel::Info | LogLevel::Notice => {
                tracing::info!(target: "mcp::server", logger, "{text}");
            }
            LogLevel::Warning => tracing::warn!(target: "mcp::server", logger, "{text}"),
            _ => tracing::error!(target: "mcp::server", logger, level = %self.level, "{text}"),
        }
    }
}

impl ServerNotification {
    /// Reads a notification; `None` for the ones routed elsewhere (progress,
    /// cancellation).
    pub(crate) fn parse(method: &str, params: Option<&str>) -> Option<Self> {
        let value = || params.and_then(|params| serde_json::from_str::<Value>(params).ok());
        let text = |key: &str| {
            value()
                .and_then(|params| params.get(key).and_then(Value::as_str).map(str::to_owned))
                .unwrap_or_default()
        };
        Some(match method {
            "notifications/progress" | "notifications/cancelled" => return None,
            "notifications/tools/list_changed" => ServerNotification::ToolsListChanged,
            "notifications/resources/list_changed" => ServerNotification::ResourcesListChanged,
            "notifications/prompts/list_changed" => ServerNotification::PromptsListChanged,
            "notifications/resources/updated" => {
                ServerNotification::ResourceUpdated { uri: text("uri") }
            }
            "notifications/elicitation/complete" => ServerNotification::ElicitationComplete {
                elicitation_id: text("elicitationId"),
            },
            "notifications/tasks/status" => match params.map(serde_json::from_str::<Task>) {
                Some(Ok(task)) => ServerNotification::TaskStatus(task),
                _ => ServerNotification::Other {
                    method: method.to_owned(),
                    params: value(),
                },
            },
            "notifications/message" => match params.map(serde_json::from_str::<LogMessage>) {
                Some(Ok(message)) => ServerNotification::Log(message),
                _ => ServerNotification::Other {
                    method: method.to_owned(),
                    params: value(),
                },
            },
            _ => ServerNotification::Other {
                method: method.to_owned(),
                params: value(),
            },
        })
    }
}

/// A subscription to the server's notifications, from
/// [`Client::notifications`](crate::Client::notifications).
///
/// Each subscriber has a queue of its own; one that falls more than 256
/// behind skips the oldest (and a debug event says how many).
#[derive(Debug)]
pub struct Notifications {
    receiver: broadcast::Receiver<ServerNotification>,
}

impl Notifications {
    pub(crate) fn new(receiver: broadcast::Receiver<ServerNotification>) -> Self {
        Notifications { receiver }
    }

    /// The underlying queue, for handles that filter it
    /// (`ResourceSubscription`).
    pub(crate) fn into_receiver(self) -> broadcast::Receiver<ServerNotification> {
        self.receiver
    }

    /// The next notification; `None` once the client is gone.
    ///
    /// Cancel safe: a notification not yet returned stays queued.
    pub async fn recv(&mut self) -> Option<ServerNotification> {
        loop {
            match self.receiver.recv().await {
                Ok(notification) => return Some(notification),
                Err(broadcast::error::RecvError::Lagged(skipped)) => {
                    tracing::debug!(skipped, "mcp: a notification subscriber fell behind");
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }
}

/// Where one client's notifications are broadcast: the inbound driver
/// publishes, subscriptions receive, and closing the connection ends them.
pub(crate) struct Hub {
    events: Mutex<Events>,
    /// How many times the server said its prompts changed: what tells the
    /// kept prompt list it went stale, without holding a subscription
    /// (which would keep up to a queue's worth of every notification,
    /// whatever their size, until the next prompt request).
    prompt_changes: AtomicU64,
}

/// The broadcast, made by the first subscription: its queue is allocated
/// whole (about 40 KiB), which a client nobody listens to (most of an
/// agent's many idle servers) need not carry.
enum Events {
    /// Nobody has subscribed yet: a notification has no one to reach.
    Unheard,
    Open(broadcast::Sender<ServerNotification>),
    /// The connection has ended, and with it every subscription.
    Ended,
}

impl Default for Hub {
    fn default() -> Self {
        Hub {
            events: Mutex::new(Events::Unheard),
            prompt_changes: AtomicU64::new(0),
        }
    }
}

impl Hub {
    /// A subscription to the notifications; one that has ended already
    /// when the connection has.
    pub(crate) fn subscribe(&self) -> Notifications {
        let mut events = self.events.lock().unwrap_or_else(PoisonError::into_inner);
        let receiver = match &*events {
            Events::Open(sender) => sender.subscribe(),
            Events::Unheard => {
                let (sender, receiver) = broadcast::channel(SUBSCRIBER_QUEUE);
                *events = Events::Open(sender);
                receiver
            }
            Events::Ended => broadcast::channel(1).1,
        };
        Notifications::new(receiver)
    }

    /// Broadcasts a notification (dropped when nobody subscribes).
    pub(crate) fn publish(&self, notification: ServerNotification) {
        // A restarted server or a new session may have other prompts too.
        if matches!(
            notification,
            ServerNotification::PromptsListChanged
                | ServerNotification::Restarted { .. }
                | ServerNotification::SessionRenewed
        ) {
            self.prompt_changes.fetch_add(1, Ordering::Relaxed);
        }
        if let Events::Open(sender) = &*self.events.lock().unwrap_or_else(PoisonError::into_inner) {
            let _ = sender.send(notification);
        }
    }

    /// How many prompt list changes the server has announced so far.
    pub(crate) fn prompt_changes(&self) -> u64 {
        self.prompt_changes.load(Ordering::Relaxed)
    }

    /// Ends every subscription: the connection is over.
    pub(crate) fn end(&self) {
        *self.events.lock().unwrap_or_else(PoisonError::into_inner) = Events::Ended;
    }
}
