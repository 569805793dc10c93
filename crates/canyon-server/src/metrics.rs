//! Prometheus metrics over HTTP (`metrics_address`): `GET /metrics` answers
//! with the series Prometheus' mysqld_exporter would scrape from this server
//! with its default collectors, so the dashboards and alerts written for it
//! work with no exporter in between.
//!
//! # What is served
//! - `mysql_up 1` (the server answering is the server up).
//! - SHOW GLOBAL STATUS as the exporter's `global_status` collector names it:
//!   each name lower-cased, `mysql_global_status_<name>`, untyped; except the
//!   families it folds into labelled series: `Com_x` →
//!   `mysql_global_status_commands_total{command="x"}`, `Handler_x` →
//!   `..._handlers_total{handler}`, `Connection_errors_x` →
//!   `..._connection_errors_total{error}`, `Innodb_rows_x` →
//!   `..._innodb_row_ops_total{operation}`, `Innodb_buffer_pool_pages_x` →
//!   `..._buffer_pool_pages{state}` / `..._buffer_pool_dirty_pages` /
//!   `..._buffer_pool_page_changes_total{operation}`, `Performance_schema_x`
//!   → `..._performance_schema_lost_total{instrumentation}`.
//! - SHOW GLOBAL VARIABLES as its `global_variables` collector names them:
//!   `mysql_global_variables_<name>` for every value that reads as a number
//!   (ON / YES → 1, OFF / NO → 0, as the exporter parses), and
//!   `mysql_version_info{version, version_comment, innodb_version} 1`.
//!
//! The exporter's own series (`mysql_exporter_*`) and its optional
//! collectors (performance_schema digests, processlist, ...) are not served:
//! run the real exporter for those (tests/mysqld_exporter.rs shows both).
//!
//! # Why by hand
//! One request form (`GET /metrics`, answered and closed) on a port that is
//! off by default: forty lines of HTTP/1.x here cost less than a web stack in
//! the server's dependency tree, and the status rows come from the same
//! engine functions SHOW GLOBAL STATUS / VARIABLES use, without a session, a
//! login or a process-list entry per scrape. A scrape costs one pass over the
//! live sessions' published counters (see `canyon_sql::catalog::status`);
//! connections are served one task each, a slow or silent peer is dropped
//! after [`REQUEST_TIMEOUT`].

use canyon_sql::value::Value;
use canyon_sql::Engine;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tracing::{info, warn};

/// How long a peer may take to send its request head.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// Largest request head read; a longer one is answered 431.
const MAX_HEAD: usize = 8192;

/// Binds `address` and serves `/metrics` until the runtime stops.
pub async fn serve(address: &str, engine: Arc<Engine>) -> Result<(), String> {
    let listener = TcpListener::bind(address)
        .await
        .map_err(|e| format!("metrics: listening on {address}: {e}"))?;
    if let Ok(local) = listener.local_addr() {
        info!(%local, "serving Prometheus metrics at /metrics");
    }
    tokio::spawn(async move {
        loop {
            match listener.accept().await {
                Ok((stream, _)) => {
                    let engine = engine.clone();
                    tokio::spawn(async move {
                        let _ =
                            tokio::time::timeout(REQUEST_TIMEOUT, answer(stream, &engine)).await;
                    });
                }
                Err(e) => {
                    // Out of file descriptors, most likely: back off rather
                    // than spin on the error.
                    warn!("metrics: accept: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    });
    Ok(())
}

/// Reads one request head and answers it; the connection is then closed.
async fn answer(mut stream: TcpStream, engine: &Engine) -> std::io::Result<()> {
    let mut head = Vec::with_capacity(512);
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        if head.len() > MAX_HEAD {
            return reply(&mut stream, "431 Request Header Fields Too Large", "").await;
        }
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            return Ok(());
        }
        head.extend_from_slice(&buf[..n]);
    }
    let line = head.split(|&b| b == b'\r').next().unwrap_or_default();
    let mut parts = line.split(|&b| b == b' ');
    let (method, target) = (
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
    );
    let path = target.split(|&b| b == b'?').next().unwrap_or_default();
    match (method, path) {
        (b"GET", b"/metrics") => reply(&mut stream, "200 OK", &render(engine)).await,
        (b"GET", _) => reply(&mut stream, "404 Not Found", "not found: try /metrics\n").await,
        _ => reply(&mut stream, "405 Method Not Allowed", "").await,
    }
}

async fn reply(stream: &mut TcpStream, status: &str, body: &str) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    stream.shutdown().await
}

/// The exposition text (Prometheus text format 0.0.4).
pub fn render(engine: &Engine) -> String {
    let mut out = String::with_capacity(16 * 1024);
    let mut series = Series::default();
    series.add(
        &mut out,
        "mysql_up",
        "gauge",
        "Whether the MySQL server is up.",
        "",
        1.0,
    );
    for (name, value) in engine.global_status_rows() {
        status_series(&mut out, &mut series, &name, value as f64);
    }
    // Semi-synchronous replication's, ON / OFF read as the exporter does.
    for (name, text) in engine.binlog().semi_sync().status_rows() {
        if let Some(v) = parse_value(&text) {
            status_series(&mut out, &mut series, &name, v);
        }
    }
    let mut version = (String::new(), String::new(), String::new());
    for (name, value) in engine.global_variable_rows() {
        let text = value_text(&value);
        match name {
            "version" => version.0 = text.clone(),
            "version_comment" => version.1 = text.clone(),
            "innodb_version" => version.2 = text.clone(),
            _ => {}
        }
        if let Some(v) = parse_value(&text) {
            let metric = format!("mysql_global_variables_{}", prometheus_name(name));
            series.add(
                &mut out,
                &metric,
                "gauge",
                "Generic gauge metric from SHOW GLOBAL VARIABLES.",
                "",
                v,
            );
        }
    }
    let labels = format!(
        "innodb_version=\"{}\",version=\"{}\",version_comment=\"{}\"",
        escape(&version.2),
        escape(&version.0),
        escape(&version.1)
    );
    series.add(
        &mut out,
        "mysql_version_info",
        "gauge",
        "MySQL version and distribution.",
        &labels,
        1.0,
    );
    out
}

/// Writes `# HELP` / `# TYPE` once per metric name.
#[derive(Default)]
struct Series {
    last: String,
}

impl Series {
    fn add(&mut self, out: &mut String, name: &str, kind: &str, help: &str, labels: &str, v: f64) {
        if self.last != name {
            let _ = writeln!(out, "# HELP {name} {help}");
            let _ = writeln!(out, "# TYPE {name} {kind}");
            self.last = name.to_string();
        }
        if labels.is_empty() {
            let _ = writeln!(out, "{name} {v}");
        } else {
            let _ = writeln!(out, "{name}{{{labels}}} {v}");
        }
    }
}

/// One SHOW GLOBAL STATUS row as the exporter's `global_status` collector
/// names it (see the module doc). Rows come sorted by lower-cased name, so
/// the rows of a family (one prefix) are adjacent and its HELP / TYPE lines
/// are written once, as the text format requires.
fn status_series(out: &mut String, series: &mut Series, name: &str, v: f64) {
    let key = prometheus_name(&name.to_ascii_lowercase());
    const FAMILIES: [(&str, &str, &str, &str); 5] = [
        ("com_", "commands_total", "command", "Total number of executed MySQL commands."),
        ("handler_", "handlers_total", "handler", "Total number of executed MySQL handlers."),
        ("connection_errors_", "connection_errors_total", "error", "Total number of MySQL connection errors."),
        ("innodb_rows_", "innodb_row_ops_total", "operation", "Total number of MySQL InnoDB row operations."),
        ("performance_schema_", "performance_schema_lost_total", "instrumentation", "Total number of MySQL instrumentations that could not be loaded or created due to memory constraints."),
    ];
    for (prefix, metric, label, help) in FAMILIES {
        if let Some(rest) = key.strip_prefix(prefix) {
            let metric = format!("mysql_global_status_{metric}");
            let labels = format!("{label}=\"{}\"", escape(rest));
            series.add(out, &metric, "counter", help, &labels, v);
            return;
        }
    }
    if let Some(rest) = key.strip_prefix("innodb_buffer_pool_pages_") {
        match rest {
            "data" | "free" | "misc" | "old" => series.add(
                out,
                "mysql_global_status_buffer_pool_pages",
                "gauge",
                "Innodb buffer pool pages by state.",
                &format!("state=\"{rest}\""),
                v,
            ),
            "dirty" => series.add(
                out,
                "mysql_global_status_buffer_pool_dirty_pages",
                "gauge",
                "Innodb buffer pool dirty pages.",
                "",
                v,
            ),
            "total" => {}
            _ => series.add(
                out,
                "mysql_global_status_buffer_pool_page_changes_total",
                "counter",
                "Innodb buffer pool page state changes.",
                &format!("operation=\"{}\"", escape(rest)),
                v,
            ),
        }
        return;
    }
    let metric = format!("mysql_global_status_{key}");
    series.add(
        out,
        &metric,
        "untyped",
        "Generic metric from SHOW GLOBAL STATUS.",
        "",
        v,
    );
}

/// A value as SHOW shows it.
fn value_text(v: &Value) -> String {
    v.to_text()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default()
}

/// A value as the exporter's `parseStatus` reads one: ON / YES → 1, OFF / NO
/// / DISABLED → 0, else a number or nothing.
fn parse_value(text: &str) -> Option<f64> {
    match text.to_ascii_lowercase().as_str() {
        "yes" | "on" => Some(1.0),
        "no" | "off" | "disabled" => Some(0.0),
        t => t.parse::<f64>().ok().filter(|v| v.is_finite()),
    }
}

/// Characters a metric name may not hold become `_`.
fn prometheus_name(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == ':' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A label value escaped for the text format.
fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_as_the_exporter_parses_them() {
        assert_eq!(parse_value("ON"), Some(1.0));
        assert_eq!(parse_value("off"), Some(0.0));
        assert_eq!(parse_value("151"), Some(151.0));
        assert_eq!(parse_value("0.5"), Some(0.5));
        assert_eq!(parse_value("utf8mb4"), None);
        assert_eq!(parse_value(""), None);
        assert_eq!(prometheus_name("a.b-c"), "a_b_c");
    }

    #[test]
    fn families_become_labelled_series() {
        let mut out = String::new();
        let mut s = Series::default();
        status_series(&mut out, &mut s, "Com_select", 3.0);
        status_series(&mut out, &mut s, "Com_insert", 2.0);
        status_series(&mut out, &mut s, "Queries", 9.0);
        assert!(out.contains("mysql_global_status_commands_total{command=\"select\"} 3\n"));
        assert!(out.contains("mysql_global_status_commands_total{command=\"insert\"} 2\n"));
        assert!(out.contains("mysql_global_status_queries 9\n"));
        assert_eq!(
            out.matches("# TYPE mysql_global_status_commands_total")
                .count(),
            1
        );
    }
}
