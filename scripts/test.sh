#!/usr/bin/env bash
# Runs every test of the workspace, from a fresh clone on a fresh machine:
# installs the real MCP peers the integration tests use (npm and PyPI, pinned
# in peers/), then checks formatting, lints and the module graph, runs all tests (doc tests
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
# --all-features lints the rmcp comparison programs of bench/ too (feature
# golem-bench/rmcp), without making the test build below compile rmcp.
cargo clippy --workspace --all-targets --all-features --locked -- -D warnings

echo "== module graph (no circle in any crate, no upward import between golem-mcp's layers)"
python3 scripts/module-graph.py

echo "== ARCHITECTURE.md names only paths and Type::methods that exist"
python3 scripts/architecture-check.py

echo "== stdio-only build (golem with feature mcp alone compiles no HTTP stack)"
if cargo tree -p golem-agent --no-default-features --features mcp -e normal --locked --prefix none \
  | grep -E '^(reqwest|hyper|rustls|golem-sse) '; then
  echo "golem's mcp feature pulls in an HTTP stack" >&2
  exit 1
fi
cargo check -p golem-agent --no-default-features --features mcp --locked --quiet
# The crates such a build compiles (golem's own included); BENCHMARKS.md
# records the figure. Output validation (jsonschema) is a feature of its own.
stdio_crates=$(cargo tree -p golem-agent --no-default-features --features mcp -e normal --locked --prefix none \
  | sed 's/ (\*)$//' | sort -u | wc -l)
echo "golem with feature mcp alone compiles $stdio_crates crates"
if [ "$stdio_crates" -gt 45 ]; then
  echo "the stdio-only build grew past 45 crates" >&2
  exit 1
fi
# Without output validation structuredContent passes through unvalidated.
cargo test -p golem-mcp --no-default-features --lib --locked --quiet

echo "== cargo test"
# The example tests build the examples themselves (so they never run a stale
# binary); building them here first keeps that step a no-op.
cargo build --workspace --examples --locked
# --all-targets includes bench/'s micro-benchmarks: each runs once.
cargo test --workspace --all-targets --locked
cargo test --workspace --doc --locked

echo "== MCP conformance suite"
scripts/conformance.sh

echo "== interop suite (golem-mcp against real servers; regenerates docs/interop.md)"
scripts/interop.sh

echo "== cargo doc"
# The same features as clippy, so the dependencies it checked are reused.
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --all-features --locked --quiet

echo "== cargo publish --dry-run (every published crate, in dependency order)"
# Packages each crate as crates.io would get it and builds it from the
# package against the others' packages: a release is `cargo publish
# --workspace` away. The crates with `publish = false` are left out.
# Cargo unpacks each package into its cache under a name made from the
# temporary registry's path, and reuses what it unpacked before: a second
# run from a checkout at the same path would build against an older
# package. Our own unpacked packages go first.
rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/golem-*
# Cargo also takes a registry package for immutable and keeps what it
# built of one: the verification would link against our crates as an
# earlier run packaged them (a stale pass, or a false failure). What was
# built of ours is forgotten (they are rebuilt, nothing else is).
rm -rf "${CARGO_TARGET_DIR:-target}"/debug/.fingerprint/golem-*
cargo publish --workspace --dry-run --locked

# The build's disk footprint, so that growth shows in CI logs before a disk fills.
target_dir=${CARGO_TARGET_DIR:-target}
echo "== $target_dir holds $(du -sh "$target_dir" | cut -f1)"
