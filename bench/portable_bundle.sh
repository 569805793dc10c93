#!/usr/bin/env bash
# Packs what bench/many_core.sh and bench/tpcc_compare.py need into one tarball,
# for a many-core machine where nothing can be installed (no package registry):
# the canyon binary (stripped), Debian's MariaDB 10.11 server and client with
# their non-glibc libraries and share files, taskset, and go-tpc. The target
# needs an x86-64 Linux with glibc >= this machine's (Debian 12: 2.36).
#
# Usage: bench/portable_bundle.sh OUT.tgz
# On the target, as root (it copies MariaDB into /usr, as the package would):
#   B=/tmp/b; mkdir -p $B && tar -C $B -xzf OUT.tgz && cp -a $B/root/usr/. /usr/
#   export PATH=$B/wbin:$B/bin:$PATH
#   CANYON=$B/bin/canyon-w bench/many_core.sh OUT_DIR
#   python3 bench/tpcc_compare.py --canyon $B/bin/canyon-w --go-tpc $B/bin/go-tpc ...
# `canyon-w`, `mariadbd`, `mariadb` and `mariadb-install-db` in the bundle are
# wrappers that put the bundled libraries on LD_LIBRARY_PATH for those programs
# only, so the target's own programs keep the target's libraries.
set -euo pipefail
out=${1:?usage: bench/portable_bundle.sh OUT.tgz}
canyon=${CANYON:-${CARGO_TARGET_DIR:-$HOME/.cache/canyon-target}/release/canyon}
go_tpc=${CANYON_GO_TPC:-$HOME/.cache/canyon-tools/go-tpc}
b=$(mktemp -d)
trap 'rm -rf "$b"' EXIT
mkdir -p "$b/bin" "$b/wbin" "$b/lib" "$b/root/usr/sbin" "$b/root/usr/bin" "$b/root/usr/share"

strip -o "$b/bin/canyon" "$canyon"
cp "$(command -v taskset)" "$b/bin/"
[ -x "$go_tpc" ] && cp "$go_tpc" "$b/bin/go-tpc" || echo "no go-tpc at $go_tpc: TPC-C left out" >&2
mariadbd=$(command -v mariadbd || echo /usr/sbin/mariadbd)
cp "$mariadbd" "$b/root/usr/sbin/"
for p in mariadb mariadb-install-db my_print_defaults resolveip; do cp "$(command -v $p)" "$b/root/usr/bin/"; done
cp -a /usr/share/mysql "$b/root/usr/share/"
# Every shared library but glibc's own: the target's glibc serves all.
for f in "$mariadbd" "$(command -v mariadb)" "$(command -v resolveip)" "$canyon"; do ldd "$f"; done |
  awk '/=>/ {print $3}' | sort -u |
  grep -v -e '/libc\.so' -e '/libm\.so' -e 'ld-linux' -e '/libpthread' -e '/libdl\.' -e '/librt\.' |
  while read -r l; do cp -L "$l" "$b/lib/"; done

cat >"$b/bin/canyon-w" <<'EOF'
#!/bin/sh
B=$(dirname "$(readlink -f "$0")")/..
LD_LIBRARY_PATH=$B/lib exec "$B/bin/canyon" "$@"
EOF
for p in sbin/mariadbd bin/mariadb bin/mariadb-install-db; do
  cat >"$b/wbin/$(basename $p)" <<EOF
#!/bin/sh
B=\$(dirname "\$(readlink -f "\$0")")/..
LD_LIBRARY_PATH=\$B/lib exec /usr/$p "\$@"
EOF
done
chmod +x "$b/bin/canyon-w" "$b/wbin/"*
tar -C "$b" -czf "$out" .
ls -l "$out"
