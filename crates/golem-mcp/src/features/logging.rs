//! Logging (`logging/setLevel`): which of its log messages the server sends.
//! The messages themselves arrive as notifications
//! ([`ServerNotification::Log`](crate::ServerNotification::Log)).

use crate::error::Error;
use crate::session::client::Client;
use crate::session::notifications::LogLevel;

impl Client {
    /// Asks the server to send log messages of `level` and above
    /// (`logging/setLevel`).
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn set_log_level(&self, level: LogLevel) -> Result<(), Error> {
        let _: serde::de::IgnoredAny = self
            .request(
                "logging/setLevel",
                None,
                serde_json::json!({ "level": level }),
            )
            .await?;
        Ok(())
    }
}
