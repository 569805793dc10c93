#!/usr/bin/env python3
"""What vtgate and vttablet add per query (issue 26's benchmark), over a Canyon
node and over a MariaDB node, alternating.

Starts one Canyon server (release binary) and one MariaDB 10.11 (the settings
of bench/objects_overhead.py), and Vitess over both with scripts/vitess.sh: an
unsharded keyspace per node (`canyon` and `mariadb`), one unmanaged vttablet
each, one vtgate. sysbench's table is prepared on each node directly. Then per
round, for each node, in an order that flips every round: sysbench
`oltp_point_select` (--threads, --time) straight to the node, and the same
through vtgate to that node's keyspace.

For each run it records queries per second, sysbench's 95th-percentile
latency, and the CPU time (user + system, /proc) the node, its vttablet and
vtgate spent, per query. The medians over the rounds go to section
`vitess-overhead` of docs/benchmarks.md with the machine described.

Usage: bench/vitess_overhead.py [--canyon PATH] [--rounds 3] [--time 20]
       [--threads 4] [--table-size 10000] [--work DIR] [--out FILE]

A benchmark, not a test: nothing here asserts a timing. On a machine with few
cores every process shares them with sysbench; read the ratios, not the
absolute numbers.
"""

from objects_overhead import start_canyon, start_mariadb
from report_section import write_section
from sysbench_compare import machine
import argparse
import os
import re
import shutil
import statistics
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PASSWORD = "pw"
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def sysbench(port, db, a, user="root", password=PASSWORD, cmd="run"):
    args = ["sysbench", "oltp_point_select", "--mysql-host=127.0.0.1", f"--mysql-port={port}",
            f"--mysql-user={user}", f"--mysql-db={db}", "--tables=1",
            f"--table-size={a.table_size}", "--db-ps-mode=disable", "--auto-inc=off",
            f"--threads={a.threads}", f"--time={a.time}", "--percentile=95"]
    if password:
        args.append(f"--mysql-password={password}")
    out = subprocess.run(args + [cmd], text=True, capture_output=True)
    if out.returncode != 0:
        raise RuntimeError(f"sysbench {cmd} on {port}: {out.stdout}{out.stderr}")
    return out.stdout


def stat(report, label, per_sec=False):
    line = next(l for l in report.splitlines() if l.strip().startswith(label))
    if per_sec:
        return float(re.search(r"\(([\d.]+) per sec", line).group(1))
    return float(line.split(label, 1)[1].split()[0])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--canyon", default=os.path.expanduser("~/.cache/canyon-target/release/canyon"))
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--time", type=int, default=20)
    p.add_argument("--threads", type=int, default=4)
    p.add_argument("--table-size", type=int, default=10000)
    p.add_argument("--work", default="/tmp/canyon-vitess-bench")
    p.add_argument("--base-port", type=int, default=16000)
    p.add_argument("--out", default=os.path.join(REPO, "docs", "benchmarks.md"))
    a = p.parse_args()

    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    os.chmod(a.work, 0o755)
    canyon = start_canyon(a.canyon, a.work, a.base_port + 100)
    mariadb = start_mariadb(a.work, a.base_port + 101)
    run = os.path.join(a.work, "vitess")
    script = os.path.join(REPO, "scripts", "vitess.sh")
    env = dict(os.environ, CANYON_VITESS_USER="root", CANYON_VITESS_PASSWORD=PASSWORD)
    nodes = {"Canyon": (canyon, "canyon", "vttablet-101"),
             "MariaDB": (mariadb, "mariadb", "vttablet-102")}
    try:
        for server, db, _ in nodes.values():
            server.feed(f"CREATE DATABASE IF NOT EXISTS {db}", db=None)
            sysbench(server.port, db, a, cmd="prepare")
        subprocess.run([script, "up", run, str(a.base_port), f"canyon:0:{canyon.port}",
                        f"mariadb:0:{mariadb.port}"], check=True, env=env,
                       stdout=subprocess.DEVNULL)
        pids = {}
        for name in ("vtgate", "vttablet-101", "vttablet-102"):
            with open(os.path.join(run, "pids", name)) as f:
                pids[name] = int(f.read())
        vtgate_port = a.base_port + 4
        # vtgate plans a query once its tablets' schema is tracked.
        sysbench(vtgate_port, "canyon", a, user="app", password="", cmd="run")
        sysbench(vtgate_port, "mariadb", a, user="app", password="", cmd="run")

        results = {(n, path): [] for n in nodes for path in ("direct", "vtgate")}
        for rnd in range(a.rounds):
            order = list(nodes) if rnd % 2 == 0 else list(reversed(nodes))
            for name in order:
                server, db, tablet = nodes[name]
                for path in ("direct", "vtgate") if rnd % 2 == 0 else ("vtgate", "direct"):
                    procs = {"node": server.proc.pid}
                    if path == "vtgate":
                        procs.update(vttablet=pids[tablet], vtgate=pids["vtgate"])
                    before = {k: cpu_seconds(v) for k, v in procs.items()}
                    if path == "direct":
                        report = sysbench(server.port, db, a)
                    else:
                        report = sysbench(vtgate_port, db, a, user="app", password="")
                    after = {k: cpu_seconds(v) for k, v in procs.items()}
                    queries = stat(report, "queries:")
                    r = {"qps": stat(report, "queries:", per_sec=True),
                         "p95_ms": stat(report, "95th percentile:"),
                         "errors": stat(report, "ignored errors:")}
                    for k in procs:
                        r[f"{k}_us"] = (after[k] - before[k]) / queries * 1e6
                    results[(name, path)].append(r)
                    print(name, path, rnd, {k: round(v, 2) for k, v in r.items()}, flush=True)
    finally:
        subprocess.run([script, "down", run], env=env, stdout=subprocess.DEVNULL)
        canyon.stop()
        mariadb.stop()

    def med(name, path, key):
        vals = [r.get(key, 0.0) for r in results[(name, path)]]
        return statistics.median(vals) if vals else 0.0

    lines = [
        "## vtgate's overhead per query over Canyon and MariaDB nodes (issue 26)",
        "",
        f"Machine: {machine()}. Vitess v0.24.4 (scripts/vitess.sh), one unsharded keyspace "
        "per node, one vttablet each, one vtgate; sysbench `oltp_point_select`, "
        f"{a.threads} threads, {a.time} s per run, {a.table_size} rows, medians of "
        f"{a.rounds} alternated rounds. CPU: user + system time of each process per query.",
        "",
        "| Node | Path | Queries/s | p95 ms | node CPU µs/q | vttablet µs/q | vtgate µs/q | total µs/q |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name in nodes:
        for path in ("direct", "vtgate"):
            parts = [med(name, path, k) for k in ("node_us", "vttablet_us", "vtgate_us")]
            lines.append(
                f"| {name} | {path} | {med(name, path, 'qps'):,.0f} | "
                f"{med(name, path, 'p95_ms'):.2f} | {parts[0]:.1f} | "
                + (f"{parts[1]:.1f} | {parts[2]:.1f} |" if path == "vtgate" else "- | - |")
                + f" {sum(parts):.1f} |")
    lines.append("")
    for name in nodes:
        d, v = med(name, "direct", "qps"), med(name, "vtgate", "qps")
        added = sum(med(name, "vtgate", k) for k in ("node_us", "vttablet_us", "vtgate_us")) \
            - med(name, "direct", "node_us")
        lines.append(f"- {name}: through vtgate {v / d:.2f}× the direct queries per second; "
                     f"Vitess adds {added:.0f} µs of CPU per query.")
    text = "\n".join(lines)
    print(text)
    write_section(a.out, "vitess-overhead", text, "bench/vitess_overhead.py")


if __name__ == "__main__":
    main()
