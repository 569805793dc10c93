#!/usr/bin/env python3
"""Tables of a bench/many_core.sh run, from the tool's own results.json files.

Each --run DIR is one many_core.sh output directory (DIR/cpus-point/results.json,
DIR/order-entry-2/results.json, ...); several runs of the same plan appear side
by side ("r1 / r2"), because on a shared or lent machine one run is not a
measurement. The tables go into the `many-core` section of --out (by default
docs/benchmarks.md), replacing only that section; commentary belongs outside it.

Usage: bench/many_core_report.py --run DIR [--run DIR ...]
           [--variant LABEL=DIR ...] [--out FILE]
  --variant: an order-entry run under other settings (e.g.
             "sync-periodically=DIR"), shown as an extra column.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_section import write_section  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load(run, part):
    path = os.path.join(run, part, "results.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def by_target(report):
    """Label -> target name, and the steps of each label."""
    names = {t["label"]: t["name"] for t in report["targets"]}
    steps = {}
    for s in report["steps"]:
        if s["status"] == "ok":
            steps.setdefault(s["target"], []).append(s)
    return names, steps


def server_us(s):
    srv = s.get("server") or {}
    u, y = srv.get("user_us_per_txn"), srv.get("sys_us_per_txn")
    if u is None or y is None:
        return None
    return u, y


def fmt_num(v):
    return "—" if v is None else f"{v:,.0f}"


def fmt_us(uy):
    return "—" if uy is None else f"{uy[0] + uy[1]:.1f}"


def joined(values, fmt):
    return " / ".join(fmt(v) for v in values) if values else "—"


def cpu_sweep(runs, part, title):
    """Canyon (A) against MariaDB (B), by server CPUs, one column per run."""
    reports = [r for r in (load(run, part) for run in runs) if r]
    if not reports:
        return []
    rows = {}
    for rep in reports:
        _, steps = by_target(rep)
        for label, ss in steps.items():
            for s in ss:
                rows.setdefault(s["cpus"], {}).setdefault(label, []).append(s)
    threads = reports[0]["steps"][0]["threads"]
    lines = [f"### {title}: servers on 1 … k CPUs, {threads} clients", "",
             "| server CPUs | Canyon txn/s | MariaDB txn/s | Canyon ÷ MariaDB | Canyon server µs/txn "
             "| MariaDB server µs/txn | client µs/txn (Canyon / MariaDB runs) | machine idle % (Canyon) |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for cpus in sorted(rows):
        a, b = rows[cpus].get("A", []), rows[cpus].get("B", [])
        ratios = [x["txn_per_s"] / y["txn_per_s"] for x, y in zip(a, b) if y["txn_per_s"] > 0]
        client = [s["client"]["cpu_us_per_txn"] for s in a + b if s.get("client")]
        lines.append(
            f"| {cpus} | {joined([s['txn_per_s'] for s in a], fmt_num)} "
            f"| {joined([s['txn_per_s'] for s in b], fmt_num)} "
            f"| {joined(ratios, lambda v: f'{v:.2f}')} "
            f"| {joined([server_us(s) for s in a], fmt_us)} "
            f"| {joined([server_us(s) for s in b], fmt_us)} "
            f"| {joined(client, lambda v: f'{v:.1f}')} "
            f"| {joined([s['machine']['idle_pct'] for s in a if s.get('machine')], lambda v: f'{v:.0f}')} |")
    return lines + [""]


def order_entry(runs, variants):
    parts = ["order-entry-1", "order-entry-2", "order-entry-4"]
    extra = sorted({d for run in runs for d in os.listdir(run) if d.startswith("order-entry-1x")})
    cols = [(label, d) for label, d in variants]
    lines = ["### Order-entry on N pinned instances (16 clients per instance)", "",
             "| instances | server CPUs | txn/s (runs) | ÷ one instance | server µs/txn | client µs/txn | idle % |"
             + "".join(f" {label} txn/s | ÷ one |" for label, _ in cols),
             "|---:|---:|---:|---:|---:|---:|---:|" + "---:|---:|" * len(cols)]
    base = [load(run, "order-entry-1") for run in runs]
    base_tps = [r["steps"][0]["txn_per_s"] if r else None for r in base]
    vbase = [load(d, "order-entry-1") for _, d in cols]
    for part in parts + extra:
        reps = [load(run, part) for run in runs]
        steps = [r["steps"][0] if r else None for r in reps]
        if not any(steps):
            continue
        name = next(r for r in reps if r)["targets"][0]["name"]
        shards = len(next(r for r in reps if r)["targets"][0]["endpoints"])
        per = name.split(", ")[-1].split(" ")[0] if "CPUs each" in name else "?"
        cpus = int(per) * shards if per.isdigit() else "?"
        label = f"1 on {cpus}" if part.startswith("order-entry-1x") else str(shards)
        tps = [s["txn_per_s"] if s else None for s in steps]
        ratio = [t / b if t and b else None for t, b in zip(tps, base_tps)]
        row = (f"| {label} | {cpus} | {joined(tps, fmt_num)} "
               f"| {'—' if label.startswith('1 on') else joined(ratio, lambda v: '—' if v is None else f'{v:.2f}')} "
               f"| {joined([server_us(s) if s else None for s in steps], fmt_us)} "
               f"| {joined([s['client']['cpu_us_per_txn'] if s and s.get('client') else None for s in steps], lambda v: '—' if v is None else f'{v:.1f}')} "
               f"| {joined([s['machine']['idle_pct'] if s and s.get('machine') else None for s in steps], lambda v: '—' if v is None else f'{v:.0f}')} |")
        for (_, d), vb in zip(cols, vbase):
            vr = load(d, part)
            vt = vr["steps"][0]["txn_per_s"] if vr else None
            vbt = vb["steps"][0]["txn_per_s"] if vb else None
            vratio = "—" if label.startswith("1 on") or not (vt and vbt) else f"{vt / vbt:.2f}"
            row += f" {fmt_num(vt)} | {vratio} |"
        lines.append(row)
    return lines + [""]


def connections(runs):
    parts = [("conn-canyon", "Canyon"), ("conn-mariadb-threads", "MariaDB thread-per-connection"),
             ("conn-mariadb-pool", "MariaDB pool-of-threads")]
    data = {}
    for part, label in parts:
        for run in runs:
            r = load(run, part)
            if not r:
                continue
            for s in r["steps"]:
                if s["status"] == "ok":
                    data.setdefault(s["connections"], {}).setdefault(label, []).append(s)
    if not data:
        return []
    present = [label for _, label in parts if any(label in v for v in data.values())]
    first = min(data)
    lines = ["### Connection sweep: 16 active clients, more and more open connections", "",
             "| open connections | " + " | ".join(f"{p} q/s | µs/q | RSS MiB" for p in present)
             + " | Canyon ÷ its first step |",
             "|---:|" + "---:|---:|---:|" * len(present) + "---:|"]
    for c in sorted(data):
        row = f"| {c:,} |"
        for p in present:
            ss = data[c].get(p, [])
            row += (f" {joined([s['queries_per_s'] for s in ss], fmt_num)} "
                    f"| {joined([server_us(s) for s in ss], fmt_us)} "
                    f"| {joined([s['server']['rss_bytes'] / 2**20 for s in ss if s.get('server')], lambda v: f'{v:.0f}')} |")
        cs = data[c].get("Canyon", [])
        c0 = data[first].get("Canyon", [])
        rel = [x["queries_per_s"] / y["queries_per_s"] for x, y in zip(cs, c0) if y["queries_per_s"]]
        row += f" {joined(rel, lambda v: f'{v:.2f}')} |"
        lines.append(row)
    return lines + [""]


def machine(runs):
    for run in runs:
        for part in sorted(os.listdir(run)):
            r = load(run, part)
            if r:
                m = r["machine"]
                return (f"{m['cpus']} CPUs ({m['cpu_model']}), {m['memory_bytes'] / 2**30:.0f} GiB RAM, "
                        f"Linux {m['kernel']}; canyon bench {r['tool_version']}")
    return "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", action="append", required=True, help="a many_core.sh output directory")
    ap.add_argument("--variant", action="append", default=[], help="LABEL=DIR: order-entry under other settings")
    ap.add_argument("--out", default=os.path.join(REPO, "docs", "benchmarks.md"))
    a = ap.parse_args()
    variants = []
    for v in a.variant:
        label, _, d = v.partition("=")
        if not d:
            sys.exit(f"--variant {v!r}: expected LABEL=DIR")
        variants.append((label, d))
    lines = ["## Many-core runs (bench/many_core.sh)", "",
             "Written by `bench/many_core_report.py` from the tool's results.json files; "
             f"{len(a.run)} run(s) of the plan, side by side where several exist (\"r1 / r2\"). "
             "Servers on the first half of the CPUs, the load generator on the second (taskset). "
             "CPU per transaction is the server processes' user+sys time over the step.", "",
             f"**Machine:** {machine(a.run)}.", ""]
    lines += cpu_sweep(a.run, "cpus-point", "oltp_point_select")
    lines += cpu_sweep(a.run, "cpus-rw", "oltp_read_write")
    lines += order_entry(a.run, variants)
    lines += connections(a.run)
    write_section(a.out, "many-core", "\n".join(lines), "bench/many_core_report.py")
    print(f"wrote the many-core section of {a.out}")


if __name__ == "__main__":
    main()
