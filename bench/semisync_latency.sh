#!/usr/bin/env bash
# Semi-synchronous replication's cost (issue 25): one Canyon source (binary
# log on) with one Canyon replica on the same machine, sysbench against the
# source with rpl_semi_sync_source_enabled OFF (asynchronous) and ON,
# alternating OFF ON OFF ON on the same two servers so that drift on a shared
# machine hits both alike. The replica acknowledges a transaction once it has
# applied it durably (docs/replication.md), so an acknowledged commit costs a
# round trip plus the replica's apply and sync. Prints one line per run with
# transactions per second and the average and 95th-percentile latency (ms).
# A benchmark, not a test: nothing asserts.
#
# Usage: bench/semisync_latency.sh CANYON_BINARY [ROUNDS] [SECONDS]
# WORKLOADS and THREADS (space-separated) override the defaults
# (oltp_insert and oltp_write_only at 1 and 8 threads).
set -euo pipefail
bin=$(realpath "$1")
rounds=${2:-2} secs=${3:-15}
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT

start() { # name port server_id
  mkdir -p "$work/$1"
  CANYON_ROOT_PASSWORD=pw CANYON_LOG_BIN=1 CANYON_SERVER_ID=$3 \
    "$bin" serve --data-dir "$work/$1" --port "$2" >"$work/$1.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do
    mariadb -h127.0.0.1 -P"$2" -uroot -ppw -e "SELECT 1" >/dev/null 2>&1 && return
    sleep 0.2
  done
  echo "server $1 did not start" >&2
  exit 1
}

q() { mariadb -h127.0.0.1 -P"$1" -uroot -ppw -N -e "$2"; }

start source 4201 1
start replica 4202 2
q 4201 "SET sql_log_bin = 0;
  CREATE USER repl IDENTIFIED WITH mysql_native_password BY 'replpw';
  GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO repl;
  SET sql_log_bin = 1;
  SET GLOBAL rpl_semi_sync_source_timeout = 60000;
  CREATE DATABASE sbtest"
q 4202 "SET GLOBAL rpl_semi_sync_replica_enabled = ON;
  CHANGE REPLICATION SOURCE TO SOURCE_HOST = '127.0.0.1', SOURCE_PORT = 4201,
    SOURCE_USER = 'repl', SOURCE_PASSWORD = 'replpw', SOURCE_AUTO_POSITION = 1;
  START REPLICA"
sb=(sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=4201
  --mysql-user=root --mysql-password=pw --mysql-db=sbtest --tables=4 --table-size=10000
  --percentile=95)
"${sb[@]}" oltp_read_write prepare >/dev/null
clients() { q 4201 "SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_source_clients'" | cut -f2; }
for _ in $(seq 100); do
  [ "$(clients)" = 1 ] && break
  sleep 0.2
done
if [ "$(clients)" != 1 ]; then
  echo "the replica did not connect semi-synchronously:" >&2
  mariadb -h127.0.0.1 -P4202 -uroot -ppw -E -e "SHOW REPLICA STATUS" >&2
  exit 1
fi

caught_up() {
  local want
  want=$(q 4201 "SELECT @@gtid_executed")
  for _ in $(seq 1500); do
    [ "$(q 4202 "SELECT @@gtid_executed")" = "$want" ] && return
    sleep 0.2
  done
}

for _ in $(seq "$rounds"); do
  for w in ${WORKLOADS:-oltp_insert oltp_write_only}; do
    for t in ${THREADS:-1 8}; do
      for mode in async semisync; do
        # Each run starts with the replica caught up: an asynchronous run
        # leaves a backlog that the next semi-synchronous commits would
        # otherwise wait through (the replica acknowledges what it applied).
        caught_up
        q 4201 "SET GLOBAL rpl_semi_sync_source_enabled = $([ $mode = semisync ] && echo 1 || echo 0)"
        out=$("${sb[@]}" "$w" --threads="$t" --time="$secs" run)
        tps=$(grep -E "transactions:" <<<"$out" | sed -E 's/.*\(([0-9.]+) per sec.*/\1/')
        avg=$(grep -E "^ +avg:" <<<"$out" | awk '{print $2}')
        p95=$(grep -E "95th percentile:" <<<"$out" | awk '{print $3}')
        st=$(q 4201 "SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_source_%tx'" | tr '\t\n' '= ')
        echo "$mode $w threads=$t tps=$tps avg_ms=$avg p95_ms=$p95 $st"
      done
    done
  done
done
# The replica has everything.
caught_up
want=$(q 4201 "SELECT @@gtid_executed")
echo "replica caught up: $([ "$(q 4202 "SELECT @@gtid_executed")" = "$want" ] && echo yes || echo no)"
