//! The application's handlers for the server's requests: the
//! [`SamplingHandler`] and [`ElicitationHandler`] traits (ADR 0007), each
//! also implemented by any closure of the right shape.
//!
//! A handler runs on a task of its own, so it may take minutes and may
//! call back into the same client (its [`RequestContext`] leads there); a
//! failing handler answers with a JSON-RPC error, a panicking one with an
//! internal error, and a request the server cancels has its handler
//! dropped.

use std::future::Future;

use crate::server_requests::elicitation::{ElicitationRequest, ElicitationResponse};
use crate::server_requests::sampling::{CreateMessageRequest, CreateMessageResult};
use crate::session::context::RequestContext;
use crate::session::serving::{HandlerError, HandlerFuture};

/// Answers `sampling/createMessage`: a server asks the application's model
/// for a completion. Any `Fn(CreateMessageRequest, RequestContext) -> impl
/// Future<Output = Result<CreateMessageResult, HandlerError>>` is one.
pub trait SamplingHandler: Send + Sync + 'static {
    /// Produces the completion. Dropped if the server cancels the request.
    fn create_message(
        &self,
        request: CreateMessageRequest,
        context: RequestContext,
    ) -> HandlerFuture<CreateMessageResult>;

    /// Whether the handler's model can use the tools a request offers (the
    /// capability `sampling.tools`). Off by default.
    fn supports_tools(&self) -> bool {
        false
    }
}

impl<F, Fut> SamplingHandler for F
where
    F: Fn(CreateMessageRequest, RequestContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<CreateMessageResult, HandlerError>> + Send + 'static,
{
    fn create_message(
        &self,
        request: CreateMessageRequest,
        context: RequestContext,
    ) -> HandlerFuture<CreateMessageResult> {
        Box::pin(self(request, context))
    }
}

/// Answers `elicitation/create`: a server asks the user for input. Any
/// `Fn(ElicitationRequest, RequestContext) -> impl Future<Output =
/// Result<ElicitationResponse, HandlerError>>` is one (form mode only).
pub trait ElicitationHandler: Send + Sync + 'static {
    /// Asks the user. Dropped if the server cancels the request.
    fn elicit(
        &self,
        request: ElicitationRequest,
        context: RequestContext,
    ) -> HandlerFuture<ElicitationResponse>;

    /// Whether the handler can send the user to a URL (URL mode). Off by
    /// default: only form requests reach it.
    fn supports_url(&self) -> bool {
        false
    }
}

impl<F, Fut> ElicitationHandler for F
where
    F: Fn(ElicitationRequest, RequestContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ElicitationResponse, HandlerError>> + Send + 'static,
{
    fn elicit(
        &self,
        request: ElicitationRequest,
        context: RequestContext,
    ) -> HandlerFuture<ElicitationResponse> {
        Box::pin(self(request, context))
    }
}
