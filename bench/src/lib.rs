//! What the benchmark clients share: the command line every one of them
//! accepts, the payload, the figures and the one JSON line they print.
//!
//! Every client (`golem-bench`, `rmcp-bench`, `floor-bench`) takes exactly
//!
//! ```text
//! CLIENT --calls N --bytes B (--url URL | -- SERVER_CMD [ARGS...])
//! ```
//!
//! connects (stdio: spawns `SERVER_CMD`; http: streamable HTTP at `URL`),
//! runs `initialize` and `tools/list`, then N sequential `tools/call` of the
//! tool `echo` with `{"text": "<B bytes of 'x'>"}`, checks that every reply's
//! text has the length sent, closes, and prints one line:
//!
//! ```text
//! {"client":"golem","transport":"stdio","calls":N,"bytes":B,"connect_ms":F,"total_ms":F,"calls_per_s":F,"p50_us":F,"p99_us":F}
//! ```
//!
//! Keeping this in one place is what makes the clients comparable: they
//! differ only in the MCP client under test, never in how they are timed.

use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// The usage line, shown with command-line errors.
pub const USAGE: &str =
    "usage: CLIENT --calls N --bytes B [--peak-rss] (--url URL | -- SERVER_CMD [ARGS...])";

/// The name of the tool every client calls.
pub const TOOL: &str = "echo";

/// Where the server is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A server this client spawns and speaks to over its stdin and stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
    },
    /// A streamable-HTTP endpoint.
    Http {
        /// The endpoint, e.g. `http://127.0.0.1:8931/mcp`.
        url: String,
    },
}

impl Target {
    /// `"stdio"` or `"http"`, as printed in the JSON line.
    pub fn transport(&self) -> &'static str {
        match self {
            Target::Stdio { .. } => "stdio",
            Target::Http { .. } => "http",
        }
    }
}

/// A parsed command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Args {
    /// How many `tools/call` to make.
    pub calls: usize,
    /// How many bytes of `x` each call sends (and expects back).
    pub bytes: usize,
    /// Where the server is.
    pub target: Target,
    /// Whether to add `"peak_rss_kib"` (the client's own peak resident set,
    /// `VmHWM`) to the JSON line. Not part of the common interface: an
    /// extension `bench/run.sh` uses because `/usr/bin/time -v` folds the
    /// reaped server's peak into the client's.
    pub peak_rss: bool,
}

impl Args {
    /// Parses this process's arguments.
    pub fn from_env() -> Result<Args, String> {
        Args::parse(std::env::args().skip(1))
    }

    /// Parses `args` (without the program name).
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Args, String> {
        let mut args = args.into_iter();
        let mut calls = None;
        let mut bytes = None;
        let mut url = None;
        let mut server = None;
        let mut peak_rss = false;
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--calls" => calls = Some(number(&mut args, "--calls")?),
                "--bytes" => bytes = Some(number(&mut args, "--bytes")?),
                "--url" => url = Some(args.next().ok_or("--url needs a value")?),
                "--peak-rss" => peak_rss = true,
                "--" => {
                    let command = args.next().ok_or("no server command after --")?;
                    server = Some((command, args.by_ref().collect::<Vec<_>>()));
                }
                other => return Err(format!("unknown argument {other:?}")),
            }
        }
        let calls = calls.ok_or("--calls N is required")?;
        let bytes = bytes.ok_or("--bytes B is required")?;
        let target = match (url, server) {
            (Some(url), None) => Target::Http { url },
            (None, Some((command, args))) => Target::Stdio { command, args },
            (Some(_), Some(_)) => {
                return Err("give either --url or a server command, not both".into());
            }
            (None, None) => return Err("give --url URL or -- SERVER_CMD [ARGS...]".into()),
        };
        Ok(Args {
            calls,
            bytes,
            target,
            peak_rss,
        })
    }
}

fn number(args: &mut impl Iterator<Item = String>, flag: &str) -> Result<usize, String> {
    let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
    value
        .parse()
        .map_err(|_| format!("{flag} wants a non-negative integer, not {value:?}"))
}

/// The arguments of every call: `{"text":"xxx…"}` with `bytes` x's.
pub fn arguments_json(bytes: usize) -> String {
    let mut json = String::with_capacity(bytes + 12);
    json.push_str(r#"{"text":""#);
    json.extend(std::iter::repeat_n('x', bytes));
    json.push_str(r#""}"#);
    json
}

/// Checks the length of one reply's text.
pub fn check_length(call: usize, got: usize, sent: usize) -> Result<(), String> {
    if got == sent {
        Ok(())
    } else {
        Err(format!(
            "call {call}: the reply's text has {got} bytes, {sent} were sent"
        ))
    }
}

/// The figures of one run.
#[derive(Debug, Clone)]
pub struct Report {
    /// `golem`, `rmcp` or `floor`.
    pub client: &'static str,
    /// `stdio` or `http`.
    pub transport: &'static str,
    /// The number of calls.
    pub calls: usize,
    /// The bytes per call.
    pub bytes: usize,
    /// Spawn or connect, `initialize` and `tools/list`.
    pub connect: Duration,
    /// The N calls only.
    pub total: Duration,
    /// Each call's time, in call order.
    pub latencies: Vec<Duration>,
}

impl Report {
    /// The JSON line, with the client's peak RSS when given.
    pub fn json_line(&self, peak_rss_kib: Option<u64>) -> String {
        let mut sorted = self.latencies.clone();
        sorted.sort_unstable();
        let total_s = self.total.as_secs_f64();
        let calls_per_s = if total_s > 0.0 {
            self.calls as f64 / total_s
        } else {
            0.0
        };
        let mut line = format!(
            r#"{{"client":"{}","transport":"{}","calls":{},"bytes":{},"connect_ms":{:.3},"total_ms":{:.3},"calls_per_s":{:.1},"p50_us":{:.1},"p99_us":{:.1}"#,
            self.client,
            self.transport,
            self.calls,
            self.bytes,
            millis(self.connect),
            millis(self.total),
            calls_per_s,
            micros(percentile(&sorted, 50.0)),
            micros(percentile(&sorted, 99.0)),
        );
        if let Some(kib) = peak_rss_kib {
            let _ = write!(line, r#","peak_rss_kib":{kib}"#);
        }
        line.push('}');
        line
    }
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

/// The nearest-rank percentile `p` (0 to 100) of `sorted`; zero when empty.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Times the phases of a run, so that every client measures the same spans.
#[derive(Debug)]
pub struct Stopwatch {
    started: Instant,
    connect: Duration,
    calls_started: Option<Instant>,
    total: Duration,
    latencies: Vec<Duration>,
}

impl Stopwatch {
    /// Starts timing the connection (before the spawn or the first request).
    pub fn start(calls: usize) -> Stopwatch {
        Stopwatch {
            started: Instant::now(),
            connect: Duration::ZERO,
            calls_started: None,
            total: Duration::ZERO,
            latencies: Vec::with_capacity(calls),
        }
    }

    /// Ends the connection phase (after `tools/list`) and starts the calls.
    pub fn connected(&mut self) {
        let now = Instant::now();
        self.connect = now - self.started;
        self.calls_started = Some(now);
    }

    /// Records one call that started at `started`.
    pub fn call(&mut self, started: Instant) {
        self.latencies.push(started.elapsed());
    }

    /// Ends the calls: `total_ms` is the wall-clock time from
    /// [`connected`](Self::connected) to here, so whatever a client does
    /// between calls (dropping a result, waking a task) counts.
    pub fn calls_done(&mut self) {
        if let Some(started) = self.calls_started {
            self.total = started.elapsed();
        }
    }

    /// The report.
    pub fn finish(self, client: &'static str, args: &Args) -> Report {
        Report {
            client,
            transport: args.target.transport(),
            calls: args.calls,
            bytes: args.bytes,
            connect: self.connect,
            total: self.total,
            latencies: self.latencies,
        }
    }
}

/// This process's peak resident set size in KiB (`VmHWM` of
/// `/proc/self/status`): the same figure as the "maximum resident set size"
/// of `getrusage`, but of this process alone, without the servers it reaped.
pub fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    line.trim_start_matches("VmHWM:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

/// The Tokio runtime every async client runs on: current-thread unless
/// `BENCH_RUNTIME=multi` asks for the multi-threaded one. The same for all
/// clients, so that none is measured on a different scheduler.
pub fn runtime() -> Result<tokio::runtime::Runtime, String> {
    let multi = match std::env::var("BENCH_RUNTIME").as_deref() {
        Ok("multi") => true,
        Ok("current") | Err(_) => false,
        Ok(other) => {
            return Err(format!(
                "BENCH_RUNTIME={other:?}: expected \"current\" or \"multi\""
            ));
        }
    };
    let mut builder = if multi {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    builder
        .enable_all()
        .build()
        .map_err(|error| format!("cannot start the Tokio runtime: {error}"))
}

/// Prints the result the way every client does: the JSON line on stdout and
/// exit 0, or the error on stderr and exit 1.
pub fn finish(program: &str, args: &Args, result: Result<Report, String>) -> ExitCode {
    match result {
        Ok(report) => {
            let rss = if args.peak_rss { peak_rss_kib() } else { None };
            println!("{}", report.json_line(rss));
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("{program}: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Reports a command-line error: the problem and the usage, exit 2.
pub fn usage_error(program: &str, problem: &str) -> ExitCode {
    eprintln!("{program}: {problem}\n{USAGE}");
    ExitCode::from(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<Args, String> {
        Args::parse(line.split_whitespace().map(str::to_owned))
    }

    #[test]
    fn the_two_forms_parse() {
        assert_eq!(
            parse("--calls 3 --bytes 64 -- server --http 1").ok(),
            Some(Args {
                calls: 3,
                bytes: 64,
                target: Target::Stdio {
                    command: "server".into(),
                    args: vec!["--http".into(), "1".into()],
                },
                peak_rss: false,
            })
        );
        assert_eq!(
            parse("--url http://127.0.0.1:1/mcp --bytes 1 --calls 2 --peak-rss").ok(),
            Some(Args {
                calls: 2,
                bytes: 1,
                target: Target::Http {
                    url: "http://127.0.0.1:1/mcp".into()
                },
                peak_rss: true,
            })
        );
    }

    #[test]
    fn bad_command_lines_say_what_is_wrong() {
        let error = |line| parse(line).err().unwrap_or_default();
        assert!(error("--bytes 1 -- s").contains("--calls"));
        assert!(error("--calls x --bytes 1 -- s").contains("\"x\""));
        assert!(error("--calls 1 --bytes 1").contains("--url"));
        assert!(error("--calls 1 --bytes 1 --url u -- s").contains("not both"));
        assert!(error("--calls 1 --bytes 1 --fast -- s").contains("--fast"));
    }

    #[test]
    fn the_payload_has_the_requested_length() {
        assert_eq!(arguments_json(3), r#"{"text":"xxx"}"#);
        assert_eq!(arguments_json(0), r#"{"text":""}"#);
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let sorted: Vec<Duration> = (1..=100).map(Duration::from_micros).collect();
        assert_eq!(percentile(&sorted, 50.0), Duration::from_micros(50));
        assert_eq!(percentile(&sorted, 99.0), Duration::from_micros(99));
        assert_eq!(percentile(&sorted[..1], 99.0), Duration::from_micros(1));
        assert_eq!(percentile(&[], 50.0), Duration::ZERO);
    }

    #[test]
    fn the_json_line_has_the_fields_in_order() {
        let report = Report {
            client: "golem",
            transport: "stdio",
            calls: 2,
            bytes: 64,
            connect: Duration::from_millis(5),
            total: Duration::from_millis(1),
            latencies: vec![Duration::from_micros(400), Duration::from_micros(600)],
        };
        assert_eq!(
            report.json_line(None),
            r#"{"client":"golem","transport":"stdio","calls":2,"bytes":64,"connect_ms":5.000,"total_ms":1.000,"calls_per_s":2000.0,"p50_us":400.0,"p99_us":600.0}"#
        );
        assert!(report.json_line(Some(9)).ends_with(r#","peak_rss_kib":9}"#));
        let parsed: serde_json::Value =
            serde_json::from_str(&report.json_line(Some(9))).unwrap_or_default();
        assert_eq!(parsed["calls_per_s"], 2000.0);
    }

    #[test]
    fn peak_rss_is_read_from_proc() {
        assert!(peak_rss_kib().is_some_and(|kib| kib > 0));
    }
}
