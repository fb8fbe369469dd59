#!/usr/bin/env python3
"""What many servers cost the client: golem beside rmcp, one stdio server each.

    bench/many.py              # the Markdown table (stdout), the raw lines (stderr)
    ROUNDS=5 bench/many.py

Three cases, each a flag of the shared interface (bench/src/lib.rs, "Many
servers"), run against `rmcp-echo-server`:

- idle clients: K stdio clients in one process, each connected to a server
  of its own, then idle (`--clients K --calls 0 --peak-rss`), for K = 10 and
  K = 100; the client process's `VmRSS` once all are ready (`ready_rss_kib`,
  the servers excluded) differenced over the two K is the memory per idle
  client;
- calls in flight: 1,000 calls of the `sleep` tool (200 ms) at once on one
  client (`--calls 1000 --concurrency 1000 --sleep-ms 200 --peak-rss`), each
  with a text of its own that its reply must equal, so a reply handed to the
  wrong call fails the run; `VmHWM` minus the ready `VmRSS`, per call, is
  what a call in flight costs;
- servers at once: the time until ten servers are all ready (initialized,
  tools listed) with `--clients 10`, beside the slowest of ten runs with one
  server each, one at a time.

Clients alternate run by run (golem, rmcp, golem, ...), ROUNDS rounds;
medians are reported. Unpinned: the scheduler places the client and its
servers. Every run is bounded by RUN_TIMEOUT seconds and runs in a session
of its own; once it has exited, any process left in that session (a server
the client did not reap) is reported, killed, and fails the measurement.
Builds the programs first (release). Exit status: 0 when every target is
met, 3 when one is missed, 1 when the measurement failed.
"""

import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BIN = os.path.join(ROOT, "target", "release")
SERVER = os.path.join(BIN, "rmcp-echo-server")
ROUNDS = int(os.environ.get("ROUNDS", "3"))
RUN_TIMEOUT = int(os.environ.get("RUN_TIMEOUT", "120"))
IDLE_FEW, IDLE_MANY = 10, 100
IN_FLIGHT, SLEEP_MS = 1000, 200
AT_ONCE = 10
CLIENTS = ["golem", "rmcp"]
CPUS = len(os.sched_getaffinity(0))
# How long a finished run's servers may take to be gone before they count
# as left behind: they are reaped by the client, so normally none is left.
LEFTOVER_WAIT_S = 5.0
# The targets of issue 26.
IDLE_RATIO_MAX = 0.5
AT_ONCE_RATIO_MAX = 1.2
# 1,000 calls of a 200 ms sleep that are all in flight together end within
# twice the sleep; queued one after the other they would take 200 s.
IN_FLIGHT_TOTAL_MAX_MS = 2 * SLEEP_MS


class Misrouted(Exception):
    """A client found a reply that was not its call's."""


def fail(message):
    print(f"bench/many.py: {message}", file=sys.stderr)
    sys.exit(1)


def session_processes(session):
    """The processes of `session` still alive (zombies excluded)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as stat:
                data = stat.read()
        except OSError:
            continue  # gone meanwhile
        # The name may hold spaces and parentheses: the fields after it
        # start after its last ')': state, ppid, pgrp, session, ...
        fields = data[data.rindex(")") + 2:].split()
        if int(fields[3]) == session and fields[0] != "Z":
            found.append(int(entry))
    return found


def reap_session(session, command):
    """Fails if processes of `session` outlive its leader, after killing them."""
    deadline = time.monotonic() + LEFTOVER_WAIT_S
    left = session_processes(session)
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = session_processes(session)
    if not left:
        return
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    fail(f"{' '.join(command)} left {len(left)} process(es) behind "
         f"(pids {', '.join(map(str, left))}; killed)")


def children_cpu_ms():
    """The CPU time of this script's reaped descendants so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (usage.ru_utime + usage.ru_stime) * 1e3


def run(client, flags):
    """Runs `CLIENT-bench FLAGS -- SERVER` and returns its JSON line, parsed,
    with `tree_cpu_ms`: the CPU time of the client and of the servers it
    reaped, all on this machine's CPUs."""
    command = [os.path.join(BIN, f"{client}-bench")] + flags + ["--", SERVER]
    # A session of its own (setsid): the servers stay in it, whatever
    # process group the client gives them, so none can slip away unseen.
    cpu_before = children_cpu_ms()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, start_new_session=True)
    try:
        out, err = process.communicate(timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        reap_session(process.pid, command)
        fail(f"{' '.join(command)} took more than {RUN_TIMEOUT} s (killed)")
    reap_session(process.pid, command)
    if process.returncode != 0:
        if "the reply is not this call's" in err:
            raise Misrouted(err.strip())
        fail(f"{' '.join(command)} failed: {err.strip()}")
    print(f"   {client} {' '.join(flags)}: {out.strip()}", file=sys.stderr)
    line = json.loads(out)
    line["tree_cpu_ms"] = children_cpu_ms() - cpu_before
    return line


def measure():
    subprocess.run(["cargo", "build", "--release", "--locked", "-q", "-p", "golem-bench",
                    "--features", "rmcp", "--bins"], cwd=ROOT, check=True)
    samples = {client: {"idle_kib": [], "at_once_ms": [], "alone_ms": [], "at_once_cpu_ms": [],
                        "at_once_self_ms": [], "few_rss_kib": [],
                        "many_rss_kib": [], "flight_kib": [], "flight_ms": [],
                        "flight_peak_kib": [], "misrouted": 0}
               for client in CLIENTS}
    idle = ["--calls", "0", "--bytes", "64", "--peak-rss"]
    for round_number in range(1, ROUNDS + 1):
        print(f"== round {round_number} of {ROUNDS}", file=sys.stderr)
        # Each case runs golem then rmcp, so that both see the same moment
        # of a busy machine.
        for client in CLIENTS:
            few = run(client, ["--clients", str(IDLE_FEW)] + idle)
            many = run(client, ["--clients", str(IDLE_MANY)] + idle)
            got = samples[client]
            got["few_rss_kib"].append(few["ready_rss_kib"])
            got["many_rss_kib"].append(many["ready_rss_kib"])
            got["idle_kib"].append((many["ready_rss_kib"] - few["ready_rss_kib"])
                                   / (IDLE_MANY - IDLE_FEW))
            # The ten at once are the K = 10 idle run's: its connect_ms is
            # the time until all ten were ready.
            got["at_once_ms"].append(few["connect_ms"])
            got["at_once_cpu_ms"].append(few["tree_cpu_ms"])
            got["at_once_self_ms"].append(few["cpu_self_us"] / 1e3)
        for client in CLIENTS:
            alone = [run(client, ["--clients", "1", "--calls", "0", "--bytes", "64"])
                     for _ in range(AT_ONCE)]
            samples[client]["alone_ms"].append(max(line["connect_ms"] for line in alone))
        for client in CLIENTS:
            got = samples[client]
            try:
                line = run(client, ["--calls", str(IN_FLIGHT), "--concurrency", str(IN_FLIGHT),
                                    "--sleep-ms", str(SLEEP_MS), "--bytes", "64", "--peak-rss"])
            except Misrouted as error:
                print(f"   {client}: {error}", file=sys.stderr)
                got["misrouted"] += 1
                continue
            got["flight_ms"].append(line["total_ms"])
            got["flight_peak_kib"].append(line["peak_rss_kib"])
            got["flight_kib"].append((line["peak_rss_kib"] - line["ready_rss_kib"]) / IN_FLIGHT)
    return samples


def median(values):
    return statistics.median(values) if values else None


def number(value, digits=1):
    return "–" if value is None else f"{value:,.{digits}f}"


def mib(kib):
    return None if kib is None else kib / 1024


def report(samples):
    """Prints the table and returns whether every target is met."""
    m = {client: {key: (value if key == "misrouted" else median(value))
                  for key, value in samples[client].items()}
         for client in CLIENTS}
    golem, rmcp = m["golem"], m["rmcp"]
    rows = []
    verdicts = []

    def row(figure, key, digits=1, scale=lambda value: value):
        """A figure without a target: golem's and rmcp's medians."""
        rows.append(f"| {figure} | {number(scale(golem[key]), digits)} "
                    f"| {number(scale(rmcp[key]), digits)} | | |")

    def target(figure, g, r, text, ok):
        """A figure with a target and its verdict."""
        verdicts.append(ok)
        rows.append(f"| {figure} | {g} | {r} | {text} | {'PASS' if ok else 'MISS'} |")

    row(f"client VmRSS, {IDLE_FEW} idle clients (MiB)", "few_rss_kib", 2, mib)
    row(f"client VmRSS, {IDLE_MANY} idle clients (MiB)", "many_rss_kib", 2, mib)
    idle_ratio = golem["idle_kib"] / rmcp["idle_kib"] if rmcp["idle_kib"] else None
    target("memory per idle client (KiB)", number(golem["idle_kib"]), number(rmcp["idle_kib"]),
           f"golem ≤ {IDLE_RATIO_MAX:.2f}× rmcp (is {number(idle_ratio, 2)}×)",
           idle_ratio is not None and idle_ratio <= IDLE_RATIO_MAX)

    row(f"{AT_ONCE} servers at once: all ready (ms)", "at_once_ms", 2)
    row(f"slowest of {AT_ONCE} alone, one at a time (ms)", "alone_ms", 2)
    # What bounds "at once" on a small machine: the CPU the client and its
    # ten servers need (start-up, handshake, exit), spread over its CPUs.
    row(f"{AT_ONCE} at once: client CPU (ms)", "at_once_self_ms", 2)
    row(f"{AT_ONCE} at once: client and servers CPU / {CPUS} CPUs (ms)", "at_once_cpu_ms", 2,
        lambda ms: None if ms is None else ms / CPUS)
    ratio = {client: m[client]["at_once_ms"] / m[client]["alone_ms"] for client in CLIENTS}
    target(f"{AT_ONCE} at once / slowest alone", f"{ratio['golem']:.2f}×",
           f"{ratio['rmcp']:.2f}×", f"golem ≤ {AT_ONCE_RATIO_MAX:.2f}×",
           ratio["golem"] <= AT_ONCE_RATIO_MAX)

    flight = f"{IN_FLIGHT:,} calls in flight"
    target(f"{flight} ({SLEEP_MS} ms sleeps): all done (ms)", number(golem["flight_ms"]),
           number(rmcp["flight_ms"]), f"golem < {IN_FLIGHT_TOTAL_MAX_MS} ms (all at once)",
           golem["flight_ms"] is not None and golem["flight_ms"] < IN_FLIGHT_TOTAL_MAX_MS)
    row(f"{flight}: client peak VmHWM (MiB)", "flight_peak_kib", 2, mib)
    target(f"{flight}: memory per call (KiB, VmHWM − ready VmRSS)",
           number(golem["flight_kib"], 2), number(rmcp["flight_kib"], 2),
           "bounded: golem ≤ rmcp",
           None not in (golem["flight_kib"], rmcp["flight_kib"])
           and golem["flight_kib"] <= rmcp["flight_kib"])
    target(f"{flight}: runs with a misrouted reply", f"{golem['misrouted']} of {ROUNDS}",
           f"{rmcp['misrouted']} of {ROUNDS}", "none", golem["misrouted"] == 0)

    print(f"Many servers: golem beside rmcp 3.11, one `rmcp-echo-server` per stdio client, "
          f"medians of {ROUNDS} interleaved rounds (`bench/many.py`):\n")
    print("| figure | golem | rmcp | target | verdict |")
    print("| --- | ---: | ---: | --- | --- |")
    print("\n".join(rows))
    return all(verdicts)


def main():
    if not os.path.isdir("/proc/self"):
        fail("needs Linux's /proc (the clients read their memory there)")
    return 0 if report(measure()) else 3


if __name__ == "__main__":
    sys.exit(main())
