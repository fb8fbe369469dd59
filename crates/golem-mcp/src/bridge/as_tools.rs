//! The bridge: a server's tools as ordinary [`Tool`]s an agent can register.

use std::future::Future;
use std::sync::Arc;

use golem_model::Image;
use golem_tool::{Tool, ToolContext, ToolError, ToolHints, ToolImages};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::bridge::links;
use crate::bridge::names::model_tool_name;
use crate::error::Error;
use crate::error::OutputError;
use crate::features::tools::ToolInfo;
use crate::session::handle::Client;
use crate::wire::call_result::CallResult;
use crate::wire::content::Content;

/// The schema given to a tool whose server sent none: any object.
const ANY_OBJECT_SCHEMA: &str = r#"{"type":"object"}"#;

/// Lists the server's tools and returns each as a [`Tool<Deps>`] that calls
/// it through `client`.
///
/// Each tool carries the server's name, description and input schema
/// **verbatim** (a name no model provider accepts, such as `get.weather`
/// or one longer than 64 characters, is offered as [`model_tool_name`]
/// makes it, while calls send the server's own): the schema is the exact bytes the server sent (key order and
/// whitespace included), since it is the contract the model is shown. A tool
/// the server listed without a schema gets `{"type":"object"}`, one without a
/// description gets an empty one. The tools use no dependencies (`Deps` is
/// whatever the agent's is) and carry no retry budget, timeout or
/// sequential flag of their own; set those with the [`Tool`] builder methods.
///
/// Executing a bridged tool sends the model's raw arguments, byte for byte,
/// to `tools/call` on a clone of `client` (clones share the connection, and
/// the calls of every bridged tool are in flight on it concurrently, see
/// [`Client`]):
///
/// - the result's [`text`](crate::CallResult::text) (text items joined by
///   newlines, one placeholder line per non-text item) is the tool's result;
///   when the result has `structuredContent`, its JSON (the server's bytes)
///   follows the text, and a text item that is only that JSON serialized
///   is left out rather than shown twice (and the JSON is left out when it
///   only wraps the text in a one-field object, as `{"content": TEXT}` or
///   the Python SDK's `{"result": VALUE}`);
/// - a result of a tool with an `outputSchema` is checked against it
///   ([`ToolInfo::check_output`](crate::ToolInfo::check_output), the schema
///   compiled once per listing): a missing or mismatching
///   `structuredContent` becomes [`ToolError::Retry`] naming the mismatch,
///   so the model may call again differently; a schema that cannot be
///   compiled is fatal ([`Error::Output`]), since no call can fix it;
/// - a tool whose `execution.taskSupport` is `required` is called as a task
///   ([`Client::call_tool_as_task`], default [`TaskOptions`](crate::TaskOptions))
///   when the server offers tasks for `tools/call`; every other tool with a
///   plain call;
/// - a result flagged `isError` becomes [`ToolError::Retry`]: the model sees
///   the server's explanation and may correct its arguments, within the
///   agent's retry budget;
/// - any [`Error`] (a JSON-RPC error, a dead transport, a closed client) is
///   [`ToolError::Fatal`] with the [`Error`] itself as the cause, so callers
///   can `downcast_ref::<golem_mcp::Error>()` it or find the
///   [`ProtocolError`](crate::ProtocolError) further down its `source()`
///   chain.
///
/// Dropping a bridged tool's future (the agent's tool timeout does) abandons
/// the call; the client tells the server with `notifications/cancelled` and
/// stays usable.
///
/// # A snapshot
///
/// The result is the server's tool list at the time of the call. A server
/// whose tools change (it may announce `notifications/tools/list_changed`,
/// which this client drops) is re-bridged by calling `as_tools` again and
/// building the agent with the new list.
///
/// # Errors
///
/// What [`Client::list_tools`] returns, and [`Error::InvalidResponse`] for
/// a listed tool that cannot be a [`Tool`] (a blank name, a schema that is
/// not a JSON object), naming it.
///
/// # Cancel safety
///
/// Cancel safe: it is one [`Client::list_tools`], which is.
///
/// # Example
///
/// ```
/// use golem_mcp::memory::memory_pair;
/// use golem_mcp::{Client, LATEST_PROTOCOL_VERSION};
/// use golem_tool::{Tool, ToolContext};
/// use serde_json::{json, value::RawValue};
/// use std::sync::Arc;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// // An in-memory server offering one tool, scripted by hand.
/// let (transport, mut server) = memory_pair();
/// tokio::spawn(async move {
///     while let Some(request) = server.recv().await {
///         let id = &request["id"];
///         match request["method"].as_str() {
///             Some("initialize") => server.send(&json!({"jsonrpc": "2.0", "id": id, "result": {
///                 "protocolVersion": LATEST_PROTOCOL_VERSION,
///                 "capabilities": {"tools": {}},
///                 "serverInfo": {"name": "demo", "version": "1.0"}
///             }})),
///             // Raw bytes, to show that the schema arrives exactly as sent.
///             Some("tools/list") => server.send_raw(format!(
///                 r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[{{"name":"shout",
///                    "description":"Upper-cases its text.",
///                    "inputSchema":{{ "type": "object", "properties": {{"text": {{"type": "string"}}}} }}}}]}}}}"#
///             )),
///             Some("tools/call") => {
///                 let text = request["params"]["arguments"]["text"].as_str().unwrap_or("");
///                 let result = json!({"content": [{"type": "text", "text": text.to_uppercase()}]});
///                 server.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}))
///             }
///             // A request it does not know (the client's server/discover
///             // probe: this is a legacy server) is refused, notifications
///             // need no answer.
///             Some(_) if !id.is_null() => server.send(&json!({"jsonrpc": "2.0", "id": id,
///                 "error": {"code": -32601, "message": "Method not found"}})),
///             _ => true,
///         };
///     }
/// });
///
/// let client = Client::new(transport);
/// client.initialize().await?;
/// let tools: Vec<Tool<()>> = golem_mcp::as_tools(&client).await?;
/// assert_eq!(tools[0].name(), "shout");
/// assert_eq!(
///     tools[0].input_schema().get(),
///     r#"{ "type": "object", "properties": {"text": {"type": "string"}} }"#,
/// );
///
/// // An agent would do this for a model's call:
/// let arguments = RawValue::from_string(r#"{"text":"hi"}"#.into())?;
/// let result = tools[0].call(ToolContext::new(Arc::new(()), "call_1", 0), arguments).await?;
/// assert_eq!(result, "HI");
/// # Ok(())
/// # }
/// ```
pub async fn as_tools<Deps: Send + Sync + 'static>(
    client: &Client,
) -> Result<Vec<Tool<Deps>>, Error> {
    as_tools_prefixed(client, None, &BridgeConfig::default()).await
}

/// How bridged tools present a server's results to the model.
///
/// ```no_run
/// # async fn run(client: golem_mcp::Client) -> Result<(), golem_mcp::Error> {
/// use golem_mcp::BridgeConfig;
/// let config = BridgeConfig::default().with_read_resource_links(true);
/// let tools = golem_mcp::as_tools_with::<()>(&client, &config).await?;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BridgeConfig {
    /// Read the resource each `resource_link` item points to
    /// (`resources/read`) and give the model its text inline, under a line
    /// naming its URI; binary contents and a read that fails stay one
    /// placeholder line. Bounded: the first 10 links of a result are
    /// read, and at most 256 KiB of each text shown. Off by default: a
    /// link then is one placeholder line, and the server is asked nothing
    /// more.
    pub read_resource_links: bool,
    /// Give the model a result's images (PNG, JPEG, GIF, WebP) through the
    /// call's [`ToolImages`](golem_tool::ToolImages), each named by a line
    /// of the text (`[image: image/png, 1795 bytes, attached]`), at most 8
    /// and 5 MiB per result (the others stay placeholder lines, saying
    /// why). Off by default: each image is one placeholder line (`[image:
    /// image/png, 1795 bytes not shown]`), the seed's text-only rendering.
    /// Audio is always a placeholder line.
    pub images_to_model: bool,
    /// Which tools an agent with tool search offers on every request
    /// ([`Tool::always_loaded`](golem_tool::Tool::always_loaded)), by the
    /// server's names for them. Default: none.
    pub always_loaded: AlwaysLoaded,
}

/// Which of a server's tools are [always
/// loaded](golem_tool::Tool::always_loaded) by an agent that searches its
/// tools: offered on every request rather than found by a search.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum AlwaysLoaded {
    /// None of them (the default).
    #[default]
    None,
    /// All of them.
    All,
    /// Those named here, by the server's names.
    Tools(Vec<String>),
}

impl AlwaysLoaded {
    /// Whether the server's tool `name` is always loaded.
    pub fn covers(&self, name: &str) -> bool {
        match self {
            AlwaysLoaded::None => false,
            AlwaysLoaded::All => true,
            AlwaysLoaded::Tools(names) => names.iter().any(|listed| listed == name),
        }
    }
}

impl BridgeConfig {
    /// The same configuration, giving the model a result's images or not.
    pub fn with_images_to_model(mut self, images: bool) -> Self {
        self.images_to_model = images;
        self
    }

    /// The same configuration, with `always` tools always loaded.
    pub fn with_always_loaded(mut self, always: AlwaysLoaded) -> Self {
        self.always_loaded = always;
        self
    }

    /// The same configuration, reading linked resources inline or not.
    pub fn with_read_resource_links(mut self, read: bool) -> Self {
        self.read_resource_links = read;
        self
    }
}

/// [`as_tools`] with a [`BridgeConfig`].
///
/// Cancel safe: it is one [`Client::list_tools`], which is.
pub async fn as_tools_with<Deps: Send + Sync + 'static>(
    client: &Client,
    config: &BridgeConfig,
) -> Result<Vec<Tool<Deps>>, Error> {
    as_tools_prefixed(client, None, config).await
}

/// [`as_tools`], with each tool's name prefixed (`prefix_name`) for the
/// model and made one every provider accepts ([`model_tool_name`]), while
/// calls still name the server's tool.
pub(crate) async fn as_tools_prefixed<Deps: Send + Sync + 'static>(
    client: &Client,
    prefix: Option<&str>,
    config: &BridgeConfig,
) -> Result<Vec<Tool<Deps>>, Error> {
    let listed = client.list_tools().await?;
    bridge_listing(client, listed, prefix, config)
}

/// The tools of a listing already made (see [`as_tools_prefixed`]).
pub(crate) fn bridge_listing<Deps: Send + Sync + 'static>(
    client: &Client,
    listed: Vec<ToolInfo>,
    prefix: Option<&str>,
    config: &BridgeConfig,
) -> Result<Vec<Tool<Deps>>, Error> {
    let config = Arc::new(config.clone());
    listed
        .into_iter()
        .map(|info| {
            let exposed = exposed_name(prefix, &info.name);
            bridge(client, info, &exposed, &config)
        })
        .collect()
}

/// The name the model is offered for the server's tool `name`
/// ([`model_tool_name`]); a blank name stays blank: no tool can be made of
/// it.
pub(crate) fn exposed_name(prefix: Option<&str>, name: &str) -> String {
    match name.trim().is_empty() {
        true => name.to_owned(),
        false => model_tool_name(prefix, name),
    }
}

/// One server tool as a [`Tool`].
fn bridge<Deps: Send + Sync + 'static>(
    client: &Client,
    info: ToolInfo,
    exposed: &str,
    config: &Arc<BridgeConfig>,
) -> Result<Tool<Deps>, Error> {
    let client = client.clone();
    let bridge = Arc::clone(config);
    define(info, exposed, config, move |info| {
        move |ctx: ToolContext<Deps>, arguments: Box<RawValue>| {
            let client = client.clone();
            let info = Arc::clone(&info);
            let config = Arc::clone(&bridge);
            async move { call(&client, &info, &config, &arguments, &ctx).await }
        }
    })
}

/// A server tool as a [`Tool`] named `exposed` for the model: its
/// description, input schema (an open object schema when it has none),
/// title and whether `config` has it always loaded; `exec` makes the
/// function that runs its calls from the rest of its description.
pub(crate) fn define<Deps, F, Fut>(
    mut info: ToolInfo,
    exposed: &str,
    config: &BridgeConfig,
    exec: impl FnOnce(Arc<ToolInfo>) -> F,
) -> Result<Tool<Deps>, Error>
where
    F: Fn(ToolContext<Deps>, Box<RawValue>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<String, ToolError>> + Send + 'static,
{
    // The call needs the name, the output schema and the task support; the
    // input schema moves into the tool.
    let schema = match info.input_schema.take() {
        Some(schema) => schema,
        None => RawValue::from_string(ANY_OBJECT_SCHEMA.to_owned())
            .map_err(|error| Error::invalid_response("tools/list", error))?,
    };
    let description = info.description.take().unwrap_or_default();
    let title = info.title.clone().or_else(|| {
        info.annotations
            .as_ref()
            .and_then(|notes| notes.title.clone())
    });
    let always_loaded = config.always_loaded.covers(&info.name);
    // What the server says of the tool's effects, for a host's approval.
    let hints = info
        .annotations
        .as_ref()
        .map(|notes| ToolHints {
            read_only: notes.read_only_hint,
            destructive: notes.destructive_hint,
            idempotent: notes.idempotent_hint,
            open_world: notes.open_world_hint,
        })
        .unwrap_or_default();
    let exec = exec(Arc::new(info));
    let tool = Tool::from_raw_schema(exposed, description, schema, exec).map_err(|error| {
        Error::invalid_response(
            "tools/list",
            format!("the server's tool cannot be bridged: {error}"),
        )
    })?;
    let tool = tool.always_loaded(always_loaded).with_hints(hints);
    Ok(match title {
        Some(title) => tool.with_title(title),
        None => tool,
    })
}

/// Runs one call of a bridged tool and maps the outcome for the agent;
/// each progress report of the server's tells the agent the call is alive.
async fn call<Deps>(
    client: &Client,
    tool: &ToolInfo,
    config: &BridgeConfig,
    arguments: &RawValue,
    ctx: &ToolContext<Deps>,
) -> Result<String, ToolError> {
    let alive = &ctx.alive;
    let name = tool.name.as_str();
    // MCP tool arguments are a JSON object. Anything else is the model's
    // mistake, which it can fix: a correction, not a failed run (a server
    // would answer it with a JSON-RPC error, which is fatal).
    if !arguments.get().trim_start().starts_with('{') {
        let shown: String = arguments.get().chars().take(80).collect();
        return Err(ToolError::retry(format!(
            "the arguments of {name:?} must be a JSON object, like {{\"key\": \"value\"}}; got {shown}"
        )));
    }
    // A tool that must run as a task is called as one; every other tool
    // with a plain call, whatever the server offers.
    let result = match client
        .call_listed_tool(tool, arguments, &|| alive.report())
        .await
    {
        Ok(result) => result,
        Err(Error::Output {
            source: source @ (OutputError::Missing | OutputError::Mismatch { .. }),
            ..
        }) => {
            return Err(ToolError::retry(format!(
                "the result of {name:?} does not keep its output schema: {source}. \
                 Call it again with arguments that give a result of the declared shape, \
                 or do without it."
            )));
        }
        Err(other) => return Err(ToolError::fatal(other)),
    };
    let text = render(client, config, &result, &ctx.images).await;
    if result.is_error {
        return Err(ToolError::retry(if text.trim().is_empty() {
            format!("the tool {name:?} reported an error without an explanation")
        } else {
            text
        }));
    }
    Ok(text)
}

/// The result as the model sees it: each content item as
/// [`CallResult::text`] renders it (linked resources read inline when the
/// configuration asks), then the structured content's JSON, verbatim. A
/// text item that is that same JSON serialized is left out, and so is JSON
/// that only wraps the text ([`wraps_only`]).
async fn render(
    client: &Client,
    config: &BridgeConfig,
    result: &CallResult,
    images: &ToolImages,
) -> String {
    let structured = result.structured_content.as_deref();
    let structured_value = structured.and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok());
    let mut out = String::new();
    let mut links_read = 0;
    let mut shown = ImagesShown::default();
    for item in &result.content {
        if let (Content::Text { text }, Some(value)) = (item, &structured_value)
            && serde_json::from_str::<Value>(text).is_ok_and(|parsed| &parsed == value)
        {
            continue;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        match item {
            Content::ResourceLink { uri, .. }
                if config.read_resource_links && links_read < links::MAX_LINKS_READ =>
            {
                links_read += 1;
                links::render_read(client, uri, &mut out).await;
            }
            Content::Image { data, mime_type } if config.images_to_model => {
                shown.attach(data, mime_type, images, &mut out);
            }
            _ => item.render(&mut out),
        }
    }
    if let Some(structured) = structured
        && !wraps_only(structured_value.as_ref(), &out)
    {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(structured.get());
    }
    out
}

/// The most images one result gives the model.
const MAX_IMAGES_SHOWN: usize = 8;
/// The most bytes of images (decoded) one result gives the model.
const MAX_IMAGE_BYTES_SHOWN: usize = 5 * 1024 * 1024;
/// The image types both providers take.
const IMAGE_TYPES_SHOWN: &[&str] = &["image/png", "image/jpeg", "image/gif", "image/webp"];

/// What one result's images gave the model so far.
#[derive(Default)]
struct ImagesShown {
    count: usize,
    bytes: usize,
}

impl ImagesShown {
    /// Attaches one image for the model, with a line naming it, when its
    /// type is one models take and the result's bounds allow; otherwise a
    /// placeholder line saying why not.
    fn attach(&mut self, data: &str, mime_type: &str, images: &ToolImages, out: &mut String) {
        let bytes = crate::wire::content::base64_decoded_len(data);
        let refusal = if !IMAGE_TYPES_SHOWN.contains(&mime_type) {
            Some("not a type models take".to_owned())
        } else if !is_base64(data) {
            // A provider refuses the whole request over one bad image.
            Some("its data is not base64".to_owned())
        } else if self.count >= MAX_IMAGES_SHOWN || self.bytes + bytes > MAX_IMAGE_BYTES_SHOWN {
            Some(format!(
                "past the {MAX_IMAGES_SHOWN} images or 5 MiB one result may show"
            ))
        } else {
            None
        };
        match refusal {
            Some(why) => out.push_str(&format!(
                "[image: {mime_type}, {bytes} bytes not shown: {why}]"
            )),
            None => {
                self.count += 1;
                self.bytes += bytes;
                images.attach(Image::base64(mime_type, data));
                out.push_str(&format!("[image: {mime_type}, {bytes} bytes, attached]"));
            }
        }
    }
}

/// Whether `data` is standard base64 (with its padding), as providers take
/// it.
fn is_base64(data: &str) -> bool {
    let bytes = data.as_bytes();
    let body = bytes
        .strip_suffix(b"==")
        .or_else(|| bytes.strip_suffix(b"="))
        .unwrap_or(bytes);
    !data.is_empty()
        && bytes.len().is_multiple_of(4)
        && body
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
}

/// Whether structured content is the text already shown, wrapped in a
/// one-field object: `{"content": TEXT}` (server-filesystem) or
/// `{"result": 3}` for the text `3` (the Python SDK wraps a tool's plain
/// return value so). Showing it would only repeat the text.
fn wraps_only(structured: Option<&Value>, text: &str) -> bool {
    let Some(Value::Object(fields)) = structured else {
        return false;
    };
    let mut values = fields.values();
    match (values.next(), values.next()) {
        (Some(Value::String(value)), None) => !text.is_empty() && value == text,
        (Some(value), None) => {
            !text.is_empty() && serde_json::to_string(value).is_ok_and(|json| json == text)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_padded_standard_base64_is_attached() {
        assert!(is_base64("iVBORw0KGgo="));
        assert!(is_base64("AAAA"));
        for bad in ["", "iVBORw0KGgo", "not base64!", "AA=A", "YQ==YQ=="] {
            assert!(!is_base64(bad), "{bad:?}");
        }
        let (images, mut out) = (ToolImages::default(), String::new());
        ImagesShown::default().attach("%%%%", "image/png", &images, &mut out);
        assert_eq!(
            out,
            "[image: image/png, 3 bytes not shown: its data is not base64]"
        );
        assert!(images.take().is_empty());
    }
}
