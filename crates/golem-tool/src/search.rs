//! Local tool search: a [`ToolIndex`] ranks tools for a free-text query,
//! for an agent that offers its model a search tool instead of hundreds of
//! definitions.
//!
//! Ranking is BM25 over one document per tool whose fields weigh
//! differently: the tool's name split into words (`get_weatherForecast` is
//! `get weather forecast`) weighs most, then its title, its parameters'
//! names, its source's name (an MCP server's), its description and its
//! parameters' descriptions. Words are folded to lower case and a plural
//! `s` is dropped; a query word of three letters or more also matches the
//! words it begins (`calc` finds `calculate`), at half weight. A query that
//! is a tool's exact name ranks that tool first. Everything is local and
//! deterministic: ties keep the order the tools were indexed in.
//!
//! ```
//! use golem_tool::{Tool, ToolIndex};
//!
//! let tool = |name: &str, description: &str| {
//!     Tool::<()>::new(name, description, r#"{"type":"object"}"#, |_, _| async {
//!         Ok(String::new())
//!     })
//! };
//! let tools = [
//!     tool("get_forecast", "The weather forecast for a city.")?,
//!     tool("create_issue", "Opens an issue in a GitHub repository.")?,
//!     tool("list_commits", "Lists the commits of a branch.")?,
//! ];
//! let index = ToolIndex::new(tools.iter().map(|tool| (tool, "demo")));
//! let found = index.search("open a github issue", 5);
//! assert_eq!(found[0].name, "create_issue");
//! assert_eq!(found[0].summary, "Opens an issue in a GitHub repository.");
//! # Ok::<(), golem_tool::ToolDefinitionError>(())
//! ```

use std::collections::BTreeMap;

use serde_json::Value;

/// BM25's term-frequency saturation.
const K1: f32 = 1.2;
/// BM25's length normalisation.
const B: f32 = 0.75;
/// How much a word counts in each field of a tool.
const NAME_WEIGHT: f32 = 3.0;
const TITLE_WEIGHT: f32 = 2.0;
const PARAMETER_WEIGHT: f32 = 1.5;
const SOURCE_WEIGHT: f32 = 1.5;
const DESCRIPTION_WEIGHT: f32 = 1.0;
const PARAMETER_DESCRIPTION_WEIGHT: f32 = 0.5;
/// How much a query word counts when it only begins an indexed word.
const PREFIX_WEIGHT: f32 = 0.5;
/// The shortest query word that also matches the words it begins.
const PREFIX_MIN: usize = 3;
/// The most characters of a tool's summary line.
const SUMMARY_MAX: usize = 160;
/// Words too common to tell tools apart.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "into", "is", "it", "of",
    "on", "or", "that", "the", "this", "to", "with",
];

/// An index of tools for [`search`](ToolIndex::search). Built once for a
/// set of tools (a few milliseconds for a thousand); each query then takes
/// microseconds.
#[derive(Debug, Clone, Default)]
pub struct ToolIndex {
    /// Each tool's name and summary line, in the order indexed.
    tools: Vec<(String, String)>,
    /// Each tool's normalised name, for exact-name queries.
    normalised_names: Vec<String>,
    /// Each tool's weighted length, in words.
    lengths: Vec<f32>,
    average_length: f32,
    /// For each word, the tools it occurs in and its weighted count there.
    postings: BTreeMap<String, Vec<(u32, f32)>>,
}

/// What a [`ToolIndex`] reads of one tool.
#[derive(Debug, Clone, Copy)]
pub struct SearchEntry<'a> {
    /// The exact name a model calls it by.
    pub name: &'a str,
    /// Its title, if any.
    pub title: Option<&'a str>,
    /// Its description.
    pub description: &'a str,
    /// Its input JSON Schema, as JSON text: the top-level `properties`' names
    /// and descriptions are indexed.
    pub input_schema: &'a str,
    /// Where it comes from (an MCP server's name).
    pub source: &'a str,
}

/// One tool a [`ToolIndex::search`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolMatch<'a> {
    /// The tool's exact name: what a model must call.
    pub name: &'a str,
    /// The first line of its description, at most 160 characters.
    pub summary: &'a str,
    /// Its BM25 score for the query: higher is better.
    pub score: f32,
}

impl ToolIndex {
    /// Indexes `tools` in this order: [`SearchEntry`]s, or (through its
    /// `From`) pairs of a [`Tool`](crate::Tool) and the name of where it
    /// comes from (an MCP server's name, say).
    pub fn new<'a>(tools: impl IntoIterator<Item = impl Into<SearchEntry<'a>>>) -> Self {
        let mut index = ToolIndex::default();
        for tool in tools {
            index.add(&tool.into());
        }
        let total: f32 = index.lengths.iter().sum();
        index.average_length = match index.lengths.len() {
            0 => 1.0,
            count => (total / count as f32).max(1.0),
        };
        index
    }

    /// How many tools are indexed.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether no tool is indexed.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The at most `limit` tools that best match `query`, best first; tools
    /// no word of the query matches are left out.
    pub fn search(&self, query: &str, limit: usize) -> Vec<ToolMatch<'_>> {
        let mut scores = vec![0f32; self.tools.len()];
        let mut words = Vec::new();
        split_words(query, &mut words);
        words.sort_unstable();
        words.dedup();
        for word in &words {
            if let Some(postings) = self.postings.get(word) {
                self.score(postings, 1.0, &mut scores);
            }
            if word.len() >= PREFIX_MIN {
                let longer = self
                    .postings
                    .range::<str, _>((
                        std::ops::Bound::Excluded(word.as_str()),
                        std::ops::Bound::Unbounded,
                    ))
                    .take_while(|(indexed, _)| indexed.starts_with(word.as_str()));
                for (_, postings) in longer {
                    self.score(postings, PREFIX_WEIGHT, &mut scores);
                }
            }
        }
        let exact = normalise_name(query);
        let best = scores.iter().copied().fold(0f32, f32::max);
        for (tool, name) in self.normalised_names.iter().enumerate() {
            if !exact.is_empty() && *name == exact {
                scores[tool] = best + 1.0;
            }
        }
        let mut ranked: Vec<usize> = (0..self.tools.len()).filter(|&t| scores[t] > 0.0).collect();
        // Stable: equal scores keep the indexed order.
        ranked.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
        ranked.truncate(limit);
        ranked
            .into_iter()
            .map(|tool| ToolMatch {
                name: &self.tools[tool].0,
                summary: &self.tools[tool].1,
                score: scores[tool],
            })
            .collect()
    }

    /// Adds one word's BM25 contribution, times `weight`, to `scores`.
    fn score(&self, postings: &[(u32, f32)], weight: f32, scores: &mut [f32]) {
        let count = self.tools.len() as f32;
        let found = postings.len() as f32;
        let idf = (1.0 + (count - found + 0.5) / (found + 0.5)).ln();
        for &(tool, frequency) in postings {
            let length = self.lengths[tool as usize] / self.average_length;
            let saturated = frequency * (K1 + 1.0) / (frequency + K1 * (1.0 - B + B * length));
            scores[tool as usize] += weight * idf * saturated;
        }
    }

    /// Indexes one tool.
    fn add(&mut self, tool: &SearchEntry<'_>) {
        let id = self.tools.len() as u32;
        let mut counts: BTreeMap<String, f32> = BTreeMap::new();
        let mut length = 0f32;
        let mut words = Vec::new();
        let mut count = |text: &str, weight: f32, words: &mut Vec<String>| {
            words.clear();
            split_words(text, words);
            for word in words.drain(..) {
                *counts.entry(word).or_insert(0.0) += weight;
                length += weight;
            }
        };
        count(tool.name, NAME_WEIGHT, &mut words);
        if let Some(title) = tool.title {
            count(title, TITLE_WEIGHT, &mut words);
        }
        count(tool.source, SOURCE_WEIGHT, &mut words);
        count(tool.description, DESCRIPTION_WEIGHT, &mut words);
        if let Ok(Value::Object(schema)) = serde_json::from_str::<Value>(tool.input_schema)
            && let Some(Value::Object(properties)) = schema.get("properties")
        {
            for (parameter, definition) in properties {
                count(parameter, PARAMETER_WEIGHT, &mut words);
                if let Some(text) = definition.get("description").and_then(Value::as_str) {
                    count(text, PARAMETER_DESCRIPTION_WEIGHT, &mut words);
                }
            }
        }
        for (word, frequency) in counts {
            self.postings.entry(word).or_default().push((id, frequency));
        }
        self.lengths.push(length);
        self.normalised_names.push(normalise_name(tool.name));
        self.tools
            .push((tool.name.to_owned(), summary(tool.description)));
    }
}

/// The first non-blank line of a description, whitespace collapsed, at most
/// 160 characters (cut ones end in `…`).
pub fn summary(description: &str) -> String {
    let line = description
        .lines()
        .find(|line| !line.trim().is_empty())
        .unwrap_or("");
    let collapsed = line.split_whitespace().collect::<Vec<_>>().join(" ");
    match collapsed.char_indices().nth(SUMMARY_MAX - 1) {
        Some((cut, _)) => format!("{}…", &collapsed[..cut]),
        None => collapsed,
    }
}

/// Splits `text` into lower-case words at anything not a letter or digit and
/// at camel-case humps (`getHTTPStatus` is `get http status`), drops stop
/// words and a plural `s`, and appends them to `out`.
fn split_words(text: &str, out: &mut Vec<String>) {
    let mut word = String::new();
    let mut previous: Option<char> = None;
    let chars: Vec<char> = text.chars().collect();
    for (at, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            finish_word(&mut word, out);
            previous = None;
            continue;
        }
        if let Some(before) = previous {
            let next_lower = chars.get(at + 1).is_some_and(|next| next.is_lowercase());
            let hump = c.is_uppercase()
                && (before.is_lowercase()
                    || before.is_numeric()
                    || (before.is_uppercase() && next_lower));
            if hump {
                finish_word(&mut word, out);
            }
        }
        word.extend(c.to_lowercase());
        previous = Some(c);
    }
    finish_word(&mut word, out);
}

/// Ends the word being read: kept unless a stop word, a plural `s` dropped
/// (not the `s` of `status`, `class` or `analysis`).
fn finish_word(word: &mut String, out: &mut Vec<String>) {
    if word.is_empty() {
        return;
    }
    let mut done = std::mem::take(word);
    if STOP_WORDS.contains(&done.as_str()) {
        return;
    }
    let singular = ["ss", "us", "is"].iter().all(|end| !done.ends_with(end));
    if done.len() > 3 && done.ends_with('s') && singular {
        done.pop();
    }
    out.push(done);
}

/// A name in lower case with only its letters and digits, so that
/// `Create-Issue` and `create_issue` compare equal.
fn normalise_name(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool<'a>(name: &'a str, description: &'a str, input_schema: &'a str) -> SearchEntry<'a> {
        SearchEntry {
            name,
            title: None,
            description,
            input_schema,
            source: "server",
        }
    }

    fn names(index: &ToolIndex, query: &str) -> Vec<String> {
        index
            .search(query, 10)
            .into_iter()
            .map(|found| found.name.to_owned())
            .collect()
    }

    #[test]
    fn words_split_at_separators_and_humps_without_stop_words_or_plurals() {
        let mut words = Vec::new();
        split_words("getHTTPStatus of the read_files v2Api", &mut words);
        assert_eq!(
            words,
            ["get", "http", "status", "read", "file", "v2", "api"]
        );
    }

    #[test]
    fn names_weigh_more_than_descriptions_and_parameters_count() {
        let tools = [
            tool("list_files", "Lists a directory.", r#"{"type":"object"}"#),
            tool(
                "stat",
                "Tells whether a file exists and what files it links.",
                r#"{"type":"object"}"#,
            ),
            tool(
                "fetch",
                "Fetches a web page.",
                r#"{"type":"object","properties":{"url":{"type":"string","description":"The page's address"}}}"#,
            ),
        ];
        let index = ToolIndex::new(tools);
        assert_eq!(names(&index, "files"), ["list_files", "stat"]);
        assert_eq!(names(&index, "url"), ["fetch"]);
        assert_eq!(names(&index, "address"), ["fetch"]);
        assert!(names(&index, "weather").is_empty());
    }

    #[test]
    fn an_exact_name_ranks_first_and_prefixes_match_whole_words() {
        let tools = [
            tool("calculate", "Does sums.", r#"{"type":"object"}"#),
            tool(
                "echo",
                "Echoes the echo back, echo echo.",
                r#"{"type":"object"}"#,
            ),
            tool("echo_all", "Echoes everything.", r#"{"type":"object"}"#),
        ];
        let index = ToolIndex::new(tools);
        assert_eq!(names(&index, "calc"), ["calculate"]);
        assert_eq!(names(&index, "echo-all")[0], "echo_all");
        // The source's name is searched too, and ties keep the indexed order.
        assert_eq!(names(&index, "server"), ["calculate", "echo", "echo_all"]);
    }

    #[test]
    fn summaries_are_one_bounded_line() {
        assert_eq!(summary("\n  Reads   a file.\nMore."), "Reads a file.");
        let long = "x".repeat(500);
        let cut = summary(&long);
        assert_eq!(cut.chars().count(), SUMMARY_MAX);
        assert!(cut.ends_with('…'));
        assert_eq!(
            summary("ü".repeat(200).as_str()).chars().count(),
            SUMMARY_MAX
        );
    }
}
