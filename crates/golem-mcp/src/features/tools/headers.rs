//! The listed tools' `x-mcp-header` annotations, for a modern connection
//! over HTTP: which arguments of each tool a `tools/call` mirrors into
//! `Mcp-Param-*` headers, and which tools `tools/list` leaves out because
//! their annotations are invalid (the protocol asks HTTP clients to, with
//! a warning, so that one malformed tool does not cost the others).
//!
//! The annotations of the latest listing are kept per client. A tool
//! called without having been listed is sent without them; a server that
//! then answers `HeaderMismatch` has the tools listed again and the call
//! sent once more (`call.rs`).

use std::collections::HashMap;
use std::sync::{Arc, PoisonError};

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::error::Error;
use crate::session::handle::Client;
use crate::wire::mcp_headers::HeaderParams;

/// The kept header parameters of the listed tools, by tool name.
fn lock(client: &Client) -> std::sync::MutexGuard<'_, HashMap<String, Arc<HeaderParams>>> {
    client
        .features()
        .tool_headers
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

/// `tools` without the ones whose annotations are invalid, recording the
/// others' annotations; the listing as it is when the connection mirrors
/// nothing into headers (legacy, stdio). `describe` gives a tool's name
/// and input schema.
pub(crate) fn screen<T>(
    client: &Client,
    mut tools: Vec<T>,
    describe: impl Fn(&T) -> (&str, Option<&RawValue>),
) -> Vec<T> {
    if !client.mirrors_headers() {
        return tools;
    }
    let mut annotated = HashMap::new();
    tools.retain(|tool| {
        let (name, schema) = describe(tool);
        let Some(schema) = schema else {
            return true;
        };
        // Nearly every schema has no annotation: skip the parse then.
        if memchr::memmem::find(schema.get().as_bytes(), b"x-mcp-header").is_none() {
            return true;
        }
        let parsed = serde_json::from_str::<Value>(schema.get())
            .map_err(|error| format!("its inputSchema cannot be read: {error}"))
            .and_then(|schema| {
                HeaderParams::from_schema(&schema).map_err(|error| error.to_string())
            });
        match parsed {
            Ok(params) => {
                if !params.is_empty() {
                    annotated.insert(name.to_owned(), Arc::new(params));
                }
                true
            }
            Err(problem) => {
                tracing::warn!(
                    tool = %name.escape_debug(),
                    %problem,
                    "mcp: left out a tool whose x-mcp-header annotations are invalid"
                );
                false
            }
        }
    });
    *lock(client) = annotated;
    tools
}

/// The `Mcp-Param-*` headers of a call of tool `name` with `arguments`:
/// none unless the tool was listed with annotations on a connection that
/// mirrors them. An argument that cannot be mirrored (a number beyond the
/// safe integers, an object where the schema said a string) fails the call
/// before it is sent: sent without its header, the server must refuse it.
pub(crate) fn headers_for(
    client: &Client,
    name: &str,
    arguments: &(impl Serialize + ?Sized),
) -> Result<Vec<(String, String)>, Error> {
    if !client.mirrors_headers() {
        return Ok(Vec::new());
    }
    let params = lock(client).get(name).cloned();
    let Some(params) = params else {
        return Ok(Vec::new());
    };
    // Only a tool with annotated parameters pays for reading its arguments.
    let arguments = serde_json::value::to_raw_value(arguments)
        .map_err(|error| Error::encode(&format!("tools/call {name}"), error))?;
    params
        .headers(&arguments)
        .map_err(|problem| Error::InvalidRequest {
            operation: format!("tools/call {name}"),
            problem: problem.to_string(),
        })
}
