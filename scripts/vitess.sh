#!/usr/bin/env bash
# Vitess over Canyon nodes: builds Vitess and etcd once, starts a cluster over
# Canyon servers that are already running, adds tablets, stops it.
#
#   scripts/vitess.sh build
#   scripts/vitess.sh up     RUN_DIR BASE_PORT KS:SHARD:PORT[:DB] ...
#   scripts/vitess.sh tablet RUN_DIR BASE_PORT UID KS:SHARD:PORT[:DB]
#   scripts/vitess.sh down   RUN_DIR
#
# build  Vitess $VITESS_VERSION (vtgate, vttablet, vtctld, vtctldclient) and etcd
#        $ETCD_VERSION from the Go module proxy, each in a throwaway module (`go
#        install pkg@version` is refused where the proxy will not list versions),
#        into ~/.cache/canyon-tools/vitess-$VITESS_VERSION/bin. About 10 minutes
#        cold on two cores; nothing to do once built. Needs Go >= 1.26.8
#        (Vitess v0.24's go.mod).
# up     etcd (topology), vtctld, one vttablet per KS:SHARD:PORT and vtgate, all
#        on 127.0.0.1. Every tablet is unmanaged (`--unmanaged`: Vitess does not
#        start or configure the database, it uses the Canyon node on PORT,
#        database DB, default KS) and is made its shard's primary with
#        TabletExternallyReparented. Keyspaces are created as needed; a
#        sharded one's VSchema is the caller's (vtctldclient ApplyVSchema).
# tablet one more tablet with alias zone1-UID (UID > 100 + the number given to
#        `up`), e.g. for the target shards of a Reshard; made primary.
# down   stops everything `up` and `tablet` started under RUN_DIR.
#
# Ports: BASE_PORT+0/+1 vtctld http/grpc, +2/+3/+4 vtgate http/grpc/MySQL,
# +10/+11 etcd client/peer, +20+2i/+21+2i tablet zone1-(100+i) http/grpc.
# Logs in RUN_DIR/logs. Accounts: $CANYON_VITESS_USER / $CANYON_VITESS_PASSWORD
# (default root / pw) on every node, for every role vttablet has.
#
# Vitess servers refuse to run as root: under root they run as `nobody`
# (setpriv), so RUN_DIR must be reachable by nobody (e.g. under /tmp) and the
# binaries are linked there.
set -euo pipefail

VITESS_VERSION=${VITESS_VERSION:-v0.24.4}
ETCD_VERSION=${ETCD_VERSION:-v3.7.3}
CACHE=${CANYON_VITESS_CACHE:-$HOME/.cache/canyon-tools/vitess-$VITESS_VERSION}
DBU=${CANYON_VITESS_USER:-root}
DBP=${CANYON_VITESS_PASSWORD:-pw}
CELL=zone1
# What MySQL version the Vitess servers speak and parse as (Canyon is 8.0).
MYSQL_VERSION=${CANYON_VITESS_MYSQL_VERSION:-8.0.36-Vitess}

die() { echo "vitess.sh: $*" >&2; exit 1; }

build() {
  local bin=$CACHE/bin go
  go=$(command -v go || echo /usr/local/go/bin/go)
  [ -x "$go" ] || die "Go is not installed (Vitess $VITESS_VERSION needs Go >= 1.26.8)"
  mkdir -p "$bin"
  local cmds=() c
  for c in vtgate vttablet vtctld vtctldclient; do
    [ -x "$bin/$c" ] || cmds+=("vitess.io/vitess/go/cmd/$c")
  done
  if [ ${#cmds[@]} -gt 0 ]; then
    echo "vitess.sh: building Vitess $VITESS_VERSION into $bin (about 10 minutes cold)"
    local src=$CACHE/src/vitess
    mkdir -p "$src"
    (cd "$src"
     [ -f go.mod ] || "$go" mod init vitessbuild >/dev/null 2>&1
     "$go" get "${cmds[@]/%/@$VITESS_VERSION}" >get.log 2>&1 || { cat get.log >&2; exit 1; }
     nice -n 10 "$go" build -o "$bin/" "${cmds[@]}") || die "building Vitess failed"
  fi
  if [ ! -x "$bin/etcd" ]; then
    echo "vitess.sh: building etcd $ETCD_VERSION into $bin"
    local src=$CACHE/src/etcd
    mkdir -p "$src"
    # etcd's server module has replace directives, so it cannot be installed
    # by version; its root package is the etcd main.
    (cd "$src"
     [ -f go.mod ] || "$go" mod init etcdbuild >/dev/null 2>&1
     "$go" get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >get.log 2>&1 || { cat get.log >&2; exit 1; }
     nice -n 10 "$go" build -o "$bin/etcd" go.etcd.io/etcd/server/v3) || die "building etcd failed"
  fi
}

# Settings shared by `up`, `tablet` and `down`.
setup() {  # RUN_DIR [BASE_PORT]
  RUN=$1
  BASE=${2:-15000}
  BIN=$RUN/bin
  LOGS=$RUN/logs
  ETCD=127.0.0.1:$((BASE + 10))
  TOPO=(--topo-implementation etcd2 --topo-global-server-address "$ETCD" --topo-global-root /vitess/global)
  COMMON=(--config-file-not-found-handling=ignore --log-format text --mysql-server-version "$MYSQL_VERSION")
  AS=()
  if [ "$(id -u)" = 0 ]; then
    AS=(setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$RUN")
  fi
  VC=("$BIN/vtctldclient" --server "127.0.0.1:$((BASE + 1))")
}

start() {  # NAME CMD...: in the background, pid in RUN_DIR/pids/NAME
  local name=$1
  shift
  nohup "$@" >"$LOGS/$name.log" 2>&1 &
  echo $! >"$RUN/pids/$name"
}

wait_http() {  # PORT NAME
  local _
  for _ in $(seq 1 300); do
    curl -s -o /dev/null "http://127.0.0.1:$1/debug/status" && return 0
    sleep 0.2
  done
  tail -20 "$LOGS/$2.log" >&2
  die "$2 did not come up"
}

start_tablet() {  # UID KS:SHARD:PORT[:DB]
  local uid=$1 ks shard port db alias i
  IFS=: read -r ks shard port db <<<"$2"
  db=${db:-$ks}
  i=$((uid - 100))
  printf -v alias '%s-%010d' "$CELL" "$uid"
  # Refused when it exists, which is fine.
  "${VC[@]}" CreateKeyspace --durability-policy none "$ks" >/dev/null 2>&1 || true
  mariadb -h127.0.0.1 -P"$port" -u"$DBU" -p"$DBP" -e "CREATE DATABASE IF NOT EXISTS \`$db\`" \
    || die "cannot reach the Canyon node on port $port"
  local users=() role
  for role in app dba allprivs appdebug filtered repl erepl; do
    users+=(--db-$role-user "$DBU" --db-$role-password "$DBP")
  done
  start "vttablet-$uid" "${AS[@]}" "$BIN/vttablet" "${TOPO[@]}" "${COMMON[@]}" \
    --tablet-path "$alias" --tablet-hostname 127.0.0.1 \
    --init-keyspace "$ks" --init-shard "$shard" --init-tablet-type replica \
    --init-db-name-override "$db" --unmanaged \
    --db-host 127.0.0.1 --db-port "$port" --db-charset utf8mb4 "${users[@]}" \
    --health-check-interval 2s --bind-address 127.0.0.1 --grpc-bind-address 127.0.0.1 \
    --port $((BASE + 20 + 2 * i)) --grpc-port $((BASE + 21 + 2 * i)) \
    --service-map grpc-queryservice,grpc-tabletmanager,grpc-updatestream
  wait_http $((BASE + 20 + 2 * i)) "vttablet-$uid"
  # An unmanaged tablet starts as a replica; Canyon is the shard's primary.
  local _
  for _ in $(seq 1 50); do
    "${VC[@]}" TabletExternallyReparented "$alias" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  die "TabletExternallyReparented $alias failed"
}

up() {
  [ $# -ge 3 ] || die "usage: up RUN_DIR BASE_PORT KS:SHARD:PORT[:DB] ..."
  setup "$1" "$2"
  shift 2
  build >&2
  mkdir -p "$RUN/bin" "$LOGS" "$RUN/pids" "$RUN/etcd"
  local f
  for f in "$CACHE"/bin/*; do
    ln -f "$f" "$BIN/" 2>/dev/null || cp -f "$f" "$BIN/"
  done
  if [ "$(id -u)" = 0 ]; then
    chmod 755 "$RUN"
    chown -R 65534:65534 "$LOGS" "$RUN/pids"
  fi
  start etcd "$BIN/etcd" --data-dir "$RUN/etcd" --name vt \
    --listen-client-urls "http://$ETCD" --advertise-client-urls "http://$ETCD" \
    --listen-peer-urls "http://127.0.0.1:$((BASE + 11))" \
    --initial-advertise-peer-urls "http://127.0.0.1:$((BASE + 11))" \
    --initial-cluster "vt=http://127.0.0.1:$((BASE + 11))"
  local _
  for _ in $(seq 1 100); do
    curl -s "http://$ETCD/health" | grep -q true && break
    sleep 0.2
  done
  "$BIN/vtctldclient" --server internal "${TOPO[@]}" AddCellInfo --root "/vitess/$CELL" \
    --server-address "$ETCD" "$CELL" >/dev/null 2>&1 || true
  start vtctld "${AS[@]}" "$BIN/vtctld" "${TOPO[@]}" "${COMMON[@]}" \
    --service-map grpc-vtctl,grpc-vtctld --bind-address 127.0.0.1 --grpc-bind-address 127.0.0.1 \
    --port "$BASE" --grpc-port $((BASE + 1))
  wait_http "$BASE" vtctld
  local uid=100 spec
  for spec in "$@"; do
    uid=$((uid + 1))
    start_tablet "$uid" "$spec"
  done
  start vtgate "${AS[@]}" "$BIN/vtgate" "${TOPO[@]}" "${COMMON[@]}" \
    --cell "$CELL" --cells-to-watch "$CELL" --tablet-types-to-wait PRIMARY \
    --service-map grpc-vtgateservice --bind-address 127.0.0.1 --grpc-bind-address 127.0.0.1 \
    --port $((BASE + 2)) --grpc-port $((BASE + 3)) \
    --mysql-server-port $((BASE + 4)) --mysql-server-bind-address 127.0.0.1 \
    --mysql-auth-server-impl none
  wait_http $((BASE + 2)) vtgate
  echo "vitess.sh: vtgate on 127.0.0.1:$((BASE + 4)); vtctld grpc 127.0.0.1:$((BASE + 1)); logs in $LOGS"
}

tablet() {
  [ $# -eq 4 ] || die "usage: tablet RUN_DIR BASE_PORT UID KS:SHARD:PORT[:DB]"
  setup "$1" "$2"
  start_tablet "$3" "$4"
}

down() {
  [ $# -eq 1 ] || die "usage: down RUN_DIR"
  setup "$1"
  local f pid pids=()
  # vtgate first, etcd last: the others deregister through the topology.
  for f in vtgate 'vttablet-*' vtctld etcd; do
    for p in "$RUN"/pids/$f; do
      [ -f "$p" ] || continue
      pid=$(cat "$p")
      rm -f "$p"
      kill "$pid" 2>/dev/null && pids+=("$pid")
    done
    for pid in "${pids[@]:-}"; do
      [ -n "$pid" ] || continue
      for _ in $(seq 1 300); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
      kill -9 "$pid" 2>/dev/null || true
    done
    pids=()
  done
}

cmd=${1:-}
shift || true
case $cmd in
  build) build ;;
  up) up "$@" ;;
  tablet) tablet "$@" ;;
  down) down "$@" ;;
  *) die "usage: $0 build | up RUN_DIR BASE_PORT KS:SHARD:PORT[:DB] ... | tablet RUN_DIR BASE_PORT UID KS:SHARD:PORT[:DB] | down RUN_DIR" ;;
esac
