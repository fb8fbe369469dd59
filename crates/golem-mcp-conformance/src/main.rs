//! The client program for the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`, run by `scripts/conformance.sh`).
//!
//! The suite starts a scenario server and runs this program with the
//! server's URL as the last argument and the scenario's name in
//! `MCP_CONFORMANCE_SCENARIO`. The program connects over streamable HTTP,
//! initializes, lists the tools and calls each one with arguments made up
//! from its input schema, then closes. It answers elicitations by accepting
//! with the server's defaults (the library fills them in, SEP-1034). It
//! exits non-zero, with the reason on stderr, if any step fails.
//!
//! Servers that want authorization get it from the library's OAuth flow
//! ([`OAuthProvider`]). The "browser" is a [`RedirectFollower`]: the suite's
//! authorization servers approve at once, so it requests the authorization
//! URL and reads the redirect's `Location`. Pre-registered credentials come
//! from `MCP_CONFORMANCE_CONTEXT` (`client_id`, and `client_secret` or
//! `private_key_pem` with `signing_algorithm`); the
//! client-credentials scenarios use that grant, and the cross-app access
//! one its identity provider's ID token (`idp_*`); the Client ID Metadata
//! Document URL is the one the suite expects.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use golem_mcp::auth::{
    ClientAuth, CrossAppAccess, OAuthConfig, OAuthProvider, RedirectFollower, Secret,
    SigningAlgorithm, SigningKey,
};
use golem_mcp::{Client, ClientConfig, ElicitationResponse, HttpConfig, HttpTransport, ToolInfo};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

#[tokio::main]
async fn main() -> ExitCode {
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let Some(url) = std::env::args().nth(1) else {
        eprintln!("usage: golem-mcp-conformance SERVER_URL (with MCP_CONFORMANCE_SCENARIO set)");
        return ExitCode::from(2);
    };
    match run(&scenario, &url).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("golem-mcp-conformance: scenario {scenario:?}: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run(scenario: &str, url: &str) -> Result<(), Box<dyn std::error::Error>> {
    let config = ClientConfig::default()
        .with_elicitation(|_, _| async { Ok(ElicitationResponse::Accept(Map::new())) });
    let http = HttpConfig {
        auth: Some(Arc::new(OAuthProvider::new(oauth_config(scenario)?)?)),
        ..HttpConfig::new(url)
    };
    let client = Client::with_config(HttpTransport::new(http)?, config);
    let server = client.initialize().await?;
    eprintln!(
        "scenario {scenario:?}: connected to {} {} ({})",
        server.name, server.version, server.protocol_version
    );
    let tools = client.list_tools().await?;
    for tool in &tools {
        let arguments = RawValue::from_string(arguments_for(tool).to_string())?;
        let result = client.call_tool(&tool.name, &arguments).await?;
        eprintln!("called {}: {}", tool.name, result.text());
    }
    client.close().await?;
    Ok(())
}

/// The URL the suite expects as the Client ID Metadata Document client id.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// How to authorize in `scenario`, with the credentials of
/// `MCP_CONFORMANCE_CONTEXT` when the suite gives some.
fn oauth_config(scenario: &str) -> Result<OAuthConfig, Box<dyn std::error::Error>> {
    let context: Value = match std::env::var("MCP_CONFORMANCE_CONTEXT") {
        Ok(text) => serde_json::from_str(&text)?,
        Err(_) => Value::Null,
    };
    let client_id = context["client_id"].as_str();
    let client_auth = match (
        context["client_secret"].as_str(),
        context["private_key_pem"].as_str(),
    ) {
        (Some(secret), _) => ClientAuth::Secret(Secret::new(secret)),
        (None, Some(pem)) => {
            let algorithm = match context["signing_algorithm"].as_str() {
                Some("RS256") => SigningAlgorithm::Rs256,
                _ => SigningAlgorithm::Es256,
            };
            ClientAuth::PrivateKeyJwt(SigningKey::from_pem(pem, algorithm)?)
        }
        (None, None) => ClientAuth::None,
    };
    if scenario == "auth/cross-app-access-complete-flow"
        && let (Some(client_id), Some(endpoint), Some(id_token), Some(idp_client_id)) = (
            client_id,
            context["idp_token_endpoint"].as_str(),
            context["idp_id_token"].as_str(),
            context["idp_client_id"].as_str(),
        )
    {
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

/// Arguments that satisfy a tool's schema: each required property gets a
/// plain value of its type.
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
