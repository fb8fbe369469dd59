//! `Observed`: every message of a session with the reference server, in
//! wire order, the era probe, the handshake and the client's answers
//! included.

mod support;

use std::sync::{Arc, Mutex};

use golem_mcp::{Client, Observed, StdioTransport, WireEvent};
use support::everything_stdio;

#[tokio::test]
async fn the_observer_sees_every_message_both_ways() {
    let log = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = Arc::clone(&log);
    let transport = StdioTransport::spawn(everything_stdio()).expect("spawned");
    let client = Client::new(Observed::new(transport, move |event: WireEvent<'_>| {
        let line = match event {
            WireEvent::Sent(message) => format!("sent {}", message.method().unwrap_or("response")),
            WireEvent::Received(message) => {
                let value: serde_json::Value = serde_json::from_slice(message).expect("JSON");
                match value.get("id") {
                    Some(id) if value.get("method").is_none() => format!("received answer {id}"),
                    _ => format!("received {}", value["method"].as_str().unwrap_or("?")),
                }
            }
            other => format!("{other:?}"),
        };
        seen.lock().expect("lock").push(line);
    }));
    let server = client.initialize().await.expect("initialized");
    let version = server.protocol_version.clone();
    client.list_tools().await.expect("tools");
    client.close().await.expect("closed");

    let log = log.lock().expect("lock").clone();
    // The era probe, refused by this legacy server, then the handshake.
    let expected_start = [
        "sent server/discover",
        "received answer 1",
        "sent initialize",
        "received answer 2",
        "sent notifications/initialized",
    ];
    assert_eq!(log[..5], expected_start, "{log:#?}");
    assert!(log.contains(&"sent tools/list".to_owned()), "{log:#?}");
    assert!(log.contains(&"received answer 3".to_owned()), "{log:#?}");
    assert!(!version.is_empty());
}
