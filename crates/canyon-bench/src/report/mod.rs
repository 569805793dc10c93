//! Output: `results.json` (the whole run, schema `canyon-bench/1`, rewritten
//! after every step), `steps.jsonl` (one step per line, appended as steps
//! finish), `report.md` (the tables), `charts/*.svg` and `report.html` (one
//! self-contained page: the charts inline, the tables, no external resources).
//!
//! The tables are built once ([`tables`]) and rendered twice (Markdown, HTML).

mod chart;
mod html;
mod markdown;

pub use chart::{charts, render_svg, Chart, Series, Style};
pub use html::render_html;
pub use markdown::{render_markdown, table_markdown};

use crate::result::{RunReport, Status, StepResult};
use std::io::Write;
use std::path::Path;

/// A table: column headers and rows of already formatted cells.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Caption (a heading above the table).
    pub title: String,
    /// Column headers.
    pub headers: Vec<String>,
    /// Rows.
    pub rows: Vec<Vec<String>>,
}

fn f1(v: f64) -> String {
    format!("{v:.1}")
}

fn f2(v: f64) -> String {
    format!("{v:.2}")
}

/// The step's key columns: threads always; connections, CPUs and the rate when
/// the plan varies them.
fn key_headers(report: &RunReport) -> Vec<String> {
    let mut h = vec!["threads".to_string()];
    match report.plan.shape.as_str() {
        "connections" => h.push("connections".into()),
        "cpus" => h.push("cpus".into()),
        "paced" => h.push("txn/s per client".into()),
        _ => {}
    }
    if report.plan.rounds > 1 {
        h.push("round".into());
    }
    h
}

fn key_cells(report: &RunReport, s: &StepResult) -> Vec<String> {
    let mut c = vec![s.threads.to_string()];
    match report.plan.shape.as_str() {
        "connections" => c.push(s.connections.to_string()),
        "cpus" => c.push(s.cpus.map_or("all".into(), |v| v.to_string())),
        "paced" => c.push(s.rate_per_client.map_or(String::new(), f1)),
        _ => {}
    }
    if report.plan.rounds > 1 {
        c.push(s.round.to_string());
    }
    c
}

/// The report's tables: per target the classic scaling table (threads, txn/s,
/// user, sys, idle, context switches and syscalls per transaction) and a
/// latency-and-cost table; then the comparison, if any.
pub fn tables(report: &RunReport) -> Vec<Table> {
    let mut out = Vec::new();
    for t in &report.targets {
        let steps: Vec<&StepResult> = report
            .steps
            .iter()
            .filter(|s| s.target == t.label)
            .collect();
        if steps.is_empty() {
            continue;
        }
        let mut headers = key_headers(report);
        headers.extend(
            [
                "txn/s",
                "relative",
                "user %",
                "sys %",
                "idle %",
                "cs/txn",
                "syscalls/txn",
            ]
            .map(String::from),
        );
        let rows = steps
            .iter()
            .map(|s| {
                let mut r = key_cells(report, s);
                r.push(f1(s.txn_per_s));
                r.push(f2(s.relative_throughput));
                r.push(f1(s.machine.user_pct));
                r.push(f1(s.machine.sys_pct));
                r.push(f1(s.machine.idle_pct));
                match &s.server {
                    Some(v) => {
                        r.push(f2(v.voluntary_cs_per_txn + v.involuntary_cs_per_txn));
                        r.push(if v.io_readable {
                            f2(v.syscr_per_txn + v.syscw_per_txn)
                        } else {
                            "n/a".into()
                        });
                    }
                    None => r.extend(["-".to_string(), "-".to_string()]),
                }
                if s.status == Status::Failed {
                    r[0] = format!("{} (failed)", r[0]);
                }
                r
            })
            .collect();
        out.push(Table {
            title: format!("{}: {} — scaling", t.label, t.name),
            headers,
            rows,
        });

        let mut headers = key_headers(report);
        headers.extend(
            [
                "q/s",
                "p50 ms",
                "p95 ms",
                "p99 ms",
                "max ms",
                "server user µs/txn",
                "server sys µs/txn",
                "vol cs/txn",
                "invol cs/txn",
                "read sc/txn",
                "write sc/txn",
                "server RSS MiB",
                "client µs/txn",
                "errors",
            ]
            .map(String::from),
        );
        let rows = steps
            .iter()
            .map(|s| {
                let mut r = key_cells(report, s);
                r.push(f1(s.queries_per_s));
                for v in [
                    s.latency_ms.p50,
                    s.latency_ms.p95,
                    s.latency_ms.p99,
                    s.latency_ms.max,
                ] {
                    r.push(f2(v));
                }
                match &s.server {
                    Some(v) => {
                        r.push(f1(v.user_us_per_txn));
                        r.push(f1(v.sys_us_per_txn));
                        r.push(f2(v.voluntary_cs_per_txn));
                        r.push(f2(v.involuntary_cs_per_txn));
                        r.push(f2(v.syscr_per_txn));
                        r.push(f2(v.syscw_per_txn));
                        r.push(f1(v.rss_bytes as f64 / (1u64 << 20) as f64));
                    }
                    None => r.extend(std::iter::repeat_n("-".to_string(), 7)),
                }
                r.push(f1(s.client.cpu_us_per_txn));
                r.push(if s.errors.is_empty() {
                    "0".into()
                } else {
                    s.errors
                        .iter()
                        .map(|(c, n)| format!("{c}×{n}"))
                        .collect::<Vec<_>>()
                        .join(" ")
                });
                r
            })
            .collect();
        out.push(Table {
            title: format!("{}: {} — latency and cost per transaction", t.label, t.name),
            headers,
            rows,
        });
    }
    if let Some(c) = &report.comparison {
        let names = [
            ("txn_per_s", "txn/s"),
            ("latency_p95_ms", "p95"),
            ("latency_p99_ms", "p99"),
            ("server_cpu_us_per_txn", "server CPU/txn"),
            ("server_cs_per_txn", "cs/txn"),
            ("server_syscalls_per_txn", "syscalls/txn"),
        ];
        let mut headers = vec!["step".to_string(), "threads".into()];
        match report.plan.shape.as_str() {
            "connections" => headers.push("connections".into()),
            "cpus" => headers.push("cpus".into()),
            _ => {}
        }
        headers.extend(names.iter().map(|(_, h)| format!("{h} {}/{}", c.b, c.a)));
        let rows = c
            .steps
            .iter()
            .map(|s| {
                let mut r = vec![s.step.to_string(), s.threads.to_string()];
                match report.plan.shape.as_str() {
                    "connections" => r.push(s.connections.to_string()),
                    "cpus" => r.push(s.cpus.map_or("all".into(), |v| v.to_string())),
                    _ => {}
                }
                for (key, _) in names {
                    r.push(match s.figures.get(key) {
                        Some(x) if x.n > 1 => format!(
                            "{:.3} ({:.3}–{:.3}, sd {:.3})",
                            x.mean, x.min, x.max, x.stddev
                        ),
                        Some(x) => format!("{:.3}", x.mean),
                        None => "-".into(),
                    });
                }
                r
            })
            .collect();
        let (na, nb) = (target_name(report, &c.a), target_name(report, &c.b));
        out.push(Table {
            title: format!(
                "Comparison: {} ({nb}) / {} ({na}), mean of {} round(s) (min–max, standard deviation)",
                c.b, c.a, c.rounds
            ),
            headers,
            rows,
        });
    }
    out
}

fn target_name(report: &RunReport, label: &str) -> String {
    report
        .targets
        .iter()
        .find(|t| t.label == label)
        .map_or_else(|| label.to_owned(), |t| t.name.clone())
}

/// Writes `results.json` (atomically: a temporary file renamed over it).
pub fn write_json(dir: &Path, report: &RunReport) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let text = serde_json::to_string_pretty(report).map_err(std::io::Error::other)?;
    let tmp = dir.join("results.json.tmp");
    std::fs::write(&tmp, text + "\n")?;
    std::fs::rename(tmp, dir.join("results.json"))
}

/// Reads `results.json` back from a results directory (or the file itself).
pub fn read_json(path: &Path) -> Result<RunReport, String> {
    let file = if path.is_dir() {
        path.join("results.json")
    } else {
        path.to_owned()
    };
    let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))
}

/// Appends one step to `steps.jsonl`.
pub fn append_jsonl(dir: &Path, step: &StepResult) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("steps.jsonl"))?;
    let line = serde_json::to_string(step).map_err(std::io::Error::other)?;
    f.write_all(format!("{line}\n").as_bytes())
}

/// Writes `results.json`, `report.md`, `charts/*.svg` and `report.html`;
/// problems are printed, not returned (the results file matters most and is
/// written first).
pub fn write_all(dir: &Path, report: &RunReport) {
    let mut problems = Vec::new();
    if let Err(e) = write_json(dir, report) {
        problems.push(format!("results.json: {e}"));
    }
    let mut svgs = Vec::new();
    for c in charts(report) {
        match render_svg(&c) {
            Ok(svg) => svgs.push((c, svg)),
            Err(e) => problems.push(format!("chart {}: {e}", c.file)),
        }
    }
    let chart_dir = dir.join("charts");
    if !svgs.is_empty() {
        if let Err(e) = std::fs::create_dir_all(&chart_dir) {
            problems.push(format!("{}: {e}", chart_dir.display()));
        }
    }
    for (c, svg) in &svgs {
        if let Err(e) = std::fs::write(chart_dir.join(c.file), svg) {
            problems.push(format!("charts/{}: {e}", c.file));
        }
    }
    let md = render_markdown(
        report,
        &svgs.iter().map(|(c, _)| c.clone()).collect::<Vec<_>>(),
    );
    if let Err(e) = std::fs::write(dir.join("report.md"), md) {
        problems.push(format!("report.md: {e}"));
    }
    if let Err(e) = std::fs::write(dir.join("report.html"), render_html(report, &svgs)) {
        problems.push(format!("report.html: {e}"));
    }
    for p in problems {
        eprintln!("canyon bench: cannot write {p}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::sample_report;

    #[test]
    fn classic_table_columns() {
        let r = sample_report();
        let t = tables(&r);
        assert_eq!(t.len(), 2);
        assert_eq!(
            t[0].headers,
            [
                "threads",
                "txn/s",
                "relative",
                "user %",
                "sys %",
                "idle %",
                "cs/txn",
                "syscalls/txn"
            ]
        );
        assert_eq!(t[0].rows.len(), r.steps.len());
        assert_eq!(t[0].rows[0][0], "1");
        assert!(t
            .iter()
            .all(|t| t.rows.iter().all(|row| row.len() == t.headers.len())));
    }

    #[test]
    fn writes_every_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let r = sample_report();
        write_all(dir.path(), &r);
        append_jsonl(dir.path(), &r.steps[0]).expect("append");
        for f in [
            "results.json",
            "report.md",
            "report.html",
            "steps.jsonl",
            "charts/throughput-vs-threads.svg",
        ] {
            assert!(dir.path().join(f).is_file(), "{f} missing");
        }
        assert_eq!(read_json(dir.path()), Ok(r));
    }
}
