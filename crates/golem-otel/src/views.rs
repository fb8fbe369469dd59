//! What the metrics layer cannot say of an instrument it makes from an
//! event (its unit, its description, the bucket boundaries the conventions
//! advise), said by a view.

use opentelemetry_sdk::metrics::{Aggregation, Instrument, Stream};

/// The boundaries (seconds) the MCP conventions advise for their durations.
const MCP_DURATION: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// The boundaries (seconds) the GenAI conventions advise for an
/// operation's duration.
const GEN_AI_DURATION: [f64; 14] = [
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];

/// The boundaries (tokens) the GenAI conventions advise for token usage.
const TOKENS: [f64; 14] = [
    1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0, 262144.0, 1048576.0, 4194304.0,
    16777216.0, 67108864.0,
];

/// The stream of one of golem's instruments; `None` leaves any other as
/// the SDK makes it.
pub(crate) fn stream(instrument: &Instrument) -> Option<Stream> {
    let (unit, description, boundaries): (&str, &str, &[f64]) = match instrument.name() {
        "mcp.client.operation.duration" => (
            "s",
            "The duration of the MCP request or notification as observed on the sender from the time it was sent until the response or ack is received.",
            &MCP_DURATION,
        ),
        "mcp.client.session.duration" => (
            "s",
            "The duration of the MCP session as observed on the MCP client.",
            &MCP_DURATION,
        ),
        "gen_ai.client.operation.duration" => ("s", "GenAI operation duration.", &GEN_AI_DURATION),
        "gen_ai.client.token.usage" => (
            "{token}",
            "Number of input and output tokens used.",
            &TOKENS,
        ),
        _ => return None,
    };
    Stream::builder()
        .with_unit(unit)
        .with_description(description)
        .with_aggregation(Aggregation::ExplicitBucketHistogram {
            boundaries: boundaries.to_vec(),
            record_min_max: true,
        })
        .build()
        .ok()
}
