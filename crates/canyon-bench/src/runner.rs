//! The run: a plan (workload, load shape, steps) executed against one target,
//! or against two alternately (`--compare`), with the results written after
//! every step so that a failure or an interruption loses nothing measured.

use crate::compare;
use crate::driver::{self, IdlePool, Progress, StepSpec, StepTarget};
use crate::report;
use crate::result::{PlanInfo, RunReport, Status, StepResult, TargetInfo, SCHEMA};
use crate::target::Target;
use crate::workload::rng::derive_seed;
use crate::workload::Workload;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::task::JoinSet;

/// The load shapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Shape {
    /// One step: a fixed number of clients for the duration.
    Fixed,
    /// Clients 1, 2, 4, ... N (or the list given).
    Threads,
    /// Each client issues a fixed rate; clients are added step by step.
    Paced,
    /// A fixed number of active clients with more and more idle connections.
    Connections,
    /// Local servers restarted pinned to 1, 2, ... k CPUs.
    Cpus,
}

impl Shape {
    /// The name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Shape::Fixed => "fixed",
            Shape::Threads => "threads",
            Shape::Paced => "paced",
            Shape::Connections => "connections",
            Shape::Cpus => "cpus",
        }
    }
}

/// One step of a plan (the same on every target and round).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlanStep {
    /// Active clients.
    pub threads: u32,
    /// Open connections in all (>= threads).
    pub connections: u32,
    /// CPUs for local servers, if pinned.
    pub cpus: Option<u32>,
    /// Paced load: transactions per second per client.
    pub rate_per_client: Option<f64>,
}

/// What to run.
pub struct Plan {
    /// The workload.
    pub workload: Arc<dyn Workload>,
    /// The load shape (for the report).
    pub shape: Shape,
    /// The steps.
    pub steps: Vec<PlanStep>,
    /// Unmeasured seconds before each step.
    pub warmup: Duration,
    /// Measured seconds per step.
    pub duration: Duration,
    /// Seed of every random choice.
    pub seed: u64,
    /// Rounds of every step (per target).
    pub rounds: u32,
    /// Progress line interval (zero: none).
    pub report_interval: Duration,
    /// Create and load the data first.
    pub prepare: bool,
    /// Drop the data at the end (remote targets; local ones are deleted anyway).
    pub cleanup: bool,
    /// Results directory.
    pub out: PathBuf,
    /// The command line, for the report.
    pub command: Vec<String>,
}

/// Runs `plan` against `targets` (one, or two with `--compare`; labelled `A`,
/// `B`). Returns the report, already written to `plan.out`; its `status` says
/// whether every step succeeded.
pub async fn run(plan: &Plan, targets: &mut [Box<dyn Target>]) -> RunReport {
    let labels: Vec<String> = (0..targets.len())
        .map(|i| char::from(b'A' + i as u8).to_string())
        .collect();
    let mut report = RunReport {
        schema: SCHEMA.into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        started_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        command: plan.command.clone(),
        machine: crate::result::MachineInfo::detect(),
        plan: PlanInfo {
            workload: plan.workload.name().into(),
            workload_params: plan.workload.params(),
            shape: plan.shape.name().into(),
            duration_s: plan.duration.as_secs_f64(),
            warmup_s: plan.warmup.as_secs_f64(),
            seed: plan.seed,
            rounds: plan.rounds,
            rate_per_client: plan.steps.first().and_then(|s| s.rate_per_client),
        },
        targets: Vec::new(),
        steps: Vec::new(),
        comparison: None,
        status: Status::Ok,
        error: None,
    };
    let progress = Progress::new(plan.report_interval);

    // Reachability, credentials, version; then the data.
    for (label, t) in labels.iter().zip(targets.iter_mut()) {
        let eps = t.endpoints();
        let mut version = None;
        for (i, ep) in eps.iter().enumerate() {
            match driver::server_version(ep).await {
                Ok(v) if i == 0 => version = Some(v),
                Ok(_) => {}
                Err(e) => {
                    let msg = format!(
                        "target {label} ({}), shard {i} ({ep}): cannot connect: {e}",
                        t.name()
                    );
                    return finish_failed(plan, report, msg);
                }
            }
        }
        report.targets.push(TargetInfo {
            label: label.clone(),
            name: t.name(),
            kind: t.kind().into(),
            endpoints: eps.iter().map(|e| e.to_string()).collect(),
            server_version: version,
        });
    }
    write(plan, &report);
    for (label, t) in labels.iter().zip(targets.iter_mut()) {
        let ctx = format!("target {label} ({})", t.name());
        if plan.prepare && plan.workload.database().is_some() {
            eprintln!(
                "canyon bench: {ctx}: preparing {} ...",
                plan.workload.name()
            );
            let begun = Instant::now();
            if let Err(e) = prepare(plan.workload.as_ref(), t.as_ref()).await {
                return finish_failed(plan, report, format!("{ctx}, prepare: {e}"));
            }
            eprintln!(
                "canyon bench: {ctx}: prepared in {:.1} s",
                begun.elapsed().as_secs_f64()
            );
        }
        // The schema is there and every statement prepares.
        for (i, ep) in t.endpoints().iter().enumerate() {
            if let Err(e) = driver::open_session(ep, plan.workload.as_ref()).await {
                return finish_failed(
                    plan,
                    report,
                    format!("{ctx}, shard {i} ({ep}): checking the schema: {e}"),
                );
            }
        }
    }

    // The steps: for each step, each round, each target (A B A B ...).
    let mut pinned: Vec<Option<u32>> = vec![None; targets.len()];
    let mut pools: Vec<IdlePool> = (0..targets.len()).map(|_| IdlePool::default()).collect();
    let mut failed = None;
    'steps: for (index, ps) in plan.steps.iter().enumerate() {
        for round in 0..plan.rounds {
            for ti in 0..targets.len() {
                let label = &labels[ti];
                let t = &mut targets[ti];
                if ps.cpus != pinned[ti] {
                    for p in pools.iter_mut() {
                        p.close().await;
                    }
                    eprintln!(
                        "canyon bench: target {label} ({}): restarting pinned to {} CPU(s)",
                        t.name(),
                        ps.cpus.map_or("all".to_string(), |c| c.to_string())
                    );
                    let cpus = ps.cpus;
                    let r = tokio::task::block_in_place(|| t.restart(cpus));
                    if let Err(e) = r {
                        failed = Some(format!("target {label} ({}), step {index}: restart pinned to {cpus:?} CPUs: {e}", t.name()));
                        break 'steps;
                    }
                    pinned[ti] = cpus;
                }
                // Only one target holds idle connections at a time.
                for (pi, p) in pools.iter_mut().enumerate() {
                    if pi != ti && !p.is_empty() {
                        p.close().await;
                    }
                }
                let spec = StepSpec {
                    index,
                    of: plan.steps.len(),
                    round,
                    threads: ps.threads,
                    connections: ps.connections.max(ps.threads),
                    cpus: ps.cpus,
                    rate_per_client: ps.rate_per_client,
                    warmup: plan.warmup,
                    duration: plan.duration,
                    // Same seed on both targets: they get the same transactions.
                    seed: derive_seed(plan.seed, &[index as u64, u64::from(round)]),
                };
                let mut r = driver::run_step(
                    StepTarget {
                        label,
                        target: t.as_mut(),
                    },
                    &plan.workload,
                    &spec,
                    &mut pools[ti],
                    &progress,
                )
                .await;
                r.relative_throughput = relative(&report.steps, &r);
                eprintln!("canyon bench: {}", one_line(&r));
                let err = r.error.clone();
                append_step(plan, &r);
                report.steps.push(r);
                report.comparison = compare::compare(&report);
                write(plan, &report);
                if let Some(e) = err {
                    failed = Some(e);
                    break 'steps;
                }
            }
        }
    }
    for p in pools.iter_mut() {
        p.close().await;
    }
    if plan.cleanup && failed.is_none() {
        for (label, t) in labels.iter().zip(targets.iter_mut()) {
            if let Err(e) = cleanup(plan.workload.as_ref(), t.as_ref()).await {
                eprintln!("canyon bench: target {label}: cleanup failed: {e}");
            }
        }
    }
    match failed {
        Some(e) => finish_failed(plan, report, e),
        None => {
            write(plan, &report);
            report::write_all(&plan.out, &report);
            report
        }
    }
}

fn finish_failed(plan: &Plan, mut report: RunReport, error: String) -> RunReport {
    report.status = Status::Failed;
    report.error = Some(error);
    report.comparison = compare::compare(&report);
    write(plan, &report);
    report::write_all(&plan.out, &report);
    report
}

/// Throughput relative to the first step of the same target and round.
fn relative(done: &[StepResult], r: &StepResult) -> f64 {
    let first = done
        .iter()
        .find(|s| s.target == r.target && s.round == r.round)
        .map_or(r.txn_per_s, |s| s.txn_per_s);
    if first > 0.0 {
        r.txn_per_s / first
    } else {
        0.0
    }
}

/// `A step 2: threads 4 ... 1234.5 txn/s ...` for the log.
fn one_line(r: &StepResult) -> String {
    let mut s = format!(
        "{} step {} round {}: threads {} conns {}{} -> {:.1} txn/s, {:.1} q/s, p95 {:.2} ms, p99 {:.2} ms",
        r.target,
        r.step,
        r.round,
        r.threads,
        r.connections,
        r.cpus.map_or(String::new(), |c| format!(" cpus {c}")),
        r.txn_per_s,
        r.queries_per_s,
        r.latency_ms.p95,
        r.latency_ms.p99
    );
    if let Some(sv) = &r.server {
        s.push_str(&format!(
            ", server {:.0}+{:.0} us/txn, {:.2} cs/txn",
            sv.user_us_per_txn,
            sv.sys_us_per_txn,
            sv.voluntary_cs_per_txn + sv.involuntary_cs_per_txn
        ));
    }
    if r.retries > 0 {
        s.push_str(&format!(", {} retried", r.retries));
    }
    if r.status == Status::Failed {
        s.push_str(" [FAILED]");
    }
    s
}

/// Creates the database and loads every shard, the streams of each shard in
/// parallel.
async fn prepare(w: &dyn Workload, t: &dyn Target) -> Result<(), String> {
    let Some(db) = w.database() else {
        return Ok(());
    };
    let eps = t.endpoints();
    let shards = eps.len();
    let mut set = JoinSet::new();
    for (i, ep) in eps.iter().enumerate() {
        let mut c = driver::connect(ep, None, 0)
            .await
            .map_err(|e| format!("shard {i} ({ep}): {e}"))?;
        if w.creates_database() {
            driver::exec_text(&mut c, &format!("CREATE DATABASE IF NOT EXISTS {db}"))
                .await
                .map_err(|e| format!("shard {i} ({ep}): CREATE DATABASE {db}: {e}"))?;
        }
        let _ = c.disconnect().await;
        for stream in w.prepare(i, shards) {
            let ep = ep.clone();
            let db = db.to_owned();
            set.spawn(async move {
                let mut c = driver::connect(&ep, Some(&db), 0)
                    .await
                    .map_err(|e| format!("shard {i} ({ep}): {e}"))?;
                for sql in stream {
                    driver::exec_text(&mut c, &sql).await.map_err(|e| {
                        let head: String = sql.chars().take(80).collect();
                        format!("shard {i} ({ep}): {head}...: {e}")
                    })?;
                }
                let _ = c.disconnect().await;
                Ok::<(), String>(())
            });
        }
    }
    while let Some(r) = set.join_next().await {
        r.map_err(|e| format!("load task: {e}"))??;
    }
    Ok(())
}

async fn cleanup(w: &dyn Workload, t: &dyn Target) -> Result<(), String> {
    let Some(db) = w.database() else {
        return Ok(());
    };
    for ep in t.endpoints() {
        let mut c = driver::connect(&ep, Some(db), 0)
            .await
            .map_err(|e| e.to_string())?;
        for sql in w.cleanup() {
            driver::exec_text(&mut c, &sql)
                .await
                .map_err(|e| e.to_string())?;
        }
        let _ = c.disconnect().await;
    }
    Ok(())
}

fn write(plan: &Plan, report: &RunReport) {
    if let Err(e) = report::write_json(&plan.out, report) {
        eprintln!(
            "canyon bench: cannot write results to {}: {e}",
            plan.out.display()
        );
    }
}

fn append_step(plan: &Plan, r: &StepResult) {
    if let Err(e) = report::append_jsonl(&plan.out, r) {
        eprintln!("canyon bench: cannot append to steps.jsonl: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::sample_step;

    #[test]
    fn relative_throughput_is_against_the_first_step_of_the_same_target() {
        let done = vec![sample_step(0, "A", 1, 100.0), sample_step(0, "B", 1, 50.0)];
        assert!((relative(&done, &sample_step(1, "A", 2, 180.0)) - 1.8).abs() < 1e-9);
        assert!((relative(&done, &sample_step(1, "B", 2, 100.0)) - 2.0).abs() < 1e-9);
        assert_eq!(relative(&[], &sample_step(0, "A", 1, 70.0)), 1.0);
    }
}
