//! The OTLP/HTTP receiver of the telemetry tests (`peers/python/otlp_receiver.py`,
//! decoding with the `opentelemetry-proto` package), started on a port of
//! its own, and the spans and metric points it received. Shared by the
//! telemetry tests of both commands (`golem-agent-cli` includes this file).

#![allow(dead_code)] // each test binary uses a part

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

/// A running receiver; killed when dropped.
pub struct Receiver {
    child: Child,
    port: u16,
}

impl Receiver {
    /// Starts the receiver and waits for the line that says its port.
    pub fn start() -> Receiver {
        let peers = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../peers");
        let python = peers.join(".venv/bin/python");
        assert!(
            python.exists(),
            "{} is missing: run scripts/install-peers.sh (the README's test command does)",
            python.display()
        );
        let mut child = Command::new(python)
            .arg(peers.join("python/otlp_receiver.py"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the receiver starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("a pipe"))
            .read_line(&mut line)
            .expect("the receiver says its port");
        let port = line
            .trim()
            .strip_prefix("listening ")
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("unexpected first line from the receiver: {line:?}"));
        Receiver { child, port }
    }

    /// The value of `OTEL_EXPORTER_OTLP_ENDPOINT` that reaches it.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every span received, once at least `min` arrived (or after the
    /// receiver's wait of `timeout` seconds).
    pub fn spans(&self, min: usize, timeout: u32) -> Vec<Span> {
        let spans = self.get(&format!("/spans?min={min}&timeout={timeout}"));
        spans
            .as_array()
            .expect("a list")
            .iter()
            .cloned()
            .map(Span)
            .collect()
    }

    /// Every metric data point received, once at least `min` arrived.
    pub fn metrics(&self, min: usize, timeout: u32) -> Vec<Value> {
        let points = self.get(&format!("/metrics?min={min}&timeout={timeout}"));
        points.as_array().expect("a list").clone()
    }

    /// The headers of every export request received.
    pub fn headers(&self) -> Vec<Value> {
        self.get("/headers").as_array().expect("a list").clone()
    }

    fn get(&self, path: &str) -> Value {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).expect("connects");
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .expect("a timeout");
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        )
        .expect("sends");
        let mut answer = String::new();
        stream.read_to_string(&mut answer).expect("reads");
        let (head, body) = answer.split_once("\r\n\r\n").expect("an HTTP answer");
        assert!(
            head.starts_with("HTTP/1.0 200") || head.starts_with("HTTP/1.1 200"),
            "{head}"
        );
        serde_json::from_str(body).expect("JSON")
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One span as the receiver decoded it.
#[derive(Clone, Debug)]
pub struct Span(pub Value);

impl Span {
    pub fn name(&self) -> &str {
        self.0["name"].as_str().unwrap_or_default()
    }
    pub fn kind(&self) -> &str {
        self.0["kind"].as_str().unwrap_or_default()
    }
    pub fn service(&self) -> &str {
        self.0["service"].as_str().unwrap_or_default()
    }
    pub fn trace_id(&self) -> &str {
        self.0["trace_id"].as_str().unwrap_or_default()
    }
    pub fn span_id(&self) -> &str {
        self.0["span_id"].as_str().unwrap_or_default()
    }
    pub fn parent(&self) -> &str {
        self.0["parent_span_id"].as_str().unwrap_or_default()
    }
    pub fn attribute(&self, key: &str) -> &Value {
        &self.0["attributes"][key]
    }
    pub fn attributes(&self) -> &serde_json::Map<String, Value> {
        self.0["attributes"].as_object().expect("attributes")
    }
    /// Whether `child` is this span's child in the same trace.
    pub fn is_parent_of(&self, child: &Span) -> bool {
        child.trace_id() == self.trace_id() && child.parent() == self.span_id()
    }
}

/// The one span of `service` named `name`; fails unless there is exactly one.
pub fn only<'s>(spans: &'s [Span], service: &str, name: &str) -> &'s Span {
    let found: Vec<&Span> = spans
        .iter()
        .filter(|span| span.service() == service && span.name() == name)
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one span {name:?} of {service:?} expected, in {:#?}",
        spans
            .iter()
            .map(|s| (s.service(), s.name()))
            .collect::<Vec<_>>()
    );
    found[0]
}

/// Fails if any attribute of a span of `service` holds `text`.
pub fn no_attribute_holds(spans: &[Span], service: &str, text: &str) {
    for span in spans.iter().filter(|span| span.service() == service) {
        for (key, value) in span.attributes() {
            assert!(
                !value.to_string().contains(text),
                "{} has {key} = {value}, which holds {text:?}",
                span.name()
            );
        }
    }
}
