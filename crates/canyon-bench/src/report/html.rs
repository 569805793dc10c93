//! `report.html`: one self-contained page — inline SVG charts, the tables, the
//! run's description — that opens from disk with no network and no script.

use super::{tables, Chart};
use crate::result::{RunReport, Status};
use std::fmt::Write;

/// Escapes text for HTML element content and attribute values.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

const STYLE: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em auto;max-width:1200px;color:#222;padding:0 1em}\
h1{font-size:1.5em}h2{font-size:1.15em;margin-top:2em}\
.failed{background:#fdecea;border:1px solid #e0a9a3;padding:.8em;white-space:pre-wrap;font-family:monospace}\
ul.meta{color:#444}\
.charts{display:flex;flex-wrap:wrap;gap:1em}\
figure{margin:0;border:1px solid #ddd;padding:.4em;background:#fff}\
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}\
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:right}\
th{background:#f3f3f3}\
.notes{font-size:.85em;color:#555;max-width:60em}";

/// The page; `charts` are the rendered SVG documents.
pub fn render_html(r: &RunReport, charts: &[(Chart, String)]) -> String {
    let mut s = String::new();
    let title = format!("canyon bench: {} ({} shape)", r.plan.workload, r.plan.shape);
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
        escape(&title),
        escape(&title)
    );
    if r.status == Status::Failed {
        let _ = writeln!(
            s,
            "<p><strong>The run failed</strong> — results up to the failure are below.</p>\n\
             <div class=\"failed\">{}</div>",
            escape(r.error.as_deref().unwrap_or("unknown error"))
        );
    }
    let _ = writeln!(s, "<ul class=\"meta\">");
    let _ = writeln!(s, "<li>Machine: {}</li>", escape(&r.machine.summary()));
    let _ = writeln!(
        s,
        "<li>Started {} by canyon-bench {}: <code>{}</code></li>",
        escape(&r.started_at),
        escape(&r.tool_version),
        escape(&r.command.join(" "))
    );
    let _ = writeln!(
        s,
        "<li>Workload <code>{}</code> {}; {} s measured per step after {} s warm-up; seed {}; {} round(s)</li>",
        escape(&r.plan.workload),
        escape(&r.plan.workload_params.to_string()),
        r.plan.duration_s,
        r.plan.warmup_s,
        r.plan.seed,
        r.plan.rounds
    );
    for t in &r.targets {
        let _ = writeln!(
            s,
            "<li>Target {}: {} [{}] at {}{}</li>",
            escape(&t.label),
            escape(&t.name),
            escape(&t.kind),
            escape(&t.endpoints.join(", ")),
            t.server_version
                .as_deref()
                .map_or(String::new(), |v| format!(", version {}", escape(v)))
        );
    }
    let _ = writeln!(s, "</ul>");
    if !charts.is_empty() {
        let _ = writeln!(s, "<div class=\"charts\">");
        for (c, svg) in charts {
            // plotters writes a bare <svg> element (no XML prolog): it inlines
            // as is.
            let body = svg.trim_start_matches(|c| c != '<');
            let body = match body.strip_prefix("<?xml") {
                Some(rest) => rest.split_once("?>").map_or(rest, |x| x.1),
                None => body,
            };
            // The title is drawn inside the chart; no caption repeats it.
            let _ = writeln!(
                s,
                "<figure id=\"{}\">\n{}\n</figure>",
                escape(c.file.trim_end_matches(".svg")),
                body.trim()
            );
        }
        let _ = writeln!(s, "</div>");
    }
    for t in tables(r) {
        let _ = writeln!(s, "<h2>{}</h2>\n<table>\n<thead><tr>", escape(&t.title));
        for h in &t.headers {
            let _ = write!(s, "<th>{}</th>", escape(h));
        }
        let _ = writeln!(s, "</tr></thead>\n<tbody>");
        for row in &t.rows {
            let _ = write!(s, "<tr>");
            for c in row {
                let _ = write!(s, "<td>{}</td>", escape(c));
            }
            let _ = writeln!(s, "</tr>");
        }
        let _ = writeln!(s, "</tbody>\n</table>");
    }
    let _ = writeln!(
        s,
        "<p class=\"notes\">{}</p>\n<p class=\"notes\">Raw figures: results.json (schema {}).</p>\n</body>\n</html>",
        escape(super::markdown::NOTES),
        escape(&r.schema)
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{charts, render_svg};
    use crate::testing::sample_report;

    #[test]
    fn page_inlines_svg_and_escapes_text() {
        let mut r = sample_report();
        r.command = vec![
            "canyon".into(),
            "bench".into(),
            "--target".into(),
            "a<b>&c".into(),
        ];
        let svgs: Vec<(Chart, String)> = charts(&r)
            .into_iter()
            .map(|c| {
                let svg = render_svg(&c).expect("renders");
                (c, svg)
            })
            .collect();
        let html = render_html(&r, &svgs);
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert_eq!(html.matches("<svg").count(), svgs.len());
        assert!(html.contains("a&lt;b&gt;&amp;c"));
        assert!(!html.contains("a<b>"));
        assert!(!html.contains("<script"));
        assert!(
            !html.contains("http://")
                || html.matches("http://").count()
                    == html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count()
        );
        assert!(html.contains("<th>syscalls/txn</th>"));
    }
}
