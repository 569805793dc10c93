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
# Canyon runs with RocksDB storage and its default durability
# (sync-every-commit); MariaDB with innodb_flush_log_at_trx_commit=1, a 1 GiB
# buffer pool, no binary log — the settings of bench/sysbench_compare.py.
set -euo pipefail
canyon=$1 rows=${2:-1000000} rounds=${3:-2}
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

file="$work/rows.tsv"
awk -v n="$rows" 'BEGIN {
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

# Canyon
cdir="$work/canyon"
mkdir -p "$cdir"
printf 'local_infile = true\n' >"$work/canyon.toml"
CANYON_ROOT_PASSWORD=pw "$canyon" serve --config "$work/canyon.toml" --data-dir "$cdir" \
  --port 4131 >"$work/canyon.log" 2>&1 &
pids+=($!)
wait_up 4131 pw

# MariaDB
mdir="$work/mariadb"
mkdir -p "$mdir"
mariadb-install-db --no-defaults --datadir="$mdir" --user=root \
  --auth-root-authentication-method=normal --skip-test-db >/dev/null 2>&1
mariadbd --no-defaults --datadir="$mdir" --port=4132 --socket="$work/mariadb.sock" --user=root \
  --bind-address=127.0.0.1 --innodb-flush-log-at-trx-commit=1 --innodb-buffer-pool-size=1G \
  --skip-log-bin --performance-schema=OFF --local-infile=1 >"$work/mariadb.log" 2>&1 &
pids+=($!)
for _ in $(seq 150); do [ -S "$work/mariadb.sock" ] && break; sleep 0.2; done
mariadb --no-defaults -S "$work/mariadb.sock" -uroot \
  -e "CREATE USER IF NOT EXISTS root@'127.0.0.1'; ALTER USER root@'127.0.0.1' IDENTIFIED BY 'pw';
      GRANT ALL ON *.* TO root@'127.0.0.1'; ALTER USER root@localhost IDENTIFIED BY 'pw'"
wait_up 4132 pw

load() { # label port
  local c=(mariadb --no-defaults -h127.0.0.1 -P"$2" -uroot -ppw --local-infile=1)
  "${c[@]}" -e "DROP DATABASE IF EXISTS ld; $schema"
  local t0 t1
  t0=$(date +%s.%N)
  "${c[@]}" -e "LOAD DATA LOCAL INFILE '$file' INTO TABLE ld.t"
  t1=$(date +%s.%N)
  local n
  n=$("${c[@]}" -N -e "SELECT COUNT(*) FROM ld.t")
  awk -v l="$1" -v a="$t0" -v b="$t1" -v n="$n" \
    'BEGIN { printf "%s rows=%d seconds=%.2f rows/s=%.0f\n", l, n, b - a, n / (b - a) }'
}

for _ in $(seq "$rounds"); do
  load canyon 4131
  load mariadb 4132
done
