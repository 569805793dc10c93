//! `canyon bench` end to end: the real binary benchmarks local Canyon servers it
//! starts itself (a few seconds per run), and reports faults — wrong
//! credentials, an unreachable server, a missing schema, a server killed
//! mid-run — with a message naming the target and the step, the results so far
//! written, and a non-zero exit.
//!
//! No timing is asserted: only that steps ran, counted and wrote what the
//! schema (docs/bench.md) promises. Every wait is bounded; 127.0.0.1 only.

mod common;

use canyon_bench::result::Status;
use canyon_bench::RunReport;
use common::{free_port, run_bounded, CliOutput, Server};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BENCH_TIMEOUT: Duration = Duration::from_secs(180);

/// Runs `canyon bench ARGS --out OUT`.
fn bench(out: &Path, args: &[&str]) -> CliOutput {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_canyon"));
    cmd.arg("bench")
        .args(args)
        .arg("--out")
        .arg(out)
        .arg("--report-interval")
        .arg("0.5")
        .env("RUST_LOG", "warn");
    run_bounded(&mut cmd, "", BENCH_TIMEOUT)
}

fn ok_report(out: &Path, args: &[&str]) -> RunReport {
    let o = bench(out, args);
    assert!(
        o.status.success(),
        "canyon bench {args:?} failed ({}):\n{}\n{}",
        o.status,
        o.stdout,
        o.stderr
    );
    let r = canyon_bench::report::read_json(out).expect("results.json");
    assert_eq!(r.schema, canyon_bench::SCHEMA);
    assert_eq!(r.status, Status::Ok, "{:?}", r.error);
    for s in &r.steps {
        assert_eq!(s.status, Status::Ok, "{:?}", s.error);
        assert!(s.transactions > 0, "no transaction in step {s:?}");
        assert!(s.txn_per_s > 0.0 && s.elapsed_s > 0.0);
        assert!(s.latency_ms.p50 > 0.0 && s.latency_ms.p99 >= s.latency_ms.p50);
        assert!(s.latency_ms.max >= s.latency_ms.p99);
    }
    r
}

fn failed(out: &Path, args: &[&str]) -> (RunReport, String) {
    let o = bench(out, args);
    assert!(
        !o.status.success(),
        "canyon bench {args:?} should have failed:\n{}",
        o.stderr
    );
    let r = canyon_bench::report::read_json(out).expect("results.json is written on failure too");
    assert_eq!(r.status, Status::Failed);
    assert!(out.join("report.html").is_file() && out.join("report.md").is_file());
    (r, o.stderr)
}

#[test]
fn thread_sweep_against_a_local_canyon_writes_results_and_report() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("rw");
    let r = ok_report(
        &out,
        &[
            "-w",
            "oltp_read_write",
            "-t",
            "1,2",
            "--duration",
            "1.5",
            "--warmup",
            "0.3",
            "--table-size",
            "500",
        ],
    );
    assert_eq!(r.plan.workload, "oltp_read_write");
    assert_eq!(r.targets.len(), 1);
    assert_eq!(r.targets[0].kind, "canyon-local");
    assert!(r.targets[0]
        .server_version
        .as_deref()
        .is_some_and(|v| v.contains("canyon")));
    assert_eq!(
        r.steps.iter().map(|s| s.threads).collect::<Vec<_>>(),
        [1, 2]
    );
    for s in &r.steps {
        // sysbench's read_write mix: 14 reads, 4 writes, 2 others per
        // transaction (rolled-back ones add theirs).
        assert!(s.queries.read >= 14 * s.transactions);
        assert!(s.queries.write >= 4 * s.transactions);
        assert!(s.queries.other >= 2 * s.transactions);
        let server = s.server.expect("a local server is sampled");
        assert_eq!(server.processes, 1);
        assert!(server.user_us_per_txn + server.sys_us_per_txn > 0.0);
        assert!(server.rss_bytes > 0);
        assert!(s.machine.idle_pct + s.machine.user_pct + s.machine.sys_pct > 0.0);
    }
    assert!((r.steps[0].relative_throughput - 1.0).abs() < 1e-9);
    for f in [
        "steps.jsonl",
        "report.md",
        "report.html",
        "charts/throughput-vs-threads.svg",
        "charts/latency-vs-throughput.svg",
    ] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    for svg in ["throughput-vs-threads.svg", "latency-vs-throughput.svg"] {
        let text = std::fs::read_to_string(out.join("charts").join(svg)).expect("svg");
        canyon_bench::testing::check_xml(&text).unwrap_or_else(|e| panic!("{svg}: {e}"));
    }
    let steps = std::fs::read_to_string(out.join("steps.jsonl")).expect("steps.jsonl");
    assert_eq!(steps.lines().count(), 2);
    let html = std::fs::read_to_string(out.join("report.html")).expect("html");
    assert_eq!(html.matches("<svg").count(), 2);

    // The reports can be rewritten from results.json alone.
    std::fs::remove_file(out.join("report.html")).expect("remove");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_canyon"));
    cmd.arg("bench").arg("--render-from").arg(&out);
    let o = run_bounded(&mut cmd, "", BENCH_TIMEOUT);
    assert!(o.status.success(), "{}", o.stderr);
    assert!(out.join("report.html").is_file());
}

#[test]
fn workloads_and_load_shapes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let short = ["--duration", "1", "--warmup", "0.2"];
    let with = |extra: &[&'static str]| -> Vec<&'static str> {
        let mut v: Vec<&'static str> = extra.to_vec();
        v.extend_from_slice(&short);
        v
    };

    // Order entry over two local Canyon servers, routed by customer, over
    // their Unix sockets.
    let r = ok_report(
        &dir.path().join("oe"),
        &with(&[
            "-w",
            "order_entry",
            "--shards",
            "2",
            "--customers",
            "200",
            "--shape",
            "fixed",
            "-t",
            "2",
            "--unix-socket",
        ]),
    );
    assert_eq!(r.targets[0].endpoints.len(), 2);
    assert!(
        r.targets[0]
            .endpoints
            .iter()
            .all(|e| e.starts_with("unix:")),
        "{:?}",
        r.targets[0].endpoints
    );
    assert!(
        r.targets[0].name.contains("Unix socket"),
        "{}",
        r.targets[0].name
    );
    let s = &r.steps[0];
    assert_eq!(s.server.map(|v| v.processes), Some(2));
    assert!(s.queries.read >= 4 * s.transactions && s.queries.write >= 2 * s.transactions);

    // Connection storm.
    let r = ok_report(
        &dir.path().join("connect"),
        &with(&["-w", "connect", "--shape", "fixed", "-t", "2"]),
    );
    assert_eq!(
        r.steps[0].queries.read,
        r.steps[0].transactions + r.steps[0].errors.values().sum::<u64>()
    );

    // Paced clients, connection sweep, CPU sweep (a restart pinned to 1 CPU).
    let r = ok_report(
        &dir.path().join("paced"),
        &with(&[
            "-w",
            "oltp_point_select",
            "--table-size",
            "200",
            "--shape",
            "paced",
            "--rate",
            "50",
            "-t",
            "2",
            "--step",
            "1",
        ]),
    );
    assert_eq!(r.steps.len(), 2);
    assert!(r.steps.iter().all(|s| s.rate_per_client == Some(50.0)));
    let r = ok_report(
        &dir.path().join("conns"),
        &with(&[
            "-w",
            "oltp_point_select",
            "--table-size",
            "200",
            "--shape",
            "connections",
            "-t",
            "1",
            "--connections",
            "1,40",
        ]),
    );
    assert_eq!(
        r.steps.iter().map(|s| s.connections).collect::<Vec<_>>(),
        [1, 40]
    );
    assert!(dir
        .path()
        .join("conns/charts/throughput-vs-connections.svg")
        .is_file());
    let r = ok_report(
        &dir.path().join("cpus"),
        &with(&[
            "-w",
            "oltp_point_select",
            "--table-size",
            "200",
            "--shape",
            "cpus",
            "--cpus",
            "1",
            "-t",
            "2",
        ]),
    );
    assert_eq!(r.steps[0].cpus, Some(1));
    // A shard pinned to its own CPU for the whole run.
    let r = ok_report(
        &dir.path().join("pinned"),
        &with(&[
            "-w",
            "oltp_point_select",
            "--table-size",
            "200",
            "--shape",
            "fixed",
            "-t",
            "2",
            "--cpus-per-shard",
            "1",
        ]),
    );
    assert!(
        r.targets[0].name.contains("1 CPUs each"),
        "{}",
        r.targets[0].name
    );
    assert!(r.steps[0].transactions > 0);

    // Two local Canyon servers compared, alternating A B A B.
    let r = ok_report(
        &dir.path().join("compare"),
        &with(&[
            "-w",
            "oltp_point_select",
            "--table-size",
            "200",
            "--shape",
            "fixed",
            "-t",
            "1",
            "--compare",
            "canyon",
            "--rounds",
            "2",
        ]),
    );
    let order: Vec<(&str, u32)> = r
        .steps
        .iter()
        .map(|s| (s.target.as_str(), s.round))
        .collect();
    assert_eq!(order, [("A", 0), ("B", 0), ("A", 1), ("B", 1)]);
    let c = r.comparison.expect("a comparison");
    let tps = c.steps[0].figures["txn_per_s"];
    assert_eq!(tps.n, 2);
    assert!(tps.min <= tps.mean && tps.mean <= tps.max);
}

#[test]
fn faults_name_the_target_and_keep_the_results() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start();
    let port = server.port();
    let one = [
        "--shape",
        "fixed",
        "-t",
        "1",
        "--duration",
        "1",
        "--warmup",
        "0",
    ];
    let run = |name: &str, target: String, extra: &[&str]| -> String {
        let mut args: Vec<&str> = vec!["--target", &target];
        args.extend_from_slice(&one);
        args.extend_from_slice(extra);
        failed(&dir.path().join(name), &args).1
    };

    // Wrong credentials.
    let err = run(
        "auth",
        format!("root:not-the-password@127.0.0.1:{port}"),
        &[],
    );
    assert!(
        err.contains("1045") && err.contains(&format!("127.0.0.1:{port}")),
        "{err}"
    );
    assert!(err.contains("wrong user name or password"), "{err}");

    // Nobody listening.
    let dead = free_port();
    let err = run("unreachable", format!("127.0.0.1:{dead}"), &[]);
    assert!(
        err.contains("2003") && err.contains(&format!("127.0.0.1:{dead}")),
        "{err}"
    );

    // No schema, and not asked to prepare one.
    let err = run(
        "schema",
        format!("root:{}@127.0.0.1:{port}", server.password()),
        &["--skip-prepare"],
    );
    assert!(err.contains("missing schema"), "{err}");

    // The server killed in the middle of a step: the step fails naming the
    // target, the step and the exit; the earlier step is kept.
    let out = dir.path().join("crash");
    let mut child = Command::new(env!("CARGO_BIN_EXE_canyon"))
        .args([
            "bench",
            "-w",
            "oltp_point_select",
            "--table-size",
            "200",
            "-t",
            "1,2",
            "--duration",
            "2",
            "--warmup",
            "0",
            "--report-interval",
            "0.2",
        ])
        .arg("--out")
        .arg(&out)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start canyon bench");
    let stderr = child.stderr.take().expect("piped stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            let _ = tx.send(line.clone());
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let deadline = Instant::now() + BENCH_TIMEOUT;
    let mut pid = None;
    let mut killed = false;
    while Instant::now() < deadline && !killed {
        let Ok(line) = rx.recv_timeout(Duration::from_millis(200)) else {
            if let Ok(Some(_)) = child.try_wait() {
                break;
            }
            continue;
        };
        if pid.is_none() {
            // "canyon bench: target A: canyon (local) at 127.0.0.1:P (pid N)"
            pid = line
                .split("(pid ")
                .nth(1)
                .and_then(|s| s.trim_end_matches(')').parse::<u32>().ok());
        }
        // Kill once the second step (threads 2) is running.
        if line.contains("step 2/2") {
            let p = pid.expect("the bench printed the server's pid");
            let st = Command::new("kill")
                .args(["-9", &p.to_string()])
                .status()
                .expect("run kill");
            assert!(st.success());
            killed = true;
        }
    }
    assert!(killed, "the second step never started");
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait for canyon bench") {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "canyon bench did not exit after the crash"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let err = reader.join().unwrap_or_default();
    assert!(!status.success(), "a crash must fail the run:\n{err}");
    assert!(
        err.contains("target A (canyon (local)), step 1 (threads 2)"),
        "{err}"
    );
    assert!(err.contains("exited") && err.contains("SIGKILL"), "{err}");
    let r = canyon_bench::report::read_json(&out).expect("results.json");
    assert_eq!(r.status, Status::Failed);
    assert_eq!(r.steps.len(), 2);
    assert_eq!(r.steps[0].status, Status::Ok);
    assert_eq!(r.steps[1].status, Status::Failed);
    assert!(r.steps[1]
        .error
        .as_deref()
        .is_some_and(|e| e.contains("step 1")));
}
