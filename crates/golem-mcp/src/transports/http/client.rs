//! The HTTP client both HTTP transports send with (ADR 0027): hyper's own
//! pooled HTTP/1.1 client for a plain `http://` endpoint reached directly,
//! which is what local servers are and where a call's CPU is mostly the
//! client's; reqwest for everything else (TLS, a proxy named by the
//! environment, a client given in [`HttpConfig::client`](super::HttpConfig::client)).
//!
//! Both sides look the same to the transports: [`HttpClient::request`]
//! builds a [`Request`], whose [`send`](Request::send) yields a
//! [`Response`] read chunk by chunk. The direct side follows redirects
//! within the endpoint's origin as the default reqwest client did (ADR
//! 0017); reqwest's own policy does that on the other side.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Uri;
use hyper::body::{Body as _, Incoming};
use hyper_util::client::legacy::Client as Pool;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::proxy::matcher::Matcher;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use reqwest::header::{
    ACCEPT, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_TYPE, HOST, HeaderMap, HeaderName,
    HeaderValue, LOCATION, TRANSFER_ENCODING,
};
use reqwest::{Method, StatusCode, Url};

use super::headers::redact;

/// How many redirects within the endpoint's origin are followed (reqwest's
/// own default).
pub(super) const MAX_REDIRECTS: usize = 10;
/// How long an idle pooled connection is kept (reqwest's default).
const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(90);
/// TCP keep-alive probes, as reqwest's default client sends them.
const TCP_KEEPALIVE: Duration = Duration::from_secs(15);
const TCP_KEEPALIVE_RETRIES: u32 = 3;

/// The client the transports send with; a clone shares its pool.
#[derive(Clone)]
pub(in crate::transports) enum HttpClient {
    /// hyper's pooled client, for the endpoint's plain-HTTP origin.
    Direct(Arc<Direct>),
    /// reqwest: TLS, a proxy, or the user's own client.
    Reqwest(reqwest::Client),
}

/// The direct client and the endpoint it was made for.
pub(in crate::transports) struct Direct {
    pool: Pool<BoundedConnect, Full<Bytes>>,
    /// The endpoint, parsed for hyper once: nearly every request goes there.
    /// Shared with the responses that came from it, which need the URL but
    /// not the pool (closing the transport drops the pool).
    endpoint: Arc<Url>,
    endpoint_uri: Uri,
    /// The endpoint's `Host` header, made once (hyper-util would format it
    /// for every request).
    endpoint_host: Option<HeaderValue>,
}

impl HttpClient {
    /// The default client for `endpoint`: direct when it is plain HTTP, names
    /// no user or password (reqwest sends those as `Authorization: Basic`),
    /// and no proxy variable applies to it (`HTTP_PROXY`, `ALL_PROXY`,
    /// minus `NO_PROXY`, in either case, as reqwest reads them); otherwise
    /// reqwest built by `reqwest_client`.
    pub(in crate::transports) fn for_endpoint(
        endpoint: &Url,
        connect_timeout: Duration,
        reqwest_client: impl FnOnce() -> Result<reqwest::Client, reqwest::Error>,
    ) -> Result<HttpClient, reqwest::Error> {
        let direct = Uri::try_from(endpoint.as_str())
            .ok()
            .filter(|_| endpoint.scheme() == "http")
            .filter(|_| endpoint.username().is_empty() && endpoint.password().is_none())
            .filter(|uri| Matcher::from_system().intercept(uri).is_none());
        match direct {
            Some(endpoint_uri) => Ok(HttpClient::Direct(Arc::new(Direct::new(
                endpoint.clone(),
                endpoint_uri,
                connect_timeout,
            )))),
            None => reqwest_client().map(HttpClient::Reqwest),
        }
    }

    /// Whether requests go over hyper's own client (`HttpTransport`'s
    /// `Debug` says).
    pub(in crate::transports) fn is_direct(&self) -> bool {
        matches!(self, HttpClient::Direct(_))
    }

    /// A request to `url` with `headers`; more may be added before it is
    /// sent.
    pub(in crate::transports) fn request(
        &self,
        method: Method,
        url: &Url,
        headers: HeaderMap,
    ) -> Request {
        let target = match self {
            HttpClient::Direct(direct) if *url == *direct.endpoint => Target::Endpoint,
            _ => Target::Other(Box::new(url.clone())),
        };
        Request {
            client: self.clone(),
            method,
            target,
            headers,
            body: Bytes::new(),
            invalid_header: false,
        }
    }
}

impl Direct {
    fn new(endpoint: Url, endpoint_uri: Uri, connect_timeout: Duration) -> Direct {
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        connector.set_connect_timeout(Some(connect_timeout));
        connector.set_keepalive(Some(TCP_KEEPALIVE));
        connector.set_keepalive_interval(Some(TCP_KEEPALIVE));
        connector.set_keepalive_retries(Some(TCP_KEEPALIVE_RETRIES));
        let connector = BoundedConnect {
            inner: connector,
            timeout: connect_timeout,
        };
        let pool = Pool::builder(TokioExecutor::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(POOL_IDLE_TIMEOUT)
            .build(connector);
        let endpoint_host = endpoint_uri
            .authority()
            .and_then(|authority| HeaderValue::from_str(&host_of(authority)).ok());
        Direct {
            pool,
            endpoint: Arc::new(endpoint),
            endpoint_uri,
            endpoint_host,
        }
    }
}

/// Where a request goes.
#[derive(Clone)]
enum Target {
    /// The direct client's endpoint (no URL copied, none parsed).
    Endpoint,
    /// Boxed: a URL is large, and responses carry their target.
    Other(Box<Url>),
}

/// A request being built: what [`HttpClient::request`] returns.
pub(in crate::transports) struct Request {
    client: HttpClient,
    method: Method,
    target: Target,
    headers: HeaderMap,
    body: Bytes,
    /// Whether a header could not be made: `send` fails (as reqwest's
    /// does).
    invalid_header: bool,
}

impl Request {
    /// Adds a header; one that is not valid fails the send.
    pub(in crate::transports) fn header<K, V>(mut self, name: K, value: V) -> Request
    where
        K: TryInto<HeaderName>,
        V: TryInto<HeaderValue>,
    {
        match (name.try_into(), value.try_into()) {
            (Ok(name), Ok(value)) => {
                self.headers.append(name, value);
            }
            _ => self.invalid_header = true,
        }
        self
    }

    /// Sets the body.
    pub(in crate::transports) fn body(mut self, body: Bytes) -> Request {
        self.body = body;
        self
    }

    /// Sends the request and waits for the answer's head; without one,
    /// the error says where the request went.
    ///
    /// Cancel safe: dropped, the request is abandoned; a connection it had
    /// half written is closed, not reused (hyper's and reqwest's rule), so
    /// the server sees the whole request or none.
    pub(in crate::transports) async fn send(self) -> Result<Response, Unanswered> {
        if self.invalid_header {
            let url = match (&self.client, &self.target) {
                (_, Target::Other(url)) => Some(&**url),
                (HttpClient::Direct(direct), Target::Endpoint) => Some(&*direct.endpoint),
                (HttpClient::Reqwest(_), Target::Endpoint) => None,
            };
            return Err(Unanswered::at(url, HttpError::InvalidHeader));
        }
        match &self.client {
            HttpClient::Direct(direct) => send_direct(direct.clone(), self).await,
            HttpClient::Reqwest(client) => {
                // Only the direct client has an endpoint target.
                let Target::Other(url) = self.target else {
                    return Err(Unanswered::at(None, HttpError::InvalidUrl));
                };
                let mut request = client.request(self.method, *url).headers(self.headers);
                if !self.body.is_empty() {
                    request = request.body(self.body);
                }
                // Boxed: reqwest's future is large, and the direct side is
                // the common one.
                Box::pin(request.send())
                    .await
                    .map(|response| Response {
                        inner: Inner::Reqwest(Box::new(response)),
                    })
                    .map_err(|error| {
                        // The URL is the one that failed (a redirect's,
                        // perhaps); the error keeps none.
                        let url = error.url().map(redact);
                        Unanswered {
                            error: HttpError::Reqwest(error.without_url()),
                            url,
                        }
                    })
            }
        }
    }
}

/// A request that got no answer: why, and the URL it went to (without
/// credentials, query or fragment), which the transport error names. Made
/// only on failure: a request copies no URL.
#[derive(Debug)]
pub(in crate::transports) struct Unanswered {
    /// Why there is no answer.
    pub(in crate::transports) error: HttpError,
    /// Where the request went (the redirect's target, when it failed
    /// there); `None` for a request that never had one to send to.
    pub(in crate::transports) url: Option<String>,
}

impl Unanswered {
    fn at(url: Option<&Url>, error: HttpError) -> Unanswered {
        Unanswered {
            error,
            url: url.map(redact),
        }
    }
}

impl fmt::Display for Unanswered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.url {
            Some(url) => write!(f, "{url}: {}", self.error),
            None => self.error.fmt(f),
        }
    }
}

/// Sends `request` on the direct client, following redirects within the
/// endpoint's origin (ADR 0017): `307` and `308` with the same method and
/// body, `301`, `302` and `303` as a `GET` without one. A redirect to
/// another origin is the answer.
async fn send_direct(direct: Arc<Direct>, mut request: Request) -> Result<Response, Unanswered> {
    // The origin redirects must stay in, once one comes.
    let mut origin = None;
    let mut redirects = 0;
    if !request.headers.contains_key(ACCEPT) {
        // What reqwest sends when nothing else is asked for.
        request
            .headers
            .insert(ACCEPT, HeaderValue::from_static("*/*"));
    }
    loop {
        let uri = match &request.target {
            Target::Endpoint => {
                if let Some(host) = &direct.endpoint_host {
                    // What hyper-util would set; a `Host` the configuration
                    // gives stays, as there.
                    request.headers.entry(HOST).or_insert_with(|| host.clone());
                }
                direct.endpoint_uri.clone()
            }
            Target::Other(url) => Uri::try_from(url.as_str())
                .map_err(|_| Unanswered::at(Some(url), HttpError::InvalidUrl))?,
        };
        // Copies (the body's shares its bytes): hyper takes the request, and
        // a redirect sends it again.
        let mut sent = hyper::Request::new(Full::new(request.body.clone()));
        *sent.method_mut() = request.method.clone();
        *sent.uri_mut() = uri;
        *sent.headers_mut() = request.headers.clone();
        let from = url_of(&direct, &request.target);
        let response = (direct.pool.request(sent).await)
            .map_err(|error| Unanswered::at(Some(from), HttpError::Send(error)))?;
        let next = redirect(&response, from)
            .filter(|next| next.origin() == *origin.get_or_insert_with(|| from.origin()));
        let Some(next) = next else {
            let url = match request.target {
                Target::Endpoint => direct.endpoint.clone(),
                Target::Other(url) => Arc::from(url),
            };
            return Ok(Response {
                inner: Inner::Direct { response, url },
            });
        };
        if redirects == MAX_REDIRECTS {
            return Err(Unanswered::at(Some(from), HttpError::TooManyRedirects));
        }
        redirects += 1;
        let status = response.status();
        let to_get = status == StatusCode::SEE_OTHER
            || (matches!(status, StatusCode::MOVED_PERMANENTLY | StatusCode::FOUND)
                && request.method == Method::POST);
        if to_get && request.method != Method::HEAD {
            request.method = Method::GET;
            request.body = Bytes::new();
            for name in [
                CONTENT_TYPE,
                CONTENT_LENGTH,
                CONTENT_ENCODING,
                TRANSFER_ENCODING,
            ] {
                request.headers.remove(name);
            }
        }
        request.target = match next == *direct.endpoint {
            true => Target::Endpoint,
            false => Target::Other(Box::new(next)),
        };
    }
}

fn url_of<'a>(direct: &'a Direct, target: &'a Target) -> &'a Url {
    match target {
        Target::Endpoint => direct.endpoint.as_ref(),
        Target::Other(url) => url,
    }
}

/// The `Host` header for `authority`, as hyper-util makes it: the host,
/// and the port unless it is HTTP's default.
fn host_of(authority: &hyper::http::uri::Authority) -> String {
    match authority.port_u16() {
        Some(port) if port != 80 => format!("{}:{port}", authority.host()),
        _ => authority.host().to_owned(),
    }
}

/// Where a redirect points, if `response` is one that can be followed.
fn redirect(response: &hyper::Response<Incoming>, from: &Url) -> Option<Url> {
    let followed = [
        StatusCode::MOVED_PERMANENTLY,
        StatusCode::FOUND,
        StatusCode::SEE_OTHER,
        StatusCode::TEMPORARY_REDIRECT,
        StatusCode::PERMANENT_REDIRECT,
    ];
    if !followed.contains(&response.status()) {
        return None;
    }
    // As reqwest reads it: UTF-8, not only ASCII.
    let location = std::str::from_utf8(response.headers().get(LOCATION)?.as_bytes()).ok()?;
    from.join(location).ok()
}

/// An answer whose head has arrived; its body is read with
/// [`chunk`](Response::chunk).
pub(in crate::transports) struct Response {
    inner: Inner,
}

enum Inner {
    Direct {
        response: hyper::Response<Incoming>,
        /// The URL that answered.
        url: Arc<Url>,
    },
    /// Boxed: it is large, and the direct side is the common one.
    Reqwest(Box<reqwest::Response>),
}

impl Response {
    /// The answer's status.
    pub(in crate::transports) fn status(&self) -> StatusCode {
        match &self.inner {
            Inner::Direct { response, .. } => response.status(),
            Inner::Reqwest(response) => response.status(),
        }
    }

    /// The answer's headers.
    pub(in crate::transports) fn headers(&self) -> &HeaderMap {
        match &self.inner {
            Inner::Direct { response, .. } => response.headers(),
            Inner::Reqwest(response) => response.headers(),
        }
    }

    /// The URL that answered (after the redirects followed).
    pub(in crate::transports) fn url(&self) -> &Url {
        match &self.inner {
            Inner::Direct { url, .. } => url,
            Inner::Reqwest(response) => response.url(),
        }
    }

    /// The body's length, when the answer says it (`Content-Length`).
    pub(in crate::transports) fn content_length(&self) -> Option<u64> {
        match &self.inner {
            Inner::Direct { response, .. } => response.body().size_hint().exact(),
            Inner::Reqwest(response) => response.content_length(),
        }
    }

    /// The next piece of the body; `None` at its end. Cancel safe: a piece
    /// is taken whole or not at all.
    pub(in crate::transports) async fn chunk(&mut self) -> Result<Option<Bytes>, HttpError> {
        match &mut self.inner {
            Inner::Direct { response, .. } => loop {
                match response.body_mut().frame().await {
                    None => return Ok(None),
                    Some(Err(error)) => return Err(HttpError::Body(error)),
                    // Trailers carry nothing of MCP's.
                    Some(Ok(frame)) => match frame.into_data() {
                        Ok(data) if !data.is_empty() => return Ok(Some(data)),
                        _ => {}
                    },
                }
            },
            Inner::Reqwest(response) => response
                .chunk()
                .await
                .map_err(|error| HttpError::Reqwest(error.without_url())),
        }
    }
}

/// Why a request got no answer, or its body broke. Never names the URL
/// (its query may hold a credential): [`Unanswered`] says where, without
/// one.
#[derive(Debug)]
pub(in crate::transports) enum HttpError {
    /// hyper could not send it or read the answer's head (refused, reset,
    /// timed out connecting).
    Send(hyper_util::client::legacy::Error),
    /// The answer's body broke.
    Body(hyper::Error),
    /// A header the request was given cannot be sent.
    InvalidHeader,
    /// A URL that `http::Uri` refuses (a redirect's, an HTTP+SSE endpoint's).
    InvalidUrl,
    /// More than [`MAX_REDIRECTS`] redirects.
    TooManyRedirects,
    /// reqwest's error, without its URL.
    Reqwest(reqwest::Error),
}

impl fmt::Display for HttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // hyper-util's own words ("client error (Connect)") say
            // nothing: the innermost cause says what happened, once.
            HttpError::Send(error) => f.write_str(&innermost(error)),
            HttpError::Body(_) => f.write_str("error reading the answer's body"),
            HttpError::InvalidHeader => f.write_str("a header value cannot be sent"),
            HttpError::InvalidUrl => {
                f.write_str("the URL cannot be sent as an HTTP request's target")
            }
            HttpError::TooManyRedirects => write!(f, "more than {MAX_REDIRECTS} redirects"),
            // As for `Send`: "error sending request" says nothing more.
            HttpError::Reqwest(error) if error.is_request() || error.is_connect() => {
                f.write_str(&innermost(error))
            }
            HttpError::Reqwest(error) => error.fmt(f),
        }
    }
}

/// The message of `error`'s innermost cause (its own when it has none).
fn innermost(error: &(dyn std::error::Error + 'static)) -> String {
    let mut root = error;
    while let Some(source) = root.source() {
        root = source;
    }
    root.to_string()
}

impl std::error::Error for HttpError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            HttpError::Send(error) => Some(error),
            HttpError::Body(error) => Some(error),
            HttpError::Reqwest(error) => error.source(),
            HttpError::InvalidHeader | HttpError::InvalidUrl | HttpError::TooManyRedirects => None,
        }
    }
}

/// hyper-util's connector with a bound on the whole connect, name lookup
/// included, as reqwest's has: its own timeout bounds only each address's
/// TCP connect.
#[derive(Clone)]
struct BoundedConnect<C = HttpConnector> {
    inner: C,
    timeout: Duration,
}

type ConnectError = Box<dyn std::error::Error + Send + Sync>;

impl<C> tower_service::Service<Uri> for BoundedConnect<C>
where
    C: tower_service::Service<Uri>,
    C::Error: Into<ConnectError>,
    C::Future: Send + 'static,
{
    type Response = C::Response;
    type Error = ConnectError;
    // Boxed: made once per connection, not per request.
    type Future = Pin<Box<dyn Future<Output = Result<C::Response, ConnectError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), ConnectError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let connecting = self.inner.call(uri);
        let timeout = self.timeout;
        Box::pin(async move {
            match tokio::time::timeout(timeout, connecting).await {
                Ok(connected) => connected.map_err(Into::into),
                Err(_) => Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!("no connection within {timeout:?}"),
                )
                .into()),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use tower_service::Service;

    use super::*;

    /// A connector whose name lookup never ends.
    #[derive(Clone)]
    struct NeverResolves;

    impl Service<Uri> for NeverResolves {
        type Response = ();
        type Error = std::io::Error;
        type Future = std::future::Pending<Result<(), std::io::Error>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), std::io::Error>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, _: Uri) -> Self::Future {
            std::future::pending()
        }
    }

    #[test]
    fn the_host_header_leaves_out_the_default_port() {
        for (uri, host) in [
            ("http://127.0.0.1:8080/mcp", "127.0.0.1:8080"),
            ("http://example.com/mcp", "example.com"),
            ("http://example.com:80/mcp", "example.com"),
            ("http://[::1]:3000/mcp", "[::1]:3000"),
        ] {
            let uri = Uri::from_static(uri);
            assert_eq!(
                host_of(uri.authority().expect("an authority")),
                host,
                "{uri}"
            );
        }
    }

    #[tokio::test(start_paused = true)]
    async fn the_connect_timeout_bounds_the_name_lookup_too() {
        let mut connector = BoundedConnect {
            inner: NeverResolves,
            timeout: Duration::from_secs(10),
        };
        let started = tokio::time::Instant::now();
        let error = connector
            .call(Uri::from_static("http://mcp.example:80/"))
            .await
            .expect_err("times out");
        assert_eq!(started.elapsed(), Duration::from_secs(10));
        let io = error.downcast::<std::io::Error>().expect("an I/O error");
        assert_eq!(io.kind(), std::io::ErrorKind::TimedOut);
    }
}
