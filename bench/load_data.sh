#!/usr/bin/env bash
# LOAD DATA LOCAL INFILE throughput: Canyon against a MariaDB it starts, on
# the same generated file, alternating Canyon MariaDB Canyon MariaDB so that
# drift on a shared machine hits both alike. The file has N rows of a
# sysbench-like table (id INT PRIMARY KEY, k INT with a secondary index,
# c CHAR(120), pad CHAR(60)), tab-separated, loaded by the mariadb client
# with --local-infile=1 into a fresh table each round. Prints one line per
# run with the seconds and rows/s (the client's wall time, file transfer,
# parse, insert and commit included). A benchmark, not a test: nothing asserts.
#
# Usage: bench/load_data.sh CANYON_BINARY [ROWS] [ROUNDS]
#   ROWS defaults to 1,000,000 (issue 29 asks for 10,000,000); ROUNDS to 2.
# Environment (all optional):
#   BASELINE=PATH    a second Canyon binary (say, main's) loaded in the same
#                    rounds: canyon, baseline, mariadb, canyon, baseline, ...
#   NO_MARIADB=1     Canyon (and BASELINE) only.
#   CANYON_PORT, BASELINE_PORT, MARIADB_PORT   default 4131, 4133, 4132.
#   WORK=DIR         where the file and the data directories go (default: a
#                    fresh mktemp -d, removed at the end; a given one is kept,
#                    and its rows.tsv reused when it has ROWS lines).
# After each Canyon load it also prints the server's peak resident memory
# (VmHWM: the write buffer and commit batch of the one transaction).
# Canyon runs with RocksDB storage and its default durability
# (sync-every-commit); MariaDB with innodb_flush_log_at_trx_commit=1, a 1 GiB
# buffer pool, no binary log — the settings of bench/sysbench_compare.py.
set -euo pipefail
canyon=$1 rows=${2:-1000000} rounds=${3:-2}
cport=${CANYON_PORT:-4131} bport=${BASELINE_PORT:-4133} mport=${MARIADB_PORT:-4132}
keep=${WORK:+1}
work=${WORK:-$(mktemp -d)}
mkdir -p "$work"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ -z "$keep" ]; then rm -rf "$work"; else rm -rf "$work/canyon" "$work/baseline" "$work/mariadb"; fi
}
trap cleanup EXIT

file="$work/rows.tsv"
[ -f "$file" ] && [ "$(wc -l <"$file")" = "$rows" ] || awk -v n="$rows" 'BEGIN {
  srand(42);
  c = sprintf("%0120d", 0); gsub(/0/, "x", c);
  p = sprintf("%060d", 0); gsub(/0/, "y", p);
  for (i = 1; i <= n; i++) printf "%d\t%d\t%s\t%s\n", i, int(rand() * n), c, p;
}' >"$file"
echo "file: $rows rows, $(du -h "$file" | cut -f1)"

wait_up() { # port password
  for _ in $(seq 150); do
    mariadb --no-defaults -h127.0.0.1 -P"$1" -uroot -p"$2" -e "SELECT 1" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  echo "server on port $1 did not start" >&2
  return 1
}

schema="CREATE DATABASE ld; CREATE TABLE ld.t (id INT NOT NULL PRIMARY KEY, k INT NOT NULL,
  c CHAR(120) NOT NULL, pad CHAR(60) NOT NULL, KEY k_1 (k))"

# Canyon (and the baseline binary)
printf 'local_infile = true\n' >"$work/canyon.toml"
declare -A server_pid
start_canyon() { # label binary port
  rm -rf "${work:?}/$1"
  mkdir -p "$work/$1"
  CANYON_ROOT_PASSWORD=pw "$2" serve --config "$work/canyon.toml" --data-dir "$work/$1" \
    --port "$3" >"$work/$1.log" 2>&1 &
  pids+=($!)
  server_pid[$1]=$!
  wait_up "$3" pw
}
start_canyon canyon "$canyon" "$cport"
if [ -n "${BASELINE:-}" ]; then start_canyon baseline "$BASELINE" "$bport"; fi

if [ -z "${NO_MARIADB:-}" ]; then
# MariaDB
rm -rf "$work/mariadb"
mdir="$work/mariadb"
mkdir -p "$mdir"
mariadb-install-db --no-defaults --datadir="$mdir" --user=root \
  --auth-root-authentication-method=normal --skip-test-db >/dev/null 2>&1
mariadbd --no-defaults --datadir="$mdir" --port="$mport" --socket="$work/mariadb.sock" --user=root \
  --bind-address=127.0.0.1 --innodb-flush-log-at-trx-commit=1 --innodb-buffer-pool-size=1G \
  --skip-log-bin --performance-schema=OFF --local-infile=1 >"$work/mariadb.log" 2>&1 &
pids+=($!)
for _ in $(seq 150); do [ -S "$work/mariadb.sock" ] && break; sleep 0.2; done
mariadb --no-defaults -S "$work/mariadb.sock" -uroot \
  -e "CREATE USER IF NOT EXISTS root@'127.0.0.1'; ALTER USER root@'127.0.0.1' IDENTIFIED BY 'pw';
      GRANT ALL ON *.* TO root@'127.0.0.1'; ALTER USER root@localhost IDENTIFIED BY 'pw'"
wait_up "$mport" pw
fi

load() { # label port
  local c=(mariadb --no-defaults -h127.0.0.1 -P"$2" -uroot -ppw --local-infile=1)
  "${c[@]}" -e "DROP DATABASE IF EXISTS ld; $schema"
  local t0 t1
  # Peak RSS from here (writing 5 to clear_refs resets VmHWM).
  local before=""
  if [ -n "${server_pid[$1]:-}" ]; then
    echo 5 >"/proc/${server_pid[$1]}/clear_refs" || true
    # VmHWM restarts from the current RSS (block cache, memtables left by
    # the previous round's DROP): the load's own growth is peak - before.
    before=" rss_before_mib=$(awk '/VmRSS/ { printf "%d", $2 / 1024 }' "/proc/${server_pid[$1]}/status")"
  fi
  t0=$(date +%s.%N)
  "${c[@]}" -e "LOAD DATA LOCAL INFILE '$file' INTO TABLE ld.t"
  t1=$(date +%s.%N)
  local mem=""
  if [ -n "${server_pid[$1]:-}" ]; then
    # Read before the COUNT(*) below, whose scan fills the block cache.
    mem="$before peak_rss_mib=$(awk '/VmHWM/ { printf "%d", $2 / 1024 }' "/proc/${server_pid[$1]}/status")"
  fi
  local n
  n=$("${c[@]}" -N -e "SELECT COUNT(*) FROM ld.t")
  awk -v l="$1" -v a="$t0" -v b="$t1" -v n="$n" -v m="$mem" -v la="$(cut -d' ' -f1-3 /proc/loadavg)" \
    'BEGIN { printf "%s rows=%d seconds=%.2f rows/s=%.0f%s load_avg=%s\n", l, n, b - a, n / (b - a), m, la }'
}

for _ in $(seq "$rounds"); do
  load canyon "$cport"
  if [ -n "${BASELINE:-}" ]; then load baseline "$bport"; fi
  if [ -z "${NO_MARIADB:-}" ]; then load mariadb "$mport"; fi
done
