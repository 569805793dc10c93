//! USDT probes (issue 27, item 4; the list is `canyon_probes`).
//!
//! `every_probe_is_in_the_binary`: `readelf -n` on the built server lists
//! each probe of `canyon_probes::PROBES` under provider `mysql`, at every
//! site with the documented number of arguments and a semaphore (so
//! arguments are evaluated only while a tracer is attached).
//!
//! `bpftrace_counts_queries_lock_waits_and_syncs`: a real bpftrace attaches
//! to a running server and counts query__start, connection__start, the
//! row-lock wait of a real blocked UPDATE, commits and group-commit syncs.
//! Attaching needs root and a kernel with uprobes and BPF; where this
//! machine's kernel refuses, the test says why and passes (it skips).

mod common;

use common::{find_program, run_bounded, skip_missing, Server};
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The server binary the tests run.
const BINARY: &str = env!("CARGO_BIN_EXE_canyon");

#[test]
fn every_probe_is_in_the_binary() {
    let Some(readelf) = find_program("readelf") else {
        skip_missing("readelf (binutils)");
        return;
    };
    let out = run_bounded(
        Command::new(readelf).args(["-n", BINARY]),
        "",
        Duration::from_secs(120),
    );
    assert!(out.status.success(), "readelf: {}", out.stderr);
    // Each stapsdt note: Provider, Name, Location (with Semaphore), Arguments.
    let mut sites: Vec<(String, String, bool, usize)> = Vec::new();
    let mut lines = out.stdout.lines().peekable();
    while let Some(l) = lines.next() {
        let Some(provider) = l.trim().strip_prefix("Provider: ") else {
            continue;
        };
        let name = lines
            .next()
            .and_then(|l| l.trim().strip_prefix("Name: ").map(str::to_string));
        let location = lines.next().unwrap_or_default();
        let semaphore = location
            .rsplit("Semaphore: ")
            .next()
            .and_then(|h| u64::from_str_radix(h.trim().trim_start_matches("0x"), 16).ok())
            .unwrap_or(0);
        let args = match lines.peek() {
            Some(a) if a.trim().starts_with("Arguments:") => {
                let a = lines.next().unwrap_or_default();
                a.matches('@').count()
            }
            _ => 0,
        };
        sites.push((
            provider.to_string(),
            name.unwrap_or_default(),
            semaphore != 0,
            args,
        ));
    }
    for (probe, argc) in canyon_probes::PROBES {
        let at: Vec<_> = sites.iter().filter(|s| s.1 == probe).collect();
        assert!(!at.is_empty(), "probe {probe} is not in {BINARY}");
        for (provider, _, semaphore, args) in at {
            assert_eq!(provider, "mysql", "{probe}");
            assert!(semaphore, "{probe} has no semaphore");
            assert_eq!(*args, argc, "{probe}'s arguments");
        }
    }
}

/// Whether bpftrace can attach here at all; `Err(why)` if not.
fn bpftrace_works(bpftrace: &std::path::Path) -> Result<(), String> {
    let out = run_bounded(
        Command::new(bpftrace).args(["-e", "BEGIN { printf(\"ok\\n\"); exit(); }"]),
        "",
        Duration::from_secs(60),
    );
    if out.status.success() && out.stdout.contains("ok") {
        Ok(())
    } else {
        Err(format!(
            "bpftrace cannot run a BEGIN probe here: {}",
            out.stderr.trim()
        ))
    }
}

/// bpftrace's standard error, once it has exited.
fn stderr_of(child: &mut std::process::Child) -> String {
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    err
}

/// The line of bpftrace's errors that says a probe could not be attached
/// (a kernel without uprobes, or without the privilege): the machine's
/// limit, not Canyon's. Errors on detaching, at exit, do not count.
fn attach_refused(err: &str) -> Option<&str> {
    err.lines().find(|l| {
        let l = l.to_ascii_lowercase();
        l.contains("error")
            && (l.contains("attach probe") || l.contains("attaching"))
            && !l.contains("detach")
    })
}

#[test]
fn bpftrace_counts_queries_lock_waits_and_syncs() {
    let Some(bpftrace) = find_program("bpftrace") else {
        skip_missing("bpftrace");
        return;
    };
    if let Err(why) = bpftrace_works(&bpftrace) {
        // The kernel, not Canyon, decides: say so and skip, in CI too.
        eprintln!("\n!!!!!!!! SKIPPING: {why} !!!!!!!!\n");
        return;
    }
    // On disk: commits sync, so group__commit__sync__* fire.
    let server = Server::start();
    let pid = server.pid().expect("the server's pid");
    let mut c = server.client();
    c.exec("CREATE DATABASE app");
    c.exec("CREATE TABLE app.t (id INT PRIMARY KEY, v INT)");
    c.exec("INSERT INTO app.t VALUES (1, 0), (2, 0)");

    let p = |name: &str| format!("usdt:{BINARY}:mysql:{name}");
    let script = format!(
        "{} {{ @queries = count(); }} \
         {} {{ @connections = count(); }} \
         {} {{ @lock_waits = count(); @waited_us = sum(arg2); }} \
         {} {{ @commits = count(); }} \
         {} {{ @syncs = count(); }}",
        p("query__start"),
        p("connection__start"),
        p("row__lock__wait__done"),
        p("commit__done"),
        p("group__commit__sync__done"),
    );
    let mut child = Command::new(&bpftrace)
        .args(["-p", &pid.to_string(), "-e", &script])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start bpftrace");
    // bpftrace prints "Attaching N probes..." and then attaches; give the
    // uprobes a moment after that line.
    let mut stdout = child.stdout.take().expect("piped");
    let mut seen = String::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut buf = [0u8; 256];
    while !seen.contains("Attaching") && Instant::now() < deadline {
        match stdout.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => seen.push_str(&String::from_utf8_lossy(&buf[..n])),
            Err(_) => break,
        }
    }
    if !seen.contains("Attaching") {
        let _ = child.kill();
        let _ = child.wait();
        let err = stderr_of(&mut child);
        if let Some(why) = attach_refused(&err) {
            eprintln!("\n!!!!!!!! SKIPPING: the kernel refused the uprobes: {why} !!!!!!!!\n");
            return;
        }
        panic!("bpftrace did not attach: {seen}\n{err}");
    }
    std::thread::sleep(Duration::from_secs(3));

    const QUERIES: usize = 40;
    let mut d = server.client();
    for i in 0..QUERIES {
        d.exec(&format!("SELECT v FROM app.t WHERE id = {}", i % 2 + 1));
    }
    // A real row-lock wait: B's UPDATE waits for A's commit.
    c.exec("BEGIN");
    c.exec("UPDATE app.t SET v = v + 1 WHERE id = 1");
    let mut b = server.client();
    let waiter = std::thread::spawn(move || {
        b.exec("UPDATE app.t SET v = v + 10 WHERE id = 1");
    });
    std::thread::sleep(Duration::from_millis(500));
    c.exec("COMMIT");
    waiter.join().expect("the waiting UPDATE");
    assert_eq!(
        c.exec("SELECT v FROM app.t WHERE id = 1")
            .scalar()
            .as_deref(),
        Some("11")
    );
    std::thread::sleep(Duration::from_millis(500));

    // SIGINT: bpftrace prints its maps and exits.
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let mut rest = String::new();
    let _ = stdout.read_to_string(&mut rest);
    let _ = child.wait();
    let err = stderr_of(&mut child);
    if let Some(why) = attach_refused(&err) {
        eprintln!("\n!!!!!!!! SKIPPING: the kernel refused the uprobes: {why} !!!!!!!!\n");
        return;
    }
    let all = format!("{seen}{rest}");
    let map = |name: &str| -> u64 {
        all.lines()
            .find_map(|l| l.strip_prefix(&format!("@{name}: ")))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no @{name} in bpftrace's output:\n{all}\n{err}"))
    };
    assert!(map("queries") >= QUERIES as u64 + 4, "{all}");
    assert!(map("connections") >= 1, "{all}");
    assert!(map("lock_waits") >= 1, "{all}");
    assert!(
        map("waited_us") >= 100_000,
        "the wait lasted ~500 ms: {all}"
    );
    assert!(map("commits") >= 2, "{all}");
    assert!(map("syncs") >= 1, "{all}");
}
