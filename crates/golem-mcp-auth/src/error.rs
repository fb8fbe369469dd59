//! `AuthError`: why authorization failed, in words that never carry a
//! secret.

/// Why authorizing with a server's authorization server failed.
///
/// Messages name the step and the URL (without query or credentials) and
/// say what to do; they never contain a token, secret, code or verifier.
/// `golem-mcp`'s HTTP transport reports it as the cause of a
/// `golem_mcp::TransportError::Authorization` of the request that was
/// refused (`golem_mcp::Error::auth_error` finds it).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// The server refused the request and the provider cannot authorize
    /// (a static token was refused, no user agent, attempts exhausted).
    #[error("authorization: the server refused the credentials (HTTP {status}){}", hint(.detail))]
    Refused {
        /// The HTTP status of the refusal.
        status: u16,
        /// What the server or provider said.
        detail: String,
    },
    /// Metadata discovery failed: no protected-resource or
    /// authorization-server metadata could be read.
    #[error("authorization: discovery: {detail}")]
    Discovery {
        /// What was tried and what went wrong.
        detail: String,
    },
    /// The protected-resource metadata names a resource other than the
    /// server the client talks to; its authorization servers are not
    /// trusted for this server.
    #[error(
        "authorization: the server's protected-resource metadata is for {resource:?}, not for {server:?}; refusing to authorize"
    )]
    ResourceMismatch {
        /// The `resource` of the metadata.
        resource: String,
        /// The MCP server's URL.
        server: String,
    },
    /// The authorization server does not support PKCE with `S256`.
    #[error(
        "authorization: the authorization server {issuer} does not list S256 in code_challenge_methods_supported; MCP requires PKCE, refusing to authorize"
    )]
    PkceUnsupported {
        /// The authorization server.
        issuer: String,
    },
    /// An endpoint is plain `http` on a host other than a loopback one.
    #[error("authorization: the {what} {url} is not https; only loopback hosts may use http")]
    InsecureEndpoint {
        /// Which endpoint, e.g. `token endpoint`.
        what: &'static str,
        /// Its URL (without query).
        url: String,
    },
    /// The client has no identity the authorization server accepts.
    #[error("authorization: client registration: {detail}")]
    Registration {
        /// What was tried and what went wrong.
        detail: String,
    },
    /// The user-agent step failed: the authorization URL could not be
    /// shown, the redirect did not come, or it was not ours.
    #[error("authorization: user agent: {detail}")]
    UserAgent {
        /// What went wrong.
        detail: String,
    },
    /// The authorization server answered the authorization request with an
    /// error (the user declined, the client is unknown, ...).
    #[error("authorization: the authorization server refused: {error}{}", hint(.description))]
    Denied {
        /// The OAuth error code, e.g. `access_denied`.
        error: String,
        /// The server's description, if any.
        description: String,
    },
    /// The token endpoint refused the request.
    #[error("authorization: token endpoint {endpoint} answered HTTP {status}: {error}{}", hint(.description))]
    Token {
        /// The token endpoint (without query).
        endpoint: String,
        /// The HTTP status.
        status: u16,
        /// The OAuth error code, e.g. `invalid_grant`.
        error: String,
        /// The server's description, if any.
        description: String,
    },
    /// An OAuth request failed before an answer, timed out, or its answer
    /// was too large or not the JSON expected.
    #[error("authorization: {context} {url}: {detail}")]
    Http {
        /// What was being done, e.g. `fetch authorization server metadata`.
        context: &'static str,
        /// The URL (without query).
        url: String,
        /// What went wrong.
        detail: String,
    },
    /// The token store failed.
    #[error("authorization: token store: {detail}")]
    Store {
        /// What went wrong.
        detail: String,
    },
    /// The configuration cannot work (e.g. a private key that is not PEM).
    #[error("authorization: invalid {field}: {problem}")]
    InvalidConfig {
        /// The field at fault.
        field: &'static str,
        /// What is wrong and how to fix it.
        problem: String,
    },
}

fn hint(detail: &str) -> String {
    match detail.is_empty() {
        true => String::new(),
        false => format!(": {detail}"),
    }
}
