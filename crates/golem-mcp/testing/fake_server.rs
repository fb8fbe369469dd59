//! A deliberately misbehaving MCP stdio server for the fault-injection tests
//! of `golem-mcp` (`tests/stdio_faults.rs`). Not part of the library.
//!
//! It speaks just enough MCP (initialize, tools/list, tools/call, ping) and
//! each tool provokes one fault: a ping or a sampling request in the middle
//! of a call, a notification flood, stale answers, a crash, a hang, a reply
//! split in two, oversized output, a stderr flood, stdout noise.
//!
//! Tools for a client with many requests in flight (`tests/stdio_multiplex.rs`):
//! - `hold {"text"}`: left unanswered until `release`; a `progressToken` in
//!   its `_meta` is remembered.
//! - `held {"count": N}`: answered (text: how many are held) once at least N
//!   calls are held: the test's signal that the server has them all.
//! - `release {"after"?: N, "interleave"?: bool, "flood"?: N}`: once at least
//!   N calls are held (default 0), writes `flood` notifications (log messages
//!   and progress for tokens nobody asked for), one progress report (progress
//!   1 of 1, message = its text) for each held call that has a token, then
//!   answers every held call in REVERSE order of arrival (text content = its
//!   `text`, answered even if the client cancelled it), with, when
//!   `interleave`, a server `ping` (id `"srv-ping-1"`) after the first answer
//!   and a `sampling/createMessage` request (id 9001) after the second; then
//!   answers the release call itself with `released K`.
//! - `crash_after_held {"after": N}`: once at least N calls are held, writes
//!   `fake: fatal: crashed with K calls held` to stderr and exits with 9.
//! - `server_requests_answered`: the client's answers to the server's
//!   requests so far, as a JSON array of the response messages.
//! - `ping_later {"ms"}`: answered at once; `ms` later a helper thread sends
//!   the client a `ping` (id `"idle-ping-K"`). When the answer arrives the
//!   fake writes `fake: idle ping answered after X ms` to stderr, and
//!   `last_ping_latency` returns `{"latency_ms": X, "answer": <response>}`
//!   (`null` before).
//! - `cancelled`: the request ids named by `notifications/cancelled`
//!   (`cancelled`), those of the `hang` calls (`unanswered`), and the texts of
//!   the cancelled `hold` calls (`cancelled_held`). Each cancellation is also
//!   written to stderr as it arrives: `fake: cancelled request ID`.
//!
//! Environment:
//! - `FAKE_MODE=die_on_start`: write to stderr and exit 7 before reading.
//! - `FAKE_MODE=stubborn`: ignore SIGTERM and stdin EOF (only SIGKILL ends it).
//! - `FAKE_MODE=paged` / `FAKE_MODE=cursor_loop`: page `tools/list`.
//! - `FAKE_PROTOCOL_VERSION`: the version to answer `initialize` with.
//! - `FAKE_DISCOVER_AFTER_MS`: answer `server/discover` (as a 2026-07-28
//!   server), but only after this long: a modern server slow to start.
//!   `silent`: never answer it (a legacy server that ignores unknown
//!   requests). Unset, the probe is refused as an unknown method (a legacy
//!   server).
//!
//! Blocking std I/O on purpose: the fake must be simple enough to trust.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

fn main() {
    let mode = std::env::var("FAKE_MODE").unwrap_or_default();
    match mode.as_str() {
        "die_on_start" => {
            eprintln!("fake: cannot start: FAKE_API_KEY is not set");
            std::process::exit(7);
        }
        "stubborn" => {
            // SAFETY: setting a signal disposition to "ignore" is
            // async-signal-safe and touches no memory of ours.
            unsafe {
                libc::signal(libc::SIGTERM, libc::SIG_IGN);
            }
        }
        _ => {}
    }
    let mut server = Server {
        input: BufReader::new(std::io::stdin()),
        cancelled: Vec::new(),
        unanswered: Vec::new(),
        held: Vec::new(),
        ever_held: Vec::new(),
        deferred: Vec::new(),
        answers: Vec::new(),
        idle_ping: Arc::default(),
        idle_pings_sent: 0,
        mode,
    };
    server.run();
    if server.mode == "stubborn" {
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
}

struct Server {
    input: BufReader<std::io::Stdin>,
    /// Request ids named by `notifications/cancelled`, in arrival order.
    cancelled: Vec<Value>,
    /// Request ids of calls to the tools that never answer.
    unanswered: Vec<Value>,
    /// `hold` calls not released yet, in arrival order.
    held: Vec<Held>,
    /// Every `hold` call ever received, to name cancelled ones.
    ever_held: Vec<Held>,
    /// Tool calls waiting for enough held calls.
    deferred: Vec<Deferred>,
    /// The client's answers to this server's requests, in arrival order.
    answers: Vec<Value>,
    /// The ping sent by `ping_later`'s helper thread, and its answer.
    idle_ping: Arc<Mutex<IdlePing>>,
    idle_pings_sent: u64,
    mode: String,
}

#[derive(Clone)]
struct Held {
    id: Value,
    text: String,
    progress_token: Option<Value>,
}

/// A tool call to run once at least `after` calls are held.
struct Deferred {
    id: Value,
    tool: String,
    args: Value,
    after: usize,
}

#[derive(Default)]
struct IdlePing {
    /// The id of the last ping sent and when it was written.
    sent: Option<(String, Instant)>,
    /// How long its answer took, in milliseconds, and the answer.
    answered: Option<(f64, Value)>,
}

impl Server {
    fn run(&mut self) {
        while let Some(message) = self.next_message() {
            self.handle(message);
            self.run_deferred();
        }
    }

    /// Runs the deferred tool calls whose condition now holds.
    fn run_deferred(&mut self) {
        while let Some(index) = self
            .deferred
            .iter()
            .position(|deferred| self.held.len() >= deferred.after)
        {
            let deferred = self.deferred.remove(index);
            match deferred.tool.as_str() {
                "held" => {
                    let text = self.held.len().to_string();
                    self.reply(&deferred.id, Self::text_result(&text));
                }
                "release" => self.release(&deferred.id, &deferred.args),
                "crash_after_held" => {
                    eprintln!("fake: fatal: crashed with {} calls held", self.held.len());
                    std::process::exit(9);
                }
                other => unreachable!("{other} is never deferred"),
            }
        }
    }

    /// Answers every held call, last first, as `release` describes.
    fn release(&mut self, id: &Value, args: &Value) {
        let flood = args["flood"].as_u64().unwrap_or(0);
        if flood > 0 {
            let mut batch = String::new();
            for n in 0..flood {
                let message = if n % 2 == 0 {
                    json!({"jsonrpc": "2.0", "method": "notifications/message",
                        "params": {"level": "info", "data": format!("flood {n}")}})
                } else {
                    // Tokens no call of the client uses: a string, or a
                    // number far above any it hands out.
                    let token = if n % 4 == 1 {
                        json!(format!("nobody-{n}"))
                    } else {
                        json!(1_000_000_000 + n)
                    };
                    json!({"jsonrpc": "2.0", "method": "notifications/progress",
                        "params": {"progressToken": token, "progress": n, "message": "not yours"}})
                };
                batch.push_str(&message.to_string());
                batch.push('\n');
            }
            write_raw(batch.as_bytes());
        }
        let held = std::mem::take(&mut self.held);
        for call in &held {
            if let Some(token) = &call.progress_token {
                self.write(
                    &json!({"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": 1, "total": 1,
                        "message": call.text}}),
                );
            }
        }
        let mut requests = if args["interleave"].as_bool().unwrap_or(false) {
            vec![
                json!({"jsonrpc": "2.0", "id": "srv-ping-1", "method": "ping"}),
                json!({"jsonrpc": "2.0", "id": 9001, "method": "sampling/createMessage",
                    "params": {"messages": [], "maxTokens": 1}}),
            ]
        } else {
            Vec::new()
        }
        .into_iter();
        for call in held.iter().rev() {
            self.reply(&call.id, Self::text_result(&call.text));
            if let Some(request) = requests.next() {
                self.write(&request);
            }
        }
        for request in requests {
            self.write(&request);
        }
        self.reply(id, Self::text_result(&format!("released {}", held.len())));
    }

    /// Records the client's answer to one of this server's requests.
    fn answered(&mut self, message: Value) {
        let mut idle_ping = self
            .idle_ping
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some((id, sent)) = &idle_ping.sent
            && message["id"] == id.as_str()
        {
            let latency = sent.elapsed().as_secs_f64() * 1000.0;
            eprintln!("fake: idle ping answered after {latency:.1} ms");
            idle_ping.answered = Some((latency, message.clone()));
            idle_ping.sent = None;
        }
        drop(idle_ping);
        self.answers.push(message);
    }

    /// The next message from the client; `None` at end of input.
    fn next_message(&mut self) -> Option<Value> {
        loop {
            let mut line = String::new();
            match self.input.read_line(&mut line) {
                Ok(0) | Err(_) => return None,
                Ok(_) => {}
            }
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str(&line) {
                Ok(message) => return Some(message),
                Err(error) => {
                    eprintln!("fake: malformed line ({error}): {}", line.trim_end());
                    self.write(&json!({"jsonrpc": "2.0", "id": null,
                        "error": {"code": -32700, "message": format!("Parse error: {error}")}}));
                }
            }
        }
    }

    fn write(&mut self, message: &Value) {
        write_line(message);
    }

    fn write_raw(&mut self, bytes: &[u8]) {
        write_raw(bytes);
    }

    fn reply(&mut self, id: &Value, result: Value) {
        self.write(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    fn text_result(text: &str) -> Value {
        json!({"content": [{"type": "text", "text": text}]})
    }

    fn handle(&mut self, message: Value) {
        let method = message["method"].as_str().unwrap_or_default().to_owned();
        let id = message.get("id").cloned();
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        match (method.as_str(), id) {
            ("notifications/cancelled", None) => {
                eprintln!("fake: cancelled request {}", params["requestId"]);
                self.cancelled.push(params["requestId"].clone());
            }
            (_, None) => {}
            // An answer to one of this server's requests.
            ("", Some(_)) if message.get("result").is_some() || message.get("error").is_some() => {
                self.answered(message);
            }
            ("initialize", Some(id)) => {
                let version = std::env::var("FAKE_PROTOCOL_VERSION")
                    .ok()
                    .or_else(|| params["protocolVersion"].as_str().map(str::to_owned))
                    .unwrap_or_default();
                self.reply(
                    &id,
                    json!({
                        "protocolVersion": version,
                        "capabilities": {"tools": {"listChanged": false}},
                        "serverInfo": {"name": "fake-server", "version": "0.0.1", "title": "Fake"},
                        "instructions": "For tests only."
                    }),
                );
            }
            ("server/discover", Some(_))
                if std::env::var("FAKE_DISCOVER_AFTER_MS").as_deref() == Ok("silent") => {}
            ("server/discover", Some(id)) if std::env::var("FAKE_DISCOVER_AFTER_MS").is_ok() => {
                let after = std::env::var("FAKE_DISCOVER_AFTER_MS")
                    .ok()
                    .and_then(|ms| ms.parse().ok())
                    .unwrap_or(0);
                std::thread::sleep(Duration::from_millis(after));
                self.reply(
                    &id,
                    json!({
                        "resultType": "complete",
                        "supportedVersions": ["2026-07-28"],
                        "capabilities": {"tools": {}},
                        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fake-server", "version": "0.0.1"}}
                    }),
                );
            }
            ("ping", Some(id)) => self.reply(&id, json!({})),
            ("tools/list", Some(id)) => self.list_tools(&id, &params),
            ("tools/call", Some(id)) => self.call_tool(&id, &params),
            (_, Some(id)) => self.write(&json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": format!("Method not found: {method}")}})),
        }
    }

    fn list_tools(&mut self, id: &Value, params: &Value) {
        let tool = |name: &str| {
            json!({"name": name, "description": format!("the {name} tool"),
            "inputSchema": {"type": "object"}})
        };
        let names = ["echo", "crash", "hang"];
        match self.mode.as_str() {
            "paged" => {
                let page: usize = params["cursor"]
                    .as_str()
                    .and_then(|c| c.parse().ok())
                    .unwrap_or(0);
                let mut result = json!({"tools": [tool(names[page])]});
                if page + 1 < names.len() {
                    result["nextCursor"] = json!((page + 1).to_string());
                }
                self.reply(id, result);
            }
            "cursor_loop" => {
                self.reply(id, json!({"tools": [tool("echo")], "nextCursor": "again"}))
            }
            _ => {
                let tools: Vec<Value> = names.iter().map(|name| tool(name)).collect();
                self.reply(id, json!({"tools": tools}));
            }
        }
    }

    fn call_tool(&mut self, id: &Value, params: &Value) {
        let name = params["name"].as_str().unwrap_or_default().to_owned();
        let args = &params["arguments"];
        match name.as_str() {
            "echo" => {
                let text = args["text"].as_str().unwrap_or_default().to_owned();
                self.reply(id, Self::text_result(&text));
            }
            "ping_first" => {
                self.write(&json!({"jsonrpc": "2.0", "id": "srv-ping", "method": "ping"}));
                let answer = self.next_message().unwrap_or(Value::Null);
                let ok = answer["id"] == "srv-ping" && answer["result"] == json!({});
                self.reply(
                    id,
                    Self::text_result(if ok {
                        "ping answered"
                    } else {
                        "ping not answered"
                    }),
                );
            }
            "sampling_first" => {
                self.write(
                    &json!({"jsonrpc": "2.0", "id": 4242, "method": "sampling/createMessage",
                    "params": {"messages": [], "maxTokens": 1}}),
                );
                let answer = self.next_message().unwrap_or(Value::Null);
                let text = format!("sampling answered with error {}", answer["error"]["code"]);
                self.reply(id, Self::text_result(&text));
            }
            "flood" => {
                let count = args["count"].as_u64().unwrap_or(10_000);
                let mut batch = String::new();
                for n in 0..count {
                    batch.push_str(
                        &json!({"jsonrpc": "2.0", "method": "notifications/message",
                        "params": {"level": "info", "data": format!("notification {n}")}})
                        .to_string(),
                    );
                    batch.push('\n');
                }
                self.write_raw(batch.as_bytes());
                self.reply(id, Self::text_result("after the flood"));
            }
            "stale" => {
                let number = id.as_u64().unwrap_or(0);
                self.write(&json!({"jsonrpc": "2.0", "id": number.to_string(), "result": Self::text_result("string id")}));
                self.write(&json!({"jsonrpc": "2.0", "id": number + 1000, "result": Self::text_result("other id")}));
                self.write(&json!({"jsonrpc": "2.0", "id": number + 1001, "error": {"code": -1, "message": "other"}}));
                let fresh = Self::text_result("fresh").to_string();
                self.write_raw(
                    format!("{{\"jsonrpc\":\"2.0\",\"id\":{number}.0,\"result\":{fresh}}}\n")
                        .as_bytes(),
                );
            }
            "crash" => {
                eprintln!("fake: fatal: out of cheese");
                std::process::exit(3);
            }
            "hang" => self.unanswered.push(id.clone()),
            "cancelled" => {
                let cancelled_held: Vec<&str> = self
                    .ever_held
                    .iter()
                    .filter(|call| self.cancelled.contains(&call.id))
                    .map(|call| call.text.as_str())
                    .collect();
                let text = json!({"cancelled": self.cancelled, "unanswered": self.unanswered,
                    "cancelled_held": cancelled_held})
                .to_string();
                self.reply(id, Self::text_result(&text));
            }
            "hold" => {
                let call = Held {
                    id: id.clone(),
                    text: args["text"].as_str().unwrap_or_default().to_owned(),
                    progress_token: params["_meta"].get("progressToken").cloned(),
                };
                self.ever_held.push(call.clone());
                self.held.push(call);
            }
            "held" | "release" | "crash_after_held" => {
                let after = args[if name == "held" { "count" } else { "after" }]
                    .as_u64()
                    .unwrap_or(0) as usize;
                self.deferred.push(Deferred {
                    id: id.clone(),
                    tool: name,
                    args: args.clone(),
                    after,
                });
            }
            "server_requests_answered" => {
                let text = Value::from(self.answers.clone()).to_string();
                self.reply(id, Self::text_result(&text));
            }
            "ping_later" => {
                let delay = Duration::from_millis(args["ms"].as_u64().unwrap_or(0));
                self.idle_pings_sent += 1;
                let ping_id = format!("idle-ping-{}", self.idle_pings_sent);
                let idle_ping = Arc::clone(&self.idle_ping);
                self.reply(id, Self::text_result("scheduled"));
                std::thread::spawn(move || {
                    std::thread::sleep(delay);
                    let ping = json!({"jsonrpc": "2.0", "id": ping_id, "method": "ping"});
                    // Recorded before the write, so the answer cannot
                    // arrive first.
                    idle_ping
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .sent = Some((ping_id, Instant::now()));
                    write_line(&ping);
                    eprintln!("fake: idle ping sent");
                });
            }
            "last_ping_latency" => {
                let idle_ping = self
                    .idle_ping
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                let text = match &idle_ping.answered {
                    Some((latency, answer)) => {
                        json!({"latency_ms": latency, "answer": answer}).to_string()
                    }
                    None => "null".to_owned(),
                };
                drop(idle_ping);
                self.reply(id, Self::text_result(&text));
            }
            "split" => {
                let line =
                    json!({"jsonrpc": "2.0", "id": id, "result": Self::text_result("joined")})
                        .to_string()
                        + "\n";
                let (first, second) = line.as_bytes().split_at(line.len() / 2);
                self.write_raw(first);
                // The test's signal that half a line is on the pipe.
                eprintln!("fake: half a line written");
                wait_for_file(args["go_file"].as_str().unwrap_or_default());
                self.write_raw(second);
            }
            "pause_reading" => {
                self.reply(id, Self::text_result("paused"));
                wait_for_file(args["go_file"].as_str().unwrap_or_default());
            }
            "big" => {
                let bytes = args["bytes"].as_u64().unwrap_or(0) as usize;
                self.reply(id, Self::text_result(&"x".repeat(bytes)));
            }
            "stderr_flood" => {
                let bytes = args["bytes"].as_u64().unwrap_or(0) as usize;
                let chunk = "e".repeat(1023) + "\n";
                let mut stderr = std::io::stderr();
                for _ in 0..bytes / chunk.len() {
                    let _ = stderr.write_all(chunk.as_bytes());
                }
                let _ = stderr.write_all(b"fake: the last stderr line\n");
                self.reply(id, Self::text_result("flooded stderr"));
            }
            "noise" => {
                self.write_raw(b"this is not JSON\n\n   \n[1,2,3]\n");
                self.reply(id, Self::text_result("after the noise"));
            }
            "image" => self.reply(
                id,
                json!({"content": [
                {"type": "text", "text": "a pixel:"},
                {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}]}),
            ),
            "fail" => self.reply(
                id,
                json!({"content": [{"type": "text", "text": "bad input"}], "isError": true}),
            ),
            "env" => {
                let value = std::env::var(args["name"].as_str().unwrap_or_default())
                    .unwrap_or_else(|_| "<unset>".into());
                self.reply(id, Self::text_result(&value));
            }
            "cwd" => {
                let dir = std::env::current_dir()
                    .map(|dir| dir.display().to_string())
                    .unwrap_or_default();
                self.reply(id, Self::text_result(&dir));
            }
            "exit_after_reply" => {
                self.reply(id, Self::text_result("bye"));
                std::process::exit(0);
            }
            _ => self.write(&json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32602, "message": format!("Unknown tool: {name}")}})),
        }
    }
}

/// Writes one message as one line, under the stdout lock: `ping_later`'s
/// helper thread writes too.
fn write_line(message: &Value) {
    let mut line = message.to_string();
    line.push('\n');
    write_raw(line.as_bytes());
}

fn write_raw(bytes: &[u8]) {
    let mut stdout = std::io::stdout().lock();
    // A client that went away is not this server's problem.
    let _ = stdout.write_all(bytes);
    let _ = stdout.flush();
}

/// Blocks until `path` exists (the test's signal to go on). After 30 s, or
/// without a path, the fake gives up: it says so on stderr and exits with
/// 70, so a test that forgot its signal fails instead of going on.
fn wait_for_file(path: &str) {
    if path.is_empty() {
        eprintln!("fake: no go_file was given to wait for");
        std::process::exit(70);
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while !Path::new(path).exists() {
        if Instant::now() >= deadline {
            eprintln!("fake: gave up waiting for {path} after 30 s");
            std::process::exit(70);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}
