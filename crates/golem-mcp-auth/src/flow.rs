//! `OAuthProvider`: the authorization flow of the MCP specification, tied
//! together from discovery, registration, PKCE and the token endpoint.

use std::fmt;
use std::sync::{Arc, Mutex as StdMutex, PoisonError};
use std::time::Duration;

use reqwest::Url;
use tokio::sync::Mutex;

use crate::binding::{self, Chosen};
use crate::challenge::Challenge;
use crate::cross_app::{self, CrossAppAccess};
use crate::discovery::{self, Discovered, canonical};
use crate::error::AuthError;
use crate::http::{OAuthHttp, shown};
use crate::pkce::check_state;
use crate::pkce::{Pkce, random_token};
use crate::provider::{AuthFuture, AuthProvider, Refusal};
use crate::registration::ClientAuth;
use crate::registration::{self, ClientIdentity, Registration, TokenAuth};
use crate::secret::Secret;
use crate::store::{self, EntryLock, MemoryTokenStore, StoredGrant, TokenStore};
use crate::token;
use crate::token::Tokens;
use crate::user_agent::UserAgent;

/// How long before its expiry a token is refreshed.
const REFRESH_MARGIN: Duration = Duration::from_secs(30);

/// How long a refresh waits for the lock of its entry in the store, which
/// another process holds while it refreshes the same tokens: for one token
/// request, which [`OAuthConfig::timeout`] bounds (30 s by default). A
/// holder past this is stuck (a stopped process): the waiter fails rather
/// than refresh beside it.
const ENTRY_LOCK_WAIT: Duration = Duration::from_secs(30);

/// Which OAuth grant obtains the tokens.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub enum Grant {
    /// The authorization code with PKCE, through the user agent: a user
    /// approves.
    #[default]
    AuthorizationCode,
    /// Client credentials (the MCP extension for machine-to-machine use):
    /// a pre-registered client authorizes as itself, no user involved.
    ClientCredentials,
    /// Cross-app access (SEP-990): the user's identity provider issues an
    /// identity assertion grant, which the pre-registered client presents
    /// as a JWT bearer grant; no browser.
    CrossAppAccess(CrossAppAccess),
}

/// How an [`OAuthProvider`] authorizes.
#[derive(Clone)]
#[non_exhaustive]
pub struct OAuthConfig {
    /// A pre-registered client id; when `None`, the client uses
    /// [`client_metadata_url`](OAuthConfig::client_metadata_url) if the
    /// authorization server supports Client ID Metadata Documents, else
    /// registers itself (RFC 7591).
    pub client_id: Option<String>,
    /// How the pre-registered client authenticates.
    pub client_auth: ClientAuth,
    /// The HTTPS URL of this application's Client ID Metadata Document,
    /// used as its client id where supported.
    pub client_metadata_url: Option<String>,
    /// The name registered for this client.
    pub client_name: String,
    /// The scopes to ask for, space-separated, instead of the
    /// specification's selection (the challenge's, else the resource's
    /// `scopes_supported`, else none).
    pub scope: Option<String>,
    /// Which grant obtains the tokens.
    pub grant: Grant,
    /// The user-agent step of the authorization-code grant; `None` fails
    /// an authorization that needs a user.
    pub user_agent: Option<Arc<dyn UserAgent>>,
    /// Where tokens are kept.
    pub store: Arc<dyn TokenStore>,
    /// The time limit of each OAuth request.
    pub timeout: Duration,
}

impl OAuthConfig {
    /// An authorization-code configuration with `user_agent`, a client
    /// that registers itself as `golem-mcp`, and tokens kept in memory.
    pub fn new(user_agent: Arc<dyn UserAgent>) -> Self {
        OAuthConfig {
            user_agent: Some(user_agent),
            ..Self::without_user_agent()
        }
    }

    /// A cross-app access configuration (SEP-990) for the pre-registered
    /// client `client_id` authenticating with `auth` at the MCP server's
    /// authorization server.
    pub fn cross_app_access(
        access: CrossAppAccess,
        client_id: impl Into<String>,
        auth: ClientAuth,
    ) -> Self {
        OAuthConfig {
            client_id: Some(client_id.into()),
            client_auth: auth,
            grant: Grant::CrossAppAccess(access),
            ..Self::without_user_agent()
        }
    }

    /// A client-credentials configuration for the pre-registered client
    /// `client_id` authenticating with `auth`.
    pub fn client_credentials(client_id: impl Into<String>, auth: ClientAuth) -> Self {
        OAuthConfig {
            client_id: Some(client_id.into()),
            client_auth: auth,
            grant: Grant::ClientCredentials,
            ..Self::without_user_agent()
        }
    }

    fn without_user_agent() -> Self {
        OAuthConfig {
            client_id: None,
            client_auth: ClientAuth::None,
            client_metadata_url: None,
            client_name: "golem-mcp".to_owned(),
            scope: None,
            grant: Grant::AuthorizationCode,
            user_agent: None,
            store: Arc::new(MemoryTokenStore::new()),
            timeout: Duration::from_secs(30),
        }
    }
}

impl fmt::Debug for OAuthConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthConfig")
            .field("client_id", &self.client_id)
            .field("client_auth", &self.client_auth)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("client_name", &self.client_name)
            .field("scope", &self.scope)
            .field("grant", &self.grant)
            .field("user_agent", &self.user_agent.as_ref().map(|_| "set"))
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// The MCP authorization flow as an [`AuthProvider`], for one server.
///
/// On a refusal it discovers the server's authorization server (anew on
/// every refusal: the server may have moved to another one), finds the
/// client's identity at that authorization server (pre-registered, a
/// Client ID Metadata Document URL, or Dynamic Client Registration), and
/// obtains tokens: by refreshing when it has a refresh token from that
/// issuer, else by the configured [`Grant`]. Requests refused together
/// share one authorization; tokens go to the [`TokenStore`] under the
/// server's canonical URL and are only ever sent to that server.
///
/// Credentials are bound to the authorization server that issued them
/// (SEP-2352): when the server names another one, nothing of the old one's
/// (client id, client secret, refresh token) goes to the new one; a
/// dynamically registered client registers there again, and the old grant
/// is set aside, to serve again if the server moves back. A pre-registered
/// client id belongs to one authorization server: the move fails the
/// authorization with an error that says so, rather than trying the client
/// at the new one.
///
/// Several providers may share one store (several processes on one
/// [`FileTokenStore`](crate::FileTokenStore)). A refresh holds the lock of
/// the server's entry ([`TokenStore::try_lock_entry`]) while it reads the
/// entry again, refreshes and keeps the new tokens; a provider that finds
/// the entry locked waits (at most 30 s, then fails with an
/// [`AuthError::Store`]) and, if the holder refreshed, uses its tokens and
/// sends no refresh of its own: the refresh token it had read may have
/// been rotated, and spending it again would be refused. An authorization
/// anew (a browser, a grant) does not hold the lock: it may wait minutes
/// for a user.
pub struct OAuthProvider {
    config: OAuthConfig,
    http: OAuthHttp,
    /// The tokens in use, and the server they are for.
    /// `None` until the store was read for a server; then that server and
    /// its grant, if any (the store is read once, not per request).
    current: StdMutex<Option<(String, Option<StoredGrant>)>>,
    /// Held while authorizing, so that concurrent refusals authorize once.
    flow: Mutex<FlowState>,
}

#[derive(Default)]
struct FlowState {
    /// What discovery last found, and for which server.
    discovered: Option<(Url, Discovered)>,
    /// The client identity last found or registered.
    client: Option<KnownClient>,
}

/// A client identity, bound to the authorization server it is for.
struct KnownClient {
    /// The issuer identifier of that authorization server: a registration
    /// is that server's, and never presented to another (SEP-2352).
    issuer: String,
    identity: ClientIdentity,
    /// The redirect URI it was registered with (dynamic registration only).
    registered_for: Option<String>,
}

impl fmt::Debug for OAuthProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        f.debug_struct("OAuthProvider")
            .field("config", &self.config)
            .field("server", &current.as_ref().map(|(server, _)| server))
            .field(
                "tokens",
                &current
                    .as_ref()
                    .and_then(|(_, grant)| grant.as_ref().map(|grant| &grant.tokens)),
            )
            .finish_non_exhaustive()
    }
}

impl OAuthProvider {
    /// A provider authorizing as `config` says. Fails only if the HTTP
    /// client cannot be built.
    pub fn new(config: OAuthConfig) -> Result<Self, AuthError> {
        let http = OAuthHttp::new(config.timeout)?;
        Ok(OAuthProvider {
            config,
            http,
            current: StdMutex::new(None),
            flow: Mutex::new(FlowState::default()),
        })
    }

    /// The tokens in use for `server` (read from the store the first
    /// time).
    fn grant(&self, server: &str) -> Option<StoredGrant> {
        {
            let current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some((key, grant)) = current.as_ref()
                && key == server
            {
                return grant.clone();
            }
        }
        self.reload(server)
    }

    /// The grant for `server` as the store has it now (another process
    /// sharing the store may have refreshed it since it was read: its
    /// rotated refresh token is the one to use, not ours), kept in use.
    fn reload(&self, server: &str) -> Option<StoredGrant> {
        let mut current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        let grant = match self.config.store.load(server) {
            Ok(grant) => grant.filter(|grant| self.own(grant)),
            Err(error) => {
                tracing::warn!(%error, "mcp: could not read the token store");
                None
            }
        };
        *current = Some((server.to_owned(), grant.clone()));
        grant
    }

    /// Whether `grant` is this client's to use: tokens of another client
    /// (a store shared with another configuration) are not.
    fn own(&self, grant: &StoredGrant) -> bool {
        self.config
            .client_id
            .as_ref()
            .is_none_or(|client_id| *client_id == grant.client_id)
    }

    /// Keeps `grant` as `server`'s, setting `replaced` (a grant of another
    /// authorization server) aside.
    fn keep(
        &self,
        server: &str,
        grant: StoredGrant,
        replaced: Option<&StoredGrant>,
    ) -> Result<(), AuthError> {
        // In use from now on, saved or not: a rotated refresh token lost
        // with a failed save would be spent again by the next refresh.
        *self.current.lock().unwrap_or_else(PoisonError::into_inner) =
            Some((server.to_owned(), Some(grant.clone())));
        binding::keep(self.config.store.as_ref(), server, &grant, replaced)
    }

    /// The last discovery for `server`, else a new one: for the refresh of
    /// an expiring token before a request. An old answer risks nothing
    /// there: a refresh token goes to its own issuer or nowhere, and if the
    /// server has moved, its refusal discovers anew.
    async fn last_discovered(
        &self,
        state: &mut FlowState,
        server: &Url,
    ) -> Result<Discovered, AuthError> {
        if let Some((url, discovered)) = &state.discovered
            && url == server
        {
            return Ok(discovered.clone());
        }
        self.discover(state, server, None).await
    }

    /// Discovers how to authorize for `server` now, from the challenge's
    /// metadata URL if it has one, else the well-known ones. A refusal
    /// always discovers anew: a server that refuses a token it accepted may
    /// have moved to another authorization server (SEP-2352), and the
    /// last discovery would send the user back to the old one.
    async fn discover(
        &self,
        state: &mut FlowState,
        server: &Url,
        challenge: Option<&Challenge>,
    ) -> Result<Discovered, AuthError> {
        let discovered = discovery::discover(&self.http, server, challenge).await?;
        state.discovered = Some((server.clone(), discovered.clone()));
        Ok(discovered)
    }

    /// Refreshes `grant`'s tokens.
    async fn refresh(
        &self,
        discovered: &Discovered,
        grant: &StoredGrant,
        refresh_token: &Secret,
    ) -> Result<StoredGrant, AuthError> {
        let client = stored_client(discovered, grant);
        let params = [
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token.expose()),
            ("resource", discovered.resource.as_str()),
        ];
        let mut tokens = token::request(
            &self.http,
            discovered,
            &client,
            &params,
            grant.tokens.scope.as_deref(),
        )
        .await?;
        if tokens.refresh_token.is_none() {
            tokens.refresh_token = Some(refresh_token.clone());
        }
        Ok(StoredGrant {
            tokens,
            ..grant.clone()
        })
    }

    /// The client identity, finding or registering one when needed.
    async fn client(
        &self,
        state: &mut FlowState,
        discovered: &Discovered,
        redirect_uri: Option<&str>,
    ) -> Result<ClientIdentity, AuthError> {
        if let Some(known) = &state.client
            && known.issuer == discovered.issuer_id
            && (known.registered_for.is_none() || known.registered_for.as_deref() == redirect_uri)
        {
            return Ok(known.identity.clone());
        }
        let (client, registered_for) = if let Some(client_id) = &self.config.client_id {
            (
                registration::preregistered(discovered, client_id, &self.config.client_auth),
                None,
            )
        } else if let Some(url) = &self.config.client_metadata_url
            && discovered.metadata.client_id_metadata_document_supported
        {
            (
                ClientIdentity {
                    client_id: url.clone(),
                    auth: TokenAuth::None,
                },
                None,
            )
        } else {
            let Some(redirect_uri) = redirect_uri else {
                return Err(AuthError::Registration {
                    detail: "the client-credentials grant needs a pre-registered client id"
                        .to_owned(),
                });
            };
            let registration = Registration {
                client_name: &self.config.client_name,
                redirect_uri,
            };
            let client = registration::register(&self.http, discovered, &registration).await?;
            (client, Some(redirect_uri.to_owned()))
        };
        state.client = Some(KnownClient {
            issuer: discovered.issuer_id.clone(),
            identity: client.clone(),
            registered_for,
        });
        Ok(client)
    }

    /// Runs the configured grant for `scope`.
    async fn obtain(
        &self,
        state: &mut FlowState,
        discovered: &Discovered,
        scope: Option<&str>,
    ) -> Result<(ClientIdentity, Tokens), AuthError> {
        match &self.config.grant {
            Grant::ClientCredentials => {
                let client = self.client(state, discovered, None).await?;
                let mut params = vec![
                    ("grant_type", "client_credentials"),
                    ("resource", discovered.resource.as_str()),
                ];
                if let Some(scope) = scope {
                    params.push(("scope", scope));
                }
                let tokens =
                    token::request(&self.http, discovered, &client, &params, scope).await?;
                Ok((client, tokens))
            }
            Grant::AuthorizationCode => self.authorization_code(state, discovered, scope).await,
            Grant::CrossAppAccess(access) => {
                let client = self.client(state, discovered, None).await?;
                let assertion =
                    cross_app::identity_assertion(&self.http, access, discovered, scope).await?;
                let mut params = vec![
                    ("grant_type", cross_app::JWT_BEARER_GRANT),
                    ("assertion", assertion.expose()),
                    ("resource", discovered.resource.as_str()),
                ];
                if let Some(scope) = scope {
                    params.push(("scope", scope));
                }
                let tokens =
                    token::request(&self.http, discovered, &client, &params, scope).await?;
                Ok((client, tokens))
            }
        }
    }

    async fn authorization_code(
        &self,
        state: &mut FlowState,
        discovered: &Discovered,
        scope: Option<&str>,
    ) -> Result<(ClientIdentity, Tokens), AuthError> {
        let supports_s256 = discovered
            .metadata
            .code_challenge_methods_supported
            .as_ref()
            .is_some_and(|methods| methods.iter().any(|method| method == "S256"));
        if !supports_s256 && !discovered.defaults {
            return Err(AuthError::PkceUnsupported {
                issuer: shown(&discovered.issuer),
            });
        }
        let Some(user_agent) = &self.config.user_agent else {
            return Err(AuthError::UserAgent {
                detail: "authorization needs a user, and no user agent is configured".to_owned(),
            });
        };
        let pending = user_agent.prepare().await?;
        let redirect_uri = pending.redirect_uri().to_owned();
        let client = self.client(state, discovered, Some(&redirect_uri)).await?;
        let pkce = Pkce::new()?;
        let expected_state = random_token()?;
        let mut url = discovered.authorization_endpoint.clone();
        {
            let mut query = url.query_pairs_mut();
            query
                .append_pair("response_type", "code")
                .append_pair("client_id", &client.client_id)
                .append_pair("redirect_uri", &redirect_uri)
                .append_pair("code_challenge", &pkce.challenge)
                .append_pair("code_challenge_method", "S256")
                .append_pair("state", &expected_state)
                .append_pair("resource", &discovered.resource);
            if let Some(scope) = scope {
                query.append_pair("scope", scope);
            }
        }
        let redirect = pending.wait(url, expected_state.clone()).await?;
        let code = code_of(&redirect, &expected_state, discovered)?;
        let params = [
            ("grant_type", "authorization_code"),
            ("code", code.expose()),
            ("redirect_uri", redirect_uri.as_str()),
            ("code_verifier", pkce.verifier.expose()),
            ("resource", discovered.resource.as_str()),
        ];
        let tokens = token::request(&self.http, discovered, &client, &params, scope).await?;
        Ok((client, tokens))
    }

    async fn run(&self, refusal: &Refusal) -> Result<(), AuthError> {
        let server = canonical(&refusal.url);
        let mut state = self.flow.lock().await;
        let active = self.reload(&server);
        let step_up = refusal.is_insufficient_scope();
        let wanted = refusal
            .challenge
            .as_ref()
            .and_then(|challenge| challenge.scope.as_deref());
        if let Some(grant) = &active {
            let now = Secret::new(bearer(&grant.tokens));
            let renewed = refusal.sent.as_ref() != Some(&now);
            let enough = !step_up || wanted.is_none_or(|scope| grant.tokens.grants(scope));
            if renewed && enough {
                return Ok(()); // authorized meanwhile, by a request refused alongside
            }
        }
        let discovered = self
            .discover(&mut state, &refusal.url, refusal.challenge.as_ref())
            .await?;
        // Only a grant of the issuer named now may serve: the one in use,
        // or the one set aside when the server last moved away from it.
        let Chosen {
            grant: current,
            replaced,
        } = binding::choose(
            self.config.store.as_ref(),
            &server,
            // Kept too: a refresh compares the entry with it once locked.
            active.clone(),
            &discovered.issuer_id,
            |grant| self.own(grant),
        );
        if let Some(replaced) = &replaced
            && current.is_none()
            && self.config.client_id.is_some()
        {
            return Err(moved_from_preregistered(replaced, &discovered));
        }
        if !step_up
            && let Some(grant) = &current
            && let Some(refresh_token) = &grant.tokens.refresh_token
            && issued_by(grant, &discovered)
        {
            // Held until the end of this block: released before an
            // authorization anew, which may wait minutes for a user. A
            // wait past its bound fails the authorization rather than
            // send the user to a browser while another process refreshes.
            let _entry = self.lock_entry(&server).await?;
            match self.meanwhile(&server, active.as_ref(), &discovered) {
                Meanwhile::Renewed => return Ok(()),
                Meanwhile::Replaced => {}
                Meanwhile::Unchanged => {
                    match self.refresh(&discovered, grant, refresh_token).await {
                        Ok(grant) => return self.keep(&server, grant, replaced.as_ref()),
                        Err(error) => {
                            tracing::debug!(%error, "mcp: refreshing the token failed; authorizing anew");
                        }
                    }
                }
            }
        }
        let scope = select_scope(
            self.config.scope.as_deref(),
            wanted,
            discovered.resource_scopes.as_deref(),
            step_up
                .then(|| {
                    current
                        .as_ref()
                        .and_then(|grant| grant.tokens.scope.as_deref())
                })
                .flatten(),
            matches!(self.config.grant, Grant::AuthorizationCode)
                && discovered
                    .metadata
                    .scopes_supported
                    .as_ref()
                    .is_some_and(|scopes| scopes.iter().any(|scope| scope == "offline_access")),
        );
        // A store that cannot keep what is obtained (refused, unreadable)
        // fails the authorization now, before the user is sent to a
        // browser for nothing.
        self.config.store.load(&server)?;
        let (client, tokens) = self
            .obtain(&mut state, &discovered, scope.as_deref())
            .await?;
        let client_secret = match &client.auth {
            TokenAuth::Basic(secret) | TokenAuth::Post(secret) => Some(secret.clone()),
            TokenAuth::None | TokenAuth::PrivateKeyJwt(_) => None,
        };
        self.keep(
            &server,
            StoredGrant {
                tokens,
                client_id: client.client_id,
                client_secret,
                issuer: Some(discovered.issuer_id.clone()),
            },
            replaced.as_ref(),
        )
    }

    /// Authorizes for the server at `url` now, before any request was
    /// refused (e.g. a command-line `login`): discovery without a
    /// challenge, then a refresh if there are tokens with a refresh token,
    /// else the configured grant.
    ///
    /// Cancel safe: tokens are kept only once obtained.
    pub async fn login(&self, url: &str) -> Result<(), AuthError> {
        let url = Url::parse(url).map_err(|error| AuthError::InvalidConfig {
            field: "url",
            problem: format!("not a URL ({error})"),
        })?;
        let sent = self.authorization(&url);
        self.run(&Refusal::new(url, 401, None, sent)).await
    }

    /// Forgets the tokens for the server at `url`, here and in the store.
    pub fn logout(&self, url: &str) -> Result<(), AuthError> {
        let url = Url::parse(url).map_err(|error| AuthError::InvalidConfig {
            field: "url",
            problem: format!("not a URL ({error})"),
        })?;
        let server = canonical(&url);
        let mut current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        *current = Some((server.clone(), None));
        binding::forget(self.config.store.as_ref(), &server)
    }

    async fn refresh_if_expiring(&self, url: &Url) -> Result<(), AuthError> {
        let server = canonical(url);
        let Some(grant) = self.grant(&server) else {
            return Ok(());
        };
        if !grant.tokens.expires_within(REFRESH_MARGIN) {
            return Ok(());
        }
        let Some(refresh_token) = grant.tokens.refresh_token.clone() else {
            return Ok(());
        };
        let mut state = self.flow.lock().await;
        let discovered = self.last_discovered(&mut state, url).await?;
        if !issued_by(&grant, &discovered) {
            return Ok(()); // another authorization server now: the refusal authorizes anew
        }
        let _entry = self.lock_entry(&server).await?;
        if !matches!(
            self.meanwhile(&server, Some(&grant), &discovered),
            Meanwhile::Unchanged
        ) {
            return Ok(()); // refreshed meanwhile, here or by another process
        }
        let grant = self.refresh(&discovered, &grant, &refresh_token).await?;
        // Kept before `_entry` is released: a process waiting for it reads
        // these tokens, not the ones whose refresh token was just spent.
        self.keep(&server, grant, None)
    }

    /// Holds the lock of `server`'s entry in the store, waiting at most
    /// [`ENTRY_LOCK_WAIT`] for another process's refresh to end.
    async fn lock_entry(&self, server: &str) -> Result<EntryLock, AuthError> {
        store::lock_entry(self.config.store.as_ref(), server, ENTRY_LOCK_WAIT).await
    }

    /// What became of `server`'s entry since it was `read`, read again
    /// under its lock (and kept in use): another provider on the same
    /// store (another process) may have refreshed it while this one waited
    /// for the lock, spending the refresh token that was read.
    fn meanwhile(
        &self,
        server: &str,
        read: Option<&StoredGrant>,
        discovered: &Discovered,
    ) -> Meanwhile {
        let now = self.reload(server);
        // Compared by their tokens: a store may keep the expiry to the
        // second only.
        let unchanged = match (&now, read) {
            (Some(now), Some(read)) => same_tokens(now, read),
            (None, None) => true,
            _ => false,
        };
        match now {
            _ if unchanged => Meanwhile::Unchanged,
            Some(now) if issued_by(&now, discovered) => Meanwhile::Renewed,
            _ => Meanwhile::Replaced,
        }
    }
}

impl AuthProvider for OAuthProvider {
    /// `Bearer <access token>` when there are tokens for `url`'s server
    /// (its canonical URL), and only then.
    fn authorization(&self, url: &Url) -> Option<Secret> {
        self.grant(&canonical(url))
            .map(|grant| Secret::new(bearer(&grant.tokens)))
    }

    /// Refreshes a token that expires within 30 s, when there is a refresh
    /// token, under the lock of its entry in the store (unless another
    /// process refreshed it meanwhile: then its tokens are used). A
    /// failure is logged, not returned: the server's refusal will start a
    /// full authorization.
    ///
    /// Cancel safe: interrupted while waiting for the lock, it holds
    /// nothing; a refresh interrupted before its answer changes nothing;
    /// one interrupted after it keeps the new tokens.
    fn prepare<'a>(&'a self, url: &'a Url) -> AuthFuture<'a, ()> {
        Box::pin(async move {
            if let Err(error) = self.refresh_if_expiring(url).await {
                tracing::debug!(%error, "mcp: refreshing the expiring token failed");
            }
            Ok(())
        })
    }

    /// Discovers anew (the challenge's `resource_metadata`, else the
    /// well-known URLs), then refreshes the tokens when the refusal is a
    /// `401` and there is a refresh token from the authorization server
    /// named now (under the lock of its entry in the store, using another
    /// process's tokens if it refreshed them meanwhile, and failing if the
    /// lock stays held past 30 s); otherwise (or if the refresh fails)
    /// authorizes anew with the configured grant there, asking for the
    /// challenge's scopes (plus those already granted, on a step-up).
    ///
    /// Cancel safe: an interrupted authorization keeps nothing half-done
    /// (tokens are kept only once obtained); the next refusal starts over.
    fn authorize<'a>(&'a self, refusal: &'a Refusal) -> AuthFuture<'a, ()> {
        Box::pin(self.run(refusal))
    }
}

/// What became of a server's entry in the store while a refresh waited for
/// its lock.
enum Meanwhile {
    /// Nothing: the grant read before is the one to refresh.
    Unchanged,
    /// Tokens of the same authorization server replaced it (another
    /// process refreshed them, or authorized anew): they are in use now,
    /// and its refresh token is the valid one.
    Renewed,
    /// It was removed, or replaced by another authorization server's
    /// grant: there is nothing to refresh.
    Replaced,
}

/// Whether two grants hold the same tokens (whatever precision their
/// expiry was kept to).
fn same_tokens(a: &StoredGrant, b: &StoredGrant) -> bool {
    a.tokens.access_token == b.tokens.access_token
        && a.tokens.refresh_token == b.tokens.refresh_token
}

/// Whether `grant` was issued by the authorization server discovery found
/// now: only then may its refresh token and client secret go there.
fn issued_by(grant: &StoredGrant, discovered: &Discovered) -> bool {
    let same = grant.issuer.as_deref() == Some(discovered.issuer_id.as_str());
    if !same {
        tracing::debug!(
            "mcp: the stored tokens were issued by another authorization server (or by an unknown one); not refreshing them there"
        );
    }
    same
}

/// The error for a server that moved to another authorization server than
/// the one its pre-registered client was used with: such a client is that
/// server's, and is not tried at the new one unasked (SEP-2352 says to
/// surface the mismatch rather than attempt it).
fn moved_from_preregistered(replaced: &StoredGrant, discovered: &Discovered) -> AuthError {
    AuthError::Registration {
        detail: format!(
            "the server's authorization server is now {:?}, no longer {:?}, where the configured client id {:?} was used; \
             configure a client registered with the new one (or log out to try this one there)",
            discovered.issuer_id,
            replaced.issuer.as_deref().unwrap_or_default(),
            replaced.client_id
        ),
    }
}

fn bearer(tokens: &Tokens) -> String {
    format!("Bearer {}", tokens.access_token.expose())
}

/// The identity a stored grant was issued to.
fn stored_client(discovered: &Discovered, grant: &StoredGrant) -> ClientIdentity {
    let auth = match &grant.client_secret {
        Some(secret) => ClientAuth::Secret(secret.clone()),
        None => ClientAuth::None,
    };
    registration::preregistered(discovered, &grant.client_id, &auth)
}

/// The scopes to ask for: the application's, else the challenge's, else
/// the resource's `scopes_supported`, else none; on a step-up, with the
/// scopes already granted; with `offline_access` when the authorization
/// server supports it (and some scope is asked for at all).
pub(crate) fn select_scope(
    configured: Option<&str>,
    challenged: Option<&str>,
    resource_scopes: Option<&[String]>,
    granted: Option<&str>,
    offline_access: bool,
) -> Option<String> {
    let mut scopes: Vec<String> = match (configured, challenged, resource_scopes) {
        (Some(scope), _, _) | (None, Some(scope), _) => {
            scope.split_ascii_whitespace().map(str::to_owned).collect()
        }
        (None, None, Some(scopes)) => scopes.to_vec(),
        (None, None, None) => Vec::new(),
    };
    for scope in granted.unwrap_or("").split_ascii_whitespace() {
        if !scopes.iter().any(|s| s == scope) {
            scopes.push(scope.to_owned());
        }
    }
    if scopes.is_empty() {
        return None;
    }
    if offline_access && !scopes.iter().any(|s| s == "offline_access") {
        scopes.push("offline_access".to_owned());
    }
    Some(scopes.join(" "))
}

/// The authorization code of a redirect, after checking its `state` and
/// its `iss`; the server's error if it sent one.
fn code_of(
    redirect: &Url,
    expected_state: &str,
    discovered: &Discovered,
) -> Result<Secret, AuthError> {
    check_state(redirect, expected_state)?;
    let value = |key: &str| {
        redirect
            .query_pairs()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value.into_owned())
    };
    check_iss(value("iss").as_deref(), discovered)?;
    if let Some(error) = value("error") {
        return Err(AuthError::Denied {
            error,
            description: value("error_description").unwrap_or_default(),
        });
    }
    value("code")
        .map(Secret::new)
        .ok_or_else(|| AuthError::UserAgent {
            detail: "the redirect carries neither a code nor an error".to_owned(),
        })
}

/// RFC 9207: an authorization response's `iss` must be the issuer's
/// identifier, compared as it is (no normalisation); a server that says it
/// sends `iss` must send it. What fails is a response from another
/// authorization server (a mix-up), refused before its code or error is
/// read.
fn check_iss(iss: Option<&str>, discovered: &Discovered) -> Result<(), AuthError> {
    let expected = discovered.issuer_id.as_str();
    match iss {
        Some(iss) if iss == expected => Ok(()),
        Some(iss) => Err(AuthError::UserAgent {
            detail: format!(
                "the redirect's iss {iss:?} is not the authorization server's issuer {expected:?}; refusing it (a mix-up, RFC 9207)"
            ),
        }),
        None if discovered
            .metadata
            .authorization_response_iss_parameter_supported =>
        {
            Err(AuthError::UserAgent {
                detail: format!(
                    "the redirect has no iss, though {expected:?} says it sends one; refusing it (RFC 9207)"
                ),
            })
        }
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_selection_follows_the_specification_order() {
        let supported = ["a".to_owned(), "b".to_owned()];
        assert_eq!(
            select_scope(None, Some("x y"), Some(&supported), None, false).as_deref(),
            Some("x y")
        );
        assert_eq!(
            select_scope(None, None, Some(&supported), None, false).as_deref(),
            Some("a b")
        );
        assert_eq!(select_scope(None, None, None, None, false), None);
        assert_eq!(
            select_scope(Some("mine"), Some("x"), None, None, false).as_deref(),
            Some("mine")
        );
        // Step-up keeps what was granted.
        assert_eq!(
            select_scope(None, Some("b c"), None, Some("a b"), false).as_deref(),
            Some("b c a")
        );
        // offline_access only when supported, and only with other scopes.
        assert_eq!(
            select_scope(None, None, Some(&supported), None, true).as_deref(),
            Some("a b offline_access")
        );
        assert_eq!(select_scope(None, None, None, None, true), None);
    }

    /// What discovery found for an issuer `https://as.example/tenant`.
    fn discovered(sends_iss: bool) -> Discovered {
        let url = |text: &str| Url::parse(text).expect("valid test input");
        Discovered {
            resource: "https://mcp.example/mcp".into(),
            resource_scopes: None,
            issuer: url("https://as.example/tenant"),
            issuer_id: "https://as.example/tenant".into(),
            authorization_endpoint: url("https://as.example/tenant/authorize"),
            token_endpoint: url("https://as.example/tenant/token"),
            registration_endpoint: None,
            metadata: crate::discovery::ServerMetadata {
                authorization_response_iss_parameter_supported: sends_iss,
                ..Default::default()
            },
            defaults: false,
        }
    }

    #[test]
    fn redirects_with_a_wrong_or_missing_state_are_refused() {
        let url = |text: &str| Url::parse(text).expect("valid test input");
        let found = discovered(false);
        assert!(code_of(&url("http://localhost/cb?code=c&state=s"), "s", &found).is_ok());
        for bad in [
            "http://localhost/cb?code=c&state=t",
            "http://localhost/cb?code=c",
        ] {
            let error = code_of(&url(bad), "s", &found).expect_err("must be refused");
            assert!(matches!(error, AuthError::UserAgent { .. }), "{error}");
            assert!(!error.to_string().contains("code=c"));
        }
        let denied = code_of(
            &url("http://localhost/cb?error=access_denied&state=s"),
            "s",
            &found,
        )
        .expect_err("must be refused");
        assert!(matches!(denied, AuthError::Denied { .. }), "{denied}");
    }

    #[test]
    fn a_redirect_from_another_issuer_is_refused_before_its_code_or_error_is_read() {
        let url = |text: &str| Url::parse(text).expect("valid test input");
        let with_iss = |iss: &str, rest: &str| {
            let mut redirect = url(&format!("http://localhost/cb?state=s&{rest}"));
            redirect.query_pairs_mut().append_pair("iss", iss);
            redirect
        };
        for sends_iss in [false, true] {
            let found = discovered(sends_iss);
            let right = with_iss("https://as.example/tenant", "code=c");
            assert!(code_of(&right, "s", &found).is_ok());
            // Compared as sent: a trailing slash, another case or another
            // server are all another issuer.
            for wrong in [
                "https://as.example/tenant/",
                "https://AS.example/tenant",
                "https://evil.example/tenant",
            ] {
                for rest in ["code=c", "error=access_denied"] {
                    let error = code_of(&with_iss(wrong, rest), "s", &found)
                        .expect_err("another issuer's redirect");
                    assert!(error.to_string().contains("mix-up"), "{error}");
                }
            }
        }
        let without = url("http://localhost/cb?code=c&state=s");
        assert!(code_of(&without, "s", &discovered(false)).is_ok());
        let error = code_of(&without, "s", &discovered(true))
            .expect_err("a server that sends iss must send it");
        assert!(error.to_string().contains("no iss"), "{error}");
    }
}
