#!/usr/bin/env python3
"""What a window-function report costs (issue 30 item 4), Canyon against
MariaDB, alternating.

Starts a Canyon server and a MariaDB 10.11 (the settings of
bench/objects_overhead.py, whose helpers this reuses) on the given ports,
loads a sysbench-shaped table `sbtest(id, k, c, pad)` of --rows rows, then per
round, per server, in an order that flips every round, times one mariadb
client fed:

- report: --reports queries `ROW_NUMBER() OVER (PARTITION BY k % 100 ORDER
  BY id)` and `k - LAG(k) OVER (...)` over a 1,000-row id range, ORDER BY id;
- top 3 per group: --reports queries keeping `ROW_NUMBER() <= 3` per
  `k % 10` of a 1,000-row id range (a derived table over the window);
- running total: one `SUM(k) OVER (ORDER BY id)` over the whole table
  (the O(n) running frame), counted and summed outside;
- moving average: one `AVG(k) OVER (ORDER BY id ROWS 10 PRECEDING)` over the
  whole table (a sliding frame, recomputed per row);
- recursive series: --reports `WITH RECURSIVE` series of 1,000 numbers.

Before timing, each query's result is compared between the two servers (a
mismatch stops the run). Prints the rows; writes section `window-report` of
docs/benchmarks.md only when the Canyon binary is a release build (a debug
build's numbers say nothing about Canyon's speed) or --out is given.

Usage: bench/window_report.py [--canyon PATH] [--rounds 3] [--reports 200]
       [--rows 100000] [--canyon-port 3415] [--mariadb-port 3425]
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
    server.feed("DROP DATABASE IF EXISTS ob; CREATE DATABASE ob;", db=None)
    server.feed(f"CREATE TABLE sbtest {SB};\n" + rows_sql("sbtest", 1, a.rows, random.Random(7)))


def queries(a):
    rng = random.Random(13)
    starts = [rng.randrange(1, a.rows - 1000) for _ in range(a.reports)]
    report = lambda s: (
        f"SELECT id, k, ROW_NUMBER() OVER w AS rn, k - LAG(k) OVER w AS dk FROM sbtest "
        f"WHERE id BETWEEN {s} AND {s + 999} WINDOW w AS (PARTITION BY k % 100 ORDER BY id) "
        f"ORDER BY id;")
    top = lambda s: (
        f"SELECT g, id, k FROM (SELECT k % 10 AS g, id, k, ROW_NUMBER() OVER "
        f"(PARTITION BY k % 10 ORDER BY k DESC, id) AS rn FROM sbtest "
        f"WHERE id BETWEEN {s} AND {s + 999}) x WHERE rn <= 3 ORDER BY g, rn;")
    series = ("WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 1000) "
              "SELECT SUM(n) FROM c;")
    return {
        "report (ROW_NUMBER, LAG), 1,000 rows": "\n".join(report(s) for s in starts),
        "top 3 per group, 1,000 rows": "\n".join(top(s) for s in starts),
        f"running SUM over {a.rows:,} rows": (
            "SELECT COUNT(*), SUM(s) FROM (SELECT SUM(k) OVER (ORDER BY id) AS s "
            "FROM sbtest) x;"),
        f"moving AVG (ROWS 10 PRECEDING) over {a.rows:,} rows": (
            "SELECT COUNT(*), ROUND(SUM(m), 2) FROM (SELECT AVG(k) OVER (ORDER BY id ROWS 10 "
            "PRECEDING) AS m FROM sbtest) x;"),
        "recursive series of 1,000": "\n".join(series for _ in starts),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--canyon", default=os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/canyon-target")),
        "release", "canyon"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reports", type=int, default=200)
    ap.add_argument("--rows", type=int, default=100000)
    ap.add_argument("--canyon-port", type=int, default=3415)
    ap.add_argument("--mariadb-port", type=int, default=3425)
    ap.add_argument("--work", default="/tmp/window-report")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    release = os.sep + "release" + os.sep in os.path.abspath(a.canyon)
    out = a.out or (os.path.join(REPO, "docs", "benchmarks.md") if release else None)

    servers = [start_canyon(a.canyon, a.work, a.canyon_port),
               start_mariadb(a.work, a.mariadb_port)]
    times = {}
    loads = []
    work = queries(a)
    try:
        for s in servers:
            setup(s, a)
        # The same answers first (the first statement of each workload).
        for name, text in work.items():
            first = text.split("\n")[0]
            got = [s.feed(first) for s in servers]
            if got[0] != got[1]:
                raise RuntimeError(f"{name}: results differ\n{got[0][:400]}\n{got[1][:400]}")
        for r in range(a.rounds):
            order = servers if r % 2 == 0 else servers[::-1]
            for s in order:
                for name, text in work.items():
                    t = s.timed(text)
                    times.setdefault((name, s.name), []).append(t)
                    print(f"round {r + 1} {s.name:7} {name:44} {t:7.3f} s", flush=True)
            with open("/proc/loadavg") as f:
                loads.append(" ".join(f.read().split()[:3]))
    finally:
        for s in servers:
            s.stop()

    med = {k: statistics.median(v) for k, v in times.items()}
    build = "release" if release else "NOT a release build (debug numbers: do not compare)"
    lines = ["## Window functions and WITH RECURSIVE: Canyon vs MariaDB "
             "(bench/window_report.py, issue 30)", "",
             f"Machine: {machine()}. Canyon binary: {build}. "
             f"Load average after each round: {'; '.join(loads)}.", "",
             f"{a.rounds} rounds, alternating (order flipped every round); each cell is the "
             f"median wall time of one mariadb client fed the statements (round trips "
             f"included): {a.reports:,} reports / top-N queries / series, one full-table "
             f"query each for the running sum and the moving average, over a "
             f"{a.rows:,}-row sysbench-shaped table.", "",
             "| measure | Canyon (s) | MariaDB (s) | Canyon / MariaDB |",
             "|---|---:|---:|---:|"]
    for name in work:
        c, m = med[(name, "Canyon")], med[(name, "MariaDB")]
        lines.append(f"| {name} | {c:.3f} | {m:.3f} | {c / m:.2f} |")
    text = "\n".join(lines)
    if out:
        write_section(out, "window-report", text, "bench/window_report.py")
    print(text)


if __name__ == "__main__":
    main()
