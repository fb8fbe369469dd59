//! The authorization options of the command line (`--client-id`,
//! `--scope`, ...), as clap parses them. What they build, the OAuth
//! provider, is planning's (`plan/oauth.rs`); `login` and `logout` are
//! running's (`run/account.rs`).

use std::path::PathBuf;

use clap::Args;

/// How `golem-mcp` authorizes with servers that require OAuth.
#[derive(Debug, Default, Args)]
pub struct AuthOptions {
    /// A pre-registered OAuth client id (without one, golem-mcp uses
    /// --client-metadata-url where supported, else registers itself).
    #[arg(long, global = true, value_name = "ID", help_heading = "Authorization")]
    pub client_id: Option<String>,
    /// The environment variable that holds the client secret (a secret is
    /// never given on the command line).
    #[arg(
        long,
        global = true,
        value_name = "VAR",
        help_heading = "Authorization"
    )]
    pub client_secret_env: Option<String>,
    /// The HTTPS URL of a Client ID Metadata Document to use as client id.
    #[arg(
        long,
        global = true,
        value_name = "URL",
        help_heading = "Authorization"
    )]
    pub client_metadata_url: Option<String>,
    /// The scopes to ask for, space-separated (default: what the server
    /// asks for).
    #[arg(
        long,
        global = true,
        value_name = "SCOPE",
        help_heading = "Authorization"
    )]
    pub scope: Option<String>,
    /// Authorize as the client itself, without a user (client credentials;
    /// needs --client-id and --client-secret-env or --private-key).
    #[arg(long, global = true, help_heading = "Authorization")]
    pub client_credentials: bool,
    /// A PEM private key (EC P-256 or RSA) for private_key_jwt client
    /// authentication.
    #[arg(
        long,
        global = true,
        value_name = "FILE",
        help_heading = "Authorization"
    )]
    pub private_key: Option<PathBuf>,
    /// Print the authorization URL instead of opening a browser.
    #[arg(long, global = true, help_heading = "Authorization")]
    pub no_browser: bool,
}
