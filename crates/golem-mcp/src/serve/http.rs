//! The HTTP face: streamable HTTP at one path, in both eras, and the
//! HTTP+SSE endpoint of 2024-11-05 beside it (`/sse` and `/messages`).
//!
//! - An `initialize` POST without `Mcp-Session-Id` opens a session (its
//!   id in the answer's header); later POSTs name it; `GET` opens the
//!   session's stream for what belongs to no request; `DELETE` ends it.
//! - A 2026-07-28 request (`server/discover`, or any request naming a
//!   modern revision in `MCP-Protocol-Version`) needs no session: all of
//!   them share one, their ids made unique on the way in and given back on
//!   the way out, so two hosts may both use id 1.
//! - A request's POST is answered with JSON when its response is the first
//!   thing to send, else with an event stream of what belongs to it,
//!   ending with its response. What belongs to no request goes to the
//!   `GET` stream, or (none open) to a request's stream in flight, or
//!   waits (the latest 256) for the next `GET`.
//! - Every request passes the `Origin` check (none, or this server's own
//!   origin: anything else is 403, so that a web page cannot reach a local
//!   server) and, when a bearer token is configured, must carry it (401).

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::value::RawValue;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

use crate::serve::host::{self, HostMessage, Outbound, random_hex};
use crate::serve::service::{ServeError, Service};
use crate::session::protocol::MODERN_PROTOCOL_VERSIONS;
use crate::wire::jsonrpc::ProtocolError;

/// How the HTTP face serves.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HttpServeConfig {
    /// The streamable endpoint's path, `/mcp` by default.
    pub path: String,
    /// A token every request must carry as `Authorization: Bearer …`.
    pub bearer_token: Option<String>,
    /// How many sessions may be open at once (`initialize`d, or HTTP+SSE
    /// streams); a host asking for more is answered 503.
    pub max_sessions: usize,
    /// How long a session nobody uses, with nothing open, is kept (30
    /// minutes by default): a host that went without `DELETE` leaves no
    /// session, and no server, behind. A 2026-07-28 call waiting for its
    /// host's answer holds nothing open: keep this above the 10 minutes
    /// such a call waits.
    pub idle_timeout: std::time::Duration,
}

impl Default for HttpServeConfig {
    fn default() -> Self {
        HttpServeConfig {
            path: "/mcp".into(),
            bearer_token: None,
            max_sessions: 64,
            idle_timeout: IDLE,
        }
    }
}

impl HttpServeConfig {
    /// The configuration with endpoint `path`.
    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// The configuration ending sessions left idle for `idle`.
    pub fn with_idle_timeout(mut self, idle: std::time::Duration) -> Self {
        self.idle_timeout = idle;
        self
    }

    /// The configuration requiring `token` of every request.
    pub fn with_bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer_token = Some(token.into());
        self
    }
}

/// What the newest `GET`-less messages of a session are kept for.
const BACKLOG: usize = 256;

/// How long a message to a host waits for room on its stream before the
/// stream is given up.
const SEND_TIME: std::time::Duration = std::time::Duration::from_secs(10);

/// `Mcp-Session-Id`.
const SESSION_HEADER: &str = "mcp-session-id";

/// Serves `service` over HTTP on `listener` until the listener fails. A
/// listener on an address other than loopback is refused unless a bearer
/// token is configured: a bridge holds the server's credentials.
///
/// Cancel safe: dropping the future closes the listener; the sessions
/// already open go on, each on its own task, until their hosts go or
/// [`Service::stop`] ends them (tested by the `bridge` command's signal
/// test, which does exactly that).
pub async fn serve_http(
    listener: TcpListener,
    config: HttpServeConfig,
    service: Service,
) -> Result<(), ServeError> {
    let address = listener.local_addr().map_err(ServeError::Io)?;
    if !address.ip().is_loopback() && config.bearer_token.is_none() {
        return Err(ServeError::Config(format!(
            "{address} is reachable from other machines; serve on 127.0.0.1, or require a bearer token"
        )));
    }
    let path = match config.path.starts_with('/') {
        true => config.path.clone(),
        false => format!("/{}", config.path),
    };
    let face = Arc::new(Face {
        service,
        origins: own_origins(address),
        config,
        sessions: Mutex::default(),
        stateless: Mutex::default(),
        next_stateless_id: AtomicU64::new(1),
    });
    let router = Router::new()
        .route(
            &path,
            axum::routing::post(post)
                .get(get)
                .delete(delete)
                .fallback(not_allowed),
        )
        .route("/sse", axum::routing::get(legacy_stream))
        .route("/messages", axum::routing::post(legacy_post))
        .layer(middleware::from_fn_with_state(face.clone(), admit))
        .with_state(face.clone());
    let face_for_sweep = face;
    let idle = face_for_sweep.config.idle_timeout;
    tokio::spawn(sweep(Arc::downgrade(&face_for_sweep), idle));
    axum::serve(listener, router).await.map_err(ServeError::Io)
}

/// How long a session nobody uses is kept by default.
const IDLE: std::time::Duration = std::time::Duration::from_secs(30 * 60);

/// Ends the sessions abandoned for the configured idle time, looking every
/// minute (or every half of a shorter idle time), for as long as the face
/// serves.
async fn sweep(face: std::sync::Weak<Face>, idle: std::time::Duration) {
    let period = (idle / 2).clamp(
        std::time::Duration::from_millis(100),
        std::time::Duration::from_secs(60),
    );
    let mut every = tokio::time::interval(period);
    loop {
        every.tick().await;
        let Some(face) = face.upgrade() else {
            return;
        };
        // Dropped outside the locks: a session's end closes its client.
        let ended: Vec<Arc<Hosted>> = {
            let mut gone = Vec::new();
            for map in [&face.sessions, &face.stateless] {
                let mut sessions = map.lock().unwrap_or_else(PoisonError::into_inner);
                let idle: Vec<String> = sessions
                    .iter()
                    .filter(|(_, hosted)| hosted.abandoned(idle))
                    .map(|(id, _)| id.clone())
                    .collect();
                gone.extend(idle.iter().filter_map(|id| sessions.remove(id)));
            }
            gone
        };
        if !ended.is_empty() {
            tracing::debug!(
                sessions = ended.len(),
                "golem-mcp serve: ended sessions left idle"
            );
        }
    }
}

/// The origins a browser gives for pages of this server itself.
fn own_origins(address: SocketAddr) -> Vec<String> {
    let port = address.port();
    let mut origins = vec![
        format!("http://127.0.0.1:{port}"),
        format!("http://localhost:{port}"),
        format!("http://[::1]:{port}"),
    ];
    origins.push(format!("http://{address}"));
    origins
}

/// The face's state.
struct Face {
    service: Service,
    config: HttpServeConfig,
    origins: Vec<String>,
    sessions: Mutex<HashMap<String, Arc<Hosted>>>,
    /// The sessions 2026-07-28 requests share, one per host identity and
    /// capabilities (what the client to the server declares).
    stateless: Mutex<HashMap<String, Arc<Hosted>>>,
    next_stateless_id: AtomicU64,
}

impl Face {
    fn sessions(&self) -> MutexGuard<'_, HashMap<String, Arc<Hosted>>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The shared session of the 2026-07-28 hosts that introduce themselves
    /// as `message`'s does (name and capabilities), opened on first use.
    fn stateless_for(&self, message: &HostMessage) -> Result<Arc<Hosted>, Refused> {
        let key = envelope_key(message.params.as_deref());
        let mut stateless = self
            .stateless
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(hosted) = stateless.get(&key)
            && !hosted.inbox.is_closed()
        {
            return Ok(hosted.clone());
        }
        stateless.remove(&key);
        if stateless.len() >= self.config.max_sessions {
            return Err(Refused(
                StatusCode::SERVICE_UNAVAILABLE,
                "too many kinds of 2026-07-28 hosts are served by this bridge".into(),
            ));
        }
        let hosted = Hosted::start(&self.service, false)
            .map_err(|error| Refused(StatusCode::INTERNAL_SERVER_ERROR, error.to_string()))?;
        stateless.insert(key, hosted.clone());
        Ok(hosted)
    }

    /// A new session, registered under a fresh id; `None` when there are
    /// too many.
    fn open(&self, legacy_stream: bool) -> Result<(String, Arc<Hosted>), Refused> {
        if self.sessions().len() >= self.config.max_sessions {
            return Err(Refused(
                StatusCode::SERVICE_UNAVAILABLE,
                "too many sessions are open on this bridge".into(),
            ));
        }
        let hosted = Hosted::start(&self.service, legacy_stream)
            .map_err(|error| Refused(StatusCode::INTERNAL_SERVER_ERROR, error.to_string()))?;
        let id = random_hex();
        self.sessions().insert(id.clone(), hosted.clone());
        Ok((id, hosted))
    }
}

/// Why a session was not opened, as the host is told.
struct Refused(StatusCode, String);

impl Refused {
    fn response(&self) -> Response {
        plain(self.0, &self.1)
    }
}

/// One host session behind the face: where its messages go in, and where
/// each message out is routed.
struct Hosted {
    inbox: mpsc::Sender<HostMessage>,
    routes: Mutex<Routes>,
    /// When a host last sent it anything.
    used: Mutex<std::time::Instant>,
}

#[derive(Default)]
struct Routes {
    /// The streams of requests in flight, by the request's id text.
    requests: HashMap<Box<str>, mpsc::Sender<Outbound>>,
    /// The session's own stream (streamable `GET`, or HTTP+SSE's).
    stream: Option<mpsc::Sender<Bytes>>,
    /// Whether everything goes to `stream` (HTTP+SSE).
    legacy: bool,
    /// What waits for a stream.
    backlog: VecDeque<Bytes>,
}

impl Hosted {
    /// A session of `service`, its messages out routed as they come.
    fn start(service: &Service, legacy: bool) -> Result<Arc<Hosted>, ServeError> {
        let (session, ends) = host::session(service.recorder()?);
        tokio::spawn(service.serves.clone().serve(session));
        let hosted = Arc::new(Hosted {
            inbox: ends.inbox,
            routes: Mutex::new(Routes {
                legacy,
                ..Routes::default()
            }),
            used: Mutex::new(std::time::Instant::now()),
        });
        tokio::spawn(route(Arc::downgrade(&hosted), ends.outbox));
        Ok(hosted)
    }

    fn routes(&self) -> MutexGuard<'_, Routes> {
        self.routes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Notes that a host used the session now.
    fn touch(&self) {
        *self.used.lock().unwrap_or_else(PoisonError::into_inner) = std::time::Instant::now();
    }

    /// Whether nothing was sent to the session for `idle` and nothing of it
    /// is open (no request in flight, no stream).
    fn abandoned(&self, idle: std::time::Duration) -> bool {
        let quiet = self
            .used
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .elapsed()
            >= idle;
        if self.inbox.is_closed() {
            return true;
        }
        let routes = self.routes();
        quiet
            && routes.requests.values().all(mpsc::Sender::is_closed)
            && routes.stream.as_ref().is_none_or(mpsc::Sender::is_closed)
    }
}

/// Routes a session's messages out until the session ends.
async fn route(hosted: std::sync::Weak<Hosted>, mut outbox: mpsc::Receiver<Outbound>) {
    while let Some(message) = outbox.recv().await {
        let Some(hosted) = hosted.upgrade() else {
            return;
        };
        if message.ends {
            // A request answered is use too: the idle time starts now.
            hosted.touch();
        }
        // Decided under the lock, sent after it.
        enum To {
            Request(mpsc::Sender<Outbound>),
            Stream(mpsc::Sender<Bytes>),
        }
        let to = {
            let mut routes = hosted.routes();
            let legacy = routes.legacy;
            let request = match (&message.related, legacy) {
                (Some(id), false) if message.ends => routes.requests.remove(id),
                (Some(id), false) => routes.requests.get(id).cloned(),
                _ => None,
            };
            match request {
                Some(sender) => To::Request(sender),
                // A request's end (its response, or nothing for a
                // cancelled one) whose POST is gone has nowhere to go.
                None if message.body.is_empty() || (message.ends && !legacy) => continue,
                None => match &routes.stream {
                    Some(stream) => To::Stream(stream.clone()),
                    // What belongs to a request whose POST is gone never
                    // goes to another request's stream.
                    None if message.related.is_some() && !legacy => continue,
                    None => match routes.requests.values().find(|open| !open.is_closed()) {
                        Some(sender) => To::Request(sender.clone()),
                        None => {
                            keep(&mut routes, message.body);
                            continue;
                        }
                    },
                },
            }
        };
        match to {
            To::Request(sender) => {
                let ends = message.ends && message.related.is_some();
                let sent =
                    tokio::time::timeout(SEND_TIME, sender.send(Outbound { ends, ..message }));
                if !matches!(sent.await, Ok(Ok(()))) {
                    // A host that stops reading loses that stream, not the
                    // session's routing.
                    hosted
                        .routes()
                        .requests
                        .retain(|_, open| !open.same_channel(&sender));
                }
            }
            To::Stream(stream) => {
                let body = message.body;
                let sent = tokio::time::timeout(SEND_TIME, stream.send(body.clone()));
                if !matches!(sent.await, Ok(Ok(()))) {
                    let mut routes = hosted.routes();
                    // Unless a new stream replaced it meanwhile.
                    if routes
                        .stream
                        .as_ref()
                        .is_some_and(|current| current.same_channel(&stream))
                    {
                        routes.stream = None;
                    }
                    keep(&mut routes, body);
                }
            }
        }
    }
    // The session's service has ended (its server gone for good): what
    // waits for it ends too, and the session is dropped at its next use or
    // sweep.
    if let Some(hosted) = hosted.upgrade() {
        let mut routes = hosted.routes();
        routes.requests.clear();
        routes.stream = None;
    }
}

/// Keeps `body` for the session's next stream, the oldest dropped beyond
/// [`BACKLOG`].
fn keep(routes: &mut Routes, body: Bytes) {
    if routes.backlog.len() >= BACKLOG {
        routes.backlog.pop_front();
    }
    routes.backlog.push_back(body);
}

/// The `Origin` check and the bearer token, before any handler.
async fn admit(State(face): State<Arc<Face>>, request: Request, next: Next) -> Response {
    // A page of another site that renamed itself to this address (DNS
    // rebinding) names its own host; without a token, only ours is served.
    if face.config.bearer_token.is_none()
        && let Some(host) = request.headers().get(header::HOST)
    {
        // The host's name only: a forwarded port (ssh -L, kubectl
        // port-forward) names another port of the same machine.
        let ours = host.to_str().is_ok_and(|host| {
            let name = host_name(host);
            face.origins.iter().any(|origin| {
                origin
                    .strip_prefix("http://")
                    .is_some_and(|own| host_name(own).eq_ignore_ascii_case(name))
            })
        });
        if !ours {
            return plain(
                StatusCode::FORBIDDEN,
                "this bridge serves no other host than its own",
            );
        }
    }
    if let Some(origin) = request.headers().get(header::ORIGIN) {
        let own = origin
            .to_str()
            .is_ok_and(|origin| face.origins.iter().any(|own| own == origin));
        if !own {
            return plain(
                StatusCode::FORBIDDEN,
                "this bridge serves no other origin than its own",
            );
        }
    }
    if let Some(token) = &face.config.bearer_token {
        let given = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.strip_prefix("Bearer "));
        if !given.is_some_and(|given| constant_time_eq(given.as_bytes(), token.as_bytes())) {
            let mut response = plain(StatusCode::UNAUTHORIZED, "a bearer token is required");
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            return response;
        }
    }
    next.run(request).await
}

/// The name in a `Host` header or an authority: without its port, an IPv6
/// address with its brackets.
fn host_name(authority: &str) -> &str {
    match authority.rfind(':') {
        Some(colon) if !authority[colon..].contains(']') => &authority[..colon],
        _ => authority,
    }
}

/// Compares without telling by its timing how much matched.
fn constant_time_eq(given: &[u8], expected: &[u8]) -> bool {
    let mut difference = given.len() ^ expected.len();
    for (index, byte) in expected.iter().enumerate() {
        difference |= usize::from(given.get(index).copied().unwrap_or(0) ^ byte);
    }
    difference == 0
}

/// A streamable `POST`: one message.
async fn post(State(face): State<Arc<Face>>, headers: HeaderMap, body: Bytes) -> Response {
    let text = match std::str::from_utf8(&body) {
        Ok(text) => text.trim(),
        Err(_) => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                ProtocolError::PARSE_ERROR,
                "the body is not UTF-8",
            );
        }
    };
    if text.starts_with('[') {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            ProtocolError::INVALID_REQUEST,
            "batches are not accepted: send one message per POST",
        );
    }
    let mut message = match HostMessage::parse(text) {
        Ok(message) => message,
        Err(problem) => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                ProtocolError::PARSE_ERROR,
                &problem,
            );
        }
    };
    let named = headers
        .get(SESSION_HEADER)
        .and_then(|value| value.to_str().ok());
    let mut opened = None;
    let mut restore = None;
    let hosted = match named {
        Some(id) => match face.sessions().get(id).cloned() {
            Some(hosted) if !hosted.inbox.is_closed() => hosted,
            _ => {
                face.sessions().remove(id);
                return plain(StatusCode::NOT_FOUND, "no such session: initialize again");
            }
        },
        None if message.method.as_deref() == Some("initialize") => match face.open(false) {
            Ok((id, hosted)) => {
                opened = Some(id);
                hosted
            }
            Err(refused) => return refused.response(),
        },
        None if is_modern(&headers, &message) => {
            // Over HTTP a 2026-07-28 host cancels by closing its stream
            // (`Abandoned`); its notifications name ids of its own, which
            // mean nothing among hosts sharing a session.
            if !message.is_request() {
                return StatusCode::ACCEPTED.into_response();
            }
            let hosted = match face.stateless_for(&message) {
                Ok(hosted) => hosted,
                Err(refused) => return refused.response(),
            };
            // Hosts share the session: each request gets an id of its own.
            if message.is_request() {
                let unique = face.next_stateless_id.fetch_add(1, Ordering::Relaxed);
                restore = message.id.take();
                match with_id(&message.text, &unique.to_string()) {
                    Some(text) => {
                        message.text = text.into();
                        message.id = RawValue::from_string(unique.to_string()).ok();
                    }
                    None => {
                        return rpc_error(
                            StatusCode::BAD_REQUEST,
                            ProtocolError::INVALID_REQUEST,
                            "not a JSON object",
                        );
                    }
                }
            }
            hosted
        }
        None => {
            return plain(
                StatusCode::BAD_REQUEST,
                "Mcp-Session-Id is required: initialize first",
            );
        }
    };
    hosted.touch();
    let Some(id) = message
        .is_request()
        .then(|| message.id_key().map(Box::<str>::from))
        .flatten()
    else {
        // A notification or an answer: nothing comes back on this POST.
        return match hosted.inbox.send(message).await {
            Ok(()) => StatusCode::ACCEPTED.into_response(),
            Err(_) => plain(StatusCode::NOT_FOUND, "the session has ended"),
        };
    };
    let (sender, mut receiver) = mpsc::channel(32);
    hosted.routes().requests.insert(id.clone(), sender);
    if hosted.inbox.send(message).await.is_err() {
        hosted.routes().requests.remove(&id);
        return plain(StatusCode::NOT_FOUND, "the session has ended");
    }
    // A 2026-07-28 host that goes away gives up its request.
    let mut abandoned = Abandoned {
        inbox: restore.is_some().then(|| hosted.inbox.clone()),
        id: id.clone(),
    };
    let Some(first) = receiver.recv().await else {
        return plain(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the session ended before answering",
        );
    };
    let modern = restore.is_some();
    let give_back = move |body: Bytes| match &restore {
        Some(original) => with_id(&String::from_utf8_lossy(&body), original.get())
            .map(Bytes::from)
            .unwrap_or(body),
        None => body,
    };
    if first.ends && first.body.is_empty() {
        // Cancelled: no response comes; the stream the host waits on ends.
        abandoned.inbox = None;
        return event_stream(Body::empty());
    }
    let mut response = if first.ends {
        abandoned.inbox = None;
        let body = give_back(first.body);
        // A session whose `initialize` failed is not kept.
        if let Some(id) = &opened
            && is_error(&body)
        {
            face.sessions().remove(id);
            opened = None;
        }
        let status = match modern {
            true => modern_status(&body),
            false => StatusCode::OK,
        };
        let mut response = Response::new(Body::from(body));
        *response.status_mut() = status;
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        response
    } else {
        let events = futures_util::stream::unfold(
            (Some(first), receiver, give_back, abandoned),
            |(next, mut receiver, give_back, mut abandoned)| async move {
                let message = match next {
                    Some(message) => message,
                    None => receiver.recv().await?,
                };
                let ends = message.ends;
                if ends {
                    abandoned.inbox = None;
                }
                if ends && message.body.is_empty() {
                    // Cancelled: the stream ends without a response.
                    return None;
                }
                // Only the response carries the host's id.
                let body = match ends {
                    true => give_back(message.body),
                    false => message.body,
                };
                let event = sse_event(&body);
                // After the response, the stream ends.
                let receiver = match ends {
                    true => {
                        receiver.close();
                        receiver
                    }
                    false => receiver,
                };
                Some((
                    Ok::<_, Infallible>(event),
                    (None, receiver, give_back, abandoned),
                ))
            },
        );
        event_stream(Body::from_stream(events))
    };
    if let Some(id) = opened
        && let Ok(value) = HeaderValue::from_str(&id)
    {
        response.headers_mut().insert(SESSION_HEADER, value);
    }
    response
}

/// Sends `notifications/cancelled` for a 2026-07-28 request whose host
/// went away before its response (dropped with the POST's handler or
/// stream), as that era's HTTP means a closed stream.
struct Abandoned {
    /// The session's inbox, until the response is on its way.
    inbox: Option<mpsc::Sender<HostMessage>>,
    id: Box<str>,
}

impl Drop for Abandoned {
    fn drop(&mut self) {
        let Some(inbox) = self.inbox.take() else {
            return;
        };
        let cancelled = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{},"reason":"the client went away"}}}}"#,
            self.id
        );
        if let Ok(message) = HostMessage::parse(&cancelled) {
            let _ = inbox.try_send(message);
        }
    }
}

/// Whether a response is a JSON-RPC error.
fn is_error(body: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Response<'a> {
        #[serde(borrow)]
        error: Option<&'a RawValue>,
    }
    serde_json::from_slice::<Response<'_>>(body).is_ok_and(|response| response.error.is_some())
}

/// The HTTP status of a 2026-07-28 response: its JSON-RPC error's, as
/// that era's HTTP maps them (a malformed request 400, an unknown method
/// 404), else 200.
fn modern_status(body: &[u8]) -> StatusCode {
    #[derive(serde::Deserialize)]
    struct Response {
        error: Option<Code>,
    }
    #[derive(serde::Deserialize)]
    struct Code {
        code: i64,
    }
    match serde_json::from_slice::<Response>(body)
        .ok()
        .and_then(|response| response.error)
    {
        Some(Code { code: -32601 }) => StatusCode::NOT_FOUND,
        Some(Code {
            code: -32700 | -32600 | -32602 | -32020 | -32021 | -32022,
        }) => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

/// Whether a session-less message is a 2026-07-28 one.
fn is_modern(headers: &HeaderMap, message: &HostMessage) -> bool {
    let revision = headers
        .get("mcp-protocol-version")
        .and_then(|value| value.to_str().ok());
    message.method.as_deref() == Some("server/discover")
        || revision.is_some_and(|revision| MODERN_PROTOCOL_VERSIONS.contains(&revision))
        || message.params.as_deref().is_some_and(|params| {
            params
                .get()
                .contains("io.modelcontextprotocol/protocolVersion")
        })
}

/// What tells 2026-07-28 hosts apart: their `_meta`'s identity and
/// capabilities, as written.
fn envelope_key(params: Option<&RawValue>) -> String {
    #[derive(serde::Deserialize)]
    struct Params<'a> {
        #[serde(rename = "_meta", borrow)]
        meta: Option<HashMap<&'a str, &'a RawValue>>,
    }
    let meta = params
        .and_then(|params| serde_json::from_str::<Params<'_>>(params.get()).ok())
        .and_then(|params| params.meta)
        .unwrap_or_default();
    let member = |key: &str| meta.get(key).map_or("", |value| value.get());
    format!(
        "{}\n{}",
        member("io.modelcontextprotocol/clientInfo"),
        member("io.modelcontextprotocol/clientCapabilities")
    )
}

/// `text` (a JSON object) with its `id` replaced by `id` (JSON text).
fn with_id(text: &str, id: &str) -> Option<String> {
    // Raw members: the result's bytes are kept as they are.
    let mut members: HashMap<&str, &RawValue> = serde_json::from_str(text).ok()?;
    let id = RawValue::from_string(id.to_owned()).ok()?;
    members.insert("id", &id);
    serde_json::to_string(&members).ok()
}

/// A streamable `GET`: the session's own stream.
async fn get(State(face): State<Arc<Face>>, headers: HeaderMap) -> Response {
    let Some(id) = headers
        .get(SESSION_HEADER)
        .and_then(|value| value.to_str().ok())
    else {
        return plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "a stream belongs to a session: initialize first",
        );
    };
    let accepts = headers
        .get(header::ACCEPT)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|accept| accept.contains("text/event-stream") || accept.contains("*/*"));
    if !accepts {
        return plain(
            StatusCode::NOT_ACCEPTABLE,
            "the stream is text/event-stream",
        );
    }
    let Some(hosted) = face.sessions().get(id).cloned() else {
        return plain(StatusCode::NOT_FOUND, "no such session: initialize again");
    };
    hosted.touch();
    event_stream(Body::from_stream(open_stream(&hosted, None)))
}

/// The session's stream (replacing an older one), starting with `first`
/// and what waited for it.
fn open_stream(
    hosted: &Hosted,
    first: Option<Bytes>,
) -> impl futures_util::Stream<Item = Result<Bytes, Infallible>> + use<> {
    let (sender, receiver) = mpsc::channel::<Bytes>(64);
    let waiting: Vec<Bytes> = {
        let mut routes = hosted.routes();
        routes.stream = Some(sender);
        routes.backlog.drain(..).collect()
    };
    let start: VecDeque<Bytes> = first
        .into_iter()
        .chain(waiting.iter().map(|body| sse_event(body)))
        .collect();
    futures_util::stream::unfold((start, receiver), |(mut start, mut receiver)| async move {
        if let Some(event) = start.pop_front() {
            return Some((Ok(event), (start, receiver)));
        }
        let body = receiver.recv().await?;
        Some((Ok(sse_event(&body)), (start, receiver)))
    })
}

/// A streamable `DELETE`: the session ends.
async fn delete(State(face): State<Arc<Face>>, headers: HeaderMap) -> Response {
    let Some(id) = headers
        .get(SESSION_HEADER)
        .and_then(|value| value.to_str().ok())
    else {
        return plain(StatusCode::BAD_REQUEST, "Mcp-Session-Id is required");
    };
    match face.sessions().remove(id) {
        // Dropping the last sender of its inbox ends the session's service.
        Some(_) => StatusCode::OK.into_response(),
        None => plain(StatusCode::NOT_FOUND, "no such session"),
    }
}

async fn not_allowed(method: Method) -> Response {
    plain(
        StatusCode::METHOD_NOT_ALLOWED,
        &format!("{method} is not served here: POST, GET or DELETE"),
    )
}

/// HTTP+SSE (2024-11-05): `GET /sse` opens a session and its stream, whose
/// first event names where to `POST` its messages.
async fn legacy_stream(State(face): State<Arc<Face>>) -> Response {
    let (id, hosted) = match face.open(true) {
        Ok(opened) => opened,
        Err(refused) => return refused.response(),
    };
    let endpoint = Bytes::from(format!(
        "event: endpoint\ndata: /messages?sessionId={id}\n\n"
    ));
    let stream = open_stream(&hosted, Some(endpoint));
    // The session ends with its stream.
    let ending = Ending { face, id };
    let stream = futures_util::StreamExt::map(stream, move |event| {
        let _keep = &ending;
        event
    });
    event_stream(Body::from_stream(stream))
}

/// Ends an HTTP+SSE session when its stream is dropped.
struct Ending {
    face: Arc<Face>,
    id: String,
}

impl Drop for Ending {
    fn drop(&mut self) {
        self.face.sessions().remove(&self.id);
    }
}

/// HTTP+SSE's `POST /messages?sessionId=…`: accepted, answered on the
/// stream.
async fn legacy_post(State(face): State<Arc<Face>>, request: Request) -> Response {
    let id = request
        .uri()
        .query()
        .and_then(|query| {
            query
                .split('&')
                .find_map(|pair| pair.strip_prefix("sessionId="))
        })
        .map(str::to_owned);
    let Some(hosted) = id.and_then(|id| face.sessions().get(&id).cloned()) else {
        return plain(StatusCode::NOT_FOUND, "no such session: open /sse again");
    };
    let body = match axum::body::to_bytes(request.into_body(), 64 * 1024 * 1024).await {
        Ok(body) => body,
        Err(_) => return plain(StatusCode::PAYLOAD_TOO_LARGE, "the message is too large"),
    };
    let message = match std::str::from_utf8(&body)
        .map_err(|error| error.to_string())
        .and_then(|text| HostMessage::parse(text.trim()))
    {
        Ok(message) => message,
        Err(problem) => return plain(StatusCode::BAD_REQUEST, &problem),
    };
    hosted.touch();
    match hosted.inbox.send(message).await {
        Ok(()) => StatusCode::ACCEPTED.into_response(),
        Err(_) => plain(StatusCode::NOT_FOUND, "the session has ended"),
    }
}

/// One SSE `message` event carrying `body`.
fn sse_event(body: &[u8]) -> Bytes {
    let mut event = Vec::with_capacity(body.len() + 24);
    event.extend_from_slice(b"event: message\ndata: ");
    event.extend_from_slice(body);
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}

/// A `text/event-stream` response of `body`.
fn event_stream(body: Body) -> Response {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// A plain-text response.
fn plain(status: StatusCode, text: &str) -> Response {
    (status, text.to_owned()).into_response()
}

/// A JSON-RPC error, with `status`, for a message that could not be taken.
fn rpc_error(status: StatusCode, code: i64, message: &str) -> Response {
    let mut response = Response::new(Body::from(host::error("null", code, message, None)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_replaced_and_given_back() {
        let text = with_id(r#"{"jsonrpc":"2.0","id":1,"method":"m"}"#, "42").expect("object");
        assert!(text.contains(r#""id":42"#));
        let back = with_id(&text, r#""a""#).expect("object");
        assert!(back.contains(r#""id":"a""#));
    }

    #[test]
    fn a_host_is_named_without_its_port() {
        assert_eq!(host_name("localhost:9000"), "localhost");
        assert_eq!(host_name("localhost"), "localhost");
        assert_eq!(host_name("[::1]:80"), "[::1]");
        assert_eq!(host_name("[::1]"), "[::1]");
        assert_eq!(host_name("127.0.0.1:1"), "127.0.0.1");
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secre", b"secret"));
        assert!(!constant_time_eq(b"secret!", b"secret"));
        assert!(!constant_time_eq(b"", b"secret"));
    }

    #[test]
    fn modern_errors_have_their_statuses() {
        let error = |code: i64| {
            format!(r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":{code},"message":"m"}}}}"#)
        };
        assert_eq!(
            modern_status(error(-32601).as_bytes()),
            StatusCode::NOT_FOUND
        );
        assert_eq!(
            modern_status(error(-32022).as_bytes()),
            StatusCode::BAD_REQUEST
        );
        assert_eq!(modern_status(error(-32603).as_bytes()), StatusCode::OK);
        assert_eq!(
            modern_status(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            StatusCode::OK
        );
    }
}
