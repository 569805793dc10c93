#!/usr/bin/env python3
"""Side-by-side sysbench benchmark: Canyon vs MariaDB on this machine.

Runs Debian's sysbench 1.0.20 oltp_point_select, oltp_read_only and
oltp_read_write at several thread counts against a Canyon server and a MariaDB
server (data in memory, innodb_flush_log_at_trx_commit=1 — the same durability
as Canyon's default sync-every-commit), alternating A B A B so that drift on a
shared machine hits both alike, and writes docs/benchmarks.md with the machine
described.

Per run it reports queries/s, p95 latency, and the server's CPU time per query
(delta of utime+stime from /proc/PID/stat, divided by queries) — the figure that
transfers to bigger machines.

Usage: bench/sysbench_compare.py [--time 10] [--threads 1,8,64,512] [--rounds 2]
       [--canyon PATH] [--out docs/benchmarks.md] [--unix-socket | --hot-rows]

--hot-rows measures lock contention instead (section sysbench-hot): one table of
10 rows, oltp_write_only transactions of one UPDATE each, 100 and 1,000
clients — every client queues on the same few row locks — and reports each
server's thread count too.

This is a benchmark, not a test: nothing here asserts a timing.
"""

from report_section import write_section
import argparse
import os
import platform
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")
UNIX_SOCKET = False  # set by --unix-socket
# The data set and the extra sysbench options; --hot-rows changes them.
TABLES, TABLE_SIZE, EXTRA = 4, 10000, []
HOT_ROWS_EXTRA = ["--index-updates=0", "--non-index-updates=1", "--delete-inserts=0"]
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sample(pid):
    """CPU ticks (user, system) and context switches (voluntary, involuntary),
    summed over the server's live threads, with a wall-clock timestamp."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # fields[0] is field 3 (state); utime is field 14, stime field 15.
    utime, stime = int(fields[11]), int(fields[12])
    vcs = ivcs = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches"):
                        vcs += int(line.split()[1])
                    elif line.startswith("nonvoluntary_ctxt_switches"):
                        ivcs += int(line.split()[1])
        except OSError:
            pass  # a thread exited while we read
    return {"t": time.time(), "utime": utime, "stime": stime, "vcs": vcs, "ivcs": ivcs,
            "threads": len(os.listdir(f"/proc/{pid}/task"))}


def wait_port(port, proc, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("server did not start listening")


class Canyon:
    name = "Canyon"

    def __init__(self, binary, workdir, unix_socket=False, env=None, preexec_fn=None):
        """`env`: more CANYON_* settings for the server; `preexec_fn`: run in
        the server's process before exec (bench/larger_than_memory.py puts it
        into a memory cgroup there)."""
        self.port = free_port()
        self.password = "bench"
        self.dir = os.path.join(workdir, "canyon")
        self.sock = os.path.join(workdir, "canyon.sock") if unix_socket else None
        env = dict(os.environ, CANYON_ROOT_PASSWORD=self.password, RUST_LOG="warn",
                   CANYON_SOCKET=self.sock or "", **(env or {}))
        self.proc = subprocess.Popen(
            [binary, "serve", "--data-dir", self.dir, "--port", str(self.port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(workdir, "canyon.log"), "w"),
            preexec_fn=preexec_fn,
        )
        wait_port(self.port, self.proc)
        self.user = "root"
        self.sql("CREATE DATABASE IF NOT EXISTS sbtest")

    def sql(self, stmt):
        subprocess.run(
            ["mariadb", "-h127.0.0.1", f"-P{self.port}", "-uroot", f"-p{self.password}", "-A", "-e", stmt],
            check=True,
        )

    def client_socket(self):
        return self.sock

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)


class MariaDB:
    name = "MariaDB"

    def __init__(self, workdir, unix_socket=False, args=(), preexec_fn=None):
        """`args`: more mariadbd options, after (so overriding) the defaults
        below; `preexec_fn`: as for Canyon."""
        self.port = free_port()
        self.dir = os.path.join(workdir, "mariadb")
        self.sock = os.path.join(workdir, "mariadb.sock")
        self.unix_socket = unix_socket
        os.makedirs(self.dir)
        subprocess.run(
            ["mariadb-install-db", "--no-defaults", f"--datadir={self.dir}", "--user=root",
             "--auth-root-authentication-method=socket", "--skip-test-db"],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        self.proc = subprocess.Popen(
            ["mariadbd", "--no-defaults", f"--datadir={self.dir}", f"--port={self.port}",
             f"--socket={self.sock}", "--user=root", "--bind-address=127.0.0.1",
             "--innodb-flush-log-at-trx-commit=1", "--innodb-buffer-pool-size=1G",
             "--max-connections=2000", "--max-prepared-stmt-count=1048576",
             "--skip-log-bin", "--performance-schema=OFF", *args],
            stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(workdir, "mariadb.log"), "w"),
            preexec_fn=preexec_fn,
        )
        wait_port(self.port, self.proc)
        self.user = "sb"
        self.password = "sb"
        subprocess.run(
            ["mariadb", "-S", self.sock, "-uroot", "-e",
             "CREATE USER 'sb'@'%' IDENTIFIED BY 'sb'; GRANT ALL ON *.* TO 'sb'@'%'; "
             "CREATE USER 'sb'@'localhost' IDENTIFIED BY 'sb'; GRANT ALL ON *.* TO 'sb'@'localhost'; "
             "CREATE DATABASE sbtest"],
            check=True,
        )

    def client_socket(self):
        return self.sock if self.unix_socket else None

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=60)


def sysbench_args(server, workload, command, threads=1, seconds=10, percentile=95,
                  report_interval=0, extra=()):
    sock = server.client_socket()
    # libmysqlclient takes the socket only with host "localhost".
    where = (["--mysql-host=localhost", f"--mysql-socket={sock}"] if sock
             else ["--mysql-host=127.0.0.1", f"--mysql-port={server.port}"])
    return [
        "sysbench", workload, "--db-driver=mysql", *where, f"--mysql-user={server.user}",
        f"--mysql-password={server.password}", "--mysql-db=sbtest",
        f"--tables={TABLES}", f"--table-size={TABLE_SIZE}", f"--threads={threads}",
        f"--time={seconds}", f"--percentile={percentile}", f"--report-interval={report_interval}",
        *EXTRA, *extra, command,
    ]


def sysbench(server, workload, command, **kw):
    r = subprocess.run(sysbench_args(server, workload, command, **kw), capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"sysbench {workload} {command} on {server.name} failed:\n{r.stdout}\n{r.stderr}")
    return r.stdout


def measured_run(server, workload, threads, seconds):
    """Runs sysbench and samples the server's CPU and context switches over the
    steady middle of the run (after connections are up, before they close), so
    per-query figures exclude connect/disconnect and thread creation/exit."""
    proc = subprocess.Popen(sysbench_args(server, workload, "run", threads=threads, seconds=seconds),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    a = sample(server.proc.pid)
    time.sleep(max(seconds - 1.5, 0.5))
    b = sample(server.proc.pid)
    out, err = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"sysbench {workload} run on {server.name} failed:\n{out}\n{err}")
    r = parse_run(out)
    q = r["qps"] * (b["t"] - a["t"])
    r["user_us_per_query"] = (b["utime"] - a["utime"]) / CLK_TCK * 1e6 / q
    r["sys_us_per_query"] = (b["stime"] - a["stime"]) / CLK_TCK * 1e6 / q
    r["cpu_us_per_query"] = r["user_us_per_query"] + r["sys_us_per_query"]
    r["cs_per_query"] = (b["vcs"] - a["vcs"] + b["ivcs"] - a["ivcs"]) / q
    r["threads"] = max(a["threads"], b["threads"])
    return r


def parse_run(out):
    q = re.search(r"queries:\s+(\d+)\s+\(([\d.]+) per sec", out)
    p95 = re.search(r"95th percentile:\s+([\d.]+)", out)
    err = re.search(r"ignored errors:\s+(\d+)", out)
    return {
        "queries": int(q.group(1)),
        "qps": float(q.group(2)),
        "p95_ms": float(p95.group(1)),
        "errors": int(err.group(1)) if err else 0,
    }


def version(program):
    """`program --version`, or a note that it is not installed (a Canyon-only
    run needs no mariadbd)."""
    try:
        return subprocess.run([program, "--version"], capture_output=True, text=True).stdout.strip()
    except FileNotFoundError:
        return f"{program} not installed"


def machine():
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    sb, md = version("sysbench"), version("mariadbd")
    return (f"{os.cpu_count()} CPUs ({cpu}), {mem_gib:.0f} GiB RAM, Linux {platform.release()}; "
            f"{sb}; {md}; client and servers on the same machine over "
            f"{'a Unix-domain socket' if UNIX_SOCKET else 'loopback TCP'}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--time", type=int, default=10)
    ap.add_argument("--threads", default="1,8,64,512")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--workloads", default="oltp_point_select,oltp_read_only,oltp_read_write")
    ap.add_argument("--canyon", default=os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/canyon-target")), "release", "canyon"))
    ap.add_argument("--out", default=os.path.join(REPO, "docs", "benchmarks.md"))
    ap.add_argument("--unix-socket", action="store_true",
                    help="connect sysbench over each server's Unix-domain socket instead of "
                         "loopback TCP (section sysbench-unix)")
    ap.add_argument("--hot-rows", action="store_true",
                    help="lock contention: 1 table of 10 rows, one-UPDATE transactions, "
                         "100 and 1,000 clients (section sysbench-hot)")
    a = ap.parse_args()
    global UNIX_SOCKET, TABLES, TABLE_SIZE, EXTRA
    UNIX_SOCKET = a.unix_socket
    if a.hot_rows:
        TABLES, TABLE_SIZE, EXTRA = 1, 10, HOT_ROWS_EXTRA
        if a.workloads == ap.get_default("workloads"):
            a.workloads = "oltp_write_only"
        if a.threads == ap.get_default("threads"):
            a.threads = "100,1000"
    threads = [int(t) for t in a.threads.split(",")]
    workloads = a.workloads.split(",")

    work = tempfile.mkdtemp(prefix="canyon-bench-")
    servers = []
    try:
        servers = [Canyon(a.canyon, work, a.unix_socket), MariaDB(work, a.unix_socket)]
        for s in servers:
            print(f"preparing {s.name} ...", flush=True)
            sysbench(s, "oltp_write_only" if a.hot_rows else "oltp_read_write", "prepare")
        results = {}  # (workload, threads, server) -> list of runs
        try:
            run_plan(a, servers, workloads, threads, results)
        finally:
            # Whatever was measured is written, even if a later step failed.
            write_report(a, results, workloads, threads)
    finally:
        for s in servers:
            try:
                s.stop()
            except Exception as e:  # keep cleaning up
                print(f"stopping {s.name}: {e}", file=sys.stderr)
        shutil.rmtree(work, ignore_errors=True)


def run_plan(a, servers, workloads, threads, results):
    """Every (workload, threads) step runs on both servers, alternating which
    goes first from round to round (A B, B A, ...)."""
    for w in workloads:
        for t in threads:
            for rnd in range(a.rounds):
                order = servers if rnd % 2 == 0 else list(reversed(servers))
                for s in order:
                    r = measured_run(s, w, t, a.time)
                    results.setdefault((w, t, s.name), []).append(r)
                    print(f"{w:18} {t:4} threads {s.name:8} {r['qps']:10.0f} qps  p95 {r['p95_ms']:7.2f} ms  "
                          f"cpu {r['user_us_per_query']:6.1f}+{r['sys_us_per_query']:6.1f} us/q  "
                          f"cs {r['cs_per_query']:5.2f}/q  threads {r['threads']}  errors {r['errors']}",
                          flush=True)


def cs(runs):
    """Context switches per query, or n/a when threads exited during the sample
    window (thread-per-connection servers lose those threads' counters)."""
    if any(r["cs_per_query"] < 0 for r in runs):
        return "n/a"
    return f"{statistics.mean(r['cs_per_query'] for r in runs):.2f}"


def write_report(a, results, workloads, threads):
    title = ("## sysbench: hot rows — every client on the same 10 rows" if a.hot_rows else
             "## sysbench: Canyon vs MariaDB" + (" over a Unix-domain socket" if a.unix_socket else ""))
    setup = (
        "**Setup:** 1 table × 10 rows; `oltp_write_only` with one non-index UPDATE per transaction "
        "(`" + " ".join(HOT_ROWS_EXTRA) + "`): BEGIN, UPDATE of a random row, COMMIT, so every "
        "client queues on the same 10 row locks and no transaction can deadlock. MariaDB 10.11 "
        "with innodb_flush_log_at_trx_commit=1 and max_connections=2000; Canyon with its default "
        "durability. Threads: the most the server process had during the run "
        "(/proc/PID/task)." if a.hot_rows else
        "**Setup:** 4 tables × 10,000 rows (data in memory). MariaDB 10.11 with "
        "innodb_flush_log_at_trx_commit=1, 1 GiB buffer pool, no binlog. Canyon with its default "
        "durability (sync every commit, group commit) on RocksDB. sysbench uses prepared statements "
        "(`--db-ps-mode=auto`). CPU per query is the server process's utime+stime delta over the run "
        "divided by the queries sysbench counted.")
    lines = [
        title,
        "",
        "Produced by `bench/sysbench_compare.py`; re-run it to refresh this section. "
        "Runs alternate between the servers (A B, then B A) and each figure is the mean over "
        f"{a.rounds} rounds of {a.time} s; the spread is the min–max of the per-round Canyon/MariaDB ratio.",
        "",
        f"**Machine:** {machine()}.",
        "",
        setup,
        "",
        "CPU per query is sampled over the steady middle of each run (from 1 s after start to 0.5 s "
        "before the end) so that connection setup and teardown are excluded; `user+sys` are the "
        "server process's user and kernel time, `cs` its voluntary plus involuntary context switches "
        "summed over its threads. " + (
            "Over the Unix-domain socket the kernel's part is the socket read and write, the "
            "wake-up of the reader and the scheduler: the TCP stack is out of the measurement. "
            "The user-space time is where the two servers' own code differs."
            if a.unix_socket else
            "Most of the kernel time is the loopback TCP path (one recvfrom and "
            "one sendto per query for both servers), which bounds how far apart the totals can be; "
            "the user-space time is where the two servers' own code differs."),
        "",
    ]
    for w in workloads:
        hot = " Canyon server threads | MariaDB server threads |" if a.hot_rows else ""
        lines += [f"### {w}", "",
                  "| threads | Canyon QPS | MariaDB QPS | QPS ratio (spread) | Canyon p95 ms | MariaDB p95 ms | "
                  "Canyon CPU µs/q (user+sys) | MariaDB CPU µs/q (user+sys) | CPU ratio (user ratio) | "
                  "Canyon cs/q | MariaDB cs/q |" + hot,
                  "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|" + ("---:|---:|" if a.hot_rows else "")]
        for t in threads:
            c = results.get((w, t, "Canyon"), [])
            m = results.get((w, t, "MariaDB"), [])
            if not c or not m or len(c) != len(m):
                lines.append(f"| {t} | not measured (the run stopped early) | | | | | | | | | |")
                continue
            ratios = [x["qps"] / y["qps"] for x, y in zip(c, m)]
            mean = lambda rs, k: statistics.mean(r[k] for r in rs)
            lines.append(
                f"| {t} | {mean(c, 'qps'):,.0f} | {mean(m, 'qps'):,.0f} | "
                f"{statistics.mean(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f}) | "
                f"{mean(c, 'p95_ms'):.2f} | {mean(m, 'p95_ms'):.2f} | "
                f"{mean(c, 'cpu_us_per_query'):.1f} ({mean(c, 'user_us_per_query'):.1f}+{mean(c, 'sys_us_per_query'):.1f}) | "
                f"{mean(m, 'cpu_us_per_query'):.1f} ({mean(m, 'user_us_per_query'):.1f}+{mean(m, 'sys_us_per_query'):.1f}) | "
                f"{mean(c, 'cpu_us_per_query') / mean(m, 'cpu_us_per_query'):.2f} "
                f"({mean(c, 'user_us_per_query') / mean(m, 'user_us_per_query'):.2f}) | "
                f"{cs(c)} | {cs(m)} |" + (
                    f" {max(r['threads'] for r in c)} | {max(r['threads'] for r in m)} |" if a.hot_rows else ""))
            errs = sum(r["errors"] for r in c + m)
            if errs:
                lines.append(f"|  | ignored errors in these runs: {errs} | | | | | | | | | |")
        lines.append("")
    section = "sysbench-hot" if a.hot_rows else "sysbench-unix" if a.unix_socket else "sysbench"
    write_section(a.out, section, "\n".join(lines), "bench/sysbench_compare.py")
    print(f"wrote the sysbench section of {a.out}")


if __name__ == "__main__":
    main()
