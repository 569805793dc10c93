//! `--compare`: B against A, figure by figure, as ratios with their spread.
//!
//! Shared machines drift (other tenants, thermal limits, page cache), so two
//! servers measured one after the other cannot be compared by their absolute
//! figures. The runner alternates them step by step (A B A B ...) and this
//! module pairs A and B of the same step and round, takes the ratio B_r / A_r
//! of each figure per round, and reports the mean, min, max and standard
//! deviation of those ratios: the spread says how much to trust the mean.

use crate::result::{Comparison, Ratio, RunReport, Status, StepComparison, StepResult};
use std::collections::BTreeMap;

/// The figures compared, with how to read each from a step.
fn figures() -> Vec<(&'static str, fn(&StepResult) -> Option<f64>)> {
    vec![
        ("txn_per_s", |s| Some(s.txn_per_s)),
        ("queries_per_s", |s| Some(s.queries_per_s)),
        ("latency_p50_ms", |s| Some(s.latency_ms.p50)),
        ("latency_p95_ms", |s| Some(s.latency_ms.p95)),
        ("latency_p99_ms", |s| Some(s.latency_ms.p99)),
        ("server_cpu_us_per_txn", |s| {
            s.server.map(|v| v.user_us_per_txn + v.sys_us_per_txn)
        }),
        ("server_cs_per_txn", |s| {
            s.server
                .map(|v| v.voluntary_cs_per_txn + v.involuntary_cs_per_txn)
        }),
        ("server_syscalls_per_txn", |s| {
            s.server
                .filter(|v| v.io_readable)
                .map(|v| v.syscr_per_txn + v.syscw_per_txn)
        }),
        ("server_rss_bytes", |s| s.server.map(|v| v.rss_bytes as f64)),
    ]
}

/// The ratio statistics of paired values `(a, b)`; pairs whose `a` is 0 give
/// no ratio. `None` if no pair does.
pub fn ratio(pairs: &[(f64, f64)]) -> Option<Ratio> {
    let ratios: Vec<f64> = pairs
        .iter()
        .filter(|(a, b)| *a > 0.0 && a.is_finite() && b.is_finite())
        .map(|(a, b)| b / a)
        .collect();
    if ratios.is_empty() {
        return None;
    }
    let n = ratios.len();
    let mean = ratios.iter().sum::<f64>() / n as f64;
    let var = if n > 1 {
        ratios.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (n - 1) as f64
    } else {
        0.0
    };
    let avg = |f: fn(&(f64, f64)) -> f64| pairs.iter().map(f).sum::<f64>() / pairs.len() as f64;
    Some(Ratio {
        a_mean: avg(|p| p.0),
        b_mean: avg(|p| p.1),
        mean,
        min: ratios.iter().copied().fold(f64::INFINITY, f64::min),
        max: ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        stddev: var.sqrt(),
        n,
    })
}

/// The comparison of the report's first two targets, from the successful
/// steps measured on both; `None` with fewer than two targets.
pub fn compare(report: &RunReport) -> Option<Comparison> {
    let (a, b) = match report.targets.as_slice() {
        [a, b, ..] => (a.label.clone(), b.label.clone()),
        _ => return None,
    };
    let ok = |s: &&StepResult| s.status == Status::Ok;
    let mut step_ids: Vec<usize> = report.steps.iter().map(|s| s.step).collect();
    step_ids.dedup();
    let mut steps = Vec::new();
    for id in step_ids {
        let of = |label: &str| -> BTreeMap<u32, &StepResult> {
            report
                .steps
                .iter()
                .filter(ok)
                .filter(|s| s.step == id && s.target == label)
                .map(|s| (s.round, s))
                .collect()
        };
        let (sa, sb) = (of(&a), of(&b));
        let pairs: Vec<(&StepResult, &StepResult)> = sa
            .iter()
            .filter_map(|(round, x)| sb.get(round).map(|y| (*x, *y)))
            .collect();
        let Some((first, _)) = pairs.first() else {
            continue;
        };
        let mut figs = BTreeMap::new();
        for (name, get) in figures() {
            let values: Vec<(f64, f64)> = pairs
                .iter()
                .filter_map(|(x, y)| Some((get(x)?, get(y)?)))
                .collect();
            if let Some(r) = ratio(&values) {
                figs.insert(name.to_owned(), r);
            }
        }
        steps.push(StepComparison {
            step: id,
            threads: first.threads,
            connections: first.connections,
            cpus: first.cpus,
            figures: figs,
        });
    }
    Some(Comparison {
        a,
        b,
        rounds: report.plan.rounds,
        steps,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{sample_report, sample_step};

    #[test]
    fn ratio_statistics() {
        let r = ratio(&[(100.0, 110.0), (100.0, 130.0), (0.0, 5.0)]).expect("two usable pairs");
        assert_eq!(r.n, 2);
        assert!((r.mean - 1.2).abs() < 1e-12);
        assert!((r.min - 1.1).abs() < 1e-12 && (r.max - 1.3).abs() < 1e-12);
        assert!((r.stddev - 0.141_421_356).abs() < 1e-6);
        assert!(ratio(&[(0.0, 1.0)]).is_none());
        assert_eq!(ratio(&[(2.0, 1.0)]).map(|r| r.stddev), Some(0.0));
    }

    #[test]
    fn pairs_rounds_of_the_same_step() {
        let mut report = sample_report();
        report.targets.push(crate::result::TargetInfo {
            label: "B".into(),
            name: "mariadb (local)".into(),
            kind: "mariadb-local".into(),
            endpoints: vec![],
            server_version: None,
        });
        report.steps.clear();
        for round in 0..2 {
            for (t, tps) in [("A", 100.0), ("B", 150.0 + f64::from(round) * 50.0)] {
                let mut s = sample_step(0, t, 4, tps);
                s.round = round;
                report.steps.push(s);
            }
        }
        // A failed step of B on step 1 has no partner: left out.
        let mut f = sample_step(1, "B", 8, 10.0);
        f.status = Status::Failed;
        report.steps.push(f);
        let c = compare(&report).expect("two targets");
        assert_eq!((c.a.as_str(), c.b.as_str()), ("A", "B"));
        assert_eq!(c.steps.len(), 1);
        let tps = c.steps[0].figures["txn_per_s"];
        assert_eq!(tps.n, 2);
        assert!((tps.mean - 1.75).abs() < 1e-12);
        assert!((tps.min - 1.5).abs() < 1e-12 && (tps.max - 2.0).abs() < 1e-12);
        assert!(c.steps[0].figures.contains_key("server_cpu_us_per_txn"));
    }
}
