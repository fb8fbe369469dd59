//! `call --output DIR` against the npm reference server: an image and an
//! embedded blob are written to files named by the tool and the item's
//! index, holding the decoded bytes of the base64 the server sent, and
//! the text names them in place of the placeholders.

mod support;

use base64::Engine as _;
use serde_json::Value;
use support::{TempDir, everything_stdio, golem_mcp, stdout_json};

/// `call TOOL ARGS_JSON --json`: the result as the server sent it.
fn result_json(tool: &str, args_json: &str) -> Value {
    let output = golem_mcp()
        .args(["call", tool, args_json, "--json"])
        .args(everything_stdio())
        .output()
        .expect("runs");
    assert!(output.status.success(), "{output:?}");
    stdout_json(&output)
}

/// The bytes of a base64 string of the server's.
#[track_caller]
fn decoded(base64: &Value) -> Vec<u8> {
    let text = base64.as_str().expect("base64 text");
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .expect("valid base64")
}

#[test]
fn an_image_is_written_decoded_and_named_in_place_of_its_placeholder() {
    let temp = TempDir::new();
    // A directory that does not exist yet, two levels deep.
    let dir = temp.0.join("images/new");
    let output = golem_mcp()
        .args(["call", "get-tiny-image", "--output"])
        .arg(&dir)
        .args(everything_stdio())
        .output()
        .expect("runs");
    assert!(output.status.success(), "{output:?}");
    let file = dir.join("get-tiny-image-1.png");
    let sent = result_json("get-tiny-image", "{}");
    assert_eq!(sent["content"][1]["type"], "image", "{sent}");
    let bytes = std::fs::read(&file).expect("the image was written");
    assert_eq!(bytes, decoded(&sent["content"][1]["data"]));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains(&format!(
            "\n[image: image/png, {} bytes saved to {}]\n",
            bytes.len(),
            file.display()
        )),
        "{text}"
    );
    assert!(!text.contains("not shown"), "{text}");
}

#[test]
fn an_embedded_blob_is_written_and_an_old_file_replaced() {
    let temp = TempDir::new();
    let args =
        r#"{"name":"hello.gz","outputType":"resource","data":"data:text/plain;base64,aGVsbG8K"}"#;
    let file = temp.0.join("gzip-file-as-resource-0.gz");
    std::fs::write(&file, b"an older run's file").expect("written");
    let output = golem_mcp()
        .args(["call", "gzip-file-as-resource", args, "-o"])
        .arg(&temp.0)
        .args(everything_stdio())
        .output()
        .expect("runs");
    assert!(output.status.success(), "{output:?}");
    let sent = result_json("gzip-file-as-resource", args);
    let blob = &sent["content"][0]["resource"]["blob"];
    let bytes = std::fs::read(&file).expect("the blob was written");
    assert_eq!(bytes, decoded(blob));
    // gzip's magic number: the bytes, not the base64.
    assert_eq!(bytes[..2], [0x1f, 0x8b]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains(&format!(
            "(application/gzip), {} bytes saved to {}]",
            bytes.len(),
            file.display()
        )),
        "{text}"
    );
}

#[test]
fn without_output_the_placeholder_stays_and_a_text_result_says_nothing_was_written() {
    let output = golem_mcp()
        .args(["call", "get-tiny-image"])
        .args(everything_stdio())
        .output()
        .expect("runs");
    assert!(
        String::from_utf8_lossy(&output.stdout)
            .contains("[image: image/png, 4033 bytes not shown]"),
        "{output:?}"
    );
    let temp = TempDir::new();
    let output = golem_mcp()
        .args(["call", "echo", r#"{"message":"hi"}"#, "--output"])
        .arg(&temp.0)
        .args(everything_stdio())
        .output()
        .expect("runs");
    assert!(output.status.success(), "{output:?}");
    assert_eq!(output.stdout, b"Echo: hi\n");
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .contains("golem-mcp: the result has no image, audio or blob to write to"),
        "{output:?}"
    );
}

#[test]
fn an_output_that_is_a_file_or_with_json_is_a_usage_error() {
    let temp = TempDir::new();
    let file = temp.file("taken", "x");
    for extra in [vec![], vec!["--json"]] {
        let output = golem_mcp()
            .args(["call", "get-tiny-image", "--output"])
            .arg(&file)
            .args(&extra)
            .args(everything_stdio())
            .output()
            .expect("runs");
        assert_eq!(output.status.code(), Some(2), "{extra:?}: {output:?}");
    }
    assert_eq!(std::fs::read(&file).expect("kept"), b"x");
}
