#!/usr/bin/env python3
"""Side-by-side TPC-C benchmark with go-tpc v1.0.12: Canyon vs MariaDB on this machine.

Starts a fresh Canyon (the release binary) and a fresh MariaDB 10.11 (temporary
data directory, innodb_flush_log_at_trx_commit=1 — the same durability as
Canyon's default sync-every-commit), loads N warehouses into each once with
`go-tpc tpcc prepare`, then runs `go-tpc tpcc run` at each thread count,
alternating the servers (Canyon, MariaDB, Canyon, MariaDB, ...) so that drift on
a shared machine hits both alike. Afterwards `go-tpc tpcc check` verifies the
TPC-C consistency conditions on each server, and the report is written as a
Markdown section to --out.

Per run it records tpmC (New-Order transactions per minute), tpmTotal, average /
p95 / p99 latency per transaction type from go-tpc's summary, transactions that
failed (go-tpc's `_ERR` counts; runs use --ignore-error), and the server's CPU
time per transaction: the delta of utime+stime in /proc/PID/stat from just before
go-tpc starts to just after it exits, divided by the transactions it completed.

Usage: bench/tpcc_compare.py [--warehouses 4] [--threads 1,8,32] [--time 60]
       [--rounds 2] [--only canyon|mariadb] [--canyon PATH] [--go-tpc PATH]
       [--out docs/benchmarks.md] [--note TEXT]

This is a benchmark, not a test: nothing here asserts a timing.
"""

from report_section import write_section
import argparse
import os
import platform
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GO_TPC_VERSION = "v1.0.12"
# Canyon's row cache in these runs: with the 512 MiB block cache, MariaDB's 2 GiB.
CANYON_ROW_CACHE_BYTES = 1536 << 20
TXN_TYPES = ["NEW_ORDER", "PAYMENT", "ORDER_STATUS", "DELIVERY", "STOCK_LEVEL"]
DB = "tpcc"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_ticks(pid):
    """utime + stime of the process (all its threads, live and exited), in ticks."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # fields[0] is field 3 (state); utime is field 14, stime field 15.
    return int(fields[11]), int(fields[12])


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

    def __init__(self, binary, workdir):
        self.binary = binary
        self.port = free_port()
        self.user = "root"
        self.password = "bench"
        self.dir = os.path.join(workdir, "canyon")
        # The memory MariaDB gets (a 2 GiB buffer pool): a 1.5 GiB row cache
        # plus the default 512 MiB block cache. With the default 256 MiB row
        # cache, 2 warehouses already miss it on half the point reads.
        env = dict(os.environ, CANYON_ROOT_PASSWORD=self.password, RUST_LOG="warn",
                   CANYON_ROW_CACHE_BYTES=str(CANYON_ROW_CACHE_BYTES))
        self.proc = subprocess.Popen(
            [binary, "serve", "--data-dir", self.dir, "--port", str(self.port), "--bind", "127.0.0.1"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(workdir, "canyon.log"), "w"),
        )
        wait_port(self.port, self.proc)

    def version(self):
        return subprocess.run([self.binary, "--version"], capture_output=True, text=True).stdout.strip()

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)


class MariaDB:
    name = "MariaDB"

    def __init__(self, workdir):
        self.port = free_port()
        self.dir = os.path.join(workdir, "mariadb")
        self.sock = os.path.join(workdir, "mariadb.sock")
        os.makedirs(self.dir)
        subprocess.run(
            ["mariadb-install-db", "--no-defaults", f"--datadir={self.dir}", "--user=root",
             "--auth-root-authentication-method=socket", "--skip-test-db"],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        self.proc = subprocess.Popen(
            ["mariadbd", "--no-defaults", f"--datadir={self.dir}", f"--port={self.port}",
             f"--socket={self.sock}", "--user=root", "--bind-address=127.0.0.1",
             "--skip-name-resolve", "--character-set-server=utf8mb4",
             "--innodb-flush-log-at-trx-commit=1", "--innodb-buffer-pool-size=2G",
             "--innodb-log-file-size=512M", "--max-connections=2000",
             "--max-prepared-stmt-count=1048576", "--skip-log-bin", "--performance-schema=OFF"],
            stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(workdir, "mariadb.log"), "w"),
        )
        wait_port(self.port, self.proc)
        self.user = "tpcc"
        self.password = "tpcc"
        subprocess.run(
            ["mariadb", "-S", self.sock, "-uroot", "-e",
             "CREATE USER 'tpcc'@'%' IDENTIFIED BY 'tpcc'; GRANT ALL ON *.* TO 'tpcc'@'%'"],
            check=True,
        )

    def version(self):
        return subprocess.run(["mariadbd", "--version"], capture_output=True, text=True).stdout.strip()

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=60)


def sql(server, stmt, db=None):
    cmd = ["mariadb", "--no-defaults", "--protocol=TCP", "-h127.0.0.1", f"-P{server.port}",
           f"-u{server.user}", f"-p{server.password}", "-A", "-e", stmt]
    if db:
        cmd.append(db)
    subprocess.run(cmd, check=True)


def go_tpc(a, server, threads, *args, timeout=None):
    """Runs `go-tpc tpcc ARGS` and returns what it printed (stdout and stderr)."""
    cmd = [a.go_tpc, "tpcc", "-H", "127.0.0.1", "-P", str(server.port), "-U", server.user,
           "-p", server.password, "-D", DB, "--warehouses", str(a.warehouses), "-T", str(threads),
           *args]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    out = r.stdout + r.stderr
    if r.returncode != 0:
        raise RuntimeError(f"go-tpc {' '.join(args)} on {server.name} exited {r.returncode}:\n{out}")
    return out


def problems(out, allowed):
    """Lines go-tpc printed that are neither benign nor `allowed` (it exits 0 even
    when a check fails or a statement errs, so its output is what tells)."""
    bad = []
    for line in out.splitlines():
        l = line.strip()
        if not l or l == "Finished" or " maxprocs: " in l or allowed(l):
            continue
        bad.append(l)
    return bad


def prepare(a, server):
    sql(server, f"DROP DATABASE IF EXISTS {DB}; CREATE DATABASE {DB}")
    t0 = time.time()
    # --retry-count 1: go-tpc's loader drops a failed batch silently when it does
    # not retry; with a retry it prints the error first.
    out = go_tpc(a, server, a.load_threads, "prepare", "--no-check", "--retry-count", "1",
                 "--retry-interval", "1s", timeout=3600)
    bad = problems(out, lambda l: l.startswith(("creating table ", "load to ")))
    if bad:
        raise RuntimeError(f"go-tpc prepare on {server.name} printed errors:\n" + "\n".join(bad[:30]))
    return time.time() - t0


SUMMARY = re.compile(r"^\[Summary\] (\w+) - (.*)$")


def parse_run(out):
    types = {}
    for line in out.splitlines():
        m = SUMMARY.match(line.strip())
        if not m:
            continue
        fields = dict(f.split(": ", 1) for f in m.group(2).split(", "))
        types[m.group(1)] = {k: float(v) for k, v in fields.items()}
    tpmc = re.search(r"^tpmC: ([\d.]+), tpmTotal: ([\d.]+)", out, re.M)
    if not tpmc:
        raise RuntimeError(f"no tpmC in go-tpc's output:\n{out[-3000:]}")
    return {
        "tpmC": float(tpmc.group(1)),
        "tpmTotal": float(tpmc.group(2)),
        "types": types,
        "txns": sum(types.get(t, {}).get("Count", 0) for t in TXN_TYPES),
        "errors": sum(types.get(t + "_ERR", {}).get("Count", 0) for t in TXN_TYPES),
    }


def measured_run(a, server, threads):
    before = cpu_ticks(server.proc.pid)
    out = go_tpc(a, server, threads, "run", "--time", f"{a.time}s", "--ignore-error",
                 "--interval", "1h", timeout=a.time + 600)
    after = cpu_ticks(server.proc.pid)
    r = parse_run(out)
    n = max(r["txns"], 1)
    r["user_us"] = (after[0] - before[0]) / CLK_TCK * 1e6 / n
    r["sys_us"] = (after[1] - before[1]) / CLK_TCK * 1e6 / n
    r["cpu_us"] = r["user_us"] + r["sys_us"]
    # Distinct error messages (timestamps stripped), for the report.
    errs = {}
    for line in out.splitlines():
        if "execute run failed, err" in line:
            key = re.sub(r"^\[[^\]]*\] ", "", line.strip())
            # The server's error (number and message) ends the line, after the
            # whole statement: keep it, and the statement's start.
            m = re.search(r"(Error \d+.*)$", key)
            if m:
                stmt = re.sub(r"^.*?err (exec |query )?", "", key)[:90]
                key = f"{m.group(1)[:200]} (in: {stmt} ...)"
            else:
                key = key[:300]
            errs[key] = errs.get(key, 0) + 1
    r["error_lines"] = errs
    return r


def check(a, server):
    """`go-tpc tpcc check` after the runs: the conditions that hold after a run.
    Condition 3.3.2.10 sums each customer's history in a correlated subquery that
    go-tpc's schema has no index for (a full scan of history per customer, minutes
    per warehouse), so the index is added now, after the measured runs."""
    sql(server, "CREATE INDEX idx_h_customer ON history (h_c_w_id, h_c_d_id, h_c_id)", db=DB)
    out = go_tpc(a, server, a.load_threads, "check", timeout=3600)
    bad = problems(out, lambda l: l.startswith("begin to check warehouse "))
    checked = len(set(re.findall(r"^begin to check warehouse (\d+) at condition (\S+)", out, re.M)))
    if checked != a.warehouses * 11:
        bad.append(f"{checked} condition × warehouse checks ran, not {a.warehouses * 11}")
    return {"ok": not bad, "checked": checked, "problems": bad[:10]}


def machine():
    def lscpu(field):
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        m = re.search(rf"^{re.escape(field)}:\s*(.+)$", out, re.M)
        return m.group(1).strip() if m else "?"
    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (f"{lscpu('Model name')}, {os.cpu_count()} CPUs ({lscpu('Core(s) per socket')} cores per "
            f"socket × {lscpu('Socket(s)')} socket(s), {lscpu('Thread(s) per core')} thread(s) per core"
            f"{', ' + lscpu('Hypervisor vendor') + ' guest' if lscpu('Hypervisor vendor') != '?' else ''}), "
            f"{mem_gib:.0f} GiB RAM, Linux {platform.release()}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--warehouses", type=int, default=4)
    ap.add_argument("--threads", default="1,8,32")
    ap.add_argument("--time", type=int, default=60, help="seconds per run")
    ap.add_argument("--rounds", type=int, default=2, help="runs per server and thread count")
    ap.add_argument("--load-threads", type=int, default=4, help="go-tpc threads for prepare and check")
    ap.add_argument("--only", choices=["canyon", "mariadb"], help="benchmark one server alone")
    ap.add_argument("--canyon", default=os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/canyon-target")), "release", "canyon"))
    ap.add_argument("--go-tpc", default=os.environ.get(
        "CANYON_GO_TPC", os.path.expanduser("~/.cache/canyon-tools/go-tpc")))
    ap.add_argument("--out", default=os.path.join(REPO, "docs", "benchmarks.md"))
    ap.add_argument("--note", help="a remark for the report, e.g. on what else ran on the machine")
    a = ap.parse_args()
    # A SIGTERM (e.g. from `timeout`) unwinds like an exception, so that the
    # servers started below are stopped rather than left running.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    a.thread_list = [int(t) for t in a.threads.split(",")]
    if not os.access(a.go_tpc, os.X_OK):
        sys.exit(f"go-tpc not found at {a.go_tpc}: run scripts/install-deps.sh or pass --go-tpc")

    work = tempfile.mkdtemp(prefix="canyon-tpcc-")
    servers = []
    try:
        if a.only != "mariadb":
            servers.append(Canyon(a.canyon, work))
        if a.only != "canyon":
            servers.append(MariaDB(work))
        info = {"versions": {s.name: s.version() for s in servers}, "load_s": {}, "check": {}}
        for s in servers:
            print(f"loading {a.warehouses} warehouses into {s.name} ...", flush=True)
            info["load_s"][s.name] = prepare(a, s)
            print(f"  {info['load_s'][s.name]:.0f} s", flush=True)
        results = {}  # (threads, server) -> list of runs
        try:
            run_plan(a, servers, results)
            for s in servers:
                print(f"checking {s.name} ...", flush=True)
                info["check"][s.name] = check(a, s)
                c = info["check"][s.name]
                print(f"  {'passed' if c['ok'] else 'FAILED'} ({c['checked']} conditions checked)", flush=True)
        finally:
            # Whatever was measured is written, even if a later step failed.
            write_report(a, servers, results, info)
    finally:
        for s in servers:
            try:
                s.stop()
            except Exception as e:  # keep cleaning up
                print(f"stopping {s.name}: {e}", file=sys.stderr)
        shutil.rmtree(work, ignore_errors=True)


def run_plan(a, servers, results):
    """Every thread count runs on each server in turn, `rounds` times:
    Canyon, MariaDB, Canyon, MariaDB, ..."""
    for t in a.thread_list:
        for _ in range(a.rounds):
            for s in servers:
                r = measured_run(a, s, t)
                results.setdefault((t, s.name), []).append(r)
                print(f"{t:3} threads {s.name:8} tpmC {r['tpmC']:9.0f}  tpmTotal {r['tpmTotal']:9.0f}  "
                      f"cpu {r['user_us']:7.0f}+{r['sys_us']:6.0f} us/txn  errors {r['errors']:.0f}",
                      flush=True)
                for line, n in sorted(r["error_lines"].items(), key=lambda kv: -kv[1])[:5]:
                    print(f"      {n} x {line}", flush=True)


def mean(runs, f):
    return statistics.mean(f(r) for r in runs)


def write_report(a, servers, results, info):
    names = [s.name for s in servers]
    both = names == ["Canyon", "MariaDB"]
    lines = [
        "## TPC-C (go-tpc)",
        "",
        f"Produced by `bench/tpcc_compare.py{' --only ' + a.only if a.only else ''}`; re-run it to refresh "
        f"this section. go-tpc {GO_TPC_VERSION} (PingCAP's TPC-C client, prepared statements over the "
        f"MySQL protocol), {a.warehouses} warehouse(s) loaded once per server, then runs of {a.time} s at "
        f"each thread count, {a.rounds} per server and thread count, alternating {' and '.join(names)}; "
        "each figure is the mean over the runs. The data grows with every run (New-Order inserts), so later runs work on "
        "slightly more data. No keying or think time (`--wait` off): every client thread sends its next "
        "transaction at once.",
        "",
        f"**Machine:** {machine()}; client and servers on the same machine over loopback.",
        "",
        "**Versions:** " + "; ".join(f"{v}" for v in info["versions"].values()) + f"; go-tpc {GO_TPC_VERSION}.",
        "",
        "**Setup:** MariaDB with innodb_flush_log_at_trx_commit=1, 2 GiB buffer pool (all data in "
        "memory), no binlog, performance schema off. Canyon with its default durability (sync every "
        "commit, group commit) on RocksDB and the same memory: a 1.5 GiB row cache and its default "
        "512 MiB block cache. CPU per transaction is the server process's utime+stime "
        "(/proc/PID/stat) over the whole run, divided by the transactions go-tpc completed (all five "
        "types). go-tpc's latency histograms keep one significant digit, so the percentiles are coarse "
        "(1.0, 1.6, 3.1, ... ms).",
        "",
        *([f"**Note:** {a.note}", ""] if a.note else []),
        "**Load:** " + "; ".join(f"{n} {info['load_s'][n]:.0f} s" for n in names if n in info["load_s"])
        + f" (`go-tpc tpcc prepare`, {a.load_threads} threads).",
        "",
    ]
    if info["check"]:
        parts = []
        for n in names:
            c = info["check"].get(n)
            if c is None:
                parts.append(f"{n}: not run")
            elif c["ok"]:
                parts.append(f"{n}: passed ({c['checked']} condition × warehouse checks)")
            else:
                parts.append(f"{n}: **FAILED**: " + "; ".join(c["problems"]))
        lines += ["**Consistency after the runs** (`go-tpc tpcc check`, TPC-C 3.3.2 conditions 1–10 "
                  "and 12): " + "; ".join(parts) + ".", ""]

    header = ["threads"]
    for n in names:
        header += [f"{n} tpmC", f"{n} tpmTotal"]
    if both:
        header.append("tpmC ratio (spread)")
    for n in names:
        header.append(f"{n} CPU µs/txn (user+sys)")
    if both:
        header.append("CPU ratio")
    for n in names:
        header.append(f"{n} failed txns")
    lines += ["### Throughput and server CPU", "", "| " + " | ".join(header) + " |",
              "|" + "---:|" * len(header)]
    for t in a.thread_list:
        runs = {n: results.get((t, n), []) for n in names}
        if any(not r for r in runs.values()) or len({len(r) for r in runs.values()}) != 1:
            lines.append(f"| {t} | not measured (the run stopped early) |" + " |" * (len(header) - 2))
            continue
        row = [str(t)]
        for n in names:
            row += [f"{mean(runs[n], lambda r: r['tpmC']):,.0f}", f"{mean(runs[n], lambda r: r['tpmTotal']):,.0f}"]
        if both:
            ratios = [c["tpmC"] / m["tpmC"] for c, m in zip(runs["Canyon"], runs["MariaDB"]) if m["tpmC"]]
            row.append(f"{statistics.mean(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f})" if ratios else "n/a")
        for n in names:
            row.append(f"{mean(runs[n], lambda r: r['cpu_us']):,.0f} ({mean(runs[n], lambda r: r['user_us']):,.0f}"
                       f"+{mean(runs[n], lambda r: r['sys_us']):,.0f})")
        if both:
            m = mean(runs["MariaDB"], lambda r: r["cpu_us"])
            row.append(f"{mean(runs['Canyon'], lambda r: r['cpu_us']) / m:.2f}" if m else "n/a")
        for n in names:
            row.append(f"{sum(r['errors'] for r in runs[n]):.0f}")
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")

    lines += ["### Latency per transaction type (ms: avg / p95 / p99)", ""]
    header = ["threads", "transaction"] + [f"{n}" for n in names]
    if both:
        header.append("avg ratio")
    lines += ["| " + " | ".join(header) + " |", "|---:|:---|" + "---:|" * (len(header) - 2)]
    for t in a.thread_list:
        runs = {n: results.get((t, n), []) for n in names}
        if any(not r for r in runs.values()):
            continue
        for ty in TXN_TYPES:
            row = [str(t), ty]
            avg = {}
            for n in names:
                have = [r["types"][ty] for r in runs[n] if ty in r["types"]]
                if not have:
                    row.append("none completed")
                    continue
                avg[n] = statistics.mean(h["Avg(ms)"] for h in have)
                row.append(f"{avg[n]:.1f} / {statistics.mean(h['95th(ms)'] for h in have):.1f} / "
                           f"{statistics.mean(h['99th(ms)'] for h in have):.1f}")
            if both:
                row.append(f"{avg['Canyon'] / avg['MariaDB']:.2f}" if len(avg) == 2 and avg["MariaDB"] else "n/a")
            lines.append("| " + " | ".join(row) + " |")
    lines.append("")

    errs = {}
    for (t, n), runs in results.items():
        for r in runs:
            for line, k in r["error_lines"].items():
                errs[(n, line)] = errs.get((n, line), 0) + k
    if errs:
        lines += ["### Failed transactions", "", "go-tpc's messages, most frequent first "
                  "(deadlocks, ERR 1213, are rolled back and not retried by go-tpc):", ""]
        for (n, line), k in sorted(errs.items(), key=lambda kv: -kv[1])[:15]:
            lines.append(f"- {n}, {k} ×: `{line}`")
        lines.append("")

    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    write_section(a.out, "tpcc", "\n".join(lines), "bench/tpcc_compare.py")
    print(f"wrote the tpcc section of {a.out}")


if __name__ == "__main__":
    main()
