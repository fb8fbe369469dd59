//! The `golem-mcp` subcommands beyond tools (`resources`, `read`,
//! `prompts`, `prompt`, `complete`, `ping`) and `call`'s embedded text
//! resources, end to end against real servers nobody here wrote, installed
//! by `scripts/install-peers.sh`: `@modelcontextprotocol/server-everything`
//! (npm) and the official Python SDK's server
//! (`peers/python/mcp_py_server.py`); and a Python SDK server of ours that
//! lists nothing (`tests/fixtures/py_empty_server.py`). A missing peer
//! fails the test.

mod support;

use predicates::prelude::*;
use serde_json::json;
use support::{TempDir, everything_stdio, golem_mcp, python_stdio, stdout_json};

#[test]
fn resources_lists_uris_and_names_and_templates_with_their_flag() {
    golem_mcp()
        .arg("resources")
        .args(everything_stdio())
        .assert()
        .success()
        .stdout(predicate::function(|out: &str| {
            out.lines()
                .filter(|line| line.starts_with("demo://resource/static/document/"))
                .count()
                == 7
        }));
    golem_mcp()
        .args(["resources", "--templates"])
        .args(everything_stdio())
        .assert()
        .success()
        .stdout(
            "demo://resource/dynamic/text/{resourceId}  Dynamic Text Resource\n\
             demo://resource/dynamic/blob/{resourceId}  Dynamic Blob Resource\n",
        );
    let output = golem_mcp()
        .args(["resources", "--json"])
        .args(python_stdio())
        .output()
        .expect("runs");
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        stdout_json(&output)["resources"][0],
        json!({"uri": "note://readme", "name": "readme", "description": "A short note.",
               "mimeType": "text/plain"})
    );
}

#[test]
fn read_prints_text_and_keeps_binary_off_stdout_unless_asked() {
    golem_mcp()
        .args(["read", "note://readme"])
        .args(python_stdio())
        .assert()
        .success()
        .stdout("Hello from the Python peer.\n");
    golem_mcp()
        .args(["read", "note://logo"])
        .args(python_stdio())
        .assert()
        .success()
        .stdout(
            "[binary contents: note://logo (application/octet-stream), 4 bytes not shown; \
             --output FILE or --raw writes them]\n",
        );
    golem_mcp()
        .args(["read", "note://logo", "--raw"])
        .args(python_stdio())
        .assert()
        .success()
        .stdout(predicate::eq(&[0u8, 1, 2, 255][..]));
    let dir = TempDir::new();
    let file = dir.0.join("logo.bin");
    golem_mcp()
        .args(["read", "note://logo", "--output"])
        .arg(&file)
        .args(python_stdio())
        .assert()
        .success()
        .stdout("");
    assert_eq!(std::fs::read(&file).expect("written"), [0, 1, 2, 255]);
    let output = golem_mcp()
        .args(["read", "note://logo", "--json"])
        .args(python_stdio())
        .output()
        .expect("runs");
    let read = stdout_json(&output);
    assert_eq!(
        read["contents"],
        json!([{"uri": "note://logo", "mimeType": "application/octet-stream", "blob": "AAEC/w=="}])
    );
    // The result's _meta as sent: in 2026-07-28, the server's identity.
    assert_eq!(
        read["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "golem-py-peer"
    );
}

#[test]
fn read_of_an_unknown_resource_is_a_json_rpc_error() {
    golem_mcp()
        .args(["read", "note://nothing"])
        .args(python_stdio())
        .assert()
        .code(3)
        .stdout("")
        .stderr(predicate::str::contains(
            "resources/read note://nothing: the server answered with an error",
        ));
}

#[test]
fn prompts_and_prompt_with_arguments_checked_before_sending() {
    golem_mcp()
        .arg("prompts")
        .args(everything_stdio())
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "args-prompt city [state]  (Arguments Prompt)\n",
        ));
    golem_mcp()
        .args(["prompt", "args-prompt", r#"{"city":"Paris","state":"TX"}"#])
        .args(everything_stdio())
        .assert()
        .success()
        .stdout("[user]\nWhat's weather in Paris, TX?\n");
    golem_mcp()
        .args(["prompt", "args-prompt", "-"])
        .args(everything_stdio())
        .write_stdin(r#"{"state": "TX"}"#)
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains(
            "prompts/get args-prompt: not sent: missing required argument \"city\"; the prompt takes city (required), state",
        ));
    golem_mcp()
        .args(["prompt", "paint", r#"{"colour":"red","size":"L"}"#])
        .args(python_stdio())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown argument \"size\""));
    golem_mcp()
        .args(["prompt", "args-prompt", r#"{"city": 3}"#])
        .args(everything_stdio())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("prompt arguments are strings"));
}

#[test]
fn prompt_shows_an_embedded_resource_and_json_keeps_it_whole() {
    golem_mcp()
        .args(["prompt", "resource-prompt", r#"{"resourceType":"Text","resourceId":"4"}"#])
        .args(everything_stdio())
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "[user]\n[embedded resource: demo://resource/dynamic/text/4 (text/plain)]\nResource 4: ",
        ));
    let output = golem_mcp()
        .args([
            "prompt",
            "resource-prompt",
            r#"{"resourceType":"Blob","resourceId":"4"}"#,
            "--json",
        ])
        .args(everything_stdio())
        .output()
        .expect("runs");
    assert!(output.status.success(), "{output:?}");
    let json = stdout_json(&output);
    assert_eq!(json["messages"][1]["role"], "user");
    assert_eq!(json["messages"][1]["content"]["type"], "resource");
    assert_eq!(
        json["messages"][1]["content"]["resource"]["uri"],
        "demo://resource/dynamic/blob/4"
    );
    assert!(json["messages"][1]["content"]["resource"]["blob"].is_string());
}

#[test]
fn complete_uses_the_context_for_prompts_and_templates() {
    golem_mcp()
        .args([
            "complete",
            "--prompt",
            "completable-prompt",
            "name",
            "",
            "--context",
        ])
        .arg(r#"{"department":"Engineering"}"#)
        .args(everything_stdio())
        .assert()
        .success()
        .stdout("Alice\nBob\nCharlie\n");
    golem_mcp()
        .args(["complete", "--template", "colour://{name}", "name", "b"])
        .args(python_stdio())
        .assert()
        .success()
        .stdout("blue\n");
    let output = golem_mcp()
        .args([
            "complete",
            "--prompt",
            "paint",
            "shade",
            "",
            "--json",
            "--context",
        ])
        .arg(r#"{"colour":"green"}"#)
        .args(python_stdio())
        .output()
        .expect("runs");
    assert_eq!(
        stdout_json(&output),
        json!({"values": ["lime", "olive"], "total": 2, "hasMore": false})
    );
    golem_mcp()
        .args(["complete", "name", "x"])
        .args(everything_stdio())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--prompt"));
}

#[test]
fn prompts_and_ping_in_json() {
    let output = golem_mcp()
        .args(["prompts", "--json"])
        .args(python_stdio())
        .output()
        .expect("runs");
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        stdout_json(&output),
        json!({"prompts": [{"name": "paint", "title": "Paint",
            "description": "Ask for a painting in a colour.",
            "arguments": [{"name": "colour", "required": true}, {"name": "shade", "required": false}]}]})
    );
    let output = golem_mcp()
        .args(["ping", "--json"])
        .args(python_stdio())
        .output()
        .expect("runs");
    assert!(output.status.success(), "{output:?}");
    let json = stdout_json(&output);
    assert_eq!(json["ok"], true);
    assert!(
        json["milliseconds"].as_f64().is_some_and(|ms| ms >= 0.0),
        "{json}"
    );
}

#[test]
fn ping_answers_with_the_round_trip_time() {
    golem_mcp()
        .arg("ping")
        .args(everything_stdio())
        .assert()
        .success()
        .stdout(predicate::function(|out: &str| {
            out.strip_prefix("pong in ")
                .and_then(|rest| rest.strip_suffix(" ms\n"))
                .is_some_and(|millis| millis.parse::<f64>().is_ok())
        }));
}

#[test]
fn call_prints_an_embedded_text_resource_under_its_uri() {
    golem_mcp()
        .args(["call", "get-resource-reference", r#"{"resourceType":"Text","resourceId":5}"#])
        .args(everything_stdio())
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "\n[embedded resource: demo://resource/dynamic/text/5 (text/plain)]\nResource 5: This is a plaintext resource",
        ));
    // A blob stays a placeholder.
    golem_mcp()
        .args([
            "call",
            "get-resource-reference",
            r#"{"resourceType":"Blob","resourceId":5}"#,
        ])
        .args(everything_stdio())
        .assert()
        .success()
        .stdout(predicate::function(|out: &str| {
            out.lines().any(|line| {
                line.strip_prefix(
                    "[embedded resource: demo://resource/dynamic/blob/5 (text/plain), ",
                )
                .and_then(|rest| rest.strip_suffix(" bytes not shown]"))
                .is_some_and(|size| size.parse::<u64>().is_ok())
            })
        }));
}

/// `-- mcp-server-filesystem DIR`: a real server that offers tools only.
fn filesystem_stdio(dir: &std::path::Path) -> [String; 3] {
    let server =
        support::installed(support::peers().join("node_modules/.bin/mcp-server-filesystem"));
    ["--".into(), server, dir.display().to_string()]
}

#[test]
fn a_feature_the_server_does_not_offer_is_an_empty_listing_or_a_usage_error() {
    let dir = TempDir::new();
    for (args, listing) in [
        (vec!["prompts"], "prompts"),
        (vec!["resources"], "resources"),
        (vec!["resources", "--templates"], "resource templates"),
    ] {
        let output = golem_mcp()
            .args(&args)
            .args(filesystem_stdio(&dir.0))
            .output()
            .expect("runs");
        assert_eq!(output.status.code(), Some(0), "{args:?}: {output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(&format!("the server offers no {listing} (it declares no")),
            "{args:?}: {stderr}"
        );
        let json = golem_mcp()
            .args(&args)
            .arg("--json")
            .args(filesystem_stdio(&dir.0))
            .output()
            .expect("runs");
        assert_eq!(json.status.code(), Some(0), "{args:?}: {json:?}");
        let listed = stdout_json(&json);
        let items = listed.as_object().and_then(|object| object.values().next());
        assert_eq!(items, Some(&json!([])), "{args:?}: {listed}");
    }
    for (args, capability) in [
        (vec!["read", "file:///etc/hostname"], "\"resources\""),
        (vec!["prompt", "greet"], "\"prompts\""),
        (
            vec!["complete", "--prompt", "greet", "name", "a"],
            "\"completions\"",
        ),
    ] {
        golem_mcp()
            .args(&args)
            .args(filesystem_stdio(&dir.0))
            .assert()
            .code(2)
            .stderr(predicate::str::contains(format!(
                "it declares no {capability} capability"
            )));
    }
}

/// `-- python tests/fixtures/py_empty_server.py`: a Python SDK server that
/// declares tools, resources and prompts, and lists none.
fn empty_stdio() -> [String; 3] {
    let script = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/py_empty_server.py");
    ["--".into(), support::python(), support::installed(script)]
}

#[test]
fn an_empty_listing_says_so_on_stderr() {
    for (args, listing) in [
        (vec!["list"], "tools"),
        (vec!["prompts"], "prompts"),
        (vec!["resources"], "resources"),
        (vec!["resources", "--templates"], "resource templates"),
    ] {
        let output = golem_mcp()
            .args(&args)
            .args(empty_stdio())
            .output()
            .expect("runs");
        assert_eq!(output.status.code(), Some(0), "{args:?}: {output:?}");
        assert_eq!(output.stdout, b"", "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&output.stderr),
            format!("golem-mcp: the server lists no {listing}\n"),
            "{args:?}"
        );
    }
}
