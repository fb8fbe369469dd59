//! Discovery: the server's protected-resource metadata (RFC 9728) and its
//! authorization server's metadata (RFC 8414, OpenID Connect Discovery), in
//! the order of the 2025-11-25 specification, with the 2025-03-26 fallback
//! to the server's root.

use reqwest::{StatusCode, Url};
use serde::Deserialize;

use crate::challenge::Challenge;
use crate::error::AuthError;
use crate::http::{OAuthHttp, is_loopback, json, secure_url, shown};

/// Protected-resource metadata (RFC 9728 §2), the fields used.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ResourceMetadata {
    pub(crate) resource: Option<String>,
    #[serde(default)]
    pub(crate) authorization_servers: Vec<String>,
    pub(crate) scopes_supported: Option<Vec<String>>,
}

/// Authorization server metadata (RFC 8414 §2), the fields used.
#[derive(Debug, Clone, Deserialize, Default)]
pub(crate) struct ServerMetadata {
    pub(crate) issuer: Option<String>,
    pub(crate) authorization_endpoint: Option<String>,
    pub(crate) token_endpoint: Option<String>,
    pub(crate) registration_endpoint: Option<String>,
    pub(crate) scopes_supported: Option<Vec<String>>,
    pub(crate) code_challenge_methods_supported: Option<Vec<String>>,
    pub(crate) token_endpoint_auth_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) client_id_metadata_document_supported: bool,
    /// Whether authorization responses carry `iss` (RFC 9207).
    #[serde(default)]
    pub(crate) authorization_response_iss_parameter_supported: bool,
}

/// What discovery found: everything the flow needs to authorize.
#[derive(Debug, Clone)]
pub(crate) struct Discovered {
    /// The `resource` parameter (RFC 8707): the protected resource's
    /// identifier, checked to cover the server's URL.
    pub(crate) resource: String,
    /// The protected resource's `scopes_supported`, if it said.
    pub(crate) resource_scopes: Option<Vec<String>>,
    /// The authorization server's identifier (its issuer, or the base URL
    /// it was found at).
    pub(crate) issuer: Url,
    /// The issuer identifier exactly as the metadata states it (checked to
    /// be the one its well-known URL was built from, RFC 8414 §3.3): what
    /// stored grants are bound to and an authorization response's `iss` is
    /// compared with, byte for byte.
    pub(crate) issuer_id: String,
    pub(crate) authorization_endpoint: Url,
    pub(crate) token_endpoint: Url,
    pub(crate) registration_endpoint: Option<Url>,
    pub(crate) metadata: ServerMetadata,
    /// Whether the endpoints are the 2025-03-26 defaults (no metadata
    /// document): there is then no `code_challenge_methods_supported` to
    /// check, and PKCE is used all the same.
    pub(crate) defaults: bool,
}

impl Discovered {
    /// The audience of client assertions: the authorization server's
    /// issuer identifier as its metadata states it.
    pub(crate) fn audience(&self) -> String {
        self.issuer_id.clone()
    }

    /// Whether the authorization server lists `method` for the token
    /// endpoint; `None` when it does not say.
    pub(crate) fn supports_auth_method(&self, method: &str) -> Option<bool> {
        self.metadata
            .token_endpoint_auth_methods_supported
            .as_ref()
            .map(|methods| methods.iter().any(|m| m == method))
    }
}

/// The server's canonical URI (RFC 8707 §2, MCP "Canonical Server URI"):
/// lowercase scheme and host, no fragment or query, no trailing slash on an
/// empty path.
pub(crate) fn canonical(server: &Url) -> String {
    let mut url = server.clone();
    url.set_fragment(None);
    url.set_query(None);
    let _ = url.set_username("");
    let _ = url.set_password(None);
    let text = url.to_string();
    match url.path() {
        "/" => text.trim_end_matches('/').to_owned(),
        _ => text,
    }
}

/// The protected-resource metadata URLs to try, in order: the challenge's
/// `resource_metadata`, else the path-aware well-known URI, then the root
/// one (RFC 9728 §3.1).
pub(crate) fn resource_metadata_urls(server: &Url, challenge: Option<&Challenge>) -> Vec<Url> {
    if let Some(url) = challenge
        .and_then(|challenge| challenge.resource_metadata.as_deref())
        .and_then(|url| Url::parse(url).ok())
    {
        return vec![url];
    }
    let mut urls = Vec::new();
    let path = server.path().trim_end_matches('/');
    if !path.is_empty() {
        urls.push(well_known(server, "oauth-protected-resource", path));
    }
    urls.push(well_known(server, "oauth-protected-resource", ""));
    urls
}

/// The authorization server metadata URLs to try, in the specification's
/// order: for an issuer with a path, RFC 8414 with the path inserted, OIDC
/// with the path inserted, OIDC with the path appended; without a path,
/// RFC 8414 then OIDC.
pub(crate) fn server_metadata_urls(issuer: &Url) -> Vec<Url> {
    let path = issuer.path().trim_end_matches('/');
    if path.is_empty() {
        return vec![
            well_known(issuer, "oauth-authorization-server", ""),
            well_known(issuer, "openid-configuration", ""),
        ];
    }
    let mut appended = origin(issuer);
    appended.set_path(&format!("{path}/.well-known/openid-configuration"));
    vec![
        well_known(issuer, "oauth-authorization-server", path),
        well_known(issuer, "openid-configuration", path),
        appended,
    ]
}

fn origin(url: &Url) -> Url {
    let mut origin = url.clone();
    origin.set_path("/");
    origin.set_query(None);
    origin.set_fragment(None);
    let _ = origin.set_username("");
    let _ = origin.set_password(None);
    origin
}

fn well_known(url: &Url, name: &str, path: &str) -> Url {
    let mut url = origin(url);
    url.set_path(&format!("/.well-known/{name}{path}"));
    url
}

/// Whether protected-resource metadata for `resource` may be used for the
/// server at `server`: same origin, and the resource's path is the
/// server's path or a parent of it (segment-wise).
pub(crate) fn resource_covers(resource: &str, server: &Url) -> bool {
    let Ok(resource) = Url::parse(resource) else {
        return false;
    };
    if resource.origin() != server.origin() {
        return false;
    }
    let resource_path = resource.path().trim_end_matches('/');
    let server_path = server.path().trim_end_matches('/');
    server_path == resource_path
        || server_path
            .strip_prefix(resource_path)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Discovers how to authorize for the server at `server`.
pub(crate) async fn discover(
    http: &OAuthHttp,
    server: &Url,
    challenge: Option<&Challenge>,
) -> Result<Discovered, AuthError> {
    // Plain http only where the MCP server itself is on loopback.
    let local = is_loopback(server);
    let Some(resource_metadata) = fetch_resource_metadata(http, server, challenge, local).await?
    else {
        return legacy(http, server).await;
    };
    let resource = match &resource_metadata.resource {
        Some(resource) if resource_covers(resource, server) => resource.clone(),
        Some(resource) => {
            return Err(AuthError::ResourceMismatch {
                resource: resource.clone(),
                server: canonical(server),
            });
        }
        None => {
            return Err(AuthError::Discovery {
                detail: "the protected-resource metadata has no \"resource\"".to_owned(),
            });
        }
    };
    // RFC 9728 §7.6: which one is the client's choice; the first is the
    // server's preferred one.
    let Some(issuer) = resource_metadata.authorization_servers.first() else {
        return Err(AuthError::Discovery {
            detail: "the protected-resource metadata names no authorization server".to_owned(),
        });
    };
    let issuer_id = issuer.clone();
    let issuer = secure_url("authorization server", issuer, local)?;
    let mut found = None;
    for url in server_metadata_urls(&issuer) {
        if let Some(metadata) =
            fetch_optional::<ServerMetadata>(http, "fetch authorization server metadata", &url)
                .await?
        {
            check_issuer(&metadata, &[issuer_id.as_str()], &url)?;
            found = Some(metadata);
            break;
        }
    }
    let Some(metadata) = found else {
        return Err(AuthError::Discovery {
            detail: format!(
                "no authorization server metadata for {} at any of its well-known URLs",
                shown(&issuer)
            ),
        });
    };
    // Checked to be the one the well-known URL was built from.
    let issuer_id = metadata.issuer.clone().unwrap_or(issuer_id);
    from_metadata(
        resource,
        resource_metadata.scopes_supported,
        issuer,
        issuer_id,
        metadata,
        local,
    )
}

/// The 2025-03-26 way, for servers without protected-resource metadata:
/// the authorization server is the server's origin, its metadata at the
/// root well-known URI, else the default endpoints `/authorize`, `/token`
/// and `/register` there.
async fn legacy(http: &OAuthHttp, server: &Url) -> Result<Discovered, AuthError> {
    let base = origin(server);
    let local = is_loopback(server);
    secure_url("authorization server", base.as_str(), local)?;
    let resource = canonical(server);
    let url = well_known(&base, "oauth-authorization-server", "");
    if let Some(metadata) =
        fetch_optional::<ServerMetadata>(http, "fetch authorization server metadata", &url).await?
    {
        // 2025-03-26 placed this document by the server's origin, not by an
        // issuer (servers of that revision state one with a path), so the
        // authorization server is the origin itself: what it claims to be
        // is not believed, or a server could name another issuer and be
        // handed that issuer's grants and assertions.
        let origin = base.as_str().trim_end_matches('/').to_owned();
        return from_metadata(resource, None, base, origin, metadata, local);
    }
    let endpoint = |path: &str| {
        let mut url = base.clone();
        url.set_path(path);
        url
    };
    tracing::debug!(
        server = %shown(server),
        "mcp: no authorization metadata; using the default endpoints at the server's root (2025-03-26)"
    );
    Ok(Discovered {
        resource,
        resource_scopes: None,
        authorization_endpoint: endpoint("/authorize"),
        token_endpoint: endpoint("/token"),
        registration_endpoint: Some(endpoint("/register")),
        issuer_id: base.as_str().trim_end_matches('/').to_owned(),
        issuer: base,
        metadata: ServerMetadata::default(),
        defaults: true,
    })
}

fn from_metadata(
    resource: String,
    resource_scopes: Option<Vec<String>>,
    issuer: Url,
    issuer_id: String,
    metadata: ServerMetadata,
    local: bool,
) -> Result<Discovered, AuthError> {
    let missing = |field: &str| AuthError::Discovery {
        detail: format!(
            "the authorization server metadata of {} has no {field}",
            shown(&issuer)
        ),
    };
    let token_endpoint = secure_url(
        "token endpoint",
        metadata
            .token_endpoint
            .as_deref()
            .ok_or_else(|| missing("token_endpoint"))?,
        local,
    )?;
    // Authorization-code clients need it; client-credentials ones do not.
    let authorization_endpoint = match metadata.authorization_endpoint.as_deref() {
        Some(url) => secure_url("authorization endpoint", url, local)?,
        None => token_endpoint.clone(),
    };
    let registration_endpoint = metadata
        .registration_endpoint
        .as_deref()
        .map(|url| secure_url("registration endpoint", url, local))
        .transpose()?;
    Ok(Discovered {
        resource,
        resource_scopes,
        issuer_id,
        issuer,
        authorization_endpoint,
        token_endpoint,
        registration_endpoint,
        metadata,
        defaults: false,
    })
}

/// Checks that `metadata`, fetched from `url`, names as its issuer the one
/// the URL was built from (one of `expected`): RFC 8414 §3.3. Metadata that
/// claims another issuer (an honest one, say) is refused, so that it can
/// neither receive that issuer's assertions nor have its tokens taken for
/// that issuer's.
fn check_issuer(metadata: &ServerMetadata, expected: &[&str], url: &Url) -> Result<(), AuthError> {
    match metadata.issuer.as_deref() {
        Some(issuer)
            if expected
                .iter()
                .any(|expected| same_issuer(issuer, expected)) =>
        {
            Ok(())
        }
        Some(issuer) => Err(AuthError::Discovery {
            detail: format!(
                "the authorization server metadata at {} names the issuer {issuer:?}, not {:?}, \
                 the one it was looked up for; refusing it (RFC 8414 §3.3)",
                shown(url),
                expected[0]
            ),
        }),
        None => Err(AuthError::Discovery {
            detail: format!(
                "the authorization server metadata at {} names no issuer (RFC 8414 requires it)",
                shown(url)
            ),
        }),
    }
}

/// Whether two issuer identifiers are the same: RFC 8414 §3.3 compares
/// them as strings, so nothing is normalised (case, `.` segments, a
/// trailing slash after a path, a doubled slash) but the one equivalence
/// RFC 3986 §6.2.3 gives a bare origin: its empty path is `/`
/// (`https://as.example` and `https://as.example/`), which URL libraries
/// add or drop on their own. Anything looser lets metadata name an issuer
/// that is not the one it was looked up for.
fn same_issuer(a: &str, b: &str) -> bool {
    let (shorter, longer) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    shorter == longer || (longer.strip_suffix('/') == Some(shorter) && has_empty_path(shorter))
}

/// Whether `uri` (`scheme://authority...`) has nothing after its
/// authority: no path, query or fragment.
fn has_empty_path(uri: &str) -> bool {
    uri.split_once("://")
        .is_some_and(|(_, rest)| !rest.is_empty() && !rest.contains(['/', '?', '#']))
}

async fn fetch_resource_metadata(
    http: &OAuthHttp,
    server: &Url,
    challenge: Option<&Challenge>,
    local: bool,
) -> Result<Option<ResourceMetadata>, AuthError> {
    for url in resource_metadata_urls(server, challenge) {
        let url = secure_url("protected-resource metadata URL", url.as_str(), local)?;
        if let Some(metadata) =
            fetch_optional(http, "fetch protected-resource metadata", &url).await?
        {
            return Ok(Some(metadata));
        }
    }
    Ok(None)
}

/// Fetches a metadata document; `None` when the server has none there
/// (any 4xx), an error for anything else that is not the JSON expected.
async fn fetch_optional<T: serde::de::DeserializeOwned>(
    http: &OAuthHttp,
    context: &'static str,
    url: &Url,
) -> Result<Option<T>, AuthError> {
    let answer = http.get(context, url).await?;
    if answer.status.is_client_error() {
        return Ok(None);
    }
    if answer.status != StatusCode::OK {
        return Err(super::http::http_error(
            context,
            url,
            format!("HTTP {}", answer.status.as_u16()),
        ));
    }
    json(context, url, &answer.body).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).expect("valid test input")
    }

    #[test]
    fn resource_metadata_urls_are_path_aware_then_root() {
        let urls = resource_metadata_urls(&url("https://example.com/public/mcp?x=1"), None);
        assert_eq!(
            urls.iter().map(Url::as_str).collect::<Vec<_>>(),
            [
                "https://example.com/.well-known/oauth-protected-resource/public/mcp",
                "https://example.com/.well-known/oauth-protected-resource",
            ]
        );
        let root = resource_metadata_urls(&url("https://example.com/"), None);
        assert_eq!(root.len(), 1);
        let challenge = Challenge {
            resource_metadata: Some("https://example.com/custom.json".into()),
            ..Challenge::default()
        };
        let given = resource_metadata_urls(&url("https://example.com/mcp"), Some(&challenge));
        assert_eq!(given, [url("https://example.com/custom.json")]);
    }

    #[test]
    fn server_metadata_urls_follow_the_specification_order() {
        assert_eq!(
            server_metadata_urls(&url("https://auth.example.com/tenant1"))
                .iter()
                .map(Url::as_str)
                .collect::<Vec<_>>(),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            server_metadata_urls(&url("https://auth.example.com"))
                .iter()
                .map(Url::as_str)
                .collect::<Vec<_>>(),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration",
            ]
        );
    }

    #[test]
    fn a_resource_covers_its_own_url_and_paths_below_it_on_the_same_origin() {
        let server = url("http://localhost:3000/mcp");
        assert!(resource_covers("http://localhost:3000/mcp", &server));
        assert!(resource_covers("http://localhost:3000", &server));
        assert!(resource_covers("http://localhost:3000/", &server));
        assert!(resource_covers("HTTP://LOCALHOST:3000/mcp", &server));
        assert!(!resource_covers("https://evil.example.com/mcp", &server));
        assert!(!resource_covers("http://localhost:3001/mcp", &server));
        assert!(!resource_covers("http://localhost:3000/mc", &server));
        assert!(!resource_covers("http://localhost:3000/mcp/other", &server));
        assert!(!resource_covers("not a url", &server));
    }

    /// Metadata naming `issuer`, checked against the issuer `expected`.
    fn issuer_check(issuer: &str, expected: &str) -> Result<(), AuthError> {
        let metadata = ServerMetadata {
            issuer: Some(issuer.into()),
            ..ServerMetadata::default()
        };
        check_issuer(
            &metadata,
            &[expected],
            &url("http://as/.well-known/oauth-authorization-server"),
        )
    }

    #[track_caller]
    fn assert_same_issuer(issuer: &str, expected: &str) {
        let checked = issuer_check(issuer, expected);
        assert!(checked.is_ok(), "{issuer:?} for {expected:?}: {checked:?}");
    }

    #[track_caller]
    fn assert_other_issuer(issuer: &str, expected: &str) {
        let error = issuer_check(issuer, expected).expect_err("another issuer");
        assert!(error.to_string().contains("RFC 8414"), "{error}");
    }

    #[test]
    fn an_issuer_is_the_same_string() {
        assert_same_issuer("http://as", "http://as");
        assert_same_issuer("https://as/tenant", "https://as/tenant");
        assert_same_issuer("https://as/tenant/", "https://as/tenant/");
    }

    #[test]
    fn a_bare_origin_is_the_same_with_or_without_its_slash() {
        assert_same_issuer("http://as/", "http://as");
        assert_same_issuer("http://as", "http://as/");
        assert_same_issuer("http://127.0.0.1:8080/", "http://127.0.0.1:8080");
    }

    #[test]
    fn a_bare_origin_with_more_than_one_slash_is_another_issuer() {
        assert_other_issuer("http://as//", "http://as");
        assert_other_issuer("http://as", "http://as//");
        assert_other_issuer("http://as//", "http://as/");
        assert_other_issuer("http://as///", "http://as");
    }

    #[test]
    fn a_path_with_or_without_a_trailing_slash_is_another_issuer() {
        assert_other_issuer("https://as/tenant/", "https://as/tenant");
        assert_other_issuer("https://as/tenant", "https://as/tenant/");
    }

    #[test]
    fn an_issuer_is_not_normalised_otherwise() {
        assert_other_issuer("HTTP://AS", "http://as");
        assert_other_issuer("https://as:443", "https://as");
        assert_other_issuer("https://as/a/../tenant", "https://as/tenant");
        assert_other_issuer("https://as/?", "https://as");
        assert_other_issuer("https://evil", "https://as");
    }

    #[test]
    fn metadata_without_an_issuer_is_refused() {
        let metadata = ServerMetadata::default();
        let error = check_issuer(&metadata, &["http://as"], &url("http://as/x"))
            .expect_err("an issuer is required");
        assert!(error.to_string().contains("names no issuer"), "{error}");
    }

    #[test]
    fn canonical_uris_have_no_fragment_query_or_bare_trailing_slash() {
        assert_eq!(
            canonical(&url("HTTPS://MCP.Example.com/")),
            "https://mcp.example.com"
        );
        assert_eq!(
            canonical(&url("https://mcp.example.com:8443/mcp?x=1#f")),
            "https://mcp.example.com:8443/mcp"
        );
    }

    #[test]
    fn a_remote_servers_metadata_cannot_point_at_plain_http_on_this_machine() {
        let metadata = ServerMetadata {
            issuer: Some("https://as.example".into()),
            token_endpoint: Some("http://127.0.0.1:6379/token".into()),
            ..ServerMetadata::default()
        };
        let issuer = url("https://as.example");
        let remote = from_metadata(
            "https://mcp.example/mcp".into(),
            None,
            issuer.clone(),
            "https://as.example".into(),
            metadata.clone(),
            false,
        );
        assert!(
            matches!(remote, Err(AuthError::InsecureEndpoint { .. })),
            "{remote:?}"
        );
        let local = from_metadata(
            "http://127.0.0.1/mcp".into(),
            None,
            issuer,
            "https://as.example".into(),
            metadata,
            true,
        );
        assert!(local.is_ok(), "{local:?}");
    }
}
