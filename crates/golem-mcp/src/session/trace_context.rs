//! W3C trace context in a request's `params._meta` (feature `otel`), as
//! OpenTelemetry's MCP conventions carry it: `traceparent` and `tracestate`
//! of the request's span written into every request, and the context a
//! server's request carries made the parent of the span that handles it.
//!
//! The context is the one `tracing-opentelemetry` keeps for a `tracing`
//! span; with no such layer installed every span's context is invalid and
//! nothing is written. The header values are formatted here, by the W3C
//! format, rather than through a global propagator, which an application
//! may not have set: the trace would then silently stop at the client.

use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState};
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The `_meta` members (`"traceparent":"…"` and, when there is one,
/// `,"tracestate":"…"`) carrying `span`'s context; `None` when it has no
/// valid one.
pub(crate) fn meta_members(span: &Span) -> Option<String> {
    if span.is_disabled() {
        return None;
    }
    let context = span.context();
    let span_ref = context.span();
    let parent = span_ref.span_context();
    if !parent.is_valid() {
        return None;
    }
    let mut members = format!(
        r#""traceparent":"00-{}-{}-{:02x}""#,
        parent.trace_id(),
        parent.span_id(),
        parent.trace_flags().to_u8()
    );
    let state = parent.trace_state().header();
    if !state.is_empty() {
        members.push_str(r#","tracestate":"#);
        members.push_str(&serde_json::Value::String(state).to_string());
    }
    Some(members)
}

/// Makes the context in `params._meta` (a server's request) the parent of
/// `span`; a request without one, or with a malformed one, leaves the span
/// as it is.
pub(crate) fn adopt_parent(span: &Span, params: Option<&str>) {
    if span.is_disabled() {
        return;
    }
    let Some(remote) = params.and_then(remote_context) else {
        return;
    };
    let context = opentelemetry::Context::new().with_remote_span_context(remote);
    // Fails only for a span whose OpenTelemetry data is gone: the span
    // then stays a root, which is what it would be without a parent.
    let _ = span.set_parent(context);
}

/// The span context a request's `_meta` carries.
fn remote_context(params: &str) -> Option<SpanContext> {
    #[derive(serde::Deserialize)]
    struct Params {
        #[serde(rename = "_meta")]
        meta: Option<Meta>,
    }
    #[derive(serde::Deserialize)]
    struct Meta {
        traceparent: Option<String>,
        tracestate: Option<String>,
    }
    let meta = serde_json::from_str::<Params>(params).ok()?.meta?;
    let parent = parse_traceparent(meta.traceparent.as_deref()?)?;
    let state = meta
        .tracestate
        .and_then(|state| state.parse::<TraceState>().ok())
        .unwrap_or_default();
    Some(SpanContext::new(parent.0, parent.1, parent.2, true, state))
}

/// A `traceparent` value's trace id, parent id and flags (version 00, or
/// a later version read as 00 reads it, as W3C asks).
fn parse_traceparent(value: &str) -> Option<(TraceId, SpanId, TraceFlags)> {
    let mut parts = value.trim().split('-');
    let version = parts.next()?;
    let trace_id = parts.next()?;
    let span_id = parts.next()?;
    let flags = parts.next()?;
    let well_formed = version.len() == 2
        && version != "ff"
        && trace_id.len() == 32
        && span_id.len() == 16
        && flags.len() == 2
        && (version != "00" || parts.next().is_none());
    if !well_formed {
        return None;
    }
    let lowercase_hex = |text: &str| text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    if ![version, trace_id, span_id, flags]
        .into_iter()
        .all(lowercase_hex)
    {
        return None;
    }
    let trace_id = TraceId::from_hex(trace_id).ok()?;
    let span_id = SpanId::from_hex(span_id).ok()?;
    if trace_id == TraceId::INVALID || span_id == SpanId::INVALID {
        return None;
    }
    let flags = TraceFlags::new(u8::from_str_radix(flags, 16).ok()? & 0x01);
    Some((trace_id, span_id, flags))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_traceparent_is_read_by_the_w3c_rules() {
        let (trace, span, flags) =
            parse_traceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
                .expect("valid");
        assert_eq!(trace.to_string(), "0af7651916cd43dd8448eb211c80319c");
        assert_eq!(span.to_string(), "b7ad6b7169203331");
        assert!(flags.is_sampled());
        for bad in [
            "00-00000000000000000000000000000000-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
            "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
            "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b71692033-01",
            "garbage",
        ] {
            assert!(parse_traceparent(bad).is_none(), "{bad}");
        }
        // A later version may add fields after the flags.
        assert!(
            parse_traceparent("01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-later")
                .is_some()
        );
    }

    #[test]
    fn the_context_comes_from_meta_and_nowhere_else() {
        let params = r#"{"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00","tracestate":"rojo=00f067aa0ba902b7"},"x":1}"#;
        let remote = remote_context(params).expect("carried");
        assert!(remote.is_remote());
        assert!(!remote.trace_flags().is_sampled());
        assert_eq!(remote.trace_state().header(), "rojo=00f067aa0ba902b7");
        assert!(
            remote_context(
                r#"{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}"#
            )
            .is_none()
        );
        assert!(remote_context("{}").is_none());
    }
}
