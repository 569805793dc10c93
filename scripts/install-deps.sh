#!/usr/bin/env bash
# Installs the Debian packages that building and testing Canyon need, and only
# those that are missing, so that running it again is cheap:
#   clang, libclang-dev   RocksDB's C++ build and its bindgen bindings
#   sysbench              the OLTP client the sysbench tests drive
#   mariadb-client        the `mariadb` CLI used by the differential tests
#   mariadb-server        MariaDB 10.11, the reference server of the differential tests
#   chromium              headless browser that opens `canyon bench`'s HTML report in a test
# and, from PyPI, the Python drivers tests/drivers_python.rs runs (PyMySQL,
# mysql-connector-python) with pytest, when python3 cannot import them.
# The Rust toolchain is not installed here: rust-toolchain.toml pins it and rustup
# fetches it on first use.
set -euo pipefail

packages=(clang libclang-dev sysbench mariadb-client mariadb-server chromium)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg -s "$p" >/dev/null 2>&1; then
    missing+=("$p")
  fi
done

install_python_drivers() {
  if ! python3 -c 'import pymysql, mysql.connector, pytest' >/dev/null 2>&1; then
    echo "install-deps: installing PyMySQL, mysql-connector-python and pytest from PyPI"
    python3 -m pip install --quiet PyMySQL mysql-connector-python pytest
  fi
}

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present (${packages[*]})"
  install_python_drivers
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

for cmd in clang sysbench mariadb mariadbd mariadb-install-db chromium; do
  if ! command -v "$cmd" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$cmd" ]; then
    echo "install-deps: $cmd is still missing after the install" >&2
    exit 1
  fi
done
install_python_drivers
echo "install-deps: done"
