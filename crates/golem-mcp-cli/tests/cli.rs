//! The `golem-mcp` binary end to end: each exit status, each way to name a
//! server, and the command-line details (arguments from stdin, options
//! before and after the subcommand, usage errors caught before a server is
//! started). The servers are real ones nobody here wrote, installed by
//! `scripts/install-peers.sh`: `@modelcontextprotocol/server-everything`
//! (npm) and servers on the official Python SDK
//! (`peers/python/mcp_py_server.py`, and `peers/python/sse_fastmcp_server.py`
//! of its 1.x line over HTTP+SSE). A missing peer fails the test.

mod support;

use std::net::TcpListener;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use predicates::prelude::*;
use support::process::{Lines, interrupt, wait_until_gone};
use support::{
    PATIENCE, TempDir, everything, everything_stdio, free_port, golem_mcp, peers, python_http,
    python_sse, python_stdio, stdout_json, story_stdio,
};

// ---- each way to name a server, and exit 0 ----------------------------------------------

#[test]
fn info_over_stdio_shows_identity_protocol_capabilities_and_instructions() {
    golem_mcp()
        .arg("info")
        .args(everything_stdio())
        .assert()
        .success()
        .stdout(
            predicate::str::contains("server:       mcp-servers/everything ")
                .and(predicate::str::contains("protocol:     2025-11-25"))
                .and(predicate::str::contains("tools (listChanged)"))
                .and(predicate::str::contains(
                    "instructions:\n  # Everything Server",
                )),
        );
}

/// A FastMCP server of mcp 1.x over HTTP+SSE: its `/sse` URL works as it
/// is (the streamable transport falls back), with `--sse` (no probe), and
/// as a config entry of `"type": "sse"`.
#[test]
fn an_http_sse_server_is_reached_by_fallback_by_sse_and_by_a_config_entry() {
    let peer = python_sse();
    let dir = TempDir::new();
    let config = dir.file(
        "servers.json",
        &format!(
            r#"{{"mcpServers": {{"old": {{"type": "sse", "url": "{}"}}}}}}"#,
            peer.url
        ),
    );
    let config = config.to_string_lossy().into_owned();
    let fallback = ["--url", peer.url.as_str()];
    let explicit = ["--url", peer.url.as_str(), "--sse"];
    let entry = ["--config", config.as_str(), "--server", "old"];
    for server in [&fallback[..], &explicit[..], &entry[..]] {
        let listed = golem_mcp().arg("list").args(server).assert().success();
        let names = String::from_utf8_lossy(&listed.get_output().stdout).into_owned();
        assert!(
            names.lines().any(|name| name == "ask_name"),
            "{server:?}: {names}"
        );
        golem_mcp()
            .args(["call", "echo", r#"{"message":"hi"}"#])
            .args(server)
            .assert()
            .success()
            .stdout("Echo: hi\n");
    }
    let info = golem_mcp()
        .args(["info", "--json"])
        .args(explicit)
        .output()
        .expect("runs");
    assert!(info.status.success(), "{info:?}");
    assert_eq!(stdout_json(&info)["chosen"]["by"], "transport");
    golem_mcp()
        .arg("info")
        .args(fallback)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "(initialize, after server/discover got HTTP 405)",
        ));
}

#[test]
fn list_over_http_accepts_options_before_and_after_the_subcommand() {
    let peer = python_http();
    let after = golem_mcp()
        .args(["list", "--json", "--timeout", "30", "--url", &peer.url])
        .output()
        .expect("runs");
    let before = golem_mcp()
        .args(["--json", "--timeout", "30", "--url", &peer.url, "list"])
        .output()
        .expect("runs");
    for output in [&after, &before] {
        assert!(output.status.success(), "{output:?}");
        let listed = stdout_json(output);
        let names: Vec<&str> = listed["tools"]
            .as_array()
            .expect("a tools array")
            .iter()
            .filter_map(|tool| tool["name"].as_str())
            .collect();
        assert_eq!(
            names,
            [
                "echo",
                "add",
                "slow",
                "fail",
                "refuse",
                "ask_model",
                "ask_user",
                "chatty"
            ]
        );
    }
    let plain = golem_mcp()
        .args(["list", "--url", &peer.url])
        .assert()
        .success();
    assert_eq!(
        String::from_utf8_lossy(&plain.get_output().stdout),
        "echo\nadd\nslow\nfail\nrefuse\nask_model\nask_user\nchatty\n"
    );
}

#[test]
fn list_long_adds_descriptions_and_parameters() {
    golem_mcp()
        .args(["list", "--long"])
        .args(everything_stdio())
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "echo (Echo Tool)\n  Echoes back the input string\n  \
             hints: read-only, idempotent, closed world\n  \
             parameters:\n    message: string, required — Message to echo\n\n",
        ));
}

#[test]
fn a_config_file_names_the_server_with_variables_expanded() {
    let dir = TempDir::new();
    let config = dir.file(
        "servers.json",
        r#"{"mcpServers": {
            "everything": {"command": "${GOLEM_TEST_PEERS}/node_modules/.bin/mcp-server-everything", "args": ["stdio"]},
            "other": {"url": "http://127.0.0.1:9/mcp"}
        }}"#,
    );
    golem_mcp()
        .env("GOLEM_TEST_PEERS", peers())
        .args(["call", "echo", r#"{"message":"from a config file"}"#])
        .arg("--config")
        .arg(&config)
        .args(["--server", "everything"])
        .assert()
        .success()
        .stdout("Echo: from a config file\n");
}

#[test]
fn call_prints_the_text_the_agent_would_see_with_an_image_placeholder() {
    golem_mcp()
        .args(["call", "get-tiny-image"])
        .args(everything_stdio())
        .assert()
        .success()
        .stdout(predicate::function(|out: &str| {
            out.lines().any(|line| {
                line.strip_prefix("[image: image/png, ")
                    .and_then(|rest| rest.strip_suffix(" bytes not shown]"))
                    .is_some_and(|size| size.parse::<u64>().is_ok())
            })
        }));
}

#[test]
fn dash_reads_the_arguments_from_stdin() {
    golem_mcp()
        .args(["call", "echo", "-"])
        .args(everything_stdio())
        .write_stdin("{\"message\": \"from stdin\"}\n")
        .assert()
        .success()
        .stdout("Echo: from stdin\n");
}

#[test]
fn call_json_prints_the_whole_result_as_the_server_sent_it() {
    let output = golem_mcp()
        .args(["call", "echo", r#"{"message":"raw"}"#, "--json"])
        .args(everything_stdio())
        .output()
        .expect("runs");
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8(output.stdout.clone()).expect("UTF-8");
    assert_eq!(stdout.lines().count(), 1, "one line, as sent: {stdout}");
    assert_eq!(
        stdout_json(&output),
        serde_json::json!({"content": [{"type": "text", "text": "Echo: raw"}]})
    );
}

#[test]
fn verbose_shows_the_servers_stderr_and_the_protocol_trace() {
    golem_mcp()
        .args(["-v", "call", "trigger-long-running-operation"])
        .arg(r#"{"duration": 0.2, "steps": 2}"#)
        .args(everything_stdio())
        .assert()
        .success()
        .stdout(predicate::str::contains("Long running operation completed"))
        .stderr(
            // The era probe first, then (this is a legacy server) the
            // handshake.
            predicate::str::contains(
                "golem-mcp: → {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\"",
            )
            .and(predicate::str::contains(
                "golem-mcp: → {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\"",
            ))
            .and(predicate::str::contains("\"_meta\":{\"progressToken\":"))
            .and(predicate::str::contains(
                "golem-mcp: ← {\"method\":\"notifications/progress\"",
            ))
            // The server's own stderr, passed through.
            .and(predicate::str::contains("Starting default (STDIO) server")),
        );
}

#[test]
fn help_documents_the_exit_statuses() {
    golem_mcp().arg("--help").assert().success().stdout(
        predicate::str::contains("5 timeout")
            .and(predicate::str::contains("--config FILE --server NAME")),
    );
}

// ---- exit 1: the tool answered isError ----------------------------------------------------

#[test]
fn an_is_error_result_prints_its_text_and_exits_1() {
    golem_mcp()
        .args(["call", "fail", r#"{"reason":"out of coffee"}"#])
        .args(python_stdio())
        .assert()
        .code(1)
        .stdout(predicate::str::contains("out of coffee"))
        .stderr(predicate::str::contains("answered with an error (isError)"));
}

// ---- exit 2: usage errors, before any server is started -----------------------------------

/// A stdio "server" that leaves a mark if it is ever started.
fn marker_server(dir: &TempDir) -> (PathBuf, [String; 4]) {
    let marker = dir.0.join("started");
    let command = [
        "--".into(),
        "sh".into(),
        "-c".into(),
        format!("touch '{}'", marker.display()),
    ];
    (marker, command)
}

fn assert_usage_error(args: &[&str], stdin: &str, expected: &str) {
    let dir = TempDir::new();
    let (marker, server) = marker_server(&dir);
    golem_mcp()
        .args(args)
        .args(server)
        .write_stdin(stdin)
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains(expected));
    assert!(!marker.exists(), "the server was started for {args:?}");
}

#[test]
fn invalid_arguments_are_usage_errors_found_before_starting_the_server() {
    assert_usage_error(
        &["call", "echo", "{message: hi}"],
        "",
        "ARGS_JSON is not valid JSON",
    );
    assert_usage_error(&["call", "echo", "[1, 2]"], "", "must be a JSON object");
    assert_usage_error(
        &["call", "echo", "-"],
        "not json",
        "ARGS_JSON from stdin is not valid JSON",
    );
    assert_usage_error(&["call", "echo", "-"], "", "ARGS_JSON from stdin is empty");
}

#[test]
fn malformed_env_entries_and_misplaced_options_are_usage_errors() {
    assert_usage_error(
        &["info", "-e", "NOVALUE"],
        "",
        "-e entry of 7 characters (not shown: it may hold a secret): expected KEY=VALUE",
    );
    assert_usage_error(&["info", "-e", "=x"], "", "expected KEY=VALUE");
    assert_usage_error(
        &["info", "-H", "X-Key: 1"],
        "",
        "-H applies to HTTP servers",
    );
    assert_usage_error(
        &["info", "--url", "http://127.0.0.1:9/mcp"],
        "",
        "name the server twice",
    );
    assert_usage_error(&["info", "--server", "x"], "", "add --config FILE");
    assert_usage_error(
        &["info", "--sse"],
        "",
        "--sse says that --url is an HTTP+SSE",
    );
    assert_usage_error(&["info", "--no-such-flag"], "", "unexpected argument");
    assert_usage_error(&["info", "--timeout", "0"], "", "more than 0 seconds");
}

#[test]
fn a_malformed_header_is_a_usage_error() {
    for (header, expected) in [
        (
            "Authorization Bearer x",
            "no ':' between the name and the value",
        ),
        ("Bad Name: x", "may hold only"),
    ] {
        golem_mcp()
            .args(["info", "--url", "http://127.0.0.1:9/mcp", "-H", header])
            .assert()
            .code(2)
            .stderr(
                predicate::str::contains(expected).and(predicate::str::contains("'Name: value'")),
            );
    }
    golem_mcp()
        .args(["info", "--url", "ftp://127.0.0.1/mcp"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("the scheme must be http or https"));
}

#[test]
fn naming_no_server_is_a_usage_error() {
    golem_mcp()
        .arg("list")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "no server given; name the server with --url URL",
        ));
}

#[test]
fn config_problems_are_usage_errors_naming_entry_and_field() {
    let dir = TempDir::new();
    let config = dir.file(
        "servers.json",
        r#"{"mcpServers": {
            "github": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "${GOLEM_TEST_UNSET_VARIABLE}"}},
            "broken": {"command": "x", "args": "not an array"}
        }}"#,
    );
    let config = config.to_string_lossy();
    for (server, expected) in [
        (
            "missing",
            "no server named \"missing\" in \"mcpServers\"; it defines: broken, github",
        ),
        (
            "github",
            "mcpServers.github.env.GITHUB_TOKEN: ${GOLEM_TEST_UNSET_VARIABLE} is not set",
        ),
        (
            "broken",
            "mcpServers.broken.args: expected an array of strings",
        ),
    ] {
        golem_mcp()
            .env_remove("GOLEM_TEST_UNSET_VARIABLE")
            .args(["info", "--config", &config, "--server", server])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(expected));
    }
    golem_mcp()
        .args(["info", "--config", &config])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--config needs --server NAME; "));
    golem_mcp()
        .args(["info", "--server", "x", "--config"])
        .arg(dir.0.join("absent.json"))
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("cannot read it")
                .and(predicate::str::contains("check the path")),
        );
    let not_json = dir.file("bad.json", "{\"mcpServers\": ");
    golem_mcp()
        .args(["info", "--server", "x", "--config"])
        .arg(&not_json)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not valid JSON"));
}

#[test]
fn a_tool_the_server_does_not_list_is_a_usage_error_naming_its_tools() {
    // server-everything reports an unknown tool as an isError result (not
    // the JSON-RPC error the specification shows): golem-mcp checks the
    // tool list and reports a usage error.
    golem_mcp()
        .args(["call", "ecko"])
        .args(everything_stdio())
        .assert()
        .code(2)
        .stdout("")
        .stderr(
            predicate::str::contains("the server has no tool named \"ecko\"")
                .and(predicate::str::contains("Tool ecko not found"))
                .and(predicate::str::contains("it offers: echo, ")),
        );
}

// ---- exit 3: a JSON-RPC error -------------------------------------------------------------

#[test]
fn a_json_rpc_error_exits_3_with_the_servers_message() {
    // The Python peer lists `refuse` and answers every call of it with a
    // JSON-RPC error.
    golem_mcp()
        .args(["call", "refuse"])
        .args(python_stdio())
        .assert()
        .code(3)
        .stdout("")
        .stderr(
            predicate::str::contains("tools/call refuse: the server answered with an error").and(
                predicate::str::contains("refused: this tool never runs (JSON-RPC error -32602)"),
            ),
        );
}

#[test]
fn an_unknown_tool_refused_with_a_json_rpc_error_is_a_usage_error_too() {
    // The Python peer answers an unknown tool with -32602, as the
    // specification shows: the same usage error as for an isError answer.
    golem_mcp()
        .args(["call", "no-such-tool"])
        .args(python_stdio())
        .assert()
        .code(2)
        .stdout("")
        .stderr(
            predicate::str::contains("the server has no tool named \"no-such-tool\"")
                .and(predicate::str::contains("Unknown tool: no-such-tool"))
                .and(predicate::str::contains("it offers: echo, add, ")),
        );
}

// ---- exit 4: transport, process or HTTP failure -------------------------------------------

#[test]
fn a_missing_executable_exits_4_at_once() {
    let started = Instant::now();
    golem_mcp()
        .args(["info", "--", "/nonexistent/mcp-server"])
        .assert()
        .code(4)
        .stderr(predicate::str::contains(
            "spawn \"/nonexistent/mcp-server\": executable not found",
        ));
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn an_http_server_that_is_not_there_exits_4_at_once() {
    let url = format!("http://127.0.0.1:{}/mcp", free_port());
    let started = Instant::now();
    golem_mcp()
        .args(["info", "--url", &url, "-H", "Authorization: Bearer secret"])
        .assert()
        .code(4)
        .stderr(
            // The first request is the era probe.
            predicate::str::contains("server/discover: POST")
                .and(predicate::str::contains("Connection refused"))
                .and(predicate::str::contains("secret").not()),
        );
    assert!(started.elapsed() < Duration::from_secs(10));
}

/// A stand-in HTTP server on 127.0.0.1 that records the head of the first
/// request it gets (lower-cased) and answers `401` with `bad token`; its
/// address and the recording.
fn record_one_request() -> (String, std::thread::JoinHandle<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = listener.local_addr().expect("an address").to_string();
    let server = std::thread::spawn(move || {
        use std::io::{Read, Write};
        let (mut stream, _) = listener.accept().expect("golem-mcp connects");
        stream
            .set_read_timeout(Some(PATIENCE))
            .expect("a read timeout");
        let mut request = Vec::new();
        let mut buffer = [0u8; 4096];
        while !request.windows(4).any(|window| window == b"\r\n\r\n") {
            let read = stream.read(&mut buffer).expect("the request arrives");
            assert!(read > 0, "the request ended early");
            request.extend_from_slice(&buffer[..read]);
        }
        let answer = "HTTP/1.1 401 Unauthorized\r\ncontent-type: text/plain\r\ncontent-length: 9\r\nconnection: close\r\n\r\nbad token";
        stream.write_all(answer.as_bytes()).expect("answered");
        String::from_utf8_lossy(&request).to_lowercase()
    });
    (address, server)
}

#[test]
fn headers_reach_the_server_and_an_http_error_status_exits_4() {
    let (address, server) = record_one_request();
    let url = format!("http://{address}/mcp");
    golem_mcp()
        .args(["info", "--url", &url])
        .args([
            "-H",
            "Authorization: Bearer t0ken",
            "--header",
            "X-Team:  golem ",
        ])
        .assert()
        .code(4)
        .stderr(
            predicate::str::contains("server/discover: HTTP 401 Unauthorized from ")
                .and(predicate::str::contains("bad token")),
        );
    let request = server.join().expect("the stand-in server ran");
    assert!(request.starts_with("post /mcp "), "{request}");
    assert!(
        request.contains("\r\nauthorization: bearer t0ken\r\n"),
        "{request}"
    );
    assert!(request.contains("\r\nx-team: golem\r\n"), "{request}");
}

#[test]
fn a_proxy_named_by_http_proxy_carries_plain_http_requests() {
    // The proxy is the stand-in; the server's host does not resolve, so only
    // a request through the proxy can reach anything.
    let (proxy, server) = record_one_request();
    golem_mcp()
        .env("HTTP_PROXY", format!("http://{proxy}"))
        .env_remove("http_proxy")
        .env_remove("NO_PROXY")
        .env_remove("no_proxy")
        // A fixed token: the 401 is then final (no OAuth discovery).
        .args(["info", "--url", "http://mcp.example.invalid/mcp"])
        .args(["-H", "Authorization: Bearer t0ken"])
        .assert()
        .code(4)
        .stderr(predicate::str::contains(
            "server/discover: HTTP 401 Unauthorized from ",
        ));
    let request = server.join().expect("the stand-in proxy ran");
    assert!(
        request.starts_with("post http://mcp.example.invalid/mcp http/1.1\r\n"),
        "{request}"
    );
}

#[test]
fn no_proxy_sends_plain_http_requests_straight_to_the_server() {
    let (address, server) = record_one_request();
    // A proxy that is not there: a request sent to it would fail to connect.
    let proxy = format!("http://127.0.0.1:{}", free_port());
    golem_mcp()
        .env("HTTP_PROXY", proxy)
        .env("NO_PROXY", "127.0.0.1")
        .env_remove("http_proxy")
        .env_remove("no_proxy")
        .args(["info", "--url", &format!("http://{address}/mcp")])
        .args(["-H", "Authorization: Bearer t0ken"])
        .assert()
        .code(4)
        .stderr(predicate::str::contains(
            "server/discover: HTTP 401 Unauthorized from ",
        ));
    let request = server.join().expect("the stand-in server ran");
    assert!(request.starts_with("post /mcp http/1.1\r\n"), "{request}");
}

#[test]
fn a_server_that_dies_exits_4_with_its_last_words() {
    golem_mcp()
        .args(["-e", "LAST_WORDS=cannot open the database", "info"])
        .args(["--", "sh", "-c", "echo \"fatal: $LAST_WORDS\" >&2; exit 7"])
        .assert()
        .code(4)
        .stderr(
            predicate::str::contains("server/discover: the server process exited (exit status: 7)")
                .and(predicate::str::contains("fatal: cannot open the database")),
        );
}

#[test]
fn cwd_sets_the_servers_working_directory() {
    let dir = TempDir::new();
    golem_mcp()
        .arg("info")
        .arg("--cwd")
        .arg(&dir.0)
        .args(["--", "sh", "-c", "pwd >&2; exit 3"])
        .assert()
        .code(4)
        .stderr(predicate::str::contains(dir.0.to_string_lossy().as_ref()));
    golem_mcp()
        .args(["info", "--cwd", "/nonexistent/dir", "--", "sh"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "does not exist or is not a directory",
        ));
}

// ---- exit 5: timeout ----------------------------------------------------------------------

#[test]
fn a_timeout_exits_5_and_leaves_no_server_behind() {
    let dir = TempDir::new();
    let pid_file = dir.0.join("server.pid");
    let started = Instant::now();
    golem_mcp()
        .args(["call", "trigger-long-running-operation"])
        .arg(r#"{"duration": 60, "steps": 60}"#)
        .args(["--timeout", "3", "--", "sh", "-c"])
        .arg(format!(
            "echo $$ > '{}'; exec '{}' stdio",
            pid_file.display(),
            everything()
        ))
        .assert()
        .code(5)
        .stdout("")
        .stderr(predicate::str::contains(
            "timed out after 3 s while calling trigger-long-running-operation",
        ));
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    let pid = std::fs::read_to_string(&pid_file).expect("the server wrote its pid");
    let pid = pid.trim();
    // The kernel delivers the SIGKILL sent at exit asynchronously.
    wait_until_gone(pid, Duration::from_secs(5));
}

#[test]
fn malformed_entries_never_show_their_values() {
    assert_usage_error(
        &["info", "-e", "1TOKEN=supersecret"],
        "",
        "\"1TOKEN\" (value not shown)",
    );
    golem_mcp()
        .args([
            "info",
            "--url",
            "http://127.0.0.1:9/mcp",
            "-H",
            "Authorization Bearer supersecret",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("supersecret").not());
}

// ---- requests and notifications from the server -----------------------------------------

#[test]
fn help_says_the_command_declares_no_sampling() {
    golem_mcp().arg("--help").assert().success().stdout(
        predicate::str::contains("declares no sampling capability")
            .and(predicate::str::contains("--on-elicitation <MODE>"))
            .and(predicate::str::contains("--root <DIR>")),
    );
}

#[test]
fn defaults_accepts_a_form_whose_fields_all_have_defaults() {
    golem_mcp()
        .args(["call", "story", "--on-elicitation", "defaults"])
        .args(story_stdio())
        .assert()
        .success()
        .stdout("accepted: It was a dark and stormy night. (3 chapters)\n")
        .stderr("");
}

#[test]
fn defaults_declines_a_form_with_a_required_field_that_has_none_naming_it() {
    golem_mcp()
        .args(["call", "trigger-elicitation-request", "--on-elicitation", "defaults"])
        .args(everything_stdio())
        .assert()
        .success()
        .stdout(predicate::str::contains("User declined"))
        .stderr(predicate::str::contains(
            "--on-elicitation defaults cannot fill the required field \"name\", which has no default",
        ));
}

#[test]
fn without_a_terminal_or_with_decline_the_form_is_declined() {
    for mode in [&[][..], &["--on-elicitation", "decline"][..]] {
        golem_mcp()
            .args(["call", "trigger-elicitation-request"])
            .args(mode)
            .args(everything_stdio())
            .assert()
            .success()
            .stdout(predicate::str::contains("\"action\": \"decline\""))
            .stderr(predicate::str::contains(
                "golem-mcp: the server \"mcp-server-everything stdio\" (mcp-servers/everything ",
            ))
            .stderr(predicate::str::contains(
                ") asked for input (a form: \"Please provide inputs",
            ));
    }
}

#[test]
fn the_server_that_asks_is_named_as_configured_then_as_it_names_itself() {
    let dir = TempDir::new();
    let config = dir.file(
        "mcp.json",
        &serde_json::json!({"mcpServers": {
            "evilsrv": {"command": everything(), "args": ["stdio"]},
        }})
        .to_string(),
    );
    // The form's first line, and the note of a declined form.
    golem_mcp()
        .args([
            "call",
            "trigger-elicitation-request",
            "--on-elicitation",
            "ask",
        ])
        .arg("--config")
        .arg(&config)
        .args(["--server", "evilsrv"])
        .write_stdin("n\n")
        .assert()
        .success()
        .stderr(predicate::str::starts_with(
            "\nThe server \"evilsrv\" (mcp-servers/everything ",
        ))
        .stderr(predicate::str::contains(") asks: Please provide inputs"));
    golem_mcp()
        .args([
            "call",
            "trigger-elicitation-request",
            "--on-elicitation",
            "decline",
        ])
        .arg("--config")
        .arg(&config)
        .args(["--server", "evilsrv"])
        .assert()
        .success()
        .stderr(predicate::str::starts_with(
            "golem-mcp: the server \"evilsrv\" (mcp-servers/everything ",
        ));
}

#[test]
fn ask_prompts_on_stdin_and_sends_the_answers_with_defaults_filled_in() {
    // Yes to the form, a name, then Enter for the twelve other fields; a
    // wrong integer is asked again.
    let typed = format!("y\nAda\n{}200\n7\n{}", "\n".repeat(5), "\n".repeat(6));
    golem_mcp()
        .args([
            "call",
            "trigger-elicitation-request",
            "--on-elicitation",
            "ask",
        ])
        .args(everything_stdio())
        .write_stdin(typed)
        .assert()
        .success()
        .stdout(
            predicate::str::contains("- Name: Ada")
                .and(predicate::str::contains("- Favorite Integer: 7"))
                .and(predicate::str::contains("It was a dark and stormy night.")),
        )
        .stderr(
            predicate::str::contains("[1/13] String (name, required)")
                .and(predicate::str::contains("    2) hero-2 (Green Lantern)"))
                .and(predicate::str::contains("between 1 and 100; try again")),
        );
}

#[test]
fn ask_without_input_cancels_and_cannot_share_stdin_with_the_arguments() {
    golem_mcp()
        .args([
            "call",
            "trigger-elicitation-request",
            "--on-elicitation",
            "ask",
        ])
        .args(everything_stdio())
        .assert()
        .success()
        .stdout(predicate::str::contains("\"action\": \"cancel\""));
    assert_usage_error(
        &["call", "echo", "-", "--on-elicitation", "ask"],
        "{}",
        "--on-elicitation ask reads the answers from stdin, which ARGS_JSON \"-\" already reads",
    );
}

#[test]
fn roots_are_listed_to_the_server_as_file_uris() {
    let dir = TempDir::new();
    let uri = format!("file://{}", dir.0.display());
    golem_mcp()
        .args(["call", "get-roots-list", "--root"])
        .arg(&dir.0)
        .args(everything_stdio())
        .assert()
        .success()
        .stdout(predicate::str::contains(format!("URI: {uri}\n")));
}

#[test]
fn a_root_that_is_not_a_directory_is_a_usage_error() {
    assert_usage_error(
        &["info", "--root", "/no/such/dir"],
        "",
        "golem-mcp: --root /no/such/dir: /no/such/dir is not a directory",
    );
}

#[test]
fn server_log_messages_are_printed_on_stderr_unless_quiet() {
    // The server sends one message at once ("Debug-level message", ...,
    // "Alert level-message"), then one every 5 s.
    golem_mcp()
        .args(["call", "toggle-simulated-logging", "--log-level", "debug"])
        .args(everything_stdio())
        .assert()
        .success()
        .stderr(predicate::function(|err: &str| {
            err.lines().any(|line| {
                line.strip_prefix("golem-mcp: server log [")
                    .is_some_and(|rest| rest.contains("] ") && rest.contains("level"))
            })
        }));
    golem_mcp()
        .args([
            "call",
            "toggle-simulated-logging",
            "--log-level",
            "debug",
            "--quiet",
        ])
        .args(everything_stdio())
        .assert()
        .success()
        .stderr("");
}

#[test]
fn a_log_line_names_level_and_logger_and_log_level_needs_the_capability() {
    // The Python SDK no longer declares logging, yet logs through the
    // context. In the initialize era it logs anyway, and the level is not
    // sent for want of the capability.
    golem_mcp()
        .args([
            "call",
            "query",
            "--log-level",
            "info",
            "--protocol",
            "2025-11-25",
        ])
        .args(story_stdio())
        .assert()
        .success()
        .stdout("done\n")
        .stderr(
            "golem-mcp: warning: the server does not declare the logging capability; \
             --log-level info was not sent\n\
             golem-mcp: server log [warning] db: slow query\n",
        );
    // In 2026-07-28 the level rides the request, which needs no
    // capability, and the server logs only because it is there.
    golem_mcp()
        .args(["call", "query", "--log-level", "info"])
        .args(story_stdio())
        .assert()
        .success()
        .stdout("done\n")
        .stderr("golem-mcp: server log [warning] db: slow query\n");
    golem_mcp()
        .args(["call", "query"])
        .args(story_stdio())
        .assert()
        .success()
        .stdout("done\n")
        .stderr("");
}

#[test]
fn time_spent_answering_a_prompt_does_not_count_against_the_timeout() {
    use std::process::Stdio;
    let timeout = Duration::from_secs(4);
    let started = Instant::now();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_golem-mcp"))
        .args([
            "call",
            "trigger-elicitation-request",
            "--on-elicitation",
            "ask",
        ])
        .args(["--timeout", &timeout.as_secs().to_string()])
        .args(everything_stdio())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    let mut stderr = Lines::of(child.stderr.take().expect("a pipe"));
    // The server has started and asked once the prompt is on stderr.
    stderr.wait_for(
        |line| line.starts_with("The server \"mcp-server-everything stdio\" ("),
        PATIENCE,
    );
    // The user takes longer than --timeout to say no: until then, and a
    // while past the moment the command would have timed out, it is still
    // waiting for the answer.
    let answered_at = started + timeout + Duration::from_secs(2);
    while Instant::now() < answered_at {
        if let Some(status) = child.try_wait().expect("a status") {
            panic!("the command ended ({status}) while the user was answering");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    use std::io::Write as _;
    let mut stdin = child.stdin.take().expect("a pipe");
    stdin.write_all(b"n\n").expect("written");
    drop(stdin);
    let output = child.wait_with_output().expect("exits");
    let stderr = stderr.rest(PATIENCE);
    assert!(output.status.success(), "{output:?} {stderr}");
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("\"action\": \"decline\""),
        "{output:?}"
    );
}

// ---- messages that point at the fix -------------------------------------------------------

#[test]
fn a_server_command_without_the_separator_gets_a_tip() {
    golem_mcp()
        .args([
            "list",
            "npx",
            "-y",
            "@modelcontextprotocol/server-everything",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "tip: the server's command goes last, after --, e.g. golem-mcp list -- npx -y",
        ));
    golem_mcp()
        .args(["call", "echo", "npx"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "if \"npx\" is the server's command, put -- before it: golem-mcp call TOOL \
             [ARGS_JSON] -- npx ...",
        ));
}

#[test]
fn a_program_that_echoes_our_requests_is_named_as_no_mcp_server() {
    // `cat` sends each request back: the client refuses it as a server
    // request and `cat` returns that refusal as the answer.
    for pinned in [vec![], vec!["--protocol", "2026-07-28"]] {
        golem_mcp()
            .arg("info")
            .args(&pinned)
            .args(["--", "cat"])
            .assert()
            .code(4)
            .stderr(
                predicate::str::contains(
                    "the server sent our own request back instead of answering it: it is not \
                     an MCP server",
                )
                .and(predicate::str::contains("this client does not offer").not()),
            );
    }
}

#[test]
fn a_server_that_never_answers_shows_its_stderr_at_the_timeout() {
    // The era probe (10 s) outlasts the 2 s: server/discover is the
    // request left unanswered.
    golem_mcp()
        .args(["list", "--timeout", "2", "--", "sh", "-c"])
        .arg("echo 'could not bind port 8080' >&2; exec sleep 100")
        .assert()
        .code(5)
        .stderr(
            predicate::str::contains(
                "timed out after 2 s while connecting to the server: the server never \
                 answered server/discover; its stderr ended with:\n  could not bind port 8080",
            )
            .and(predicate::str::contains("raise --timeout").not()),
        );
}

#[test]
fn verbose_library_lines_share_the_traces_style() {
    let output = golem_mcp()
        .args(["-v", "list"])
        .args(everything_stdio())
        .output()
        .expect("runs");
    assert!(output.status.success(), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let spawned = stderr
        .lines()
        .find(|line| line.contains("spawned stdio server"))
        .unwrap_or_else(|| panic!("no spawn line in {stderr}"));
    assert!(
        spawned.starts_with("golem-mcp: · spawned stdio server (command: ")
            && spawned.contains(", pid: "),
        "{spawned}"
    );
    assert!(!stderr.contains("Some("), "no Rust Debug values: {stderr}");
    assert!(!stderr.contains("DEBUG"), "no log-level columns: {stderr}");
}

#[test]
fn ctrl_c_stops_the_server_says_what_was_interrupted_and_exits_130() {
    let dir = TempDir::new();
    let pid_file = dir.0.join("server.pid");
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_golem-mcp"));
    command
        .args(["-v", "call", "trigger-long-running-operation"])
        .arg(r#"{"duration": 60, "steps": 60}"#)
        .args(["--", "sh", "-c"])
        .arg(format!(
            "echo $$ > '{}'; exec '{}' stdio",
            pid_file.display(),
            everything()
        ))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let mut child = command.spawn().expect("starts");
    let mut stderr = Lines::of(child.stderr.take().expect("piped"));
    // The call is on the wire once the trace shows it.
    stderr.wait_for(
        |line| line.starts_with("golem-mcp: → ") && line.contains("\"tools/call\""),
        PATIENCE,
    );
    interrupt(&child);
    let rest = stderr.rest(PATIENCE);
    let exit = child.wait().expect("exits");
    assert_eq!(exit.code(), Some(130), "{rest}");
    assert!(
        rest.contains("golem-mcp: interrupted while calling trigger-long-running-operation"),
        "{rest}"
    );
    let pid = std::fs::read_to_string(&pid_file).expect("the server wrote its pid");
    wait_until_gone(pid.trim(), Duration::from_secs(5));
}
