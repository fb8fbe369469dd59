#!/usr/bin/env bash
# Runs every test of the workspace, from a fresh clone on a fresh machine:
# installs the real MCP peers the integration tests use (npm and PyPI, pinned
# in peers/), then checks formatting and lints, runs all tests (doc tests
# included), the official MCP conformance suite's client scenarios and the
# interop suite (the golem-mcp command against the real servers; it checks
# that docs/interop.md matches what it tested), and builds the docs. Exits
# non-zero on the first failure.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

echo "== installing test peers"
scripts/install-peers.sh

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== cargo clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings

echo "== cargo test"
cargo test --workspace --all-targets --locked
cargo test --workspace --doc --locked

echo "== MCP conformance suite"
scripts/conformance.sh

echo "== interop suite (golem-mcp against real servers; regenerates docs/interop.md)"
scripts/interop.sh

echo "== cargo doc"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --quiet
