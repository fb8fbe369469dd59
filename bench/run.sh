#!/usr/bin/env bash
# Measures golem-mcp's client against rmcp's (the official Rust SDK) and the
# no-parse floor, side by side against one rmcp echo server, and writes
# BENCHMARKS.md with the table, the ratios and one verdict per target.
#
#   bench/run.sh                 # three interleaved rounds, writes BENCHMARKS.md
#   ROUNDS=5 OUT=/tmp/b.md bench/run.sh
#   PIN_CPU=0 bench/run.sh       # client and server on CPU 0 (see below)
#   PIN_CPU=0 SERVER_CPU=1 bench/run.sh   # client on CPU 0, server on CPU 1
#   MANY=0 CPU=0 bench/run.sh    # without bench/many.py and bench/cpu.py
#   MANY=0 bench/run.sh          # without the many-servers cases at the end
#
# Builds the programs in release mode, then runs each case with the three
# clients in turn (golem rmcp floor golem rmcp floor ...), ROUNDS rounds, and
# reports medians. The concurrent cases (-c8: eight tasks sharing one
# client) run golem and rmcp only: the floor is sequential by design.
# Everything stays on 127.0.0.1; every run is bounded by
# RUN_TIMEOUT seconds; the HTTP server is killed on exit, however the script
# ends. Then bench/many.py measures the many-servers cases (idle clients,
# 1,000 calls in flight, ten servers at once; unpinned, ROUNDS rounds) and
# prints their table and verdicts; BENCHMARKS.md's "Many servers" section
# is written from it by hand. Exit status: 0 when every target is met, 3
# when one is missed (the file is written either way), anything else when
# the measurement failed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

ROUNDS=${ROUNDS:-3}
OUT=${OUT:-BENCHMARKS.md}
RUN_TIMEOUT=${RUN_TIMEOUT:-300}
# Unpinned by default: users do not pin an agent and its MCP servers to a
# CPU, so the headline figures are the scheduler's. PIN_CPU=N runs each
# client and its server on CPU N (a stdio server inherits the client's
# affinity; the HTTP server is started pinned): on a small VM a wake-up
# across CPUs costs 100 µs or more, so pinned runs spread less and show what
# a sequential call costs in CPU, but they also squeeze the concurrent cases
# onto one CPU.
PIN_CPU=${PIN_CPU-}
# SERVER_CPU=M (with PIN_CPU=N) puts every server on CPU M instead: the
# placement an unpinned run gets whenever the kernel forks the server onto
# the other CPU, which on a 2-vCPU VM decides most sequential verdicts
# (BENCHMARKS.md, "Where the server lands").
SERVER_CPU=${SERVER_CPU-}

for tool in cargo python3 timeout; do
    command -v "$tool" >/dev/null || { echo "bench/run.sh: needs $tool" >&2; exit 1; }
done
pin=()
if [[ -n $PIN_CPU ]]; then
    command -v taskset >/dev/null || {
        echo "bench/run.sh: needs taskset (util-linux) to pin to CPU $PIN_CPU; or run with PIN_CPU=" >&2
        exit 1
    }
    pin=(taskset -c "$PIN_CPU")
fi
server_pin=("${pin[@]}")
if [[ -n $SERVER_CPU ]]; then
    [[ -n $PIN_CPU ]] || { echo "bench/run.sh: SERVER_CPU needs PIN_CPU (the client's CPU)" >&2; exit 1; }
    server_pin=(taskset -c "$SERVER_CPU")
fi

echo "== building the benchmark programs (release)"
cargo build --release --locked -p golem-bench --features rmcp --bins
target_dir=$(cargo metadata --format-version 1 --no-deps --locked |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
bin="$target_dir/release"
server="$bin/rmcp-echo-server"
# How a client starts its stdio server: on the client's CPU (it inherits the
# affinity), or on SERVER_CPU.
stdio_server=("$server")
[[ -n $SERVER_CPU ]] && stdio_server=(taskset -c "$SERVER_CPU" "$server")

work=$(mktemp -d)
server_pid=
cleanup() {
    if [[ -n $server_pid ]]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== starting the HTTP echo server"
"${server_pin[@]}" "$server" --http 0 >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
url=
for _ in $(seq 100); do
    url=$(sed -n 's/^listening on //p' "$work/server.out")
    [[ -n $url ]] && break
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
done
if [[ -z $url ]]; then
    echo "bench/run.sh: the HTTP echo server did not start:" >&2
    cat "$work/server.err" >&2
    exit 1
fi
echo "   $url"

cases=(stdio-64B stdio-64B-c8 stdio-1MiB http-64B http-64B-c8 stdio-sleep100-c8 http-sleep100-c8)
# Sets client_args and clients for case $1.
case_args() {
    clients=(golem rmcp floor)
    case $1 in
        stdio-64B) client_args=(--calls 2000 --bytes 64 -- "${stdio_server[@]}") ;;
        # The client's own peak RSS (VmHWM) is added to its line: the peak
        # /usr/bin/time -v reports includes the reaped server's.
        stdio-1MiB) client_args=(--calls 20 --bytes 1048576 --peak-rss -- "${stdio_server[@]}") ;;
        http-64B) client_args=(--calls 1000 --bytes 64 --url "$url") ;;
        # Eight tasks share one client; each call's text is its own and the
        # reply must be exactly it.
        stdio-64B-c8) client_args=(--calls 2000 --bytes 64 --concurrency 8 -- "${stdio_server[@]}") ;;
        http-64B-c8) client_args=(--calls 1000 --bytes 64 --concurrency 8 --url "$url") ;;
        # Eight calls at once of a tool that waits 100 ms: done in about
        # 100 ms if the client overlaps them, 800 ms if it queues them.
        stdio-sleep100-c8) client_args=(--calls 8 --bytes 64 --concurrency 8 --sleep-ms 100 -- "${stdio_server[@]}") ;;
        http-sleep100-c8) client_args=(--calls 8 --bytes 64 --concurrency 8 --sleep-ms 100 --url "$url") ;;
        *) echo "bench/run.sh: no case $1" >&2; exit 1 ;;
    esac
    [[ $1 == *-c8 ]] && clients=(golem rmcp)
    return 0
}

# Other work on the machine skews the figures: measure how busy it is for
# a second before the runs, and say so in the file.
cpu_times() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8, $5 + $6 }' /proc/stat; }
read -r busy0 idle0 < <(cpu_times)
sleep 1
read -r busy1 idle1 < <(cpu_times)
busy_percent=$(( 100 * (busy1 - busy0) / (busy1 - busy0 + idle1 - idle0 + 1) ))
if (( busy_percent > 20 )); then
    echo "bench/run.sh: the CPUs were ${busy_percent}% busy before the runs: other work will skew the figures" >&2
fi

results="$work/results.jsonl"
: >"$results"
for round in $(seq "$ROUNDS"); do
    echo "== round $round of $ROUNDS"
    for name in "${cases[@]}"; do
        case_args "$name"
        for client in "${clients[@]}"; do
            if ! line=$(timeout "$RUN_TIMEOUT" "${pin[@]}" "$bin/$client-bench" "${client_args[@]}"); then
                echo "bench/run.sh: $client-bench failed in case $name (round $round)" >&2
                exit 1
            fi
            echo "   $name $line"
            printf '{"case":"%s","round":%d,"result":%s}\n' "$name" "$round" "$line" >>"$results"
        done
    done
done

command_line="bench/run.sh"
[[ $ROUNDS != 3 ]] && command_line="ROUNDS=$ROUNDS $command_line"
[[ -n $SERVER_CPU ]] && command_line="SERVER_CPU=$SERVER_CPU $command_line"
[[ -n $PIN_CPU ]] && command_line="PIN_CPU=$PIN_CPU $command_line"
echo "== writing $OUT"
status=0
python3 bench/report.py --results "$results" --out "$OUT" --rounds "$ROUNDS" \
    --command "$command_line" --lock Cargo.lock --busy "$busy_percent" --pin "$PIN_CPU" --server-cpu "$SERVER_CPU" ||
    status=$?
(( status == 0 || status == 3 )) || exit "$status"

if [[ ${MANY:-1} != 0 ]]; then
    # The HTTP server is not needed any more: the many-servers cases are
    # stdio, one server per client.
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=
    echo "== many servers (bench/many.py)"
    many_status=0
    ROUNDS=$ROUNDS RUN_TIMEOUT=$RUN_TIMEOUT python3 bench/many.py || many_status=$?
    (( many_status == 0 || many_status == 3 )) || exit "$many_status"
    if (( many_status == 3 )); then status=3; fi
fi

if [[ ${CPU:-1} != 0 ]]; then
    # The client's own CPU per call in both forced placements, written into
    # $OUT after the table above (its own HTTP servers, pinned per placement).
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=
    echo "== the client's CPU per call (bench/cpu.py)"
    cpu_status=0
    ROUNDS=$ROUNDS RUN_TIMEOUT=$RUN_TIMEOUT OUT=$OUT python3 bench/cpu.py || cpu_status=$?
    (( cpu_status == 0 || cpu_status == 3 )) || exit "$cpu_status"
    if (( cpu_status == 3 )); then status=3; fi
fi
exit "$status"
