//! `report.md`: the run described in Markdown (the tables, the charts as
//! image links to `charts/`), ready to paste into docs/benchmarks.md.

use super::{tables, Chart, Table};
use crate::result::{RunReport, Status};
use std::fmt::Write;

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// A table in GitHub Markdown.
pub fn table_markdown(t: &Table) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "| {} |",
        t.headers
            .iter()
            .map(|h| cell(h))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    let _ = writeln!(s, "|{}", "---:|".repeat(t.headers.len()));
    for r in &t.rows {
        let _ = writeln!(
            s,
            "| {} |",
            r.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | ")
        );
    }
    s
}

/// The whole report.
pub fn render_markdown(r: &RunReport, charts: &[Chart]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# canyon bench: {} ({} shape)\n",
        r.plan.workload, r.plan.shape
    );
    if r.status == Status::Failed {
        let _ = writeln!(
            s,
            "**The run failed** — results up to the failure are below.\n\n```text\n{}\n```\n",
            r.error.as_deref().unwrap_or("unknown error")
        );
    }
    let _ = writeln!(s, "- Machine: {}", r.machine.summary());
    let _ = writeln!(
        s,
        "- Started {} by canyon-bench {}: `{}`",
        r.started_at,
        r.tool_version,
        r.command.join(" ")
    );
    let _ = writeln!(
        s,
        "- Workload `{}` {}; {} s measured per step after {} s warm-up; seed {}; {} round(s){}",
        r.plan.workload,
        r.plan.workload_params,
        r.plan.duration_s,
        r.plan.warmup_s,
        r.plan.seed,
        r.plan.rounds,
        r.plan
            .rate_per_client
            .map_or(String::new(), |x| format!("; {x} txn/s per client"))
    );
    for t in &r.targets {
        let _ = writeln!(
            s,
            "- Target {}: {} [{}] at {}{}",
            t.label,
            t.name,
            t.kind,
            t.endpoints.join(", "),
            t.server_version
                .as_deref()
                .map_or(String::new(), |v| format!(", version {v}"))
        );
    }
    s.push('\n');
    for c in charts {
        let _ = writeln!(s, "![{}](charts/{})\n", c.title, c.file);
    }
    for t in tables(r) {
        let _ = writeln!(s, "## {}\n", t.title);
        s.push_str(&table_markdown(&t));
        s.push('\n');
    }
    s.push_str(NOTES);
    s
}

/// How to read the columns (the long version is docs/bench.md).
pub const NOTES: &str = "\
Columns: user / sys / idle % are machine-wide (/proc/stat, all CPUs, client included); \
cs/txn are the server's voluntary + involuntary context switches per transaction \
(summed over its threads); syscalls/txn are the server's read- and write-family \
system calls per transaction from /proc/PID/io (syscr + syscw: read, write, pread, \
pwrite, readv, writev ... — not recv/send/recvfrom/sendto, so socket I/O done with \
those is not in it); server µs/txn is the server's user and system CPU per \
transaction; client µs/txn is this load generator's. Latency is per transaction, \
from an HDR histogram. See docs/bench.md.
";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::sample_report;

    #[test]
    fn markdown_has_tables_and_failure() {
        let mut r = sample_report();
        r.status = Status::Failed;
        r.error = Some("target A (canyon (local)), step 2 (threads 4): lost".into());
        let md = render_markdown(&r, &super::super::charts(&r));
        assert!(md.contains("**The run failed**"));
        assert!(md.contains("step 2 (threads 4): lost"));
        assert!(md.contains(
            "| threads | txn/s | relative | user % | sys % | idle % | cs/txn | syscalls/txn |"
        ));
        assert!(md.contains(
            "![oltp_read_write: throughput vs client threads](charts/throughput-vs-threads.svg)"
        ));
    }

    #[test]
    fn pipes_are_escaped() {
        let t = Table {
            title: String::new(),
            headers: vec!["a|b".into()],
            rows: vec![vec!["x|y".into()]],
        };
        assert_eq!(table_markdown(&t), "| a\\|b |\n|---:|\n| x\\|y |\n");
    }
}
