#!/usr/bin/env bash
# The golem-mcp command against the conformance suite's private_key_jwt
# client-credentials scenario: the suite makes a key per run and hands it
# over in MCP_CONFORMANCE_CONTEXT, as it would be handed to a user in a
# file; this writes it to one (0600) and runs `golem-mcp list` with it.
# Usage (by scripts/conformance.sh): conformance-cli-jwt.sh GOLEM_MCP URL
set -euo pipefail
golem_mcp=$1
url=$2
key_dir="$(mktemp -d)"
trap 'rm -rf "$key_dir"' EXIT
key="$key_dir/client.pem"
(umask 077 && python3 -c 'import json, os, sys; sys.stdout.write(json.loads(os.environ["MCP_CONFORMANCE_CONTEXT"])["private_key_pem"])' >"$key")
client_id="$(python3 -c 'import json, os; print(json.loads(os.environ["MCP_CONFORMANCE_CONTEXT"])["client_id"])')"
"$golem_mcp" list --client-credentials --client-id "$client_id" --private-key "$key" --url "$url"
