//! From a configuration entry to an initialized [`Client`]: the spawn or
//! connection, the handshake, and a bound on how long that may take.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::client_config::ClientConfig;
use crate::config::{ServerConfig, Servers};
use crate::error::Error;
use crate::session::handle::Client;
#[cfg(feature = "http")]
use crate::transports::http::HttpTransport;
#[cfg(feature = "http")]
use crate::transports::sse::SseTransport;
use crate::transports::stdio::{ServerStderr, StdioTransport};

impl ServerConfig {
    /// Starts (stdio) or reaches (HTTP, HTTP+SSE) this server and initializes a client
    /// on it with the default [`ClientConfig`].
    ///
    /// The handshake has no bound of its own: wrap the call in
    /// [`tokio::time::timeout`], or use [`connect_with`](Self::connect_with)
    /// through [`Servers::connect_all`], which bounds each server.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future drops the half-made client, which
    /// ends a stdio server's process group.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), golem_mcp::Error> {
    /// let servers = golem_mcp::config::load("mcp.json")?;
    /// let client = servers.get("files")?.connect().await?;
    /// println!("{} tools", client.list_tools().await?.len());
    /// client.close().await?;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn connect(&self) -> Result<Client, Error> {
        self.connect_with(ClientConfig::default()).await
    }

    /// [`connect`](Self::connect) with the handlers and identity of `config`.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe, as [`connect`](Self::connect).
    pub async fn connect_with(&self, config: ClientConfig) -> Result<Client, Error> {
        let (client, _) = self.client(config)?;
        client.initialize_or_close().await?;
        Ok(client)
    }

    /// A client on a fresh transport, not yet initialized, and the handle on
    /// a stdio server's stderr.
    fn client(&self, config: ClientConfig) -> Result<(Client, Option<ServerStderr>), Error> {
        Ok(match self {
            ServerConfig::Stdio(stdio) => {
                let transport = StdioTransport::spawn(stdio.clone())?;
                let stderr = transport.stderr();
                (Client::with_config(transport, config), Some(stderr))
            }
            #[cfg(feature = "http")]
            ServerConfig::Http(http) => (
                Client::with_config(HttpTransport::new(http.clone())?, config),
                None,
            ),
            #[cfg(feature = "http")]
            ServerConfig::Sse(http) => (
                Client::with_config(SseTransport::new(http.clone())?, config),
                None,
            ),
        })
    }

    /// [`connect_with`](Self::connect_with) within `timeout`; a server that
    /// takes longer is stopped and reported with its stderr so far. A stdio
    /// server's era probe may take half of `timeout`.
    async fn connect_within(
        &self,
        config: ClientConfig,
        timeout: Duration,
    ) -> Result<Client, Error> {
        let mut config = config;
        // A stdio server slow to answer the probe (an `npx` download, busy
        // CPUs) is not a legacy one: the probe may take half the start's
        // bound, leaving the other half to a legacy server that ignores it
        // (issue 34).
        if matches!(self, ServerConfig::Stdio(_)) {
            config.probe_timeout = timeout / 2;
        }
        let (client, stderr) = self.client(config)?;
        match tokio::time::timeout(timeout, client.initialize_or_close()).await {
            Ok(result) => result.map(|()| client),
            Err(_) => {
                // The request the server left unanswered: the era probe's
                // `server/discover`, or `initialize`.
                let operation = client.handshake_waiting_on().unwrap_or("initialize");
                let _ = client.close().await;
                Err(Error::Timeout {
                    operation: operation.to_owned(),
                    after: timeout,
                    stderr_tail: stderr.map(|stderr| stderr.tail()).unwrap_or_default(),
                })
            }
        }
    }
}

/// `initialize`, closing the client when it fails: that reaps a stdio
/// server now rather than when the last clone goes, and the handshake's
/// error is the one worth reporting.
impl Servers {
    /// Connects every enabled entry at once (see
    /// [`ServerConfig::connect_with`]), each with `config` and at most
    /// `timeout` for its start and handshake, and returns one result per
    /// entry, by name. A stdio server's era probe may take half of that (a
    /// server slow to answer it is not taken for a legacy one; a legacy one
    /// that ignores it still has the other half), in place of `config`'s
    /// [`probe_timeout`](ClientConfig::probe_timeout). A timeout names the
    /// request the server left unanswered (`server/discover` or
    /// `initialize`). An entry's `"protocol"` ([`Servers::protocol`])
    /// pins its revision in place of `config`'s choice.
    ///
    /// Disabled entries (`"disabled": true`) are left out; a malformed entry
    /// gets its [`ConfigError`](crate::config::ConfigError) as
    /// [`Error::Config`]; a server that does not finish its handshake in
    /// time gets [`Error::Timeout`] (with what a stdio server wrote to
    /// stderr) and is stopped. One server's failure
    /// does not affect the others.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future drops every client made so far,
    /// which ends their stdio servers.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use golem_mcp::ClientConfig;
    ///
    /// # async fn run() -> Result<(), golem_mcp::Error> {
    /// let servers = golem_mcp::config::load("mcp.json")?;
    /// for (name, result) in servers.connect_all(&ClientConfig::default(), Duration::from_secs(30)).await {
    ///     match result {
    ///         Ok(client) => println!("{name}: {} tools", client.list_tools().await?.len()),
    ///         Err(error) => eprintln!("{name}: {error}"),
    ///     }
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn connect_all(
        &self,
        config: &ClientConfig,
        timeout: Duration,
    ) -> BTreeMap<String, Result<Client, Error>> {
        let connects = self.enabled().map(|name| async move {
            // The entry's own pinned revision, else `config`'s choice.
            let config = match self.protocol(name) {
                Some(version) => config.clone().with_protocol(version),
                None => config.clone(),
            };
            let result = match self.get(name) {
                Ok(server) => server.connect_within(config, timeout).await,
                Err(error) => Err(Error::Config(error)),
            };
            (name.to_owned(), result)
        });
        futures_util::future::join_all(connects)
            .await
            .into_iter()
            .collect()
    }
}
