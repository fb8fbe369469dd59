#!/usr/bin/env python3
"""What one call costs the client in each protocol era, beside rmcp.

    bench/protocol.py            # prints a Markdown table (stdout) and the raw lines (stderr)
    ROUNDS=5 bench/protocol.py

For each client (golem pinned to 2026-07-28, golem pinned to 2025-11-25, and
rmcp 3.11, which opens with its own `initialize`), transport (stdio, HTTP)
and placement, it runs the client twice against the same rmcp echo server,
with N1 and N2 sequential 64-byte echo calls, and differences the client's
own CPU time (`getrusage(RUSAGE_SELF)`, the `cpu_self_us` of each run's JSON
line): (cpu(N2) - cpu(N1)) / (N2 - N1) is the CPU per call, without start-up
and connection. Placements: the server on the client's CPU (both pinned to
CPU 0), the server on the other CPU (client on 0, server on 1), and
unpinned (the scheduler's choice: wall clock only means something there).
Clients and counts are interleaved round by round; medians are reported.
Everything runs on 127.0.0.1 and every run is bounded by RUN_TIMEOUT.
Builds the programs first (release).
"""

import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
ROUNDS = int(os.environ.get("ROUNDS", "3"))
N1, N2 = int(os.environ.get("N1", "2000")), int(os.environ.get("N2", "12000"))
RUN_TIMEOUT = int(os.environ.get("RUN_TIMEOUT", "120"))
BIN = os.path.join(ROOT, "target", "release")

CLIENTS = [
    ("golem 2026-07-28", ["golem-bench", "--protocol", "2026-07-28"]),
    ("golem 2025-11-25", ["golem-bench", "--protocol", "2025-11-25"]),
    ("rmcp 3.11", ["rmcp-bench"]),
]
PLACEMENTS = [
    ("same CPU", ["taskset", "-c", "0"], ["taskset", "-c", "0"]),
    ("other CPU", ["taskset", "-c", "0"], ["taskset", "-c", "1"]),
    ("unpinned", [], []),
]


def run(command):
    done = subprocess.run(command, capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False)
    if done.returncode != 0:
        sys.exit(f"bench/protocol.py: {' '.join(command)} failed: {done.stderr.strip()}")
    print(done.stdout.strip(), file=sys.stderr)
    return json.loads(done.stdout)


class HttpServer:
    """The rmcp echo server over HTTP, on a CPU of its own choosing."""

    def __init__(self, pin):
        self.process = subprocess.Popen(
            pin + [os.path.join(BIN, "rmcp-echo-server"), "--http", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        deadline = time.monotonic() + 30
        line = ""
        while "listening on" not in line:
            if time.monotonic() > deadline:
                sys.exit("bench/protocol.py: the HTTP echo server did not start")
            line = self.process.stdout.readline()
        self.url = line.split("listening on", 1)[1].strip()

    def close(self):
        self.process.kill()
        self.process.wait()


def measure():
    subprocess.run(["cargo", "build", "--release", "--locked", "-q", "-p", "golem-bench",
                    "--features", "rmcp", "--bins"], cwd=ROOT, check=True)
    samples = {}  # (transport, placement, client) -> [(cpu per call, calls/s at N2)]
    for _ in range(ROUNDS):
        for placement, client_pin, server_pin in PLACEMENTS:
            http = HttpServer(server_pin)
            try:
                for transport in ("stdio", "http"):
                    for name, client in CLIENTS:
                        target = (["--url", http.url] if transport == "http"
                                  else ["--"] + server_pin + [os.path.join(BIN, "rmcp-echo-server")])
                        lines = []
                        for calls in (N1, N2):
                            command = (client_pin + [os.path.join(BIN, client[0])] + client[1:]
                                       + ["--calls", str(calls), "--bytes", "64"] + target)
                            lines.append(run(command))
                        per_call = (lines[1]["cpu_self_us"] - lines[0]["cpu_self_us"]) / (N2 - N1)
                        samples.setdefault((transport, placement, name), []).append(
                            (per_call, lines[1]["calls_per_s"]))
            finally:
                http.close()
    return samples


def report(samples):
    print(f"Client CPU per sequential 64 B echo call (µs, median of {ROUNDS} rounds, "
          f"differenced over {N1} and {N2} calls) and wall-clock calls/s at {N2} calls:\n")
    print("| transport | placement | client | CPU µs/call | calls/s | CPU vs golem 2025-11-25 | CPU vs rmcp |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: |")
    for transport in ("stdio", "http"):
        for placement, _, _ in PLACEMENTS:
            medians = {}
            for name, _ in CLIENTS:
                runs = samples[(transport, placement, name)]
                medians[name] = (statistics.median(cpu for cpu, _ in runs),
                                 statistics.median(rate for _, rate in runs))
            legacy = medians["golem 2025-11-25"][0]
            rmcp = medians["rmcp 3.11"][0]
            for name, _ in CLIENTS:
                cpu, rate = medians[name]
                print(f"| {transport} | {placement} | {name} | {cpu:.1f} | {rate:,.0f} | "
                      f"{cpu / legacy:.2f}× | {cpu / rmcp:.2f}× |")


if __name__ == "__main__":
    report(measure())
