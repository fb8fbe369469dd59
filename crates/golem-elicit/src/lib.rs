//! How a command answers a server that asks its user for input
//! (`elicitation/create`): `--on-elicitation ask` prompts on the terminal,
//! a form field by field (each answer checked, asked again when it does not
//! fit) or a URL shown and opened only with the user's consent
//! (`terminal.rs`, `fields.rs`); `decline` says no; `defaults` accepts a
//! form with the server's defaults. [`Elicitor`] is the handler both
//! commands, `golem-mcp` and `golem`, register: one implementation, so
//! that a form reads the same in both. Every prompt and note starts with
//! who asks ([`server_label`], `asker.rs`): the name the user gave the
//! server, then the one it gave itself.
//!
//! It knows nothing of either command: what it prints next to a prompt
//! goes through the [`Screen`] it is given (which adds the command's
//! prefix and pauses a spinner while a prompt is on screen), and what a
//! server wrote reaches the terminal through `golem-terminal`.

mod asker;
mod fields;
#[cfg(test)]
mod fixtures;
mod terminal;

use std::sync::Arc;

use golem_mcp::{
    ElicitationHandler, ElicitationRequest, ElicitationResponse, HandlerError, HandlerFuture,
    RequestContext,
};
use serde_json::Map;

pub use asker::server_label;
pub use terminal::{ask_form, ask_url, open_in_browser};

/// Where the handler's notes go, and who gives the terminal up while a
/// prompt is on it: the command's stderr, shared with whatever else it
/// shows there.
pub trait Screen: Send + Sync + 'static {
    /// Writes one note on stderr; `text` has no prefix (the command adds
    /// its own, `golem-mcp: ` or `golem: `) and may quote the server.
    fn note(&self, text: &str);
    /// Takes the terminal for a prompt until the returned guard is dropped
    /// (a spinner hidden, other lines held back, a timeout's clock
    /// stopped: whatever the command does there). Called on the blocking
    /// thread that prompts.
    fn pause(&self) -> Box<dyn Send>;
}

/// The value of `--on-elicitation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// Prompt on the terminal for each field (forms), or show the URL and
    /// wait for Enter (URL mode).
    Ask,
    /// Decline every request.
    Decline,
    /// Accept forms with the server's defaults; decline a form with a
    /// required field that has none.
    Defaults,
}

/// The elicitation handler both commands register.
#[derive(Clone)]
pub struct Elicitor {
    mode: Mode,
    screen: Arc<dyn Screen>,
    /// The server's name as the user gave it (config entry, URL, command).
    server: Arc<str>,
    /// One prompt at a time on the terminal.
    turn: Arc<tokio::sync::Mutex<()>>,
}

impl std::fmt::Debug for Elicitor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Elicitor")
            .field("mode", &self.mode)
            .field("server", &self.server)
            .finish()
    }
}

impl Elicitor {
    /// Answers the requests of the server the user named `server` (its
    /// config entry, URL or command: what the prompts call it first) as
    /// `mode` says; notes go to `screen`, which also gives the terminal up
    /// while a prompt is on it. Prompts read stdin and write stderr.
    pub fn new(mode: Mode, screen: Arc<dyn Screen>, server: &str) -> Self {
        Elicitor {
            mode,
            screen,
            server: server.into(),
            turn: Arc::default(),
        }
    }
}

impl ElicitationHandler for Elicitor {
    fn elicit(
        &self,
        request: ElicitationRequest,
        context: RequestContext,
    ) -> HandlerFuture<ElicitationResponse> {
        let this = self.clone();
        let server = server_label(&self.server, &context);
        Box::pin(async move {
            match this.mode {
                Mode::Decline => {
                    this.screen.note(&format!(
                        "the server {server} asked for input ({}): declined; --on-elicitation \
                         ask or \
                         defaults answers it",
                        quoted_message(&request)
                    ));
                    Ok(ElicitationResponse::Decline)
                }
                Mode::Defaults => {
                    let (response, note) = with_defaults(&request, &server);
                    if let Some(note) = note {
                        this.screen.note(&note);
                    }
                    Ok(response)
                }
                Mode::Ask => {
                    let _turn = this.turn.lock().await;
                    let screen = this.screen.clone();
                    tokio::task::spawn_blocking(move || {
                        let _paused = screen.pause();
                        let stdin = std::io::stdin();
                        let mut input = stdin.lock();
                        let mut output = std::io::stderr().lock();
                        match &request {
                            ElicitationRequest::Form { message, form } => {
                                ask_form(&server, message, form, &mut input, &mut output)
                            }
                            ElicitationRequest::Url { message, url, .. } => ask_url(
                                &server,
                                message,
                                url,
                                &mut input,
                                &mut output,
                                open_in_browser,
                            ),
                            // A mode this version does not know: say no.
                            _ => Ok(ElicitationResponse::Decline),
                        }
                    })
                    .await
                    .map_err(|error| HandlerError::internal(format!("the prompt failed: {error}")))?
                    .map_err(|error| {
                        HandlerError::internal(format!("cannot prompt on the terminal: {error}"))
                    })
                }
            }
        })
    }

    /// Only a person at a terminal can visit a URL.
    fn supports_url(&self) -> bool {
        self.mode == Mode::Ask
    }
}

fn quoted_message(request: &ElicitationRequest) -> String {
    match request {
        ElicitationRequest::Form { message, .. } => format!("a form: {:?}", message),
        ElicitationRequest::Url { message, url, .. } => format!("{message:?}, at {url}"),
        _ => "of a kind this version does not know".into(),
    }
}

/// `--on-elicitation defaults`: accept with no values (the library fills in
/// every default), unless a required field has no default; then decline,
/// with a note (no prefix) that starts with who asked (`the server
/// "evilsrv" (evil-mcp 1.0)`, `server` being the [`server_label`]) and
/// names the fields.
pub fn with_defaults(
    request: &ElicitationRequest,
    server: &str,
) -> (ElicitationResponse, Option<String>) {
    let ElicitationRequest::Form { message, form } = request else {
        return (
            ElicitationResponse::Decline,
            Some(format!(
                "the server {server} asked for input ({}): declined; --on-elicitation \
                 defaults does not \
                 visit URLs",
                quoted_message(request)
            )),
        );
    };
    let missing: Vec<String> = form
        .fields
        .iter()
        .filter(|field| field.required && field.default.is_none())
        .map(|field| format!("{:?}", field.name))
        .collect();
    if missing.is_empty() {
        return (ElicitationResponse::Accept(Map::new()), None);
    }
    (
        ElicitationResponse::Decline,
        Some(format!(
            "the server {server} asked for input (a form: {message:?}): declined; \
             --on-elicitation defaults \
             cannot fill the required field{} {}, which {} no default; --on-elicitation ask \
             prompts for {}",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", "),
            if missing.len() == 1 { "has" } else { "have" },
            if missing.len() == 1 { "it" } else { "them" },
        )),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{EVERY_KIND, form, received};

    #[test]
    fn defaults_accept_unless_a_required_field_has_none() {
        let all_defaulted = received(
            r#"{"message": "m", "requestedSchema": {"type": "object", "properties": {
                "line": {"type": "string", "default": "It was a dark and stormy night."}},
                "required": ["line"]}}"#,
        );
        assert_eq!(
            with_defaults(&all_defaulted, "\"s\""),
            (ElicitationResponse::Accept(Map::new()), None)
        );
        let (response, note) = with_defaults(
            &ElicitationRequest::Form {
                message: "Who?".into(),
                form: form(EVERY_KIND),
            },
            "\"s\" (scripted 1)",
        );
        assert_eq!(response, ElicitationResponse::Decline);
        let note = note.expect("a note");
        assert!(
            note.starts_with(r#"the server "s" (scripted 1) asked for input (a form: "Who?")"#),
            "{note}"
        );
        assert!(
            note.contains(
                r#"cannot fill the required fields "name", "agree", which have no default"#
            ),
            "{note}"
        );
    }
}
