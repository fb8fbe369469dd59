//! What stderr shows while a call runs, against real servers: the progress
//! line on a terminal (a pseudo-terminal from util-linux's `script`) does
//! not repeat the counts the server's message carries, and fastmcp's
//! structured log messages read as text.

mod support;

use std::path::PathBuf;

use support::{golem_mcp, installed, python, python_server_script};

#[test]
fn the_progress_line_does_not_repeat_the_counts_the_message_carries() {
    // The Python peer's `slow` reports "step N/8" with progress N of 8.
    let command = format!(
        "'{}' call slow '{{\"steps\": 8, \"delay\": 0.2}}' -- '{}' '{}'",
        env!("CARGO_BIN_EXE_golem-mcp"),
        python(),
        python_server_script()
    );
    let output = std::process::Command::new("script")
        .args(["-qfec", &command, "/dev/null"])
        .output()
        .expect("util-linux's script runs");
    assert!(output.status.success(), "{output:?}");
    let screen = String::from_utf8_lossy(&output.stdout);
    assert!(screen.contains("done after 8 steps"), "{screen}");
    assert!(
        screen.contains("calling slow: step "),
        "no progress drawn: {screen:?}"
    );
    let repeated = (1..=8).any(|n| screen.contains(&format!("{n}/8 step {n}/8")));
    assert!(!repeated, "{screen:?}");
}

#[test]
fn fastmcp_log_data_reads_as_text_and_fields() {
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/py_fastmcp_log_server.py");
    // fastmcp sends log messages in the initialize era.
    golem_mcp()
        .args(["call", "work", "--protocol", "2025-11-25", "--"])
        .args([python(), installed(script)])
        .assert()
        .success()
        .stdout("done\n")
        .stderr(
            "golem-mcp: server log [info] jobs: starting\n\
             golem-mcp: server log [warning] disk almost full (free_mb=12, volume=/data)\n",
        );
}
