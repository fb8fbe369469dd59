//! `info` and `ping`: what the `initialize` answer said, and a round trip
//! timed. It knows nothing of how the session was opened.

use golem_mcp::{Client, ServerInfo};

use crate::failure::{Exit, Failure};
use crate::feedback::Feedback;
use crate::render::server::{Transport, info_json, info_text, ping_json, ping_text};
use crate::run::connect::Carrier;
use crate::run::output::emit;

/// `info`: the server's identity, protocol, transport, capabilities and
/// instructions; `pinned` says where a pinned revision was pinned,
/// `carrier` what carries the session.
pub fn info(
    server: &ServerInfo,
    (pinned, carrier): (&str, &Carrier),
    json: bool,
    feedback: &mut Feedback,
) -> Result<Exit, Failure> {
    let transport = match carrier {
        Carrier::Stdio => Transport::Stdio,
        Carrier::Sse => Transport::Sse { after: None },
        Carrier::Http(fallback) => match fallback.refused_with() {
            None => Transport::StreamableHttp,
            Some(status) => Transport::Sse {
                after: Some(status),
            },
        },
    };
    let text = if json {
        info_json(server, transport)
    } else {
        info_text(server, pinned, transport)
    };
    feedback.finish();
    emit(&text, json)?;
    Ok(Exit::Success)
}

/// `ping`: the round-trip time.
pub async fn ping(client: &Client, json: bool, feedback: &mut Feedback) -> Result<Exit, Failure> {
    let mcp = |error: golem_mcp::Error| Failure::from_mcp(&error);
    feedback.stage("pinging");
    let started = std::time::Instant::now();
    client.ping().await.map_err(mcp)?;
    let millis = started.elapsed().as_secs_f64() * 1000.0;
    feedback.finish();
    emit(
        &match json {
            true => ping_json(millis),
            false => ping_text(millis),
        },
        json,
    )?;
    Ok(Exit::Success)
}
