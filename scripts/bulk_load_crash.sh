#!/usr/bin/env bash
# Crash safety of LOAD DATA's bulk path (canyon-txn's bulk.rs), over the
# wire: kill -9 the server at several moments of a 1,000,000-row LOAD DATA
# LOCAL into an empty table, restart it, and print what the table holds. It
# must be 0 or 1,000,000 rows, the same through the secondary index, and the
# table must take writes. A check to read, not a test that asserts: the
# moments a kill lands on move with the machine (reading, merging,
# ingesting, committing); the in-process test of every failure point is
# crates/canyon-sql/tests/bulk_load.rs (a_failure_around_the_ingest_*).
#
# Usage: scripts/bulk_load_crash.sh CANYON_BINARY [PORT] [DELAYS...]
#   PORT default 4501; DELAYS (seconds after the load starts) default
#   "1.5 2.4 2.8 3.1 3.4 3.7 4.0 5.0".
set -u
bin=$1; port=${2:-4501}; shift; shift || true
delays=${*:-1.5 2.4 2.8 3.1 3.4 3.7 4.0 5.0}
work=$(mktemp -d)
mkdir -p $work
f=$work/rows.tsv
[ -f $f ] || awk -v n=1000000 'BEGIN { c = sprintf("%0120d", 0); gsub(/0/, "x", c); p = sprintf("%060d", 0); gsub(/0/, "y", p);
  for (i = 1; i <= n; i++) printf "%d\t%d\t%s\t%s\n", i, (i * 7919) % n, c, p; }' > $f
printf 'local_infile = true\n' > $work/c.toml
c=(mariadb --no-defaults -h127.0.0.1 -P$port -uroot -ppw --local-infile=1)
start() { CANYON_ROOT_PASSWORD=pw $bin serve --config $work/c.toml --data-dir $work/data --port $port >>$work/log 2>&1 & pid=$!
  for _ in $(seq 100); do "${c[@]}" -e "SELECT 1" >/dev/null 2>&1 && return; sleep 0.2; done; echo "no start"; exit 1; }
rm -f $work/log
for delay in $delays; do
  rm -rf $work/data; mkdir -p $work/data
  start
  "${c[@]}" -e "CREATE DATABASE ld; CREATE TABLE ld.t (id INT NOT NULL PRIMARY KEY, k INT NOT NULL, c CHAR(120) NOT NULL, pad CHAR(60) NOT NULL, KEY k_1 (k))"
  ( "${c[@]}" -e "LOAD DATA LOCAL INFILE '$f' INTO TABLE ld.t" >/dev/null 2>&1; echo "load exit $?" > $work/loadrc ) &
  lp=$!
  sleep $delay; kill -9 $pid; wait $lp 2>/dev/null; wait $pid 2>/dev/null
  scratch=$(ls $work/data/db/bulk-scratch 2>/dev/null | wc -l)
  start
  rb=$(grep -c "rolling back a bulk load" $work/log)
  n=$("${c[@]}" -N -e "SELECT COUNT(*) FROM ld.t")
  ni=$("${c[@]}" -N -e "SELECT COUNT(*) FROM ld.t FORCE INDEX (k_1) WHERE k >= 0")
  s=$("${c[@]}" -N -e "SELECT COALESCE(SUM(id),0) FROM ld.t")
  echo "kill after ${delay}s: $(cat $work/loadrc) scratch_dirs_at_crash=$scratch rows=$n via_index=$ni sum_id=$s rollbacks_logged_so_far=$rb"
  "${c[@]}" -e "INSERT INTO ld.t VALUES (2000000, 1, 'a', 'b')" >/dev/null && echo "  insert after restart ok"
  kill $pid; wait $pid 2>/dev/null
done
rm -rf $work
