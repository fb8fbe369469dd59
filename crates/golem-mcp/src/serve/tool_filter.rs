//! Which of a server's tools a bridge offers: `--tool` and
//! `--exclude-tool` patterns, where `*` stands for any run of characters
//! and everything else is itself.

use serde_json::Value;

/// The tools a bridge offers: those matching any included pattern (every
/// tool when none is given) and no excluded one.
///
/// ```
/// use golem_mcp::serve::ToolFilter;
///
/// let filter = ToolFilter::default()
///     .include("get-*")
///     .exclude("get-env");
/// assert!(filter.allows("get-sum"));
/// assert!(!filter.allows("get-env"));
/// assert!(!filter.allows("echo"));
/// ```
#[derive(Debug, Clone, Default)]
pub struct ToolFilter {
    include: Vec<String>,
    exclude: Vec<String>,
}

impl ToolFilter {
    /// Offers the tools whose names match `pattern` (with the others
    /// included).
    pub fn include(mut self, pattern: impl Into<String>) -> Self {
        self.include.push(pattern.into());
        self
    }

    /// Hides the tools whose names match `pattern`, included or not.
    pub fn exclude(mut self, pattern: impl Into<String>) -> Self {
        self.exclude.push(pattern.into());
        self
    }

    /// Whether nothing is filtered.
    pub fn is_empty(&self) -> bool {
        self.include.is_empty() && self.exclude.is_empty()
    }

    /// Whether tool `name` is offered.
    pub fn allows(&self, name: &str) -> bool {
        let included =
            self.include.is_empty() || self.include.iter().any(|pattern| matches(pattern, name));
        included && !self.exclude.iter().any(|pattern| matches(pattern, name))
    }

    /// A `tools/list` result without the tools not offered; `None` when it
    /// is not one (it is then forwarded as it is).
    pub(crate) fn list(&self, result: &str) -> Option<String> {
        let mut value: Value = serde_json::from_str(result).ok()?;
        let tools = value.get_mut("tools")?.as_array_mut()?;
        tools.retain(|tool| {
            tool.get("name")
                .and_then(Value::as_str)
                .is_some_and(|name| self.allows(name))
        });
        Some(value.to_string())
    }
}

/// Whether `name` matches `pattern`, `*` matching any run of characters.
fn matches(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        // No `*`: the whole name.
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stars_match_any_run() {
        assert!(matches("echo", "echo"));
        assert!(!matches("echo", "echo2"));
        assert!(matches("*", ""));
        assert!(matches("get-*", "get-sum"));
        assert!(matches("*-sum", "get-sum"));
        assert!(matches("g*t*m", "get-sum"));
        assert!(!matches("g*x*m", "get-sum"));
        assert!(matches("a*a", "aa"));
        assert!(!matches("a*a", "a"));
    }

    #[test]
    fn a_listing_keeps_only_the_offered_tools() {
        let filter = ToolFilter::default().exclude("secret*");
        let listed = filter
            .list(r#"{"tools":[{"name":"echo"},{"name":"secret-key"}],"nextCursor":"2"}"#)
            .expect("a listing");
        let value: Value = serde_json::from_str(&listed).expect("JSON");
        assert_eq!(value["tools"].as_array().map(Vec::len), Some(1));
        assert_eq!(value["nextCursor"], "2");
    }
}
