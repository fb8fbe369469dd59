//! The examples run and print what they promise. Each test builds the
//! examples first (`cargo build -p golem-agent --example ...`, with the cargo that
//! runs the tests and in the same profile) and runs the binaries cargo
//! reports, so a stale binary from an earlier build is never run;
//! `crates/golem-mcp/tests/examples.rs` does the same for the client's
//! examples. The examples with real servers run the reference servers of
//! `peers/` (installed by `scripts/install-peers.sh`; a missing peer fails
//! the test), never `npx`.
//!
//! Every run is marked with an environment variable its servers inherit,
//! so that a server the example left running is found (and ended) by the
//! test, which then fails.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

mod support;
use support::{PATIENCE, patiently};

/// How long building the examples may take: linking two binaries whose
/// dependencies the test build has already compiled takes seconds, but a
/// cold cache on a busy machine takes minutes.
const BUILD_PATIENCE: Duration = Duration::from_secs(600);

/// The examples these tests run, built together by one cargo command.
const EXAMPLES: [&str; 5] = [
    "mcp-client",
    "mcp-http",
    "several-servers",
    "openai-agent",
    "typed-output",
];

/// The variable that marks the processes of one run.
const MARK: &str = "GOLEM_AGENT_EXAMPLE_RUN";

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

/// Runs an example with `args` and returns its standard output, checking
/// that it succeeded and left no process behind. The OpenAI variables are
/// not passed on: the examples run offline.
async fn run(name: &str, args: &[&OsStr]) -> String {
    let marked = MarkedRun::new();
    let output = patiently(
        "the example",
        tokio::process::Command::new(example(name))
            .args(args)
            .env(MARK, &marked.mark)
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .stdin(Stdio::null())
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
    marked.assert_nothing_left(name).await;
    stdout
}

/// A program under `peers/`.
fn peer(relative: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../peers/node_modules/.bin")
        .join(relative);
    assert!(
        path.exists(),
        "{} is missing: run scripts/install-peers.sh (the README's test command does)",
        path.display()
    );
    path
}

/// The processes of one run: those whose environment carries its mark.
/// Dropping it ends any still there, so a failing test leaves none.
struct MarkedRun {
    mark: String,
}

impl MarkedRun {
    fn new() -> Self {
        assert!(
            Path::new("/proc/self/environ").exists(),
            "the check for processes left behind reads /proc (Linux)"
        );
        static RUNS: AtomicUsize = AtomicUsize::new(0);
        let n = RUNS.fetch_add(1, Ordering::Relaxed);
        MarkedRun {
            mark: format!("{}-{n}", std::process::id()),
        }
    }

    /// The live processes carrying the mark (a zombie's environment reads
    /// empty).
    fn processes(&self) -> Vec<i32> {
        let wanted = format!("{MARK}={}", self.mark);
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        entries
            .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|environ| {
                    environ
                        .split(|byte| *byte == 0)
                        .any(|variable| variable == wanted.as_bytes())
                })
            })
            .collect()
    }

    /// Fails if a process of the run is still there once the example has
    /// exited (a server's end may trail the example's by a moment; nothing
    /// signals it, so this polls, bounded).
    async fn assert_nothing_left(&self, name: &str) {
        let deadline = Instant::now() + PATIENCE;
        while !self.processes().is_empty() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let left = self.processes();
        assert!(left.is_empty(), "{name} left processes running: {left:?}");
    }
}

impl Drop for MarkedRun {
    fn drop(&mut self) {
        for pid in self.processes() {
            // SAFETY: kill(2) with a pid this run's mark selected: a
            // process the test started, directly or through the example.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

#[tokio::test]
async fn mcp_client_prints_the_whole_flow() {
    let stdout = run("mcp-client", &[]).await;
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
    let stdout = run("mcp-http", &[]).await;
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

#[tokio::test]
async fn several_servers_gives_one_agent_a_tool_of_each_server() {
    // The example's own file, with the servers of peers/ in place of npx.
    let shipped = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/several-servers.json"
    ))
    .expect("the example's mcpServers file");
    let shipped = golem_agent::mcp::config::parse(&shipped, |_| None).expect("parses");
    assert_eq!(
        shipped.names().collect::<Vec<_>>(),
        ["everything", "files"],
        "the servers the test stands in for"
    );
    let notes = std::env::temp_dir().join(format!("golem-example-notes-{}", std::process::id()));
    std::fs::create_dir_all(&notes).expect("a notes directory");
    let notes = notes.canonicalize().expect("its real path");
    let servers = serde_json::json!({"mcpServers": {
        "everything": {"command": peer("mcp-server-everything"), "args": ["stdio"]},
        "files": {"command": peer("mcp-server-filesystem"), "args": [notes]}
    }});
    let file = notes.with_extension("json");
    std::fs::write(&file, servers.to_string()).expect("the mcpServers file");

    let stdout = run("several-servers", &[file.as_os_str()]).await;
    let _ = std::fs::remove_file(&file);
    let _ = std::fs::remove_dir(&notes);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[..2],
        [
            "everything: mcp-servers/everything 2.0.0",
            "files: secure-filesystem-server 0.2.0"
        ],
        "{stdout}"
    );
    // Every tool of both servers, under its server's name.
    let offered: usize = lines[2]
        .strip_prefix("tools offered: ")
        .and_then(|count| count.parse().ok())
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(offered > 20, "{stdout}");
    let directory = format!("Allowed directories: {}", notes.display());
    assert_eq!(
        lines[3..],
        [
            "everything_echo returned: Echo: hi, both",
            &format!("files_list_allowed_directories returned: {directory}"),
            &format!("answer: They said: Echo: hi, both | {directory}"),
        ],
        "{stdout}"
    );
}

#[tokio::test]
async fn openai_agent_runs_the_provider_against_its_stand_in_without_a_key() {
    let server = peer("mcp-server-everything");
    let stdout = run("openai-agent", &[server.as_os_str(), OsStr::new("stdio")]).await;
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines.first().is_some_and(|line| line
            .strip_prefix("model: stand-in at http://127.0.0.1:")
            .is_some_and(|rest| rest.ends_with("/v1"))),
        "{stdout}"
    );
    assert_eq!(
        lines[1..],
        [
            "echo returned: Echo: hello from golem",
            "answer: The echo tool answered \"Echo: hello from golem\".",
            "usage: 2 requests, 20 input tokens, 10 output tokens",
        ],
        "{stdout}"
    );
}

#[tokio::test]
async fn typed_output_decodes_a_struct_after_the_model_corrects_itself() {
    let stdout = run("typed-output", &[]).await;
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines
            .first()
            .is_some_and(|line| line.starts_with("model: stand-in at http://127.0.0.1:")),
        "{stdout}"
    );
    assert!(
        lines.get(1).is_some_and(|line| line.starts_with(
            "corrected: Your answer was rejected: the answer does not fit the schema: missing \
             field `population`"
        )),
        "{stdout}"
    );
    assert_eq!(
        lines[2..],
        [
            "answer: Oslo (Norway), about 720000 people",
            "model requests: 2"
        ],
        "{stdout}"
    );
}
