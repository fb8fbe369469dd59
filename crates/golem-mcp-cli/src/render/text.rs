//! The text helpers every renderer shares: whole lines, indentation, a
//! description's source indentation taken out, pretty JSON (escaping is
//! `golem-terminal`'s). It knows nothing of MCP.

use std::fmt::Write as _;

use serde::Serialize;

/// Text ending in exactly one newline (none added to an empty text).
pub fn line(text: &str) -> String {
    if text.is_empty() || text.ends_with('\n') {
        text.to_owned()
    } else {
        format!("{text}\n")
    }
}

/// Every line of `text` indented by two spaces (empty lines stay empty).
pub fn indented(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for line in text.lines() {
        if line.is_empty() {
            out.push('\n');
        } else {
            let _ = writeln!(out, "  {line}");
        }
    }
    out
}

/// A description as written in source code, its layout kept but its
/// indentation taken out, as Python's `inspect.cleandoc` does (servers send
/// docstrings as they are): the first line's leading blanks and the
/// indentation common to the other lines removed, trailing blanks and
/// leading and trailing blank lines dropped.
pub fn dedented(text: &str) -> String {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default().trim();
    let rest: Vec<&str> = lines.map(str::trim_end).collect();
    let common = rest
        .iter()
        .filter(|line| !line.is_empty())
        .map(|line| {
            line.bytes()
                .take_while(|byte| matches!(byte, b' ' | b'\t'))
                .count()
        })
        .min()
        .unwrap_or(0);
    let mut out: Vec<&str> = Vec::with_capacity(rest.len() + 1);
    out.push(first);
    // Every line that is not empty starts with at least `common` spaces
    // or tabs, one byte each: the cut is at a character boundary.
    out.extend(
        rest.iter()
            .map(|line| line.get(common..).unwrap_or_default()),
    );
    let start = out.iter().position(|line| !line.is_empty()).unwrap_or(0);
    let end = out
        .iter()
        .rposition(|line| !line.is_empty())
        .map_or(0, |last| last + 1);
    out.get(start..end).unwrap_or_default().join("\n")
}

/// `value` as indented JSON and a newline.
pub fn pretty(value: &impl Serialize) -> String {
    // Serializing values built from parsed JSON cannot fail; should it, the
    // compact form is just as valid.
    serde_json::to_string_pretty(value)
        .or_else(|_| serde_json::to_string(value))
        .map(|text| text + "\n")
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_docstrings_indentation_is_taken_out_and_its_layout_kept() {
        let docstring = "Draw shapes.\n\n    Each shape, in order:\n        circles first,\n        then squares.\n    ";
        assert_eq!(
            dedented(docstring),
            "Draw shapes.\n\nEach shape, in order:\n    circles first,\n    then squares."
        );
        assert_eq!(
            dedented("\n    Starts on the second line.\n      Indented more.\n"),
            "Starts on the second line.\n  Indented more."
        );
        assert_eq!(dedented("One line.  "), "One line.");
        assert_eq!(dedented("a\n\tb\n\tc"), "a\nb\nc");
        assert_eq!(dedented("  \n \n"), "");
    }
}
