//! A client that answers what a server asks of it: elicitation (a form for
//! the user to fill in), sampling (a completion from the application's
//! model) and roots (the directories the server may work in), and that
//! hears the server's log messages through `Client::notifications`.
//!
//! It runs against the reference server `server-everything`, which offers
//! a tool for each kind of request to clients that declare the capability
//! (`trigger-elicitation-request`, `trigger-sampling-request`,
//! `get-roots-list`). Without arguments it starts the server with `npx`; to
//! use another copy, give its command (the repository's test peers, say):
//!
//! ```sh
//! cargo run -p golem-mcp --example server-requests
//! cargo run -p golem-mcp --example server-requests -- peers/node_modules/.bin/mcp-server-everything stdio
//! ```

use std::time::Duration;

use golem_mcp::{
    Client, ClientConfig, CreateMessageRequest, CreateMessageResult, ElicitationRequest,
    ElicitationResponse, Root, SamplingContent, ServerNotification, StdioConfig, StdioTransport,
};
use serde_json::{Map, json};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // What this client offers: each handler is a closure returning a
    // future, run on a task of its own while the call that caused it waits.
    let config = ClientConfig::default()
        .with_elicitation(|request: ElicitationRequest, _context| async move {
            // Only forms arrive here: URL mode is offered by implementing
            // `ElicitationHandler` with `supports_url`.
            let ElicitationRequest::Form { message, form } = request else {
                return Ok(ElicitationResponse::Decline);
            };
            println!("elicitation: {message:?}, {} fields", form.fields.len());
            // A real application asks the user; this one knows a name only.
            let mut answer = Map::new();
            answer.insert("name".into(), json!("Ada Lovelace"));
            // `Form::complete` fills in the defaults the server gave and
            // checks the answer against the form (required fields, types,
            // bounds), naming the field that does not fit: the handler
            // need not walk the fields itself.
            match form.complete(&mut answer) {
                Ok(()) => Ok(ElicitationResponse::Accept(answer)),
                Err(problem) => {
                    println!("elicitation: declined, {problem}");
                    Ok(ElicitationResponse::Decline)
                }
            }
        })
        .with_sampling(|request: CreateMessageRequest, _context| async move {
            // A real application asks its model here; with a `golem_model`
            // model, `golem_mcp::sampling_with_model(model)` is the handler.
            let prompt: Vec<&str> = request
                .messages
                .iter()
                .flat_map(|message| &message.content)
                .filter_map(|content| match content {
                    SamplingContent::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect();
            println!("sampling: asked {:?}", prompt.join(" "));
            let words = prompt.iter().flat_map(|text| text.split_whitespace());
            let answer = format!("{} words read", words.count());
            Ok(CreateMessageResult::text("example-model", answer))
        })
        .with_roots(vec![
            Root::directory(std::env::current_dir()?)?.with_name("workspace"),
        ]);

    // `Client::connect_with(transport, config)` would connect in one call,
    // but this server asks for the roots right after the handshake and logs
    // what it got (and announces its new tools): a subscription made after
    // the handshake could miss that. So: make the client, subscribe, then
    // shake hands.
    let client = Client::with_config(StdioTransport::spawn(server_from_args())?, config);
    let mut notifications = client.notifications();
    let server = client.initialize().await?;
    println!("server: {} {}", server.name, server.version);

    // What the server said after the handshake, until it had read our roots.
    let roots_read = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(notification) = notifications.recv().await {
            match notification {
                ServerNotification::ToolsListChanged => println!("notification: tools changed"),
                ServerNotification::Log(log) => {
                    let logger = log.logger.as_deref().unwrap_or("server");
                    println!("log [{}] {logger}: {}", log.level, log.text());
                    if log.text().starts_with("Roots updated") {
                        return true;
                    }
                }
                other => println!("notification: {other:?}"),
            }
        }
        false // the client is gone
    })
    .await;
    if roots_read != Ok(true) {
        return Err("the server did not say it read the roots within 30 s".into());
    }

    // Each of these tools asks this client something before it answers.
    let elicited = client
        .call_tool("trigger-elicitation-request", &json!({}))
        .await?;
    println!("elicitation tool: {}", first_lines(&elicited.text(), 5));
    let sampled = client
        .call_tool(
            "trigger-sampling-request",
            &json!({"prompt": "a haiku about Rust", "maxTokens": 50}),
        )
        .await?;
    println!("sampling tool: {}", first_lines(&sampled.text(), 20));
    let roots = client.call_tool("get-roots-list", &json!({})).await?;
    println!("roots tool: {}", first_lines(&roots.text(), 3));

    client.close().await?; // ends the server
    Ok(())
}

/// The server to run: the command line's, or `server-everything` by `npx`.
fn server_from_args() -> StdioConfig {
    let mut args = std::env::args().skip(1);
    match args.next() {
        Some(command) => StdioConfig {
            args: args.collect(),
            ..StdioConfig::new(command)
        },
        None => StdioConfig {
            args: vec![
                "-y".into(),
                "@modelcontextprotocol/server-everything".into(),
            ],
            ..StdioConfig::new("npx")
        },
    }
}

/// The first `count` non-empty lines of `text`, on one line.
fn first_lines(text: &str, count: usize) -> String {
    let kept: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .take(count)
        .collect();
    kept.join(" ")
}
