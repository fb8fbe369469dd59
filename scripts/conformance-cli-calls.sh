#!/usr/bin/env bash
# The golem-mcp command against the conformance suite's http-custom-headers
# scenario, as a user would drive it: one `golem-mcp call NAME ARGS --url
# URL` per entry of the context's toolCalls, each a fresh process, so that
# each must know the tool's x-mcp-header annotations before its one
# request. MODE `fresh`: every call has an empty cache (the command lists
# first); MODE `kept`: a `golem-mcp list` first keeps the tool list, which
# the calls then take from the cache (no listing).
# Usage (by scripts/conformance.sh): conformance-cli-calls.sh MODE GOLEM_MCP URL
set -euo pipefail
mode=$1
golem_mcp=$2
url=$3
cache="$(mktemp -d)"
trap 'rm -rf "$cache"' EXIT
if [[ "$mode" == kept ]]; then
  XDG_CACHE_HOME="$cache/kept" "$golem_mcp" list --url "$url" >/dev/null
fi
calls="$(python3 -c '
import json, os
for call in json.loads(os.environ["MCP_CONFORMANCE_CONTEXT"])["toolCalls"]:
    print(call["name"])
    print(json.dumps(call["arguments"], ensure_ascii=False))
')"
n=0
while IFS= read -r name && IFS= read -r arguments; do
  n=$((n + 1))
  case "$mode" in
    kept) dir="$cache/kept" ;;
    *) dir="$cache/fresh-$n" ;;
  esac
  XDG_CACHE_HOME="$dir" "$golem_mcp" call "$name" "$arguments" --url "$url" >/dev/null
done <<<"$calls"
