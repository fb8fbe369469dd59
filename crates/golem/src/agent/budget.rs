//! Budgets (issue 35): [`UsageLimits`], what a session may spend in model
//! requests, tool calls and tokens, and [`Budget`], what it spent so far
//! against them. A budget is shared: every run of an agent that holds it
//! (a conversation's exchanges) and whatever else spends on the same
//! account (a server's sampling requests answered by the model) record
//! into it, and the run loop checks it before each model request and each
//! turn's calls, so no request is sent once a limit is reached. It knows
//! nothing of the run loop.

use std::fmt;
use std::sync::{Mutex, PoisonError};

use golem_model::Usage;

use crate::error::RunError;

/// The most a [`Budget`] allows; `None`: no limit. Tokens are counted as
/// the model reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UsageLimits {
    /// Model requests.
    pub requests: Option<u64>,
    /// Tool calls run (denied and unknown ones are not run, so not counted).
    pub tool_calls: Option<u64>,
    /// Input tokens, as [`Usage::input_tokens`] counts them (a provider's
    /// cache reads are in them where it reports them so, as OpenAI does).
    pub input_tokens: Option<u64>,
    /// Output tokens.
    pub output_tokens: Option<u64>,
    /// Input and output tokens together.
    pub total_tokens: Option<u64>,
}

/// One of the [`UsageLimits`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Limit {
    /// [`UsageLimits::requests`].
    Requests,
    /// [`UsageLimits::tool_calls`].
    ToolCalls,
    /// [`UsageLimits::input_tokens`].
    InputTokens,
    /// [`UsageLimits::output_tokens`].
    OutputTokens,
    /// [`UsageLimits::total_tokens`].
    TotalTokens,
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Limit::Requests => "model requests",
            Limit::ToolCalls => "tool calls",
            Limit::InputTokens => "input tokens",
            Limit::OutputTokens => "output tokens",
            Limit::TotalTokens => "tokens",
        })
    }
}

/// What was spent: model usage, and the tool calls run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Spent {
    /// The model requests' usage, summed.
    pub usage: Usage,
    /// Tool calls run.
    pub tool_calls: u64,
}

/// What a session spent against its [`UsageLimits`]; share it (`Arc`)
/// between the runs and whatever else spends on the same account.
///
/// ```
/// use golem_agent::{Budget, Limit, UsageLimits};
/// use golem_agent::model::Usage;
///
/// let budget = Budget::new(UsageLimits { requests: Some(2), ..UsageLimits::default() });
/// budget.record(Usage { requests: 1, input_tokens: 10, ..Usage::default() });
/// assert!(budget.check_request().is_ok());
/// budget.record(Usage { requests: 1, ..Usage::default() });
/// assert_eq!(budget.check_request().map_err(|reached| reached.0), Err(Limit::Requests));
/// ```
#[derive(Debug, Default)]
pub struct Budget {
    limits: UsageLimits,
    spent: Mutex<Spent>,
}

/// A limit reached: which, its value, and what was spent against it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reached(pub Limit, pub u64, pub u64);

impl Budget {
    /// A budget with `limits` and nothing spent.
    pub fn new(limits: UsageLimits) -> Self {
        Budget {
            limits,
            spent: Mutex::default(),
        }
    }

    /// The limits.
    pub fn limits(&self) -> UsageLimits {
        self.limits
    }

    /// What was spent so far.
    pub fn spent(&self) -> Spent {
        *self.lock()
    }

    /// Records a model request's usage (`usage.requests` counts the
    /// requests).
    pub fn record(&self, usage: Usage) {
        self.lock().usage += usage;
    }

    /// Records `count` tool calls run.
    pub fn record_tool_calls(&self, count: u64) {
        let mut spent = self.lock();
        spent.tool_calls = spent.tool_calls.saturating_add(count);
    }

    /// Whether another model request may be sent: no limit of requests or
    /// tokens is reached.
    pub fn check_request(&self) -> Result<(), Reached> {
        let spent = self.spent();
        let checks = [
            (Limit::Requests, self.limits.requests, spent.usage.requests),
            (
                Limit::InputTokens,
                self.limits.input_tokens,
                spent.usage.input_tokens,
            ),
            (
                Limit::OutputTokens,
                self.limits.output_tokens,
                spent.usage.output_tokens,
            ),
            (
                Limit::TotalTokens,
                self.limits.total_tokens,
                spent.usage.input_tokens + spent.usage.output_tokens,
            ),
        ];
        for (limit, max, used) in checks {
            if let Some(max) = max
                && used >= max
            {
                return Err(Reached(limit, max, used));
            }
        }
        Ok(())
    }

    /// Whether `count` more tool calls may run.
    pub fn check_tool_calls(&self, count: u64) -> Result<(), Reached> {
        let spent = self.spent().tool_calls;
        match self.limits.tool_calls {
            Some(max) if spent.saturating_add(count) > max => {
                Err(Reached(Limit::ToolCalls, max, spent))
            }
            _ => Ok(()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Spent> {
        self.spent.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl From<Reached> for RunError {
    fn from(Reached(limit, max, spent): Reached) -> Self {
        RunError::UsageLimit { limit, max, spent }
    }
}
