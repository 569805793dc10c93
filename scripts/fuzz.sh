#!/usr/bin/env bash
# Runs every cargo-fuzz target in fuzz/ for SECONDS seconds each (default 60):
#   scripts/fuzz.sh [SECONDS]
# `make test` (and so CI) runs it with FUZZ_SECONDS; `make fuzz` for longer runs.
#
# Needs a nightly toolchain and cargo-fuzz (scripts/install-deps.sh installs
# cargo-fuzz when nightly is there). Without either it prints one line and exits
# 0: the stable replay of the corpus (crates/canyon-protocol/tests/fuzz_replay.rs)
# still runs in `cargo test`.
#
# Each target runs on a temporary copy of fuzz/corpus/<target>/, because
# libFuzzer writes the new inputs it finds into its corpus directory and the
# committed seed corpus stays small. A crash, leak, timeout or OOM fails the run
# (exit 1) and leaves the input under fuzz/artifacts/<target>/, whose path is
# printed; reproduce with `cargo +nightly fuzz run <target> <that file>`.
set -euo pipefail

seconds=${1:-60}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root/fuzz"

if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "fuzz: skipped: no nightly toolchain (rustup toolchain install nightly)"
  exit 0
fi
if ! cargo +nightly fuzz --help >/dev/null 2>&1; then
  echo "fuzz: skipped: cargo-fuzz is not installed (cargo +nightly install cargo-fuzz --locked)"
  exit 0
fi

# Separate from the release target directory (different toolchain and
# sanitizer flags), outside the clone so that builds stay incremental.
export CARGO_TARGET_DIR=${CANYON_FUZZ_TARGET_DIR:-$HOME/.cache/canyon-fuzz-target}

echo "fuzz: building all targets"
cargo +nightly fuzz build

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=()
for target in $(cargo +nightly fuzz list); do
  mkdir -p "$work/$target"
  cp -R "corpus/$target/." "$work/$target/"
  echo "fuzz: $target for ${seconds}s"
  log="$work/$target.log"
  if cargo +nightly fuzz run "$target" "$work/$target" -- \
    -max_total_time="$seconds" -rss_limit_mb=4096 -timeout=30 -print_final_stats=1 \
    >"$log" 2>&1; then
    # The last status line: executions, coverage, corpus, speed.
    grep -E '^#[0-9]+\s+DONE' "$log" | tail -n 1 || true
    grep -E 'stat::(number_of_executed_units|average_exec_per_sec|new_units_added)' "$log" || true
  else
    tail -n 40 "$log"
    artifact=$(grep -oE "(Test unit written to|artifact_prefix='[^']*'; Test unit written to) [^ ]+" "$log" | awk '{print $NF}' | tail -n 1)
    echo "fuzz: $target FAILED; input: ${artifact:-see the log above}" >&2
    # CI keeps only its output: the input itself, to reproduce from there.
    if [ -n "${artifact:-}" ] && [ -f "$artifact" ]; then
      echo "fuzz: $target input (base64): $(base64 -w0 "$artifact")" >&2
    fi
    failed+=("$target")
  fi
done

if [ ${#failed[@]} -ne 0 ]; then
  echo "fuzz: crashes in ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: all targets ran ${seconds}s without a crash"
