//! `list --long` against real servers: a line per parameter (name, type,
//! required or optional, default, allowed values, the first line of its
//! description), nested objects indented (each variant of a union of
//! models under a line of its own), a docstring without its source
//! indentation, a very long schema summarised; `list --json` keeps the
//! schema as the server sent it.

mod support;

use support::{golem_mcp, python_stdio, schema_stdio, stdout_json};

/// The block of `tool` in `list --long`'s output.
#[track_caller]
fn block<'a>(text: &'a str, tool: &str) -> &'a str {
    text.split("\n\n")
        .find(|block| block.starts_with(&format!("{tool}\n")))
        .unwrap_or_else(|| panic!("{tool} is not listed: {text}"))
}

#[test]
fn parameters_nested_models_defaults_and_choices_are_one_line_each() {
    let output = golem_mcp()
        .args(["list", "--long"])
        .args(schema_stdio())
        .output()
        .expect("runs");
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        block(&text, "book"),
        "book\n  Book a table.\n  parameters:\n    \
         contact: object, required\n      \
         name: string, required — Full name\n      \
         address: object, required\n        \
         city: string, required — The city.\n        \
         zip: string or null, optional, default null\n    \
         seats: integer, optional, default 2\n    \
         colour: string, optional, default \"red\", one of \"red\", \"green\"\n    \
         tags: array of string or null, optional, default null\n    \
         when: string (date-time) or null, optional, default null\n  \
         output:\n    result: string, required"
    );
}

#[test]
fn a_very_long_schema_is_summarised_and_whole_with_json() {
    let output = golem_mcp()
        .args(["list", "--long"])
        .args(schema_stdio())
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&output.stdout);
    let wide = block(&text, "wide");
    assert!(
        wide.contains("\n      field38: integer, optional, default 38\n"),
        "{wide}"
    );
    assert!(!wide.contains("field39"), "{wide}");
    assert!(
        wide.contains(
            "\n    (21 more not shown; `golem-mcp list --json` prints the whole schema)\n"
        ),
        "{wide}"
    );
    let json = golem_mcp()
        .args(["list", "--json"])
        .args(schema_stdio())
        .output()
        .expect("runs");
    let tools = stdout_json(&json);
    let schema = &tools["tools"][1]["inputSchema"];
    assert_eq!(
        schema["$defs"]["Wide"]["properties"]["field59"]["default"],
        59
    );
}

#[test]
fn the_python_peers_tools_show_their_parameters() {
    let output = golem_mcp()
        .args(["list", "--long"])
        .args(python_stdio())
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        block(&text, "slow").contains(
            "\n  parameters:\n    steps: integer, required\n    delay: number, optional, default 0.1\n"
        ),
        "{text}"
    );
    assert!(
        block(&text, "refuse").contains("\n  parameters: none\n"),
        "{text}"
    );
}

#[test]
fn a_docstring_loses_its_indentation_and_each_model_of_a_union_shows_its_fields() {
    let output = golem_mcp()
        .args(["list", "--long"])
        .args(schema_stdio())
        .output()
        .expect("runs");
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8_lossy(&output.stdout);
    // The last tool listed; its description has a blank line of its own.
    let (_, draw) = text.split_once("\n\ndraw\n").expect("draw is listed last");
    assert_eq!(
        format!("draw\n{draw}"),
        "draw\n  Draw shapes.\n\n  Each shape is drawn in order:\n      circles first,\n      \
         then squares.\n  parameters:\n    \
         shape: object, required\n      \
         variant 1 of 2 (Circle):\n        \
         radius: number, required — In pixels.\n      \
         variant 2 of 2 (Square):\n        \
         side: number, required\n    \
         more: array of object, optional, default []\n      \
         variant 1 of 2 (Circle):\n        \
         radius: number, required — In pixels.\n      \
         variant 2 of 2 (Square):\n        \
         side: number, required\n    \
         maybe: object or null, optional, default null\n      \
         radius: number, required — In pixels.\n  \
         output:\n    result: string, required\n"
    );
}
