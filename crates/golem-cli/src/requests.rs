//! What `golem` answers when an MCP server asks something of it: its
//! user's input (elicitation, `--on-elicitation`, with the terminal forms
//! of `golem-elicit` that `golem-mcp` uses too), the directories it may
//! work in (roots, `--root`), and its model (sampling, only with
//! `--allow-sampling`, at most `--max-samplings` requests per server: the
//! request and the model's answer are shown on stderr, the server's
//! `maxTokens` bounds the answer, and what it cost is in the usage
//! totals). Every prompt and notice names the server that asks: its name
//! in the configuration, then its own (`golem_elicit::server_label`). It
//! knows nothing of the run or of how servers are started: `servers.rs`
//! asks it for each server's `ClientConfig`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use golem_agent::Budget;
use golem_agent::mcp::{
    ClientConfig, CreateMessageRequest, CreateMessageResult, HandlerError, HandlerFuture,
    RequestContext, Root, SamplingContent, SamplingHandler, sampling_with_model,
};
use golem_agent::model::{BoxFuture, Model, ModelError, Request, Response, Usage};
use golem_elicit::{Elicitor, Mode, Screen, server_label};

use crate::exit::limit_option;
use crate::show::{Output, one_line};

/// The most characters of a sampling request or answer shown.
const SAMPLING_SHOWN: usize = 200;

/// How the servers' requests are answered: the same for every server.
#[derive(Clone)]
pub struct Answers {
    /// `--on-elicitation`.
    pub elicitation: Mode,
    /// `--root`: `None` declares no roots capability.
    pub roots: Option<Vec<Root>>,
    /// `--allow-sampling`: the model that answers, else sampling is not
    /// offered (and a server's request is refused, as the protocol says).
    pub sampling: Option<Arc<dyn Model>>,
    /// `--max-samplings`: the most sampling requests answered per server
    /// in one command run; later ones are declined.
    pub max_samplings: u32,
    /// The command's budget (`--max-requests` and the others), which the
    /// agent's runs share: a sampling request is one more model request,
    /// declined once a limit is reached, and its tokens count.
    pub budget: Arc<Budget>,
    /// `--max-tokens`: a server's `maxTokens` is bounded by it too.
    pub max_tokens: Option<u32>,
}

impl Answers {
    /// The client configuration of server `name`: the handlers registered
    /// are exactly what it is offered.
    pub fn config(&self, name: &str, output: &Output, spent: &SamplingUsage) -> ClientConfig {
        let screen: Arc<dyn Screen> = Arc::new(output.clone());
        let mut config =
            ClientConfig::default().with_elicitation(Elicitor::new(self.elicitation, screen, name));
        if let Some(roots) = &self.roots {
            config = config.with_roots(roots.clone());
        }
        if let Some(model) = &self.sampling {
            let counted: Arc<dyn Model> = Arc::new(Counted {
                model: Arc::clone(model),
                spent: spent.clone(),
                budget: Arc::clone(&self.budget),
                max_tokens: self.max_tokens,
            });
            config = config.with_sampling(Shown {
                server: name.to_owned(),
                output: output.clone(),
                limit: self.max_samplings,
                spent: spent.clone(),
                budget: Arc::clone(&self.budget),
                inner: sampling_with_model(counted),
            });
        }
        config
    }
}

/// Notes of the elicitation handler after `golem: `; a prompt ends the
/// answer's open line first (nothing else draws on the terminal).
impl Screen for Output {
    fn note(&self, text: &str) {
        // What a server asks the user is shown even with --quiet.
        Output::say(self, text);
    }

    fn pause(&self) -> Box<dyn Send> {
        self.end_line();
        Box::new(())
    }
}

/// What the servers' sampling requests cost, for the usage totals, and how
/// many each server made, for `--max-samplings` (a server started again
/// keeps its count: the limit is per command run). Clones share both.
#[derive(Debug, Clone, Default)]
pub struct SamplingUsage {
    cost: Arc<Mutex<Usage>>,
    /// Sampling requests taken on so far, by server name.
    taken: Arc<Mutex<HashMap<String, u32>>>,
}

impl SamplingUsage {
    /// The usage of every sampling request answered so far.
    pub fn total(&self) -> Usage {
        *self.cost.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn add(&self, usage: Usage) {
        *self.cost.lock().unwrap_or_else(PoisonError::into_inner) += usage;
    }

    /// Counts one more sampling request of `server`, unless it has had
    /// `limit` already: whether it may be answered.
    fn take_one(&self, server: &str, limit: u32) -> bool {
        let mut taken = self.taken.lock().unwrap_or_else(PoisonError::into_inner);
        let count = taken.entry(server.to_owned()).or_default();
        if *count >= limit {
            return false;
        }
        *count += 1;
        true
    }
}

/// The model, counting what each answer cost, in the usage totals and in
/// the command's budget (whose request count [`Shown`] took already).
struct Counted {
    model: Arc<dyn Model>,
    spent: SamplingUsage,
    budget: Arc<Budget>,
    /// `--max-tokens`.
    max_tokens: Option<u32>,
}

impl Counted {
    /// `request` with the server's `maxTokens` bounded by `--max-tokens`
    /// and by the output tokens the budget leaves (the client may sample
    /// fewer tokens than a server asks for).
    fn bounded(&self, request: &Request) -> Request {
        let left = self
            .budget
            .output_left()
            .map(|left| u32::try_from(left).unwrap_or(u32::MAX).max(1));
        let cap = [self.max_tokens, left].into_iter().flatten().min();
        let mut bounded = request.clone();
        let limit = &mut bounded.settings.max_output_tokens;
        *limit = match (*limit, cap) {
            (Some(asked), Some(cap)) => Some(asked.min(cap)),
            (asked, cap) => asked.or(cap),
        };
        bounded
    }
}

impl Model for Counted {
    fn request<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<Response, ModelError>> {
        Box::pin(async move {
            let response = self.model.request(&self.bounded(request)).await?;
            self.budget.record(Usage {
                requests: 0,
                ..response.usage
            });
            self.spent.add(Usage {
                requests: 1,
                ..response.usage
            });
            Ok(response)
        })
    }

    fn name(&self) -> &str {
        self.model.name()
    }

    fn takes_output_schema(&self) -> bool {
        self.model.takes_output_schema()
    }
}

/// Sampling by the model, at most `limit` requests of the server, each
/// request and answer shown on stderr.
struct Shown<H> {
    /// The server's name in the configuration.
    server: String,
    output: Output,
    /// `--max-samplings`.
    limit: u32,
    spent: SamplingUsage,
    /// The command's budget: each request answered is one model request.
    budget: Arc<Budget>,
    inner: H,
}

impl<H: SamplingHandler> SamplingHandler for Shown<H> {
    fn create_message(
        &self,
        request: CreateMessageRequest,
        context: RequestContext,
    ) -> HandlerFuture<CreateMessageResult> {
        let label = server_label(&self.server, &context);
        if !self.spent.take_one(&self.server, self.limit) {
            let limit = self.limit;
            self.output.note(&format!(
                "the server {label} asks the model again: declined, it had its {limit} \
                 sampling request{} (--max-samplings {limit})",
                if limit == 1 { "" } else { "s" }
            ));
            return Box::pin(async move { Err(HandlerError::rejected(limit_reached(limit))) });
        }
        // Counted once sent, as the agent counts its own requests.
        if let Err(reached) = self.budget.reserve_request() {
            let option = limit_option(reached.0);
            self.output.note(&format!(
                "the server {label} asks the model: declined, {reached} in this command \
                 ({option})"
            ));
            return Box::pin(async move {
                Err(HandlerError::rejected(format!(
                    "usage limit reached: {reached} ({option})"
                )))
            });
        }
        self.output.note(&sampling_request(&label, &request));
        let answer = self.inner.create_message(request, context);
        let (server, output) = (self.server.clone(), self.output.clone());
        Box::pin(async move {
            let result = answer.await;
            match &result {
                Ok(answer) => output.note(&sampling_answer(&server, answer)),
                Err(error) => output.note(&format!(
                    "[{server}] sampling failed: {}",
                    one_line(&error.to_string(), SAMPLING_SHOWN)
                )),
            }
            result
        })
    }

    fn supports_tools(&self) -> bool {
        self.inner.supports_tools()
    }
}

/// The error a server gets for a sampling request past `--max-samplings`.
fn limit_reached(limit: u32) -> String {
    format!(
        "sampling limit reached: golem answers at most {limit} sampling request{} per server \
         (--max-samplings)",
        if limit == 1 { "" } else { "s" }
    )
}

/// `the server "srv" (srv-mcp 1.0) asks the model (1 message, at most 50
/// tokens): what is MCP?`: the last message's text; `label` from
/// [`server_label`].
fn sampling_request(label: &str, request: &CreateMessageRequest) -> String {
    let last = request
        .messages
        .last()
        .map(|message| text_of(&message.content))
        .unwrap_or_default();
    let count = request.messages.len();
    format!(
        "the server {label} asks the model ({count} message{}, at most {} tokens): {}",
        if count == 1 { "" } else { "s" },
        request.max_tokens,
        one_line(&last, SAMPLING_SHOWN)
    )
}

/// `[srv] sampling answer (gpt-fake): MCP is ...`.
fn sampling_answer(server: &str, answer: &CreateMessageResult) -> String {
    let mut text = text_of(&answer.content);
    let calls = answer
        .content
        .iter()
        .filter(|block| matches!(block, SamplingContent::ToolUse { .. }))
        .count();
    if calls > 0 {
        text.push_str(&format!(
            " [{calls} tool call{}]",
            if calls == 1 { "" } else { "s" }
        ));
    }
    format!(
        "[{server}] sampling answer ({}): {}",
        one_line(&answer.model, SAMPLING_SHOWN),
        one_line(&text, SAMPLING_SHOWN)
    )
}

/// The text blocks of a message, one after the other; other blocks as
/// `[image]`, `[audio]`.
fn text_of(content: &[SamplingContent]) -> String {
    content
        .iter()
        .filter_map(|block| match block {
            SamplingContent::Text { text } => Some(text.clone()),
            SamplingContent::Image { .. } => Some("[image]".into()),
            SamplingContent::Audio { .. } => Some("[audio]".into()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sampling_request_and_its_answer_are_one_line_each() {
        let request: CreateMessageRequest = serde_json::from_value(serde_json::json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "what is\nMCP?"}}],
            "maxTokens": 50
        }))
        .expect("a request");
        assert_eq!(
            sampling_request(r#""py" (py-mcp 1.0)"#, &request),
            r#"the server "py" (py-mcp 1.0) asks the model (1 message, at most 50 tokens): what is MCP?"#
        );
        let answer = CreateMessageResult::text("gpt-fake", "a protocol");
        assert_eq!(
            sampling_answer("py", &answer),
            "[py] sampling answer (gpt-fake): a protocol"
        );
    }
}
