//! Keeping the conversation: `--resume FILE` (what it starts from),
//! `--save FILE` (written after each answer, atomically, mode 0600, in the
//! library's versioned format) and `--context-tokens N` (the oldest
//! exchanges left out, whole, before a request would go over N, with a
//! note on stderr). Tokens are estimated from the text's size, scaled by
//! what the provider reported for the last request. It knows nothing of
//! the run.

use std::path::PathBuf;

use golem_agent::model::{Message, Usage};
use golem_agent::{Conversation, estimated_tokens, fit_tokens};

use crate::show::Output;

/// The bounds of the scale between the estimate and the provider's count:
/// a request's tool definitions and instructions are in its count, not in
/// the estimate, so the scale runs high rather than low.
const SCALE_BOUNDS: (f64, f64) = (0.25, 8.0);

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
    /// Provider tokens per estimated token, learnt after each answer.
    scale: f64,
}

impl Keeper {
    /// A keeper for `model`, from the command line's choices; returns the
    /// conversation to start from (the resumed one's messages, or none).
    pub fn new(
        (save, context_tokens): (Option<PathBuf>, Option<u64>),
        model: &str,
        resumed: Option<Conversation>,
    ) -> (Keeper, Vec<Message>) {
        let (messages, earlier) = match resumed {
            Some(conversation) => (conversation.messages, conversation.usage),
            None => (Vec::new(), Usage::default()),
        };
        let keeper = Keeper {
            save,
            context_tokens,
            model: model.to_owned(),
            earlier,
            scale: 1.0,
        };
        (keeper, messages)
    }

    /// `history` within `--context-tokens`, saying on stderr what was left
    /// out.
    pub fn fit(&self, history: Vec<Message>, output: &Output) -> Vec<Message> {
        let Some(max) = self.context_tokens else {
            return history;
        };
        let scale = self.scale;
        let estimate = |message: &Message| (estimated_tokens(message) as f64 * scale).ceil() as u64;
        let (kept, dropped) = fit_tokens(&history, max, estimate);
        if dropped > 0 {
            output.note(&format!(
                "the conversation would pass --context-tokens {max}: its {dropped} oldest \
                 exchange{} left out",
                if dropped == 1 { " is" } else { "s are" }
            ));
        }
        kept
    }

    /// Learns from an answer: `messages` is the conversation with it, and
    /// `last_input_tokens` what the provider counted for the request that
    /// got it (all of `messages` but the answer).
    pub fn learn(&mut self, messages: &[Message], last_input_tokens: u64) {
        let sent = &messages[..messages.len().saturating_sub(1)];
        let estimated: u64 = sent.iter().map(estimated_tokens).sum();
        if estimated > 0 && last_input_tokens > 0 {
            let (low, high) = SCALE_BOUNDS;
            self.scale = (last_input_tokens as f64 / estimated as f64).clamp(low, high);
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
