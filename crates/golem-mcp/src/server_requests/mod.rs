//! What the client offers the server (ADR 0007): the handlers an
//! application registers for sampling and elicitation, the roots offered
//! (`offered.rs`), the protocol shapes of those requests, and any `golem_model::Model` as a
//! sampling handler.
//!
//! This layer decides what a server request means and who answers it; the
//! session runs the answer's work (one task each, bounded, dropped when the
//! server cancels). It never reads the transport itself.

pub(crate) mod elicitation;
pub(crate) mod handlers;
pub(crate) mod model_sampling;
pub(crate) mod offered;
pub(crate) mod sampling;
