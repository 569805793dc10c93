#!/usr/bin/env bash
# Issue 3's many-core measurements, made with `canyon bench`: what a 2-vCPU
# machine cannot show.
#
#   cpus-point, cpus-rw   CPU sweep: Canyon and MariaDB restarted under
#                         taskset on 1, 2, 4 ... CPUs, alternating, 64 clients
#   order-entry-N         N Canyon instances, each pinned to its own K CPUs,
#                         OE_CLIENTS clients per instance (goal: N instances >= 0.9*N x one)
#   order-entry-1xNK      one instance on all the CPUs the N instances had
#   conn-*                connection sweep to 20,000 open connections, 16 active
#                         (Canyon; MariaDB one-thread-per-connection and
#                         pool-of-threads)
#   tpcc                  bench/tpcc_compare.py, 4 warehouses, 8 and 32 threads,
#                         unpinned (not in the default PARTS; needs go-tpc)
#
# On a machine where nothing can be installed, bench/portable_bundle.sh packs
# canyon, MariaDB and go-tpc into one tarball (see its header). Afterwards,
# bench/many_core_report.py --run OUT [--run OUT2 ...] writes the tables into
# docs/benchmarks.md (section many-core).
#
# The machine is cut in two halves: servers on CPUs 0..H-1, the load generator
# on H..2H-1 (taskset), so a server's CPUs are never shared with its clients.
# Each part writes its report (results.json, report.md, charts, report.html)
# under OUT/PART and its output to OUT/PART.log; after every part the command in
# $AFTER_PART (if set) runs, e.g. to copy results off a machine that may go away.
# A benchmark, not a test: it asserts nothing, and a failed part does not stop
# the next one.
#
# Usage: bench/many_core.sh [OUT]
#   CANYON=path/to/canyon  DUR=secs (6)  WARM=secs (2)  PARTS="cpus-point ..."
#   BENCH_ARGS="--unix-socket" (options for every canyon bench run)
#   PART_TIMEOUT=secs (300)  TPCC_TIMEOUT=secs (900; go-tpc check on MariaDB is slow
#   on few CPUs)  CONNS=100,1000,10000,20000  GO_TPC=path/to/go-tpc
#   OE_K=CPUs per order-entry instance (H/4)  OE_CLIENTS=clients per instance (16)
#   TPCC_THREADS=8,32
set -uo pipefail
OUT=${1:-bench-results/many-core}
CANYON=${CANYON:-${CARGO_TARGET_DIR:-$HOME/.cache/canyon-target}/release/canyon}
DUR=${DUR:-6}
WARM=${WARM:-2}
PARTS=${PARTS:-cpus-point order-entry conn-canyon cpus-rw conn-mariadb}
CONNS=${CONNS:-100,1000,10000,20000}
mkdir -p "$OUT"

NCPU=$(nproc --all)
H=$((NCPU / 2))
[ "$H" -ge 1 ] || { echo "many_core.sh needs at least 2 CPUs" >&2; exit 1; }
CLIENT=(taskset -c "$H-$((NCPU - 1))")
SWEEP=1
k=2
while [ "$k" -le "$H" ]; do SWEEP="$SWEEP,$k"; k=$((k * 2)); done
OE_K=${OE_K:-$((H / 4 > 0 ? H / 4 : 1))}
OE_CLIENTS=${OE_CLIENTS:-16}
echo "many_core.sh: $NCPU CPUs; servers on 0-$((H - 1)), clients on $H-$((NCPU - 1)); sweep $SWEEP; order-entry $OE_K CPUs and $OE_CLIENTS clients per instance"

part() {
  local name=$1
  shift
  echo "== $name: canyon bench $*"
  local t0=$SECONDS
  # shellcheck disable=SC2086 # BENCH_ARGS is a list of options
  timeout -k 10 "${PART_TIMEOUT:-300}" "${CLIENT[@]}" "$CANYON" bench "$@" ${BENCH_ARGS:-} --duration "$DUR" --warmup "$WARM" \
    --report-interval 0 --out "$OUT/$name" >"$OUT/$name.log" 2>&1
  local rc=$?
  echo "   rc=$rc in $((SECONDS - t0)) s"
  [ -f "$OUT/$name/report.md" ] && sed -n '/^|/p' "$OUT/$name/report.md" | head -40
  [ "$rc" -eq 0 ] || tail -20 "$OUT/$name.log"
  if [ -n "${AFTER_PART:-}" ]; then eval "$AFTER_PART"; fi
}

SYSBENCH=(--tables 4 --table-size 25000)
for p in $PARTS; do
  case $p in
  cpus-point)
    part cpus-point -w oltp_point_select --shape cpus --cpus "$SWEEP" -t 64 "${SYSBENCH[@]}" \
      --compare mariadb --rounds 1 ;;
  cpus-rw)
    part cpus-rw -w oltp_read_write --shape cpus --cpus "$SWEEP" -t 64 "${SYSBENCH[@]}" \
      --compare mariadb --rounds 1 ;;
  order-entry)
    for n in 1 2 4; do
      [ $((n * OE_K)) -le "$H" ] || continue
      part "order-entry-$n" -w order_entry --shape fixed --shards "$n" \
        --cpus-per-shard "$OE_K" -t $((OE_CLIENTS * n))
    done
    # One instance on all the CPUs the largest N had.
    for n in 4 2; do
      if [ $((n * OE_K)) -le "$H" ]; then
        part "order-entry-1x$((n * OE_K))" -w order_entry --shape fixed --shards 1 \
          --cpus-per-shard $((n * OE_K)) -t $((OE_CLIENTS * n))
        break
      fi
    done ;;
  conn-canyon)
    part conn-canyon -w oltp_point_select --shape connections -t 16 --connections "$CONNS" \
      --cpus-per-shard "$H" ;;
  conn-mariadb)
    part conn-mariadb-threads -w oltp_point_select --shape connections -t 16 \
      --connections "$CONNS" --mariadb --cpus-per-shard "$H"
    part conn-mariadb-pool -w oltp_point_select --shape connections -t 16 \
      --connections "$CONNS" --mariadb --mariadb-arg=--thread-handling=pool-of-threads \
      --cpus-per-shard "$H" ;;
  tpcc)
    echo "== tpcc: bench/tpcc_compare.py"
    timeout -k 10 "${TPCC_TIMEOUT:-900}" python3 "$(dirname "$0")/tpcc_compare.py" \
      --warehouses 4 --threads "${TPCC_THREADS:-8,32}" --time 20 --rounds 1 --load-threads 16 \
      --canyon "$CANYON" ${GO_TPC:+--go-tpc "$GO_TPC"} --out "$OUT/tpcc.md" \
      --note "bench/many_core.sh on $NCPU CPUs, unpinned, one round" >"$OUT/tpcc.log" 2>&1
    echo "   rc=$?"
    tail -15 "$OUT/tpcc.log"
    if [ -n "${AFTER_PART:-}" ]; then eval "$AFTER_PART"; fi ;;
  *) echo "unknown part $p" >&2 ;;
  esac
done
