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
}
