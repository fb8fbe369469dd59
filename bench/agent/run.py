#!/usr/bin/env python3
"""What an agent user feels with many real MCP servers: `golem run` on 14 of them.

    bench/agent/setup.sh         # once: the pinned servers (npm ci, a venv); run.py calls it too
    bench/agent/run.py           # the Markdown table (stdout), the raw numbers (stderr)
    ROUNDS=3 bench/agent/run.py

Builds `cargo build --release -p golem-agent-cli` (GOLEM=/path/to/golem skips the build
and uses that binary), then runs `golem run --model openai:gpt-fake --base-url
http://127.0.0.1:PORT/v1 'Say hi.'` against a stand-in Chat Completions provider written
here (127.0.0.1, an ephemeral port, threaded). The stand-in answers every request with a
fixed text and no tool call (streamed as `chat.completion.chunk` events ending in
`data: [DONE]`, the shape of crates/golem-fake-provider/src/openai.rs; a plain
`chat.completion` when "stream" is not true), and records each request's arrival time and
body. The servers are the real ones of bench/agent/package.json and requirements.txt
(SERVERS below), started over stdio with no API key and no network. What is measured:

a. tool definitions in the first model request: the bytes of its "tools" array (compact
   JSON) and of its whole body, with `--tool-search auto` (the default: past 30 tools
   only the always-loaded tools and `search_tools` are offered) and with `--tool-search
   never` (every tool), all 14 servers, an empty cache each. Target: auto <= 10% of never.
b. time to the first model request: from spawning `golem run` to the stand-in receiving
   its first request, with 10 of the real servers (SLOW below) each behind a wrapper that
   appends a line to a log file of its own and sleeps 1.5 s before exec-ing the server.
   Cold: a fresh XDG_CACHE_HOME (golem starts every server and keeps its tool list under
   golem/manifests/). Warm: the same XDG_CACHE_HOME again (golem offers the kept lists and
   starts a server only when the model calls one of its tools; the stand-in never does).
   Warm --eager: the same, with --eager (every server started). Medians of ROUNDS rounds;
   server starts are counted from the log files. Targets: warm <= 0.2 s, 0 servers started.
c. golem's peak RSS, cold and warm (medians), the servers excluded. os.wait4 (as
   /usr/bin/time) is not enough: on Linux a child's ru_maxrss is the largest of its own
   and that of every descendant it reaped, and golem reaps its servers. So the script
   polls /proc/PID/status VmHWM (golem's own high-water mark, which only grows) every
   POLL_S seconds until golem exits and keeps the last reading; wait4's figure is printed
   beside it on stderr (the largest of golem, its servers and, carried across exec, the
   forked Python that spawned it: about 25 MiB even when no server starts). No target:
   reported for the record.

Every golem run is bounded by RUN_TIMEOUT seconds (default 120) and runs in a session of
its own (start_new_session); when it has exited, any process left in that session is
reported on stderr and killed. HOME is a temporary directory for the runs (some servers
write their settings there). Exit status: 0 when every target is met, 3 when one is
missed, 1 when the measurement failed (a build, a server or a run that failed).
"""

import http.server
import json
import os
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
NODE_BIN = os.path.join(HERE, "node_modules", ".bin")
VENV_BIN = os.path.join(HERE, ".venv", "bin")
ROUNDS = int(os.environ.get("ROUNDS", "5"))
RUN_TIMEOUT = float(os.environ.get("RUN_TIMEOUT", "120"))
BUILD_TIMEOUT = float(os.environ.get("BUILD_TIMEOUT", "1800"))
SETUP_TIMEOUT = float(os.environ.get("SETUP_TIMEOUT", "900"))
SLEEP_S = 1.5
POLL_S = 0.002
PROMPT = "Say hi."
ANSWER = "Hi! I am the stand-in model of bench/agent/run.py."
# Targets.
TOOLS_RATIO_MAX = 0.10
WARM_FIRST_REQUEST_MAX_S = 0.2
WARM_STARTS_MAX = 0

# The real servers: name -> (the package it comes from, argv with {work} for the work
# directory, a git repository made for the run). Versions are pinned by package.json,
# package-lock.json and requirements.txt.
SERVERS = {
    "everything": ("npm @modelcontextprotocol/server-everything",
                   [f"{NODE_BIN}/mcp-server-everything"]),
    "filesystem": ("npm @modelcontextprotocol/server-filesystem",
                   [f"{NODE_BIN}/mcp-server-filesystem", "{work}"]),
    "memory": ("npm @modelcontextprotocol/server-memory",
               [f"{NODE_BIN}/mcp-server-memory"]),
    "sequential-thinking": ("npm @modelcontextprotocol/server-sequential-thinking",
                            [f"{NODE_BIN}/mcp-server-sequential-thinking"]),
    "playwright": ("npm @playwright/mcp", [f"{NODE_BIN}/playwright-mcp", "--headless"]),
    "chrome-devtools": ("npm chrome-devtools-mcp",
                        [f"{NODE_BIN}/chrome-devtools-mcp", "--headless"]),
    "desktop-commander": ("npm @wonderwhy-er/desktop-commander",
                          [f"{NODE_BIN}/desktop-commander"]),
    "chart": ("npm @antv/mcp-server-chart", [f"{NODE_BIN}/mcp-server-chart"]),
    "context7": ("npm @upstash/context7-mcp", [f"{NODE_BIN}/context7-mcp"]),
    "git": ("pypi mcp-server-git",
            [f"{VENV_BIN}/mcp-server-git", "--repository", "{work}"]),
    "time": ("pypi mcp-server-time",
             [f"{VENV_BIN}/mcp-server-time", "--local-timezone", "UTC"]),
    "fetch": ("pypi mcp-server-fetch", [f"{VENV_BIN}/mcp-server-fetch"]),
    "excel": ("pypi excel-mcp-server", [f"{VENV_BIN}/excel-mcp-server", "stdio"]),
    "word": ("pypi office-word-mcp-server", [f"{VENV_BIN}/word_mcp_server"]),
}
# The 10 servers of (b), both registries.
SLOW = ["everything", "filesystem", "memory", "sequential-thinking", "playwright",
        "chrome-devtools", "chart", "git", "time", "excel"]


def log(*parts):
    print(*parts, file=sys.stderr, flush=True)


class Failed(Exception):
    """The measurement failed (exit status 1)."""


# ---- the stand-in provider ----------------------------------------------------------------

def chunk(delta, finish_reason=None):
    return {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1,
            "model": "gpt-fake", "system_fingerprint": None,
            "choices": [{"index": 0, "delta": delta, "logprobs": None,
                         "finish_reason": finish_reason}]}


def stream_body():
    events = [chunk({"role": "assistant", "content": ""})]
    third = -(-len(ANSWER) // 3)
    for i in range(0, len(ANSWER), third):
        events.append(chunk({"content": ANSWER[i:i + third]}))
    events.append(chunk({}, "stop"))
    events.append({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1,
                   "model": "gpt-fake", "choices": [],
                   "usage": {"prompt_tokens": 12, "completion_tokens": 7,
                             "total_tokens": 19}})
    text = "".join(f"data: {json.dumps(e, separators=(',', ':'))}\n\n" for e in events)
    return (text + "data: [DONE]\n\n").encode()


def plain_body():
    return json.dumps({
        "id": "chatcmpl-fake", "object": "chat.completion", "created": 1,
        "model": "gpt-fake",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": ANSWER},
                     "logprobs": None, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19},
    }).encode()


class Provider:
    """POST /v1/chat/completions on 127.0.0.1; each request's arrival and body kept."""

    def __init__(self):
        self.lock = threading.Lock()
        self.requests = []  # (monotonic arrival, raw body bytes, parsed body)
        provider = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = 30

            def do_POST(self):
                arrived = time.monotonic()
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                with provider.lock:
                    provider.requests.append((arrived, raw, body))
                if self.path != "/v1/chat/completions" or body is None:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                streamed = body.get("stream") is True
                data = stream_body() if streamed else plain_body()
                self.send_response(200)
                self.send_header("Content-Type",
                                 "text/event-stream" if streamed else "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def take(self):
        with self.lock:
            taken, self.requests = self.requests, []
        return taken

    def close(self):
        self.server.shutdown()
        self.server.server_close()


# ---- running golem ------------------------------------------------------------------------

def vm_hwm_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def session_alive(pgid):
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def run_golem(golem, provider, env, cwd, config, extra):
    """One `golem run`; returns a dict of what it did (raises Failed when it failed)."""
    argv = [golem, "run", "--model", "openai:gpt-fake",
            "--base-url", f"http://127.0.0.1:{provider.port}/v1",
            "--config", config, "--strict", *extra, PROMPT]
    provider.take()
    out = tempfile.TemporaryFile()
    err = tempfile.TemporaryFile()
    started = time.monotonic()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=out, stderr=err, start_new_session=True)
    hwm = None
    status = rusage = None
    deadline = started + RUN_TIMEOUT
    try:
        while True:
            reading = vm_hwm_kib(proc.pid)
            if reading is not None:
                hwm = reading
            pid, status, rusage = os.wait4(proc.pid, os.WNOHANG)
            if pid == proc.pid:
                break
            if time.monotonic() > deadline:
                os.killpg(proc.pid, signal.SIGKILL)
                _, status, rusage = os.wait4(proc.pid, 0)
                raise Failed(f"golem {' '.join(extra)} did not end within {RUN_TIMEOUT} s")
            time.sleep(POLL_S)
        ended = time.monotonic()
    finally:
        proc.returncode = os.waitstatus_to_exitcode(status) if status is not None else -9
        # Whatever is left in golem's session (a server it did not reap) is killed.
        leftover = session_alive(proc.pid)
        if leftover:
            time.sleep(0.5)
            leftover = session_alive(proc.pid)
            if leftover:
                log(f"  note: processes left in golem's session after it exited; killed")
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode(errors="replace")
        stderr = err.read().decode(errors="replace")
        out.close()
        err.close()
    requests = provider.take()
    if proc.returncode != 0 or not requests:
        raise Failed(f"golem {' '.join(extra)} exited {proc.returncode} after "
                     f"{len(requests)} model request(s); stderr:\n{stderr[-3000:]}")
    if ANSWER not in stdout:
        raise Failed(f"golem's answer was not the stand-in's: {stdout[-500:]!r}")
    first_at, first_raw, first_body = requests[0]
    return {
        "first_request_s": first_at - started,
        "wall_s": ended - started,
        "requests": len(requests),
        "first_body": first_body,
        "first_body_bytes": len(first_raw),
        "hwm_kib": hwm,
        "wait4_maxrss_kib": rusage.ru_maxrss if rusage is not None else None,
        "stderr": stderr,
    }


def tools_of(body):
    tools = (body or {}).get("tools") or []
    names = [t.get("function", {}).get("name") for t in tools]
    # UTF-8 bytes, as sent (ensure_ascii would count a non-ASCII character as \uXXXX).
    size = len(json.dumps(tools, separators=(",", ":"), ensure_ascii=False).encode())
    return tools, names, size


# ---- the setup ----------------------------------------------------------------------------

def check(argv, timeout, what):
    log(f"$ {' '.join(argv)}")
    try:
        done = subprocess.run(argv, cwd=ROOT, timeout=timeout, stdin=subprocess.DEVNULL,
                              stdout=sys.stderr, stderr=sys.stderr)
    except subprocess.TimeoutExpired:
        raise Failed(f"{what} took more than {timeout} s")
    if done.returncode != 0:
        raise Failed(f"{what} failed (exit {done.returncode})")


def write_config(path, names, work, wrap_logs=None):
    servers = {}
    for name in names:
        argv = [a.replace("{work}", work) for a in SERVERS[name][1]]
        if wrap_logs is not None:
            line = (f"echo started >> {shlex.quote(wrap_logs[name])}; sleep {SLEEP_S}; "
                    f"exec {shlex.join(argv)}")
            servers[name] = {"command": "sh", "args": ["-c", line]}
        else:
            servers[name] = {"command": argv[0], "args": argv[1:]}
    with open(path, "w") as f:
        json.dump({"mcpServers": servers}, f, indent=2)


def count_lines(path):
    try:
        with open(path) as f:
            return sum(1 for _ in f)
    except FileNotFoundError:
        return 0


def mib(kib):
    return f"{kib / 1024:.1f} MiB" if kib is not None else "n/a"


def measure():
    check([os.path.join(HERE, "setup.sh")], SETUP_TIMEOUT, "bench/agent/setup.sh")
    golem = os.environ.get("GOLEM")
    if not golem:
        check(["cargo", "build", "--release", "-p", "golem-agent-cli"], BUILD_TIMEOUT,
              "cargo build")
        golem = os.path.join(ROOT, "target", "release", "golem")
    if not os.access(golem, os.X_OK):
        raise Failed(f"no golem binary at {golem}")

    tmp = tempfile.mkdtemp(prefix="golem-agent-bench-")
    provider = Provider()
    log(f"stand-in provider on 127.0.0.1:{provider.port}; scratch {tmp}; golem {golem}")
    try:
        work = os.path.join(tmp, "work")
        home = os.path.join(tmp, "home")
        os.makedirs(work)
        os.makedirs(home)
        with open(os.path.join(work, "notes.txt"), "w") as f:
            f.write("notes\n")
        for argv in (["git", "init", "-q"], ["git", "add", "notes.txt"],
                     ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost",
                      "commit", "-q", "-m", "notes"]):
            subprocess.run(argv, cwd=work, check=True, timeout=30,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        base_env = {k: v for k, v in os.environ.items()
                    if k not in ("XDG_CACHE_HOME", "RUST_LOG")}
        base_env.update({"HOME": home, "OPENAI_API_KEY": "sk-bench-stand-in",
                         "NO_COLOR": "1"})

        def env_with(cache):
            env = dict(base_env)
            env["XDG_CACHE_HOME"] = cache
            return env

        results = {}
        # (a) tool definitions, all the servers.
        all_config = os.path.join(tmp, "all.json")
        write_config(all_config, list(SERVERS), work)
        for mode in ("auto", "never"):
            cache = tempfile.mkdtemp(prefix=f"cache-a-{mode}-", dir=tmp)
            run = run_golem(golem, provider, env_with(cache), work, all_config,
                            ["--tool-search", mode])
            tools, names, size = tools_of(run["first_body"])
            results[mode] = {"tools": len(tools), "tools_bytes": size,
                             "body_bytes": run["first_body_bytes"], "names": names}
            log(f"(a) --tool-search {mode}: {len(tools)} tools, tools {size} B, "
                f"body {run['first_body_bytes']} B, {run['first_request_s']:.3f} s to the "
                f"first request")
            if mode == "auto":
                log(f"    offered: {', '.join(names)}")
        total_tools = results["never"]["tools"]
        if "search_tools" not in results["auto"]["names"]:
            raise Failed("--tool-search auto offered no search_tools over "
                         f"{total_tools} tools")

        # (b), (c): 10 slow servers, cold, warm, warm --eager.
        logs = {name: os.path.join(tmp, f"started-{name}.log") for name in SLOW}
        slow_config = os.path.join(tmp, "slow.json")
        write_config(slow_config, SLOW, work, wrap_logs=logs)
        rows = {"cold": [], "warm": [], "eager": []}
        for round_no in range(1, ROUNDS + 1):
            cache = tempfile.mkdtemp(prefix=f"cache-b{round_no}-", dir=tmp)
            for case, extra in (("cold", []), ("warm", []), ("eager", ["--eager"])):
                if case == "cold" and os.listdir(cache):
                    raise Failed("the cold cache was not empty")
                before = sum(count_lines(p) for p in logs.values())
                run = run_golem(golem, provider, env_with(cache), work, slow_config, extra)
                run["starts"] = sum(count_lines(p) for p in logs.values()) - before
                run["tools"] = len(tools_of(run["first_body"])[0])
                rows[case].append(run)
                log(f"(b) round {round_no} {case:5}: first request "
                    f"{run['first_request_s']:.3f} s, exit after {run['wall_s']:.3f} s, "
                    f"{run['starts']} servers started, {run['tools']} tools offered, "
                    f"golem VmHWM {mib(run['hwm_kib'])}, wait4 maxrss "
                    f"{mib(run['wait4_maxrss_kib'])}")
            manifests = os.path.join(cache, "golem", "manifests")
            kept = len(os.listdir(manifests)) if os.path.isdir(manifests) else 0
            log(f"    manifests kept after round {round_no}: {kept}")
    finally:
        provider.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return results, rows, total_tools


def main():
    began = time.monotonic()
    try:
        results, rows, total_tools = measure()
    except Failed as failure:
        log(f"measurement failed: {failure}")
        return 1
    auto, never = results["auto"], results["never"]
    ratio = auto["tools_bytes"] / never["tools_bytes"]

    def median(case, key):
        values = [r[key] for r in rows[case] if r[key] is not None]
        return statistics.median(values) if values else None

    cold_s, warm_s, eager_s = (median(c, "first_request_s") for c in ("cold", "warm", "eager"))
    warm_starts = sum(r["starts"] for r in rows["warm"])
    cold_starts = [r["starts"] for r in rows["cold"]]
    eager_starts = [r["starts"] for r in rows["eager"]]
    cold_hwm, warm_hwm = median("cold", "hwm_kib"), median("warm", "hwm_kib")

    verdicts = []

    def verdict(ok):
        verdicts.append(ok)
        return "met" if ok else "**missed**"

    n = len(SLOW)
    lines = [
        f"`golem run` with {len(SERVERS)} real MCP servers ({total_tools} tools) for (a), "
        f"{n} of them behind a {SLEEP_S} s start delay for (b) and (c); medians of "
        f"{ROUNDS} rounds.",
        "",
        "| figure | value | target | verdict |",
        "| --- | --- | --- | --- |",
        f"| (a) tool definitions, first request, --tool-search auto | "
        f"{auto['tools_bytes']:,} B ({auto['tools']} tool{'s' * (auto['tools'] != 1)}: "
        f"{', '.join(auto['names'])}) | | |",
        f"| (a) tool definitions, first request, --tool-search never | "
        f"{never['tools_bytes']:,} B ({never['tools']} tools) | | |",
        f"| (a) auto / never, tool definitions | {ratio:.1%} | <= {TOOLS_RATIO_MAX:.0%} | "
        f"{verdict(ratio <= TOOLS_RATIO_MAX)} |",
        f"| (a) whole first request body, auto / never | {auto['body_bytes']:,} B / "
        f"{never['body_bytes']:,} B ({auto['body_bytes'] / never['body_bytes']:.1%}) | | |",
        f"| (b) spawn to first model request, cold ({n} servers x {SLEEP_S} s) | "
        f"{cold_s:.3f} s ({min(cold_starts)}-{max(cold_starts)} servers started) | | info |",
        f"| (b) spawn to first model request, warm | {warm_s:.3f} s | "
        f"<= {WARM_FIRST_REQUEST_MAX_S} s | {verdict(warm_s <= WARM_FIRST_REQUEST_MAX_S)} |",
        f"| (b) servers started in the warm runs (all rounds) | {warm_starts} | "
        f"{WARM_STARTS_MAX} | {verdict(warm_starts <= WARM_STARTS_MAX)} |",
        f"| (b) spawn to first model request, warm --eager | {eager_s:.3f} s "
        f"({min(eager_starts)}-{max(eager_starts)} servers started) | | info |",
        f"| (c) golem peak RSS (VmHWM), cold | {mib(cold_hwm)} | | info |",
        f"| (c) golem peak RSS (VmHWM), warm | {mib(warm_hwm)} | | info |",
    ]
    print("\n".join(lines), flush=True)
    raw = {
        "servers": {name: SERVERS[name][0] for name in SERVERS},
        "total_tools": total_tools,
        "a": {m: {k: v for k, v in results[m].items() if k != "names"}
              for m in ("auto", "never")},
        "auto_offered": auto["names"],
        "b_c": {case: [{k: r[k] for k in ("first_request_s", "wall_s", "starts", "tools",
                                          "hwm_kib", "wait4_maxrss_kib", "requests")}
                       for r in rows[case]] for case in rows},
        "elapsed_s": round(time.monotonic() - began, 1),
    }
    log("raw: " + json.dumps(raw))
    return 0 if all(verdicts) else 3


if __name__ == "__main__":
    sys.exit(main())
