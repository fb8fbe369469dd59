//! What a server offers beside tools: resources (listed, read, and made
//! from a URI template), prompts (listed, and got with `json!` arguments,
//! which are checked before anything is sent) and argument completion.
//!
//! It runs against the reference server `server-everything`. Without
//! arguments it starts the server with `npx`; to use another copy, give its
//! command (the repository's test peers, say):
//!
//! ```sh
//! cargo run -p golem-mcp --example resources-prompts
//! cargo run -p golem-mcp --example resources-prompts -- peers/node_modules/.bin/mcp-server-everything stdio
//! ```

use golem_mcp::{Client, CompletionRef, Content, StdioConfig, StdioTransport};
use serde_json::json;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let client = Client::connect(StdioTransport::spawn(server_from_args())?).await?;

    // Resources: every page of the list, then one read as text.
    let resources = client.list_resources().await?;
    println!("resources: {}", resources.len());
    if let Some(first) = resources.first() {
        let read = client.read_resource(&first.uri).await?;
        let text = read.text().unwrap_or_default(); // None: only binary items
        let heading = text.lines().next().unwrap_or_default();
        println!("read {}: {heading}", first.uri);
    }

    // A template names resources the list does not: expand it, then read.
    let templates = client.list_resource_templates().await?;
    let text_template = templates
        .iter()
        .find(|template| template.uri_template.contains("/text/"))
        .ok_or("the server offers no text template")?;
    println!("template: {}", text_template.uri_template);
    // The values by variable name (a map of strings).
    let uri = text_template
        .template()?
        .expand(&[("resourceId", "7")].into());
    let read = client.read_resource(&uri).await?;
    println!("read {uri}: {}", read.text().unwrap_or_default());

    // Prompts, with their arguments ([optional] ones marked).
    for prompt in client.list_prompts().await? {
        let arguments: Vec<String> = prompt
            .arguments
            .iter()
            .map(|argument| match argument.required {
                true => argument.name.clone(),
                false => format!("[{}]", argument.name),
            })
            .collect();
        println!("prompt: {}({})", prompt.name, arguments.join(", "));
    }

    // Prompt arguments are strings: any value serializing as an object of
    // strings will do (`json!`, a map, a struct).
    let prompt = client
        .get_prompt("args-prompt", &json!({"city": "Paris"}))
        .await?;
    for message in &prompt.messages {
        if let Content::Text { text } = &message.content {
            println!("args-prompt says ({:?}): {text}", message.role);
        }
    }
    // Checked against the prompt's declaration before sending: a missing
    // required argument is an error naming it, and the server is not asked.
    let missing = client.get_prompt("args-prompt", &json!({})).await;
    if let Err(error) = missing {
        println!("without its city: {error}");
    }

    // Completion: what the server suggests for an argument as it is typed.
    // The arguments chosen so far (an object of strings) may narrow it.
    let prompt = CompletionRef::Prompt("completable-prompt");
    let departments = client
        .complete(prompt, "department", "S", &json!({}))
        .await?;
    println!("departments starting with S: {:?}", departments.values);
    let chosen = json!({"department": "Engineering"});
    let names = client.complete(prompt, "name", "", &chosen).await?;
    println!("names in Engineering: {:?}", names.values);

    client.close().await?;
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
