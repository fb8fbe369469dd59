//! The OAuth provider an HTTP target gets: built from the authorization
//! options (`args/auth.rs`) over the config entry's `"oauth"` settings,
//! with the loopback redirect and the browser, and the token cache file
//! under the config directory. Refuses what cannot work (options for a
//! stdio server, OAuth next to an `Authorization` header, client
//! credentials without a credential). It knows nothing of `login`/`logout`
//! (`run/account.rs`); the flow itself is the library's (`golem_mcp::auth`).

use std::path::PathBuf;
use std::sync::Arc;

use golem_mcp::HttpConfig;
use golem_mcp::auth::{
    ClientAuth, FileTokenStore, LoopbackConfig, LoopbackRedirect, MemoryTokenStore, OAuthConfig,
    OAuthProvider, Secret, SigningAlgorithm, SigningKey, TokenStore, open_in_browser,
};
use golem_mcp::config::OAuthSettings;

use crate::args::auth::AuthOptions;
use crate::failure::Failure;
use crate::plan::pausing::{ConsoleSlot, PausingUserAgent};
use crate::plan::target::Target;

/// Whether any authorization option is given.
fn any_given(options: &AuthOptions) -> bool {
    options.client_id.is_some()
        || options.client_secret_env.is_some()
        || options.client_metadata_url.is_some()
        || options.scope.is_some()
        || options.client_credentials
        || options.private_key.is_some()
        || options.no_browser
}

/// Gives an HTTP target an OAuth provider (unless it sends its own
/// `Authorization` header), configured by the command-line options over
/// the config entry's `"oauth"` `settings`; refuses authorization options
/// for a stdio server. The provider is returned for `login` and `logout`.
///
/// While the user authorizes in the browser, the console in `console` (once
/// the command has one) is paused: that time does not count against
/// `--timeout`.
pub fn attach(
    options: &AuthOptions,
    settings: Option<OAuthSettings>,
    target: &mut Target,
    console: &ConsoleSlot,
) -> Result<Option<Arc<OAuthProvider>>, Failure> {
    let Some(http) = target.http_mut() else {
        if any_given(options) {
            return Err(Failure::usage(
                "the authorization options apply to HTTP servers (--url), not to a server \
                 started over stdio",
            ));
        }
        return Ok(None);
    };
    if has_authorization_header(http) {
        if any_given(options) || settings.is_some() {
            return Err(Failure::usage(
                "an Authorization header is given (-H or the config file); drop it to use \
                 OAuth, or drop the authorization options (and the entry's \"oauth\")",
            ));
        }
        return Ok(None);
    }
    let provider = Arc::new(provider(
        &merged(options, settings.unwrap_or_default()),
        console,
    )?);
    http.auth = Some(provider.clone());
    Ok(Some(provider))
}

/// What the provider is built from: the options, or else the config file's.
struct Settings {
    client_id: Option<String>,
    /// From `--client-secret-env` (the variable's name) or the file (the
    /// value).
    client_secret: Option<Result<Secret, String>>,
    client_metadata_url: Option<String>,
    scope: Option<String>,
    client_credentials: bool,
    private_key: Option<PathBuf>,
    no_browser: bool,
}

fn merged(options: &AuthOptions, file: OAuthSettings) -> Settings {
    let secret_from_options =
        options
            .client_secret_env
            .as_ref()
            .map(|var| match std::env::var(var) {
                Ok(secret) if !secret.is_empty() => Ok(Secret::new(secret)),
                _ => Err(format!(
                    "--client-secret-env {var}: the environment variable {var} is not set"
                )),
            });
    let (client_secret, private_key) = match (secret_from_options, &options.private_key) {
        // Either option replaces both of the file's credentials.
        (None, None) => (file.client_secret.map(Ok), file.private_key_file),
        (secret, key) => (secret, key.clone()),
    };
    Settings {
        client_id: options.client_id.clone().or(file.client_id),
        client_secret,
        client_metadata_url: options
            .client_metadata_url
            .clone()
            .or(file.client_metadata_url),
        scope: options.scope.clone().or(file.scope),
        client_credentials: options.client_credentials || file.client_credentials,
        private_key,
        no_browser: options.no_browser,
    }
}

fn has_authorization_header(http: &HttpConfig) -> bool {
    http.headers
        .iter()
        .any(|(name, _)| name.trim().eq_ignore_ascii_case("authorization"))
}

fn provider(options: &Settings, console: &ConsoleSlot) -> Result<OAuthProvider, Failure> {
    let client_auth = client_auth(options)?;
    let mut config = if options.client_credentials {
        let Some(client_id) = &options.client_id else {
            return Err(Failure::usage(
                "--client-credentials needs --client-id (and --client-secret-env or --private-key)",
            ));
        };
        if matches!(client_auth, ClientAuth::None) {
            return Err(Failure::usage(
                "--client-credentials needs --client-secret-env VAR or --private-key FILE",
            ));
        }
        OAuthConfig::client_credentials(client_id.clone(), client_auth)
    } else {
        let mut loopback = LoopbackConfig::default();
        if options.no_browser {
            loopback.open = Arc::new(|url| {
                eprintln!("golem-mcp: open this URL in a browser to authorize:\n\n    {url}\n");
                Ok(())
            });
        } else {
            loopback.open = Arc::new(|url| {
                eprintln!(
                    "golem-mcp: authorizing in the browser (--no-browser prints the URL instead)"
                );
                open_in_browser(url)
            });
        }
        let mut config = OAuthConfig::new(Arc::new(PausingUserAgent::new(
            LoopbackRedirect::new(loopback),
            console.clone(),
        )));
        config.client_id = options.client_id.clone();
        config.client_auth = client_auth;
        config
    };
    config.client_metadata_url = options.client_metadata_url.clone();
    config.scope = options.scope.clone();
    config.store = token_store();
    OAuthProvider::new(config).map_err(|error| Failure::usage(error.to_string()))
}

fn client_auth(options: &Settings) -> Result<ClientAuth, Failure> {
    match (&options.client_secret, &options.private_key) {
        (Some(_), Some(_)) => Err(Failure::usage(
            "give a client secret or a private key, not both",
        )),
        (Some(Ok(secret)), None) => Ok(ClientAuth::Secret(secret.clone())),
        (Some(Err(problem)), None) => Err(Failure::usage(problem.clone())),
        (None, Some(path)) => {
            let pem = std::fs::read_to_string(path).map_err(|error| {
                Failure::usage(format!("--private-key {}: {error}", path.display()))
            })?;
            SigningKey::from_pem(&pem, SigningAlgorithm::Es256)
                .or_else(|_| SigningKey::from_pem(&pem, SigningAlgorithm::Rs256))
                .map(ClientAuth::PrivateKeyJwt)
                .map_err(|_| {
                    Failure::usage(format!(
                        "--private-key {}: not a PEM EC P-256 or RSA private key",
                        path.display()
                    ))
                })
        }
        (None, None) => Ok(ClientAuth::None),
    }
}

/// Where tokens are cached: `golem-mcp/tokens.json` under
/// `$XDG_CONFIG_HOME`, else `~/.config`.
pub fn token_file() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))?;
    Some(base.join("golem-mcp").join("tokens.json"))
}

fn token_store() -> Arc<dyn TokenStore> {
    match token_file() {
        Some(path) => Arc::new(FileTokenStore::new(path)),
        None => Arc::new(MemoryTokenStore::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::failure::usage_message as usage;
    use golem_mcp::StdioConfig;

    fn http() -> Target {
        Target::Http(HttpConfig::new("https://mcp.example.com/mcp"))
    }

    /// `attach` without config settings, before the command has a console.
    fn attach_plain(
        options: &AuthOptions,
        target: &mut Target,
    ) -> Result<Option<Arc<OAuthProvider>>, Failure> {
        attach(options, None, target, &ConsoleSlot::default())
    }

    #[test]
    fn http_servers_get_a_provider_unless_they_send_their_own_authorization() {
        let mut target = http();
        assert!(
            attach_plain(&AuthOptions::default(), &mut target)
                .expect("ok")
                .is_some()
        );
        assert!(matches!(&target, Target::Http(http) if http.auth.is_some()));
        let mut with_header = Target::Http(HttpConfig {
            headers: vec![("authorization".into(), "Bearer x".into())],
            ..HttpConfig::new("https://mcp.example.com/mcp")
        });
        assert!(
            attach_plain(&AuthOptions::default(), &mut with_header)
                .expect("ok")
                .is_none()
        );
        let options = AuthOptions {
            scope: Some("a".into()),
            ..AuthOptions::default()
        };
        assert!(usage(attach_plain(&options, &mut with_header)).contains("Authorization header"));
        let mut stdio = Target::Stdio(StdioConfig::new("server"));
        assert!(
            attach_plain(&AuthOptions::default(), &mut stdio)
                .expect("ok")
                .is_none()
        );
        assert!(usage(attach_plain(&options, &mut stdio)).contains("HTTP servers"));
    }

    #[test]
    fn client_credentials_need_an_id_and_a_credential_read_from_the_environment() {
        let mut options = AuthOptions {
            client_credentials: true,
            ..AuthOptions::default()
        };
        assert!(usage(attach_plain(&options, &mut http())).contains("--client-id"));
        options.client_id = Some("id".into());
        assert!(usage(attach_plain(&options, &mut http())).contains("--client-secret-env"));
        options.client_secret_env = Some("GOLEM_MCP_TEST_SURELY_UNSET_VARIABLE".into());
        let message = usage(attach_plain(&options, &mut http()));
        assert!(message.contains("is not set"), "{message}");
        options.private_key = Some("key.pem".into());
        assert!(usage(attach_plain(&options, &mut http())).contains("not both"));
    }

    #[test]
    fn the_config_files_settings_apply_unless_an_option_replaces_them() {
        let mut file = OAuthSettings::default();
        file.client_id = Some("from-file".into());
        file.client_secret = Some(Secret::new("file-secret"));
        file.scope = Some("file-scope".into());
        let settings = merged(&AuthOptions::default(), file.clone());
        assert_eq!(settings.client_id.as_deref(), Some("from-file"));
        assert_eq!(settings.scope.as_deref(), Some("file-scope"));
        assert!(
            matches!(&settings.client_secret, Some(Ok(secret)) if secret.expose() == "file-secret")
        );
        let options = AuthOptions {
            client_id: Some("from-option".into()),
            private_key: Some("key.pem".into()),
            ..AuthOptions::default()
        };
        let settings = merged(&options, file);
        assert_eq!(settings.client_id.as_deref(), Some("from-option"));
        assert_eq!(settings.scope.as_deref(), Some("file-scope"));
        // The option's key replaces the file's secret: not both.
        assert!(settings.client_secret.is_none());
        assert_eq!(settings.private_key, Some(PathBuf::from("key.pem")));
    }

    #[test]
    fn a_private_key_that_is_not_pem_is_a_usage_error_that_does_not_quote_it() {
        let path =
            std::env::temp_dir().join(format!("golem-mcp-cli-key-{}.pem", std::process::id()));
        std::fs::write(&path, "secret-key-material").expect("written");
        let options = AuthOptions {
            client_credentials: true,
            client_id: Some("id".into()),
            private_key: Some(path.clone()),
            ..AuthOptions::default()
        };
        let message = usage(attach_plain(&options, &mut http()));
        let _ = std::fs::remove_file(&path);
        assert!(message.contains("not a PEM"), "{message}");
        assert!(!message.contains("secret-key-material"), "{message}");
    }
}
