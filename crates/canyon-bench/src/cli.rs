//! `canyon bench`: the command line, turned into a [`Plan`] and targets, run,
//! and reported.

use crate::runner::{self, Plan, PlanStep, Shape};
use crate::target::{self, LocalOptions, Target, TargetSpec};
use crate::workload::rng::{derive_seed, Distribution, Rng64};
use crate::workload::{self, WorkloadKind, WorkloadOptions};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// `canyon bench` options. See docs/bench.md for the guide.
#[derive(Debug, Clone, clap::Args)]
#[command(after_help = "\
Examples:
  canyon bench                                   thread sweep 1,2,4,8 of oltp_read_only on a local Canyon
  canyon bench -w oltp_point_select -t 64        sweep 1,2,4 ... 64 threads
  canyon bench --shape cpus -t 16                local server pinned to 1, 2, ... all CPUs
  canyon bench --shape connections -t 16 --connections 100,1000,20000
  canyon bench --shape paced --rate 10 -t 100 --step 10
  canyon bench --compare mariadb                 Canyon vs MariaDB, alternating A B A B
  canyon bench -w order_entry --shards 4         4 local Canyon servers, range-partitioned
  taskset -c 8-15 canyon bench -w order_entry --shards 4 --cpus-per-shard 2 -t 64
                                                 4 servers on CPUs 0-1, 2-3, 4-5, 6-7; clients on 8-15
  canyon bench --target app:secret@db1:3306 --skip-prepare")]
pub struct BenchArgs {
    /// Workload (sysbench names; aliases point-select, read-only, read-write,
    /// write-only, order-entry).
    #[arg(long, short = 'w', value_enum, default_value = "oltp_read_only")]
    pub workload: WorkloadKind,
    /// Load shape.
    #[arg(long, value_enum, default_value = "threads")]
    pub shape: Shape,
    /// Active clients. One number N: `threads` sweeps 1, 2, 4 ... N; `paced`
    /// adds --step clients up to N; `fixed`, `connections` and `cpus` use N.
    /// A comma list gives the steps explicitly.
    #[arg(long, short = 't', value_delimiter = ',', value_name = "N[,N...]")]
    pub threads: Vec<u32>,
    /// Measured seconds per step.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    pub duration: f64,
    /// Unmeasured warm-up seconds before each step.
    #[arg(long, value_name = "SECS", default_value_t = 2.0)]
    pub warmup: f64,
    /// Paced load: transactions per second each client issues.
    #[arg(long, value_name = "TXN_PER_S")]
    pub rate: Option<f64>,
    /// Paced load: clients added per step (default: a tenth of the last step).
    #[arg(long, value_name = "N")]
    pub step: Option<u32>,
    /// Connection sweep: open connections per step (active ones included).
    #[arg(long, value_delimiter = ',', value_name = "N[,N...]")]
    pub connections: Vec<u32>,
    /// CPU sweep: K (1, 2 ... K) or a list; default every CPU of the machine.
    #[arg(long, value_delimiter = ',', value_name = "K[,K...]")]
    pub cpus: Vec<u32>,
    /// Pin local shard i to CPUs i·K .. i·K+K-1 (e.g. N instances on N·K CPUs
    /// against one on K). Run the client elsewhere with taskset.
    #[arg(long, value_name = "K")]
    pub cpus_per_shard: Option<u32>,
    /// Rounds of every step (default 1; 3 with --compare).
    #[arg(long, value_name = "N")]
    pub rounds: Option<u32>,
    /// Seed of every random choice (data and transactions).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// sysbench --tables.
    #[arg(long, default_value_t = 1)]
    pub tables: u32,
    /// sysbench --table-size.
    #[arg(long, default_value_t = 10_000)]
    pub table_size: u64,
    /// sysbench --range-size.
    #[arg(long, default_value_t = 100)]
    pub range_size: u64,
    /// sysbench --rand-type.
    #[arg(long, value_enum, default_value = "special")]
    pub rand_type: Distribution,
    /// order_entry: customers (range-partitioned over the shards).
    #[arg(long, default_value_t = 10_000)]
    pub customers: u64,
    /// order_entry: orders per customer.
    #[arg(long, default_value_t = 10)]
    pub orders_per_customer: u64,

    /// The server to measure: `canyon` (start one locally, the default),
    /// `mariadb` (start MariaDB locally), or
    /// `[user[:password]@]host:port[,host:port...]` (one endpoint per shard).
    #[arg(long, value_name = "SPEC")]
    pub target: Option<String>,
    /// Shorthand for --target mariadb.
    #[arg(long, conflicts_with = "target")]
    pub mariadb: bool,
    /// The target (one address) is a Vitess vtgate: run in this existing
    /// keyspace, sharded by its VSchema (no CREATE DATABASE). order_entry's
    /// statements then name the customer, for a vindex on `oe_customer.c_id`
    /// and `oe_order.o_c_id` (docs/scale-out.md).
    #[arg(long, value_name = "KEYSPACE")]
    pub vitess_keyspace: Option<String>,
    /// Run the plan against this second target too, alternating A B A B, and
    /// report B/A ratios (same SPEC syntax as --target).
    #[arg(long, value_name = "SPEC")]
    pub compare: Option<String>,
    /// User for remote targets that do not name one.
    #[arg(long, default_value = "root")]
    pub user: String,
    /// Password for remote targets that do not give one.
    #[arg(
        long,
        env = "CANYON_BENCH_PASSWORD",
        default_value = "",
        hide_env_values = true
    )]
    pub password: String,
    /// Local targets: servers to start (shards).
    #[arg(long, default_value_t = 1)]
    pub shards: usize,
    /// The canyon binary for local Canyon targets (default: this executable).
    #[arg(long, value_name = "PATH")]
    pub canyon_bin: Option<PathBuf>,
    /// Local targets: clients connect over each server's Unix-domain socket
    /// instead of loopback TCP (every local target alike, so comparisons stay
    /// fair). Takes the TCP stack out of both sides' CPU per query.
    #[arg(long)]
    pub unix_socket: bool,
    /// Extra argument for local `canyon serve` (repeatable), e.g. --canyon-arg=--in-memory.
    #[arg(long = "canyon-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub canyon_args: Vec<String>,
    /// Extra argument for local `mariadbd` (repeatable), e.g.
    /// --mariadb-arg=--thread-handling=pool-of-threads.
    #[arg(long = "mariadb-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub mariadb_args: Vec<String>,

    /// Use the data already there (no DROP / CREATE / load).
    #[arg(long)]
    pub skip_prepare: bool,
    /// Drop the workload's tables at the end (remote targets; local servers are
    /// deleted anyway).
    #[arg(long)]
    pub cleanup: bool,
    /// Results directory (default bench-results/WORKLOAD-SHAPE-TIME).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Seconds between progress lines (0: none).
    #[arg(long, value_name = "SECS", default_value_t = 1.0)]
    pub report_interval: f64,
    /// Run nothing: rewrite report.md, charts/ and report.html of an earlier
    /// run from its results.json (e.g. after a canyon-bench upgrade).
    #[arg(long, value_name = "DIR")]
    pub render_from: Option<PathBuf>,
}

/// 1, 2, 4 ... n (n included even if not a power of two).
pub fn doubling(n: u32) -> Vec<u32> {
    let mut v = Vec::new();
    let mut t = 1u32;
    while t < n {
        v.push(t);
        t = t.saturating_mul(2);
    }
    v.push(n.max(1));
    v
}

/// The steps of the plan the arguments describe.
pub fn plan_steps(a: &BenchArgs) -> Result<Vec<PlanStep>, String> {
    let one = |default: u32| -> Result<u32, String> {
        match a.threads.as_slice() {
            [] => Ok(default),
            [n] => Ok(*n),
            _ => Err(format!(
                "--shape {} takes one --threads value",
                a.shape.name()
            )),
        }
    };
    if a.threads.contains(&0) {
        return Err("--threads must be at least 1".into());
    }
    let step = |threads: u32| PlanStep {
        threads,
        connections: threads,
        cpus: None,
        rate_per_client: None,
    };
    let steps: Vec<PlanStep> = match a.shape {
        Shape::Fixed => vec![step(one(8)?)],
        Shape::Threads => match a.threads.as_slice() {
            [] => doubling(8),
            [n] => doubling(*n),
            list => list.to_vec(),
        }
        .into_iter()
        .map(step)
        .collect(),
        Shape::Paced => {
            let rate = a.rate.unwrap_or(10.0);
            if !(rate > 0.0 && rate.is_finite()) {
                return Err("--rate must be a positive number".into());
            }
            let clients = match a.threads.as_slice() {
                [] | [_] => {
                    let max = one(50)?;
                    let by = a.step.unwrap_or((max / 10).max(1)).max(1);
                    let mut v: Vec<u32> = (1..=max / by).map(|i| i * by).collect();
                    if v.last() != Some(&max) {
                        v.push(max);
                    }
                    v
                }
                list => list.to_vec(),
            };
            clients
                .into_iter()
                .map(|c| PlanStep {
                    rate_per_client: Some(rate),
                    ..step(c)
                })
                .collect()
        }
        Shape::Connections => {
            let active = one(16)?;
            let conns = if a.connections.is_empty() {
                vec![100, 1000, 5000, 10_000, 20_000]
            } else {
                a.connections.clone()
            };
            if let Some(c) = conns.iter().find(|&&c| c < active) {
                return Err(format!(
                    "--connections {c} is fewer than the {active} active clients (--threads)"
                ));
            }
            conns
                .into_iter()
                .map(|c| PlanStep {
                    connections: c,
                    ..step(active)
                })
                .collect()
        }
        Shape::Cpus => {
            let threads = one(16)?;
            let online = crate::sample::machine_cpus();
            let cpus = match a.cpus.as_slice() {
                [] => (1..=online).collect(),
                [k] => (1..=*k).collect(),
                list => list.to_vec(),
            };
            if let Some(k) = cpus.iter().find(|&&k| k == 0 || k > online) {
                return Err(format!(
                    "--cpus {k}: this machine has CPUs 1..{online} to pin servers to"
                ));
            }
            cpus.into_iter()
                .map(|k| PlanStep {
                    cpus: Some(k),
                    ..step(threads)
                })
                .collect()
        }
    };
    if steps.iter().any(|s| s.threads == 0) {
        return Err("--threads must be at least 1".into());
    }
    Ok(steps)
}

/// A random password for the local servers' root account.
fn local_password() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut r = Rng64::new(derive_seed(nanos, &[u64::from(std::process::id())]));
    format!("Bench-{}", r.template("@@@@@@@@####@@@@"))
}

/// Runs `canyon bench`. On failure the message names the target and the
/// step; results measured until then are already written.
pub fn run(args: BenchArgs) -> Result<(), String> {
    if let Some(dir) = &args.render_from {
        let report = crate::report::read_json(dir)?;
        crate::report::write_all(dir, &report);
        println!("rewrote {}/report.md, report.html, charts/", dir.display());
        return Ok(());
    }
    if !(args.duration > 0.0 && args.duration.is_finite()) {
        return Err("--duration must be positive".into());
    }
    if !(args.warmup >= 0.0 && args.warmup.is_finite()) {
        return Err("--warmup must be zero or positive".into());
    }
    let steps = plan_steps(&args)?;
    let spec_a = match (&args.target, args.mariadb) {
        (_, true) => TargetSpec::LocalMariadb,
        (Some(s), false) => TargetSpec::parse(s, &args.user, &args.password)?,
        (None, false) => TargetSpec::LocalCanyon(None),
    };
    let mut specs = vec![spec_a];
    if let Some(b) = &args.compare {
        specs.push(TargetSpec::parse(b, &args.user, &args.password)?);
    }
    for s in &mut specs {
        if let (TargetSpec::LocalCanyon(bin @ None), Some(b)) = (&mut *s, &args.canyon_bin) {
            *bin = Some(b.clone());
        }
    }
    if args.shape == Shape::Cpus && specs.iter().any(|s| matches!(s, TargetSpec::Remote(_))) {
        return Err("--shape cpus restarts the server pinned to CPUs: it needs a local target (canyon or mariadb)".into());
    }
    let shards = args.shards.max(1);
    if args.unix_socket && specs.iter().any(|s| matches!(s, TargetSpec::Remote(_))) {
        return Err("--unix-socket applies to local servers: it needs local targets".into());
    }
    if let Some(k) = args.cpus_per_shard {
        if args.shape == Shape::Cpus {
            return Err(
                "--cpus-per-shard and --shape cpus both pin the servers: choose one".into(),
            );
        }
        if specs.iter().any(|s| matches!(s, TargetSpec::Remote(_))) {
            return Err("--cpus-per-shard pins local servers: it needs a local target".into());
        }
        let online = crate::sample::machine_cpus();
        if k == 0 {
            return Err("--cpus-per-shard must be at least 1".into());
        }
        if u64::from(k) * shards as u64 > u64::from(online) {
            return Err(format!(
                "--cpus-per-shard {k} with {shards} shard(s) needs {} CPUs; this machine has {online}",
                u64::from(k) * shards as u64
            ));
        }
    }
    if args.vitess_keyspace.is_some()
        && !specs
            .iter()
            .all(|s| matches!(s, TargetSpec::Remote(eps) if eps.len() == 1))
    {
        return Err(
            "--vitess-keyspace runs through one vtgate: give its address as the only --target \
             (and --compare) endpoint"
                .into(),
        );
    }
    if args.workload == WorkloadKind::OrderEntry {
        for s in &specs {
            let n = match s {
                TargetSpec::Remote(eps) => eps.len(),
                _ => shards,
            };
            if args.customers < n as u64 {
                return Err(format!(
                    "--customers {} is fewer than the {n} shards",
                    args.customers
                ));
            }
        }
    }

    // Every connection is a file descriptor, here and on local servers.
    let max_threads = steps.iter().map(|s| s.threads).max().unwrap_or(1);
    let max_conns = steps.iter().map(|s| s.connections).max().unwrap_or(1);
    let needed = u64::from(max_conns) + u64::from(max_threads) * shards as u64 * 2 + 256;
    // Local servers inherit this limit; leave them room for their own files.
    let wanted = needed + 4096;
    let mut limit = rlimit::increase_nofile_limit(u64::MAX).unwrap_or(0);
    if limit < wanted {
        // With CAP_SYS_RESOURCE (root) the hard limit itself may be raised, up
        // to fs.nr_open.
        if rlimit::setrlimit(rlimit::Resource::NOFILE, wanted, wanted).is_ok() {
            limit = wanted;
        }
    }
    if limit < needed {
        return Err(format!(
            "the open-file limit (RLIMIT_NOFILE) is {limit}, the plan needs about {needed} \
             connections: raise the hard limit (ulimit -Hn)"
        ));
    }

    let w = workload::build(
        args.workload,
        &WorkloadOptions {
            tables: args.tables,
            table_size: args.table_size,
            range_size: args.range_size,
            distribution: args.rand_type,
            customers: args.customers,
            orders_per_customer: args.orders_per_customer,
            vitess_keyspace: args.vitess_keyspace.clone(),
        },
    );
    let out = args.out.clone().unwrap_or_else(|| {
        PathBuf::from("bench-results").join(format!(
            "{}-{}-{}",
            w.name(),
            args.shape.name(),
            chrono::Utc::now().format("%Y%m%dT%H%M%SZ")
        ))
    });
    let plan = Plan {
        workload: Arc::from(w),
        shape: args.shape,
        steps,
        warmup: Duration::from_secs_f64(args.warmup),
        duration: Duration::from_secs_f64(args.duration),
        seed: args.seed,
        rounds: args
            .rounds
            .unwrap_or(if specs.len() > 1 { 3 } else { 1 })
            .max(1),
        report_interval: Duration::from_secs_f64(args.report_interval.max(0.0)),
        prepare: !args.skip_prepare,
        cleanup: args.cleanup,
        out: out.clone(),
        command: std::env::args().collect(),
    };

    let local = LocalOptions {
        canyon_args: args.canyon_args.clone(),
        mariadb_args: args.mariadb_args.clone(),
        max_connections: u32::try_from(needed).unwrap_or(u32::MAX),
        password: local_password(),
        cpus_per_shard: args.cpus_per_shard,
        unix_socket: args.unix_socket,
        ..LocalOptions::default()
    };
    let mut targets: Vec<Box<dyn Target>> = Vec::new();
    for (i, s) in specs.iter().enumerate() {
        let label = char::from(b'A' + i as u8);
        let t = target::open(s, shards, &local).map_err(|e| format!("target {label}: {e}"))?;
        let pids = t.processes();
        eprintln!(
            "canyon bench: target {label}: {} at {}{}",
            t.name(),
            t.endpoints()
                .iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join(","),
            if pids.is_empty() {
                String::new()
            } else {
                format!(
                    " (pid {})",
                    pids.iter()
                        .map(|p| p.to_string())
                        .collect::<Vec<_>>()
                        .join(",")
                )
            }
        );
        targets.push(t);
    }

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("canyon-bench")
        .build()
        .map_err(|e| format!("starting the runtime: {e}"))?;
    let report = runtime.block_on(async {
        tokio::spawn(async {
            if tokio::signal::ctrl_c().await.is_ok() {
                crate::driver::INTERRUPTED.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        });
        runner::run(&plan, &mut targets).await
    });
    runtime.shutdown_timeout(Duration::from_secs(5));
    for t in &mut targets {
        t.stop();
    }

    for t in crate::report::tables(&report) {
        println!("\n{}\n", t.title);
        print!("{}", crate::report::table_markdown(&t));
    }
    println!(
        "\nresults: {}/results.json, report.md, report.html",
        out.display()
    );
    match report.error {
        None => Ok(()),
        Some(e) => Err(format!("{e}\n(results so far are in {})", out.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        bench: BenchArgs,
    }

    fn parse(args: &[&str]) -> BenchArgs {
        Cli::try_parse_from(std::iter::once("bench").chain(args.iter().copied()))
            .unwrap_or_else(|e| panic!("{args:?}: {e}"))
            .bench
    }

    fn threads(args: &[&str]) -> Vec<u32> {
        plan_steps(&parse(args))
            .expect("valid plan")
            .iter()
            .map(|s| s.threads)
            .collect()
    }

    #[test]
    fn thread_sweeps() {
        assert_eq!(doubling(1), [1]);
        assert_eq!(doubling(8), [1, 2, 4, 8]);
        assert_eq!(doubling(12), [1, 2, 4, 8, 12]);
        assert_eq!(threads(&[]), [1, 2, 4, 8]);
        assert_eq!(threads(&["-t", "16"]), [1, 2, 4, 8, 16]);
        assert_eq!(threads(&["-t", "3,5,7"]), [3, 5, 7]);
        assert_eq!(threads(&["--shape", "fixed", "-t", "6"]), [6]);
        assert!(plan_steps(&parse(&["--shape", "fixed", "-t", "1,2"])).is_err());
        assert!(plan_steps(&parse(&["-t", "0"])).is_err());
    }

    #[test]
    fn paced_steps_add_clients() {
        let s = plan_steps(&parse(&[
            "--shape", "paced", "--rate", "5", "-t", "25", "--step", "10",
        ]))
        .expect("valid");
        assert_eq!(
            s.iter().map(|s| s.threads).collect::<Vec<_>>(),
            [10, 20, 25]
        );
        assert!(s.iter().all(|s| s.rate_per_client == Some(5.0)));
        assert!(plan_steps(&parse(&["--shape", "paced", "--rate", "0"])).is_err());
    }

    #[test]
    fn connection_and_cpu_sweeps() {
        let s = plan_steps(&parse(&[
            "--shape",
            "connections",
            "-t",
            "4",
            "--connections",
            "10,20000",
        ]))
        .expect("valid");
        assert_eq!(
            s.iter()
                .map(|s| (s.threads, s.connections))
                .collect::<Vec<_>>(),
            [(4, 10), (4, 20000)]
        );
        assert!(plan_steps(&parse(&[
            "--shape",
            "connections",
            "-t",
            "40",
            "--connections",
            "10"
        ]))
        .is_err());
        let s = plan_steps(&parse(&["--shape", "cpus", "--cpus", "1"])).expect("valid");
        assert_eq!(s[0].cpus, Some(1));
        assert!(plan_steps(&parse(&["--shape", "cpus", "--cpus", "100000"])).is_err());
    }

    #[test]
    fn cpu_lists_count_and_pin_shards_apart() {
        use crate::sample::count_cpu_list;
        assert_eq!(count_cpu_list("0-15"), Some(16));
        assert_eq!(count_cpu_list("0"), Some(1));
        assert_eq!(count_cpu_list("0-7,16-23,31"), Some(17));
        assert_eq!(count_cpu_list("7-3"), None);
        assert_eq!(count_cpu_list("x"), None);
        use crate::target::local::cpu_list;
        assert_eq!(cpu_list(None, 3, None), None);
        assert_eq!(cpu_list(None, 0, Some(2)).as_deref(), Some("0-1"));
        assert_eq!(cpu_list(None, 3, Some(2)).as_deref(), Some("6-7"));
        // A CPU-sweep step pins every shard to the same first k CPUs.
        assert_eq!(cpu_list(Some(4), 3, Some(2)).as_deref(), Some("0-3"));
        // Refused before any server starts.
        let e = run(parse(&["--shape", "cpus", "--cpus-per-shard", "1"])).unwrap_err();
        assert!(e.contains("choose one"), "{e}");
        let e = run(parse(&["--shards", "2", "--cpus-per-shard", "100000"])).unwrap_err();
        assert!(e.contains("needs 200000 CPUs"), "{e}");
        let e = run(parse(&["--cpus-per-shard", "0"])).unwrap_err();
        assert!(e.contains("at least 1"), "{e}");
    }

    #[test]
    fn hyphenated_server_arguments() {
        let a = parse(&[
            "--mariadb",
            "--mariadb-arg",
            "--thread-handling=pool-of-threads",
            "--canyon-arg=--in-memory",
        ]);
        assert!(a.mariadb);
        assert_eq!(a.mariadb_args, ["--thread-handling=pool-of-threads"]);
        assert_eq!(a.canyon_args, ["--in-memory"]);
        assert_eq!(a.workload, WorkloadKind::ReadOnly);
        assert_eq!(
            parse(&["-w", "read-write"]).workload,
            WorkloadKind::ReadWrite
        );
    }
}
