//! A deliberately misbehaving MCP stdio server for the fault-injection tests
//! of `golem-mcp` (`tests/stdio_faults.rs`). Not part of the library.
//!
//! It speaks just enough MCP (initialize, tools/list, tools/call, ping) and
//! each tool provokes one fault: a ping or a sampling request in the middle
//! of a call, a notification flood, stale answers, a crash, a hang, a reply
//! split in two, oversized output, a stderr flood, stdout noise.
//!
//! Environment:
//! - `FAKE_MODE=die_on_start`: write to stderr and exit 7 before reading.
//! - `FAKE_MODE=stubborn`: ignore SIGTERM and stdin EOF (only SIGKILL ends it).
//! - `FAKE_MODE=paged` / `FAKE_MODE=cursor_loop`: page `tools/list`.
//! - `FAKE_PROTOCOL_VERSION`: the version to answer `initialize` with.
//!
//! Blocking std I/O on purpose: the fake must be simple enough to trust.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
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
        output: std::io::stdout(),
        cancelled: Vec::new(),
        unanswered: Vec::new(),
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
    output: std::io::Stdout,
    /// Request ids named by `notifications/cancelled`, in arrival order.
    cancelled: Vec<Value>,
    /// Request ids of calls to the tools that never answer.
    unanswered: Vec<Value>,
    mode: String,
}

impl Server {
    fn run(&mut self) {
        while let Some(message) = self.next_message() {
            self.handle(message);
        }
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
        self.write_raw(message.to_string().as_bytes());
        self.write_raw(b"\n");
    }

    fn write_raw(&mut self, bytes: &[u8]) {
        // A client that went away is not this server's problem.
        let _ = self.output.write_all(bytes);
        let _ = self.output.flush();
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
            ("notifications/cancelled", None) => self.cancelled.push(params["requestId"].clone()),
            (_, None) => {}
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
                let text =
                    json!({"cancelled": self.cancelled, "unanswered": self.unanswered}).to_string();
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
