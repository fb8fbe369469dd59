//! The examples run against the reference `server-everything` (installed
//! by `scripts/install-peers.sh`; a missing peer fails the test) and print
//! what they promise. Each test builds the examples first (`cargo build -p
//! golem-mcp --example ...`, with the cargo that runs the tests and in the
//! same profile) and runs the binaries cargo reports, so a stale binary
//! from an earlier build is never run; `crates/golem/tests/examples.rs`
//! does the same for the agent's examples.
//!
//! Every run is marked with an environment variable its servers inherit,
//! so that a server the example left running is found (and ended) by the
//! test, which then fails.

mod support;

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use support::{PEER_PATIENCE, polled, processes_with, require_proc, server_everything};

/// How long building the examples may take: linking binaries whose
/// dependencies the test build has already compiled takes seconds, but a
/// cold cache on a busy machine takes minutes.
const BUILD_PATIENCE: Duration = Duration::from_secs(600);

/// The examples these tests run, built together by one cargo command.
const EXAMPLES: [&str; 2] = ["server-requests", "resources-prompts"];

/// The variable that marks the processes of one run.
const MARK: &str = "GOLEM_MCP_EXAMPLE_RUN";

#[tokio::test]
async fn server_requests_answers_elicitation_sampling_and_roots_and_hears_the_log() {
    let workspace = std::fs::canonicalize(env!("CARGO_MANIFEST_DIR")).expect("the crate's dir");
    let stdout = run("server-requests", &workspace).await;
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines.first().copied(),
        Some("server: mcp-servers/everything 2.0.0"),
        "{stdout}"
    );
    // Seen because the client subscribed before the handshake: the tools
    // the server adds for the declared capabilities, then its log saying
    // it read the roots.
    let roots_log = "log [info] everything-server: Roots updated: 1 root(s) received from client";
    let logged_at = lines.iter().position(|line| *line == roots_log);
    let changed_at = lines
        .iter()
        .position(|line| *line == "notification: tools changed");
    assert!(
        changed_at.is_some() && logged_at.is_some() && changed_at < logged_at,
        "{stdout}"
    );
    let after_log = &lines[logged_at.unwrap_or_default() + 1..];
    let root = format!("file://{}", workspace.display());
    assert_eq!(
        after_log,
        [
            "elicitation: \"Please provide inputs for the following fields:\", 13 fields",
            // Only the name came from the handler: `Form::complete` filled
            // in the server's defaults.
            "elicitation tool: ✅ User provided the requested information! User inputs: \
             - Name: Ada Lovelace - Favorite Integer: 42 - Favorite Number: 3.14",
            "sampling: asked \"Resource trigger-sampling-request context: a haiku about Rust\"",
            "sampling tool: LLM sampling result: { \"model\": \"example-model\", \
             \"stopReason\": \"endTurn\", \"role\": \"assistant\", \"content\": { \
             \"type\": \"text\", \"text\": \"7 words read\" } }",
            &format!("roots tool: Current MCP Roots (1 total): 1. workspace URI: {root}"),
        ],
        "{stdout}"
    );
}

#[tokio::test]
async fn resources_prompts_lists_reads_expands_gets_checks_and_completes() {
    let stdout = run("resources-prompts", Path::new(env!("CARGO_MANIFEST_DIR"))).await;
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[..3],
        [
            "resources: 7",
            "read demo://resource/static/document/architecture.md: # Everything Server – Architecture",
            "template: demo://resource/dynamic/text/{resourceId}",
        ],
        "{stdout}"
    );
    // The server adds the time it made the resource.
    assert!(
        lines[3].starts_with(
            "read demo://resource/dynamic/text/7: Resource 7: This is a plaintext resource created at "
        ),
        "{stdout}"
    );
    assert_eq!(
        lines[4..],
        [
            "prompt: simple-prompt()",
            "prompt: args-prompt(city, [state])",
            "prompt: completable-prompt(department, name)",
            "prompt: resource-prompt(resourceType, resourceId)",
            "args-prompt says (User): What's weather in Paris?",
            "without its city: mcp: prompts/get args-prompt: not sent: missing required \
             argument \"city\"; the prompt takes city (required), state",
            "departments starting with S: [\"Sales\", \"Support\"]",
            "names in Engineering: [\"Alice\", \"Bob\", \"Charlie\"]",
        ],
        "{stdout}"
    );
}

/// The check the tests above end with is not vacuous: a process carrying a
/// run's mark is found, and ended when the run is dropped.
#[tokio::test]
async fn a_process_left_behind_is_found_by_its_mark_and_ended() {
    let run = MarkedRun::new();
    let mut straggler = std::process::Command::new("sleep")
        .arg("600")
        .env(MARK, &run.mark)
        .spawn()
        .expect("sleep starts");
    let pid = i32::try_from(straggler.id()).expect("a pid");
    assert_eq!(run.processes(), [pid]);
    drop(run);
    let status = tokio::time::timeout(PEER_PATIENCE, async {
        tokio::task::spawn_blocking(move || straggler.wait())
            .await
            .expect("the wait ran")
    })
    .await
    .expect("the straggler was ended")
    .expect("reaped");
    assert!(!status.success(), "{status}");
}

/// Runs example `name` in `dir` against server-everything and returns its
/// standard output, checking that it succeeded and left no process behind.
async fn run(name: &str, dir: &Path) -> String {
    let run = MarkedRun::new();
    let output = tokio::time::timeout(
        PEER_PATIENCE,
        tokio::process::Command::new(example(name))
            .arg(server_everything())
            .arg("stdio")
            .current_dir(dir)
            .env(MARK, &run.mark)
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .unwrap_or_else(|_| panic!("{name} did not finish within {PEER_PATIENCE:?}"))
    .expect("the example started");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{name} failed ({}):\nstdout:\n{stdout}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    run.assert_nothing_left(name).await;
    stdout
}

/// The processes of one run: those whose environment carries its mark.
/// Dropping it ends any still there, so a failing test leaves none.
struct MarkedRun {
    mark: String,
}

impl MarkedRun {
    fn new() -> Self {
        require_proc();
        static RUNS: AtomicUsize = AtomicUsize::new(0);
        let n = RUNS.fetch_add(1, Ordering::Relaxed);
        MarkedRun {
            mark: format!("{}-{n}", std::process::id()),
        }
    }

    /// The live processes carrying the mark (a zombie's environment reads
    /// empty).
    fn processes(&self) -> Vec<i32> {
        processes_with(&format!("{MARK}={}", self.mark))
    }

    /// Fails if a process of the run is still there once the example has
    /// exited (a server's end may trail the example's by a moment; nothing
    /// signals it, so this polls, bounded).
    async fn assert_nothing_left(&self, name: &str) {
        let gone = polled(async || self.processes().is_empty().then_some(())).await;
        assert!(
            gone.is_some(),
            "{name} left processes running: {:?}",
            self.processes()
        );
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
        .args(["build", "-p", "golem-mcp", "--profile", profile])
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
