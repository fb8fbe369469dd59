#!/usr/bin/env bash
# Install the real MCP servers that bench/agent/run.py measures golem with:
#   - bench/agent/node_modules: the npm servers of package.json, via `npm ci` from
#     package-lock.json (with --ignore-scripts: the install scripts of puppeteer and
#     desktop-commander would download a browser or phone home, and no server needs them
#     to start and list its tools);
#   - bench/agent/.venv: the PyPI servers of requirements.txt.
#
# Idempotent and quick when nothing changed: each step writes a stamp (hash of its inputs
# plus the node or python version) and is skipped while the stamp still matches. Works from
# any cwd. Needs node/npm and python3 on PATH, and access to the npm registry and PyPI.
# AGENT_BENCH_FORCE=1 reinstalls regardless of the stamps; AGENT_BENCH_PYTHON picks the
# interpreter for the venv (default python3).
set -euo pipefail

DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
FORCE="${AGENT_BENCH_FORCE:-0}"
PYTHON="${AGENT_BENCH_PYTHON:-python3}"

log() { printf 'bench/agent/setup.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

command -v node >/dev/null || die "node not found on PATH"
command -v npm >/dev/null || die "npm not found on PATH"
command -v "$PYTHON" >/dev/null || die "$PYTHON not found on PATH"

hash_of() { cat "$@" | sha256sum | cut -d' ' -f1; }

# ---- npm servers -------------------------------------------------------------------------
npm_stamp="$DIR/node_modules/.golem-bench-stamp"
npm_key="$(hash_of "$DIR/package.json" "$DIR/package-lock.json") node=$(node --version)"
if [[ "$FORCE" != 1 && -f "$npm_stamp" && "$(cat "$npm_stamp")" == "$npm_key" ]]; then
  log "npm servers up to date"
else
  log "npm ci in bench/agent/"
  (cd "$DIR" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) >&2
  printf '%s\n' "$npm_key" >"$npm_stamp"
fi

# ---- Python servers ----------------------------------------------------------------------
venv="$DIR/.venv"
venv_py="$venv/bin/python"
py_stamp="$venv/.golem-bench-stamp"
py_version="$("$PYTHON" -c 'import sys; print(sys.version.split()[0])')"
py_key="$(hash_of "$DIR/requirements.txt") python=$py_version"
if [[ "$FORCE" != 1 && -f "$py_stamp" && "$(cat "$py_stamp")" == "$py_key" && -x "$venv_py" ]]; then
  log "python servers up to date"
else
  # A venv made by another interpreter (or broken) is rebuilt from scratch.
  if [[ -d "$venv" ]] && ! "$venv_py" -c "import sys; sys.exit(sys.version.split()[0] != '$py_version')" >/dev/null 2>&1; then
    log "removing stale venv $venv"
    rm -rf "$venv"
  fi
  if [[ ! -x "$venv_py" ]]; then
    log "creating venv bench/agent/.venv with $PYTHON $py_version"
    "$PYTHON" -m venv "$venv" || die "python3 -m venv failed (on Debian: apt-get install python3-venv)"
  fi
  log "pip install -r bench/agent/requirements.txt into bench/agent/.venv"
  "$venv_py" -m pip install --disable-pip-version-check --no-input -q -r "$DIR/requirements.txt" >&2
  printf '%s\n' "$py_key" >"$py_stamp"
fi
log "done"
