//! Which tool calls golem runs without asking (ADR 0032): the policy of
//! `--approve`, the `--allow-tool`, `--ask-tool` and `--deny-tool`
//! patterns (over the names the model is offered) and each config entry's
//! `"allowTools"`, `"askTools"` and `"denyTools"` (over the server's own
//! names). A denied tool is not offered at all ([`Screened`]); a call that
//! must be asked about goes to [`Asker`], the approver golem gives its
//! agent, which asks at the terminal (`ask.rs`) or, with nobody to ask,
//! denies it and the model is told why.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};

use golem_agent::mcp::config;
use golem_agent::model::BoxFuture;
use golem_agent::tool::{Tool, ToolHints, Toolset};
use golem_agent::{ApprovalRequest, Approver, Decision};
use serde_json::Value;

use crate::ask;
use crate::show::Output;

/// `--approve`: which tools run without asking.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ApproveMode {
    /// Tools that say they only read (readOnlyHint); ask for the others.
    #[default]
    ReadOnly,
    /// Every tool: nothing is asked.
    All,
    /// No tool: ask for every call.
    None,
}

/// A tool name pattern: `*` stands for any run of characters, anything
/// else for itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern(String);

impl Pattern {
    /// The pattern `text`.
    pub fn new(text: impl Into<String>) -> Self {
        Pattern(text.into())
    }

    /// Whether `name` matches the whole pattern.
    pub fn matches(&self, name: &str) -> bool {
        let mut parts = self.0.split('*');
        let first = parts.next().unwrap_or_default();
        let Some(mut rest) = name.strip_prefix(first) else {
            return false;
        };
        let parts: Vec<&str> = parts.collect();
        let Some((last, middle)) = parts.split_last() else {
            return rest.is_empty(); // no `*`: the name is the pattern
        };
        for part in middle {
            match rest.find(part) {
                Some(at) => rest = &rest[at + part.len()..],
                None => return false,
            }
        }
        rest.len() >= last.len() && rest.ends_with(last)
    }
}

/// Allow, ask and deny patterns.
#[derive(Debug, Clone, Default)]
pub struct ToolRules {
    /// Tools that run without asking.
    pub allow: Vec<Pattern>,
    /// Tools asked about whatever they say of themselves.
    pub ask: Vec<Pattern>,
    /// Tools never offered.
    pub deny: Vec<Pattern>,
}

/// What golem does with a tool's calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// They run without asking.
    Run,
    /// Each is asked about (until answered "always").
    Ask,
    /// The tool is not offered.
    Deny,
}

impl ToolRules {
    /// The verdict these rules give `name`, if any: deny before ask before
    /// allow.
    fn verdict(&self, name: &str) -> Option<Verdict> {
        let any = |patterns: &[Pattern]| patterns.iter().any(|pattern| pattern.matches(name));
        if any(&self.deny) {
            Some(Verdict::Deny)
        } else if any(&self.ask) {
            Some(Verdict::Ask)
        } else if any(&self.allow) {
            Some(Verdict::Run)
        } else {
            None
        }
    }
}

/// The command's approval policy.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    /// `--approve`.
    pub mode: ApproveMode,
    /// The command line's patterns, over offered names.
    pub flags: ToolRules,
    /// Each entry's patterns, over the server's own names, by server.
    pub entries: HashMap<String, ToolRules>,
}

impl Policy {
    /// The verdict for the tool `own` of `server`, offered as `offered`:
    /// a deny anywhere wins, then an ask, then an allow, then `--approve`.
    pub fn verdict(&self, server: &str, offered: &str, own: &str, hints: &ToolHints) -> Verdict {
        let entry = self
            .entries
            .get(server)
            .and_then(|rules| rules.verdict(own));
        let flag = self.flags.verdict(offered);
        let strictest = [flag, entry]
            .into_iter()
            .flatten()
            .min_by_key(|verdict| match verdict {
                Verdict::Deny => 0,
                Verdict::Ask => 1,
                Verdict::Run => 2,
            });
        if let Some(verdict) = strictest {
            return verdict;
        }
        match self.mode {
            ApproveMode::All => Verdict::Run,
            ApproveMode::None => Verdict::Ask,
            ApproveMode::ReadOnly if hints.is_read_only() => Verdict::Run,
            ApproveMode::ReadOnly => Verdict::Ask,
        }
    }
}

/// Entry `name`'s `"allowTools"`, `"askTools"` and `"denyTools"`: lists of
/// patterns over the server's own tool names.
pub fn entry_rules(servers: &config::Servers, name: &str) -> Result<ToolRules, String> {
    let extra = servers.extra(name);
    let list = |field: &str| -> Result<Vec<Pattern>, String> {
        let wrong = || {
            format!(
                "server {name:?}: {field:?} must be a list of the server's tool names, \"*\" \
                 standing for any characters, like [\"read_*\"]"
            )
        };
        match extra.and_then(|extra| extra.get(field)) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| item.as_str().map(Pattern::new).ok_or_else(wrong))
                .collect(),
            Some(_) => Err(wrong()),
        }
    };
    Ok(ToolRules {
        allow: list("allowTools")?,
        ask: list("askTools")?,
        deny: list("denyTools")?,
    })
}

/// Each server's prefix on its tools' offered names, by server name, to
/// find a tool's own name.
pub type Prefixes = HashMap<String, String>;

/// The tool's own name: `offered` without its server's prefix.
fn own_name<'a>(prefixes: &Prefixes, server: &str, offered: &'a str) -> &'a str {
    prefixes
        .get(server)
        .and_then(|prefix| offered.strip_prefix(prefix.as_str()))
        .and_then(|rest| rest.strip_prefix('_'))
        .unwrap_or(offered)
}

/// A server's toolset without the tools the policy denies.
pub struct Screened {
    /// The server's toolset.
    pub inner: Arc<dyn Toolset<()>>,
    /// The policy.
    pub policy: Arc<Policy>,
    /// The servers' prefixes.
    pub prefixes: Arc<Prefixes>,
}

impl Toolset<()> for Screened {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn tools(&self) -> Vec<Tool<()>> {
        let server = self.inner.name();
        let mut tools = self.inner.tools();
        tools.retain(|tool| {
            let own = own_name(&self.prefixes, server, tool.name());
            self.policy.verdict(server, tool.name(), own, tool.hints()) != Verdict::Deny
        });
        tools
    }
}

/// The approver golem gives its agent: a call the policy says to ask
/// about is asked about at the terminal, or denied when stdin is no
/// terminal (nobody to ask).
pub struct Asker {
    /// The policy.
    pub policy: Arc<Policy>,
    /// The servers' prefixes.
    pub prefixes: Arc<Prefixes>,
    /// Where the question is asked.
    pub output: Output,
    /// Whether someone can answer: stdin and stderr are a terminal.
    pub interactive: bool,
    /// The tools answered "always" for: for the rest of the command, a
    /// chat's later answers included (the agent's own memory of it lasts
    /// one run).
    pub approved: Mutex<HashSet<String>>,
    /// The calls approved at the question, whose line the question showed
    /// already: their start is not shown again.
    pub asked: Arc<Mutex<HashSet<String>>>,
}

impl Approver for Asker {
    fn needs_approval(&self, request: &ApprovalRequest<'_>) -> bool {
        let (server, offered) = (request.source, request.call.name.as_str());
        let own = own_name(&self.prefixes, server, offered);
        !self.approved().contains(offered)
            && self.policy.verdict(server, offered, own, request.hints) != Verdict::Run
    }

    fn decide<'a>(&'a self, request: &'a ApprovalRequest<'a>) -> BoxFuture<'a, Decision> {
        Box::pin(async move {
            let (server, offered) = (request.source, request.call.name.as_str());
            let own = own_name(&self.prefixes, server, offered);
            // Not offered, but called by its exact name: never asked about.
            if self.policy.verdict(server, offered, own, request.hints) == Verdict::Deny {
                return Decision::Deny("the user does not allow this tool (--deny-tool)".into());
            }
            if !self.interactive {
                return Decision::Deny(format!(
                    "it needs the user's approval and nobody could be asked, stdin not being \
                     a terminal; --allow-tool {} or --approve all runs it without asking",
                    request.call.name
                ));
            }
            let decision = ask::approval(
                &self.output,
                request.source,
                own,
                request.call.arguments.get(),
            )
            .await;
            if decision == Decision::ApproveTool {
                self.approved().insert(offered.to_owned());
            }
            if matches!(decision, Decision::Approve | Decision::ApproveTool) {
                self.asked
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(request.call.id.clone());
            }
            decision
        })
    }
}

impl Asker {
    fn approved(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.approved.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_whole_names_with_star_for_any_run() {
        let matches = |pattern: &str, name: &str| Pattern::new(pattern).matches(name);
        assert!(matches("write_file", "write_file"));
        assert!(!matches("write_file", "write_file2"));
        assert!(matches("write_*", "write_file"));
        assert!(matches("*_file", "write_file"));
        assert!(matches("*", "anything"));
        assert!(matches("a*b*c", "aXbYc"));
        assert!(!matches("a*b*c", "aXcYb"));
        assert!(!matches("ab*ba", "aba"), "the parts may not overlap");
        assert!(!matches("read_*", "write_file"));
    }

    #[test]
    fn deny_beats_ask_beats_allow_beats_the_mode() {
        let read_only = ToolHints {
            read_only: Some(true),
            ..ToolHints::default()
        };
        let writes = ToolHints::default();
        let mut policy = Policy::default();
        assert_eq!(
            policy.verdict("fs", "read", "read", &read_only),
            Verdict::Run
        );
        assert_eq!(
            policy.verdict("fs", "write", "write", &writes),
            Verdict::Ask
        );
        policy.flags.allow.push(Pattern::new("write"));
        assert_eq!(
            policy.verdict("fs", "write", "write", &writes),
            Verdict::Run
        );
        policy.entries.insert(
            "fs".into(),
            ToolRules {
                ask: vec![Pattern::new("wri*")],
                ..ToolRules::default()
            },
        );
        assert_eq!(
            policy.verdict("fs", "write", "write", &writes),
            Verdict::Ask,
            "the entry's ask beats the flag's allow"
        );
        policy.flags.deny.push(Pattern::new("fs_*"));
        assert_eq!(
            policy.verdict("fs", "fs_write", "write", &writes),
            Verdict::Deny,
            "flags see the offered name, entries the server's own"
        );
        let all = Policy {
            mode: ApproveMode::All,
            ..Policy::default()
        };
        assert_eq!(all.verdict("fs", "write", "write", &writes), Verdict::Run);
        let none = Policy {
            mode: ApproveMode::None,
            ..Policy::default()
        };
        assert_eq!(none.verdict("fs", "read", "read", &read_only), Verdict::Ask);
    }

    #[test]
    fn entry_lists_are_lists_of_names() {
        let servers = config::parse(
            r#"{"mcpServers": {
                "fs": {"command": "x", "denyTools": ["write_*"], "allowTools": ["list"]},
                "bad": {"command": "x", "askTools": "write_file"}
            }}"#,
            |_| None,
        )
        .expect("valid");
        let rules = entry_rules(&servers, "fs").expect("lists");
        assert_eq!(rules.deny, [Pattern::new("write_*")]);
        assert_eq!(rules.allow, [Pattern::new("list")]);
        let wrong = entry_rules(&servers, "bad").expect_err("a string");
        assert!(wrong.contains("\"askTools\" must be a list"), "{wrong}");
    }
}
