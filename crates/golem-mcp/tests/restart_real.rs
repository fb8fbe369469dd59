//! Real servers killed in the middle of a call, with a restart policy
//! (ADR 0026): the killed call fails with the exit status, the next call
//! succeeds on a new process, and nothing of the old one is left. The
//! Python SDK's server is of the modern era (2026-07-28), the reference
//! `server-everything` of the legacy one. The scripted cases are in
//! `restart.rs`.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use golem_mcp::{
    Client, ClientConfig, Error, RestartPolicy, ServerNotification, StdioConfig, StdioTransport,
    TransportError,
};
use support::{args, peer_bounded, polled, processes_with};

/// A variable only this test's servers carry, to find their processes.
fn mark() -> String {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("GOLEM_RESTART_TEST={}-{n}", std::process::id())
}

/// `config` carrying `mark`.
fn marked(mut config: StdioConfig, mark: &str) -> StdioConfig {
    let (name, value) = mark.split_once('=').expect("NAME=value");
    config.env.push((name.into(), value.into()));
    config
}

/// Kills `pid` as a crash would (SIGKILL, the process alone).
fn crash(pid: u32) {
    let pid = i32::try_from(pid).expect("a pid");
    // SAFETY: kill(2) on the server this test started and still owns.
    let killed = unsafe { libc::kill(pid, libc::SIGKILL) };
    assert_eq!(killed, 0, "kill {pid}");
}

/// Starts `config` with a restart policy, kills the server while `tool` is
/// running (once its first progress report arrived), and checks the
/// killed call, the restart and the next call (`echo`, `echo_args`).
async fn killed_mid_call(
    config: StdioConfig,
    tool: &str,
    tool_args: serde_json::Value,
    echo_args: serde_json::Value,
) {
    let mark = mark();
    let transport = StdioTransport::spawn(marked(config, &mark)).expect("spawns");
    let first_pid = transport.pid().expect("a pid");
    let policy =
        RestartPolicy::default().with_backoff(Duration::from_millis(10), Duration::from_millis(50));
    let client = Client::connect_with(transport, ClientConfig::default().with_restart(policy))
        .await
        .expect("connects");
    let era = client
        .server()
        .expect("initialized")
        .protocol_version
        .clone();
    let mut notifications = client.passive_notifications();

    let (started, mut running) = tokio::sync::mpsc::unbounded_channel();
    let call = tokio::spawn({
        let client = client.clone();
        let tool = tool.to_owned();
        async move {
            client
                .call_tool_with_progress(&tool, &args(tool_args), move |_| {
                    let _ = started.send(());
                })
                .await
        }
    });
    peer_bounded(running.recv())
        .await
        .expect("the call reports progress");
    crash(first_pid);

    let killed = peer_bounded(call).await.expect("the call's task");
    match &killed {
        Err(Error::Transport {
            source: TransportError::ProcessExited(exit),
            ..
        }) => {
            assert!(exit.to_string().contains("SIGKILL"), "{exit}");
        }
        other => panic!("the killed call should fail with the exit, got {other:?}"),
    }

    let echoed = peer_bounded(client.call_tool("echo", &args(echo_args)))
        .await
        .expect("the next call goes to the restarted server");
    assert!(
        echoed.text().contains("after the crash"),
        "{}",
        echoed.text()
    );
    // server-everything also announces list changes of its own.
    let restarted = peer_bounded(async {
        loop {
            match notifications.recv().await {
                Some(
                    ServerNotification::ToolsListChanged
                    | ServerNotification::ResourcesListChanged
                    | ServerNotification::PromptsListChanged
                    | ServerNotification::Log(_),
                ) => {}
                other => return other,
            }
        }
    })
    .await;
    assert!(
        matches!(&restarted, Some(ServerNotification::Restarted { attempt: 1, cause }) if cause.contains("SIGKILL")),
        "{restarted:?}"
    );
    // The same era, a new process, the old one gone.
    assert_eq!(client.server().expect("initialized").protocol_version, era);
    let now = polled(async || {
        let pids = processes_with(&mark);
        (pids.len() == 1).then_some(pids)
    })
    .await
    .unwrap_or_else(|| panic!("one server expected, found {:?}", processes_with(&mark)));
    assert_ne!(i64::from(now[0]), i64::from(first_pid), "a new process");

    peer_bounded(client.close()).await.expect("closes");
    let gone = polled(async || processes_with(&mark).is_empty().then_some(())).await;
    assert!(gone.is_some(), "left running: {:?}", processes_with(&mark));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_modern_python_server_costs_one_call() {
    killed_mid_call(
        support::python_stdio(),
        "slow",
        serde_json::json!({"steps": 600, "delay": 0.05}),
        serde_json::json!({"message": "after the crash"}),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_legacy_everything_server_costs_one_call() {
    killed_mid_call(
        support::everything_stdio(),
        "trigger-long-running-operation",
        serde_json::json!({"duration": 30, "steps": 300}),
        serde_json::json!({"message": "after the crash"}),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_modern_server_is_listened_to_again() {
    let mark = mark();
    let config = StdioConfig {
        args: vec![
            support::peer("python/modern_listen_server.py")
                .to_string_lossy()
                .into_owned(),
        ],
        ..StdioConfig::new(support::peer(".venv/bin/python").to_string_lossy())
    };
    let transport = StdioTransport::spawn(marked(config, &mark)).expect("spawns");
    let pid = transport.pid().expect("a pid");
    let policy =
        RestartPolicy::default().with_backoff(Duration::from_millis(10), Duration::from_millis(50));
    let client = Client::connect_with(transport, ClientConfig::default().with_restart(policy))
        .await
        .expect("connects");
    let mut notifications = client.notifications();
    let mut note = peer_bounded(client.subscribe_resource("memo://note"))
        .await
        .expect("acknowledged");

    crash(pid);
    // Restarted comes once the new server has acknowledged the listen.
    let restarted = peer_bounded(async {
        loop {
            match notifications.recv().await {
                Some(ServerNotification::Restarted { .. }) => return true,
                None => return false,
                Some(_) => {}
            }
        }
    })
    .await;
    assert!(restarted);

    // The new process hears both wants: the resource and the list changes.
    let touched =
        peer_bounded(client.call_tool("touch", &args(serde_json::json!({"uri": "memo://note"}))))
            .await
            .expect("touch");
    assert!(!touched.is_error, "{}", touched.text());
    assert!(
        peer_bounded(note.updated()).await,
        "the update reached the subscription"
    );
    let added =
        peer_bounded(client.call_tool("add_tool", &args(serde_json::json!({"name": "late"}))))
            .await
            .expect("add_tool");
    assert!(!added.is_error, "{}", added.text());
    let changed = peer_bounded(async {
        loop {
            match notifications.recv().await {
                Some(ServerNotification::ToolsListChanged) => return true,
                None => return false,
                Some(_) => {}
            }
        }
    })
    .await;
    assert!(changed);
    peer_bounded(client.close()).await.expect("closes");
    let gone = polled(async || processes_with(&mark).is_empty().then_some(())).await;
    assert!(gone.is_some(), "left running: {:?}", processes_with(&mark));
}
