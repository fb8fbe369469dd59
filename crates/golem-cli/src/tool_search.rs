//! How `golem` offers many tools (ADR 0028): `--tool-search` and each
//! config entry's `"alwaysLoad"` (`true`, or a list of the server's tool
//! names), read into what the agent and the bridge take.

use golem_agent::ToolSearch;
use golem_agent::mcp::AlwaysLoaded;
use golem_agent::mcp::config;
use serde_json::Value;

/// `--tool-search`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SearchMode {
    /// Offer a search tool in place of the tools once there are more than
    /// 30.
    Auto,
    /// Always offer a search tool in place of the tools.
    Always,
    /// Always offer every tool.
    Never,
}

impl From<SearchMode> for ToolSearch {
    fn from(mode: SearchMode) -> Self {
        match mode {
            SearchMode::Auto => ToolSearch::default(),
            SearchMode::Always => ToolSearch::Always,
            SearchMode::Never => ToolSearch::Never,
        }
    }
}

/// Entry `name`'s `"alwaysLoad"`: `true` (every tool), `false` or absent
/// (none), or a list of the server's tool names.
pub fn always_loaded(servers: &config::Servers, name: &str) -> Result<AlwaysLoaded, String> {
    let wrong = || {
        format!(
            "server {name:?}: \"alwaysLoad\" must be true, false or a list of the server's tool \
             names, like [\"read_file\"]"
        )
    };
    match servers
        .extra(name)
        .and_then(|extra| extra.get("alwaysLoad"))
    {
        None | Some(Value::Bool(false)) => Ok(AlwaysLoaded::None),
        Some(Value::Bool(true)) => Ok(AlwaysLoaded::All),
        Some(Value::Array(names)) => names
            .iter()
            .map(|name| name.as_str().map(str::to_owned).ok_or_else(wrong))
            .collect::<Result<Vec<_>, _>>()
            .map(AlwaysLoaded::Tools),
        Some(_) => Err(wrong()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(entry: &str) -> Result<AlwaysLoaded, String> {
        let json = format!(r#"{{"mcpServers":{{"fs":{{"command":"x"{entry}}}}}}}"#);
        let servers = config::parse(&json, |_| None).expect("valid config");
        always_loaded(&servers, "fs")
    }

    #[test]
    fn always_load_is_a_flag_or_a_list_of_names_and_anything_else_is_named() {
        assert_eq!(read(""), Ok(AlwaysLoaded::None));
        assert_eq!(read(r#","alwaysLoad":false"#), Ok(AlwaysLoaded::None));
        assert_eq!(read(r#","alwaysLoad":true"#), Ok(AlwaysLoaded::All));
        assert_eq!(
            read(r#","alwaysLoad":["read_file"]"#),
            Ok(AlwaysLoaded::Tools(vec!["read_file".into()]))
        );
        let wrong = read(r#","alwaysLoad":"yes""#).expect_err("refused");
        assert!(
            wrong.starts_with("server \"fs\": \"alwaysLoad\" must be"),
            "{wrong}"
        );
        assert!(read(r#","alwaysLoad":[1]"#).is_err());
    }
}
