//! The client program for the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`, run by `scripts/conformance.sh`).
//!
//! The suite starts a scenario server and runs this program with the
//! server's URL as the last argument, the scenario's name in
//! `MCP_CONFORMANCE_SCENARIO` and, for some scenarios, details in
//! `MCP_CONFORMANCE_CONTEXT` (JSON). The program connects over streamable
//! HTTP as an application would: the library probes for the server's
//! protocol era (`server/discover`, falling back to `initialize`), so
//! `MCP_CONFORMANCE_PROTOCOL_VERSION` is deliberately not used to pin one.
//! It then does what the scenario checks (see [`exercise`]) and closes. It
//! answers elicitations by accepting: fields with a default are left to the
//! library to fill in (SEP-1034), the others get a plain value of their
//! type. It exits non-zero, with the reason on stderr, if any step fails.
//!
//! Servers that want authorization get it from the library's OAuth flow
//! ([`OAuthProvider`]). The "browser" is a [`RedirectFollower`]: the suite's
//! authorization servers approve at once, so it requests the authorization
//! URL and reads the redirect's `Location`. Pre-registered credentials come
//! from the context (`client_id`, and `client_secret` or `private_key_pem`
//! with `signing_algorithm`); the client-credentials scenarios use that
//! grant, and the enterprise-managed one (cross-app access) its identity
//! provider's ID token (`idp_*`); the Client ID Metadata Document URL is
//! the one the suite expects.

use std::collections::{BTreeMap, HashMap};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use golem_mcp::auth::{
    ClientAuth, CrossAppAccess, OAuthConfig, OAuthProvider, RedirectFollower, Secret,
    SigningAlgorithm, SigningKey,
};
use golem_mcp::{
    Client, ClientConfig, ElicitationRequest, ElicitationResponse, FieldKind, HttpConfig,
    HttpTransport, ToolInfo,
};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

type Failure = Box<dyn std::error::Error>;

#[tokio::main]
async fn main() -> ExitCode {
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    // The suite puts the URL last, after any arguments of the command.
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: golem-mcp-conformance SERVER_URL (with MCP_CONFORMANCE_SCENARIO set)");
        return ExitCode::from(2);
    };
    let context = std::env::var("MCP_CONFORMANCE_CONTEXT").unwrap_or_else(|_| "{}".to_owned());
    match run(&scenario, &url, &context).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("golem-mcp-conformance: scenario {scenario:?}: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Connects, does what the scenario checks, and closes.
async fn run(scenario: &str, url: &str, context: &str) -> Result<(), Failure> {
    let config =
        ClientConfig::default().with_elicitation(|request, _| async move { Ok(accept(request)) });
    let auth = OAuthProvider::new(oauth_config(scenario, &serde_json::from_str(context)?)?)?;
    let http = HttpConfig {
        auth: Some(Arc::new(auth)),
        ..HttpConfig::new(url)
    };
    let client = Client::with_config(HttpTransport::new(http)?, config);
    let server = client.initialize().await?;
    eprintln!(
        "scenario {scenario:?}: connected to {} {} ({}, {:?})",
        server.name, server.version, server.protocol_version, server.chosen
    );
    exercise(&client, scenario, context).await?;
    client.close().await?;
    Ok(())
}

/// What each scenario checks the client for. Most (the auth ones,
/// request-metadata, the MRTR and legacy ones, http-invalid-tool-headers,
/// whose invalid tools the library leaves out of the listing) only need
/// every listed tool called.
async fn exercise(client: &Client, scenario: &str, context: &str) -> Result<(), Failure> {
    match scenario {
        "tools_call" => add_numbers(client).await,
        "http-standard-headers" => {
            call_every_tool(client).await?;
            read_every_resource(client).await?;
            get_every_prompt(client).await
        }
        "http-custom-headers" => call_context_tools(client, context).await,
        // The server has no tools/call handler: the check is only that
        // listing does not fetch the schema's remote `$ref`.
        "json-schema-ref-no-deref" => list_tools(client).await.map(drop),
        "json-schema-2020-12-preservation" => echo_schema(client).await,
        _ => call_every_tool(client).await,
    }
}

/// Lists the tools, saying which the library kept.
async fn list_tools(client: &Client) -> Result<Vec<ToolInfo>, Failure> {
    let tools = client.list_tools().await?;
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_str()).collect();
    eprintln!("tools: {}", names.join(", "));
    Ok(tools)
}

/// Calls `name` with `arguments` (JSON text, sent as it is).
async fn call(client: &Client, name: &str, arguments: &RawValue) -> Result<(), Failure> {
    let result = client.call_tool(name, arguments).await?;
    eprintln!("called {name}: {}", result.text());
    Ok(())
}

/// Calls each listed tool with arguments made up from its schema.
async fn call_every_tool(client: &Client) -> Result<(), Failure> {
    for tool in list_tools(client).await? {
        let arguments = RawValue::from_string(arguments_for(&tool).to_string())?;
        call(client, &tool.name, &arguments).await?;
    }
    Ok(())
}

/// tools_call: the server adds two numbers `a` and `b`.
async fn add_numbers(client: &Client) -> Result<(), Failure> {
    let tools = list_tools(client).await?;
    if !tools.iter().any(|tool| tool.name == "add_numbers") {
        return Err("the server does not list add_numbers".into());
    }
    call(
        client,
        "add_numbers",
        &RawValue::from_string(r#"{"a":2,"b":3}"#.into())?,
    )
    .await
}

/// http-standard-headers checks the `Mcp-Method` and `Mcp-Name` headers of
/// resources/list and resources/read too.
async fn read_every_resource(client: &Client) -> Result<(), Failure> {
    for resource in client.list_resources().await? {
        let contents = client.read_resource(&resource.uri).await?.contents;
        eprintln!("read {}: {} part(s)", resource.uri, contents.len());
    }
    Ok(())
}

/// ... and of prompts/list and prompts/get, here with every required
/// argument given a plain value.
async fn get_every_prompt(client: &Client) -> Result<(), Failure> {
    for prompt in client.list_prompts().await? {
        let arguments: BTreeMap<String, String> = prompt
            .arguments
            .iter()
            .filter(|argument| argument.required)
            .map(|argument| (argument.name.clone(), "golem".to_owned()))
            .collect();
        let messages = client.get_prompt(&prompt.name, &arguments).await?.messages;
        eprintln!("got prompt {}: {} message(s)", prompt.name, messages.len());
    }
    Ok(())
}

/// http-custom-headers: the context's `toolCalls`, each `{name, arguments}`,
/// called in order with the arguments exactly as given (their values are
/// what the `Mcp-Param-*` headers are checked against). The tools are
/// listed first: the library mirrors only what the listing annotates.
async fn call_context_tools(client: &Client, context: &str) -> Result<(), Failure> {
    list_tools(client).await?;
    let context: HashMap<String, Box<RawValue>> = serde_json::from_str(context)?;
    let calls = context
        .get("toolCalls")
        .ok_or("MCP_CONFORMANCE_CONTEXT has no toolCalls")?;
    let calls: Vec<HashMap<String, Box<RawValue>>> = serde_json::from_str(calls.get())?;
    for tool_call in calls {
        let (Some(name), Some(arguments)) = (tool_call.get("name"), tool_call.get("arguments"))
        else {
            return Err("a toolCalls entry lacks its name or arguments".into());
        };
        let name: String = serde_json::from_str(name.get())?;
        call(client, &name, arguments).await?;
    }
    Ok(())
}

/// json-schema-2020-12-preservation: the echo tool is given the focal
/// tool's input schema, byte for byte as listed, to show that the library
/// keeps every keyword (`$schema`, `$defs`, `$anchor`, composition, ...).
async fn echo_schema(client: &Client) -> Result<(), Failure> {
    let tools = list_tools(client).await?;
    let schema = tools
        .iter()
        .find(|tool| tool.name == "json_schema_2020_12_tool")
        .and_then(|tool| tool.input_schema.as_deref())
        .ok_or("the server lists no json_schema_2020_12_tool with an inputSchema")?;
    let arguments = RawValue::from_string(format!(r#"{{"schema":{}}}"#, schema.get()))?;
    call(client, "json_schema_echo", &arguments).await
}

/// An elicitation accepted: fields with a default are left out for the
/// library to fill in (what SEP-1034 checks), the others get a plain value
/// of their type (a boolean is `true`: "confirmed").
fn accept(request: ElicitationRequest) -> ElicitationResponse {
    let mut content = Map::new();
    if let ElicitationRequest::Form { form, .. } = request {
        for field in form.fields.iter().filter(|field| field.default.is_none()) {
            if let Some(value) = plain_value(&field.kind) {
                content.insert(field.name.clone(), value);
            }
        }
    }
    ElicitationResponse::Accept(content)
}

/// A value a field of `kind` accepts; `None` for kinds with no obvious one
/// (the field is then left out, which fits unless it is required).
fn plain_value(kind: &FieldKind) -> Option<Value> {
    match kind {
        FieldKind::Boolean => Some(json!(true)),
        FieldKind::Number { minimum, .. } => Some(json!(minimum.unwrap_or(1.0).ceil())),
        FieldKind::Choice { choices } => choices.first().map(|choice| json!(choice.value)),
        FieldKind::String {
            min_length: None,
            format: None,
            ..
        } => Some(json!("golem")),
        _ => None,
    }
}

/// The URL the suite expects as the Client ID Metadata Document client id.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// How to authorize in `scenario`, with the credentials of the context
/// when the suite gives some.
fn oauth_config(scenario: &str, context: &Value) -> Result<OAuthConfig, Failure> {
    let client_id = context["client_id"].as_str();
    let client_auth = client_auth(context)?;
    // The enterprise-managed scenario hands over an identity provider's ID
    // token to exchange; no other scenario has one.
    if let (Some(client_id), Some(endpoint), Some(id_token), Some(idp_client_id)) = (
        client_id,
        context["idp_token_endpoint"].as_str(),
        context["idp_id_token"].as_str(),
        context["idp_client_id"].as_str(),
    ) {
        let access = CrossAppAccess::new(endpoint, id_token, idp_client_id);
        return Ok(OAuthConfig::cross_app_access(
            access,
            client_id,
            client_auth,
        ));
    }
    if scenario.starts_with("auth/client-credentials")
        && let Some(client_id) = client_id
    {
        return Ok(OAuthConfig::client_credentials(client_id, client_auth));
    }
    let follower =
        RedirectFollower::new("http://localhost:3000/callback", Duration::from_secs(10))?;
    let mut config = OAuthConfig::new(Arc::new(follower));
    config.client_id = client_id.map(str::to_owned);
    config.client_auth = client_auth;
    config.client_metadata_url = Some(CLIENT_METADATA_URL.to_owned());
    config.client_name = "golem-mcp-conformance".to_owned();
    Ok(config)
}

/// How the pre-registered client authenticates: a secret, a private key
/// (private_key_jwt), or not at all.
fn client_auth(context: &Value) -> Result<ClientAuth, Failure> {
    if let Some(secret) = context["client_secret"].as_str() {
        return Ok(ClientAuth::Secret(Secret::new(secret)));
    }
    let Some(pem) = context["private_key_pem"].as_str() else {
        return Ok(ClientAuth::None);
    };
    let algorithm = match context["signing_algorithm"].as_str() {
        Some("RS256") => SigningAlgorithm::Rs256,
        _ => SigningAlgorithm::Es256,
    };
    Ok(ClientAuth::PrivateKeyJwt(SigningKey::from_pem(
        pem, algorithm,
    )?))
}

/// Arguments that satisfy a tool's schema: each property gets a plain value
/// of its type.
fn arguments_for(tool: &ToolInfo) -> Value {
    let schema: Value = tool
        .input_schema
        .as_deref()
        .and_then(|schema| serde_json::from_str(schema.get()).ok())
        .unwrap_or(Value::Null);
    let mut arguments = Map::new();
    let Some(properties) = schema["properties"].as_object() else {
        return Value::Object(arguments);
    };
    for (name, property) in properties {
        let value = match property["type"].as_str() {
            Some("number") | Some("integer") => json!(2),
            Some("boolean") => json!(true),
            Some("array") => json!([]),
            Some("object") => json!({}),
            _ => json!("golem"),
        };
        arguments.insert(name.clone(), value);
    }
    Value::Object(arguments)
}
