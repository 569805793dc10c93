#!/usr/bin/env python3
"""What a trigger, a view and partitioning cost (issue 29's other benchmarks),
Canyon against MariaDB, alternating.

Starts a Canyon server (release binary) and a MariaDB 10.11 (the settings of
bench/sysbench_compare.py: innodb_flush_log_at_trx_commit=1, 1 GiB buffer
pool, no binary log) on the given ports, then per round, per server, in an
order that flips every round:

- trigger: sysbench-shaped rows `sbtest(id, k, c, pad)` inserted by --inserts
  one-row INSERTs inside one transaction (so the fsync does not hide the
  per-row cost), into a table without a trigger and into one with
  `AFTER INSERT ... INSERT INTO audit (...) VALUES (NEW.id, NEW.k, NOW())`;
- view: --selects point SELECTs by primary key, from the table and through
  `CREATE VIEW v AS SELECT id, k, c, pad FROM sbtest`;
- partitions: a table of --rows rows RANGE-partitioned on id into 12
  partitions, and the same table unpartitioned: --selects point SELECTs by
  id, and --ranges range SELECTs `WHERE id BETWEEN a AND a + 99` (both prune
  to one partition), and --ranges `COUNT(*) WHERE k BETWEEN ...` (no pruning:
  every partition is read). EXPLAIN of each query is printed, with the
  partitions it reads.

Every measure is the wall time of one mariadb client fed the statements on
stdin (round trips included, the same client for both servers). Prints the
rows and writes section `objects-overhead` of docs/benchmarks.md.

Usage: bench/objects_overhead.py [--canyon PATH] [--rounds 3] [--inserts 5000]
       [--selects 5000] [--ranges 500] [--rows 120000]
       [--canyon-port 3414] [--mariadb-port 3424] [--work DIR] [--out FILE]

A benchmark, not a test: nothing here asserts a timing.
"""

from report_section import write_section
from sysbench_compare import machine
import argparse
import os
import random
import shutil
import socket
import statistics
import subprocess
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PASSWORD = "pw"


def wait_port(port, proc, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server on {port} exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"server on {port} did not start listening")


class Server:
    def __init__(self, name, port, proc):
        self.name, self.port, self.proc = name, port, proc

    def client(self, db=None):
        c = ["mariadb", "--no-defaults", "-h127.0.0.1", f"-P{self.port}", "-uroot",
             f"-p{PASSWORD}", "-A", "--batch"]
        return c + ([db] if db else [])

    def feed(self, text, db="ob"):
        out = subprocess.run(self.client(db), input=text, text=True, capture_output=True)
        if out.returncode != 0:
            raise RuntimeError(f"{self.name}: {out.stderr.strip()}")
        return out.stdout

    def timed(self, text, db="ob"):
        start = time.monotonic()
        self.feed(text, db)
        return time.monotonic() - start

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=60)


def start_canyon(binary, work, port):
    d = os.path.join(work, "canyon")
    shutil.rmtree(d, ignore_errors=True)
    env = dict(os.environ, CANYON_ROOT_PASSWORD=PASSWORD, RUST_LOG="warn")
    proc = subprocess.Popen([binary, "serve", "--data-dir", d, "--port", str(port)], env=env,
                            stdout=subprocess.DEVNULL,
                            stderr=open(os.path.join(work, "canyon.log"), "w"))
    wait_port(port, proc)
    return Server("Canyon", port, proc)


def start_mariadb(work, port):
    d = os.path.join(work, "mariadb")
    sock = os.path.join(work, "mariadb.sock")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    subprocess.run(["mariadb-install-db", "--no-defaults", f"--datadir={d}", "--user=root",
                    "--auth-root-authentication-method=normal", "--skip-test-db"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    proc = subprocess.Popen(
        ["mariadbd", "--no-defaults", f"--datadir={d}", f"--port={port}", f"--socket={sock}",
         "--user=root", "--bind-address=127.0.0.1", "--innodb-flush-log-at-trx-commit=1",
         "--innodb-buffer-pool-size=1G", "--skip-log-bin", "--performance-schema=OFF"],
        stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "mariadb.log"), "w"))
    for _ in range(300):
        if os.path.exists(sock):
            break
        time.sleep(0.2)
    subprocess.run(["mariadb", "--no-defaults", "-S", sock, "-uroot", "-e",
                    f"CREATE USER IF NOT EXISTS root@'127.0.0.1'; "
                    f"ALTER USER root@'127.0.0.1' IDENTIFIED BY '{PASSWORD}'; "
                    f"GRANT ALL ON *.* TO root@'127.0.0.1'; "
                    f"ALTER USER root@localhost IDENTIFIED BY '{PASSWORD}'"], check=True)
    wait_port(port, proc)
    return Server("MariaDB", port, proc)


SB = ("(id INT NOT NULL PRIMARY KEY, k INT NOT NULL, c CHAR(120) NOT NULL, "
      "pad CHAR(60) NOT NULL, KEY k_1 (k))")
C, PAD = "x" * 120, "y" * 60


def rows_sql(table, lo, hi, rng):
    """INSERTs of ids lo..hi in multi-row statements of 1,000."""
    out = []
    for b in range(lo, hi + 1, 1000):
        top = min(b + 999, hi)
        out.append(f"INSERT INTO {table} VALUES " + ",".join(
            f"({i},{rng.randrange(1, hi + 1)},'{C}','{PAD}')" for i in range(b, top + 1)) + ";")
    return "\n".join(out)


def setup(server, a):
    rng = random.Random(7)
    server.feed("DROP DATABASE IF EXISTS ob; CREATE DATABASE ob;", db=None)
    parts = ",\n".join(f"PARTITION p{i} VALUES LESS THAN ({(i + 1) * (a.rows // 12) + 1})"
                       for i in range(11)) + ",\nPARTITION p11 VALUES LESS THAN MAXVALUE"
    server.feed(
        f"CREATE TABLE src {SB};\n"
        f"CREATE VIEW v AS SELECT id, k, c, pad FROM src;\n"
        f"CREATE TABLE part {SB} "
        f"PARTITION BY RANGE (id) ({parts});\n"
        f"CREATE TABLE flat {SB};\n"
        + rows_sql("src", 1, a.rows, rng) + "\n"
        "INSERT INTO part SELECT * FROM src;\nINSERT INTO flat SELECT * FROM src;\n")


def trigger_tables(server, with_trigger):
    server.feed(
        f"DROP TABLE IF EXISTS t; DROP TABLE IF EXISTS audit; CREATE TABLE t {SB}; "
        "CREATE TABLE audit (n INT AUTO_INCREMENT PRIMARY KEY, id INT, k INT, at DATETIME);"
        + ("CREATE TRIGGER t_ai AFTER INSERT ON t FOR EACH ROW "
           "INSERT INTO audit (id, k, at) VALUES (NEW.id, NEW.k, NOW());" if with_trigger else ""))


def workloads(a):
    rng = random.Random(11)
    inserts = "BEGIN;\n" + "\n".join(
        f"INSERT INTO t VALUES ({i},{rng.randrange(1, a.rows)},'{C}','{PAD}');"
        for i in range(1, a.inserts + 1)) + "\nCOMMIT;\n"
    ids = [rng.randrange(1, a.rows + 1) for _ in range(a.selects)]
    starts = [rng.randrange(1, a.rows - 100) for _ in range(a.ranges)]
    point = lambda tbl: "\n".join(f"SELECT c FROM {tbl} WHERE id = {i};" for i in ids)
    rng_q = lambda tbl: "\n".join(
        f"SELECT SUM(k) FROM {tbl} WHERE id BETWEEN {s} AND {s + 99};" for s in starts)
    k_q = lambda tbl: "\n".join(
        f"SELECT COUNT(*) FROM {tbl} WHERE k BETWEEN {s} AND {s + 99};" for s in starts)
    return {
        "insert, no trigger": ("plain", inserts),
        "insert, AFTER INSERT trigger": ("trigger", inserts),
        "point select, table": (None, point("src")),
        "point select, view": (None, point("v")),
        "point select, 12 partitions": (None, point("part")),
        "point select, unpartitioned": (None, point("flat")),
        "id range (100 rows), 12 partitions": (None, rng_q("part")),
        "id range (100 rows), unpartitioned": (None, rng_q("flat")),
        "k range (no pruning), 12 partitions": (None, k_q("part")),
        "k range (no pruning), unpartitioned": (None, k_q("flat")),
    }


def explains(server):
    out = []
    for q in ["SELECT c FROM part WHERE id = 5000",
              "SELECT SUM(k) FROM part WHERE id BETWEEN 5000 AND 5099",
              "SELECT COUNT(*) FROM part WHERE k BETWEEN 5000 AND 5099"]:
        text = server.feed(f"EXPLAIN PARTITIONS {q};" if server.name == "MariaDB"
                           else f"EXPLAIN {q};")
        head, *body = text.strip().split("\n")
        cols = head.split("\t")
        for line in body:
            row = dict(zip(cols, line.split("\t")))
            out.append(f"{server.name}: `{q}` → partitions `{row.get('partitions')}`, "
                       f"type `{row.get('type')}`, key `{row.get('key')}`")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--canyon", default=os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/canyon-target")),
        "release", "canyon"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--inserts", type=int, default=5000)
    ap.add_argument("--selects", type=int, default=5000)
    ap.add_argument("--ranges", type=int, default=500)
    ap.add_argument("--rows", type=int, default=120000)
    ap.add_argument("--canyon-port", type=int, default=3414)
    ap.add_argument("--mariadb-port", type=int, default=3424)
    ap.add_argument("--work", default="/tmp/objects-overhead")
    ap.add_argument("--out", default=os.path.join(REPO, "docs", "benchmarks.md"))
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)

    servers = [start_canyon(a.canyon, a.work, a.canyon_port),
               start_mariadb(a.work, a.mariadb_port)]
    times = {}
    notes = []
    try:
        for s in servers:
            setup(s, a)
            notes += explains(s)
        loads = []
        work = workloads(a)
        for r in range(a.rounds):
            order = servers if r % 2 == 0 else servers[::-1]
            for s in order:
                for name, (tables, text) in work.items():
                    if tables is not None:
                        trigger_tables(s, tables == "trigger")
                    t = s.timed(text)
                    times.setdefault((name, s.name), []).append(t)
                    print(f"round {r + 1} {s.name:7} {name:38} {t:7.3f} s", flush=True)
            with open("/proc/loadavg") as f:
                loads.append(" ".join(f.read().split()[:3]))
    finally:
        for s in servers:
            s.stop()

    med = {k: statistics.median(v) for k, v in times.items()}
    lines = ["## Triggers, views, partition pruning: Canyon vs MariaDB "
             "(bench/objects_overhead.py, issue 29)", "",
             f"Machine: {machine()}. Load average after each round: {'; '.join(loads)}.", "",
             f"{a.rounds} rounds, Canyon and MariaDB alternating (order flipped every round); "
             f"each cell is the median wall time of one mariadb client fed the statements "
             f"(round trips included). Inserts: {a.inserts:,} one-row INSERTs of sysbench-"
             f"shaped rows in one transaction; point selects: {a.selects:,} by primary key; "
             f"ranges: {a.ranges:,} queries over a {a.rows:,}-row table "
             f"(12 RANGE partitions on id vs unpartitioned).", "",
             "| measure | Canyon (s) | MariaDB (s) | Canyon / MariaDB |",
             "|---|---:|---:|---:|"]
    for name in work:
        c, m = med[(name, "Canyon")], med[(name, "MariaDB")]
        lines.append(f"| {name} | {c:.3f} | {m:.3f} | {c / m:.2f} |")
    lines += ["", "Within each server:", "",
              "| ratio | Canyon | MariaDB |", "|---|---:|---:|"]
    pairs = [("trigger / no trigger", "insert, AFTER INSERT trigger", "insert, no trigger"),
             ("view / table", "point select, view", "point select, table"),
             ("partitioned / flat, point", "point select, 12 partitions",
              "point select, unpartitioned"),
             ("partitioned / flat, id range", "id range (100 rows), 12 partitions",
              "id range (100 rows), unpartitioned"),
             ("partitioned / flat, k range", "k range (no pruning), 12 partitions",
              "k range (no pruning), unpartitioned")]
    for label, x, y in pairs:
        lines.append(f"| {label} | {med[(x, 'Canyon')] / med[(y, 'Canyon')]:.2f} | "
                     f"{med[(x, 'MariaDB')] / med[(y, 'MariaDB')]:.2f} |")
    lines += ["", "Each measure is a second or less: on a shared machine (a load average "
              "above the CPU count) differences below about 2x between two cells are within "
              "the run-to-run noise; rerun with larger --inserts / --selects / --ranges on a "
              "quiet machine before drawing a conclusion from them.",
              "", "EXPLAIN (the partitions each query reads):", ""]
    lines += [f"- {n}" for n in notes]
    write_section(a.out, "objects-overhead", "\n".join(lines), "bench/objects_overhead.py")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
