#!/usr/bin/env bash
# The interop suite: drives the golem-mcp binary against real MCP servers nobody here
# wrote, over every transport each speaks, and asserts outputs and exit statuses:
#   - @modelcontextprotocol/server-everything (npm, pinned in peers/): stdio, streamable HTTP;
#   - a server on the official Python SDK (mcp on PyPI, peers/python/mcp_py_server.py):
#     stdio, streamable HTTP with event-stream answers, streamable HTTP with JSON answers;
#   - a FastMCP server of the SDK's 1.x line (peers/python/sse_fastmcp_server.py, in
#     peers/.venv-sse): the HTTP+SSE transport of 2024-11-05, with --sse and by fallback;
#   - no server at all: a missing executable and a closed port.
# Then it regenerates docs/interop.md from the results and fails if the committed table
# differed (so the table cannot drift from what was tested).
#
# Assumes scripts/install-peers.sh has run (scripts/test.sh does both). Everything runs on
# 127.0.0.1; every wait is bounded; every server started here is stopped on exit.
# Prints one line per check and closes with "interop: N passed, M failed"; exits non-zero
# if anything failed.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
EVERYTHING="$ROOT/peers/node_modules/.bin/mcp-server-everything"
PY="$ROOT/peers/.venv/bin/python"
PY_SERVER="$ROOT/peers/python/mcp_py_server.py"
SSE_PY="$ROOT/peers/.venv-sse/bin/python"
SSE_SERVER="$ROOT/peers/python/sse_fastmcp_server.py"
TABLE="$ROOT/docs/interop.md"
# How long one golem-mcp run may take before the check fails; how long a server may
# take to listen; how long a "not there" failure may take.
RUN_LIMIT=120
LISTEN_LIMIT=60
FAST_MS=5000

die() { echo "interop: $*" >&2; exit 1; }
[[ -x "$EVERYTHING" && -x "$PY" && -f "$PY_SERVER" && -x "$SSE_PY" && -f "$SSE_SERVER" ]] \
  || die "run scripts/install-peers.sh first"

cargo build --quiet --locked -p golem-mcp-cli || die "cannot build golem-mcp"
BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/golem-mcp"

WORK="$(mktemp -d)"
SERVER_PIDS=()
# Servers get SIGTERM, then SIGKILL if they are still there after 5 s (uvicorn waits for
# running requests, such as a call golem-mcp abandoned at its --timeout).
cleanup() {
  local pid deadline=$((SECONDS + 5))
  for pid in "${SERVER_PIDS[@]}"; do
    kill "$pid" 2>/dev/null
  done
  for pid in "${SERVER_PIDS[@]}"; do
    while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do
      sleep 0.05
    done
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  rm -rf "$WORK"
}
trap cleanup EXIT

# ---- servers ---------------------------------------------------------------------------

free_port() {
  "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_http NAME PORT COMMAND...: starts an HTTP server in the background and waits until
# its port accepts connections.
start_http() {
  local name=$1 port=$2
  shift 2
  "$@" </dev/null >"$WORK/$name.log" 2>&1 &
  local pid=$!
  SERVER_PIDS+=("$pid")
  local deadline=$((SECONDS + LISTEN_LIMIT))
  until (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
    if ! kill -0 "$pid" 2>/dev/null; then
      cat "$WORK/$name.log" >&2
      die "$name exited before listening on port $port"
    fi
    ((SECONDS < deadline)) || die "$name did not listen on port $port within ${LISTEN_LIMIT}s"
    sleep 0.1
  done
}

# ---- checks ----------------------------------------------------------------------------

OUT="$WORK/stdout"
ERR="$WORK/stderr"
STATUS=0
ELAPSED_MS=0
PROBLEMS=()
PASSED=0
FAILED=0
# One row per server and transport: its cells, its counts and its checks.
ROWS=()
declare -A ROW_VERSION ROW_IDENTITY ROW_PASSED ROW_TOTAL ROW_CHECKS
ROW=""

begin_row() { # begin_row SERVER VERSION TRANSPORT
  ROW="$1|$3"
  ROWS+=("$ROW")
  ROW_VERSION[$ROW]=$2
  ROW_IDENTITY[$ROW]="-"
  ROW_PASSED[$ROW]=0
  ROW_TOTAL[$ROW]=0
  ROW_CHECKS[$ROW]=""
  echo "== $1 over $3"
}

# run ARGS...: runs golem-mcp, bounded, with no stdin; keeps stdout, stderr, status, time.
run() { run_typing "" "$@"; }

# run_typing TEXT ARGS...: the same with TEXT on stdin (what a user would type at prompts);
# stdin is not a terminal either way.
run_typing() {
  local typed=$1
  shift
  PROBLEMS=()
  local start=$EPOCHREALTIME
  if [[ -z "$typed" ]]; then
    timeout "$RUN_LIMIT" "$BIN" "$@" </dev/null >"$OUT" 2>"$ERR"
  else
    printf '%b' "$typed" | timeout "$RUN_LIMIT" "$BIN" "$@" >"$OUT" 2>"$ERR"
  fi
  STATUS=$?
  local end=$EPOCHREALTIME
  ELAPSED_MS=$(( (10#${end//[.,]/} - 10#${start//[.,]/}) / 1000 ))
}

problem() { PROBLEMS+=("$*"); }
expect_status() { [[ $STATUS == "$1" ]] || problem "exit status $STATUS, expected $1"; }
expect_stdout() { [[ "$(cat "$OUT")" == "$1" ]] || problem "stdout is not exactly: $1"; }
expect_stdout_line() { grep -Eq -- "$1" "$OUT" || problem "no stdout line matches /$1/"; }
expect_stderr_line() { grep -Eq -- "$1" "$ERR" || problem "no stderr line matches /$1/"; }
expect_no_stderr_line() { ! grep -Eq -- "$1" "$ERR" || problem "a stderr line matches /$1/"; }
expect_fast() { ((ELAPSED_MS <= FAST_MS)) || problem "took ${ELAPSED_MS} ms, more than ${FAST_MS} ms"; }

# The progress values of the notifications/progress messages in -v's trace, in order.
progress_trace() {
  grep -F 'golem-mcp: ← ' "$ERR" | grep -F '"notifications/progress"' \
    | grep -oE '"progress":[0-9.]+' | cut -d: -f2 | awk '{ printf "%s%g", sep, $1; sep = " " }'
}
expect_progress() {
  local seen
  seen="$(progress_trace)"
  [[ "$seen" == "$1" ]] || problem "progress reports [$seen], expected [$1]"
}

# The pid a wrapped stdio server wrote must be gone (or a zombie waiting for init).
expect_gone() {
  local pid_file=$1 pid
  pid="$(cat "$pid_file" 2>/dev/null)" || { problem "the server wrote no pid"; return; }
  local deadline=$((SECONDS + 5))
  while [[ -e /proc/$pid ]] && ! grep -qE '^[0-9]+ \(.*\) Z' "/proc/$pid/stat" 2>/dev/null; do
    if ((SECONDS >= deadline)); then
      problem "the server process $pid still runs after golem-mcp exited"
      kill -9 "$pid" 2>/dev/null
      return
    fi
    sleep 0.05
  done
}

verdict() { # verdict CHECK-NAME
  ROW_TOTAL[$ROW]=$((ROW_TOTAL[$ROW] + 1))
  local mark=""
  if ((${#PROBLEMS[@]} == 0)); then
    PASSED=$((PASSED + 1))
    ROW_PASSED[$ROW]=$((ROW_PASSED[$ROW] + 1))
    echo "interop: ${ROW%%|*} / ${ROW##*|}: $1: passed (${ELAPSED_MS} ms)"
  else
    FAILED=$((FAILED + 1))
    mark="FAILED"
    echo "interop: ${ROW%%|*} / ${ROW##*|}: $1: FAILED" >&2
    printf '    %s\n' "${PROBLEMS[@]}" >&2
    echo "    --- stdout:" >&2
    head -c 2000 "$OUT" | sed 's/^/    /' >&2
    echo "    --- stderr:" >&2
    head -c 4000 "$ERR" | sed 's/^/    /' >&2
  fi
  ROW_CHECKS[$ROW]+="${ROW_CHECKS[$ROW]:+; }$1${mark:+ (**$mark**)}"
}

# ---- the checks every server gets ------------------------------------------------------

# common_checks NAME-EXPECTED TOOLS-EXPECTED PROTOCOL-EXPECTED SERVER-OPTIONS...
common_checks() {
  local identity=$1 tools=$2 protocol=$3
  shift 3
  run info "$@"
  expect_status 0
  expect_stdout_line "^server: +$identity\$"
  # The revision, and how it was chosen (ADR 0018).
  expect_stdout_line "^protocol: +$protocol \\(.+\\)\$"
  expect_stdout_line '^capabilities: .*tools'
  # What the server calls itself, for the table.
  ROW_IDENTITY[$ROW]="$(sed -n 's/^server: *//p' "$OUT")"
  verdict "info"

  run list "$@"
  expect_status 0
  expect_stdout "$tools"
  verdict "list (all $(wc -l <<<"$tools") tools)"

  run call echo '{"message":"interop"}' "$@"
  expect_status 0
  expect_stdout "Echo: interop"
  verdict "call echo"
}

unknown_tool_is_a_json_rpc_error() {
  # The Python peer answers an unknown tool with the JSON-RPC error -32602; golem-mcp
  # sees the tool is not listed: exit 2, as for an isError answer.
  run call no-such-tool "$@"
  expect_status 2
  expect_stdout ""
  expect_stderr_line 'the server has no tool named "no-such-tool" \(it answered: "Unknown tool: no-such-tool"\); it offers: echo, add, '
  verdict "unknown tool (JSON-RPC error): exit 2 with the server's words and its tool list"

  run call refuse "$@"
  expect_status 3
  expect_stdout ""
  expect_stderr_line 'tools/call refuse: the server answered with an error: refused: this tool never runs \(JSON-RPC error -32602\)'
  verdict "a listed tool refused with a JSON-RPC error: exit 3 with the server's message"
}

unknown_tool_is_reported_as_is_error() {
  # server-everything answers an unknown tool with an isError result, not the JSON-RPC
  # error the specification shows; golem-mcp sees the tool is not listed: exit 2.
  run call no-such-tool "$@"
  expect_status 2
  expect_stdout ""
  expect_stderr_line 'the server has no tool named "no-such-tool" \(it answered: "MCP error -32602: Tool no-such-tool not found"\); it offers: echo, '
  verdict "unknown tool: exit 2 with the server's words and its tool list"
}

# http_timeout_check URL TOOL ARGS: the timeout fires during the call; the server, which
# is not ours to end, still answers afterwards.
http_timeout_check() {
  local url=$1 tool=$2 arguments=$3
  run call "$tool" "$arguments" --timeout 1 --url "$url"
  expect_status 5
  expect_stderr_line "^golem-mcp: timed out after 1 s while calling $tool"
  ((ELAPSED_MS <= 1000 + FAST_MS)) || problem "took ${ELAPSED_MS} ms"
  local problems=("${PROBLEMS[@]}")
  run info --url "$url"
  PROBLEMS=("${problems[@]}")
  expect_status 0
  verdict "--timeout: exit 5, and the server still answers"
}

# ---- server-everything -----------------------------------------------------------------

EVERYTHING_VERSION="$(node -p "require('$ROOT/peers/node_modules/@modelcontextprotocol/server-everything/package.json').version")"
EVERYTHING_TOOLS="echo
get-annotated-message
get-env
get-resource-links
get-resource-reference
get-structured-content
get-sum
get-tiny-image
gzip-file-as-resource
toggle-simulated-logging
toggle-subscriber-updates
trigger-long-running-operation
trigger-elicitation-request
simulate-research-query"
EVERYTHING_ID='mcp-servers/everything [0-9.]+'

everything_checks() {
  common_checks "$EVERYTHING_ID" "$EVERYTHING_TOOLS" 2025-11-25 "$@"

  run call get-tiny-image "$@"
  expect_status 0
  expect_stdout_line '^\[image: image/png, [0-9]+ bytes not shown\]$'
  verdict "image placeholder"

  run -v call trigger-long-running-operation '{"duration":0.5,"steps":5}' "$@"
  expect_status 0
  expect_stdout_line '^Long running operation completed'
  expect_progress "1 2 3 4 5"
  verdict "long-running tool with progress"

  run call echo '{}' "$@"
  expect_status 1
  expect_stdout_line 'Input validation error'
  expect_stderr_line 'the tool "echo" answered with an error \(isError\)'
  verdict "isError: exit 1 with its text"

  unknown_tool_is_reported_as_is_error "$@"

  run list --long "$@"
  expect_status 0
  expect_stdout_line '^get-structured-content \(Get Structured Content Tool\)$'
  expect_stdout_line '^  hints: read-only, idempotent, closed world$'
  expect_stdout_line '^    temperature: number, required — Temperature in celsius$'
  expect_stdout_line '^  task: required$'
  verdict "list --long: titles, hints, task support, output schemas"

  run call --task simulate-research-query '{"topic":"interop"}' "$@"
  expect_status 0
  expect_stdout_line '^# Research Report: interop$'
  expect_stderr_line '^golem-mcp: task [^ ]+: working \(Gathering sources\.\.\.\)$'
  expect_stderr_line '^golem-mcp: task [^ ]+: completed'
  verdict "call --task: each status on stderr, then the result"

  # Requests and notifications from the server. Without a terminal, elicitation is
  # declined by default; the form has a required field ("name") without a default.
  run call trigger-elicitation-request "$@"
  expect_status 0
  expect_stdout_line '"action": "decline"'
  # The note names the server as the command names it, then as it names itself.
  expect_stderr_line '^golem-mcp: the server "[^"]+" \(mcp-servers/everything [^)]*\) asked for input \(a form: .*\): declined'
  verdict "elicitation declined without a terminal"

  run call trigger-elicitation-request --on-elicitation defaults "$@"
  expect_status 0
  expect_stdout_line '"action": "decline"'
  expect_stderr_line 'defaults cannot fill the required field "name", which has no default'
  verdict "--on-elicitation defaults: a required field without a default declines, naming it"

  # Yes, a name, an integer out of range (asked again), then Enter for every default.
  run_typing 'y\nAda\n\n\n\n\n\n200\n7\n\n\n\n\n\n\n' call trigger-elicitation-request \
    --on-elicitation ask "$@"
  expect_status 0
  expect_stdout_line '^- Name: Ada$'
  expect_stdout_line '^- Favorite Integer: 7$'
  expect_stdout_line '"firstLine": "It was a dark and stormy night\."'
  expect_stderr_line 'between 1 and 100; try again'
  verdict "--on-elicitation ask: answers typed on stdin, checked, defaults filled in"

  run call get-roots-list --root "$WORK" "$@"
  expect_status 0
  expect_stdout_line "URI: file://$WORK\$"
  verdict "--root: roots/list answered with a file:// URI"

  # The server sends one log message at once, then one every 5 s.
  run call toggle-simulated-logging --log-level debug "$@"
  expect_status 0
  # (server-everything's alert reads "Alert level-message")
  expect_stderr_line '^golem-mcp: server log \[[a-z]+\] [A-Z][a-z]+[ -]level[ -]message'
  verdict "--log-level debug: the server's log message on stderr"

  run call toggle-simulated-logging --log-level debug --quiet "$@"
  expect_status 0
  expect_no_stderr_line 'server log'
  verdict "--quiet: no log lines"
}

# Resources, prompts, completion and ping (golem-mcp's features.rs).
everything_feature_checks() {
  run resources "$@"
  expect_status 0
  [[ "$(grep -c '^demo://resource/static/document/[^ ]*  ' "$OUT")" == 7 ]] \
    || problem "not the 7 static documents"
  verdict "resources (the 7 static documents)"

  run resources --templates "$@"
  expect_status 0
  expect_stdout "demo://resource/dynamic/text/{resourceId}  Dynamic Text Resource
demo://resource/dynamic/blob/{resourceId}  Dynamic Blob Resource"
  verdict "resources --templates"

  run read demo://resource/static/document/features.md "$@"
  expect_status 0
  expect_stdout_line '^# Everything Server - Features$'
  verdict "read a text document"

  run read demo://resource/dynamic/blob/1 "$@"
  expect_status 0
  expect_stdout_line '^\[binary contents: demo://resource/dynamic/blob/1 \(text/plain\), [0-9]+ bytes not shown; --output FILE or --raw writes them\]$'
  verdict "read a blob: a placeholder on stdout"

  run read demo://resource/dynamic/blob/1 --raw "$@"
  expect_status 0
  expect_stdout_line '^Resource 1: This is a base64 blob created at '
  verdict "read --raw: the blob's decoded bytes"

  run prompts "$@"
  expect_status 0
  expect_stdout_line '^args-prompt city \[state\]  \(Arguments Prompt\)$'
  expect_stdout_line '^completable-prompt department name  \(Team Management\)$'
  verdict "prompts"

  run prompt args-prompt '{"city":"Paris"}' "$@"
  expect_status 0
  expect_stdout "[user]
What's weather in Paris?"
  verdict "prompt with arguments"

  run prompt args-prompt '{"state":"CA"}' "$@"
  expect_status 2
  expect_stdout ""
  expect_stderr_line 'prompts/get args-prompt: not sent: missing required argument "city"'
  verdict "prompt without a required argument: exit 2, nothing sent"

  run complete --prompt completable-prompt name "" --context '{"department":"Engineering"}' "$@"
  expect_status 0
  expect_stdout "Alice
Bob
Charlie"
  verdict "complete a prompt argument with context"

  run call get-resource-reference '{"resourceType":"Text","resourceId":2}' "$@"
  expect_status 0
  expect_stdout_line '^\[embedded resource: demo://resource/dynamic/text/2 \(text/plain\)\]$'
  expect_stdout_line '^Resource 2: This is a plaintext resource'
  verdict "call: an embedded text resource under its URI"

  run ping "$@"
  expect_status 0
  expect_stdout_line '^pong in [0-9.]+ ms$'
  verdict "ping"
}

begin_row "\`@modelcontextprotocol/server-everything\` (npm)" "$EVERYTHING_VERSION" "stdio"
everything_checks -- "$EVERYTHING" stdio
everything_feature_checks -- "$EVERYTHING" stdio

run call trigger-long-running-operation '{"duration":60,"steps":60}' --timeout 3 \
  -- sh -c "echo \$\$ > '$WORK/everything.pid'; exec '$EVERYTHING' stdio"
expect_status 5
expect_stderr_line '^golem-mcp: timed out after 3 s while calling trigger-long-running-operation'
((ELAPSED_MS <= 3000 + FAST_MS)) || problem "took ${ELAPSED_MS} ms"
expect_gone "$WORK/everything.pid"
verdict "--timeout: exit 5 and the server process gone"

export GOLEM_INTEROP_PEERS="$ROOT/peers"
cat >"$WORK/servers.json" <<'JSON'
{"mcpServers": {
  "everything": {"command": "${GOLEM_INTEROP_PEERS}/node_modules/.bin/mcp-server-everything", "args": ["stdio"]},
  "python-http": {"url": "http://127.0.0.1:${GOLEM_INTEROP_PORT}/mcp"}
}}
JSON
run info --config "$WORK/servers.json" --server everything
expect_status 0
expect_stdout_line "^server: +$EVERYTHING_ID\$"
verdict "named by --config"

EVERYTHING_PORT="$(free_port)"
start_http everything-http "$EVERYTHING_PORT" env PORT="$EVERYTHING_PORT" "$EVERYTHING" streamableHttp
EVERYTHING_URL="http://127.0.0.1:$EVERYTHING_PORT/mcp"
begin_row "\`@modelcontextprotocol/server-everything\` (npm)" "$EVERYTHING_VERSION" "streamable HTTP (event stream)"
everything_checks --url "$EVERYTHING_URL"
everything_feature_checks --url "$EVERYTHING_URL"

http_timeout_check "$EVERYTHING_URL" trigger-long-running-operation '{"duration":60,"steps":60}'

# ---- the Python SDK server -------------------------------------------------------------

PY_SDK_VERSION="$("$PY" -c 'import importlib.metadata as m; print(m.version("mcp"))')"
PY_TOOLS="echo
add
slow
fail
refuse
ask_model
ask_user
chatty"
PY_ID='golem-py-peer 0\.1\.0'

python_checks() { # python_checks PROGRESS-EXPECTED SERVER-OPTIONS...
  local progress=$1
  shift
  # The SDK's 2.x line speaks the modern era.
  common_checks "$PY_ID" "$PY_TOOLS" 2026-07-28 "$@"

  run -v call slow '{"steps":3,"delay":0.05}' "$@"
  expect_status 0
  expect_stdout "done after 3 steps"
  expect_progress "$progress"
  if [[ -n "$progress" ]]; then
    verdict "long-running tool with progress"
  else
    verdict "long-running tool (JSON answers carry no progress)"
  fi

  run call fail '{"reason":"interop failure"}' "$@"
  expect_status 1
  expect_stdout_line 'interop failure$'
  expect_stderr_line 'answered with an error \(isError\)'
  verdict "isError: exit 1 with its text"

  unknown_tool_is_a_json_rpc_error "$@"

  run list --long "$@"
  expect_status 0
  expect_stdout_line '^    a: integer, required$'
  expect_stdout_line '^    result: integer, required$'
  verdict "list --long: the SDK's derived output schemas"

  # The Python SDK (2.x) no longer declares the logging capability. In the
  # initialize era the level is not sent for want of it; in 2026-07-28 it
  # rides each request (no capability needed), and the server logs then.
  run call echo '{"message":"quiet"}' --log-level debug --protocol 2025-11-25 "$@"
  expect_status 0
  expect_stdout "Echo: quiet"
  expect_stderr_line '^golem-mcp: warning: the server does not declare the logging capability; --log-level debug was not sent$'
  verdict "--log-level without the logging capability (2025-11-25): a warning, not sent"

  run call chatty --log-level warning "$@"
  expect_status 0
  expect_stdout "logged"
  expect_no_stderr_line 'starting'
  expect_no_stderr_line 'does not declare'
  if [[ -n "$progress" ]]; then
    expect_stderr_line '^golem-mcp: server log \[warning\] py-peer: careful$'
    verdict "--log-level in 2026-07-28: the level rides each request, the server logs at it"
  else
    verdict "--log-level in 2026-07-28: the level rides each request (JSON answers carry no log messages)"
  fi
}

python_feature_checks() {
  run resources "$@"
  expect_status 0
  expect_stdout "note://readme  readme
note://logo  logo"
  verdict "resources"

  run read note://readme "$@"
  expect_status 0
  expect_stdout "Hello from the Python peer."
  verdict "read a text resource"

  rm -f "$WORK/logo.bin"
  run read note://logo --output "$WORK/logo.bin" "$@"
  expect_status 0
  expect_stdout ""
  [[ "$(od -An -tx1 "$WORK/logo.bin" 2>/dev/null | tr -d ' \n')" == "000102ff" ]] \
    || problem "--output did not get the 4 decoded bytes"
  verdict "read --output: a blob's decoded bytes"

  run prompt paint '{"colour":"red"}' "$@"
  expect_status 0
  expect_stdout "[user]
Paint something red."
  verdict "prompt with arguments"

  run prompt paint '{"colour":"red","size":"L"}' "$@"
  expect_status 2
  expect_stderr_line 'prompts/get paint: not sent: unknown argument "size"'
  verdict "prompt with an unknown argument: exit 2, nothing sent"

  run complete --template 'colour://{name}' name g "$@"
  expect_status 0
  expect_stdout "green"
  verdict "complete a template variable"

  run complete --prompt paint shade "" --context '{"colour":"blue"}' "$@"
  expect_status 0
  expect_stdout "navy
teal"
  verdict "complete a prompt argument with context"

  run ping "$@"
  expect_status 0
  expect_stdout_line '^pong in [0-9.]+ ms$'
  verdict "ping"
}

begin_row "\`mcp\` Python SDK (PyPI), \`peers/python/mcp_py_server.py\`" "$PY_SDK_VERSION" "stdio"
python_checks "1 2 3" -- "$PY" "$PY_SERVER"
python_feature_checks -- "$PY" "$PY_SERVER"

run call slow '{"steps":100,"delay":1}' --timeout 5 \
  -- sh -c "echo \$\$ > '$WORK/python.pid'; exec '$PY' '$PY_SERVER'"
expect_status 5
expect_stderr_line '^golem-mcp: timed out after 5 s while calling slow'
((ELAPSED_MS <= 5000 + FAST_MS)) || problem "took ${ELAPSED_MS} ms"
expect_gone "$WORK/python.pid"
verdict "--timeout: exit 5 and the server process gone"

PY_SSE_PORT="$(free_port)"
start_http python-sse "$PY_SSE_PORT" "$PY" "$PY_SERVER" --http --port "$PY_SSE_PORT"
PY_SSE_URL="http://127.0.0.1:$PY_SSE_PORT/mcp"
begin_row "\`mcp\` Python SDK (PyPI), \`peers/python/mcp_py_server.py\`" "$PY_SDK_VERSION" "streamable HTTP (event stream)"
python_checks "1 2 3" --url "$PY_SSE_URL"
python_feature_checks --url "$PY_SSE_URL"

http_timeout_check "$PY_SSE_URL" slow '{"steps":100,"delay":1}'

export GOLEM_INTEROP_PORT="$PY_SSE_PORT"
run info --config "$WORK/servers.json" --server python-http
expect_status 0
expect_stdout_line "^server: +$PY_ID\$"
verdict "named by --config"

PY_JSON_PORT="$(free_port)"
start_http python-json "$PY_JSON_PORT" "$PY" "$PY_SERVER" --http --port "$PY_JSON_PORT" --json
PY_JSON_URL="http://127.0.0.1:$PY_JSON_PORT/mcp"
begin_row "\`mcp\` Python SDK (PyPI), \`peers/python/mcp_py_server.py\`" "$PY_SDK_VERSION" "streamable HTTP (JSON)"
python_checks "" --url "$PY_JSON_URL"
python_feature_checks --url "$PY_JSON_URL"

http_timeout_check "$PY_JSON_URL" slow '{"steps":100,"delay":1}'

# ---- the Python SDK's 1.x line over HTTP+SSE (2024-11-05) -----------------------------

SSE_SDK_VERSION="$("$SSE_PY" -c 'import importlib.metadata as m; print(m.version("mcp"))')"
SSE_TOOLS="echo
add
slow
fail
ask_name
summarize
big"
SSE_ID='golem-sse-peer [0-9.]+'

sse_checks() { # sse_checks HOW-CHOSEN SERVER-OPTIONS...
  local chosen=$1
  shift
  common_checks "$SSE_ID" "$SSE_TOOLS" 2025-11-25 "$@"

  run info "$@"
  expect_status 0
  expect_stdout_line "^protocol: +2025-11-25 \\($chosen"
  verdict "info: how the revision was chosen"

  run -v call slow '{"steps":3,"delay":0.05}' "$@"
  expect_status 0
  expect_stdout "done after 3 steps"
  expect_progress "1 2 3"
  verdict "long-running tool with progress (on the event stream)"

  run call fail '{"reason":"interop failure"}' "$@"
  expect_status 1
  expect_stdout_line 'interop failure$'
  verdict "isError: exit 1 with its text"

  # The server's elicitation arrives on the event stream; the answer is a POST.
  run call ask_name "$@"
  expect_status 0
  expect_stdout "no name (decline)"
  verdict "elicitation declined without a terminal"

  run_typing 'y\nAda\n' call ask_name --on-elicitation ask "$@"
  expect_status 0
  expect_stdout "Hello, Ada!"
  verdict "--on-elicitation ask: the answer typed on stdin reaches the server"

  run ping "$@"
  expect_status 0
  expect_stdout_line '^pong in [0-9.]+ ms$'
  verdict "ping"
}

SSE_PORT="$(free_port)"
start_http python-sse1 "$SSE_PORT" "$SSE_PY" "$SSE_SERVER" --port "$SSE_PORT"
SSE_URL="http://127.0.0.1:$SSE_PORT/sse"
SSE_ROW="\`mcp\` Python SDK 1.x (PyPI), FastMCP, \`peers/python/sse_fastmcp_server.py\`"
begin_row "$SSE_ROW" "$SSE_SDK_VERSION" "HTTP+SSE (\`--sse\`)"
sse_checks "initialize, no probe" --url "$SSE_URL" --sse

cat >"$WORK/sse.json" <<JSON
{"mcpServers": {"old": {"type": "sse", "url": "$SSE_URL"}}}
JSON
run info --config "$WORK/sse.json" --server old
expect_status 0
expect_stdout_line "^server: +$SSE_ID\$"
verdict "named by --config (\"type\": \"sse\")"

begin_row "$SSE_ROW" "$SSE_SDK_VERSION" "HTTP+SSE (found from \`--url\` by the fallback)"
sse_checks "initialize, after server/discover got HTTP 405" --url "$SSE_URL"

http_timeout_check "$SSE_URL" slow '{"steps":100,"delay":1}'

# ---- no server -------------------------------------------------------------------------

begin_row "none (nothing there)" "-" "stdio"
run info -- "$WORK/no-such-server"
expect_status 4
expect_fast
expect_stderr_line 'executable not found'
verdict "missing executable: exit 4 within 5 s"

begin_row "none (nothing there)" "-" "streamable HTTP"
run info --url "http://127.0.0.1:$(free_port)/mcp"
expect_status 4
expect_fast
expect_stderr_line 'Connection refused'
verdict "closed port: exit 4 within 5 s"

# ---- the table -------------------------------------------------------------------------

generate_table() {
  cat <<'EOF'
# Interop

What the `golem-mcp` command has been tested against, by `scripts/interop.sh`
(run by `scripts/test.sh`, the README's test command). The script writes this
file from its results and fails when the committed copy differs, so the table
cannot drift from what was tested. Do not edit it by hand: run the suite.

Versions are pinned in `peers/package.json` (npm), `peers/requirements.txt`
and `peers/requirements-sse.txt` (PyPI). The official MCP conformance suite
runs in the same test command (`scripts/conformance.sh`).

| server | version | reports itself as | transport | checks passed |
| --- | --- | --- | --- | --- |
EOF
  local row
  for row in "${ROWS[@]}"; do
    printf '| %s | %s | %s | %s | %s/%s |\n' "${row%%|*}" "${ROW_VERSION[$row]}" \
      "${ROW_IDENTITY[$row]}" "${row##*|}" "${ROW_PASSED[$row]}" "${ROW_TOTAL[$row]}"
  done
  cat <<'EOF'

## Checks

EOF
  for row in "${ROWS[@]}"; do
    printf -- '- %s over %s: %s.\n' "${row%%|*}" "${row##*|}" "${ROW_CHECKS[$row]}"
  done
  cat <<'EOF'

Notes:

- An unknown tool: server-everything answers with an `isError` result, not the
  JSON-RPC error (-32602) the specification shows; `golem-mcp` then finds the
  tool missing from `tools/list` and exits 2 with the server's words and the
  tools there are. The Python peer answers with the JSON-RPC error (its
  `call_tool` is overridden for that, the SDK's default being `isError`):
  the same exit 2 and list. A JSON-RPC error for a tool the server lists
  (the Python peer's `refuse`) exits 3 with the server's message.
- JSON answers (`application/json`) carry one message per request, so
  progress notifications have no way to arrive; the call itself is checked.
- `--timeout` over stdio also checks that the server process is gone once
  `golem-mcp` has exited.
- server-everything offers `trigger-elicitation-request` only to clients that
  declare elicitation, which `golem-mcp` always does (`--on-elicitation`
  decides the answer), so it is in the tool list; `get-roots-list` only with
  `--root`, and `trigger-url-elicitation` only to `--on-elicitation ask`. The
  `ask` check types its answers on a pipe, not a terminal: the prompts are the
  same.
- HTTP+SSE (the deprecated transport of 2024-11-05): with `--sse` the
  transport is that one from the start and nothing is probed; from the same
  `/sse` URL without it, the probe and `initialize` are refused with 405 (a
  GET-only route), and the streamable transport's `GET` finds the event
  stream and its `endpoint` event. Either way every server message,
  progress and elicitation included, arrives on that one stream.
EOF
}

generate_table >"$WORK/interop.md"
# The committed table is the one of a run where everything passed: a run with failures
# rewrites it (they show in the counts) and fails anyway; a passing run that changes it
# (new versions, new checks) fails until the new table is committed.
if ! cmp -s "$WORK/interop.md" "$TABLE"; then
  cp "$WORK/interop.md" "$TABLE"
  if ((FAILED == 0)); then
    echo "interop: docs/interop.md was out of date and has been regenerated: review and commit it" >&2
    FAILED=$((FAILED + 1))
  fi
fi

echo "interop: $PASSED passed, $FAILED failed"
((FAILED == 0))
