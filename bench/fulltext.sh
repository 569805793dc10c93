#!/usr/bin/env bash
# FULLTEXT search latency, Canyon against a MariaDB 10.11 it starts, on the
# same data: a table of ROWS synthetic documents (title + body drawn from a
# fixed vocabulary with a Zipf-like skew, so some words are rare and some in
# most rows) with a FULLTEXT KEY, then each search of QUERIES run REPS times
# on one server, then the other, alternating ROUNDS times so drift on a
# shared machine hits both alike. Prints the median and p95 milliseconds of
# each (server, query) per round. A benchmark, not a test: nothing asserts.
#
# Usage: bench/fulltext.sh CANYON_BINARY [ROWS] [REPS] [ROUNDS]
# MARIADBD overrides /usr/sbin/mariadbd.
set -euo pipefail
canyon=$1 rows=${2:-20000} reps=${3:-20} rounds=${4:-2}
mariadbd=${MARIADBD:-/usr/sbin/mariadbd}
work=$(mktemp -d)
cport=4111 mport=4112
cleanup() {
  [[ -n ${cpid:-} ]] && kill "$cpid" 2>/dev/null || true
  [[ -n ${mpid:-} ]] && kill "$mpid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# Canyon.
mkdir -p "$work/canyon"
CANYON_ROOT_PASSWORD=pw "$canyon" serve --data-dir "$work/canyon" --port "$cport" >"$work/canyon.log" 2>&1 &
cpid=$!
# MariaDB, private data directory and socket.
mariadb-install-db --no-defaults --datadir="$work/maria" --auth-root-authentication-method=normal >/dev/null 2>&1
"$mariadbd" --no-defaults --user="$(id -un)" --datadir="$work/maria" --socket="$work/maria.sock" \
  --port="$mport" --bind-address=127.0.0.1 --skip-grant-tables >"$work/maria.log" 2>&1 &
mpid=$!

cq() { mariadb -h127.0.0.1 -P"$cport" -uroot -ppw -N "$@"; }
mq() { mariadb -h127.0.0.1 -P"$mport" -uroot -N "$@"; }
for _ in $(seq 100); do
  cq -e "SELECT 1" >/dev/null 2>&1 && mq -e "SELECT 1" >/dev/null 2>&1 && break
  sleep 0.2
done

# The data, generated once, loaded into both.
python3 - "$rows" >"$work/data.sql" <<'PY'
import random, sys
rows = int(sys.argv[1])
rnd = random.Random(42)
vocab = [f"w{i:04d}" for i in range(5000)] + ["database", "canyon", "search", "engine", "tutorial"]
weights = [1.0 / (i + 1) for i in range(len(vocab))]
print("CREATE DATABASE ftbench; USE ftbench;")
print("CREATE TABLE docs (id INT PRIMARY KEY, title VARCHAR(200), body TEXT, FULLTEXT KEY ft (title, body));")
batch = []
for i in range(1, rows + 1):
    title = " ".join(rnd.choices(vocab, weights, k=4))
    body = " ".join(rnd.choices(vocab, weights, k=40))
    batch.append(f"({i},'{title}','{body}')")
    if len(batch) == 500:
        print("INSERT INTO docs VALUES " + ",".join(batch) + ";")
        batch = []
if batch:
    print("INSERT INTO docs VALUES " + ",".join(batch) + ";")
PY
cq <"$work/data.sql"
mq <"$work/data.sql"

QUERIES=(
  "SELECT id FROM docs WHERE MATCH (title, body) AGAINST ('w4000') LIMIT 10"
  "SELECT id FROM docs WHERE MATCH (title, body) AGAINST ('canyon search') LIMIT 10"
  "SELECT COUNT(*) FROM docs WHERE MATCH (title, body) AGAINST ('+w0100 -w0200' IN BOOLEAN MODE)"
  "SELECT id, MATCH (title, body) AGAINST ('w00*' IN BOOLEAN MODE) r FROM docs WHERE MATCH (title, body) AGAINST ('w00*' IN BOOLEAN MODE) LIMIT 10"
)

measure() { # label client-function query
  local times=()
  for _ in $(seq "$reps"); do
    local t0 t1
    t0=$(date +%s%N)
    "$2" ftbench -e "$3" >/dev/null
    t1=$(date +%s%N)
    times+=($(((t1 - t0) / 1000)))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk -v label="$1" -v q="$3" '
    { v[NR] = $1 } END { p = int(NR*0.95); if (p < 1) p = 1; printf "%-8s median %8.2f ms  p95 %8.2f ms  %s\n", label, v[int(NR/2)+1]/1000, v[p]/1000, q }'
}

echo "rows=$rows reps=$reps (each timing includes the mariadb CLI's start, the same for both)"
for r in $(seq "$rounds"); do
  echo "round $r"
  for q in "${QUERIES[@]}"; do
    measure canyon cq "$q"
    measure mariadb mq "$q"
  done
done
