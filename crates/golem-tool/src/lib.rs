//! The Golem agent tool.
//!
//! A [`Tool<Deps>`] is what an agent offers a model: a name, a description, the JSON Schema
//! of its input (kept verbatim) and an async function that runs a call. It also carries the
//! per-tool options the agent's run loop honours: a correction budget
//! ([`Tool::max_retries`]), a [`Tool::timeout`] and whether it must run alone rather than
//! alongside other tools ([`Tool::is_sequential`]).
//!
//! A tool's function receives a [`ToolContext`] (the run's dependencies, the call id, the
//! retries so far) and the model's raw JSON arguments, and answers text or a [`ToolError`]:
//! either a correctable [`ModelRetry`] the model sees and may fix, or a fatal cause that
//! fails the run.
//!
//! [`ToolIndex`] ranks tools for a free-text query, for an agent that offers its model a
//! search tool in place of many definitions (see [`search`]).
//!
//! This crate does **not** run the agent loop, enforce timeouts or count retries (the
//! `golem` crate does), and it does not parse arguments into typed structs: the function
//! gets the exact bytes the model wrote and decides how to read them.
//!
//! ```
//! use std::sync::Arc;
//! use golem_tool::{Tool, ToolContext, ToolError};
//! use serde_json::value::RawValue;
//!
//! /// The run's dependencies: here, a greeting prefix.
//! struct Deps {
//!     greeting: String,
//! }
//!
//! let greet = Tool::new(
//!     "greet",
//!     "Greets someone by name.",
//!     r#"{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}"#,
//!     |ctx: ToolContext<Deps>, args: Box<RawValue>| async move {
//!         let args: serde_json::Value =
//!             serde_json::from_str(args.get()).map_err(ToolError::fatal)?;
//!         let Some(name) = args["name"].as_str() else {
//!             return Err(ToolError::retry("`name` must be a string"));
//!         };
//!         Ok(format!("{}, {name}!", ctx.deps.greeting))
//!     },
//! )?
//! .with_timeout(std::time::Duration::from_secs(5));
//!
//! # tokio::runtime::Builder::new_current_thread().build()?.block_on(async {
//! let deps = Arc::new(Deps { greeting: "Hello".into() });
//! let ctx = ToolContext::new(deps, "call_1", 0);
//! let args = RawValue::from_string(r#"{"name":"Ada"}"#.into())?;
//! assert_eq!(greet.call(ctx, args).await?, "Hello, Ada!");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::error::Error;
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use golem_model::{BoxFuture, Image, ModelRetry, ToolSpec};

pub mod search;
pub use search::{SearchEntry, ToolIndex, ToolMatch};
use serde_json::value::RawValue;

/// What a tool's function receives besides its arguments.
#[derive(Debug)]
#[non_exhaustive]
pub struct ToolContext<Deps> {
    /// The run's dependencies (clients, configuration, ...), shared by every tool call.
    pub deps: Arc<Deps>,
    /// The id of the model's tool call being answered.
    pub tool_call_id: String,
    /// How many times this tool has already been corrected (returned a retry) in this run.
    pub retry: u32,
    /// Where the call tells the agent it is still working (an MCP server's
    /// progress, say): each report restarts the call's idle timeout.
    pub alive: Liveness,
    /// Where the call puts images for the model beside its text (a
    /// screenshot, a chart): the agent sends them with the call's tool
    /// message.
    pub images: ToolImages,
}

impl<Deps> ToolContext<Deps> {
    /// A context for the call `tool_call_id`, after `retry` corrections of this tool.
    pub fn new(deps: Arc<Deps>, tool_call_id: impl Into<String>, retry: u32) -> Self {
        Self {
            deps,
            tool_call_id: tool_call_id.into(),
            retry,
            alive: Liveness::default(),
            images: ToolImages::default(),
        }
    }
}

/// The images a tool call gives the model beside its text. The tool
/// [`attach`](ToolImages::attach)es them; the agent
/// [`take`](ToolImages::take)s them when the call ends and sends them with
/// its tool message (providers show them to the model: Anthropic in the
/// tool result, OpenAI in a user message right after the tool results).
/// Cheap to clone; clones share the images.
///
/// ```
/// use golem_model::Image;
/// let images = golem_tool::ToolImages::default();
/// images.clone().attach(Image::base64("image/png", "iVBORw0KGgo="));
/// assert_eq!(images.take().len(), 1);
/// assert!(images.take().is_empty());
/// ```
#[derive(Clone, Debug, Default)]
pub struct ToolImages(Arc<std::sync::Mutex<Vec<Image>>>);

impl ToolImages {
    /// Adds `image` to what the call shows the model.
    pub fn attach(&self, image: Image) {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(image);
    }

    /// The images attached so far, in order, leaving none.
    pub fn take(&self) -> Vec<Image> {
        std::mem::take(
            &mut *self
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }
}

/// A running tool call's sign of life, provider-neutral: the tool calls
/// [`report`](Liveness::report) whenever it makes progress, and whoever
/// bounds the call (the agent's idle timeout) watches the count of reports
/// go up. Cheap to clone; clones share the count.
///
/// ```
/// let alive = golem_tool::Liveness::default();
/// assert_eq!(alive.reports(), 0);
/// alive.clone().report();
/// assert_eq!(alive.reports(), 1);
/// ```
#[derive(Clone, Debug, Default)]
pub struct Liveness(Arc<AtomicU64>);

impl Liveness {
    /// Says the call is still working.
    pub fn report(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    /// How many times the call said so.
    pub fn reports(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

// Manual: a derive would demand `Deps: Clone`, but only the `Arc` is cloned.
impl<Deps> Clone for ToolContext<Deps> {
    fn clone(&self) -> Self {
        Self {
            deps: Arc::clone(&self.deps),
            tool_call_id: self.tool_call_id.clone(),
            retry: self.retry,
            alive: self.alive.clone(),
            images: self.images.clone(),
        }
    }
}

/// The stored form of a tool's function: type-erased so tools of one `Deps` share a type.
type Exec<Deps> = dyn Fn(ToolContext<Deps>, Box<RawValue>) -> BoxFuture<'static, Result<String, ToolError>>
    + Send
    + Sync;

/// A tool an agent can offer to a model.
///
/// Built by [`Tool::new`] or [`Tool::from_raw_schema`], which guarantee the invariant the
/// fields are private for: a non-blank name and an input schema that is a JSON object.
/// Cloning is cheap (the function is shared behind an `Arc`).
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use golem_tool::{Tool, ToolContext, ToolError};
/// use serde_json::value::RawValue;
///
/// // A tool without dependencies (`Deps = ()`) that adds two numbers, rejecting
/// // arguments the model can fix and giving up on nothing else.
/// let add = Tool::<()>::new(
///     "add",
///     "Adds two numbers.",
///     r#"{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}"#,
///     |_ctx, args: Box<RawValue>| async move {
///         let args: serde_json::Value =
///             serde_json::from_str(args.get()).map_err(ToolError::fatal)?;
///         match (args["a"].as_f64(), args["b"].as_f64()) {
///             (Some(a), Some(b)) => Ok((a + b).to_string()),
///             _ => Err(ToolError::retry("`a` and `b` must both be numbers")),
///         }
///     },
/// )?
/// .with_max_retries(2)
/// .with_timeout(Duration::from_secs(1));
///
/// assert_eq!(add.spec().name, "add");
/// assert_eq!(add.max_retries(), Some(2));
///
/// # tokio::runtime::Builder::new_current_thread().build()?.block_on(async {
/// let call = |json: &str| {
///     let args = RawValue::from_string(json.to_owned()).expect("valid JSON");
///     add.call(ToolContext::new(Arc::new(()), "call_1", 0), args)
/// };
/// assert_eq!(call(r#"{"a":1,"b":2}"#).await?, "3");
/// let rejected = call(r#"{"a":"one","b":2}"#).await.expect_err("rejected");
/// assert!(rejected.is_retry());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Tool<Deps> {
    name: String,
    description: String,
    input_schema: Box<RawValue>,
    max_retries: Option<u32>,
    timeout: Option<Duration>,
    sequential: bool,
    title: Option<String>,
    always_loaded: bool,
    hints: ToolHints,
    exec: Arc<Exec<Deps>>,
}

/// What a tool says of its effects, as MCP's tool annotations do
/// (`readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`):
/// hints a host decides on (which calls to ask the user about), never a
/// guarantee, since a server may say anything. `None`: not said.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ToolHints {
    /// The tool does not change its environment.
    pub read_only: Option<bool>,
    /// The tool may destroy or overwrite (meaningful when not read-only).
    pub destructive: Option<bool>,
    /// Calling it again with the same arguments has no further effect.
    pub idempotent: Option<bool>,
    /// The tool reaches an open world (the web, other people), not a
    /// closed one (a local file, a database).
    pub open_world: Option<bool>,
}

impl ToolHints {
    /// A tool that only reads what is closed to the world: it changes
    /// nothing, so calling it again changes nothing either.
    pub const READ_ONLY: ToolHints = ToolHints {
        read_only: Some(true),
        destructive: Some(false),
        idempotent: Some(true),
        open_world: Some(false),
    };

    /// Whether the tool says it only reads (`read_only` is `Some(true)`).
    pub fn is_read_only(&self) -> bool {
        self.read_only == Some(true)
    }
}

impl<Deps> Tool<Deps> {
    /// Defines a tool from its schema as JSON text, kept byte for byte.
    ///
    /// `exec` is any function (typically an `async move` closure) taking the
    /// [`ToolContext`] and the model's raw arguments.
    ///
    /// # Errors
    ///
    /// [`ToolDefinitionError`] if the name is empty or blank, the schema is not JSON, or the
    /// schema is JSON but not an object.
    pub fn new<F, Fut>(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema_json: impl Into<String>,
        exec: F,
    ) -> Result<Self, ToolDefinitionError>
    where
        F: Fn(ToolContext<Deps>, Box<RawValue>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, ToolError>> + Send + 'static,
    {
        let name = name.into();
        check_name(&name)?;
        let input_schema = RawValue::from_string(input_schema_json.into()).map_err(|source| {
            ToolDefinitionError::SchemaNotJson {
                name: name.clone(),
                source,
            }
        })?;
        Self::from_raw_schema(name, description, input_schema, exec)
    }

    /// Defines a tool from a schema already held as raw JSON (e.g. the bytes an MCP server
    /// sent), kept as it is.
    ///
    /// # Errors
    ///
    /// [`ToolDefinitionError`] if the name is empty or blank or the schema is not a JSON
    /// object.
    pub fn from_raw_schema<F, Fut>(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Box<RawValue>,
        exec: F,
    ) -> Result<Self, ToolDefinitionError>
    where
        F: Fn(ToolContext<Deps>, Box<RawValue>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, ToolError>> + Send + 'static,
    {
        let name = name.into();
        check_name(&name)?;
        // A RawValue is valid JSON with no surrounding whitespace, so its first byte names
        // its kind: checking it avoids parsing (and possibly reordering) the schema.
        let found = json_kind(input_schema.get());
        if found != "an object" {
            return Err(ToolDefinitionError::SchemaNotObject { name, found });
        }
        Ok(Self {
            name,
            description: description.into(),
            input_schema,
            max_retries: None,
            timeout: None,
            sequential: false,
            title: None,
            always_loaded: false,
            hints: ToolHints::default(),
            exec: Arc::new(move |ctx, args| Box::pin(exec(ctx, args))),
        })
    }

    /// Sets how many corrections (retries) this tool may ask for in one run, replacing the
    /// agent's default budget.
    pub fn with_max_retries(mut self, max_retries: u32) -> Self {
        self.max_retries = Some(max_retries);
        self
    }

    /// Sets how long one call may go without a sign of life before the agent
    /// abandons it: an idle timeout, restarted by each report on the call's
    /// [`ToolContext::alive`] (the agent's `tool_max_time` still bounds the
    /// whole call).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sets whether calls to this tool must run alone, never concurrently with other tool
    /// calls of the same model turn (default `false`).
    pub fn sequential(mut self, sequential: bool) -> Self {
        self.sequential = sequential;
        self
    }

    /// Sets a human-readable title (an MCP tool's `title`): tool search
    /// ([`ToolIndex`]) ranks by it; models are not sent it.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets whether the tool is offered to the model on every request even
    /// when the agent offers a search tool instead of its other tools
    /// (default `false`: such an agent offers it once a search found it).
    pub fn always_loaded(mut self, always: bool) -> Self {
        self.always_loaded = always;
        self
    }

    /// Sets what the tool says of its effects (an MCP tool's annotations),
    /// for approval (default: nothing said).
    pub fn with_hints(mut self, hints: ToolHints) -> Self {
        self.hints = hints;
        self
    }

    /// What the tool says of its effects (see [`Tool::with_hints`]).
    pub fn hints(&self) -> &ToolHints {
        &self.hints
    }

    /// The name the model calls the tool by.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the tool does, written for the model.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The input JSON Schema, exactly as given (always a JSON object).
    pub fn input_schema(&self) -> &RawValue {
        &self.input_schema
    }

    /// This tool's correction budget; `None` means the agent's default applies.
    pub fn max_retries(&self) -> Option<u32> {
        self.max_retries
    }

    /// This tool's call timeout, if any.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// Whether calls to this tool must run alone (see [`Tool::sequential`]).
    pub fn is_sequential(&self) -> bool {
        self.sequential
    }

    /// The tool's title, if it has one (see [`Tool::with_title`]).
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// Whether the tool is offered on every request, search or not (see
    /// [`Tool::always_loaded`]).
    pub fn is_always_loaded(&self) -> bool {
        self.always_loaded
    }

    /// The tool as offered to the model.
    pub fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name.clone(),
            description: self.description.clone(),
            input_schema: self.input_schema.clone(),
        }
    }

    /// Runs one call. The future does not borrow the tool, so it can be spawned or raced
    /// against a timeout; dropping it cancels the call.
    pub fn call(
        &self,
        ctx: ToolContext<Deps>,
        arguments: Box<RawValue>,
    ) -> BoxFuture<'static, Result<String, ToolError>> {
        (self.exec)(ctx, arguments)
    }
}

/// A tool and the name of where it comes from, as a [`ToolIndex`] reads them.
impl<'a, Deps> From<(&'a Tool<Deps>, &'a str)> for SearchEntry<'a> {
    fn from((tool, source): (&'a Tool<Deps>, &'a str)) -> Self {
        SearchEntry {
            name: &tool.name,
            title: tool.title.as_deref(),
            description: &tool.description,
            input_schema: tool.input_schema.get(),
            source,
        }
    }
}

// Manual: a derive would demand `Deps: Clone`, but only the `Arc`-shared function is cloned.
impl<Deps> Clone for Tool<Deps> {
    fn clone(&self) -> Self {
        Self {
            name: self.name.clone(),
            description: self.description.clone(),
            input_schema: self.input_schema.clone(),
            max_retries: self.max_retries,
            timeout: self.timeout,
            sequential: self.sequential,
            title: self.title.clone(),
            always_loaded: self.always_loaded,
            hints: self.hints,
            exec: Arc::clone(&self.exec),
        }
    }
}

impl<Deps> fmt::Debug for Tool<Deps> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("input_schema", &self.input_schema.get())
            .field("max_retries", &self.max_retries)
            .field("timeout", &self.timeout)
            .field("sequential", &self.sequential)
            .field("title", &self.title)
            .field("always_loaded", &self.always_loaded)
            .field("hints", &self.hints)
            .finish_non_exhaustive()
    }
}

fn check_name(name: &str) -> Result<(), ToolDefinitionError> {
    if name.trim().is_empty() {
        return Err(ToolDefinitionError::EmptyName {
            name: name.to_owned(),
        });
    }
    Ok(())
}

/// The kind of a valid, trimmed JSON text, phrased for an error message.
fn json_kind(json: &str) -> &'static str {
    match json.as_bytes().first() {
        Some(b'{') => "an object",
        Some(b'[') => "an array",
        Some(b'"') => "a string",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        _ => "a number",
    }
}

/// Why a tool definition was refused. Every message names the tool and says what to fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolDefinitionError {
    /// The name is empty or only whitespace.
    #[error(
        "tool {name:?}: name is empty; give the tool a non-blank name the model can call it by"
    )]
    EmptyName {
        /// The name as given.
        name: String,
    },
    /// The input schema is not valid JSON.
    #[error(
        "tool {name:?}: input schema is not valid JSON ({source}); a tool's schema must be an object like {{\"type\":\"object\"}}"
    )]
    SchemaNotJson {
        /// The tool's name.
        name: String,
        /// The parse error.
        source: serde_json::Error,
    },
    /// The input schema is valid JSON but not an object.
    #[error(
        "tool {name:?}: input schema is not a JSON object (found {found}); a tool's schema must be an object like {{\"type\":\"object\"}}"
    )]
    SchemaNotObject {
        /// The tool's name.
        name: String,
        /// What was found instead, e.g. `"an array"`.
        found: &'static str,
    },
}

/// Why a tool call did not produce a result.
///
/// The agent treats the two kinds differently: a [`ToolError::Retry`] goes back to the
/// model as a correction (within the retry budget), a [`ToolError::Fatal`] ends the run.
///
/// Display shows the reason or the cause's message; `source()` returns the inner error
/// itself, so callers can walk the chain and `downcast_ref` to the original type.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The model can fix this (e.g. bad arguments); the reason is shown to it.
    #[error("{0}")]
    Retry(#[source] ModelRetry),
    /// Anything else: the cause is kept intact.
    #[error("{0}")]
    Fatal(#[source] Box<dyn Error + Send + Sync + 'static>),
}

impl ToolError {
    /// A correctable error whose `reason` the model will see.
    pub fn retry(reason: impl Into<String>) -> Self {
        Self::Retry(ModelRetry::new(reason))
    }

    /// A fatal error keeping `cause` (any error, or a message string) as its source.
    pub fn fatal(cause: impl Into<Box<dyn Error + Send + Sync + 'static>>) -> Self {
        Self::Fatal(cause.into())
    }

    /// Whether the model may correct this error.
    pub fn is_retry(&self) -> bool {
        matches!(self, Self::Retry(_))
    }

    /// The correction for the model, if this is a retry.
    pub fn as_retry(&self) -> Option<&ModelRetry> {
        match self {
            Self::Retry(retry) => Some(retry),
            Self::Fatal(_) => None,
        }
    }

    /// The cause, if this is fatal.
    pub fn fatal_cause(&self) -> Option<&(dyn Error + Send + Sync + 'static)> {
        match self {
            Self::Retry(_) => None,
            Self::Fatal(cause) => Some(cause.as_ref()),
        }
    }
}

impl From<ModelRetry> for ToolError {
    fn from(retry: ModelRetry) -> Self {
        Self::Retry(retry)
    }
}

/// A source of tools that may change while an agent runs: the agent asks it
/// for its tools before every model request (an MCP server's tools, say,
/// re-listed when the server announces a change).
///
/// A call already running keeps the tool it started with.
pub trait Toolset<Deps>: Send + Sync {
    /// A name for messages (a server's name): two toolsets offering the same
    /// tool name are an error naming both.
    fn name(&self) -> &str;

    /// The tools to offer for the next model request. Called once per
    /// request: keep it cheap (tools are cheap to clone).
    fn tools(&self) -> Vec<Tool<Deps>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    const OBJECT: &str = r#"{"type":"object"}"#;

    fn echo(
        ctx: ToolContext<()>,
        args: Box<RawValue>,
    ) -> BoxFuture<'static, Result<String, ToolError>> {
        Box::pin(async move { Ok(format!("{} {}", ctx.tool_call_id, args.get())) })
    }

    fn define(name: &str, schema: &str) -> Result<Tool<()>, ToolDefinitionError> {
        Tool::new(name, "test tool", schema, echo)
    }

    fn raw(json: &str) -> Box<RawValue> {
        RawValue::from_string(json.to_owned()).expect("test JSON is valid")
    }

    #[test]
    fn refuses_blank_names() {
        for name in ["", "   ", "\t\n"] {
            let err = define(name, OBJECT).expect_err("blank name refused");
            assert!(
                matches!(err, ToolDefinitionError::EmptyName { .. }),
                "{err:?}"
            );
            let msg = err.to_string();
            assert!(
                msg.starts_with(&format!("tool {name:?}: name is empty")),
                "{msg}"
            );
        }
    }

    #[test]
    fn refuses_invalid_json_schema() {
        let err = define("search", r#"{"type":"#).expect_err("invalid JSON refused");
        assert!(
            matches!(err, ToolDefinitionError::SchemaNotJson { .. }),
            "{err:?}"
        );
        let msg = err.to_string();
        assert!(
            msg.starts_with(r#"tool "search": input schema is not valid JSON"#),
            "{msg}"
        );
        assert!(err.source().is_some());
    }

    #[test]
    fn refuses_non_object_schemas() {
        for (schema, found) in [
            ("[]", "an array"),
            (r#""x""#, "a string"),
            ("3", "a number"),
            ("-0.5e3", "a number"),
            ("true", "a boolean"),
            ("null", "null"),
        ] {
            let err = define("search", schema).expect_err("non-object refused");
            assert_eq!(
                err.to_string(),
                format!(
                    r#"tool "search": input schema is not a JSON object (found {found}); a tool's schema must be an object like {{"type":"object"}}"#
                )
            );
        }
    }

    #[test]
    fn from_raw_schema_also_requires_an_object() {
        let err = Tool::<()>::from_raw_schema("mcp_tool", "", raw("[1]"), echo)
            .expect_err("array refused");
        assert!(err.to_string().contains(r#"tool "mcp_tool""#));
        let tool = Tool::<()>::from_raw_schema("mcp_tool", "", raw(OBJECT), echo).expect("valid");
        assert_eq!(tool.input_schema().get(), OBJECT);
    }

    #[test]
    fn keeps_schema_bytes_verbatim() {
        let schema = r#"{ "type" : "object" , "properties":{"z":{},"a":{}} }"#;
        let tool = define("t", schema).expect("valid");
        assert_eq!(tool.input_schema().get(), schema);
        assert_eq!(tool.spec().input_schema.get(), schema);
        assert_eq!(tool.spec().name, "t");
        assert_eq!(tool.spec().description, "test tool");
    }

    #[test]
    fn options_default_and_set() {
        let tool = define("t", OBJECT).expect("valid");
        assert_eq!(
            (tool.max_retries(), tool.timeout(), tool.is_sequential()),
            (None, None, false)
        );
        let tool = tool
            .with_max_retries(3)
            .with_timeout(Duration::from_millis(250))
            .sequential(true);
        assert_eq!(tool.max_retries(), Some(3));
        assert_eq!(tool.timeout(), Some(Duration::from_millis(250)));
        assert!(tool.is_sequential());
        let debug = format!("{tool:?}");
        assert!(
            debug.contains(r#"name: "t""#) && debug.contains("max_retries: Some(3)"),
            "{debug}"
        );
    }

    #[tokio::test]
    async fn exec_receives_deps_and_raw_args() {
        struct Deps {
            prefix: String,
        }
        let tool = Tool::new(
            "t",
            "",
            OBJECT,
            |ctx: ToolContext<Deps>, args: Box<RawValue>| async move {
                Ok(format!(
                    "{}|{}|{}|{}",
                    ctx.deps.prefix,
                    ctx.tool_call_id,
                    ctx.retry,
                    args.get()
                ))
            },
        )
        .expect("valid");
        let deps = Arc::new(Deps { prefix: "p".into() });
        let args = r#"{"b":1,  "a" : 2}"#;
        let out = tool
            .call(ToolContext::new(deps, "call_7", 2), raw(args))
            .await
            .expect("ok");
        assert_eq!(out, format!("p|call_7|2|{args}"));

        // A clone shares the same function.
        let out = tool
            .clone()
            .call(
                ToolContext::new(Arc::new(Deps { prefix: "q".into() }), "c", 0),
                raw("{}"),
            )
            .await
            .expect("ok");
        assert_eq!(out, "q|c|0|{}");
    }

    #[derive(Debug, thiserror::Error)]
    #[error("disk full")]
    struct DiskFull;

    #[tokio::test]
    async fn retry_and_fatal_are_distinct() {
        let tool = Tool::<()>::new("t", "", OBJECT, |_ctx, args: Box<RawValue>| async move {
            if args.get() == "{}" {
                Err(ModelRetry::new("give me a query").into())
            } else {
                Err(ToolError::fatal(DiskFull))
            }
        })
        .expect("valid");
        let ctx = || ToolContext::new(Arc::new(()), "c", 0);

        let retry = tool.call(ctx(), raw("{}")).await.expect_err("retry");
        assert!(retry.is_retry());
        assert_eq!(
            retry.as_retry().map(ModelRetry::reason),
            Some("give me a query")
        );
        assert!(retry.fatal_cause().is_none());
        assert_eq!(retry.to_string(), "give me a query");

        let fatal = tool.call(ctx(), raw("[]")).await.expect_err("fatal");
        assert!(!fatal.is_retry());
        assert!(fatal.as_retry().is_none());
        assert_eq!(fatal.to_string(), "disk full");
        let source = fatal.source().expect("fatal has a source");
        assert!(source.downcast_ref::<DiskFull>().is_some());
        let cause = fatal.fatal_cause().expect("fatal has a cause");
        assert!(cause.downcast_ref::<DiskFull>().is_some());
    }

    #[test]
    fn error_constructors() {
        assert!(ToolError::retry("fix it").is_retry());
        assert_eq!(
            ToolError::fatal("plain message").to_string(),
            "plain message"
        );
        let retry: ToolError = ModelRetry::new("r").into();
        assert_eq!(retry.as_retry(), Some(&ModelRetry::new("r")));
    }

    #[test]
    fn tool_and_context_are_clone_send_sync() {
        fn assert_clone_send_sync<T: Clone + Send + Sync + 'static>() {}
        // A Deps that is itself not Clone: Tool and ToolContext must not require it.
        struct NotClone;
        assert_clone_send_sync::<Tool<NotClone>>();
        assert_clone_send_sync::<ToolContext<NotClone>>();
        fn assert_send_sync<T: Send + Sync + 'static>() {}
        assert_send_sync::<ToolError>();
        assert_send_sync::<ToolDefinitionError>();
    }
}
