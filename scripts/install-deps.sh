#!/usr/bin/env bash
# Installs the Debian packages that building and testing Canyon need, and only
# those that are missing, so that running it again is cheap:
#   clang, libclang-dev   RocksDB's C++ build and its bindgen bindings
#   sysbench              the OLTP client the sysbench tests drive
#   mariadb-client        the `mariadb` CLI used by the differential tests
#   mariadb-server        MariaDB 10.11, the reference server of the differential tests
#   mariadb-test          MariaDB's own mysql-test files and `mariadb-test`, which
#                         tests/mariadb_suite.rs runs against Canyon
#   mariadb-plugin-spider MariaDB's Spider storage engine (ha_spider.so), which
#                         tests/spider.rs loads into a MariaDB head that shards
#                         sysbench's tables over two Canyon nodes with XA
#   chromium              headless browser that opens `canyon bench`'s HTML report in a test
#   openjdk-17-jdk-headless  runs tests/java/Drivers.java (JDBC drivers, tests/drivers_java.rs)
#                         and tests/java/Debezium.java (tests/debezium.rs)
#   maven                 resolves Debezium's jars (tests/java/debezium/pom.xml)
#   tzdata                the system time-zone database (/usr/share/zoneinfo), which
#                         named `time_zone` values and CONVERT_TZ read (time_zone.test)
#   percona-toolkit       pt-query-digest, which tests/query_log.rs runs on the slow log
#   bpftrace binutils     tests/usdt.rs: readelf lists the USDT probes; bpftrace
#                         attaches to them where the kernel allows
#   prometheus-mysqld-exporter  Prometheus' mysqld_exporter (0.14), which
#                         tests/mysqld_exporter.rs scrapes Canyon with (the Go module
#                         proxy here refuses github.com/prometheus/mysqld_exporter)
# and, from PyPI, the Python drivers tests/drivers_python.rs runs (PyMySQL,
# mysql-connector-python, SQLAlchemy 2.0.44) with pytest, when python3
# cannot import them; and PingCAP's go-tpc v1.0.12, the TPC-C client of
# tests/tpcc.rs and bench/tpcc_compare.py, built from source into
# ~/.cache/canyon-tools/go-tpc when it is not there (needs Go >= 1.21: the `go` on
# PATH or in /usr/local/go, else Debian's golang-go); and Vitess v0.24.4 with etcd
# for tests/vitess.rs, built by scripts/vitess.sh into ~/.cache/canyon-tools
# (needs Go 1.26).
# Client drivers of the other driver tests, all pinned in the repository and
# fetched into caches outside the clone (nothing downloaded is ever committed),
# each skipped cheaply when already present:
#   Go      go-sql-driver/mysql: `go mod download` of crates/canyon-server/tests/go
#           (go.mod / go.sum) into Go's module cache (tests/drivers_go.rs); and
#           go-mysql, the binlog reader of crates/canyon-binlog/tests/go-mysql
#           (tests/go_mysql.rs), the same way
#   Java    the jars listed in crates/canyon-server/tests/java/jars.txt, from Maven
#           Central into ~/.cache/canyon-tools/java, SHA-1 checked (tests/drivers_java.rs);
#           and Debezium 3.6.1.Final's embedded engine and MySQL connector with all
#           their dependencies, `mvn dependency:copy-dependencies` of
#           crates/canyon-server/tests/java/debezium/pom.xml into
#           ~/.cache/canyon-tools/java/debezium (tests/debezium.rs)
#   Node    `npm ci` of crates/canyon-server/tests/node/package-lock.json into
#           ~/.cache/canyon-tools/node (tests/drivers_node.rs); Debian's nodejs and
#           npm are installed only when there is no node / npm at all
# The Rust toolchain is not installed here: rust-toolchain.toml pins it and rustup
# fetches it on first use. cargo-fuzz (scripts/fuzz.sh, the fuzz run of `make
# test`) is installed with `cargo +nightly install cargo-fuzz --locked` only where
# a nightly toolchain already is and cargo-fuzz is not (a no-op on later runs);
# without nightly the fuzz run is skipped and the stable corpus replay remains.
set -euo pipefail

packages=(clang libclang-dev sysbench mariadb-client mariadb-server mariadb-test mariadb-plugin-spider chromium openjdk-17-jdk-headless maven tzdata percona-toolkit prometheus-mysqld-exporter bpftrace binutils)

# The repository root, so the script works from any directory.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
driver_tests="$root/crates/canyon-server/tests"
tools="$HOME/.cache/canyon-tools"
sqlalchemy_version=2.0.44

missing=()
for p in "${packages[@]}"; do
  if ! dpkg -s "$p" >/dev/null 2>&1; then
    missing+=("$p")
  fi
done

install_python_drivers() {
  if ! python3 -c 'import pymysqlreplication' >/dev/null 2>&1; then
    # tests/binlog.rs streams Canyon's binary log with it (issue 25).
    echo "install-deps: installing mysql-replication 1.0.17 from PyPI"
    python3 -m pip install --quiet "mysql-replication==1.0.17"
  fi
  if ! python3 -c 'import pymysql, mysql.connector, pytest' >/dev/null 2>&1; then
    echo "install-deps: installing PyMySQL, mysql-connector-python and pytest from PyPI"
    python3 -m pip install --quiet PyMySQL mysql-connector-python pytest
  fi
  if ! python3 -c "import sqlalchemy, sys; sys.exit(sqlalchemy.__version__ != '$sqlalchemy_version')" >/dev/null 2>&1; then
    echo "install-deps: installing SQLAlchemy $sqlalchemy_version from PyPI"
    python3 -m pip install --quiet "SQLAlchemy==$sqlalchemy_version"
  fi
}

# go-sql-driver/mysql and its dependencies, as pinned by tests/go/go.sum, into Go's
# module cache; a no-op (no network) when they are there.
install_go_driver() {
  local go
  go=$(find_go) || { echo "install-deps: no Go >= 1.$go_min_minor for tests/go" >&2; exit 1; }
  (cd "$driver_tests/go" && GOFLAGS=-mod=readonly GOTOOLCHAIN=local "$go" mod download)
  (cd "$root/crates/canyon-binlog/tests/go-mysql" && GOFLAGS=-mod=readonly GOTOOLCHAIN=local "$go" mod download)
}

# The JDBC jars of tests/java/jars.txt, from Maven Central, each checked against
# the SHA-1 Maven Central publishes; a jar already there is kept.
install_java_drivers() {
  local dir="$tools/java" line group artifact version jar url sum
  mkdir -p "$dir"
  while read -r line; do
    line=${line%%#*}
    [ -n "${line// /}" ] || continue
    IFS=: read -r group artifact version <<<"$line"
    jar="$dir/$artifact-$version.jar"
    [ -f "$jar" ] && continue
    url="https://repo1.maven.org/maven2/${group//.//}/$artifact/$version/$artifact-$version.jar"
    echo "install-deps: downloading $artifact $version from Maven Central"
    curl -fsSL --retry 3 -o "$jar.tmp" "$url"
    sum=$(curl -fsSL --retry 3 "$url.sha1")
    if [ "$(sha1sum "$jar.tmp" | cut -d' ' -f1)" != "${sum%% *}" ]; then
      rm -f "$jar.tmp"
      echo "install-deps: $url does not match its published SHA-1" >&2
      exit 1
    fi
    mv "$jar.tmp" "$jar"
  done <"$driver_tests/java/jars.txt"
}

# Debezium for tests/debezium.rs: every jar tests/java/debezium/pom.xml resolves
# to (Maven checks each against its published checksum), copied into one
# directory, redone only when the pom changed (the copy of the pom next to the
# jars, written last, marks a finished install and is what tests/debezium.rs
# compares against).
install_debezium() {
  local dir="$tools/java/debezium" pom="$driver_tests/java/debezium/pom.xml"
  if cmp -s "$pom" "$dir/pom.xml"; then
    return 0
  fi
  echo "install-deps: resolving Debezium's jars (tests/java/debezium/pom.xml) into $dir"
  rm -rf "$dir"
  mkdir -p "$dir"
  if ! mvn -q -B -f "$pom" dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$dir"; then
    echo "install-deps: mvn dependency:copy-dependencies of $pom failed" >&2
    exit 1
  fi
  cp "$pom" "$dir/pom.xml.tmp"
  mv "$dir/pom.xml.tmp" "$dir/pom.xml"
}

# mysql2 for tests/node: `npm ci` from the committed lock file into the cache
# directory, redone only when the lock file changed (the copy next to the
# installed modules is what tests/drivers_node.rs compares against).
install_node_drivers() {
  local dir="$tools/node"
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "install-deps: installing Debian's nodejs and npm"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nodejs npm
  fi
  if cmp -s "$driver_tests/node/package-lock.json" "$dir/package-lock.json" \
    && [ -d "$dir/node_modules/mysql2" ]; then
    return 0
  fi
  echo "install-deps: npm ci of tests/node/package-lock.json into $dir"
  rm -rf "$dir"
  mkdir -p "$dir"
  cp "$driver_tests/node/package.json" "$dir/"
  # The lock file is copied last: it marks a finished install.
  cp "$driver_tests/node/package-lock.json" "$dir/package-lock.json.tmp"
  mv "$dir/package-lock.json.tmp" "$dir/package-lock.json"
  if ! (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error); then
    rm -f "$dir/package-lock.json"
    echo "install-deps: npm ci failed" >&2
    exit 1
  fi
}

# cargo-fuzz for scripts/fuzz.sh, when nightly is there and cargo-fuzz is not.
install_cargo_fuzz() {
  if cargo +nightly --version >/dev/null 2>&1 && ! cargo +nightly fuzz --help >/dev/null 2>&1; then
    echo "install-deps: installing cargo-fuzz (cargo +nightly install cargo-fuzz --locked)"
    cargo +nightly install cargo-fuzz --locked
  fi
}

install_client_drivers() {
  install_cargo_fuzz
  install_python_drivers
  install_go_tpc
  install_vitess
  install_go_driver
  install_java_drivers
  install_debezium
  install_node_drivers
}

# Runs a command as root: directly, or through sudo.
as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    echo "install-deps: need root (or sudo) to run: $*" >&2
    exit 1
  fi
}

go_tpc_version=v1.0.12
go_tpc="$HOME/.cache/canyon-tools/go-tpc"
go_min_minor=21 # go-tpc's go.mod says go 1.21

# Whether Go at $1 is at least 1.$go_min_minor.
go_new_enough() {
  local v
  v=$("$1" env GOVERSION 2>/dev/null) || return 1
  v=${v#go1.}
  v=${v%%[!0-9]*}
  [ -n "$v" ] && [ "$v" -ge "$go_min_minor" ]
}

# The first Go toolchain new enough for go-tpc: on PATH, in /usr/local/go, or a
# Debian golang-1.N-go.
find_go() {
  local g
  for g in "$(command -v go 2>/dev/null || true)" /usr/local/go/bin/go /usr/lib/go-1.*/bin/go; do
    if [ -n "$g" ] && [ -x "$g" ] && go_new_enough "$g"; then
      echo "$g"
      return 0
    fi
  done
  return 1
}

install_go_tpc() {
  if [ -x "$go_tpc" ]; then
    return 0
  fi
  local go
  if ! go=$(find_go); then
    # Debian 12's golang-go is Go 1.19, too old; a newer golang-1.N-go is offered
    # only where bookworm-backports (or a later release) is in the apt sources.
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    local pkg=golang-go newest minor
    newest=$(apt-cache pkgnames golang-1. | grep -E '^golang-1\.[0-9]+-go$' | sort -V | tail -n 1 || true)
    minor=${newest#golang-1.}
    minor=${minor%-go}
    if [ -n "$newest" ] && [ "$minor" -ge "$go_min_minor" ]; then
      pkg=$newest
    fi
    echo "install-deps: go-tpc needs Go >= 1.$go_min_minor; installing $pkg"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$pkg"
    if ! go=$(find_go); then
      echo "install-deps: go-tpc needs Go >= 1.$go_min_minor, and apt offers no Go that new" \
        "(Debian 12's golang-go is 1.19). Install Go >= 1.$go_min_minor into /usr/local/go" \
        "(or enable bookworm-backports for golang-1.22-go), or build go-tpc $go_tpc_version" \
        "elsewhere and set CANYON_GO_TPC to it; then run this script again." >&2
      exit 1
    fi
  fi
  echo "install-deps: building go-tpc $go_tpc_version with $("$go" version | awk '{print $3}') into $go_tpc"
  # `go install ...@version` is refused here (it reads go-tpc's version list for
  # deprecation notices, and the module proxy answers that with 403), so it is
  # built inside a throwaway module, which asks the proxy for the version only.
  local tmp
  tmp=$(mktemp -d)
  mkdir -p "$(dirname "$go_tpc")"
  if ! (cd "$tmp" \
    && "$go" mod init tmp \
    && "$go" get "github.com/pingcap/go-tpc/cmd/go-tpc@$go_tpc_version" \
    && "$go" build -o "$go_tpc.tmp" github.com/pingcap/go-tpc/cmd/go-tpc) >"$tmp.log" 2>&1; then
    cat "$tmp.log" >&2
    rm -rf "$tmp" "$tmp.log" "$go_tpc.tmp"
    echo "install-deps: building go-tpc failed" >&2
    exit 1
  fi
  rm -f "$tmp.log"
  rm -rf "$tmp"
  mv "$go_tpc.tmp" "$go_tpc"
}

# Vitess v0.24.4 (vtgate, vttablet, vtctld, vtctldclient) and etcd v3.7.3 for
# tests/vitess.rs: scripts/vitess.sh builds them from the Go module proxy into
# ~/.cache/canyon-tools/vitess-v0.24.4 (about 10 minutes cold on two cores, once).
# Vitess v0.24's go.mod asks for Go 1.26: the `go` on PATH or /usr/local/go.
install_vitess() {
  local bin="$tools/vitess-v0.24.4/bin" c
  for c in vtgate vttablet vtctld vtctldclient etcd; do
    [ -x "$bin/$c" ] || break
  done
  if [ -x "$bin/$c" ]; then
    return 0
  fi
  PATH="$PATH:/usr/local/go/bin" "$root/scripts/vitess.sh" build
}

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present (${packages[*]})"
  install_client_drivers
  exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "install-deps: missing ${missing[*]} and not root, and sudo is not installed" >&2
    exit 1
  fi
  sudo=(sudo)
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update

# mariadb-server's postinst starts a system MariaDB on port 3306, which `make run`
# needs for Canyon; the tests start their own mariadbd on spare ports. A temporary
# policy-rc.d (the Debian mechanism, see invoke-rc.d(8)) keeps services from being
# started by this install; it is removed again on exit unless one was there before.
policy=/usr/sbin/policy-rc.d
own_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee "$policy" >/dev/null
  "${sudo[@]}" chmod 755 "$policy"
  own_policy=1
fi
cleanup() { if [ "$own_policy" = 1 ]; then "${sudo[@]}" rm -f "$policy"; fi; }
trap cleanup EXIT

"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"

for cmd in clang sysbench mariadb mariadbd mariadb-install-db chromium javac mvn pt-query-digest; do
  if ! command -v "$cmd" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$cmd" ]; then
    echo "install-deps: $cmd is still missing after the install" >&2
    exit 1
  fi
done
install_client_drivers
echo "install-deps: done"
