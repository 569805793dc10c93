#!/usr/bin/env bash
# The binary log's cost (issue 25): one canyon binary run with the log off and
# with it on (`CANYON_LOG_BIN=1`: every write transaction's row events are one
# more put in its commit batch), alternating off/on so that drift on a shared
# machine hits both alike, through bench/ab_sysbench.sh (4 tables x 10,000
# rows, a fresh data directory per run). Prints one line per run; compare the
# per-second rates of the same workload and thread count. A benchmark, not a
# test: nothing asserts.
#
# Usage: bench/binlog_overhead.sh CANYON_BINARY [ROUNDS] [SECONDS]
# WORKLOADS and THREADS as for ab_sysbench.sh (default here: oltp_read_write,
# oltp_write_only and oltp_insert at 1 and 8 threads).
set -euo pipefail
bin=$(realpath "$1")
rounds=${2:-2} secs=${3:-15}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# The "new" side of the A/B is the same binary with the log on.
cat >"$dir/canyon-log-bin" <<WRAP
#!/bin/sh
CANYON_LOG_BIN=1 CANYON_SERVER_ID=1 exec "$bin" "\$@"
WRAP
chmod +x "$dir/canyon-log-bin"
WORKLOADS=${WORKLOADS:-oltp_read_write oltp_write_only oltp_insert} \
  "$(dirname "$0")/ab_sysbench.sh" "$bin" "$dir/canyon-log-bin" "$rounds" "$secs" |
  sed -e 's/^old /log_off /' -e 's/^new /log_on /'
