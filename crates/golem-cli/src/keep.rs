//! Keeping the conversation: `--resume FILE` (what it starts from, calls
//! left without results answered as not run), `--save FILE` (the whole
//! conversation, written after each answer, atomically, mode 0600, in the
//! library's versioned format) and `--context-tokens N` (before each
//! exchange, the oldest exchanges of what is *sent* are left out, whole,
//! so that it and the new message fit, with a note on stderr; the saved
//! conversation keeps them). Tokens are estimated from the text's size;
//! what the provider counted beyond that estimate for the last request
//! (its instructions and tool definitions) is taken as a fixed overhead.
//! It knows nothing of the run.

use std::path::PathBuf;

use golem_agent::model::{Message, Usage};
use golem_agent::{Conversation, estimated_tokens, fit_tokens};

use crate::show::Output;

/// What keeps a command's conversation.
#[derive(Debug)]
pub struct Keeper {
    /// `--save`.
    save: Option<PathBuf>,
    /// `--context-tokens`.
    context_tokens: Option<u64>,
    /// The model, as the saved conversation names it.
    model: String,
    /// What the resumed conversation had spent, under this command's.
    earlier: Usage,
    /// What the provider counted beyond the messages' estimate for the
    /// last request: instructions, tool definitions.
    overhead: u64,
}

impl Keeper {
    /// A keeper for `model`, from the command line's choices; returns the
    /// conversation to start from (the resumed one's messages, or none).
    pub fn new(
        (save, context_tokens): (Option<PathBuf>, Option<u64>),
        model: &str,
        resumed: Option<Conversation>,
        output: &Output,
    ) -> (Keeper, Vec<Message>) {
        let (messages, earlier) = match resumed {
            Some(mut conversation) => {
                let closed = conversation.close_open_calls();
                if closed > 0 {
                    output.note(&format!(
                        "the resumed conversation ends with {closed} tool call{} that never \
                         ran; the model is told so",
                        if closed == 1 { "" } else { "s" }
                    ));
                }
                (conversation.messages, conversation.usage)
            }
            None => (Vec::new(), Usage::default()),
        };
        let keeper = Keeper {
            save,
            context_tokens,
            model: model.to_owned(),
            earlier,
            overhead: 0,
        };
        (keeper, messages)
    }

    /// What of `history` to send with `prompt` under `--context-tokens`,
    /// saying on stderr what was left out.
    pub fn fit(&self, history: &[Message], prompt: &Message, output: &Output) -> Vec<Message> {
        let Some(max) = self.context_tokens else {
            return history.to_vec();
        };
        let room = max.saturating_sub(self.overhead + estimated_tokens(prompt));
        let (kept, dropped) = fit_tokens(history, room, estimated_tokens);
        if dropped > 0 {
            output.note(&format!(
                "the conversation would pass --context-tokens {max}: its {dropped} oldest \
                 exchange{} left out of what is sent (--save keeps {})",
                if dropped == 1 { " is" } else { "s are" },
                if dropped == 1 { "it" } else { "them" }
            ));
        }
        kept
    }

    /// Learns from an answer: `sent` is what the last request of the
    /// exchange carried (the conversation with the answer, but the answer),
    /// and `last_input_tokens` what the provider counted for it.
    pub fn learn(&mut self, sent: &[Message], last_input_tokens: u64) {
        let estimated: u64 = sent.iter().map(estimated_tokens).sum();
        if last_input_tokens > 0 {
            self.overhead = last_input_tokens.saturating_sub(estimated);
        }
    }

    /// Saves `messages` (with the `tools` offered and this command's
    /// `usage`) when `--save` says where; a failure is a note, and the
    /// command goes on.
    pub fn save(&self, messages: &[Message], tools: Vec<String>, usage: Usage, output: &Output) {
        let Some(path) = &self.save else {
            return;
        };
        let mut total = self.earlier;
        total += usage;
        let conversation = Conversation::new(messages.to_vec())
            .with_model(self.model.clone(), tools)
            .with_usage(total);
        if let Err(error) = conversation.save(path) {
            output.note(&format!("cannot save the conversation: {error}"));
        }
    }
}
