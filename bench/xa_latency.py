#!/usr/bin/env python3
"""What XA costs a transaction: the latency of one small write transaction
committed plainly against the same transaction as an XA branch committed in
two phases, on Canyon and on MariaDB 10.11 (issue 24's benchmark: "XA
PREPARE+COMMIT latency vs a plain commit; goal: one extra group-committed
sync").

One client (PyMySQL), one row updated per transaction, alternating blocks of
--block transactions of each kind (plain, xa) so that drift on a shared
machine hits both alike:

- plain: BEGIN; UPDATE; COMMIT                          (one WAL sync)
- xa:    XA START; UPDATE; XA END; XA PREPARE; XA COMMIT (PREPARE's sync, then COMMIT's)

Reports the median and p99 latency of each and the xa/plain ratio of the
medians, and writes section `xa-latency` of docs/benchmarks.md with the
machine described. A benchmark, not a test: nothing asserts a timing.

Usage: bench/xa_latency.py [--txns 2000] [--block 200] [--canyon PATH]
       [--out docs/benchmarks.md]
"""

from report_section import write_section
from sysbench_compare import Canyon, MariaDB, machine
import argparse
import os
import statistics
import tempfile
import time

import pymysql

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def measure(server, txns, block):
    """Latencies in microseconds of `txns` transactions of each kind."""
    conn = pymysql.connect(host="127.0.0.1", port=server.port, user=server.user,
                           password=server.password, database="sbtest", autocommit=True)
    cur = conn.cursor()
    cur.execute("DROP TABLE IF EXISTS xa_bench")
    cur.execute("CREATE TABLE xa_bench (id INT PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB")
    cur.execute("INSERT INTO xa_bench VALUES " + ", ".join(f"({i}, 0)" for i in range(100)))
    lat = {"plain": [], "xa": []}
    n = 0
    while len(lat["xa"]) < txns:
        for kind in ("plain", "xa"):
            for _ in range(block):
                n += 1
                row = n % 100
                t0 = time.perf_counter()
                if kind == "plain":
                    cur.execute("BEGIN")
                    cur.execute(f"UPDATE xa_bench SET v = v + 1 WHERE id = {row}")
                    cur.execute("COMMIT")
                else:
                    xid = f"'bench{n}'"
                    cur.execute(f"XA START {xid}")
                    cur.execute(f"UPDATE xa_bench SET v = v + 1 WHERE id = {row}")
                    cur.execute(f"XA END {xid}")
                    cur.execute(f"XA PREPARE {xid}")
                    cur.execute(f"XA COMMIT {xid}")
                lat[kind].append((time.perf_counter() - t0) * 1e6)
    conn.close()
    return lat


def p99(xs):
    return sorted(xs)[int(len(xs) * 0.99) - 1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--txns", type=int, default=2000)
    ap.add_argument("--block", type=int, default=200)
    ap.add_argument("--canyon", default=os.path.expanduser(
        "~/.cache/canyon-target/release/canyon"))
    ap.add_argument("--out", default=os.path.join(REPO, "docs", "benchmarks.md"))
    args = ap.parse_args()
    rows = []
    for make in (lambda d: Canyon(args.canyon, d), MariaDB):
        with tempfile.TemporaryDirectory() as d:
            server = make(d)
            try:
                lat = measure(server, args.txns, args.block)
            finally:
                server.stop()
        med = {k: statistics.median(v) for k, v in lat.items()}
        rows.append(f"| {server.name} | {med['plain']:,.0f} | {p99(lat['plain']):,.0f} | "
                    f"{med['xa']:,.0f} | {p99(lat['xa']):,.0f} | {med['xa'] / med['plain']:.2f} |")
        print(rows[-1], flush=True)
    text = f"""## XA: two-phase commit against a plain commit (bench/xa_latency.py, issue 24, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})

Machine: {machine()}.

One client, one row updated per transaction, {args.txns} transactions of each
kind in alternating blocks of {args.block}; durable commits on both servers
(Canyon's default, MariaDB with `innodb_flush_log_at_trx_commit=1` and no
binary log). Latency in microseconds, measured at the client:

| server | plain median | plain p99 | XA median | XA p99 | XA / plain (median) |
|---|---|---|---|---|---|
{chr(10).join(rows)}

A plain commit waits for one WAL sync; an XA branch waits for two, PREPARE's
(the write set and locks made durable, `txn/xa/<xid>`) and COMMIT's, and
makes two more round trips (XA END, XA PREPARE). The goal was "one extra
group-committed sync": a ratio near 2 says that is what it costs.
"""
    write_section(args.out, "xa-latency", text, "bench/xa_latency.py")


if __name__ == "__main__":
    main()
