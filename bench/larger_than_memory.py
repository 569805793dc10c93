#!/usr/bin/env python3
"""Data far larger than memory (issue 28): Canyon and MariaDB, each confined
to a memory cgroup, on a sysbench data set several times that size.

What is measured, per server and round:
- the load, its wall time and the data directory's size afterwards (`du -sb`),
  by the fastest path each server offers (--load infile, the default): the
  rows sysbench's prepare would make (id 1..N, k uniform in 1..N, c and pad
  random digit groups; generated once into tab-separated files under the work
  directory, not timed) loaded with `LOAD DATA LOCAL INFILE`, --load-clients
  tables at a time. Canyon creates each table with its secondary index `k_i`
  and loads into it: a load into an empty table takes its bulk path, sorted
  files ingested into RocksDB (crates/canyon-sql/src/session/load.rs).
  MariaDB loads the table with its primary key only, then `CREATE INDEX`
  (InnoDB builds a new index by a merge sort, not row by row). --load
  sysbench instead runs `sysbench oltp_read_write prepare`, one thread per
  table, on both (autocommitted INSERTs of a few thousand rows, then CREATE
  INDEX);
- then each workload for --time seconds at --threads clients:
  `oltp_point_select` with uniform and with pareto keys, `oltp_read_only` and
  `oltp_read_write` (uniform keys), sysbench reporting every
  --report-interval seconds. Per workload: mean tps, the median and the
  maximum of the interval p99 latencies, and max / median — the issue's "no
  stalls" criterion is max ≤ 3 × median, an interval in which no transaction
  finished counting as a p99 of the whole interval; and the disk bytes the
  server read and wrote per transaction (/proc/PID/io `read_bytes` and
  `write_bytes`, the block-layer traffic, so a page-cache hit reads nothing);
- the memory group's `memory.max_usage_in_bytes` and `memory.failcnt` (the
  times usage hit the limit and the kernel had to reclaim), during the load
  (server start included) and during each workload, and whether the kernel's
  OOM killer ended the server (`oom_kill` of `memory.oom_control`, or an exit
  by SIGKILL, which nothing else sends). An OOM kill is a result — "OOM-killed
  after N s" — and that server's remaining workloads of the round are not run.

Why a cgroup: the limit must cover what the server really uses — its heap,
every thread's stack, and the page cache of the files it reads and writes (a
server that leans on the OS cache instead of its own must pay for it too). A
child group of cgroup v1's memory controller (under this process's own group,
so that the machine's accounting of this session still covers it) is created
per run, `memory.limit_in_bytes` set to --limit-mb, and the server's process
moves itself in before it execs (`preexec_fn` writes its pid to
`cgroup.procs`), so everything it ever allocates is charged there. Nothing
else joins the group: sysbench runs outside it. The group is removed once the
server is gone.

How each server is told the limit:
- MariaDB: `--innodb-buffer-pool-size` --mariadb-pool-fraction of the limit
  (default 50%), `--innodb-flush-method=O_DIRECT` (the buffer pool is the only
  cache of data pages, none in the page cache), a redo log of at most 128 MiB
  and a quarter of the limit, and innodb_flush_log_at_trx_commit=1 (the
  durability of Canyon's default sync-every-commit; bench/sysbench_compare.py's
  settings otherwise).
- Canyon: `CANYON_MEMORY_BUDGET_BYTES` --canyon-budget-fraction of the limit
  (default 60%), the one setting that sizes all its caches
  (crates/canyon-server/src/memory.rs), and `CANYON_WORKER_THREADS`
  --canyon-workers (default 16): a read that misses the block cache waits
  for the disk on its runtime worker thread, so the workers bound the reads
  in flight (docs/architecture/storage.md, "Reads that wait for the disk");
  MariaDB's are its client threads. --canyon-env KEY=VALUE (repeatable)
  adds settings to try, e.g. `CANYON_DIRECT_IO=1`.

Order: each round loads each server afresh (its own data directory and
memory group) and runs every workload on it, then stops it. The servers take
turns: the first of --servers (Canyon by default) goes first in even rounds,
the other in odd ones (A B, B A), so that drift on a shared machine hits both
alike. Ratios are Canyon / MariaDB per round, reported as their mean and
min–max.

Output: a section `larger-than-memory` of --out (default docs/benchmarks.md;
with --smoke a temporary file), and every interval of every run as JSON
(--json; default a temporary file, whose path is printed).

--smoke is a configuration small enough for CI (256 MiB, 2 tables × 5,000
rows, 3 s per workload at 4 threads, 1 s intervals) so that the harness does
not rot; crates/canyon-server/tests/larger_than_memory_harness.rs runs it.
With --servers canyon it needs no MariaDB.

The defaults are the issue's run: 1 GiB of memory for 16 tables × 3,000,000
rows — after a load of 20 million rows Canyon held 192 bytes a row on disk
and MariaDB 253 (docs/benchmarks.md), so 8.6 and 11.3 GiB, at least 8 times
the limit — and 20 minutes per workload at 16 clients.

Usage: bench/larger_than_memory.py [--limit-mb 1024] [--tables 16]
       [--table-size 3000000] [--time 1200] [--threads 16] [--rounds 1]
       [--workloads point_select_uniform,...] [--servers canyon,mariadb]
       [--load infile|sysbench] [--load-clients N] [--canyon-workers 16]
       [--canyon PATH] [--out FILE] [--json FILE] [--smoke]

This is a benchmark, not a test: nothing here asserts a timing. It exits
non-zero when the harness fails (a server that does not start, sysbench
failing while the server lives, output it cannot parse) or a server dies
other than by the OOM killer, after writing what was measured.
"""

from report_section import write_section
import sysbench_compare as sc
import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

MIB = 1 << 20
CGROUP_ROOT = "/sys/fs/cgroup/memory"
SERVERS = {"canyon": "Canyon", "mariadb": "MariaDB"}

# name -> (sysbench test, its options). Uniform keys give a cache no hot set
# to keep (with data N times the memory, about 1 - 1/N of the reads miss);
# pareto keys show how well the hot part is kept.
WORKLOADS = {
    "point_select_uniform": ("oltp_point_select", ["--rand-type=uniform"]),
    "point_select_pareto": ("oltp_point_select", ["--rand-type=pareto"]),
    "read_only": ("oltp_read_only", ["--rand-type=uniform"]),
    "read_write": ("oltp_read_write", ["--rand-type=uniform"]),
}

# --smoke: small enough for a CI test of the harness (a run of both servers
# takes about 30 s), large enough that every workload reports intervals.
SMOKE = {"limit_mb": 256, "tables": 2, "table_size": 5000, "time": 3, "threads": 4, "report_interval": 1}

# sysbench 1.0.20's --report-interval line, e.g.
# [ 10s ] thds: 16 tps: 1234.50 qps: 1234.50 (r/w/o: 1234.50/0.00/0.00) lat (ms,99%): 12.08 err/s: 0.00 reconn/s: 0.00
INTERVAL = re.compile(
    r"\[ (\d+(?:\.\d+)?)s \] thds: (\d+) tps: ([\d.]+) qps: ([\d.]+) "
    r"\(r/w/o: [\d.]+/[\d.]+/[\d.]+\) lat \(ms,99%\): ([\d.]+) err/s: ([\d.]+) reconn/s: ([\d.]+)$")

# A workload's sysbench may run this much past --time (connecting, the last
# transactions) before it is taken for hung.
SYSBENCH_GRACE_S = 120


class ServerDied(Exception):
    """The server process exited while sysbench worked against it."""


class MemoryGroup:
    """A child group of cgroup v1's memory controller with a limit. The
    server is moved in by `enter` (its `preexec_fn`); the group is removed by
    `remove` once nothing is left in it."""

    def __init__(self, name, limit_bytes):
        self.path = os.path.join(own_memory_group(), name)
        os.mkdir(self.path)
        self.write("memory.limit_in_bytes", limit_bytes)

    def enter(self):
        """Runs in the forked server before exec: the process, the threads it
        will start and everything they allocate or read belong to the group."""
        with open(os.path.join(self.path, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))

    def write(self, name, value):
        with open(os.path.join(self.path, name), "w") as f:
            f.write(str(value))

    def read(self, name):
        with open(os.path.join(self.path, name)) as f:
            return f.read()

    def counters(self):
        """Peak usage and failcnt since the last `reset`, the current usage
        split into anonymous memory and page cache, and the OOM kills so far
        (None on kernels whose memory.oom_control has no `oom_kill` line)."""
        stat = dict(line.split() for line in self.read("memory.stat").splitlines())
        oom = dict(line.split() for line in self.read("memory.oom_control").splitlines())
        return {
            "max_usage_bytes": int(self.read("memory.max_usage_in_bytes")),
            "failcnt": int(self.read("memory.failcnt")),
            "rss_bytes": int(stat["total_rss"]),
            "cache_bytes": int(stat["total_cache"]),
            "oom_kills": int(oom["oom_kill"]) if "oom_kill" in oom else None,
        }

    def reset(self):
        """Starts a new phase: the peak restarts from the current usage."""
        self.write("memory.max_usage_in_bytes", 0)
        self.write("memory.failcnt", 0)

    def kill(self):
        """SIGKILLs what is left in the group — only ever the server this
        harness started (and its threads), when it would not stop."""
        for pid in self.read("cgroup.procs").split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass

    def remove(self):
        # The last task leaves the group a moment after its parent reaped it.
        for _ in range(50):
            try:
                os.rmdir(self.path)
                return
            except OSError:
                time.sleep(0.1)
        os.rmdir(self.path)


def own_memory_group():
    """This process's memory cgroup directory (cgroup v1)."""
    with open("/proc/self/cgroup") as f:
        for line in f:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            if "memory" in controllers.split(","):
                return CGROUP_ROOT + path.rstrip("/")
    raise RuntimeError("no cgroup v1 memory controller: /proc/self/cgroup has no memory line")


class DeathWatch:
    """Notes when the server process exits (`since_boot`), the moment it does:
    waitid with WNOWAIT leaves the reaping (and the exit status) to Popen."""

    def __init__(self, proc):
        self.proc = proc
        self.died_at = None
        self.thread = threading.Thread(target=self._wait, daemon=True)
        self.thread.start()

    def _wait(self):
        try:
            os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOWAIT)
        except ChildProcessError:
            pass  # already reaped by Popen: it exited just now
        self.died_at = since_boot()

    def dead(self, wait_s=0):
        """Whether the server has exited, waiting up to `wait_s` for it: a
        process the OOM killer chose takes a moment to finish dying after its
        clients have seen their connections drop."""
        self.thread.join(wait_s)
        return not self.thread.is_alive()


def proc_io(pid):
    with open(f"/proc/{pid}/io") as f:
        return {k: int(v) for k, v in (line.split(": ") for line in f)}


def since_boot():
    return time.clock_gettime(time.CLOCK_BOOTTIME)


def process_start(pid):
    """When process `pid` started, in seconds since boot (`since_boot`'s
    clock): the kernel's record rather than a clock read around Popen, which
    for MariaDB would include mariadb-install-db."""
    with open(f"/proc/{pid}/stat") as f:
        start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])  # field 22, starttime
    return start_ticks / sc.CLK_TCK


def du(path):
    return int(subprocess.run(["du", "-sb", path], check=True, capture_output=True,
                              text=True).stdout.split()[0])


def canyon_env(a, limit):
    env = {"CANYON_MEMORY_BUDGET_BYTES": str(int(limit * a.canyon_budget_fraction))}
    if a.canyon_workers:
        env["CANYON_WORKER_THREADS"] = str(a.canyon_workers)
    if a.load == "infile":
        env["CANYON_LOCAL_INFILE"] = "1"  # the client sends the file (LOAD DATA LOCAL)
    for kv in a.canyon_env:
        key, sep, value = kv.partition("=")
        if not sep or not key.startswith("CANYON_"):
            raise SystemExit(f"--canyon-env wants CANYON_NAME=VALUE, not {kv!r}")
        env[key] = value
    return env


def mariadb_args(a, limit):
    pool_mib = max(int(limit * a.mariadb_pool_fraction) // MIB, 8)
    log_mib = min(128, limit // 4 // MIB)
    # MariaDB's other caches default to 128 MiB each and the Aria page cache
    # (its system tables' engine) is allocated at start: left at their
    # defaults, they alone fill a 256 MiB limit (OOM-killed within 10 s of
    # the load). Tables here are InnoDB; 8 MiB each is plenty.
    return ["--aria-pagecache-buffer-size=8M", "--key-buffer-size=8M",
            f"--innodb-buffer-pool-size={pool_mib}M", "--innodb-flush-method=O_DIRECT",
            f"--innodb-log-file-size={log_mib}M", "--innodb-flush-log-at-trx-commit=1"]


def parse_interval(line):
    m = INTERVAL.match(line.strip())
    if not m:
        raise RuntimeError(f"cannot parse sysbench's interval line: {line!r}")
    t, thds, tps, qps, p99, err, reconn = m.groups()
    return {"t_s": float(t), "threads": int(thds), "tps": float(tps), "qps": float(qps),
            "p99_ms": float(p99), "err_per_s": float(err), "reconn_per_s": float(reconn)}


def summary_field(out, label):
    """sysbench's end-of-run total of `label`, e.g. `transactions:  1234  (41.1 per sec.)`."""
    m = re.search(rf"^\s*{label}:\s+(\d+)", out, re.M)
    if not m:
        raise RuntimeError(f"sysbench printed no '{label}:' total:\n{out}")
    return int(m.group(1))


# sysbench 1.0.20's oltp_common.lua table, for --load infile.
CREATE_TABLE = ("CREATE TABLE sbtest{i} (id INTEGER NOT NULL AUTO_INCREMENT, "
                "k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, "
                "pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id){key}) ENGINE = innodb")

# Bytes -> the digit each stands for (b % 10), for random digit strings.
DIGITS = bytes((b % 10) + ord("0") for b in range(256))


def gen_table_file(path, rows, seed):
    """The rows sysbench's prepare makes for one table, tab-separated: id
    1..rows, k uniform in 1..rows, c 10 and pad 5 groups of 11 random digits
    joined by '-' (random, as sysbench's, so compression finds what it would
    find in sysbench's rows and no more)."""
    import random
    rnd = random.Random(seed)
    chunk = 10_000
    with open(path, "wb") as f:
        for first in range(1, rows + 1, chunk):
            n = min(chunk, rows + 1 - first)
            digits = os.urandom(n * 165).translate(DIGITS)
            out = []
            for i in range(n):
                d = digits[i * 165:(i + 1) * 165]
                c = b"-".join(d[j:j + 11] for j in range(0, 110, 11))
                pad = b"-".join(d[j:j + 11] for j in range(110, 165, 11))
                out.append(b"%d\t%d\t%s\t%s\n" % (first + i, rnd.randint(1, rows), c, pad))
            f.write(b"".join(out))


def table_files(a, work):
    """--load infile's files, one per table, made once per harness run."""
    paths = [os.path.join(work, f"sbtest{i}.tsv") for i in range(1, a.tables + 1)]
    for i, path in enumerate(paths, 1):
        if not os.path.exists(path):
            gen_table_file(path, a.table_size, seed=i)
    return paths


def client(server, stmt):
    """One statement through the mariadb client, LOCAL INFILE allowed."""
    p = subprocess.run(["mariadb", "-h127.0.0.1", f"-P{server.port}", f"-u{server.user}",
                        f"-p{server.password}", "--local-infile=1", "-A", "sbtest", "-e", stmt],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{stmt[:80]} on {server.name} failed: {p.stderr.strip()}")


def load_infile(a, server, kind, files):
    """Each table by LOAD DATA LOCAL INFILE, --load-clients at a time (see the
    module doc for each server's order of table, rows and index)."""
    def one(i, path):
        key = f", KEY k_{i} (k)" if kind == "canyon" else ""
        client(server, CREATE_TABLE.format(i=i, key=key))
        client(server, f"LOAD DATA LOCAL INFILE '{path}' INTO TABLE sbtest{i}")
        if kind != "canyon":
            client(server, f"CREATE INDEX k_{i} ON sbtest{i} (k)")
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=a.load_clients) as pool:
        for f in [pool.submit(one, i, path) for i, path in enumerate(files, 1)]:
            f.result()


# Loads of at most this many rows a table are counted afterwards (the smoke
# run's, in CI); a count of larger ones would read the whole data set.
VERIFY_ROWS_UP_TO = 100_000


def verify_load(a, server):
    """Every table holds --table-size rows, and its index `k_i` as many."""
    for i in range(1, a.tables + 1):
        for q in (f"SELECT COUNT(*) FROM sbtest{i}",
                  f"SELECT COUNT(*) FROM sbtest{i} FORCE INDEX (k_{i}) WHERE k >= 0"):
            p = subprocess.run(["mariadb", "-h127.0.0.1", f"-P{server.port}", f"-u{server.user}",
                                f"-p{server.password}", "-N", "-B", "sbtest", "-e", q],
                               capture_output=True, text=True)
            if p.returncode != 0 or p.stdout.strip() != str(a.table_size):
                raise RuntimeError(f"{q} on {server.name}: {p.stdout.strip() or p.stderr.strip()}, "
                                   f"not {a.table_size}")


def load(a, server, kind, watch, files):
    """The load (--load). sysbench 1.0.20 exits 0 when a preparing thread dies
    of a FATAL error (a lost connection, say), so its output is checked as
    well."""
    if a.load == "infile":
        try:
            load_infile(a, server, kind, files)
        except RuntimeError:
            if watch.dead(wait_s=10):
                raise ServerDied("load")
            raise
        return
    tables = a.tables
    p = subprocess.run(sc.sysbench_args(server, "oltp_read_write", "prepare", threads=tables),
                       capture_output=True, text=True)
    failed = p.returncode != 0 or "FATAL" in p.stdout + p.stderr
    if watch.dead(wait_s=10 if failed else 0):
        raise ServerDied("load")
    if failed:
        raise RuntimeError(f"sysbench prepare on {server.name} failed ({p.returncode}):\n"
                           f"{p.stdout[-4000:]}\n{p.stderr[-4000:]}")


def run_workload(a, server, group, watch, name):
    """Runs one workload, printing and keeping every interval; raises
    ServerDied if the server was gone by the end."""
    test, extra = WORKLOADS[name]
    group.reset()
    io0 = proc_io(server.proc.pid)
    cmd = sc.sysbench_args(server, test, "run", threads=a.threads, seconds=a.time, percentile=99,
                           report_interval=a.report_interval, extra=extra)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    hung = threading.Timer(a.time + SYSBENCH_GRACE_S, p.kill)
    hung.start()
    intervals, out = [], []
    try:
        for line in p.stdout:
            out.append(line)
            if line.startswith("[ "):
                iv = parse_interval(line)
                intervals.append(iv)
                print(f"  {server.name:7} {name:20} {iv['t_s']:6.0f}s  tps {iv['tps']:9.1f}  "
                      f"p99 {iv['p99_ms']:8.2f} ms", flush=True)
        rc = p.wait()
    finally:
        hung.cancel()
        if p.poll() is None:  # a line it could not parse: no use running on
            p.kill()
            p.wait()
    out = "".join(out)
    failed = rc != 0 or "FATAL" in out
    if watch.dead(wait_s=10 if failed else 0):
        raise ServerDied(name)
    if failed:
        why = f"killed after --time + {SYSBENCH_GRACE_S} s" if rc == -signal.SIGKILL else f"exit {rc}"
        raise RuntimeError(f"sysbench {test} run on {server.name} failed ({why}):\n{out[-8000:]}")
    io1 = proc_io(server.proc.pid)
    txns = summary_field(out, "transactions")
    if not intervals or txns == 0:
        raise RuntimeError(f"sysbench {test} on {server.name} reported no interval or no "
                           f"transaction:\n{out}")
    return {
        "workload": name, "sysbench": [test, *extra], "intervals": intervals,
        "transactions": txns, "queries": summary_field(out, "queries"),
        "ignored_errors": summary_field(out, "ignored errors"),
        "read_bytes": io1["read_bytes"] - io0["read_bytes"],
        "write_bytes": io1["write_bytes"] - io0["write_bytes"],
        "memory": group.counters(),
    }


def new_server(a, kind, work, group):
    """The server object and a function that starts it: a server that dies
    while starting (the OOM killer may take it before it listens) raises from
    its constructor, and its process is still to be looked at afterwards."""
    limit = a.limit_mb * MIB
    if kind == "canyon":
        cls, kw = sc.Canyon, dict(binary=a.canyon, workdir=work, env=canyon_env(a, limit))
    else:
        cls, kw = sc.MariaDB, dict(workdir=work, args=mariadb_args(a, limit))
    server = cls.__new__(cls)
    return server, lambda: server.__init__(**kw, preexec_fn=group.enter)


def run_server(a, kind, rnd, files):
    """One server, one round: start it in its memory group, load, run every
    workload, stop it. Returns the run's record, a death of the server (by the
    OOM killer or not) recorded in it; raises when the harness fails."""
    name = SERVERS[kind]
    run = {"server": name, "round": rnd, "load": None, "workloads": [], "oom_killed": False,
           "died_in": None, "died_after_s": None, "exit": None}
    work = tempfile.mkdtemp(prefix=f"canyon-ltm-{kind}-", dir=a.workdir)
    group = MemoryGroup(f"canyon-ltm-{kind}-{os.getpid()}", a.limit_mb * MIB)
    run["cgroup"] = group.path
    server, start = new_server(a, kind, work, group)
    watch = None
    phase = "start"
    keep_work = True  # a failed run's logs stay for a look
    try:
        print(f"round {rnd}: starting {name} in {group.path} ({a.limit_mb} MiB) ...", flush=True)
        started = since_boot()
        try:
            start()
            started = process_start(server.proc.pid)
            watch = DeathWatch(server.proc)
            phase = "load"
            t = time.time()
            load(a, server, kind, watch, files)
            run["load"] = {"seconds": time.time() - t, "disk_bytes": du(server.dir),
                           "memory": group.counters()}
            if a.table_size <= VERIFY_ROWS_UP_TO:
                verify_load(a, server)
            print(f"  {name} loaded in {run['load']['seconds']:.1f} s, "
                  f"{run['load']['disk_bytes'] / MIB:.1f} MiB on disk, peak memory "
                  f"{run['load']['memory']['max_usage_bytes'] / MIB:.1f} MiB", flush=True)
            for w in a.workloads:
                phase = w
                run["workloads"].append(run_workload(a, server, group, watch, w))
                wl = run["workloads"][-1]
                print(f"  {name} {w}: {wl['transactions']} transactions, peak memory "
                      f"{wl['memory']['max_usage_bytes'] / MIB:.1f} MiB, failcnt "
                      f"{wl['memory']['failcnt']}", flush=True)
        except (ServerDied, RuntimeError, OSError):
            if not hasattr(server, "proc"):
                raise  # it never ran (mariadb-install-db failed, say)
            watch = watch or DeathWatch(server.proc)
            if not watch.dead(wait_s=10):
                raise
        if watch.dead():
            server.proc.wait()
            run["exit"] = server.proc.returncode
            run["died_in"] = phase
            run["died_after_s"] = watch.died_at - started
            oom_kills = group.counters()["oom_kills"]
            run["oom_killed"] = bool(oom_kills) or server.proc.returncode == -signal.SIGKILL
            print(f"  {name} {outcome(run)}", flush=True)
        # Since the last phase began (or the start, if the server died loading).
        run["memory"] = group.counters()
        keep_work = run["died_in"] is not None and not run["oom_killed"]
    finally:
        if hasattr(server, "proc"):
            try:
                server.stop()
            except Exception as e:  # keep cleaning up
                print(f"stopping {name}: {e}; killing it", file=sys.stderr)
                group.kill()
                server.proc.wait()
        group.remove()
        if keep_work:
            print(f"  {name}'s data directory and log are kept in {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return run


def workload_stats(w, interval_s):
    """Mean tps and the interval p99s' median and maximum. An interval in which
    no transaction finished (sysbench prints a p99 of 0) is a stall at least as
    long as the interval, so it counts as a p99 of the whole interval."""
    p99s = [iv["p99_ms"] if iv["tps"] > 0 else interval_s * 1000 for iv in w["intervals"]]
    return {"tps": statistics.mean(iv["tps"] for iv in w["intervals"]),
            "p99_median_ms": statistics.median(p99s), "p99_max_ms": max(p99s),
            "read_per_txn": w["read_bytes"] / w["transactions"],
            "write_per_txn": w["write_bytes"] / w["transactions"]}


def disk(path):
    """The block device under `path`, as /sys/block describes it."""
    try:
        dev = os.stat(path).st_dev
        name = os.path.basename(os.path.realpath(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}"))
        with open(f"/sys/block/{name}/queue/rotational") as f:
            rot = f.read().strip()
        return f"/dev/{name} ({'rotational' if rot == '1' else 'non-rotational'} as the kernel reports it)"
    except OSError:
        return "unknown"


def fmt_ratio(xs):
    return f"{statistics.mean(xs):.2f} ({min(xs):.2f}–{max(xs):.2f})" if xs else "—"


def load_text(a):
    if a.load == "infile":
        return (f"`LOAD DATA LOCAL INFILE` of sysbench's rows, {a.load_clients} tables at a time; "
                "Canyon into tables with their index `k_i`, MariaDB into tables with the primary "
                "key only, then `CREATE INDEX`")
    return f"`sysbench oltp_read_write prepare --threads={a.tables}`"


def write_report(a, runs, json_path):
    limit = a.limit_mb * MIB
    lines = [
        "## Data larger than memory: Canyon and MariaDB in a memory cgroup",
        "",
        "Produced by `bench/larger_than_memory.py` (issue 28); re-run it to refresh this section. "
        "Each server runs in its own cgroup v1 memory group whose limit covers its heap, threads and "
        "the page cache of its files; each round loads each server afresh, then runs every workload "
        "on it; the servers alternate (A B, then B A). Raw intervals: "
        f"`{json_path}`.",
        "",
        f"**Machine:** {sc.machine()}; disk {disk(a.workdir or tempfile.gettempdir())}.",
        "",
        f"**Settings:** memory limit {a.limit_mb} MiB; data {a.tables} tables × {a.table_size:,} rows "
        f"({load_text(a)}, inside the limit); each workload "
        f"{a.time} s at {a.threads} threads, sysbench `--report-interval={a.report_interval} "
        f"--percentile=99`; {a.rounds} round(s). "
        f"Canyon: `{' '.join(f'{k}={v}' for k, v in canyon_env(a, limit).items())}`. "
        f"MariaDB: `{' '.join(mariadb_args(a, limit))}`, no binlog, performance_schema off.",
        "",
        "### Load",
        "",
        "On disk: `du -sb` of the data directory right after the load (MariaDB's includes its redo "
        "log and system tablespaces). Peak memory and failcnt: the memory group's from the server's "
        "start to the end of the load.",
        "",
        "| server | round | load s | on disk MiB | peak memory MiB | failcnt | outcome |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for r in runs:
        ld = r["load"]
        if ld:
            lines.append(f"| {r['server']} | {r['round']} | {ld['seconds']:.1f} | {ld['disk_bytes'] / MIB:,.1f} | "
                         f"{ld['memory']['max_usage_bytes'] / MIB:,.1f} | {ld['memory']['failcnt']:,} | "
                         f"{outcome(r)} |")
        else:  # died starting or loading: the group's figures until then
            lines.append(f"| {r['server']} | {r['round']} | | | {r['memory']['max_usage_bytes'] / MIB:,.1f} | "
                         f"{r['memory']['failcnt']:,} | {outcome(r)} |")
    lines += [
        "",
        "### Workloads",
        "",
        "Figures are over every round in which the workload completed: tps the mean of the interval "
        "rates, p99 the median and the maximum of the interval p99s (an interval without a finished "
        "transaction counts as a p99 of the whole interval); the issue's \"no stalls\" criterion is "
        "max / median ≤ 3. Disk bytes per transaction are the server process's /proc/PID/io "
        "`read_bytes` and `write_bytes` over the run; peak memory and failcnt are the memory group's "
        "during that workload.",
        "",
        "| workload | server | tps | p99 ms (median) | p99 ms (max) | max / median | read B/txn | "
        "written B/txn | peak memory MiB | failcnt | outcome |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    servers = [name for kind, name in SERVERS.items() if kind in a.servers]
    for w in a.workloads:
        for s in servers:
            done = [x for r in runs if r["server"] == s for x in r["workloads"] if x["workload"] == w]
            lost = [(f"round {r['round']}: " if a.rounds > 1 else "") + outcome(r) for r in runs
                    if r["server"] == s and not any(x["workload"] == w for x in r["workloads"])]
            if not done:
                lines.append(f"| {w} | {s} | | | | | | | | | {'; '.join(lost) or 'not run'} |")
                continue
            pooled = {"intervals": [iv for x in done for iv in x["intervals"]],
                      "read_bytes": sum(x["read_bytes"] for x in done),
                      "write_bytes": sum(x["write_bytes"] for x in done),
                      "transactions": sum(x["transactions"] for x in done)}
            st = workload_stats(pooled, a.report_interval)
            spread = st["p99_max_ms"] / st["p99_median_ms"] if st["p99_median_ms"] else float("inf")
            lines.append(
                f"| {w} | {s} | {st['tps']:,.1f} | {st['p99_median_ms']:.2f} | {st['p99_max_ms']:.2f} | "
                f"{spread:.1f}{' (stall)' if spread > 3 else ''} | {st['read_per_txn']:,.0f} | "
                f"{st['write_per_txn']:,.0f} | "
                f"{max(x['memory']['max_usage_bytes'] for x in done) / MIB:,.1f} | "
                f"{sum(x['memory']['failcnt'] for x in done):,} | "
                f"{'; '.join(['ok'] + lost)} |")
    if len(servers) == 2:
        lines += ["", "Canyon / MariaDB per round, mean (min–max); a tps ratio above 1 and a p99 "
                  "ratio below 1 favour Canyon:", "",
                  "| workload | tps | p99 (median) | p99 (max) |", "|---|---:|---:|---:|"]
        for w in a.workloads:
            ratios = {"tps": [], "p99_median_ms": [], "p99_max_ms": []}
            for rnd in range(a.rounds):
                pair = [next((workload_stats(x, a.report_interval) for r in runs
                              if r["server"] == s and r["round"] == rnd
                              for x in r["workloads"] if x["workload"] == w), None) for s in servers]
                if None in pair:
                    continue
                for k in ratios:
                    if pair[1][k]:
                        ratios[k].append(pair[0][k] / pair[1][k])
            lines.append(f"| {w} | {fmt_ratio(ratios['tps'])} | {fmt_ratio(ratios['p99_median_ms'])} | "
                         f"{fmt_ratio(ratios['p99_max_ms'])} |")
    write_section(a.out, "larger-than-memory", "\n".join(lines), "bench/larger_than_memory.py")
    print(f"wrote the larger-than-memory section of {a.out}")


def outcome(r):
    if r["oom_killed"]:
        return f"OOM-killed after {r['died_after_s']:.1f} s (in {r['died_in']})"
    if r["died_in"]:
        return f"exited ({r['exit']}) after {r['died_after_s']:.1f} s (in {r['died_in']})"
    return "ok"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit-mb", type=int, default=1024, help="the memory group's limit, MiB")
    ap.add_argument("--tables", type=int, default=16)
    ap.add_argument("--table-size", type=int, default=3_000_000, help="rows per table")
    ap.add_argument("--time", type=int, default=1200, help="seconds per workload")
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--report-interval", type=int, default=10, help="seconds per sysbench interval")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--load", choices=["infile", "sysbench"], default="infile",
                    help="infile: LOAD DATA LOCAL of generated files (each server's fastest path); "
                         "sysbench: sysbench's prepare")
    ap.add_argument("--load-clients", type=int, default=os.cpu_count() or 2,
                    help="--load infile: tables loaded at a time (default: one per CPU)")
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--servers", default="canyon,mariadb")
    ap.add_argument("--canyon", default=os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/canyon-target")), "release", "canyon"))
    ap.add_argument("--canyon-budget-fraction", type=float, default=0.6,
                    help="CANYON_MEMORY_BUDGET_BYTES as a fraction of the limit")
    ap.add_argument("--canyon-workers", type=int, default=16,
                    help="CANYON_WORKER_THREADS (0: the server's default, one per CPU)")
    ap.add_argument("--canyon-env", action="append", default=[], metavar="CANYON_NAME=VALUE",
                    help="a further Canyon setting (repeatable), e.g. CANYON_DIRECT_IO=1")
    ap.add_argument("--mariadb-pool-fraction", type=float, default=0.5,
                    help="--innodb-buffer-pool-size as a fraction of the limit")
    ap.add_argument("--workdir", default=None, help="where the data directories go (default: the temp dir)")
    ap.add_argument("--out", default=None, help="Markdown file (default docs/benchmarks.md; "
                                                "with --smoke a temporary file)")
    ap.add_argument("--json", default=None, help="every interval as JSON (default: a temporary file)")
    ap.add_argument("--smoke", action="store_true",
                    help="tiny run for CI: 256 MiB, 2 tables × 5,000 rows, 3 s per workload, "
                         "4 threads, 1 s intervals (where not given otherwise)")
    a = ap.parse_args()
    if a.smoke:  # its sizes are defaults: options given as well still win
        ap.set_defaults(**SMOKE)
        a = ap.parse_args()
    if a.out is None:
        a.out = (tempfile.mkstemp(prefix="larger-than-memory-", suffix=".md")[1] if a.smoke
                 else os.path.join(sc.REPO, "docs", "benchmarks.md"))
    if a.json is None:
        a.json = tempfile.mkstemp(prefix="larger-than-memory-", suffix=".json")[1]
    a.workloads = a.workloads.split(",")
    a.servers = a.servers.split(",")
    for w in a.workloads:
        if w not in WORKLOADS:
            ap.error(f"unknown workload {w!r}; known: {', '.join(WORKLOADS)}")
    for s in a.servers:
        if s not in SERVERS:
            ap.error(f"unknown server {s!r}; known: {', '.join(SERVERS)}")
    sc.TABLES, sc.TABLE_SIZE = a.tables, a.table_size

    runs = []
    files_dir = tempfile.mkdtemp(prefix="canyon-ltm-rows-", dir=a.workdir)
    try:
        files = []
        if a.load == "infile":
            t = time.time()
            files = table_files(a, files_dir)
            print(f"generated {a.tables} files of {a.table_size:,} rows in {time.time() - t:.1f} s",
                  flush=True)
        for rnd in range(a.rounds):
            for kind in (a.servers if rnd % 2 == 0 else list(reversed(a.servers))):
                runs.append(run_server(a, kind, rnd, files))
                r = runs[-1]
                if r["died_in"] and not r["oom_killed"]:
                    raise RuntimeError(f"{r['server']} {outcome(r)}, not by the OOM killer")
    finally:
        shutil.rmtree(files_dir, ignore_errors=True)
        # Whatever was measured is written, even if a later step failed.
        with open(a.json, "w") as f:
            json.dump({"settings": {k: v for k, v in vars(a).items()},
                       "canyon_env": canyon_env(a, a.limit_mb * MIB),
                       "mariadb_args": mariadb_args(a, a.limit_mb * MIB),
                       "runs": runs}, f, indent=1)
        print(f"wrote every interval to {a.json}")
        if runs:
            write_report(a, runs, a.json)


if __name__ == "__main__":
    main()
