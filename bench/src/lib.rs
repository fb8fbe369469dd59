//! What the benchmark clients share: the command line every one of them
//! accepts, the payload, the figures and the one JSON line they print.
//!
//! Every client (`golem-bench`, `rmcp-bench`, `floor-bench`) takes
//!
//! ```text
//! CLIENT --calls N --bytes B [--concurrency C] [--sleep-ms M] [--clients K]
//!        [--peak-rss] (--url URL | -- SERVER_CMD [ARGS...])
//! ```
//!
//! connects (stdio: spawns `SERVER_CMD`; http: streamable HTTP at `URL`),
//! runs `initialize` and `tools/list`, then N `tools/call` of the tool `echo`
//! with `{"text": "<B bytes>"}` (or of `sleep` with `{"ms": M, "text": ...}`),
//! checks every reply, closes, and prints one line:
//!
//! ```text
//! {"client":"golem","transport":"stdio","calls":N,"bytes":B,"concurrency":C,"connect_ms":F,"total_ms":F,"calls_per_s":F,"p50_us":F,"p99_us":F}
//! ```
//!
//! (ending with `"sleep_ms":M` when sleeping, `"peak_rss_kib":P` when asked
//! for with `--peak-rss`, then `"cpu_self_us":U`, the client's own CPU time,
//! then `"clients":K` when K > 1 and `"ready_rss_kib":R` with `--peak-rss`).
//!
//! With C = 1 (the default) the calls are sequential, every text is B bytes
//! of `x` and each reply's length is checked. With C > 1, C tasks share one
//! client and split the N calls between them; each call's text is its own
//! (see [`Args::plan`]) and the reply must be exactly that text, so a reply
//! handed to the wrong caller fails the run. `floor-bench` is sequential
//! only, calls only `echo` and connects one client.
//!
//! # Many servers
//!
//! `--clients K` (default 1) connects K clients at once in this one process,
//! each to a server of its own (stdio: K spawns of `SERVER_CMD`; http: K
//! sessions at `URL`): `connect_ms` is then the time until all K have
//! answered `initialize` and `tools/list`. Task T of the calls uses client
//! T mod K (so with C = 1 every call goes to client 0). With N = 0 the
//! clients are connected, stay idle and are closed. The three cases of
//! `bench/many.py` are made of these flags:
//!
//! - *idle clients*: `--clients K --calls 0 --peak-rss`, for two K; the
//!   difference of `ready_rss_kib` (this process's `VmRSS` once all K are
//!   ready, the servers excluded) divided by the difference of K is the
//!   memory per idle client;
//! - *calls in flight*: `--calls N --concurrency N --sleep-ms M --peak-rss`:
//!   N calls of `sleep` at once on one client, each with a text of its own
//!   that its reply must equal; `peak_rss_kib` (`VmHWM`) minus
//!   `ready_rss_kib` is what the N calls in flight cost;
//! - *servers at once*: `connect_ms` of `--clients 10 --calls 0` beside
//!   the slowest of ten runs with `--clients 1 --calls 0`.
//!
//! Keeping this in one place is what makes the clients comparable: they
//! differ only in the MCP client under test, never in how they are timed.

use std::fmt::{self, Write as _};
use std::future::Future;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// The usage line, shown with command-line errors.
pub const USAGE: &str = "usage: CLIENT --calls N --bytes B [--concurrency C] [--sleep-ms M] \
     [--clients K] [--peak-rss] (--url URL | -- SERVER_CMD [ARGS...])";

/// The echo tool, which every client calls unless `--sleep-ms` is given.
pub const TOOL: &str = "echo";

/// The tool `--sleep-ms` calls: it waits, then returns its text.
pub const SLEEP_TOOL: &str = "sleep";

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
    /// How many bytes of text each call sends (and expects back).
    pub bytes: usize,
    /// How many tasks share the client (1: sequential calls).
    pub concurrency: usize,
    /// Call the sleep tool, waiting this many milliseconds, instead of echo.
    pub sleep_ms: Option<u64>,
    /// How many clients to connect at once, each to a server of its own
    /// (see "Many servers" above).
    pub clients: usize,
    /// Where the server is.
    pub target: Target,
    /// Whether to add `"peak_rss_kib"` (the client's own peak resident set,
    /// `VmHWM`) to the JSON line. Not part of the common interface: an
    /// extension `bench/run.sh` uses because `/usr/bin/time -v` folds the
    /// reaped server's peak into the client's.
    pub peak_rss: bool,
    /// `--protocol VERSION`: the MCP revision golem-bench pins (another
    /// extension; rmcp-bench and the floor refuse it: rmcp chooses its own).
    pub protocol: Option<String>,
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
        let mut protocol = None;
        let mut concurrency = 1;
        let mut sleep_ms = None;
        let mut clients = 1;
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--calls" => calls = Some(number(&mut args, "--calls")?),
                "--bytes" => bytes = Some(number(&mut args, "--bytes")?),
                "--concurrency" => concurrency = number(&mut args, "--concurrency")?,
                "--sleep-ms" => sleep_ms = Some(number(&mut args, "--sleep-ms")?),
                "--clients" => clients = number(&mut args, "--clients")?,
                "--url" => url = Some(args.next().ok_or("--url needs a value")?),
                "--peak-rss" => peak_rss = true,
                "--protocol" => protocol = Some(args.next().ok_or("--protocol needs a value")?),
                "--" => {
                    let command = args.next().ok_or("no server command after --")?;
                    server = Some((command, args.by_ref().collect::<Vec<_>>()));
                }
                other => return Err(format!("unknown argument {other:?}")),
            }
        }
        let calls = calls.ok_or("--calls N is required")?;
        let bytes = bytes.ok_or("--bytes B is required")?;
        if concurrency == 0 {
            return Err("--concurrency wants at least 1".into());
        }
        if clients == 0 {
            return Err("--clients wants at least 1".into());
        }
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
            concurrency,
            sleep_ms,
            clients,
            target,
            peak_rss,
            protocol,
        })
    }

    /// The tool the calls go to.
    pub fn tool(&self) -> &'static str {
        if self.sleep_ms.is_some() {
            SLEEP_TOOL
        } else {
            TOOL
        }
    }

    /// The calls of each task, built before the clock starts so that no
    /// client is timed building its payloads. `convert` turns the JSON text
    /// of a call's arguments into what the client sends.
    ///
    /// With one task the arguments are the same for every call (built once
    /// and shared, as an agent would resend one value, and so that a 1 MiB
    /// run holds one payload, not N) and each reply's length is checked.
    /// With C tasks the N calls are split as evenly as possible, and call
    /// `I` of task `T` sends a text of its own, `tT.I.` padded with `x` to B
    /// bytes, which the reply must equal.
    pub fn plan<A>(
        &self,
        convert: impl Fn(String) -> Result<A, String>,
    ) -> Result<Vec<Vec<Call<A>>>, String>
    where
        A: Clone,
    {
        if self.concurrency == 1 {
            let text = "x".repeat(self.bytes);
            let arguments = convert(tool_arguments(&text, self.sleep_ms))?;
            let calls = (0..self.calls)
                .map(|index| Call {
                    task: None,
                    index,
                    arguments: arguments.clone(),
                    expect: Expect::Length(self.bytes),
                })
                .collect();
            return Ok(vec![calls]);
        }
        (0..self.concurrency)
            .map(|task| {
                let share = self.calls / self.concurrency
                    + usize::from(task < self.calls % self.concurrency);
                (0..share)
                    .map(|index| {
                        let text = unique_text(task, index, self.bytes)?;
                        Ok(Call {
                            task: Some(task),
                            index,
                            arguments: convert(tool_arguments(&text, self.sleep_ms))?,
                            expect: Expect::Text(text),
                        })
                    })
                    .collect()
            })
            .collect()
    }
}

fn number<T: std::str::FromStr>(
    args: &mut impl Iterator<Item = String>,
    flag: &str,
) -> Result<T, String> {
    let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
    value
        .parse()
        .map_err(|_| format!("{flag} wants a non-negative integer, not {value:?}"))
}

/// The arguments of a sequential echo call: `{"text":"xxx…"}` with `bytes`
/// x's.
pub fn arguments_json(bytes: usize) -> String {
    tool_arguments(&"x".repeat(bytes), None)
}

/// The arguments of one call: `{"text":TEXT}` for echo,
/// `{"ms":M,"text":TEXT}` for sleep. `text` needs no escaping: the texts
/// here are made of ASCII letters, digits and dots.
fn tool_arguments(text: &str, sleep_ms: Option<u64>) -> String {
    let mut json = String::with_capacity(text.len() + 32);
    json.push('{');
    if let Some(ms) = sleep_ms {
        let _ = write!(json, r#""ms":{ms},"#);
    }
    json.push_str(r#""text":""#);
    json.push_str(text);
    json.push_str(r#""}"#);
    json
}

/// The text of call `index` of task `task`: `tTASK.INDEX.` padded with `x`
/// to `bytes` bytes, so that no two calls of a run send the same text.
fn unique_text(task: usize, index: usize, bytes: usize) -> Result<String, String> {
    let mut text = format!("t{task}.{index}.");
    if text.len() > bytes {
        return Err(format!(
            "--bytes {bytes} is too small to tag each call with its own text \
             (task {task} call {index} needs {})",
            text.len()
        ));
    }
    text.extend(std::iter::repeat_n('x', bytes - text.len()));
    Ok(text)
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

/// One call of a task, with what it sends and what it expects back.
#[derive(Debug, Clone)]
pub struct Call<A> {
    /// The task making it, when there are several.
    pub task: Option<usize>,
    /// Its place among its task's calls.
    pub index: usize,
    /// Its arguments, in the form the client sends.
    pub arguments: A,
    /// What the reply's text must be.
    pub expect: Expect,
}

/// What a reply's text must be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// This many bytes (sequential runs, where every call sends the same
    /// text, so only its length says anything).
    Length(usize),
    /// Exactly this text, the call's own.
    Text(String),
}

impl<A> Call<A> {
    /// Checks the reply's text, given as the text of its content items in
    /// order (walked twice, only to quote them when they are wrong).
    pub fn check<'a, I>(&self, texts: I) -> Result<(), String>
    where
        I: Iterator<Item = &'a str> + Clone,
    {
        match &self.expect {
            Expect::Length(sent) => check_length(self.index, texts.map(str::len).sum(), *sent),
            Expect::Text(sent) => {
                let mut rest = sent.as_str();
                let mut same = true;
                for text in texts.clone() {
                    match rest.strip_prefix(text) {
                        Some(after) => rest = after,
                        None => {
                            same = false;
                            break;
                        }
                    }
                }
                if same && rest.is_empty() {
                    return Ok(());
                }
                Err(format!(
                    "{self}: the reply is not this call's: sent {}, got {} \
                     (a reply handed to the wrong caller?)",
                    excerpt(sent),
                    excerpt(&texts.collect::<String>())
                ))
            }
        }
    }
}

impl<A> fmt::Display for Call<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.task {
            Some(task) => write!(f, "task {task} call {}", self.index),
            None => write!(f, "call {}", self.index),
        }
    }
}

/// The start of `text`, quoted, for error messages.
fn excerpt(text: &str) -> String {
    const MAX: usize = 40;
    match text.char_indices().nth(MAX) {
        Some((end, _)) => format!("{:?}… ({} bytes)", &text[..end], text.len()),
        None => format!("{text:?}"),
    }
}

/// Runs the tasks and returns every call's latency, or the first failure.
///
/// One task is awaited in place, as the sequential runs always were; more
/// run together (see [`all_at_once`]).
pub async fn run_tasks<F>(mut tasks: Vec<F>) -> Result<Vec<Duration>, String>
where
    F: Future<Output = Result<Vec<Duration>, String>> + Send + 'static,
{
    if tasks.len() == 1
        && let Some(task) = tasks.pop()
    {
        return task.await;
    }
    let latencies = all_at_once(tasks).await?;
    Ok(latencies.into_iter().flatten().collect())
}

/// Runs the futures together and returns their outputs in their order, or
/// the first failure: the calls of C tasks, the connections of K clients,
/// their closes.
///
/// One future is awaited in place, with no task of its own, so that a run
/// with one client and one task is driven exactly as before. More are
/// spawned on the runtime, so they share its threads (or its one thread)
/// like any other tasks of the program; when one fails, the others are
/// aborted (dropping the set aborts them).
pub async fn all_at_once<T, F>(mut futures: Vec<F>) -> Result<Vec<T>, String>
where
    F: Future<Output = Result<T, String>> + Send + 'static,
    T: Send + 'static,
{
    if futures.len() == 1
        && let Some(future) = futures.pop()
    {
        return future.await.map(|output| vec![output]);
    }
    let mut outputs: Vec<Option<T>> = futures.iter().map(|_| None).collect();
    let mut running = tokio::task::JoinSet::new();
    for (index, future) in futures.into_iter().enumerate() {
        running.spawn(async move { (index, future.await) });
    }
    while let Some(joined) = running.join_next().await {
        let (index, output) = joined.map_err(|error| format!("a task did not finish: {error}"))?;
        outputs[index] = Some(output?);
    }
    Ok(outputs.into_iter().flatten().collect())
}

/// An error of client `index` of `clients`: named (`client 3: ...`) when
/// there are several, as it is when there is one.
pub fn client_error(index: usize, clients: usize, error: impl fmt::Display) -> String {
    if clients == 1 {
        error.to_string()
    } else {
        format!("client {index}: {error}")
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
    /// How many tasks shared the client.
    pub concurrency: usize,
    /// How many clients were connected (each to its own server).
    pub clients: usize,
    /// How long each call asked the sleep tool to wait, if it did.
    pub sleep_ms: Option<u64>,
    /// Spawn or connect, `initialize` and `tools/list`.
    pub connect: Duration,
    /// The N calls only.
    pub total: Duration,
    /// Each call's time (in call order when sequential), measured by the
    /// task that made it.
    pub latencies: Vec<Duration>,
    /// This process's resident set (`VmRSS`, KiB) once every client was
    /// ready, before the calls: read with `--peak-rss` only.
    pub ready_rss_kib: Option<u64>,
}

impl Report {
    /// The JSON line, with the client's peak RSS when given.
    pub fn json_line(&self, peak_rss_kib: Option<u64>, cpu_self: Option<Duration>) -> String {
        let mut sorted = self.latencies.clone();
        sorted.sort_unstable();
        let total_s = self.total.as_secs_f64();
        let calls_per_s = if total_s > 0.0 {
            self.calls as f64 / total_s
        } else {
            0.0
        };
        let mut line = format!(
            r#"{{"client":"{}","transport":"{}","calls":{},"bytes":{},"concurrency":{},"connect_ms":{:.3},"total_ms":{:.3},"calls_per_s":{:.1},"p50_us":{:.1},"p99_us":{:.1}"#,
            self.client,
            self.transport,
            self.calls,
            self.bytes,
            self.concurrency,
            millis(self.connect),
            millis(self.total),
            calls_per_s,
            micros(percentile(&sorted, 50.0)),
            micros(percentile(&sorted, 99.0)),
        );
        if let Some(ms) = self.sleep_ms {
            let _ = write!(line, r#","sleep_ms":{ms}"#);
        }
        if let Some(kib) = peak_rss_kib {
            let _ = write!(line, r#","peak_rss_kib":{kib}"#);
        }
        if let Some(cpu) = cpu_self {
            let _ = write!(line, r#","cpu_self_us":{:.0}"#, micros(cpu));
        }
        if self.clients > 1 {
            let _ = write!(line, r#","clients":{}"#, self.clients);
        }
        if let Some(kib) = self.ready_rss_kib {
            let _ = write!(line, r#","ready_rss_kib":{kib}"#);
        }
        line.push('}');
        line
    }
}

/// The CPU time (user and system) this process has used so far, from
/// `getrusage(RUSAGE_SELF)`: the client's own, never the server's (a
/// reaped child's time goes to `RUSAGE_CHILDREN`). Differenced over two
/// call counts, it gives the client's CPU per call without its start-up.
pub fn self_cpu() -> Option<Duration> {
    // SAFETY: getrusage writes only into the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return None;
    }
    let time = |value: libc::timeval| {
        Duration::from_secs(value.tv_sec as u64) + Duration::from_micros(value.tv_usec as u64)
    };
    Some(time(usage.ru_utime) + time(usage.ru_stime))
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
    /// Whether to read the resident set when the clients are ready.
    memory: bool,
    ready_rss_kib: Option<u64>,
}

impl Stopwatch {
    /// Starts timing the connection (before the spawn or the first request)
    /// of the run `args` asks for.
    pub fn start(args: &Args) -> Stopwatch {
        Stopwatch {
            started: Instant::now(),
            connect: Duration::ZERO,
            calls_started: None,
            total: Duration::ZERO,
            latencies: Vec::with_capacity(args.calls),
            memory: args.peak_rss,
            ready_rss_kib: None,
        }
    }

    /// Ends the connection phase (after `tools/list`, of every client) and
    /// starts the calls. With `--peak-rss`, reads the resident set in
    /// between, so that neither phase is timed reading it.
    pub fn connected(&mut self) {
        let mut now = Instant::now();
        self.connect = now - self.started;
        if self.memory {
            self.ready_rss_kib = rss_kib();
            now = Instant::now();
        }
        self.calls_started = Some(now);
    }

    /// Records one call that started at `started`.
    pub fn call(&mut self, started: Instant) {
        self.latencies.push(started.elapsed());
    }

    /// Records calls that tasks timed themselves.
    pub fn record(&mut self, latencies: impl IntoIterator<Item = Duration>) {
        self.latencies.extend(latencies);
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
            concurrency: args.concurrency,
            clients: args.clients,
            sleep_ms: args.sleep_ms,
            connect: self.connect,
            total: self.total,
            latencies: self.latencies,
            ready_rss_kib: self.ready_rss_kib,
        }
    }
}

/// This process's peak resident set size in KiB (`VmHWM` of
/// `/proc/self/status`): the same figure as the "maximum resident set size"
/// of `getrusage`, but of this process alone, without the servers it reaped.
pub fn peak_rss_kib() -> Option<u64> {
    status_kib(&std::fs::read_to_string("/proc/self/status").ok()?, "VmHWM")
}

/// This process's resident set size now, in KiB (`VmRSS` of
/// `/proc/self/status`): its own pages only, never its servers'.
pub fn rss_kib() -> Option<u64> {
    status_kib(&std::fs::read_to_string("/proc/self/status").ok()?, "VmRSS")
}

/// The value of `FIELD:   123 kB` in the text of a `/proc/PID/status`.
fn status_kib(status: &str, field: &str) -> Option<u64> {
    status.lines().find_map(|line| {
        line.strip_prefix(field)?
            .strip_prefix(':')?
            .trim()
            .strip_suffix("kB")?
            .trim()
            .parse()
            .ok()
    })
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
            println!("{}", report.json_line(rss, self_cpu()));
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
    use std::sync::Arc;

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
                concurrency: 1,
                sleep_ms: None,
                clients: 1,
                peak_rss: false,
                protocol: None,
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
                concurrency: 1,
                sleep_ms: None,
                clients: 1,
                peak_rss: true,
                protocol: None,
            })
        );
        let args = parse("--calls 8 --bytes 64 --concurrency 8 --sleep-ms 100 -- s");
        assert_eq!(
            args.as_ref()
                .map(|args| (args.concurrency, args.sleep_ms, args.tool())),
            Ok((8, Some(100), SLEEP_TOOL))
        );
        let args = parse("--clients 100 --calls 0 --bytes 64 --peak-rss -- s");
        assert_eq!(
            args.as_ref()
                .map(|args| (args.clients, args.calls, args.peak_rss)),
            Ok((100, 0, true))
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
        assert!(error("--calls 1 --bytes 1 --concurrency 0 -- s").contains("at least 1"));
        assert!(error("--calls 1 --bytes 1 --sleep-ms -5 -- s").contains("\"-5\""));
        assert!(
            error("--calls 1 --bytes 1 --clients 0 -- s").contains("--clients wants at least 1")
        );
        assert!(error("--calls 1 --bytes 1 --clients many -- s").contains("\"many\""));
        assert!(error("--calls 1 --bytes 1 --clients").contains("--clients needs a value"));
    }

    fn plan(line: &str) -> Result<Vec<Vec<Call<String>>>, String> {
        parse(line)?.plan(Ok)
    }

    #[test]
    fn one_task_sends_the_same_text_every_call() {
        let tasks = plan("--calls 3 --bytes 4 -- s").unwrap_or_default();
        assert_eq!(tasks.len(), 1);
        assert!(
            tasks[0]
                .iter()
                .all(|call| call.arguments == r#"{"text":"xxxx"}"#
                    && call.expect == Expect::Length(4)
                    && call.task.is_none())
        );
        let tasks = plan("--calls 1 --bytes 2 --sleep-ms 7 -- s").unwrap_or_default();
        assert_eq!(tasks[0][0].arguments, r#"{"ms":7,"text":"xx"}"#);
    }

    #[test]
    fn concurrent_calls_split_the_calls_and_each_sends_its_own_text() {
        let tasks =
            plan("--calls 7 --bytes 8 --concurrency 3 --sleep-ms 5 -- s").unwrap_or_default();
        let shares: Vec<usize> = tasks.iter().map(Vec::len).collect();
        assert_eq!(shares, [3, 2, 2]);
        let call = &tasks[1][1];
        assert_eq!(call.to_string(), "task 1 call 1");
        assert_eq!(call.arguments, r#"{"ms":5,"text":"t1.1.xxx"}"#);
        assert_eq!(call.expect, Expect::Text("t1.1.xxx".into()));
        let mut texts: Vec<&Expect> = tasks.iter().flatten().map(|call| &call.expect).collect();
        texts.sort_by_key(|expect| format!("{expect:?}"));
        texts.dedup();
        assert_eq!(texts.len(), 7);
        let error = plan("--calls 2 --bytes 4 --concurrency 2 -- s")
            .err()
            .unwrap_or_default();
        assert!(error.contains("--bytes 4 is too small"), "{error}");
    }

    #[test]
    fn a_reply_must_be_the_calls_own_text() {
        let tasks = plan("--calls 2 --bytes 6 --concurrency 2 -- s").unwrap_or_default();
        let call = &tasks[1][0];
        assert_eq!(call.check(["t1.0.x"].into_iter()), Ok(()));
        assert_eq!(call.check(["t1.", "0.x"].into_iter()), Ok(()));
        let error = call.check(["t0.0.x"].into_iter()).err().unwrap_or_default();
        assert!(
            error.starts_with("task 1 call 0: the reply is not this call's"),
            "{error}"
        );
        assert!(error.contains(r#"got "t0.0.x""#), "{error}");
        assert!(call.check(["t1.0.x", "x"].into_iter()).is_err());
        assert!(call.check(["t1.0."].into_iter()).is_err());
        let sequential = &plan("--calls 1 --bytes 3 -- s").unwrap_or_default()[0][0];
        assert_eq!(sequential.check(["abc"].into_iter()), Ok(()));
        let error = sequential
            .check(["ab"].into_iter())
            .err()
            .unwrap_or_default();
        assert_eq!(error, "call 0: the reply's text has 2 bytes, 3 were sent");
    }

    fn run<F>(tasks: Vec<F>) -> Option<Result<Vec<Duration>, String>>
    where
        F: Future<Output = Result<Vec<Duration>, String>> + Send + 'static,
    {
        let runtime = runtime().ok()?;
        Some(runtime.block_on(run_tasks(tasks)))
    }

    #[test]
    fn tasks_run_together_and_the_first_failure_wins() {
        let sleeper = |ms| async move {
            let started = Instant::now();
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok(vec![started.elapsed()])
        };
        let started = Instant::now();
        let latencies = run((0..8).map(|_| sleeper(50)).collect()).and_then(Result::ok);
        assert_eq!(latencies.map(|latencies| latencies.len()), Some(8));
        assert!(started.elapsed() < Duration::from_millis(8 * 50));
        let failing = |fail: bool| async move {
            if fail {
                Err("task failed".to_owned())
            } else {
                Ok(vec![Duration::ZERO])
            }
        };
        assert_eq!(
            run(vec![failing(false), failing(true)]),
            Some(Err("task failed".to_owned()))
        );
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
            concurrency: 1,
            clients: 1,
            sleep_ms: None,
            connect: Duration::from_millis(5),
            total: Duration::from_millis(1),
            latencies: vec![Duration::from_micros(400), Duration::from_micros(600)],
            ready_rss_kib: None,
        };
        assert_eq!(
            report.json_line(None, None),
            r#"{"client":"golem","transport":"stdio","calls":2,"bytes":64,"concurrency":1,"connect_ms":5.000,"total_ms":1.000,"calls_per_s":2000.0,"p50_us":400.0,"p99_us":600.0}"#
        );
        assert!(
            report
                .json_line(Some(9), None)
                .ends_with(r#","peak_rss_kib":9}"#)
        );
        assert!(
            report
                .json_line(Some(9), Some(Duration::from_micros(1500)))
                .ends_with(r#","peak_rss_kib":9,"cpu_self_us":1500}"#)
        );
        let slept = Report {
            sleep_ms: Some(100),
            ..report.clone()
        };
        assert!(
            slept
                .json_line(Some(9), None)
                .ends_with(r#","sleep_ms":100,"peak_rss_kib":9}"#)
        );
        let parsed: serde_json::Value =
            serde_json::from_str(&report.json_line(Some(9), None)).unwrap_or_default();
        assert_eq!(parsed["calls_per_s"], 2000.0);
    }

    #[test]
    fn many_clients_add_their_count_and_the_ready_memory_last() {
        let idle = Report {
            client: "rmcp",
            transport: "stdio",
            calls: 0,
            bytes: 64,
            concurrency: 1,
            clients: 100,
            sleep_ms: None,
            connect: Duration::from_millis(40),
            total: Duration::ZERO,
            latencies: Vec::new(),
            ready_rss_kib: Some(5120),
        };
        let line = idle.json_line(Some(6000), Some(Duration::from_micros(7)));
        assert!(
            line.ends_with(
                r#","peak_rss_kib":6000,"cpu_self_us":7,"clients":100,"ready_rss_kib":5120}"#
            ),
            "{line}"
        );
        // No calls: every figure is still a number, so the line is JSON.
        let parsed: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
        assert_eq!(parsed["calls_per_s"], 0.0);
        assert_eq!(parsed["p99_us"], 0.0);
        assert_eq!(parsed["ready_rss_kib"], 5120);
        let one = Report {
            clients: 1,
            ready_rss_kib: None,
            ..idle
        };
        assert!(!one.json_line(None, None).contains("clients"));
    }

    #[test]
    fn the_ready_memory_is_read_only_when_asked_for() {
        let mut watch = Stopwatch::start(
            &parse("--calls 0 --bytes 1 --peak-rss -- s").expect("the line parses"),
        );
        watch.connected();
        watch.calls_done();
        let args = parse("--calls 0 --bytes 1 -- s").expect("the line parses");
        assert!(
            watch
                .finish("golem", &args)
                .ready_rss_kib
                .is_some_and(|kib| kib > 0)
        );
        let mut watch = Stopwatch::start(&args);
        watch.connected();
        assert_eq!(watch.finish("golem", &args).ready_rss_kib, None);
    }

    #[test]
    fn futures_run_together_and_keep_their_order() {
        let runtime = runtime().expect("a runtime starts");
        // Each future waits until all four have started: run one after the
        // other they would wait forever, and the timeout would fail the test.
        let barrier = Arc::new(tokio::sync::Barrier::new(4));
        let futures = (0..4)
            .map(|index| {
                let barrier = Arc::clone(&barrier);
                async move {
                    barrier.wait().await;
                    Ok(index * 10)
                }
            })
            .collect();
        let outputs = runtime.block_on(async {
            tokio::time::timeout(Duration::from_secs(10), all_at_once(futures)).await
        });
        assert_eq!(outputs, Ok(Ok(vec![0, 10, 20, 30])));
        let one = runtime.block_on(all_at_once(vec![async { Ok("alone") }]));
        assert_eq!(one, Ok(vec!["alone"]));
        let failing = |fail: bool| async move {
            if fail {
                Err(client_error(1, 2, "cannot spawn"))
            } else {
                Ok(())
            }
        };
        let failed = runtime.block_on(all_at_once(vec![failing(false), failing(true)]));
        assert_eq!(failed, Err("client 1: cannot spawn".to_owned()));
        assert_eq!(client_error(0, 1, "cannot spawn"), "cannot spawn");
    }

    #[test]
    fn peak_rss_is_read_from_proc() {
        assert!(peak_rss_kib().is_some_and(|kib| kib > 0));
        assert!(rss_kib().is_some_and(|kib| kib > 0));
    }

    #[test]
    fn status_fields_are_read_by_their_whole_name() {
        let status =
            "Name:\tgolem-bench\nVmHWM:\t    9120 kB\nVmRSS:\t    8704 kB\nVmRSSX:\t1 kB\n";
        assert_eq!(status_kib(status, "VmHWM"), Some(9120));
        assert_eq!(status_kib(status, "VmRSS"), Some(8704));
        assert_eq!(status_kib(status, "VmSwap"), None);
        assert_eq!(status_kib("Name:\tx\n", "Name"), None);
    }
}
