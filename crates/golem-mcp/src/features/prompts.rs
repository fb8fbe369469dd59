//! Prompts: listing them and getting one with its arguments
//! (`prompts/list`, `prompts/get`).
//!
//! [`Client::get_prompt`] checks the arguments against the prompt's
//! declaration before anything is sent, so it needs the prompt list. The
//! client keeps the list it last fetched ([`Client::list_prompts`] fills it
//! too) and fetches it again when it has none, when the server said
//! `notifications/prompts/list_changed` since, or when the arguments do not
//! fit the kept list (a server that changes its prompts without saying so
//! is then caught before an error is reported): an error is always
//! confirmed against a fresh list.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::error::Error;
use crate::session::feature_state::KeptPrompts;
use crate::session::handle::Client;
use crate::session::paging::Page;
use crate::wire::content::Content;
use crate::wire::content::Role;
use crate::wire::prompt::Prompt;

/// What `prompts/get` answered: the prompt's messages, ready for a model.
#[derive(Debug, Clone, Deserialize)]
#[non_exhaustive]
pub struct GetPromptResult {
    /// A description of this rendering of the prompt, when given.
    #[serde(default)]
    pub description: Option<String>,
    /// The messages, in order.
    pub messages: Vec<PromptMessage>,
    /// The result's `_meta`, verbatim.
    #[serde(rename = "_meta", default)]
    pub meta: Option<Box<RawValue>>,
}

/// One message of a prompt.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct PromptMessage {
    /// Who says it.
    pub role: Role,
    /// What it says: any content kind a tool result can hold (text, image,
    /// audio, an embedded resource, a resource link), kept whole.
    pub content: Content,
}

/// One page of `prompts/list`.
#[derive(Deserialize)]
pub(crate) struct PromptsPage {
    #[serde(default)]
    prompts: Vec<Prompt>,
    #[serde(rename = "nextCursor", default)]
    next_cursor: Option<String>,
}

impl Page for PromptsPage {
    type Item = Prompt;

    fn into_parts(self) -> (Vec<Prompt>, Option<String>) {
        (self.prompts, self.next_cursor)
    }
}

#[derive(Serialize)]
struct GetPromptParams<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    arguments: &'a BTreeMap<String, String>,
}

/// Keeps `prompts`, fetched when the server had announced `changes` prompt
/// list changes.
fn keep(client: &Client, prompts: &[Prompt], changes: u64) {
    *lock(&client.features().prompts) = Some(KeptPrompts {
        prompts: prompts.into(),
        changes,
    });
}

/// The kept list, unless the server changed its prompts since (its count
/// of changes is now `changes`): a counter, not a subscription, so nothing
/// is kept of the notifications themselves.
fn kept(client: &Client, changes: u64) -> Option<Arc<[Prompt]>> {
    let mut kept = lock(&client.features().prompts);
    if kept.as_ref()?.changes != changes {
        *kept = None;
        return None;
    }
    kept.as_ref().map(|current| current.prompts.clone())
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Why `arguments` cannot be sent for prompt `name`, per the list.
fn check(prompts: &[Prompt], name: &str, arguments: &BTreeMap<String, String>) -> Option<String> {
    let Some(prompt) = prompts.iter().find(|prompt| prompt.name == name) else {
        let mut problem = format!("the server offers no prompt named {name:?}");
        match prompts.len() {
            0 => problem.push_str(" (it lists none)"),
            _ => {
                let names: Vec<&str> = prompts.iter().take(20).map(|p| p.name.as_str()).collect();
                let _ = write!(problem, "; it offers: {}", names.join(", "));
                if prompts.len() > 20 {
                    let _ = write!(problem, " and {} more", prompts.len() - 20);
                }
            }
        }
        return Some(problem);
    };
    let missing: Vec<&str> = prompt
        .arguments
        .iter()
        .filter(|argument| argument.required && !arguments.contains_key(&argument.name))
        .map(|argument| argument.name.as_str())
        .collect();
    let unknown: Vec<&str> = arguments
        .keys()
        .filter(|given| !prompt.arguments.iter().any(|a| &a.name == *given))
        .map(String::as_str)
        .collect();
    if missing.is_empty() && unknown.is_empty() {
        return None;
    }
    let mut problem = String::new();
    if !missing.is_empty() {
        let _ = write!(
            problem,
            "missing required argument{} {}",
            if missing.len() == 1 { "" } else { "s" },
            quoted(&missing)
        );
    }
    if !unknown.is_empty() {
        if !problem.is_empty() {
            problem.push_str("; ");
        }
        let _ = write!(
            problem,
            "unknown argument{} {}",
            if unknown.len() == 1 { "" } else { "s" },
            quoted(&unknown)
        );
    }
    let _ = write!(problem, "; the prompt takes {}", signature(prompt));
    Some(problem)
}

fn quoted(names: &[&str]) -> String {
    names
        .iter()
        .map(|name| format!("{name:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `city (required), state`, or `no arguments`.
fn signature(prompt: &Prompt) -> String {
    if prompt.arguments.is_empty() {
        return "no arguments".into();
    }
    prompt
        .arguments
        .iter()
        .map(|argument| match argument.required {
            true => format!("{} (required)", argument.name),
            false => argument.name.clone(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

impl Client {
    /// Lists every prompt the server offers (`prompts/list`), following
    /// every cursor with the same guards as
    /// [`list_tools`](Client::list_tools). The list is kept for
    /// [`get_prompt`](Client::get_prompt)'s checks.
    ///
    /// Cancel safe (see [`Client`]).
    ///
    /// ```no_run
    /// # async fn run(client: golem_mcp::Client) -> Result<(), golem_mcp::Error> {
    /// for prompt in client.list_prompts().await? {
    ///     let arguments: Vec<&str> = prompt.arguments.iter().map(|a| a.name.as_str()).collect();
    ///     println!("{}({})", prompt.name, arguments.join(", "));
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, Error> {
        // Counted before asking: a change announced while the list is
        // fetched marks it stale.
        let changes = self.prompt_changes();
        let prompts = self.list_all::<PromptsPage>("prompts/list").await?;
        keep(self, &prompts, changes);
        Ok(prompts)
    }

    /// Gets prompt `name` with `arguments` (`prompts/get`): any value that
    /// serializes as a JSON object of strings (a `serde_json::json!` object,
    /// a map, a struct of `String` fields), since prompt arguments are
    /// strings. Another value (`{"count": 3}`, an array) is
    /// [`Error::InvalidRequest`] naming what is wrong, before anything is
    /// sent.
    ///
    /// Before anything is sent, the arguments are checked against the
    /// prompt's declaration: a prompt the server does not list, a required
    /// argument left out, or an argument the prompt does not take is
    /// [`Error::InvalidRequest`] naming them (and what the prompt takes).
    /// The declaration comes from the list the client keeps (see the
    /// module notes: it is fetched when missing or stale, and an error is
    /// always confirmed against a fresh list).
    ///
    /// Cancel safe (see [`Client`]): dropping it abandons the list fetch or
    /// the request, whichever is under way.
    ///
    /// ```no_run
    /// # async fn run(client: golem_mcp::Client) -> Result<(), golem_mcp::Error> {
    /// let arguments = serde_json::json!({"city": "Paris"});
    /// let prompt = client.get_prompt("args-prompt", &arguments).await?;
    /// for message in &prompt.messages {
    ///     println!("{:?}: {:?}", message.role, message.content);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: &(impl Serialize + ?Sized + Sync),
    ) -> Result<GetPromptResult, Error> {
        let arguments = &string_arguments(arguments).map_err(|problem| Error::InvalidRequest {
            operation: format!("prompts/get {name}"),
            problem,
        })?;
        let fits_kept = kept(self, self.prompt_changes())
            .is_some_and(|prompts| check(&prompts, name, arguments).is_none());
        if !fits_kept {
            let prompts = self.list_prompts().await?;
            if let Some(problem) = check(&prompts, name, arguments) {
                return Err(Error::InvalidRequest {
                    operation: format!("prompts/get {name}"),
                    problem,
                });
            }
        }
        self.request(
            "prompts/get",
            Some(name),
            GetPromptParams { name, arguments },
        )
        .await
    }
}

/// `arguments` as the object of strings `prompts/get` (and a completion's
/// context) takes, or what keeps them from being one.
pub(crate) fn string_arguments(
    arguments: &(impl Serialize + ?Sized),
) -> Result<BTreeMap<String, String>, String> {
    let value = serde_json::to_value(arguments)
        .map_err(|error| format!("the arguments cannot be serialized: {error}"))?;
    let serde_json::Value::Object(members) = value else {
        return Err(format!(
            "the arguments must be a JSON object of strings, not {}",
            kind_of(&value)
        ));
    };
    members
        .into_iter()
        .map(|(key, value)| match value {
            serde_json::Value::String(text) => Ok((key, text)),
            other => Err(format!(
                "argument \"{}\" must be a string (prompt arguments are strings), not {}",
                key.escape_debug(),
                kind_of(&other)
            )),
        })
        .collect()
}

/// "a number", "an array" …: a JSON value's kind, for messages.
fn kind_of(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_must_be_an_object_of_strings() {
        assert_eq!(
            string_arguments(&serde_json::json!({"city": "Paris"})),
            Ok(given(&[("city", "Paris")]))
        );
        assert_eq!(
            string_arguments(&serde_json::json!({"count": 3})),
            Err(
                r#"argument "count" must be a string (prompt arguments are strings), not a number"#
                    .into()
            )
        );
        assert_eq!(
            string_arguments(&["city", "Paris"]),
            Err("the arguments must be a JSON object of strings, not an array".into())
        );
    }

    fn prompts() -> Vec<Prompt> {
        serde_json::from_str(
            r#"[{"name":"args","arguments":[{"name":"city","required":true},{"name":"state"},{"name":"zip","required":null}]},
                {"name":"plain","arguments":null}]"#,
        )
        .expect("valid")
    }

    fn given(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn arguments_that_fit_pass() {
        let prompts = prompts();
        assert_eq!(check(&prompts, "args", &given(&[("city", "Paris")])), None);
        assert_eq!(
            check(&prompts, "args", &given(&[("city", "P"), ("state", "S")])),
            None
        );
        assert_eq!(check(&prompts, "plain", &given(&[])), None);
    }

    #[test]
    fn missing_and_unknown_arguments_are_named() {
        let prompts = prompts();
        assert_eq!(
            check(
                &prompts,
                "args",
                &given(&[("state", "S"), ("country", "FR")])
            )
            .as_deref(),
            Some(
                "missing required argument \"city\"; unknown argument \"country\"; \
                 the prompt takes city (required), state, zip"
            )
        );
        assert_eq!(
            check(&prompts, "plain", &given(&[("a", "1"), ("b", "2")])).as_deref(),
            Some("unknown arguments \"a\", \"b\"; the prompt takes no arguments")
        );
        assert_eq!(
            check(&prompts, "nope", &given(&[])).as_deref(),
            Some("the server offers no prompt named \"nope\"; it offers: args, plain")
        );
    }
}
