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
/// assert!(budget.reserve_request().is_ok());
/// budget.record(Usage { input_tokens: 10, ..Usage::default() });
/// assert!(budget.reserve_request().is_ok());
/// assert_eq!(budget.reserve_request().map_err(|reached| reached.0), Err(Limit::Requests));
/// ```
#[derive(Debug, Default)]
pub struct Budget {
    limits: UsageLimits,
    spent: Mutex<Spent>,
}

/// A limit reached: which, its value, what was spent against it, and what
/// more was asked for (tool calls: the turn's; 0 for the others).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reached(pub Limit, pub u64, pub u64, pub u64);

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

    /// Whether another model request may be sent (no limit of requests or
    /// tokens is reached), counting it when it may: checked and counted at
    /// once, so runs sharing the budget cannot both pass its last request.
    pub fn reserve_request(&self) -> Result<(), Reached> {
        let mut spent = self.lock();
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
                return Err(Reached(limit, max, used, 0));
            }
        }
        spent.usage.requests += 1;
        Ok(())
    }

    /// How many more output tokens the limits leave (the output and the
    /// total limit, whichever leaves fewer); `None` when neither is set. A
    /// sampling handler bounds a server's `maxTokens` with it.
    pub fn output_left(&self) -> Option<u64> {
        let spent = self.spent().usage;
        let output = self
            .limits
            .output_tokens
            .map(|max| max.saturating_sub(spent.output_tokens));
        let total = self
            .limits
            .total_tokens
            .map(|max| max.saturating_sub(spent.input_tokens + spent.output_tokens));
        match (output, total) {
            (Some(output), Some(total)) => Some(output.min(total)),
            (output, total) => output.or(total),
        }
    }

    /// Whether `count` more tool calls may run, counting them when they
    /// may, at once as [`reserve_request`](Self::reserve_request) does.
    pub fn reserve_tool_calls(&self, count: u64) -> Result<(), Reached> {
        let mut spent = self.lock();
        self.fits_tool_calls(spent.tool_calls, count)?;
        spent.tool_calls = spent.tool_calls.saturating_add(count);
        Ok(())
    }

    /// Whether `count` more tool calls would fit, counting nothing.
    pub fn check_tool_calls(&self, count: u64) -> Result<(), Reached> {
        self.fits_tool_calls(self.spent().tool_calls, count)
    }

    fn fits_tool_calls(&self, spent: u64, count: u64) -> Result<(), Reached> {
        match self.limits.tool_calls {
            Some(max) if spent.saturating_add(count) > max => {
                Err(Reached(Limit::ToolCalls, max, spent, count))
            }
            _ => Ok(()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Spent> {
        self.spent.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// How the limit was reached: `the limit of 3 model requests is reached (3
/// spent)`, or `this turn's 3 tool calls would pass the limit of 2 (1 spent
/// before them)`.
impl fmt::Display for Reached {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Reached(limit, max, spent, asked) = *self;
        match asked {
            0 => write!(f, "the limit of {max} {limit} is reached ({spent} spent)"),
            1 => write!(
                f,
                "the limit of {max} {limit} is reached ({spent} spent, 1 more asked for)"
            ),
            _ => write!(
                f,
                "this turn's {asked} {limit} would pass the limit of {max} ({spent} spent \
                 before them)"
            ),
        }
    }
}

impl From<Reached> for RunError {
    fn from(Reached(limit, max, spent, asked): Reached) -> Self {
        RunError::UsageLimit {
            limit,
            max,
            spent,
            asked,
        }
    }
}
