#!/usr/bin/env bash
# What each instrument of issue 27 costs on sysbench (a benchmark, not a test:
# nothing asserts). One Canyon and one MariaDB 10.11 are started once and
# loaded once (4 tables x 10,000 rows); then every (workload, threads) cell is
# run under each configuration, switched at run time, in the order
#
#   canyon bare, canyon perf_schema, canyon general_log,
#   mariadb bare, mariadb general_log
#
# and the whole sequence is repeated ROUNDS times, so drift on a shared machine
# hits every configuration alike. The configurations:
#
#   bare         Canyon: setup_consumers.global_instrumentation = NO, which
#                switches every performance_schema consumer off (the statement
#                end is then one relaxed load). MariaDB: its default,
#                performance_schema OFF, general log OFF.
#   perf_schema  Canyon's default consumers (statements_digest,
#                events_statements_current / _history): every statement is
#                normalised, hashed and counted in its digest row.
#   general_log  the general log ON, to a file in the scratch directory
#                (performance_schema consumers off on Canyon): one write() per
#                statement on Canyon (O_APPEND), MariaDB's LOCK_log mutex.
#
# Prints one line per run (round, server, configuration, workload, threads,
# transactions per second, server CPU microseconds per transaction from
# /proc/PID/stat), then a Markdown summary that docs/benchmarks.md quotes:
# medians of the rounds, each configuration's throughput relative to its
# server's bare runs, and the server CPU it adds per transaction (the
# steadier figure on a shared machine).
#
# Usage: bench/instrument_cost.sh CANYON_BINARY [ROUNDS] [SECONDS]
# WORKLOADS and THREADS (space-separated) override oltp_point_select
# oltp_read_write and 8 64. MARIADBD overrides /usr/sbin/mariadbd.
set -euo pipefail
canyon=$(realpath "$1")
rounds=${2:-2} secs=${3:-15}
mariadbd=${MARIADBD:-/usr/sbin/mariadbd}
work=$(mktemp -d)
cport=4121 mport=4122
cleanup() {
  [[ -n ${cpid:-} ]] && kill "$cpid" 2>/dev/null || true
  [[ -n ${mpid:-} ]] && kill "$mpid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/canyon"
CANYON_ROOT_PASSWORD=pw "$canyon" serve --data-dir "$work/canyon" --port "$cport" \
  >"$work/canyon.log" 2>&1 &
cpid=$!
mariadb-install-db --no-defaults --datadir="$work/maria" --auth-root-authentication-method=normal >/dev/null 2>&1
"$mariadbd" --no-defaults --user="$(id -un)" --datadir="$work/maria" --socket="$work/maria.sock" \
  --port="$mport" --bind-address=127.0.0.1 --skip-grant-tables --max-connections=1000 \
  >"$work/maria.log" 2>&1 &
mpid=$!

cq() { mariadb -h127.0.0.1 -P"$cport" -uroot -ppw -N -e "$1"; }
mq() { mariadb -h127.0.0.1 -P"$mport" -uroot -N -e "$1"; }
for _ in $(seq 150); do
  cq "SELECT 1" >/dev/null 2>&1 && mq "SELECT 1" >/dev/null 2>&1 && break
  sleep 0.2
done

sb() { # port user password args...
  local port=$1 user=$2 pass=$3
  shift 3
  sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port" \
    --mysql-user="$user" --mysql-password="$pass" --mysql-db=sbtest \
    --tables=4 --table-size=10000 "$@"
}
cq "CREATE DATABASE sbtest"
mq "CREATE DATABASE sbtest"
sb "$cport" root pw oltp_read_write prepare >/dev/null
sb "$mport" root "" oltp_read_write prepare >/dev/null

configure() { # server config
  local pfs=NO glog=OFF
  case $2 in
    perf_schema) pfs=YES ;;
    general_log) glog=ON ;;
  esac
  rm -f "$work/$1-general.log"
  if [[ $1 == canyon ]]; then
    cq "UPDATE performance_schema.setup_consumers SET enabled = '$pfs' WHERE name = 'global_instrumentation';
        SET GLOBAL general_log = OFF; SET GLOBAL general_log_file = '$work/canyon-general.log';
        SET GLOBAL general_log = $glog"
  else
    mq "SET GLOBAL general_log = OFF; SET GLOBAL log_output = 'FILE';
        SET GLOBAL general_log_file = '$work/mariadb-general.log'; SET GLOBAL general_log = $glog"
  fi
}

# The server's CPU time so far (user + system), in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
ticks=$(getconf CLK_TCK)

results=$work/results
: >"$results"
for round in $(seq "$rounds"); do
  for w in ${WORKLOADS:-oltp_point_select oltp_read_write}; do
    for t in ${THREADS:-8 64}; do
      for run in canyon:bare canyon:perf_schema canyon:general_log mariadb:bare mariadb:general_log; do
        server=${run%%:*} config=${run#*:}
        configure "$server" "$config"
        if [[ $server == canyon ]]; then port=$cport pid=$cpid pass=pw; else port=$mport pid=$mpid pass=""; fi
        before=$(cpu_ticks "$pid")
        out=$(sb "$port" root "$pass" "$w" --threads="$t" --time="$secs" run)
        after=$(cpu_ticks "$pid")
        tps=$(sed -n 's/.*transactions: *[0-9]* *(\([0-9.]*\) per sec.*/\1/p' <<<"$out")
        txns=$(sed -n 's/.*transactions: *\([0-9]*\) *(.*/\1/p' <<<"$out")
        # Server CPU (user + system) per transaction, in microseconds.
        cpu_us=$(awk -v d=$((after - before)) -v k="$ticks" -v n="$txns" 'BEGIN { printf "%.2f", d * 1e6 / k / n }')
        line="$round $server $config $w $t $tps $cpu_us"
        echo "$line"
        echo "$line" >>"$results"
      done
    done
  done
done
configure canyon bare
configure mariadb bare

python3 - "$results" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    _, server, config, w, t, tps, cpu = line.split()
    runs.setdefault((w, int(t), server, config), []).append((float(tps), float(cpu)))
cells = sorted({(w, t) for (w, t, _, _) in runs})
print()
print("| workload | threads | server | bare tps (CPU µs/txn) | perf_schema tps: ratio (CPU µs/txn added) | general_log tps: ratio (CPU µs/txn added) |")
print("|---|---:|---|---:|---:|---:|")
med = lambda xs, i: statistics.median(x[i] for x in xs)
for w, t in cells:
    for server in ("canyon", "mariadb"):
        bare = runs[(w, t, server, "bare")]
        tps0, cpu0 = med(bare, 0), med(bare, 1)
        cols = []
        for config in ("perf_schema", "general_log"):
            got = runs.get((w, t, server, config))
            if got is None:
                cols.append("—")
            else:
                cols.append(f"{med(got, 0):,.0f}: {med(got, 0) / tps0:.3f} ({med(got, 1) - cpu0:+.1f})")
        print(f"| {w} | {t} | {server} | {tps0:,.0f} ({cpu0:.1f}) | {cols[0]} | {cols[1]} |")
PY
