//! The stdio transport and the client against a misbehaving server
//! (`testing/fake_server.rs`): every fault a real server can commit, and
//! process hygiene.

mod support;

use support::calls::call_text;
use support::{
    FAKE, args, bounded, fake, polled, process_alive, read_pid, reaped, scratch_path, until_gone,
    wrapped_with_grandchild,
};

use std::time::{Duration, Instant};

use golem_mcp::{
    Client, Error, Inbound, Outgoing, ServerStderr, ShutdownTimeouts, StdioConfig, StdioTransport,
    Transport, TransportError,
};
use serde_json::{Value, json};

/// `fake(mode)`, given 300 ms after end of input and 300 ms after SIGTERM
/// to exit: short enough for a test to wait out a server that ignores both.
fn quick_to_stop(mode: &str) -> StdioConfig {
    StdioConfig {
        shutdown: ShutdownTimeouts {
            after_eof: Duration::from_millis(300),
            after_sigterm: Duration::from_millis(300),
        },
        ..fake(mode)
    }
}

/// A spawned, initialized client, with the server's pid and stderr.
struct Connected {
    client: Client,
    pid: u32,
    stderr: ServerStderr,
}

async fn connect(config: StdioConfig) -> Connected {
    let transport = StdioTransport::spawn(config).expect("spawns");
    let pid = transport.pid().expect("running");
    let stderr = transport.stderr();
    let client = Client::new(transport);
    bounded(client.initialize()).await.expect("initializes");
    Connected {
        client,
        pid,
        stderr,
    }
}

// ---- spawning -------------------------------------------------------------

#[tokio::test]
async fn a_missing_executable_is_named() {
    let error =
        StdioTransport::spawn(StdioConfig::new("/nonexistent/mcp-server")).expect_err("not found");
    assert!(matches!(error, Error::Spawn { .. }), "{error:?}");
    let message = error.to_string();
    assert!(
        message.contains("/nonexistent/mcp-server") && message.contains("not found"),
        "{message}"
    );
}

#[tokio::test]
async fn malformed_configuration_is_refused_naming_the_field() {
    let cases = [
        (StdioConfig::new("  "), "command"),
        (
            StdioConfig {
                env: vec![("OK".into(), "1".into()), ("A=B".into(), "x".into())],
                ..StdioConfig::new(FAKE)
            },
            "env[1] (\"A=B\")",
        ),
        (
            StdioConfig {
                env: vec![(String::new(), "x".into())],
                ..StdioConfig::new(FAKE)
            },
            "env[0] (\"\")",
        ),
        (
            StdioConfig {
                dir: Some("/nonexistent/dir".into()),
                ..StdioConfig::new(FAKE)
            },
            "dir",
        ),
        (
            StdioConfig {
                args: vec!["a\0b".into()],
                ..StdioConfig::new(FAKE)
            },
            "args[0]",
        ),
    ];
    for (config, field) in cases {
        let error = StdioTransport::spawn(config).expect_err("invalid");
        match &error {
            Error::InvalidConfig { field: named, .. } => assert_eq!(named, field),
            other => panic!("expected InvalidConfig for {field}, got {other:?}"),
        }
        assert!(error.to_string().contains(field), "{error}");
    }
}

#[tokio::test]
async fn the_environment_is_inherited_and_entries_come_after_it() {
    let dir = std::env::temp_dir().canonicalize().expect("temp dir");
    let connected = connect(StdioConfig {
        env: vec![
            ("HOME".into(), "/overridden".into()),
            ("GOLEM_TWICE".into(), "first".into()),
            ("GOLEM_TWICE".into(), "second".into()),
        ],
        dir: Some(dir.clone()),
        ..StdioConfig::new(FAKE)
    })
    .await;
    let client = &connected.client;
    let path = std::env::var("PATH").expect("PATH is set");
    assert_eq!(
        call_text(client, "env", json!({"name": "PATH"}))
            .await
            .expect("called"),
        path
    );
    assert_eq!(
        call_text(client, "env", json!({"name": "HOME"}))
            .await
            .expect("called"),
        "/overridden"
    );
    assert_eq!(
        call_text(client, "env", json!({"name": "GOLEM_TWICE"}))
            .await
            .expect("called"),
        "second"
    );
    assert_eq!(
        call_text(client, "cwd", json!({})).await.expect("called"),
        dir.display().to_string()
    );
    bounded(client.close()).await.expect("closes");
}

#[tokio::test]
async fn withheld_variables_are_not_inherited_unless_given_again() {
    // Two inherited variables are withheld; one of them is given again.
    let connected = connect(StdioConfig {
        env_remove: vec!["PATH".into(), "HOME".into()],
        env: vec![("HOME".into(), "/given-again".into())],
        ..StdioConfig::new(FAKE)
    })
    .await;
    let client = &connected.client;
    assert_eq!(
        call_text(client, "env", json!({"name": "PATH"}))
            .await
            .expect("called"),
        "<unset>",
        "a withheld variable does not reach the server"
    );
    assert_eq!(
        call_text(client, "env", json!({"name": "HOME"}))
            .await
            .expect("called"),
        "/given-again",
        "an env entry still reaches it"
    );
    bounded(client.close()).await.expect("closes");
}

// ---- the conversation -----------------------------------------------------

#[tokio::test]
async fn handshake_list_and_call() {
    let connected = connect(fake("paged")).await;
    let client = &connected.client;
    let server = client.server().expect("initialized");
    assert_eq!(
        (server.name.as_str(), server.version.as_str()),
        ("fake-server", "0.0.1")
    );
    assert_eq!(server.instructions.as_deref(), Some("For tests only."));
    let tools = bounded(client.list_tools()).await.expect("listed");
    let names: Vec<_> = tools.iter().map(|tool| tool.name.as_str()).collect();
    assert_eq!(names, ["echo", "crash", "hang"], "all pages, in order");
    assert_eq!(
        call_text(client, "echo", json!({"text": "hi"}))
            .await
            .expect("called"),
        "hi"
    );
    bounded(client.close()).await.expect("closes");
    assert!(reaped(connected.pid), "close reaps the server");
}

#[tokio::test]
async fn a_cursor_loop_ends_listing() {
    let connected = connect(fake("cursor_loop")).await;
    let error = bounded(connected.client.list_tools())
        .await
        .expect_err("loop");
    assert!(matches!(error, Error::CursorLoop { .. }), "{error:?}");
}

#[tokio::test]
async fn a_server_ping_mid_call_is_answered() {
    let connected = connect(fake("")).await;
    let text = call_text(&connected.client, "ping_first", json!({}))
        .await
        .expect("called");
    assert_eq!(text, "ping answered");
}

#[tokio::test]
async fn a_server_request_mid_call_gets_method_not_found() {
    let connected = connect(fake("")).await;
    let text = call_text(&connected.client, "sampling_first", json!({}))
        .await
        .expect("called");
    assert_eq!(text, "sampling answered with error -32601");
}

#[tokio::test]
async fn a_notification_flood_does_not_slow_the_call() {
    let connected = connect(fake("")).await;
    let started = Instant::now();
    let text = call_text(&connected.client, "flood", json!({"count": 10_000}))
        .await
        .expect("called");
    assert_eq!(text, "after the flood");
    // 10,000 small messages take milliseconds even in a debug build; a
    // quadratic buffer or a per-message allocation storm would take far
    // longer than this bound.
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn stale_and_mistyped_ids_are_dropped() {
    let connected = connect(fake("")).await;
    let text = call_text(&connected.client, "stale", json!({}))
        .await
        .expect("called");
    assert_eq!(text, "fresh");
}

#[tokio::test]
async fn non_json_stdout_lines_are_skipped_and_kept_for_diagnostics() {
    let connected = connect(fake("")).await;
    let client = &connected.client;
    assert_eq!(
        call_text(client, "noise", json!({})).await.expect("called"),
        "after the noise"
    );
    let error = call_text(client, "crash", json!({}))
        .await
        .expect_err("crashed");
    let exit = error.process_exit().expect("a process exit");
    assert_eq!(exit.skipped_stdout, ["this is not JSON", "[1,2,3]"]);
    assert!(
        error.to_string().contains("this is not JSON") || error.to_string().contains("[1,2,3]"),
        "{error}"
    );
}

// ---- the server dies --------------------------------------------------------

#[tokio::test]
async fn a_crash_mid_call_fails_at_once_with_status_and_stderr() {
    let connected = connect(fake("")).await;
    let started = Instant::now();
    let error = call_text(&connected.client, "crash", json!({}))
        .await
        .expect_err("crashed");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "took {:?}",
        started.elapsed()
    );
    let exit = error.process_exit().expect("a process exit");
    assert_eq!(exit.status.and_then(|status| status.code()), Some(3));
    assert!(
        exit.stderr_tail.contains("fake: fatal: out of cheese"),
        "{exit:?}"
    );
    let message = error.to_string();
    assert!(message.starts_with("mcp: tools/call crash:"), "{message}");
    assert!(
        message.contains("exit status: 3") && message.contains("out of cheese"),
        "{message}"
    );
    // Every later operation fails the same way, at once, and closing the
    // dead server's client is fine.
    let again = call_text(&connected.client, "echo", json!({}))
        .await
        .expect_err("still dead");
    assert_eq!(again.process_exit(), Some(exit));
    bounded(connected.client.close())
        .await
        .expect("closes after the crash");
}

#[tokio::test]
async fn a_server_dying_before_initialize_says_why() {
    let transport = StdioTransport::spawn(fake("die_on_start")).expect("spawns");
    let client = Client::new(transport);
    let error = bounded(client.initialize()).await.expect_err("died");
    let exit = error.process_exit().expect("a process exit");
    assert_eq!(exit.status.and_then(|status| status.code()), Some(7));
    assert!(
        error.to_string().contains("FAKE_API_KEY is not set"),
        "{error}"
    );
}

#[tokio::test]
async fn an_exit_after_a_reply_is_noticed_by_the_next_call() {
    let connected = connect(fake("")).await;
    assert_eq!(
        call_text(&connected.client, "exit_after_reply", json!({}))
            .await
            .expect("called"),
        "bye"
    );
    let error = call_text(&connected.client, "echo", json!({"text": "x"}))
        .await
        .expect_err("gone");
    assert_eq!(
        error
            .process_exit()
            .and_then(|exit| exit.status)
            .and_then(|s| s.code()),
        Some(0)
    );
}

// ---- cancellation -----------------------------------------------------------

#[tokio::test]
async fn a_hung_call_can_be_abandoned_and_the_client_reused() {
    let connected = connect(fake("")).await;
    let client = &connected.client;
    let hang = args(json!({}));
    let abandoned =
        tokio::time::timeout(Duration::from_millis(100), client.call_tool("hang", &hang)).await;
    assert!(abandoned.is_err(), "the hung call times out");
    assert_eq!(
        call_text(client, "echo", json!({"text": "still here"}))
            .await
            .expect("reused"),
        "still here"
    );
    // The server was told which request was abandoned.
    let record: Value = serde_json::from_str(
        &call_text(client, "cancelled", json!({}))
            .await
            .expect("called"),
    )
    .expect("the fake's record");
    assert_eq!(
        record["unanswered"].as_array().map(Vec::len),
        Some(1),
        "{record}"
    );
    assert_eq!(
        record["cancelled"], record["unanswered"],
        "the cancellation names the hung request"
    );
}

#[tokio::test]
async fn a_half_read_line_is_completed_by_the_next_read() {
    let go = scratch_path("split-go");
    let transport = StdioTransport::spawn(fake("")).expect("spawns");
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "split", "arguments": {"go_file": go}}});
    let request = Outgoing::request(1, "tools/call", request.to_string().into());
    bounded(transport.send(request)).await.expect("sent");
    // Wait for the fake to say half a line is on the pipe, so that the read
    // below really starts on half a line.
    // (The stdio fake's stderr is the only sign: nothing signals a line.)
    let stderr = transport.stderr();
    polled(async || {
        stderr
            .tail()
            .contains("fake: half a line written")
            .then_some(())
    })
    .await
    .expect("the fake wrote half a line");
    // The read takes the first half and is cancelled waiting for the rest.
    let first = tokio::time::timeout(Duration::from_millis(100), transport.recv()).await;
    assert!(first.is_err(), "only half a line was written");
    std::fs::write(&go, b"go").expect("signal the server");
    let Inbound::Message(line) = bounded(transport.recv()).await.expect("the whole line") else {
        panic!("expected a message");
    };
    let message: Value = serde_json::from_slice(&line).expect("one intact JSON message");
    assert_eq!(message["result"]["content"][0]["text"], "joined");
    let _ = std::fs::remove_file(&go);
    bounded(transport.close()).await.expect("closes");
}

#[tokio::test]
async fn a_half_written_message_is_completed_before_the_next() {
    let go = scratch_path("pause-go");
    let connected = connect(fake("")).await;
    let client = &connected.client;
    assert_eq!(
        call_text(client, "pause_reading", json!({"go_file": go}))
            .await
            .expect("called"),
        "paused"
    );
    // The server is not reading: a 4 MiB message overfills even a widened
    // (1 MiB) pipe and blocks.
    let big = args(json!({"text": "y".repeat(4 * 1024 * 1024)}));
    let abandoned =
        tokio::time::timeout(Duration::from_millis(200), client.call_tool("echo", &big)).await;
    assert!(
        abandoned.is_err(),
        "the write blocks while the server does not read"
    );
    std::fs::write(&go, b"go").expect("signal the server");
    // Without completing the abandoned message first, the server would read
    // half of it glued to this request and answer with a parse error.
    assert_eq!(
        call_text(client, "echo", json!({"text": "small"}))
            .await
            .expect("called"),
        "small"
    );
    let _ = std::fs::remove_file(&go);
}

// ---- bounds -----------------------------------------------------------------

#[tokio::test]
async fn an_oversized_message_fails_the_call_and_closes_the_transport() {
    let connected = connect(StdioConfig {
        max_message_bytes: 4096,
        ..fake("")
    })
    .await;
    let client = &connected.client;
    assert_eq!(
        call_text(client, "big", json!({"bytes": 1000}))
            .await
            .expect("fits")
            .len(),
        1000
    );
    let error = call_text(client, "big", json!({"bytes": 100_000}))
        .await
        .expect_err("too large");
    assert!(
        matches!(
            error.transport_error(),
            Some(TransportError::MessageTooLarge { limit: 4096 })
        ),
        "{error:?}"
    );
    assert!(error.to_string().contains("4096"), "{error}");
    let after = call_text(client, "echo", json!({}))
        .await
        .expect_err("closed");
    assert!(
        matches!(
            after.transport_error(),
            Some(TransportError::MessageTooLarge { limit: 4096 })
        ),
        "later calls say why the transport closed: {after:?}"
    );
    assert!(reaped(connected.pid), "the server was stopped and reaped");
}

#[tokio::test]
async fn a_stderr_flood_never_blocks_and_only_the_tail_is_kept() {
    let connected = connect(fake("")).await;
    let text = call_text(
        &connected.client,
        "stderr_flood",
        json!({"bytes": 50 * 1024 * 1024}),
    )
    .await
    .expect("called");
    assert_eq!(text, "flooded stderr");
    bounded(connected.client.close()).await.expect("closes");
    let tail = connected.stderr.tail();
    assert!(tail.len() <= 64 * 1024, "kept {} bytes", tail.len());
    assert!(
        tail.ends_with("fake: the last stderr line\n"),
        "{:?}",
        &tail[tail.len().saturating_sub(80)..]
    );
    assert!(connected.stderr.total_bytes() >= 50 * 1024 * 1024);
}

// ---- process hygiene --------------------------------------------------------

#[tokio::test]
async fn a_server_ignoring_eof_and_sigterm_is_killed_within_the_bound() {
    let timeouts = ShutdownTimeouts {
        after_eof: Duration::from_millis(200),
        after_sigterm: Duration::from_millis(200),
    };
    let connected = connect(StdioConfig {
        shutdown: timeouts,
        ..fake("stubborn")
    })
    .await;
    let started = Instant::now();
    bounded(connected.client.close()).await.expect("closes");
    let took = started.elapsed();
    assert!(reaped(connected.pid), "SIGKILL ended it, and it was reaped");
    assert!(
        took >= Duration::from_millis(400),
        "both grace periods were given: {took:?}"
    );
    assert!(took < Duration::from_secs(3), "bounded: {took:?}");
}

#[tokio::test]
async fn close_leaves_no_grandchild_behind() {
    let pid_file = scratch_path("grandchild.pid");
    let connected = connect(wrapped_with_grandchild(&pid_file)).await;
    let grandchild = read_pid(&pid_file);
    assert!(process_alive(grandchild));
    bounded(connected.client.close()).await.expect("closes");
    assert!(reaped(connected.pid), "the server was reaped");
    // SIGKILL was sent to the group before close returned; the kernel tears
    // the grandchild down asynchronously.
    assert!(
        until_gone(grandchild).await,
        "the grandchild was killed with the group"
    );
    let _ = std::fs::remove_file(&pid_file);
}

#[tokio::test]
async fn dropping_the_client_ends_the_group_without_blocking() {
    let pid_file = scratch_path("dropped.pid");
    // A server that ignores EOF and SIGTERM: ending it takes the whole
    // sequence (two seconds), which a blocking drop would spend here.
    let connected = connect(StdioConfig {
        env: vec![("FAKE_MODE".into(), "stubborn".into())],
        ..wrapped_with_grandchild(&pid_file)
    })
    .await;
    let grandchild = read_pid(&pid_file);
    let started = Instant::now();
    drop(connected.client);
    assert!(
        started.elapsed() < Duration::from_millis(500),
        "drop must not wait for the server: {:?}",
        started.elapsed()
    );
    assert!(until_gone(connected.pid).await, "the server ended");
    assert!(until_gone(grandchild).await, "the grandchild ended");
    let _ = std::fs::remove_file(&pid_file);
}

#[test]
fn dropping_outside_a_runtime_kills_the_group_at_once() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let pid_file = scratch_path("no-runtime.pid");
    let (transport, grandchild) = runtime.block_on(async {
        let transport = StdioTransport::spawn(wrapped_with_grandchild(&pid_file)).expect("spawns");
        let ping = &br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#[..];
        let ping = Outgoing::request(1, "ping", ping.into());
        bounded(transport.send(ping)).await.expect("sent");
        bounded(transport.recv()).await.expect("answered");
        (transport, read_pid(&pid_file))
    });
    let pid = transport.pid().expect("running");
    drop(runtime);
    drop(transport);
    // SIGKILL is delivered synchronously to the group: no wait is needed
    // beyond the kernel tearing the processes down (watched from a runtime
    // made after the drop).
    let watcher = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    assert!(watcher.block_on(async { until_gone(pid).await && until_gone(grandchild).await }));
    assert!(reaped(pid), "no zombie is left behind");
    let _ = std::fs::remove_file(&pid_file);
}

#[tokio::test]
async fn a_server_dying_while_a_grandchild_holds_stdout_fails_the_call_at_once() {
    let pid_file = scratch_path("holder.pid");
    // `sleep` inherits the server's stdout, so stdout stays open after the
    // server exits.
    let connected = connect(wrapped_with_grandchild(&pid_file)).await;
    let grandchild = read_pid(&pid_file);
    let started = Instant::now();
    let error = call_text(&connected.client, "crash", json!({}))
        .await
        .expect_err("crashed");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(
        error
            .process_exit()
            .and_then(|exit| exit.status)
            .and_then(|s| s.code()),
        Some(3),
        "{error}"
    );
    assert!(
        until_gone(grandchild).await,
        "the group went with the server"
    );
    let _ = std::fs::remove_file(&pid_file);
}

#[tokio::test]
async fn an_interrupted_close_is_finished_by_the_next() {
    let connected = connect(quick_to_stop("stubborn")).await;
    let interrupted =
        tokio::time::timeout(Duration::from_millis(100), connected.client.close()).await;
    assert!(
        interrupted.is_err(),
        "the close sequence takes longer than that"
    );
    assert!(
        matches!(connected.client.ping().await, Err(Error::Closed { .. })),
        "the client counts as closed already"
    );
    bounded(connected.client.close()).await.expect("closes");
    assert!(reaped(connected.pid), "the second close finished the job");
}

#[tokio::test]
async fn a_call_still_sending_when_the_client_closes_fails_as_closed() {
    let go = scratch_path("close-go");
    let connected = connect(quick_to_stop("")).await;
    let client = connected.client.clone();
    assert_eq!(
        call_text(&client, "pause_reading", json!({"go_file": go}))
            .await
            .expect("called"),
        "paused"
    );
    let big = args(json!({"text": "y".repeat(4 * 1024 * 1024)}));
    let mut call = tokio::spawn(async move { client.call_tool("echo", &big).await });
    assert!(
        tokio::time::timeout(Duration::from_millis(200), &mut call)
            .await
            .is_err(),
        "the write blocks while the server does not read"
    );
    bounded(connected.client.close()).await.expect("closes");
    let error = bounded(call)
        .await
        .expect("the call's task ends")
        .expect_err("the client closed");
    assert!(matches!(error, Error::Closed { .. }), "{error:?}");
    let _ = std::fs::remove_file(&go);
}

#[tokio::test]
async fn answers_written_before_the_server_went_are_read_after_a_send_met_its_end() {
    // The server answers, stops reading, and exits: a send meets the broken
    // pipe before anyone has read the answer.
    let script = r#"printf '%s\n' '{"jsonrpc":"2.0","id":7,"result":{}}'; exec 0<&-"#;
    let transport = StdioTransport::spawn(StdioConfig {
        args: vec!["-c".into(), script.into()],
        ..StdioConfig::new("sh")
    })
    .expect("spawns");
    let pid = transport.pid().expect("running");
    assert!(until_gone(pid).await, "the script ends");
    let sent = bounded(
        transport.send(Outgoing::notification(
            "notifications/initialized",
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
                .to_vec()
                .into(),
        )),
    )
    .await;
    assert!(
        matches!(sent, Err(TransportError::ProcessExited(_))),
        "{sent:?}"
    );
    let Inbound::Message(answer) = bounded(transport.recv())
        .await
        .expect("the answer it wrote before it went")
    else {
        panic!("expected a message");
    };
    let answer: Value = serde_json::from_slice(&answer).expect("JSON");
    assert_eq!(answer["id"], 7);
    let after = bounded(transport.recv()).await;
    assert!(
        matches!(after, Err(TransportError::ProcessExited(_))),
        "then the end of its output: {after:?}"
    );
    bounded(transport.close()).await.expect("closes");
}

#[tokio::test]
async fn a_send_dropped_behind_a_half_written_message_is_still_delivered() {
    let go = scratch_path("queue-go");
    let connected = connect(fake("")).await;
    let client = &connected.client;
    assert_eq!(
        call_text(client, "pause_reading", json!({"go_file": go}))
            .await
            .expect("called"),
        "paused"
    );
    let big = args(json!({"text": "y".repeat(4 * 1024 * 1024)}));
    let first =
        tokio::time::timeout(Duration::from_millis(200), client.call_tool("echo", &big)).await;
    assert!(first.is_err(), "blocked on the full pipe");
    // The next operation queues the first one's cancellation behind the
    // rest of it, and is dropped while that is still blocked: the
    // cancellation must still go out (the ping itself never started).
    let second = tokio::time::timeout(Duration::from_millis(200), client.ping()).await;
    assert!(second.is_err(), "still blocked");
    std::fs::write(&go, b"go").expect("signal the server");
    let record: Value = serde_json::from_str(
        &call_text(client, "cancelled", json!({}))
            .await
            .expect("called"),
    )
    .expect("the fake's record");
    let cancelled = record["cancelled"].as_array().map(Vec::len);
    assert_eq!(
        cancelled,
        Some(1),
        "the abandoned echo was announced: {record}"
    );
    let _ = std::fs::remove_file(&go);
}

#[tokio::test]
async fn stderr_can_be_discarded_or_inherited_instead_of_kept() {
    use golem_mcp::StderrMode;
    for mode in [StderrMode::Discard, StderrMode::Inherit] {
        let connected = connect(StdioConfig {
            stderr: mode,
            ..fake("")
        })
        .await;
        let error = call_text(&connected.client, "crash", json!({}))
            .await
            .expect_err("crashed");
        let exit = error.process_exit().expect("a process exit");
        assert!(!exit.stderr_captured, "{mode:?}");
        assert!(exit.stderr_tail.is_empty(), "{mode:?}: {exit:?}");
        assert!(
            !error.to_string().contains("wrote nothing"),
            "{mode:?}: {error}"
        );
        assert!(connected.stderr.tail().is_empty());
    }
}
