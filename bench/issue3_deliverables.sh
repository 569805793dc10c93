#!/usr/bin/env bash
# The measurements issue 3 asks for, made with `canyon bench` itself: connection
# sweeps (Canyon; MariaDB one-thread-per-connection and pool-of-threads) and
# order-entry on 1, 2 and 4 Canyon instances. Each run writes its report
# (results.json, report.md, charts, report.html) under $OUT; docs/benchmarks.md
# quotes the tables. A benchmark, not a test: it asserts nothing.
#
# Usage: bench/issue3_deliverables.sh [OUT]   (CANYON=path/to/canyon to override)
set -euo pipefail
OUT=${1:-bench-results/issue3}
CANYON=${CANYON:-${CARGO_TARGET_DIR:-$HOME/.cache/canyon-target}/release/canyon}
mkdir -p "$OUT"
# 19,000 open connections: this machine's hard RLIMIT_NOFILE is 20,000, and the
# client and the server each need one descriptor per connection plus their own.
CONNS=${CONNS:-100,1000,5000,10000,19000}
MARIADB_CONNS=${MARIADB_CONNS:-100,1000,5000,10000}
run() { echo "== $*"; "$CANYON" bench "$@"; }

run -w oltp_point_select --shape connections -t 16 --connections "$CONNS" --out "$OUT/conn-canyon"
run -w oltp_point_select --shape connections -t 16 --connections "$MARIADB_CONNS" --mariadb \
    --out "$OUT/conn-mariadb-threads"
run -w oltp_point_select --shape connections -t 16 --connections "$MARIADB_CONNS" --mariadb \
    --mariadb-arg=--thread-handling=pool-of-threads --out "$OUT/conn-mariadb-pool"
for n in 1 2 4; do
  run -w order_entry --shape fixed -t 16 --shards "$n" --duration 15 --out "$OUT/order-entry-$n"
done
