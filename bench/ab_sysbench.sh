#!/usr/bin/env bash
# A/B of two canyon binaries on sysbench, alternating A B A B so that drift on a
# shared machine hits both alike: oltp_point_select and oltp_read_write at 1 and 8
# threads, ROUNDS rounds of SECONDS each, 4 tables x 10,000 rows, a fresh data
# directory per run. Prints one line per run; compare the per-second rates of
# the same workload and thread count. A benchmark, not a test: nothing asserts.
#
# Usage: bench/ab_sysbench.sh OLD_BINARY NEW_BINARY [ROUNDS] [SECONDS]
# WORKLOADS and THREADS (space-separated) override the workloads and thread counts.
set -euo pipefail
old=$1 new=$2 rounds=${3:-2} secs=${4:-15}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

run() { # label binary port workload threads
  local dir="$work/$3"
  rm -rf "$dir"
  mkdir -p "$dir"
  CANYON_ROOT_PASSWORD=pw "$2" serve --data-dir "$dir" --port "$3" >"$dir.log" 2>&1 &
  local pid=$!
  for _ in $(seq 50); do
    mariadb -h127.0.0.1 -P"$3" -uroot -ppw -e "SELECT 1" >/dev/null 2>&1 && break
    sleep 0.2
  done
  mariadb -h127.0.0.1 -P"$3" -uroot -ppw -e "CREATE DATABASE sbtest"
  local sb=(sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$3"
    --mysql-user=root --mysql-password=pw --mysql-db=sbtest --tables=4 --table-size=10000)
  "${sb[@]}" oltp_read_write prepare >/dev/null
  local r
  r=$("${sb[@]}" "$4" --threads="$5" --time="$secs" run | grep -E "queries:|transactions:" | tr -s ' ' | tr '\n' ' ')
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  echo "$1 $4 threads=$5 $r"
}

for _ in $(seq "$rounds"); do
  for w in ${WORKLOADS:-oltp_point_select oltp_read_write}; do
    for t in ${THREADS:-1 8}; do
      run old "$old" 4101 "$w" "$t"
      run new "$new" 4102 "$w" "$t"
    done
  done
done
