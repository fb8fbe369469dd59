//! The examples run and print what they promise. Each test builds the
//! examples first (`cargo build -p golem-agent --example ...`, with the cargo that
//! runs the tests and in the same profile) and runs the binaries cargo
//! reports, so a stale binary from an earlier build is never run.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

mod support;
use support::patiently;

/// How long building the examples may take: linking two binaries whose
/// dependencies the test build has already compiled takes seconds, but a
/// cold cache on a busy machine takes minutes.
const BUILD_PATIENCE: Duration = Duration::from_secs(600);

/// The examples these tests run, built together by one cargo command.
const EXAMPLES: [&str; 2] = ["mcp-client", "mcp-http"];

/// The freshly built binary of example `name`.
fn example(name: &str) -> PathBuf {
    static BUILT: OnceLock<Result<HashMap<String, PathBuf>, String>> = OnceLock::new();
    match BUILT.get_or_init(build_examples) {
        Ok(binaries) => binaries
            .get(name)
            .unwrap_or_else(|| panic!("cargo built no example named {name}: {binaries:?}"))
            .clone(),
        Err(error) => panic!("{error}"),
    }
}

/// Builds [`EXAMPLES`] in this test's profile and returns their binaries,
/// as cargo reports them.
fn build_examples() -> Result<HashMap<String, PathBuf>, String> {
    // This test is `target/<profile dir>/deps/examples-<hash>`.
    let me = std::env::current_exe().map_err(|error| format!("this test's path: {error}"))?;
    let profile_dir = me
        .parent()
        .and_then(Path::parent)
        .ok_or("the test binary is not in target/<profile>/deps")?;
    let profile = match profile_dir.file_name().and_then(|name| name.to_str()) {
        Some("debug") => "dev",
        Some(other) => other,
        None => return Err(format!("no profile in {}", profile_dir.display())),
    };
    // Set by cargo when it runs the tests; the one that built them otherwise.
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
    let mut command = std::process::Command::new(&cargo);
    command
        .args(["build", "-p", "golem-agent", "--profile", profile])
        .arg("--message-format=json-render-diagnostics")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for name in EXAMPLES {
        command.args(["--example", name]);
    }
    let described = format!("{command:?}");
    let mut child = command
        .spawn()
        .map_err(|error| format!("{described} did not start: {error}"))?;
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let stdout = drain(Box::new(child.stdout.take().ok_or("no stdout pipe")?));
    let stderr = drain(Box::new(child.stderr.take().ok_or("no stderr pipe")?));
    let deadline = Instant::now() + BUILD_PATIENCE;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(50));
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{described} took more than {BUILD_PATIENCE:?}"));
            }
            Err(error) => return Err(format!("waiting for {described}: {error}")),
        }
    };
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    if !status.success() {
        return Err(format!("{described} failed ({status}):\n{stderr}"));
    }
    let mut binaries = HashMap::new();
    for line in stdout.lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let is_example = message["target"]["kind"]
            .as_array()
            .is_some_and(|kinds| kinds.iter().any(|kind| kind == "example"));
        if message["reason"] != "compiler-artifact" || !is_example {
            continue;
        }
        let (Some(name), Some(executable)) = (
            message["target"]["name"].as_str(),
            message["executable"].as_str(),
        ) else {
            continue;
        };
        let executable = PathBuf::from(executable);
        // The same target directory and profile as this test, or the
        // binaries are not the ones this build of the tests goes with.
        let built_in = executable
            .parent()
            .and_then(Path::parent)
            .and_then(|dir| dir.canonicalize().ok());
        if built_in.as_deref() != profile_dir.canonicalize().ok().as_deref() {
            return Err(format!(
                "cargo built {} outside this test's {} (another target directory?)",
                executable.display(),
                profile_dir.display()
            ));
        }
        binaries.insert(name.to_owned(), executable);
    }
    Ok(binaries)
}

/// Runs an example and returns its standard output, checking it succeeded.
async fn run(name: &str) -> String {
    let output = patiently(
        "the example",
        tokio::process::Command::new(example(name))
            .kill_on_drop(true)
            .output(),
    )
    .await
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
                golem_agent::mcp::LATEST_PROTOCOL_VERSION
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
                golem_agent::mcp::LATEST_PROTOCOL_VERSION
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
