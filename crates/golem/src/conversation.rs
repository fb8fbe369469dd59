//! Conversations that last: [`Conversation`], a versioned, documented JSON
//! form of a conversation (its messages with their tool calls and results,
//! the usage so far, the model and the tools that were offered) that
//! round-trips exactly and names no provider's wire format, so one saved
//! with one provider resumes with another; saved atomically with mode
//! 0600. And history trimming: [`keep_last_exchanges`] and [`fit_tokens`]
//! drop the oldest exchanges, never splitting a tool call from its result.
//! It knows nothing of the run loop.

use std::io::Write;
use std::path::{Path, PathBuf};

use golem_model::{Message, Role, Usage};
use serde::{Deserialize, Serialize};

/// A conversation as saved: `{"version": 1, "model": ..., "tools": [...],
/// "usage": {...}, "messages": [...]}`. `messages` are
/// [`Message`]s as `golem-model` serializes them (role, content, tool
/// calls with their arguments verbatim, tool results with the call's id and
/// the tool's name, images); [`RunOutput::messages`](crate::RunOutput::messages)
/// is what to save, and what [`Agent::run_with_history`](crate::Agent::run_with_history)
/// takes back.
///
/// ```
/// use golem_agent::Conversation;
/// use golem_agent::model::Message;
///
/// let saved = Conversation::new(vec![Message::user("Hi"), Message::assistant("Hello!")]);
/// let json = saved.to_json();
/// assert!(json.starts_with(r#"{"version":1,"#));
/// assert_eq!(Conversation::from_json(&json)?, saved);
/// # Ok::<(), golem_agent::ConversationError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Conversation {
    /// The format's version: [`Conversation::VERSION`].
    pub version: u32,
    /// The model that answered last, as it names itself (`openai:gpt-4o`),
    /// if known: a note for people, not a constraint on resuming.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The names of the tools offered in the last exchange, if known.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// The usage of every model request so far.
    #[serde(default)]
    pub usage: Usage,
    /// The conversation, oldest first.
    pub messages: Vec<Message>,
}

/// Why a conversation could not be read or saved.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConversationError {
    /// The file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        #[source]
        source: std::io::Error,
    },
    /// The text is not a conversation of this format.
    #[error("not a saved conversation: {0}")]
    Invalid(#[source] serde_json::Error),
    /// The conversation was saved by a newer version of the format.
    #[error(
        "the conversation is in format version {found}; this version of golem reads version \
         {supported} (upgrade golem to resume it)"
    )]
    Version {
        /// The file's version.
        found: u32,
        /// The version this library reads.
        supported: u32,
    },
}

impl Conversation {
    /// The format version this library writes and reads.
    pub const VERSION: u32 = 1;

    /// A conversation of `messages`, nothing else known.
    pub fn new(messages: Vec<Message>) -> Self {
        Conversation {
            version: Self::VERSION,
            messages,
            ..Conversation::default()
        }
    }

    /// The conversation with the model that answered and its tools noted.
    pub fn with_model(mut self, model: impl Into<String>, tools: Vec<String>) -> Self {
        self.model = Some(model.into());
        self.tools = tools;
        self
    }

    /// The conversation with its usage so far.
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = usage;
        self
    }

    /// Answers the tool calls the conversation ends with, if it ends with
    /// an assistant message whose calls have no results (saved while they
    /// waited, or by hand): each gets a result saying it was not run, since
    /// both APIs refuse a call without its result. Returns how many.
    pub fn close_open_calls(&mut self) -> usize {
        let calls: Vec<(String, String)> = match self.messages.last() {
            Some(last) if last.role == Role::Assistant => last
                .tool_calls
                .iter()
                .map(|call| (call.id.clone(), call.name.clone()))
                .collect(),
            _ => Vec::new(),
        };
        for (id, name) in &calls {
            self.messages.push(Message::tool_result(
                id.clone(),
                name.clone(),
                "This call was not run: the conversation was saved before it ran.",
            ));
        }
        calls.len()
    }

    /// The JSON form, on one line.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a conversation serializes")
    }

    /// Reads the JSON form.
    ///
    /// # Errors
    ///
    /// [`ConversationError::Version`] for a newer format (checked first, so
    /// the message says so rather than what it could not read), else
    /// [`ConversationError::Invalid`].
    pub fn from_json(text: &str) -> Result<Self, ConversationError> {
        #[derive(Deserialize)]
        struct Versioned {
            version: u32,
        }
        let versioned: Versioned =
            serde_json::from_str(text).map_err(ConversationError::Invalid)?;
        if versioned.version != Self::VERSION {
            return Err(ConversationError::Version {
                found: versioned.version,
                supported: Self::VERSION,
            });
        }
        serde_json::from_str(text).map_err(ConversationError::Invalid)
    }

    /// Reads the conversation saved at `path`.
    ///
    /// # Errors
    ///
    /// As [`from_json`](Self::from_json), and [`ConversationError::Io`].
    pub fn load(path: &Path) -> Result<Self, ConversationError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConversationError::Io {
            path: path.to_owned(),
            source,
        })?;
        Self::from_json(&text)
    }

    /// Saves the conversation at `path`, atomically: written to a file
    /// beside it (mode 0600: a conversation holds what the user and the
    /// tools said), flushed to disk, then renamed over it, so a process
    /// killed meanwhile leaves the previous version whole.
    ///
    /// # Errors
    ///
    /// [`ConversationError::Io`] when the file cannot be written.
    pub fn save(&self, path: &Path) -> Result<(), ConversationError> {
        let failed = |source| ConversationError::Io {
            path: path.to_owned(),
            source,
        };
        let mut name = path.file_name().unwrap_or_default().to_owned();
        name.push(format!(".{}.tmp", std::process::id()));
        let temporary = path.with_file_name(name);
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let written = options.open(&temporary).and_then(|mut file| {
            file.write_all(self.to_json().as_bytes())?;
            file.write_all(b"\n")?;
            file.sync_all()
        });
        if let Err(error) = written.and_then(|()| std::fs::rename(&temporary, path)) {
            let _ = std::fs::remove_file(&temporary);
            return Err(failed(error));
        }
        Ok(())
    }
}

/// How the user message the agent adds after a rejected final answer
/// starts: such a message continues its exchange, it does not start one.
pub(crate) const CORRECTION: &str = "Your answer was rejected: ";

/// Where each exchange of `messages` starts: at a user message, unless it
/// is a correction the agent added (which belongs with the question it
/// corrects). A tool call's results always follow its assistant message
/// before any user message, so no start falls between them.
fn exchange_starts(messages: &[Message]) -> Vec<usize> {
    messages
        .iter()
        .enumerate()
        .filter(|(_, message)| {
            message.role == Role::User && !message.content.starts_with(CORRECTION)
        })
        .map(|(index, _)| index)
        .collect()
}

/// The last `exchanges` exchanges of `messages` (all of them when there are
/// no more); an exchange starts at a user message. What comes before the
/// first user message (a system message, say) is kept.
///
/// ```
/// use golem_agent::keep_last_exchanges;
/// use golem_agent::model::Message;
///
/// let history = [
///     Message::user("1"), Message::assistant("one"),
///     Message::user("2"), Message::assistant("two"),
/// ];
/// assert_eq!(keep_last_exchanges(&history, 1), &history[2..]);
/// ```
pub fn keep_last_exchanges(messages: &[Message], exchanges: usize) -> Vec<Message> {
    let starts = exchange_starts(messages);
    let Some(&first_kept) = starts
        .len()
        .checked_sub(exchanges)
        .and_then(|n| starts.get(n))
    else {
        return messages.to_vec();
    };
    keep_from(messages, first_kept, &starts)
}

/// The longest tail of `messages` made of whole exchanges whose estimated
/// tokens (`estimate`, per message; [`estimated_tokens`] guesses from the
/// text's size) fit in `max_tokens`; the last exchange is always kept,
/// even alone over the limit. Returns the messages kept and how many
/// exchanges were dropped.
pub fn fit_tokens(
    messages: &[Message],
    max_tokens: u64,
    estimate: impl Fn(&Message) -> u64,
) -> (Vec<Message>, usize) {
    let starts = exchange_starts(messages);
    let total: u64 = messages.iter().map(&estimate).sum();
    let mut over = total.saturating_sub(max_tokens);
    let mut dropped = 0;
    // Drop whole exchanges, oldest first, until the rest fits.
    while over > 0 && dropped + 1 < starts.len() {
        let (from, to) = (starts[dropped], starts[dropped + 1]);
        let freed: u64 = messages[from..to].iter().map(&estimate).sum();
        over = over.saturating_sub(freed);
        dropped += 1;
    }
    match dropped {
        0 => (messages.to_vec(), 0),
        _ => (keep_from(messages, starts[dropped], &starts), dropped),
    }
}

/// What comes before the first exchange, then `messages[from..]`.
fn keep_from(messages: &[Message], from: usize, starts: &[usize]) -> Vec<Message> {
    let preamble = starts.first().copied().unwrap_or(0);
    messages[..preamble]
        .iter()
        .chain(&messages[from..])
        .cloned()
        .collect()
}

/// A rough count of the tokens `message` costs a model: a token per four
/// bytes of its text and tool call arguments, and a fixed share per image
/// and per message. For trimming when the provider's own count is not at
/// hand; real tokenizers differ by a few tens of percent.
pub fn estimated_tokens(message: &Message) -> u64 {
    const PER_MESSAGE: u64 = 4;
    const PER_IMAGE: u64 = 1_000;
    let text = message.content.len()
        + message
            .tool_calls
            .iter()
            .map(|call| call.name.len() + call.arguments.get().len())
            .sum::<usize>();
    PER_MESSAGE + (text as u64).div_ceil(4) + PER_IMAGE * message.images.len() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use golem_model::{Image, ToolCall};

    /// Three exchanges, the second with a tool call and its result.
    fn history() -> Vec<Message> {
        vec![
            Message::user("first"),
            Message::assistant("one"),
            Message::user("second"),
            Message::assistant_with_tool_calls(
                "",
                vec![ToolCall::new("c1", "read", r#"{"path": "a"}"#).expect("json")],
            ),
            Message::tool_result("c1", "read", "x".repeat(400)),
            Message::assistant("two"),
            Message::user("third"),
            Message::assistant("three"),
        ]
    }

    #[test]
    fn a_conversation_round_trips_exactly_through_a_file() {
        let dir = std::env::temp_dir().join(format!("golem-conversation-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("chat.json");
        let mut messages = history();
        messages.push(Message::user_with_images(
            "this?",
            vec![Image::base64("image/png", "iVBORw0KGgo=")],
        ));
        let saved = Conversation::new(messages)
            .with_model("openai:gpt-4o", vec!["read".into()])
            .with_usage(Usage {
                requests: 3,
                input_tokens: 120,
                output_tokens: 30,
                ..Usage::default()
            });

        saved.save(&path).expect("saved");
        saved.save(&path).expect("saved again over it");

        assert_eq!(Conversation::load(&path).expect("loads"), saved);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let leftovers = std::fs::read_dir(&dir).expect("dir").count();
        assert_eq!(leftovers, 1, "no temporary file left");
        std::fs::remove_dir_all(&dir).expect("cleaned");
    }

    #[test]
    fn a_newer_version_or_another_file_is_refused_with_what_is_wrong() {
        let newer = r#"{"version": 2, "messages": [], "something": "new"}"#;
        assert_eq!(
            Conversation::from_json(newer)
                .expect_err("newer")
                .to_string(),
            "the conversation is in format version 2; this version of golem reads version 1 \
             (upgrade golem to resume it)"
        );
        assert!(matches!(
            Conversation::from_json(r#"{"messages": []}"#),
            Err(ConversationError::Invalid(_))
        ));
        let missing = Conversation::load(Path::new("/nonexistent/chat.json"));
        assert!(
            missing
                .expect_err("missing")
                .to_string()
                .starts_with("/nonexistent/chat.json: ")
        );
    }

    #[test]
    fn calls_the_conversation_ends_with_get_a_result_saying_they_did_not_run() {
        let mut open = Conversation::new(history()[..4].to_vec());
        assert_eq!(open.close_open_calls(), 1);
        let last = open.messages.last().expect("a message");
        assert_eq!(last.role, Role::Tool);
        assert_eq!(last.tool_call_id.as_deref(), Some("c1"));
        assert!(last.content.contains("not run"));
        assert_eq!(open.close_open_calls(), 0, "closed once");
        assert_eq!(Conversation::new(history()).close_open_calls(), 0);
    }

    #[test]
    fn trimming_drops_whole_exchanges_never_a_call_without_its_result() {
        let history = history();
        assert_eq!(keep_last_exchanges(&history, 1), &history[6..]);
        assert_eq!(keep_last_exchanges(&history, 2), &history[2..]);
        assert_eq!(keep_last_exchanges(&history, 5), history);

        // The tool result is the heavy part: fitting 60 tokens drops the
        // first exchange and the second (with its call and result) together.
        let (kept, dropped) = fit_tokens(&history, 60, estimated_tokens);
        assert_eq!((kept.as_slice(), dropped), (&history[6..], 2));
        let (kept, dropped) = fit_tokens(&history, 10_000, estimated_tokens);
        assert_eq!((kept.len(), dropped), (history.len(), 0));
        // The last exchange stays, even over the limit.
        let (kept, dropped) = fit_tokens(&history, 1, estimated_tokens);
        assert_eq!((kept.as_slice(), dropped), (&history[6..], 2));
        // A correction stays with the question it corrects.
        let corrected = [
            Message::user("Q1"),
            Message::assistant("bad"),
            Message::user(format!(
                "{CORRECTION}not JSON\nAnswer again, correcting it."
            )),
            Message::assistant("good"),
        ];
        assert_eq!(keep_last_exchanges(&corrected, 1), corrected);
        // A system message before the first exchange is kept.
        let mut framed = vec![Message::system("Be brief.")];
        framed.extend(history.clone());
        assert_eq!(keep_last_exchanges(&framed, 1)[0].role, Role::System);
    }
}
