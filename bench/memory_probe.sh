#!/usr/bin/env bash
# What a load costs in memory (issue 28): one canyon binary with
# `memory_budget_bytes` = BUDGET_MB, loaded by 8 sysbench clients (8 tables x
# $ROWS rows (default 200,000), `oltp_read_write prepare`), then 20 s of 16-client
# oltp_read_write. With LIMIT_MB > 0 the server runs in a cgroup v1 memory
# group of that limit (made under this shell's own group, removed after) and
# the group's peak, failcnt, OOM kills and final rss / page cache are
# printed; with 0, the process's peak and final resident set (VmHWM, VmRSS).
# Extra NAME=VALUE arguments go into the server's environment (e.g.
# MIMALLOC_PURGE_DELAY=1000 to try an allocator setting). A probe, not a
# test: nothing asserts. Needs root for the cgroup.
#
# Usage: [ROWS=N] bench/memory_probe.sh CANYON_BINARY LIMIT_MB BUDGET_MB [NAME=VALUE...]
set -euo pipefail
bin=$(realpath "$1") limit=$2 budget=$3 rows=${ROWS:-200000}
shift 3
work=$(mktemp -d)
port=$((20000 + RANDOM % 20000))
cg=""
cleanup() {
  pkill -f "port $port" 2>/dev/null || true
  sleep 1
  [ -n "$cg" ] && rmdir "$cg" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
if [ "$limit" -gt 0 ]; then
  own=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ {print $3}' /proc/self/cgroup)
  cg="/sys/fs/cgroup/memory${own%/}/canyon-probe-$$"
  mkdir "$cg"
  echo $((limit << 20)) >"$cg/memory.limit_in_bytes"
fi
# The server moves itself into the group before it execs.
sh -c "[ -n '$cg' ] && echo \$\$ > '$cg/cgroup.procs'; exec env $* \
  CANYON_MEMORY_BUDGET_BYTES=$((budget << 20)) CANYON_ROOT_PASSWORD=pw RUST_LOG=warn \
  '$bin' serve --data-dir '$work/data' --port $port" >"$work/log" 2>&1 &
for _ in $(seq 50); do
  mariadb -h127.0.0.1 -P$port -uroot -ppw -e "SELECT 1" >/dev/null 2>&1 && break
  sleep 0.2
done
pid=$(pgrep -f "port $port" | head -1)
mariadb -h127.0.0.1 -P$port -uroot -ppw -e "CREATE DATABASE sbtest"
sb=(sysbench oltp_read_write --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$port
  --mysql-user=root --mysql-password=pw --tables=8 --table-size="$rows")
start=$(date +%s)
"${sb[@]}" --threads=8 prepare >"$work/prepare.log" 2>&1 || true
echo "load: $(($(date +%s) - start)) s, $(grep -c FATAL "$work/prepare.log" || true) failed clients"
"${sb[@]}" --threads=16 --time=20 run 2>&1 | grep -E "transactions:" || echo "run: failed"
if [ -n "$cg" ]; then
  echo "group: peak $(($(cat "$cg/memory.max_usage_in_bytes") >> 20)) MiB of $limit," \
    "failcnt $(cat "$cg/memory.failcnt"), oom_kill $(awk '/oom_kill /{print $2}' "$cg/memory.oom_control")," \
    "rss $(($(awk '/^rss /{print $2}' "$cg/memory.stat") >> 20)) MiB," \
    "page cache $(($(awk '/^cache /{print $2}' "$cg/memory.stat") >> 20)) MiB"
fi
if kill -0 "$pid" 2>/dev/null; then
  echo "server: $(grep -E 'VmHWM|VmRSS' /proc/"$pid"/status | tr -s ' \t' ' ' | tr '\n' ' ')"
else
  echo "server: gone"
fi
