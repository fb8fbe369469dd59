//! Logging: which of its log messages the server sends (`logging/setLevel`
//! in the legacy era; a log level in every request's `_meta` in the modern
//! one). The messages themselves arrive as notifications
//! ([`ServerNotification::Log`](crate::ServerNotification::Log)).

use crate::error::Error;
use crate::session::handle::Client;
use crate::session::notifications::LogLevel;
use crate::session::protocol::Era;

impl Client {
    /// Asks the server to send log messages of `level` and above: with
    /// `logging/setLevel` to a legacy server; to a modern (2026-07-28) one,
    /// which keeps no state, by naming the level in every later request's
    /// `_meta` (`io.modelcontextprotocol/logLevel`; nothing is sent now, and
    /// without a level a modern server sends no log messages).
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn set_log_level(&self, level: LogLevel) -> Result<(), Error> {
        if self.era("logging/setLevel")? == Era::Modern {
            return self.set_modern_log_level(&level.to_string());
        }
        let _: serde::de::IgnoredAny = self
            .request(
                "logging/setLevel",
                None,
                serde_json::json!({ "level": level }),
            )
            .await?;
        // A restarted server is told it again (ADR 0026).
        self.remember_log_level(&level.to_string());
        Ok(())
    }
}
