#!/usr/bin/env python3
"""What a multi-table UPDATE / DELETE costs (issue 30), Canyon against MariaDB,
alternating.

Starts a Canyon server (release binary) and a MariaDB 10.11 with the settings
of bench/objects_overhead.py (whose start-up helpers this reuses), loads two
sysbench-shaped tables `sbtest1(id, k, c, pad)` and `sbtest2` of --rows rows
each, then per round, per server, in an order that flips every round:

- join update: --updates statements
  `UPDATE sbtest1 a JOIN sbtest2 b ON b.id = a.id SET a.k = b.k + 1
   WHERE a.id BETWEEN x AND x + 9` (ten target rows each, in autocommit);
- comma update: the same rows with `UPDATE sbtest1 a, sbtest2 b SET a.k = b.k,
  b.k = a.k + 1 WHERE a.id = b.id AND a.id BETWEEN x AND x + 9` (both tables
  written);
- single-table update of the same rows (`UPDATE sbtest1 SET k = k + 1 WHERE
  id BETWEEN x AND x + 9`), the baseline the multi-table forms are read
  against;
- delete + reinsert: `DELETE a FROM sbtest1 a JOIN sbtest2 b ON b.id = a.id
  WHERE a.id = x` followed by `INSERT INTO sbtest1 SELECT * FROM sbtest2 WHERE
  id = x` (--updates pairs; the table keeps its size).

Every measure is the wall time of one mariadb client fed the statements on
stdin (round trips included, the same client for both servers). Prints the
rows; with --out (docs/benchmarks.md from a release build only) writes
section `multi-update` there.

Usage: bench/multi_update.py [--canyon PATH] [--rounds 3] [--updates 2000]
       [--rows 100000] [--canyon-port 3434] [--mariadb-port 3444]
       [--work DIR] [--out FILE]

A benchmark, not a test: nothing here asserts a timing.
"""

from objects_overhead import SB, rows_sql, start_canyon, start_mariadb
from report_section import write_section
from sysbench_compare import machine
import argparse
import os
import random
import statistics

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def setup(server, a):
    rng = random.Random(7)
    server.feed("DROP DATABASE IF EXISTS ob; CREATE DATABASE ob;", db=None)
    server.feed(f"CREATE TABLE sbtest1 {SB};\nCREATE TABLE sbtest2 {SB};\n"
                + rows_sql("sbtest1", 1, a.rows, rng) + "\n"
                "INSERT INTO sbtest2 SELECT * FROM sbtest1;\n")


def workloads(a):
    rng = random.Random(11)
    starts = [rng.randrange(1, a.rows - 10) for _ in range(a.updates)]
    join = "\n".join(f"UPDATE sbtest1 a JOIN sbtest2 b ON b.id = a.id SET a.k = b.k + 1 "
                     f"WHERE a.id BETWEEN {x} AND {x + 9};" for x in starts)
    comma = "\n".join(f"UPDATE sbtest1 a, sbtest2 b SET a.k = b.k, b.k = a.k + 1 "
                      f"WHERE a.id = b.id AND a.id BETWEEN {x} AND {x + 9};" for x in starts)
    single = "\n".join(f"UPDATE sbtest1 SET k = k + 1 WHERE id BETWEEN {x} AND {x + 9};"
                       for x in starts)
    delete = "\n".join(f"DELETE a FROM sbtest1 a JOIN sbtest2 b ON b.id = a.id WHERE a.id = {x};\n"
                       f"INSERT INTO sbtest1 SELECT * FROM sbtest2 WHERE id = {x};"
                       for x in starts)
    return {
        "single-table UPDATE (10 rows)": single,
        "UPDATE ... JOIN (10 rows)": join,
        "UPDATE t1, t2 (10 + 10 rows)": comma,
        "multi-table DELETE + INSERT ... SELECT": delete,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--canyon", default=os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/canyon-target")),
        "release", "canyon"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--updates", type=int, default=2000)
    ap.add_argument("--rows", type=int, default=100000)
    ap.add_argument("--canyon-port", type=int, default=3434)
    ap.add_argument("--mariadb-port", type=int, default=3444)
    ap.add_argument("--work", default="/tmp/multi-update")
    ap.add_argument("--out", default=None,
                    help="write section multi-update of this file (docs/benchmarks.md; "
                         "release builds only)")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)

    servers = [start_canyon(a.canyon, a.work, a.canyon_port),
               start_mariadb(a.work, a.mariadb_port)]
    times = {}
    loads = []
    work = workloads(a)
    try:
        for s in servers:
            setup(s, a)
        for r in range(a.rounds):
            order = servers if r % 2 == 0 else servers[::-1]
            for s in order:
                for name, text in work.items():
                    t = s.timed(text)
                    times.setdefault((name, s.name), []).append(t)
                    print(f"round {r + 1} {s.name:7} {name:40} {t:7.3f} s", flush=True)
            with open("/proc/loadavg") as f:
                loads.append(" ".join(f.read().split()[:3]))
    finally:
        for s in servers:
            s.stop()

    med = {k: statistics.median(v) for k, v in times.items()}
    lines = ["## Multi-table UPDATE / DELETE: Canyon vs MariaDB (bench/multi_update.py, issue 30)",
             "", f"Machine: {machine()}. Load average after each round: {'; '.join(loads)}.", "",
             f"{a.rounds} rounds, Canyon and MariaDB alternating (order flipped every round); "
             f"each cell is the median wall time of one mariadb client fed {a.updates:,} "
             f"statements (round trips included) over two sysbench-shaped tables of "
             f"{a.rows:,} rows.", "",
             "| measure | Canyon (s) | MariaDB (s) | Canyon / MariaDB |",
             "|---|---:|---:|---:|"]
    for name in work:
        c, m = med[(name, "Canyon")], med[(name, "MariaDB")]
        lines.append(f"| {name} | {c:.3f} | {m:.3f} | {c / m:.2f} |")
    if a.out:
        write_section(a.out, "multi-update", "\n".join(lines), "bench/multi_update.py")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
