#!/usr/bin/env python3
"""What the largest statements cost the server and everyone else: for each
shape and size, one client sends one statement while an idle client on another
connection (in another process, so the sender's GIL-held encoding does not
count) runs `SELECT 1` every 10 ms.

Shapes (each filled to the size asked):
  whitespace  `SELECT <spaces> 1`
  in_list     `SELECT 1 IN (1,1,1,...)`
  plus_chain  `SELECT 1+1+1...`
  union_all   `SELECT 1 UNION ALL SELECT 1 ...`
  insert      `INSERT INTO t VALUES (n,'abcdefgh',4.5,NULL),...` (then deleted)

For each it reports the statement's outcome (OK or the error number) and wall
time, the idle client's worst and 99th-percentile `SELECT 1` latency while the
statement ran, and the server's peak RSS above its level before the statement
(VmRSS sampled every 5 ms), as a multiple of the statement's size. Canyon and
MariaDB 10.11 run alternately, each with max_allowed_packet = 64 MiB, and write
section `hostile-statements` of docs/benchmarks.md with the machine described.

Usage: bench/hostile_statements.py [--sizes 1,4,16] [--rounds 1]
       [--shapes whitespace,in_list,...] [--servers canyon,mariadb]
       [--section hostile-statements] [--canyon PATH] [--out docs/benchmarks.md]

This is a benchmark, not a test: nothing here asserts a timing.
"""

from report_section import write_section
from sysbench_compare import Canyon, MariaDB, machine
import argparse
import multiprocessing
import os
import statistics
import tempfile
import threading
import time

import pymysql

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MIB = 1 << 20


def build(shape, size):
    """A statement of `shape`, about `size` bytes long."""
    if shape == "whitespace":
        return "SELECT" + " " * (size - 8) + "1"
    if shape == "in_list":
        return "SELECT 1 IN (" + ",".join(["1"] * (size // 2)) + ")"
    if shape == "plus_chain":
        return "SELECT " + "+".join(["1"] * (size // 2))
    if shape == "union_all":
        return " UNION ALL ".join(["SELECT 1"] * (size // 19))
    if shape == "insert":
        row = "(%d,'abcdefgh',4.5,NULL)"
        n = size // 28
        return "INSERT INTO hostile.t VALUES " + ",".join(row % i for i in range(n))
    raise ValueError(shape)


SHAPES = ["whitespace", "in_list", "plus_chain", "union_all", "insert"]


def connect(server):
    return pymysql.connect(host="127.0.0.1", port=server.port, user=server.user,
                           password=server.password, max_allowed_packet=256 * MIB,
                           autocommit=True, read_timeout=600, write_timeout=600)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1])
    return 0


def ping(server, ready, done, out):
    """The idle client, in its own process: pymysql holds the GIL while it
    encodes and frames the sender's statement (tens of ms at 64 MiB), which a
    thread of the sender's process would count as server latency."""
    idle = connect(server)
    cur = idle.cursor()
    lat = []
    ready.set()
    while not done.is_set():
        t = time.monotonic()
        cur.execute("SELECT 1")
        cur.fetchall()
        lat.append(time.monotonic() - t)
        time.sleep(0.01)
    idle.close()
    out.send(lat)


def one(server, shape, size):
    sql = build(shape, size)
    sender = connect(server)
    pid = server.proc.pid
    base = rss_kib(pid)
    peak = [base]
    done = threading.Event()
    ctx = multiprocessing.get_context("fork")
    ping_ready, ping_done = ctx.Event(), ctx.Event()
    lat_recv, lat_send = ctx.Pipe(duplex=False)
    pinger = ctx.Process(target=ping, args=(server, ping_ready, ping_done, lat_send))
    pinger.start()
    ping_ready.wait()

    def watch():
        while not done.is_set():
            peak[0] = max(peak[0], rss_kib(pid))
            time.sleep(0.005)

    watcher = threading.Thread(target=watch)
    watcher.start()
    time.sleep(0.05)
    start = time.monotonic()
    try:
        cur = sender.cursor()
        cur.execute(sql)
        cur.fetchall()
        outcome = "OK"
    except pymysql.MySQLError as e:
        outcome = str(e.args[0]) if e.args else "error"
    wall = time.monotonic() - start
    time.sleep(0.05)
    done.set()
    ping_done.set()
    watcher.join()
    lat = lat_recv.recv()
    pinger.join()
    if shape == "insert" and outcome == "OK":
        sender.cursor().execute("DELETE FROM hostile.t")
    sender.close()
    lat.sort()
    p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))] if lat else float("nan")
    alive = server.proc.poll() is None
    return {
        "outcome": outcome if alive else "server died",
        "wall_s": wall,
        "max_ms": (max(lat) if lat else float("nan")) * 1e3,
        "p99_ms": p99 * 1e3,
        "rss_mib": (peak[0] - base) / 1024,
        "rss_x": (peak[0] - base) * 1024 / len(sql),
    }


def prepare(server):
    c = connect(server)
    cur = c.cursor()
    cur.execute("CREATE DATABASE IF NOT EXISTS hostile")
    cur.execute("CREATE TABLE IF NOT EXISTS hostile.t "
                "(a INT PRIMARY KEY, b VARCHAR(20), c DECIMAL(4,1), d INT)")
    try:
        cur.execute("SET GLOBAL max_allowed_packet = 67108864")
    except pymysql.MySQLError:
        pass  # Canyon: set in its configuration (64 MiB by default)
    c.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1,4,16")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--servers", default="canyon,mariadb")
    ap.add_argument("--section", default="hostile-statements")
    ap.add_argument("--canyon", default=os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/canyon-target")),
        "release", "canyon"))
    ap.add_argument("--out", default=os.path.join(REPO, "docs", "benchmarks.md"))
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    shapes = args.shapes.split(",")
    names = args.servers.split(",")
    work = tempfile.mkdtemp(prefix="hostile-")
    results = {}
    servers = []
    if "canyon" in names:
        servers.append(Canyon(args.canyon, work))
    if "mariadb" in names:
        servers.append(MariaDB(work))
    try:
        for server in servers:
            prepare(server)
        for r in range(args.rounds):
            for shape in shapes:
                for size in sizes:
                    order = servers if r % 2 == 0 else servers[::-1]
                    for server in order:
                        if server.proc.poll() is not None:
                            continue
                        res = one(server, shape, size * MIB)
                        print(server.name, shape, size, res, flush=True)
                        results.setdefault((server.name, shape, size), []).append(res)
    finally:
        for server in servers:
            server.stop()

    title = ("Hostile statements: one client's largest statements, everyone else's latency"
             if args.section == "hostile-statements"
             else f"Hostile statements ({args.sizes} MiB; {args.servers})")
    lines = [
        f"## {title}",
        "",
        f"Machine: {machine()}.",
        f"`bench/hostile_statements.py --sizes {args.sizes} --rounds {args.rounds} "
        f"--shapes {args.shapes} --servers {args.servers}`: one "
        "client sends one statement of each shape and size while an idle client on another "
        "connection (its own process) runs `SELECT 1` every 10 ms; both servers with max_allowed_packet = "
        "64 MiB. *idle max / p99*: that client's worst and 99th-percentile latency while "
        "the statement ran; *RSS*: the server's peak resident memory above its level "
        "before the statement, in MiB and as a multiple of the statement's bytes. "
        "Outcome: OK or the MySQL error number (1037 out of memory, 1064 syntax / nesting, "
        "1436 stack overrun, 1153 packet too large). Medians over rounds.",
        "",
        "| shape | MiB | server | outcome | wall s | idle max ms | idle p99 ms | RSS MiB | RSS / size |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for shape in shapes:
        for size in sizes:
            for name in [s.name for s in servers]:
                rs = results.get((name, shape, size))
                if not rs:
                    lines.append(f"| {shape} | {size} | {name} | not run (server gone) | | | | | |")
                    continue
                med = lambda k: statistics.median(x[k] for x in rs)
                outcome = "/".join(sorted({x["outcome"] for x in rs}))
                lines.append(
                    f"| {shape} | {size} | {name} | {outcome} | {med('wall_s'):.2f} | "
                    f"{med('max_ms'):.1f} | {med('p99_ms'):.1f} | {med('rss_mib'):.0f} | "
                    f"{med('rss_x'):.1f} |")
    write_section(args.out, args.section, "\n".join(lines) + "\n",
                  "bench/hostile_statements.py")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
