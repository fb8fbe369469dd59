//! Tool search (ADR 0028): `golem_tool::ToolIndex` over 1,000 tools, the
//! figure issue 34 asks for (at most 1 ms per query). `build` indexes them
//! (done once per change of the tools offered); `search` answers one query
//! of a few words against the built index, for queries that match many
//! tools, few, and none.
//!
//! The tools are made up but shaped like real servers' (verb_noun names,
//! one-sentence descriptions, two or three described parameters, 40
//! servers' names), deterministically, so every run indexes the same text.
//!
//! `cargo bench -p golem-bench --bench tool_search`.

use divan::{Bencher, black_box};
use golem_tool::{SearchEntry, ToolIndex};

const VERBS: &[&str] = &[
    "get",
    "list",
    "create",
    "update",
    "delete",
    "search",
    "read",
    "write",
    "move",
    "copy",
    "run",
    "stop",
    "start",
    "fetch",
    "send",
    "render",
    "convert",
    "summarize",
    "query",
    "watch",
    "lock",
    "merge",
    "tag",
    "close",
    "open",
];
const NOUNS: &[&str] = &[
    "issue",
    "pull_request",
    "file",
    "directory",
    "commit",
    "branch",
    "page",
    "email",
    "calendar_event",
    "contact",
    "invoice",
    "customer",
    "database_row",
    "table",
    "chart",
    "image",
    "container",
    "deployment",
    "log",
    "metric",
    "alert",
    "ticket",
    "document",
    "spreadsheet",
    "message",
    "channel",
    "user",
    "repository",
    "secret",
    "forecast",
];

/// The 1,000 tools: (name, description, schema, server).
fn tools() -> Vec<(String, String, String, String)> {
    (0..1000)
        .map(|n| {
            let verb = VERBS[n % VERBS.len()];
            let noun = NOUNS[(n / VERBS.len()) % NOUNS.len()];
            let server = format!("server{}", n % 40);
            let name = format!("{server}_{verb}_{noun}_{n}");
            let description = format!(
                "{} a {} in the {server} workspace. Use it when the user asks to {verb} one; \
                 returns the {} as JSON.",
                capitalised(verb),
                noun.replace('_', " "),
                noun.replace('_', " ")
            );
            let schema = format!(
                r#"{{"type":"object","properties":{{"{noun}_id":{{"type":"string","description":"The {noun} to {verb}"}},"limit":{{"type":"integer","description":"How many at most"}},"verbose":{{"type":"boolean"}}}},"required":["{noun}_id"]}}"#
            );
            (name, description, schema, server)
        })
        .collect()
}

fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

fn entries(tools: &[(String, String, String, String)]) -> Vec<SearchEntry<'_>> {
    tools
        .iter()
        .map(|(name, description, input_schema, source)| SearchEntry {
            name,
            title: None,
            description,
            input_schema,
            source,
        })
        .collect()
}

fn main() {
    divan::main();
}

#[divan::bench(sample_count = 20)]
fn build(bencher: Bencher) {
    let tools = tools();
    bencher.bench_local(|| ToolIndex::new(entries(black_box(&tools))));
}

#[divan::bench(args = ["create github issue", "read a file", "weather forecast for a city", "zzz qqq"])]
fn search(bencher: Bencher, query: &str) {
    let tools = tools();
    let index = ToolIndex::new(entries(&tools));
    assert_eq!(index.len(), 1000);
    bencher.bench_local(|| index.search(black_box(query), 8));
}
