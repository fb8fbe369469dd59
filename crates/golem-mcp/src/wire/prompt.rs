//! A prompt as `prompts/list` describes it: data the `features/` layer
//! lists and checks `prompts/get` arguments against, and the session keeps
//! for it (`session/feature_state.rs`).

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;

/// One prompt a server offers, from `prompts/list`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Prompt {
    /// Its name, unique on this server: what [`Client::get_prompt`](crate::Client::get_prompt) takes.
    pub name: String,
    /// Its human-friendly title, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is for, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The arguments it takes, in the server's order.
    #[serde(default, deserialize_with = "null_as_empty")]
    pub arguments: Vec<PromptArgument>,
    /// Icons to show for it, verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Box<RawValue>>,
    /// Its `_meta`, verbatim.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<RawValue>>,
}

/// One argument a prompt takes. Argument values are strings.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PromptArgument {
    /// Its name.
    pub name: String,
    /// Its human-friendly title, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it means, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether the prompt cannot be got without it.
    #[serde(default, deserialize_with = "null_as_false")]
    pub required: bool,
}

fn null_as_false<'de, D: Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    Ok(Option::<bool>::deserialize(deserializer)?.unwrap_or(false))
}

fn null_as_empty<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<PromptArgument>, D::Error> {
    Ok(Option::<Vec<PromptArgument>>::deserialize(deserializer)?.unwrap_or_default())
}
