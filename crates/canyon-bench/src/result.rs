//! The results model: what one run produced, serialised as `results.json` with
//! the stable schema documented in docs/bench.md (`"schema": "canyon-bench/1"`).
//!
//! Stability rule: within schema `canyon-bench/1` fields are only ever added,
//! never renamed, removed or given another meaning; a change of meaning bumps the
//! schema name. Figures that cannot be computed (no transaction in the window)
//! are 0, never NaN, so every number is a JSON number.

use crate::sample::{MachineDelta, ProcessDelta};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The schema identifier written into every results file.
pub const SCHEMA: &str = "canyon-bench/1";

/// A whole run: the machine, the plan, the targets and every step measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// The canyon-bench version that wrote the file.
    pub tool_version: String,
    /// When the run started, RFC 3339, UTC.
    pub started_at: String,
    /// The command line.
    pub command: Vec<String>,
    /// The machine the client ran on (and local servers).
    pub machine: MachineInfo,
    /// What was run.
    pub plan: PlanInfo,
    /// The systems under test, `A` first.
    pub targets: Vec<TargetInfo>,
    /// Every step measured, in the order run (failed ones included).
    pub steps: Vec<StepResult>,
    /// With `--compare`: B relative to A, step by step.
    pub comparison: Option<Comparison>,
    /// `ok`, or `failed` (then `error` says why; the steps so far are kept).
    pub status: Status,
    /// The first fatal error, naming the target and the step.
    pub error: Option<String>,
}

/// Success or failure of a run or a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Completed.
    Ok,
    /// Stopped by an error.
    Failed,
}

/// The machine, as the results tables state it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MachineInfo {
    /// Host name.
    pub hostname: String,
    /// Kernel release.
    pub kernel: String,
    /// CPU model name (/proc/cpuinfo).
    pub cpu_model: String,
    /// Logical CPUs online.
    pub cpus: usize,
    /// Physical memory, bytes.
    pub memory_bytes: u64,
}

impl MachineInfo {
    /// Reads the description of this machine from /proc (fields it cannot read
    /// stay empty).
    pub fn detect() -> MachineInfo {
        let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
        let cpuinfo = read("/proc/cpuinfo");
        let cpu_model = cpuinfo
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == "model name").then(|| v.trim().to_owned())
            })
            .unwrap_or_default();
        let memory_bytes = read("/proc/meminfo")
            .lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024);
        MachineInfo {
            hostname: read("/proc/sys/kernel/hostname").trim().to_owned(),
            kernel: read("/proc/sys/kernel/osrelease").trim().to_owned(),
            cpu_model,
            // The machine's, not this process's affinity mask: the client is
            // often pinned away from the servers' CPUs.
            cpus: crate::sample::machine_cpus() as usize,
            memory_bytes,
        }
    }

    /// One line: "2 CPUs (AMD EPYC ...), 23.4 GiB, Linux 6.1.0".
    pub fn summary(&self) -> String {
        format!(
            "{} CPUs ({}), {:.1} GiB RAM, Linux {}, host {}",
            self.cpus,
            if self.cpu_model.is_empty() {
                "unknown model"
            } else {
                &self.cpu_model
            },
            self.memory_bytes as f64 / (1u64 << 30) as f64,
            self.kernel,
            self.hostname
        )
    }
}

/// The plan, as run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanInfo {
    /// Workload name (`oltp_read_write`, `order_entry`, ...).
    pub workload: String,
    /// Its size parameters.
    pub workload_params: serde_json::Value,
    /// Load shape: `fixed`, `threads`, `paced`, `connections` or `cpus`.
    pub shape: String,
    /// Measured seconds per step.
    pub duration_s: f64,
    /// Unmeasured warm-up seconds before each step.
    pub warmup_s: f64,
    /// The seed of every random choice.
    pub seed: u64,
    /// Rounds per step (A B A B ... with `--compare`).
    pub rounds: u32,
    /// Paced load: transactions per second each client issues.
    pub rate_per_client: Option<f64>,
}

/// A system under test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetInfo {
    /// `A` or `B`.
    pub label: String,
    /// e.g. `canyon (local)`, `mariadb (local)`, `10.0.0.5:3306`.
    pub name: String,
    /// `canyon-local`, `mariadb-local` or `remote`.
    pub kind: String,
    /// `host:port` of each shard (`unix:PATH` with `--unix-socket`).
    pub endpoints: Vec<String>,
    /// `SELECT VERSION()` of the first shard, when it answered.
    pub server_version: Option<String>,
}

/// Query counts in sysbench's classes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueryCounts {
    /// SELECTs.
    pub read: u64,
    /// INSERT / UPDATE / DELETE.
    pub write: u64,
    /// BEGIN / COMMIT / other.
    pub other: u64,
    /// The sum.
    pub total: u64,
}

/// Transaction latency, milliseconds (from an HDR histogram with 3 significant
/// digits; paced load measures from each transaction's scheduled start).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Maximum.
    pub max: f64,
}

/// Server-side costs of one step, for targets whose server processes run on
/// this machine (summed over the shards' processes). See [`crate::sample`] for
/// what each counter covers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerCost {
    /// Server processes sampled.
    pub processes: usize,
    /// Raw differences over the window.
    pub totals: ProcessDelta,
    /// User CPU per transaction, microseconds.
    pub user_us_per_txn: f64,
    /// System CPU per transaction, microseconds.
    pub sys_us_per_txn: f64,
    /// (User + system) CPU per query, microseconds.
    pub cpu_us_per_query: f64,
    /// Voluntary context switches per transaction.
    pub voluntary_cs_per_txn: f64,
    /// Involuntary context switches per transaction.
    pub involuntary_cs_per_txn: f64,
    /// Read-family syscalls per transaction (`syscr`).
    pub syscr_per_txn: f64,
    /// Write-family syscalls per transaction (`syscw`).
    pub syscw_per_txn: f64,
    /// Resident set size at the end of the window, bytes (summed).
    pub rss_bytes: u64,
    /// Whether `/proc/PID/io` was readable (else the syscall figures are 0).
    pub io_readable: bool,
}

/// The load generator's own CPU over the window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientCost {
    /// User CPU, seconds.
    pub user_s: f64,
    /// System CPU, seconds.
    pub sys_s: f64,
    /// (User + system) per transaction, microseconds.
    pub cpu_us_per_txn: f64,
}

/// One measured step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepResult {
    /// Index of the step in the plan (the same step has the same index on both
    /// targets and in every round).
    pub step: usize,
    /// Round (0-based).
    pub round: u32,
    /// Label of the target measured.
    pub target: String,
    /// Active clients.
    pub threads: u32,
    /// Connections open during the window: active clients' plus idle ones.
    pub connections: u32,
    /// CPUs the local server processes were pinned to, if pinned.
    pub cpus: Option<u32>,
    /// Paced load: transactions per second per client.
    pub rate_per_client: Option<f64>,
    /// `ok` or `failed`.
    pub status: Status,
    /// Why the step failed, naming the target and step.
    pub error: Option<String>,
    /// Length of the measured window, seconds.
    pub elapsed_s: f64,
    /// Committed transactions in the window.
    pub transactions: u64,
    /// Statements in the window, by class.
    pub queries: QueryCounts,
    /// Transactions per second.
    pub txn_per_s: f64,
    /// Queries per second (BEGIN and COMMIT count, as in sysbench).
    pub queries_per_s: f64,
    /// Transaction latency.
    pub latency_ms: Latency,
    /// Errors by MySQL error number (client-side numbers 2003 / 2013 for
    /// connection failures), retried ones included.
    pub errors: BTreeMap<u16, u64>,
    /// Transactions rolled back and retried (errors 1213, 1205, 1020).
    pub retries: u64,
    /// Throughput relative to the first step of the same target and round.
    pub relative_throughput: f64,
    /// Local server costs; absent for remote targets.
    pub server: Option<ServerCost>,
    /// The client's CPU.
    pub client: ClientCost,
    /// Machine-wide CPU shares and context switches.
    pub machine: MachineDelta,
}

/// `--compare`: B against A.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Label of the baseline (`A`).
    pub a: String,
    /// Label of the other target (`B`).
    pub b: String,
    /// Rounds per step.
    pub rounds: u32,
    /// Per step, each figure as B / A.
    pub steps: Vec<StepComparison>,
}

/// One step of a comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepComparison {
    /// Step index.
    pub step: usize,
    /// Active clients.
    pub threads: u32,
    /// Open connections.
    pub connections: u32,
    /// CPUs, if pinned.
    pub cpus: Option<u32>,
    /// Figure name (`txn_per_s`, `latency_p95_ms`, `server_cpu_us_per_txn` ...)
    /// to its ratio; figures missing on either side are left out.
    pub figures: BTreeMap<String, Ratio>,
}

/// A ratio B / A over the rounds of a step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Ratio {
    /// Mean of A's values.
    pub a_mean: f64,
    /// Mean of B's values.
    pub b_mean: f64,
    /// Mean of the per-round ratios B_r / A_r.
    pub mean: f64,
    /// Smallest per-round ratio.
    pub min: f64,
    /// Largest per-round ratio.
    pub max: f64,
    /// Sample standard deviation of the per-round ratios (0 for one round).
    pub stddev: f64,
    /// Rounds that gave a ratio.
    pub n: usize,
}

/// `num / den`, or 0 when `den` is 0.
pub fn per(num: f64, den: u64) -> f64 {
    if den == 0 {
        0.0
    } else {
        num / den as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::sample_step;

    #[test]
    fn json_round_trip_keeps_every_field() {
        let report = RunReport {
            schema: SCHEMA.into(),
            tool_version: "0.1.0".into(),
            started_at: "2025-01-01T00:00:00Z".into(),
            command: vec!["canyon".into(), "bench".into()],
            machine: MachineInfo::detect(),
            plan: PlanInfo {
                workload: "oltp_read_write".into(),
                workload_params: serde_json::json!({"tables": 1}),
                shape: "threads".into(),
                duration_s: 10.0,
                warmup_s: 2.0,
                seed: 1,
                rounds: 1,
                rate_per_client: None,
            },
            targets: vec![TargetInfo {
                label: "A".into(),
                name: "canyon (local)".into(),
                kind: "canyon-local".into(),
                endpoints: vec!["127.0.0.1:3306".into()],
                server_version: Some("8.0.0-canyon".into()),
            }],
            steps: vec![sample_step(0, "A", 1, 100.0), sample_step(1, "A", 2, 180.0)],
            comparison: Some(Comparison {
                a: "A".into(),
                b: "B".into(),
                rounds: 2,
                steps: vec![StepComparison {
                    step: 0,
                    threads: 1,
                    connections: 1,
                    cpus: Some(2),
                    figures: BTreeMap::from([(
                        "txn_per_s".to_owned(),
                        Ratio {
                            a_mean: 1.0,
                            b_mean: 2.0,
                            mean: 2.0,
                            min: 1.5,
                            max: 2.5,
                            stddev: 0.7,
                            n: 2,
                        },
                    )]),
                }],
            }),
            status: Status::Failed,
            error: Some("target A, step 2: boom".into()),
        };
        let text = serde_json::to_string_pretty(&report).expect("serialises");
        let back: RunReport = serde_json::from_str(&text).expect("parses back");
        assert_eq!(back, report);

        // The documented field names (docs/bench.md) are the ones written.
        let v: serde_json::Value = serde_json::from_str(&text).expect("json");
        assert_eq!(v["schema"], "canyon-bench/1");
        assert_eq!(v["status"], "failed");
        let step = &v["steps"][0];
        for key in [
            "step",
            "round",
            "target",
            "threads",
            "connections",
            "cpus",
            "rate_per_client",
            "status",
            "error",
            "elapsed_s",
            "transactions",
            "queries",
            "txn_per_s",
            "queries_per_s",
            "latency_ms",
            "errors",
            "retries",
            "relative_throughput",
            "server",
            "client",
            "machine",
        ] {
            assert!(step.get(key).is_some(), "step field {key} missing");
        }
        assert_eq!(step["errors"]["1213"], 3);
        assert_eq!(step["latency_ms"]["p95"], 2.5);
        for key in [
            "user_us_per_txn",
            "sys_us_per_txn",
            "cpu_us_per_query",
            "voluntary_cs_per_txn",
            "involuntary_cs_per_txn",
            "syscr_per_txn",
            "syscw_per_txn",
            "rss_bytes",
            "io_readable",
            "totals",
        ] {
            assert!(
                step["server"].get(key).is_some(),
                "server field {key} missing"
            );
        }
        for key in ["user_pct", "sys_pct", "idle_pct", "context_switches"] {
            assert!(step["machine"].get(key).is_some(), "machine field {key}");
        }
        assert_eq!(
            v["comparison"]["steps"][0]["figures"]["txn_per_s"]["mean"],
            2.0
        );
    }

    #[test]
    fn per_never_divides_by_zero() {
        assert_eq!(per(5.0, 0), 0.0);
        assert_eq!(per(5.0, 2), 2.5);
    }
}
