//! The examples run and print what they promise. The README's test command
//! builds them first (`cargo build --workspace --examples`: `cargo test`
//! alone compiles examples but does not put them at their plain names); this
//! finds their binaries next to its own.

use std::path::PathBuf;
use std::time::Duration;

const PATIENCE: Duration = Duration::from_secs(60);

/// `target/<profile>/examples/<name>`, from this test's
/// `target/<profile>/deps/examples-<hash>`.
fn example(name: &str) -> PathBuf {
    let me = std::env::current_exe().expect("the test binary's path");
    let profile_dir = me
        .parent()
        .and_then(|deps| deps.parent())
        .expect("the test binary is in target/<profile>/deps");
    let path = profile_dir.join("examples").join(name);
    assert!(
        path.exists(),
        "{} is missing: build the examples first with `cargo build --workspace --examples` (the \
         README's test command, scripts/test.sh, does)",
        path.display()
    );
    path
}

/// Runs an example and returns its standard output, checking it succeeded.
async fn run(name: &str) -> String {
    let output = tokio::time::timeout(
        PATIENCE,
        tokio::process::Command::new(example(name))
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the example finished in time")
    .expect("the example started");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{name} failed ({}):\nstdout:\n{stdout}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

#[tokio::test]
async fn mcp_client_prints_the_whole_flow() {
    let stdout = run("mcp-client").await;
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines,
        [
            format!(
                "server: golem-example-server {} (protocol {})",
                env!("CARGO_PKG_VERSION"),
                golem::mcp::LATEST_PROTOCOL_VERSION
            )
            .as_str(),
            "bridged tools: 1",
            "echo returned: echo: hello from golem",
            "answer: The server answered: echo: hello from golem",
            "model requests: 2",
        ],
        "{stdout}"
    );
}

#[tokio::test]
async fn mcp_http_prints_the_whole_flow_over_http() {
    let stdout = run("mcp-http").await;
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines.first().is_some_and(
            |line| line.starts_with("endpoint: http://127.0.0.1:") && line.ends_with("/mcp")
        ),
        "{stdout}"
    );
    assert_eq!(
        lines[1..],
        [
            format!(
                "server: golem-example-http-server {} (protocol {})",
                env!("CARGO_PKG_VERSION"),
                golem::mcp::LATEST_PROTOCOL_VERSION
            )
            .as_str(),
            "bridged tools: 1",
            "echo returned: echo: hello over http",
            "answer: The server answered: echo: hello over http",
            "model requests: 2",
            "endpoint saw: initialize (JSON), notifications/initialized (202), tools/list (JSON), \
             tools/call (event stream), DELETE session",
        ],
        "{stdout}"
    );
}
