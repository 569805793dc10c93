//! Synthetic results and small checkers, for this crate's tests and for tests
//! elsewhere that exercise the report (e.g. opening the HTML report in a
//! headless browser) without running a benchmark.

use crate::result::{
    ClientCost, Latency, MachineInfo, PlanInfo, QueryCounts, RunReport, ServerCost, Status,
    StepResult, TargetInfo, SCHEMA,
};
use crate::sample::{MachineDelta, ProcessDelta};
use std::collections::BTreeMap;

/// A plausible successful step of target `target` with `threads` clients at
/// `tps` transactions per second.
pub fn sample_step(step: usize, target: &str, threads: u32, tps: f64) -> StepResult {
    let t = f64::from(threads);
    StepResult {
        step,
        round: 0,
        target: target.into(),
        threads,
        connections: threads,
        cpus: None,
        rate_per_client: None,
        status: Status::Ok,
        error: None,
        elapsed_s: 10.0,
        transactions: (tps * 10.0) as u64,
        queries: QueryCounts {
            read: (tps * 140.0) as u64,
            write: (tps * 40.0) as u64,
            other: (tps * 20.0) as u64,
            total: (tps * 200.0) as u64,
        },
        txn_per_s: tps,
        queries_per_s: tps * 20.0,
        latency_ms: Latency {
            mean: 1.0 + t * 0.2,
            p50: 0.9 + t * 0.2,
            p95: 2.0 + t * 0.5,
            p99: 4.0 + t,
            max: 12.0 + t * 2.0,
        },
        errors: BTreeMap::from([(1213, 3)]),
        retries: 3,
        relative_throughput: 1.0,
        server: Some(ServerCost {
            processes: 1,
            totals: ProcessDelta {
                user_s: 1.0,
                sys_s: 0.5,
                voluntary_cs: 10,
                involuntary_cs: 2,
                syscr: 7,
                syscw: 9,
            },
            user_us_per_txn: 100.0,
            sys_us_per_txn: 50.0,
            cpu_us_per_query: 7.5,
            voluntary_cs_per_txn: 1.0,
            involuntary_cs_per_txn: 0.25,
            syscr_per_txn: 0.5,
            syscw_per_txn: 1.5,
            rss_bytes: 1 << 26,
            io_readable: true,
        }),
        client: ClientCost {
            user_s: 0.5,
            sys_s: 0.25,
            cpu_us_per_txn: 75.0,
        },
        machine: MachineDelta {
            user_pct: 40.0,
            sys_pct: 20.0,
            idle_pct: 40.0,
            context_switches: 1000,
        },
    }
}

/// A thread-sweep report of one local Canyon target over 1, 2, 4, 8 threads.
pub fn sample_report() -> RunReport {
    let steps = [(1, 1000.0), (2, 1800.0), (4, 3000.0), (8, 3300.0)]
        .iter()
        .enumerate()
        .map(|(i, &(t, tps))| {
            let mut s = sample_step(i, "A", t, tps);
            s.relative_throughput = tps / 1000.0;
            s
        })
        .collect();
    RunReport {
        schema: SCHEMA.into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        started_at: "2025-01-01T00:00:00Z".into(),
        command: vec!["canyon".into(), "bench".into()],
        machine: MachineInfo {
            hostname: "test".into(),
            kernel: "6.1.0".into(),
            cpu_model: "Test CPU".into(),
            cpus: 2,
            memory_bytes: 8 << 30,
        },
        plan: PlanInfo {
            workload: "oltp_read_write".into(),
            workload_params: serde_json::json!({"tables": 1, "table_size": 10000}),
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
            server_version: Some("8.0.36-canyon".into()),
        }],
        steps,
        comparison: None,
        status: Status::Ok,
        error: None,
    }
}

/// Checks that `doc` is well-formed XML: one root element, properly nested and
/// closed tags, quoted attributes, no stray `<` or `&`. (Enough to prove an SVG
/// file will parse; not a validating parser.)
pub fn check_xml(doc: &str) -> Result<(), String> {
    let b = doc.as_bytes();
    let mut i = 0;
    let mut stack: Vec<String> = Vec::new();
    let mut roots = 0;
    let name_char = |c: u8| c.is_ascii_alphanumeric() || b"_-.:".contains(&c);
    let check_text = |t: &str, at: usize| -> Result<(), String> {
        let mut rest = t;
        while let Some(p) = rest.find('&') {
            let after = &rest[p + 1..];
            let end = after
                .find(';')
                .ok_or_else(|| format!("unterminated entity at byte {at}"))?;
            let ent = &after[..end];
            let ok = matches!(ent, "amp" | "lt" | "gt" | "quot" | "apos")
                || ent
                    .strip_prefix("#x")
                    .is_some_and(|h| u32::from_str_radix(h, 16).is_ok())
                || ent
                    .strip_prefix('#')
                    .is_some_and(|d| d.parse::<u32>().is_ok());
            if !ok {
                return Err(format!("bad entity &{ent}; at byte {at}"));
            }
            rest = &after[end + 1..];
        }
        if t.contains('<') {
            return Err(format!("stray '<' at byte {at}"));
        }
        Ok(())
    };
    while i < b.len() {
        if b[i] != b'<' {
            let next = doc[i..].find('<').map_or(b.len(), |p| i + p);
            let text = &doc[i..next];
            if stack.is_empty() && !text.trim().is_empty() {
                return Err(format!("text outside the root element at byte {i}"));
            }
            check_text(text, i)?;
            i = next;
            continue;
        }
        let rest = &doc[i..];
        if rest.starts_with("<?") {
            i += rest.find("?>").ok_or("unterminated <?")? + 2;
        } else if rest.starts_with("<!--") {
            i += rest.find("-->").ok_or("unterminated comment")? + 3;
        } else if rest.starts_with("<!DOCTYPE") {
            i += rest.find('>').ok_or("unterminated DOCTYPE")? + 1;
        } else if rest.starts_with("<![CDATA[") {
            i += rest.find("]]>").ok_or("unterminated CDATA")? + 3;
        } else if let Some(close) = rest.strip_prefix("</") {
            let end = close.find('>').ok_or("unterminated end tag")?;
            let name = close[..end].trim();
            match stack.pop() {
                Some(open) if open == name => {}
                Some(open) => return Err(format!("</{name}> closes <{open}> at byte {i}")),
                None => return Err(format!("</{name}> without an open element at byte {i}")),
            }
            i += 2 + end + 1;
        } else {
            // Start tag: name, attributes name="value" or name='value'.
            let mut j = i + 1;
            while j < b.len() && name_char(b[j]) {
                j += 1;
            }
            let name = &doc[i + 1..j];
            if name.is_empty() {
                return Err(format!("bad tag at byte {i}"));
            }
            let mut seen = std::collections::HashSet::new();
            loop {
                while j < b.len() && b[j].is_ascii_whitespace() {
                    j += 1;
                }
                if j >= b.len() {
                    return Err(format!("unterminated <{name}"));
                }
                if b[j] == b'>' {
                    if stack.is_empty() {
                        roots += 1;
                    }
                    stack.push(name.to_owned());
                    j += 1;
                    break;
                }
                if doc[j..].starts_with("/>") {
                    if stack.is_empty() {
                        roots += 1;
                    }
                    j += 2;
                    break;
                }
                let a0 = j;
                while j < b.len() && name_char(b[j]) {
                    j += 1;
                }
                let attr = &doc[a0..j];
                if attr.is_empty() {
                    return Err(format!("bad attribute in <{name}> at byte {j}"));
                }
                if !seen.insert(attr.to_owned()) {
                    return Err(format!("duplicate attribute {attr} in <{name}>"));
                }
                while j < b.len() && b[j].is_ascii_whitespace() {
                    j += 1;
                }
                if b.get(j) != Some(&b'=') {
                    return Err(format!("attribute {attr} of <{name}> has no value"));
                }
                j += 1;
                while j < b.len() && b[j].is_ascii_whitespace() {
                    j += 1;
                }
                let q = *b.get(j).ok_or("unterminated attribute")?;
                if q != b'"' && q != b'\'' {
                    return Err(format!("unquoted attribute {attr} in <{name}>"));
                }
                let vend = doc[j + 1..]
                    .find(char::from(q))
                    .ok_or_else(|| format!("unterminated value of {attr}"))?;
                check_text(&doc[j + 1..j + 1 + vend], j)?;
                j += 1 + vend + 1;
            }
            i = j;
        }
    }
    if let Some(open) = stack.pop() {
        return Err(format!("<{open}> is never closed"));
    }
    if roots != 1 {
        return Err(format!("{roots} root elements"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check_xml;

    #[test]
    fn xml_checker_accepts_and_rejects() {
        assert!(check_xml(
            "<?xml version=\"1.0\"?><svg a=\"1\" b='2'><g><text>x &amp; y</text></g><rect/></svg>"
        )
        .is_ok());
        assert!(check_xml("<svg><g></svg>").is_err());
        assert!(check_xml("<svg a=1></svg>").is_err());
        assert!(check_xml("<svg>a & b</svg>").is_err());
        assert!(check_xml("<svg></svg><svg></svg>").is_err());
        assert!(check_xml("<svg a=\"1\" a=\"2\"></svg>").is_err());
        assert!(check_xml("<svg>").is_err());
    }
}
