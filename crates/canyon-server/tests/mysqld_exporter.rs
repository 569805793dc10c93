//! Prometheus' real mysqld_exporter (Debian's prometheus-mysqld-exporter,
//! 0.14) scrapes Canyon: its default collectors (global status and
//! variables, slave status, InnoDB compression tables) and its
//! performance_schema statement-digest and `engine_innodb_status` (SHOW
//! ENGINE INNODB STATUS) collectors run without a scrape error,
//! and the series Grafana's MySQL dashboards chart are there with Canyon's
//! values.

mod common;

use common::{find_program, free_port, skip_without, Server};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The exporter process, killed on drop.
struct Exporter(Child);

impl Drop for Exporter {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// GET /metrics from the exporter on `port`, retried until it answers.
fn scrape(port: u16) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let got = (|| -> std::io::Result<String> {
            let mut s = TcpStream::connect(("127.0.0.1", port))?;
            s.set_read_timeout(Some(Duration::from_secs(20)))?;
            s.write_all(b"GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n")?;
            let mut body = String::new();
            s.read_to_string(&mut body)?;
            Ok(body)
        })();
        match got {
            Ok(body) if body.starts_with("HTTP/1.0 200") || body.starts_with("HTTP/1.1 200") => {
                return body
            }
            _ if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(200)),
            other => panic!("mysqld_exporter did not answer: {other:?}"),
        }
    }
}

/// The value of the first sample of `series` (with or without labels).
fn value(metrics: &str, series: &str) -> Option<f64> {
    metrics.lines().find_map(|l| {
        let rest = l.strip_prefix(series)?;
        if !(rest.starts_with(' ') || rest.starts_with('{')) {
            return None;
        }
        l.rsplit(' ').next()?.parse().ok()
    })
}

#[test]
fn mysqld_exporter_scrapes_canyon_without_errors() {
    if skip_without("prometheus-mysqld-exporter") {
        return;
    }
    let server = Server::start_with(common::ServerOptions {
        in_memory: true,
        ..Default::default()
    });
    let mut c = server.client();
    c.exec("CREATE DATABASE app");
    // In a database: the digest collector skips statements whose
    // SCHEMA_NAME is NULL (its `NOT IN (...)` filter), as on MySQL.
    c.exec("USE app");
    c.exec("CREATE TABLE t (id INT PRIMARY KEY, v INT)");
    for i in 0..20 {
        c.exec(&format!("INSERT INTO t VALUES ({i}, {i})"));
    }
    c.exec("SELECT v FROM t WHERE id = 3");

    let port = free_port();
    let bin = find_program("prometheus-mysqld-exporter").expect("checked above");
    let child = Command::new(bin)
        .env(
            "DATA_SOURCE_NAME",
            format!("root:{}@(127.0.0.1:{})/", server.password(), server.port()),
        )
        .args([
            &format!("--web.listen-address=127.0.0.1:{port}"),
            // Beside the defaults: the statement digests Grafana's
            // "MySQL Query Response Time / Top statements" panels read.
            "--collect.perf_schema.eventsstatements",
            "--collect.perf_schema.eventsstatementssum",
            "--collect.perf_schema.tableiowaits",
            "--collect.perf_schema.indexiowaits",
            "--collect.info_schema.processlist",
            // SHOW ENGINE INNODB STATUS, grepped for two lines.
            "--collect.engine_innodb_status",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mysqld_exporter");
    let mut exporter = Exporter(child);
    let metrics = scrape(port);
    let mut stderr_tail = || {
        let _ = exporter.0.kill();
        let mut e = String::new();
        if let Some(mut s) = exporter.0.stderr.take() {
            let _ = s.read_to_string(&mut e);
        }
        e
    };
    let errors = value(&metrics, "mysql_exporter_last_scrape_error");
    if errors != Some(0.0) {
        panic!(
            "scrape errors ({errors:?}); exporter log:\n{}",
            stderr_tail()
        );
    }
    assert_eq!(value(&metrics, "mysql_up"), Some(1.0), "{metrics}");
    // Each collector reported success.
    let failed: Vec<&str> = metrics
        .lines()
        .filter(|l| l.starts_with("mysql_exporter_collector_success") && l.ends_with(" 0"))
        .collect();
    assert!(failed.is_empty(), "collectors failed: {failed:?}");
    // What the dashboards chart, with Canyon's values.
    let queries = value(&metrics, "mysql_global_status_queries").expect("Queries");
    assert!(queries >= 23.0, "Queries = {queries}");
    assert!(
        value(&metrics, "mysql_global_status_threads_connected").expect("Threads_connected") >= 1.0
    );
    assert_eq!(
        value(&metrics, "mysql_global_variables_max_connections"),
        c.exec("SELECT @@max_connections")
            .scalar()
            .and_then(|v| v.parse().ok())
    );
    // The lines the engine_innodb_status collector greps: the scrape
    // itself is a running statement, so one query is inside.
    assert!(
        value(&metrics, "mysql_engine_innodb_queries_inside_innodb").is_some_and(|v| v >= 1.0),
        "{metrics}"
    );
    assert_eq!(
        value(&metrics, "mysql_engine_innodb_queries_in_queue"),
        Some(0.0)
    );
    assert!(value(
        &metrics,
        "mysql_engine_innodb_read_views_open_inside_innodb"
    )
    .is_some());
    assert!(
        metrics.contains("mysql_perf_schema_events_statements_total{"),
        "no digest series:\n{}",
        metrics
            .lines()
            .filter(|l| l.starts_with("mysql_perf"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    // Table and index I/O of app.t: the point select read one row through
    // PRIMARY, the 20 inserts count on the table.
    let series = |name: &str, labels: &str| {
        metrics
            .lines()
            .find(|l| l.starts_with(name) && labels.split(',').all(|x| l.contains(x)))
            .and_then(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
    };
    assert_eq!(
        series(
            "mysql_perf_schema_index_io_waits_total{",
            r#"index="PRIMARY",name="t",operation="fetch",schema="app""#
        ),
        Some(1.0),
        "index I/O series"
    );
    assert_eq!(
        series(
            "mysql_perf_schema_table_io_waits_total{",
            r#"name="t",operation="insert",schema="app""#
        ),
        Some(20.0),
        "table I/O series"
    );
}

/// The series of `text` whose names start with `prefix`: `name{labels}` ->
/// value.
fn series(text: &str, prefix: &str) -> std::collections::BTreeMap<String, f64> {
    text.lines()
        .filter(|l| l.starts_with(prefix))
        .filter_map(|l| {
            let (key, v) = l.rsplit_once(' ')?;
            Some((key.to_string(), v.parse().ok()?))
        })
        .collect()
}

/// GET `path` from `port`: the status line and the body.
fn get(port: u16, path: &str) -> (String, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect to /metrics");
    s.set_read_timeout(Some(Duration::from_secs(20)))
        .expect("a read timeout");
    write!(s, "GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n").expect("send the request");
    let mut all = String::new();
    s.read_to_string(&mut all).expect("read the response");
    let (head, body) = all.split_once("\r\n\r\n").expect("a whole response");
    (
        head.lines().next().unwrap_or_default().to_string(),
        body.to_string(),
    )
}

/// Canyon's own `/metrics` (`metrics_address`): the series mysqld_exporter's
/// default global status and variables collectors produce, under the same
/// names and labels, so its dashboards read Canyon without an exporter.
/// With the exporter installed, both scrape the same server and every
/// `mysql_global_status_*` / `mysql_global_variables_*` series of one is in
/// the other, variables with equal values.
#[test]
fn canyon_serves_the_exporters_series_itself() {
    let mport = free_port();
    let server = Server::start_with(common::ServerOptions {
        in_memory: true,
        extra_toml: format!("metrics_address = \"127.0.0.1:{mport}\"\n"),
        ..Default::default()
    });
    let mut c = server.client();
    c.exec("CREATE DATABASE app");
    c.exec("USE app");
    c.exec("CREATE TABLE t (id INT PRIMARY KEY)");
    for i in 0..7 {
        c.exec(&format!("INSERT INTO t VALUES ({i})"));
    }
    for i in 0..5 {
        c.exec(&format!("SELECT * FROM t WHERE id = {i}"));
    }
    let (status, body) = get(mport, "/metrics");
    assert!(status.ends_with("200 OK"), "{status}");
    let ours = series(&body, "mysql_");
    assert_eq!(ours.get("mysql_up"), Some(&1.0), "{body}");
    let selects = ours["mysql_global_status_commands_total{command=\"select\"}"];
    assert!(selects >= 5.0, "Com_select = {selects}");
    assert!(ours["mysql_global_status_commands_total{command=\"insert\"}"] >= 7.0);
    assert!(ours["mysql_global_status_queries"] >= 15.0);
    assert_eq!(
        ours.get("mysql_global_variables_max_connections").copied(),
        c.exec("SELECT @@max_connections")
            .scalar()
            .and_then(|v| v.parse().ok())
    );
    assert!(
        body.contains("mysql_version_info{") && body.contains("8.0.36-canyon"),
        "{body}"
    );
    // Each metric's HELP/TYPE once: the text format allows no repeats.
    let mut types: Vec<&str> = body.lines().filter(|l| l.starts_with("# TYPE ")).collect();
    let n = types.len();
    types.sort();
    types.dedup();
    assert_eq!(types.len(), n, "a metric's TYPE line repeated");
    // Other paths and methods.
    assert!(get(mport, "/").0.contains("404"));
    // The server is unaffected by a peer that sends garbage and leaves.
    {
        let mut s = TcpStream::connect(("127.0.0.1", mport)).expect("connect to /metrics");
        let _ = s.write_all(&[0xff; 20_000]);
    }
    assert_eq!(
        c.exec("SELECT COUNT(*) FROM t").scalar().as_deref(),
        Some("7")
    );

    if skip_without("prometheus-mysqld-exporter") {
        return;
    }
    let port = free_port();
    let bin = find_program("prometheus-mysqld-exporter").expect("checked above");
    let child = Command::new(bin)
        .env(
            "DATA_SOURCE_NAME",
            format!("root:{}@(127.0.0.1:{})/", server.password(), server.port()),
        )
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start mysqld_exporter");
    let _exporter = Exporter(child);
    let theirs_text = scrape(port);
    let (_, ours_text) = get(mport, "/metrics");
    for prefix in ["mysql_global_status_", "mysql_global_variables_"] {
        let theirs = series(&theirs_text, prefix);
        let ours = series(&ours_text, prefix);
        assert!(theirs.len() > 20, "exporter gave few {prefix} series");
        let missing: Vec<&String> = theirs.keys().filter(|k| !ours.contains_key(*k)).collect();
        let extra: Vec<&String> = ours.keys().filter(|k| !theirs.contains_key(*k)).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "{prefix}: missing from /metrics {missing:?}; not from the exporter {extra:?}"
        );
        if prefix == "mysql_global_variables_" {
            for (k, v) in &theirs {
                assert_eq!(ours[k], *v, "{k}");
            }
        }
    }
}
