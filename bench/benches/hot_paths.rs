//! Micro-benchmarks of golem-mcp's hot paths, through its public API only:
//!
//! - `round_trip`: one `Client` call over a transport that answers at once
//!   from a prepared buffer, so the figure is the client's own work. `ping`
//!   is the fixed cost (lock, id, boxed transport futures, envelope parse);
//!   `encode_call` sends 64 B or 1 MiB of arguments and gets an empty result
//!   (encoding the `tools/call` request); `decode_result` sends tiny
//!   arguments and gets 64 B or 1 MiB of text back (decoding the result).
//! - `text`: `CallResult::text()`, the rendering a model reads.
//! - `http`: one call over `HttpTransport` to an in-process server whose
//!   answer is the same result as a JSON body or as an event stream; the
//!   difference between the two is the SSE parser's cost. `sse_notifications`
//!   puts 100 progress notifications before the answer.
//!
//! `cargo bench -p golem-bench` runs them; `cargo test` runs each once.
//! Allocation counts come from divan's `AllocProfiler`.

use std::convert::Infallible;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use divan::counter::BytesCount;
use divan::{Bencher, black_box};
use golem_mcp::{
    CallResult, Client, Content, HttpConfig, HttpTransport, Inbound, Outgoing, Transport,
    TransportError,
};
use serde_json::value::RawValue;
use tokio::sync::{Mutex, mpsc};

#[global_allocator]
static ALLOC: divan::AllocProfiler = divan::AllocProfiler::system();

fn main() {
    divan::main();
}

const SIZES: [usize; 2] = [64, 1 << 20];

fn runtime() -> tokio::runtime::Runtime {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("cannot start a Tokio runtime: {error}"),
    }
}

fn raw(json: String) -> Box<RawValue> {
    match RawValue::from_string(json) {
        Ok(raw) => raw,
        Err(error) => panic!("the benchmark's own JSON is invalid: {error}"),
    }
}

fn text_result(bytes: usize) -> String {
    format!(
        r#"{{"content":[{{"type":"text","text":"{}"}}],"isError":false}}"#,
        "x".repeat(bytes)
    )
}

const INITIALIZE_RESULT: &str = r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"canned","version":"1"}}"#;

/// A transport that answers every request at once with a prepared result.
/// The reply's id is written into a fixed, space-padded slot of the
/// prepared bytes, so answering costs the same whatever the result's size.
struct Canned {
    /// The reply with a blank id slot, copied and filled in per request.
    reply: Vec<u8>,
    /// Where the id's 20 characters start in `reply`.
    id_slot: usize,
    to_client: mpsc::UnboundedSender<Bytes>,
    from_server: Mutex<mpsc::UnboundedReceiver<Bytes>>,
}

const ID_WIDTH: usize = 20;

impl Canned {
    fn new(result: &str) -> Canned {
        let head = br#"{"jsonrpc":"2.0","id":"#;
        let mut reply = Vec::with_capacity(result.len() + 64);
        reply.extend_from_slice(head);
        let id_slot = reply.len();
        reply.extend_from_slice(&[b' '; ID_WIDTH]);
        reply.extend_from_slice(br#","result":"#);
        reply.extend_from_slice(result.as_bytes());
        reply.push(b'}');
        let (to_client, from_server) = mpsc::unbounded_channel();
        Canned {
            reply,
            id_slot,
            to_client,
            from_server: Mutex::new(from_server),
        }
    }

    /// A client over this transport, initialized.
    fn client(result: &str, runtime: &tokio::runtime::Runtime) -> Client {
        let client = Client::new(Canned::new(result));
        if let Err(error) = runtime.block_on(client.initialize()) {
            panic!("initialize over the canned transport: {error}");
        }
        client
    }
}

impl Transport for Canned {
    async fn send(&self, message: Outgoing) -> Result<(), TransportError> {
        // Notifications and responses get no answer.
        let Some(id) = message.request_id() else {
            return Ok(());
        };
        // `initialize` is answered under its own id: the era probe
        // (`server/discover`, answered with the canned result, which is no
        // discovery result) goes first and takes id 1.
        let answer = if message.method() == Some("initialize") {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{INITIALIZE_RESULT}}}"#).into_bytes()
        } else {
            let mut reply = self.reply.clone();
            let digits = id.to_string();
            let slot = &mut reply[self.id_slot..self.id_slot + ID_WIDTH];
            slot[ID_WIDTH - digits.len()..].copy_from_slice(digits.as_bytes());
            reply
        };
        self.to_client
            .send(Bytes::from(answer))
            .map_err(|_| TransportError::ConnectionClosed)
    }

    async fn recv(&self) -> Result<Inbound, TransportError> {
        match self.from_server.lock().await.recv().await {
            Some(message) => Ok(Inbound::Message(message)),
            None => Err(TransportError::ConnectionClosed),
        }
    }

    async fn close(&self) -> Result<(), TransportError> {
        Ok(())
    }
}

mod round_trip {
    use super::*;

    /// The fixed cost of one request and its answer.
    #[divan::bench]
    fn ping(bencher: Bencher) {
        let runtime = runtime();
        let client = Canned::client("{}", &runtime);
        bencher.bench_local(|| runtime.block_on(client.ping()).is_ok());
    }

    /// Encoding a `tools/call` with `bytes` of arguments (empty result).
    #[divan::bench(args = SIZES)]
    fn encode_call(bencher: Bencher, bytes: usize) {
        let runtime = runtime();
        let client = Canned::client(r#"{"content":[]}"#, &runtime);
        let arguments = raw(golem_bench::arguments_json(bytes));
        bencher.counter(BytesCount::new(bytes)).bench_local(|| {
            runtime
                .block_on(client.call_tool("echo", &arguments))
                .is_ok()
        });
    }

    /// Decoding a result of `bytes` of text (tiny arguments).
    #[divan::bench(args = SIZES)]
    fn decode_result(bencher: Bencher, bytes: usize) {
        let runtime = runtime();
        let client = Canned::client(&text_result(bytes), &runtime);
        let arguments = raw(golem_bench::arguments_json(1));
        bencher.counter(BytesCount::new(bytes)).bench_local(|| {
            match runtime.block_on(client.call_tool("echo", &arguments)) {
                Ok(result) => result.content.len(),
                Err(error) => panic!("call: {error}"),
            }
        });
    }
}

mod text {
    use super::*;

    fn result(content: Vec<Content>) -> CallResult {
        CallResult::new(content)
    }

    /// One text item of `bytes`.
    #[divan::bench(args = SIZES)]
    fn single(bencher: Bencher, bytes: usize) {
        let result = result(vec![Content::Text {
            text: "x".repeat(bytes),
        }]);
        bencher
            .counter(BytesCount::new(bytes))
            .bench_local(|| black_box(&result).text());
    }

    /// Eight text items and an image placeholder: the joining path.
    #[divan::bench]
    fn mixed(bencher: Bencher) {
        let mut content: Vec<Content> = (0..8)
            .map(|index| Content::Text {
                text: format!("line {index} of a multi-item result"),
            })
            .collect();
        content.push(Content::Image {
            data: "aGVsbG8=".into(),
            mime_type: "image/png".into(),
        });
        let result = result(content);
        bencher.bench_local(|| black_box(&result).text());
    }
}

mod http {
    use super::*;

    /// How the in-process server answers `tools/call`.
    #[derive(Clone, Copy)]
    enum Shape {
        Json,
        Sse { notifications: usize },
    }

    /// The parts of an answer: everything before the id, the id is
    /// formatted per request, and the (possibly large) rest is shared.
    struct Answer {
        shape: Shape,
        /// `,"result":{...}}` and, for an event stream, the closing blank line.
        tail: Bytes,
        /// The notifications and the `data: ` of the answer's event.
        lead: Bytes,
    }

    impl Answer {
        fn new(shape: Shape, bytes: usize) -> Answer {
            let result = text_result(bytes);
            let (lead, tail) = match shape {
                Shape::Json => (String::new(), format!(r#","result":{result}}}"#)),
                Shape::Sse { notifications } => {
                    // A priming event (id only, as resumable servers send),
                    // then the notifications, then the answer.
                    let mut lead = String::from("id: 0\nretry: 3000\ndata:\n\n");
                    for index in 0..notifications {
                        lead.push_str(&format!(
                            "id: {}\ndata: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{{\"progressToken\":\"t\",\"progress\":{index}}}}}\n\n",
                            index + 1
                        ));
                    }
                    lead.push_str("data: ");
                    (lead, format!(",\"result\":{result}}}\n\n"))
                }
            };
            Answer {
                shape,
                tail: Bytes::from(tail),
                lead: Bytes::from(lead),
            }
        }

        fn response(&self, id: &str) -> Response {
            let head = Bytes::from(format!(r#"{{"jsonrpc":"2.0","id":{id}"#));
            let parts = [self.lead.clone(), head, self.tail.clone()];
            let body = Body::from_stream(futures_util::stream::iter(
                parts.map(Ok::<Bytes, Infallible>),
            ));
            let content_type = match self.shape {
                Shape::Json => "application/json",
                Shape::Sse { .. } => "text/event-stream",
            };
            let mut response = Response::new(body);
            response
                .headers_mut()
                .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
            response
        }
    }

    /// The id of a request the client sent, as written.
    fn request_id(body: &[u8]) -> Option<&str> {
        let rest = body.strip_prefix(br#"{"jsonrpc":"2.0","id":"#)?;
        let digits = rest.iter().take_while(|byte| byte.is_ascii_digit()).count();
        std::str::from_utf8(&rest[..digits]).ok()
    }

    async fn handle(answer: Arc<Answer>, body: Bytes) -> Response {
        let Some(id) = request_id(&body) else {
            // A notification.
            let mut response = Response::new(Body::empty());
            *response.status_mut() = StatusCode::ACCEPTED;
            return response;
        };
        if memchr::memmem::find(&body, br#""method":"initialize""#).is_some() {
            let mut response = Response::new(Body::from(format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{INITIALIZE_RESULT}}}"#
            )));
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            return response;
        }
        answer.response(id)
    }

    /// A client connected to an in-process server answering with `shape`.
    fn connect(runtime: &tokio::runtime::Runtime, shape: Shape, bytes: usize) -> Client {
        let answer = Arc::new(Answer::new(shape, bytes));
        let router = axum::Router::new().route(
            "/mcp",
            axum::routing::post(move |body: Bytes| handle(answer.clone(), body)),
        );
        let url = runtime.block_on(async {
            let listener = match tokio::net::TcpListener::bind("127.0.0.1:0").await {
                Ok(listener) => listener,
                Err(error) => panic!("cannot listen on 127.0.0.1: {error}"),
            };
            let url = match listener.local_addr() {
                Ok(address) => format!("http://{address}/mcp"),
                Err(error) => panic!("no local address: {error}"),
            };
            tokio::spawn(async move { axum::serve(listener, router).await });
            url
        });
        let transport = match HttpTransport::new(HttpConfig::new(url)) {
            Ok(transport) => transport,
            Err(error) => panic!("HttpTransport::new: {error}"),
        };
        let client = Client::new(transport);
        if let Err(error) = runtime.block_on(client.initialize()) {
            panic!("initialize over HTTP: {error}");
        }
        client
    }

    fn call(bencher: Bencher, shape: Shape, bytes: usize) {
        let runtime = runtime();
        let client = connect(&runtime, shape, bytes);
        let arguments = raw(golem_bench::arguments_json(1));
        bencher.counter(BytesCount::new(bytes)).bench_local(|| {
            match runtime.block_on(client.call_tool("echo", &arguments)) {
                Ok(result) => result.content.len(),
                Err(error) => panic!("call: {error}"),
            }
        });
    }

    /// The result as a JSON body.
    #[divan::bench(args = SIZES)]
    fn json(bencher: Bencher, bytes: usize) {
        call(bencher, Shape::Json, bytes);
    }

    /// The same result as one event of an event stream.
    #[divan::bench(args = SIZES)]
    fn sse(bencher: Bencher, bytes: usize) {
        call(bencher, Shape::Sse { notifications: 0 }, bytes);
    }

    /// 100 progress notifications, then a 64 B result, in one event stream.
    #[divan::bench]
    fn sse_notifications(bencher: Bencher) {
        call(bencher, Shape::Sse { notifications: 100 }, 64);
    }
}
