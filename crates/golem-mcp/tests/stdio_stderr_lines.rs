//! A stdio server's stderr handed over line by line (`StderrMode::Lines`),
//! against the reference server started through `sh -c`, which writes
//! lines of its own to stderr first or last: every line arrives, in order
//! and as written, the last ones too once the server is gone; a long line
//! is cut and a flood is dropped with a count, and the tail is still kept
//! for error messages.

mod support;

use golem_mcp::{
    Client, ServerStderr, StderrEvent, StderrLines, StderrMode, StdioConfig, StdioTransport,
};
use support::{everything_stdio, peer_bounded};

/// The reference server, run by `sh -c` with `before` and `after` around it
/// (`exec` when there is nothing after), its stderr in lines.
fn everything_within(before: &str, after: &str) -> StdioConfig {
    let server = everything_stdio();
    let run = format!("'{}' {}", server.command, server.args.join(" "));
    let script = match after {
        "" => format!("{before}\nexec {run}"),
        _ => format!("{before}\n{run}\n{after}"),
    };
    StdioConfig {
        args: vec!["-c".into(), script],
        stderr: StderrMode::Lines {
            tail: StderrMode::DEFAULT_TAIL,
        },
        ..StdioConfig::new("sh")
    }
}

/// Starts the server, lists its tools and closes the session; its stderr.
async fn run(config: StdioConfig) -> ServerStderr {
    let transport = StdioTransport::spawn(config).expect("spawns");
    let stderr = transport.stderr();
    let client = Client::new(transport);
    peer_bounded(client.initialize())
        .await
        .expect("initializes");
    peer_bounded(client.list_tools()).await.expect("lists");
    peer_bounded(client.close()).await.expect("closes");
    stderr
}

/// Every event until the stream ends, within the bound.
async fn all_of(mut lines: StderrLines) -> Vec<StderrEvent> {
    let mut events = Vec::new();
    while let Some(event) = peer_bounded(lines.recv()).await {
        events.push(event);
    }
    events
}

fn texts(events: &[StderrEvent]) -> Vec<&str> {
    events
        .iter()
        .filter_map(|event| match event {
            StderrEvent::Line { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn every_line_arrives_as_written_and_the_last_after_the_server_is_gone() {
    let stderr = run(everything_within(
        r"printf 'first\n\033[31mred\033[0m\r\n' >&2",
        "printf 'last words' >&2",
    ))
    .await;
    let lines = stderr.lines().expect("the Lines mode");
    assert!(stderr.lines().is_none(), "handed over once");
    let events = all_of(lines).await;
    let texts = texts(&events);
    assert_eq!(
        texts[..2],
        ["first", "\u{1b}[31mred\u{1b}[0m"],
        "{events:?}"
    );
    assert_eq!(texts.last(), Some(&"last words"), "{events:?}");
    assert!(
        texts.len() > 3,
        "the server's own lines came between: {events:?}"
    );
    assert!(
        events
            .iter()
            .all(|event| matches!(event, StderrEvent::Line { cut: false, .. })),
        "{events:?}"
    );
    // The tail is kept as in `Tail`, for error messages.
    let tail = stderr.tail();
    assert!(
        tail.starts_with("first\n\u{1b}[31mred") && tail.ends_with("last words"),
        "{tail:?}"
    );
}

#[tokio::test]
async fn a_long_line_is_cut_and_a_flood_is_dropped_with_a_count() {
    const FLOOD: usize = 20_000;
    let stderr = run(everything_within(
        &format!(
            "head -c 10000 /dev/zero | tr '\\0' x >&2; echo >&2\n\
             yes flood | head -n {FLOOD} >&2"
        ),
        "",
    ))
    .await;
    // Taken only now: nothing was received while the server ran.
    let events = all_of(stderr.lines().expect("the Lines mode")).await;
    assert_eq!(
        events.first(),
        Some(&StderrEvent::Line {
            text: "x".repeat(StderrLines::MAX_LINE_BYTES),
            cut: true,
        })
    );
    let kept = texts(&events).len();
    assert_eq!(kept, StderrLines::CAPACITY, "{:?}", &events[kept - 2..]);
    let dropped: u64 = events
        .iter()
        .filter_map(|event| match event {
            StderrEvent::Dropped { lines } => Some(*lines),
            _ => None,
        })
        .sum();
    // The flood past the capacity, and the server's own lines after it.
    assert!(
        dropped >= (FLOOD + 1 - StderrLines::CAPACITY) as u64,
        "{dropped}"
    );
    assert!(stderr.total_bytes() > 10_000 + 6 * FLOOD as u64);
}

#[tokio::test]
async fn only_the_lines_mode_hands_lines_over() {
    let stderr = run(StdioConfig {
        stderr: StderrMode::default(),
        ..everything_within("echo hello >&2", "")
    })
    .await;
    assert!(stderr.lines().is_none());
    assert!(stderr.tail().starts_with("hello\n"), "{}", stderr.tail());
}
