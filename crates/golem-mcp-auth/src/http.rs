//! The OAuth requests: every one bounded in time and size, never
//! following redirects, and only to `https` or loopback URLs.

use std::net::IpAddr;
use std::time::Duration;

use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderValue};
use reqwest::{StatusCode, Url};

use crate::error::AuthError;
use crate::secret::Secret;

/// The largest OAuth response body read: metadata, registrations and
/// token responses are a few KiB.
pub(crate) const MAX_BODY_BYTES: usize = 1 << 20;

/// An HTTP client for the OAuth requests.
#[derive(Clone, Debug)]
pub(crate) struct OAuthHttp {
    client: reqwest::Client,
    timeout: Duration,
}

/// An answer: its status and its body (at most [`MAX_BODY_BYTES`]).
pub(crate) struct Answer {
    pub(crate) status: StatusCode,
    pub(crate) body: Vec<u8>,
}

impl OAuthHttp {
    /// A client that follows no redirects (a redirect could carry a client
    /// secret or a code to another origin) and gives every request
    /// `timeout` from start to the end of its body.
    pub(crate) fn new(timeout: Duration) -> Result<OAuthHttp, AuthError> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(timeout)
            .build()
            .map_err(|error| AuthError::InvalidConfig {
                field: "http client",
                problem: format!("cannot build the OAuth HTTP client: {error}"),
            })?;
        Ok(OAuthHttp { client, timeout })
    }

    /// `GET url` accepting JSON.
    pub(crate) async fn get(&self, context: &'static str, url: &Url) -> Result<Answer, AuthError> {
        let request = self
            .client
            .get(url.clone())
            .header(ACCEPT, "application/json");
        self.send(context, url, request).await
    }

    /// `POST url` with a form body, and HTTP Basic client authentication
    /// when `basic` is given.
    pub(crate) async fn post_form(
        &self,
        context: &'static str,
        url: &Url,
        form: &[(&str, &str)],
        basic: Option<&HeaderValue>,
    ) -> Result<Answer, AuthError> {
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form)
            .finish();
        let mut request = self
            .client
            .post(url.clone())
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(ACCEPT, "application/json")
            .body(body);
        if let Some(value) = basic {
            request = request.header(AUTHORIZATION, value.clone());
        }
        self.send(context, url, request).await
    }

    /// `POST url` with a JSON body.
    pub(crate) async fn post_json(
        &self,
        context: &'static str,
        url: &Url,
        body: &serde_json::Value,
    ) -> Result<Answer, AuthError> {
        let request = self
            .client
            .post(url.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json")
            .body(body.to_string());
        self.send(context, url, request).await
    }

    /// `GET url` and the `Location` of its redirect, without following it:
    /// what a browser would be sent to. For programmatic user agents.
    pub(crate) async fn location(&self, url: &Url) -> Result<String, AuthError> {
        let context = "open the authorization URL";
        let fail = |detail: String| http_error(context, url, detail);
        let response = tokio::time::timeout(self.timeout, self.client.get(url.clone()).send())
            .await
            .map_err(|_| fail(format!("no answer within {:?}", self.timeout)))?
            .map_err(|error| fail(error.without_url().to_string()))?;
        if !response.status().is_redirection() {
            return Err(fail(format!(
                "expected a redirect, got HTTP {}",
                response.status().as_u16()
            )));
        }
        response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned)
            .ok_or_else(|| fail("the redirect has no Location".to_owned()))
    }

    async fn send(
        &self,
        context: &'static str,
        url: &Url,
        request: reqwest::RequestBuilder,
    ) -> Result<Answer, AuthError> {
        let exchange = async {
            let mut response = request
                .send()
                .await
                .map_err(|error| http_error(context, url, error.without_url().to_string()))?;
            let status = response.status();
            if response
                .content_length()
                .is_some_and(|length| length > MAX_BODY_BYTES as u64)
            {
                return Err(too_large(context, url));
            }
            let mut body = Vec::new();
            while let Some(chunk) = response
                .chunk()
                .await
                .map_err(|error| http_error(context, url, error.without_url().to_string()))?
            {
                if body.len() + chunk.len() > MAX_BODY_BYTES {
                    return Err(too_large(context, url));
                }
                body.extend_from_slice(&chunk);
            }
            Ok(Answer { status, body })
        };
        tokio::time::timeout(self.timeout, exchange)
            .await
            .map_err(|_| http_error(context, url, format!("no answer within {:?}", self.timeout)))?
    }
}

fn too_large(context: &'static str, url: &Url) -> AuthError {
    http_error(
        context,
        url,
        format!("the answer is larger than {MAX_BODY_BYTES} bytes"),
    )
}

/// An OAuth error body (RFC 6749 §5.2; dynamic registration answers with
/// the same shape, RFC 7591 §3.2.2).
#[derive(serde::Deserialize, Default)]
pub(crate) struct ErrorBody {
    pub(crate) error: Option<String>,
    pub(crate) error_description: Option<String>,
}

pub(crate) fn http_error(context: &'static str, url: &Url, detail: String) -> AuthError {
    AuthError::Http {
        context,
        url: shown(url),
        detail,
    }
}

/// The URL as errors show it: without credentials, query or fragment.
pub(crate) fn shown(url: &Url) -> String {
    let mut shown = url.clone();
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.set_query(None);
    shown.set_fragment(None);
    shown.to_string()
}

/// Whether `url`'s host is a loopback one (`localhost`, `127.0.0.0/8`,
/// `::1`).
pub(crate) fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(domain)) => {
            domain.eq_ignore_ascii_case("localhost") || domain.ends_with(".localhost")
        }
        Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip).is_loopback(),
        Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip).is_loopback(),
        None => false,
    }
}

/// Parses an endpoint URL and refuses one that is not `https`: plain
/// `http` only on a loopback host, and only when `local` (the MCP server
/// itself is on loopback, or the application configured the URL). A
/// remote server's metadata cannot make the client send requests to the
/// user's own machine.
pub(crate) fn secure_url(what: &'static str, url: &str, local: bool) -> Result<Url, AuthError> {
    let parsed = Url::parse(url).map_err(|error| AuthError::Discovery {
        detail: format!("the {what} {url:?} is not a URL ({error})"),
    })?;
    match parsed.scheme() {
        "https" => Ok(parsed),
        "http" if local && is_loopback(&parsed) => Ok(parsed),
        _ => Err(AuthError::InsecureEndpoint {
            what,
            url: shown(&parsed),
        }),
    }
}

/// Reads a JSON answer body as `T`.
pub(crate) fn json<T: serde::de::DeserializeOwned>(
    context: &'static str,
    url: &Url,
    body: &[u8],
) -> Result<T, AuthError> {
    serde_json::from_slice(body).map_err(|error| {
        http_error(
            context,
            url,
            format!("the answer is not the JSON expected: {error}"),
        )
    })
}

/// The HTTP Basic credentials of a client (RFC 6749 §2.3.1: both parts
/// form-urlencoded first).
pub(crate) fn basic_credentials(client_id: &str, secret: &Secret) -> HeaderValue {
    use base64::Engine;
    let encode =
        |part: &str| url::form_urlencoded::byte_serialize(part.as_bytes()).collect::<String>();
    let pair = format!("{}:{}", encode(client_id), encode(secret.expose()));
    let encoded = base64::engine::general_purpose::STANDARD.encode(pair);
    let mut value = HeaderValue::from_str(&format!("Basic {encoded}"))
        .unwrap_or_else(|_| HeaderValue::from_static("Basic"));
    value.set_sensitive(true);
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_https_or_loopback_endpoints_are_accepted() {
        for ok in [
            "https://auth.example.com/token",
            "http://localhost:3000/token",
            "http://127.0.0.1/token",
            "http://127.8.9.1/token",
            "http://[::1]:8080/token",
        ] {
            assert!(secure_url("token endpoint", ok, true).is_ok(), "{ok}");
            // Named by a remote server's metadata: only https.
            let remote = secure_url("token endpoint", ok, false);
            assert_eq!(remote.is_ok(), ok.starts_with("https://"), "{ok}");
        }
        for refused in [
            "http://auth.example.com/token",
            "http://10.0.0.1/token",
            "http://localhost.example.com/token",
            "ftp://auth.example.com/token",
        ] {
            let error = secure_url("token endpoint", refused, true).expect_err("must be refused");
            assert!(
                matches!(error, AuthError::InsecureEndpoint { .. }),
                "{refused}: {error}"
            );
        }
    }

    #[test]
    fn basic_credentials_encode_both_parts_and_are_sensitive() {
        let value = basic_credentials("my client", &Secret::new("p@ss:word"));
        assert!(value.is_sensitive());
        use base64::Engine;
        let encoded = value
            .to_str()
            .expect("valid test input")
            .strip_prefix("Basic ")
            .expect("valid test input");
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .expect("valid test input");
        assert_eq!(decoded, b"my+client:p%40ss%3Aword");
    }

    #[test]
    fn shown_urls_lose_query_and_credentials() {
        let url = Url::parse("https://user:pw@auth.example.com/authorize?code=abc#x")
            .expect("valid test input");
        assert_eq!(shown(&url), "https://auth.example.com/authorize");
    }
}
