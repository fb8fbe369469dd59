//! Argument completion (`completion/complete`): suggestions for a prompt
//! argument or a resource-template variable as the user types it.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};

use crate::error::Error;
use crate::features::prompts::string_arguments;
use crate::session::handle::Client;

/// What is being completed: an argument of a prompt, or a variable of a
/// resource template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompletionRef<'a> {
    /// An argument of the prompt with this name (`ref/prompt`).
    Prompt(&'a str),
    /// A variable of the resource template with this URI template
    /// (`ref/resource`), e.g. `demo://resource/dynamic/text/{resourceId}`.
    ResourceTemplate(&'a str),
}

/// The server's suggestions.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct Completion {
    /// The suggested values, best first (the protocol allows at most 100).
    pub values: Vec<String>,
    /// How many values there are in all, when the server knows.
    #[serde(default)]
    pub total: Option<u64>,
    /// Whether there are more values than those sent.
    #[serde(rename = "hasMore", default, deserialize_with = "null_as_false")]
    pub has_more: bool,
}

fn null_as_false<'de, D: Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    Ok(Option::<bool>::deserialize(deserializer)?.unwrap_or(false))
}

#[derive(Serialize)]
struct CompleteParams<'a> {
    #[serde(rename = "ref")]
    reference: RefWire<'a>,
    argument: ArgumentWire<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    context: Option<ContextWire<'a>>,
}

#[derive(Serialize)]
#[serde(tag = "type")]
enum RefWire<'a> {
    #[serde(rename = "ref/prompt")]
    Prompt { name: &'a str },
    #[serde(rename = "ref/resource")]
    Resource { uri: &'a str },
}

#[derive(Serialize)]
struct ArgumentWire<'a> {
    name: &'a str,
    value: &'a str,
}

#[derive(Serialize)]
struct ContextWire<'a> {
    arguments: &'a BTreeMap<String, String>,
}

#[derive(Deserialize)]
struct CompleteResult {
    completion: Completion,
}

impl Client {
    /// Asks the server to complete `argument` of `reference`, whose value
    /// so far is `value` (`completion/complete`; the server declares the
    /// `completions` capability). `context` holds the arguments already
    /// chosen, which the server may use to narrow the suggestions
    /// (`context.arguments`, protocol revision 2025-06-18; left out when
    /// empty): any value that serializes as a JSON object of strings (a
    /// `serde_json::json!` object, a map); another value is
    /// [`Error::InvalidRequest`], before anything is sent.
    ///
    /// Cancel safe (see [`Client`]): completion is typically asked on every
    /// keystroke, and dropping the previous request (which tells the server)
    /// is the way to keep only the latest.
    ///
    /// ```no_run
    /// # async fn run(client: golem_mcp::Client) -> Result<(), golem_mcp::Error> {
    /// use golem_mcp::CompletionRef;
    /// let chosen = serde_json::json!({"department": "Engineering"});
    /// let names = client
    ///     .complete(CompletionRef::Prompt("completable-prompt"), "name", "A", &chosen)
    ///     .await?;
    /// assert_eq!(names.values, ["Alice"]);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn complete(
        &self,
        reference: CompletionRef<'_>,
        argument: &str,
        value: &str,
        context: &(impl Serialize + ?Sized + Sync),
    ) -> Result<Completion, Error> {
        let (reference, target) = match reference {
            CompletionRef::Prompt(name) => (RefWire::Prompt { name }, name),
            CompletionRef::ResourceTemplate(uri) => (RefWire::Resource { uri }, uri),
        };
        let target = format!("{target} {argument}");
        let context = &string_arguments(context).map_err(|problem| Error::InvalidRequest {
            operation: format!("completion/complete {target}"),
            problem: problem.replace("the arguments", "the context"),
        })?;
        let params = CompleteParams {
            reference,
            argument: ArgumentWire {
                name: argument,
                value,
            },
            context: (!context.is_empty()).then_some(ContextWire { arguments: context }),
        };
        let result: CompleteResult = self
            .request("completion/complete", Some(&target), params)
            .await?;
        Ok(result.completion)
    }
}
