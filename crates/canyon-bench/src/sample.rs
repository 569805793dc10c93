//! Samples of a local server process and of the whole machine, read from /proc
//! before and after each measured window; the differences, divided by the
//! transactions of the window, give the per-transaction costs.
//!
//! What each figure counts, exactly (proc(5)):
//!
//! | figure | source | covers |
//! |---|---|---|
//! | user / system CPU | `/proc/PID/stat` fields 14, 15 (utime, stime), in clock ticks | every thread of the process, including threads that already exited |
//! | voluntary / involuntary context switches | `voluntary_ctxt_switches`, `nonvoluntary_ctxt_switches` of `/proc/PID/task/*/status`, summed | the threads alive at the sample (a thread that exits inside the window takes its switches with it). `/proc/PID/status` alone would show the main thread only |
//! | read / write syscalls | `/proc/PID/io` `syscr`, `syscw` | the read and write *families* that go through the VFS: read, readv, pread64, preadv, write, writev, pwrite64, pwritev (+ sendfile, copy_file_range) on files, pipes and sockets alike. **Not** recv/recvfrom/recvmsg, send/sendto/sendmsg: a server that uses those for its sockets (Rust's std and tokio do) shows mostly its file I/O here |
//! | RSS | `VmRSS` of `/proc/PID/status` | resident memory at the end of the window |
//! | machine user / system / idle % | the `cpu` line of `/proc/stat` | all CPUs; user = user + nice, system = system + irq + softirq, idle = idle + iowait; steal is counted in the total only |
//! | machine context switches | `ctxt` of `/proc/stat` | every context switch on the machine, the client's included |
//!
//! The client's own CPU (`/proc/self/stat`) is sampled the same way: on a small
//! machine the load generator competes with the server, and the report says how
//! much.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// A parse failure of a /proc file: which file and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError(pub String);

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// CPU times from `/proc/PID/stat`, in clock ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatTimes {
    /// utime (field 14).
    pub utime: u64,
    /// stime (field 15).
    pub stime: u64,
    /// num_threads (field 20).
    pub threads: u64,
}

/// Parses `/proc/PID/stat`. The command name (field 2) is in parentheses and may
/// itself contain spaces and parentheses, so fields are counted from the last `)`.
pub fn parse_stat(text: &str) -> Result<StatTimes, ParseError> {
    let close = text
        .rfind(')')
        .ok_or_else(|| ParseError("stat: no ')' after the command name".into()))?;
    // After ") " come fields 3 (state), 4, 5, ...
    let rest: Vec<&str> = text[close + 1..].split_whitespace().collect();
    let field = |n: usize| -> Result<u64, ParseError> {
        let s = rest
            .get(n - 3)
            .ok_or_else(|| ParseError(format!("stat: field {n} missing")))?;
        s.parse()
            .map_err(|_| ParseError(format!("stat: field {n} is not a number: {s:?}")))
    };
    Ok(StatTimes {
        utime: field(14)?,
        stime: field(15)?,
        threads: field(20)?,
    })
}

/// The fields of `/proc/PID/status` (or `/proc/PID/task/TID/status`) we use.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatusFields {
    /// `voluntary_ctxt_switches`.
    pub voluntary: u64,
    /// `nonvoluntary_ctxt_switches`.
    pub involuntary: u64,
    /// `VmRSS` in bytes (0 for a thread's status, which has none).
    pub rss_bytes: u64,
}

/// Parses a `status` file.
pub fn parse_status(text: &str) -> Result<StatusFields, ParseError> {
    let mut out = StatusFields::default();
    let (mut vol, mut invol) = (false, false);
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        let number = |v: &str| -> Result<u64, ParseError> {
            v.split_whitespace()
                .next()
                .unwrap_or_default()
                .parse()
                .map_err(|_| ParseError(format!("status: {key} is not a number: {v:?}")))
        };
        match key {
            "voluntary_ctxt_switches" => {
                out.voluntary = number(value)?;
                vol = true;
            }
            "nonvoluntary_ctxt_switches" => {
                out.involuntary = number(value)?;
                invol = true;
            }
            "VmRSS" => out.rss_bytes = number(value)? * 1024,
            _ => {}
        }
    }
    if vol && invol {
        Ok(out)
    } else {
        Err(ParseError("status: no context-switch counts".into()))
    }
}

/// `syscr` and `syscw` of `/proc/PID/io`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoCounts {
    /// Read-family system calls.
    pub syscr: u64,
    /// Write-family system calls.
    pub syscw: u64,
}

/// Parses `/proc/PID/io`.
pub fn parse_io(text: &str) -> Result<IoCounts, ParseError> {
    let mut r = None;
    let mut w = None;
    for line in text.lines() {
        if let Some((k, v)) = line.split_once(':') {
            let v = v.trim();
            match k {
                "syscr" => r = v.parse().ok(),
                "syscw" => w = v.parse().ok(),
                _ => {}
            }
        }
    }
    match (r, w) {
        (Some(syscr), Some(syscw)) => Ok(IoCounts { syscr, syscw }),
        _ => Err(ParseError("io: syscr / syscw missing".into())),
    }
}

/// The aggregate `cpu` line and `ctxt` of `/proc/stat`, in clock ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MachineSample {
    /// user + nice.
    pub user: u64,
    /// system + irq + softirq.
    pub system: u64,
    /// idle + iowait.
    pub idle: u64,
    /// Every tick: the above plus steal (guest time is already inside user).
    pub total: u64,
    /// Context switches since boot.
    pub ctxt: u64,
}

/// Parses `/proc/stat`.
pub fn parse_machine_stat(text: &str) -> Result<MachineSample, ParseError> {
    let mut out = MachineSample::default();
    let mut seen_cpu = false;
    for line in text.lines() {
        let mut it = line.split_whitespace();
        match it.next() {
            Some("cpu") => {
                let v: Vec<u64> = it.map(|x| x.parse().unwrap_or(0)).collect();
                if v.len() < 4 {
                    return Err(ParseError("stat: short cpu line".into()));
                }
                let at = |i: usize| v.get(i).copied().unwrap_or(0);
                // user nice system idle iowait irq softirq steal guest guest_nice
                out.user = at(0) + at(1);
                out.system = at(2) + at(5) + at(6);
                out.idle = at(3) + at(4);
                out.total = out.user + out.system + out.idle + at(7);
                seen_cpu = true;
            }
            Some("ctxt") => out.ctxt = it.next().and_then(|x| x.parse().ok()).unwrap_or(0),
            _ => {}
        }
    }
    if seen_cpu {
        Ok(out)
    } else {
        Err(ParseError("stat: no cpu line".into()))
    }
}

/// One sample of a process.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProcessSample {
    /// CPU times.
    pub stat: StatTimes,
    /// Context switches summed over live threads; RSS of the process.
    pub status: StatusFields,
    /// Read / write syscalls (zero if `/proc/PID/io` is not readable).
    pub io: IoCounts,
    /// Whether `io` was readable (it needs ptrace access to the process).
    pub io_readable: bool,
}

/// Samples process `pid` (use `"self"` for this process).
pub fn sample_process(pid: &str) -> Result<ProcessSample, String> {
    let base = Path::new("/proc").join(pid);
    let read = |p: &Path| std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()));
    let stat = parse_stat(&read(&base.join("stat"))?).map_err(|e| e.0)?;
    let mut status = parse_status(&read(&base.join("status"))?).map_err(|e| e.0)?;
    // Threads: sum the per-task counts; a thread may exit between listing and
    // reading, which just drops it from the sum.
    if let Ok(tasks) = std::fs::read_dir(base.join("task")) {
        let (mut vol, mut invol) = (0, 0);
        for t in tasks.flatten() {
            if let Ok(text) = std::fs::read_to_string(t.path().join("status")) {
                if let Ok(s) = parse_status(&text) {
                    vol += s.voluntary;
                    invol += s.involuntary;
                }
            }
        }
        status.voluntary = vol;
        status.involuntary = invol;
    }
    let (io, io_readable) = match std::fs::read_to_string(base.join("io")) {
        Ok(text) => (parse_io(&text).map_err(|e| e.0)?, true),
        Err(_) => (IoCounts::default(), false),
    };
    Ok(ProcessSample {
        stat,
        status,
        io,
        io_readable,
    })
}

/// Samples the machine.
pub fn sample_machine() -> Result<MachineSample, String> {
    let text = std::fs::read_to_string("/proc/stat").map_err(|e| format!("/proc/stat: {e}"))?;
    parse_machine_stat(&text).map_err(|e| e.0)
}

/// Clock ticks per second (`sysconf(_SC_CLK_TCK)`, USER_HZ): the unit of the
/// CPU times in /proc.
pub fn ticks_per_second() -> f64 {
    rustix::param::clock_ticks_per_second() as f64
}

/// What a process spent between two samples.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcessDelta {
    /// User CPU, seconds.
    pub user_s: f64,
    /// System CPU, seconds.
    pub sys_s: f64,
    /// Voluntary context switches (live threads, see the module doc).
    pub voluntary_cs: u64,
    /// Involuntary context switches.
    pub involuntary_cs: u64,
    /// Read-family syscalls (`syscr`).
    pub syscr: u64,
    /// Write-family syscalls (`syscw`).
    pub syscw: u64,
}

impl ProcessDelta {
    /// `after - before`, with CPU ticks converted at `hz` ticks per second.
    /// Counters that went backwards (a thread exited and took its switches
    /// along) count as zero rather than wrapping.
    pub fn between(before: &ProcessSample, after: &ProcessSample, hz: f64) -> ProcessDelta {
        ProcessDelta {
            user_s: after.stat.utime.saturating_sub(before.stat.utime) as f64 / hz,
            sys_s: after.stat.stime.saturating_sub(before.stat.stime) as f64 / hz,
            voluntary_cs: after
                .status
                .voluntary
                .saturating_sub(before.status.voluntary),
            involuntary_cs: after
                .status
                .involuntary
                .saturating_sub(before.status.involuntary),
            syscr: after.io.syscr.saturating_sub(before.io.syscr),
            syscw: after.io.syscw.saturating_sub(before.io.syscw),
        }
    }

    /// The sum of two deltas (several server processes of one sharded target).
    pub fn plus(self, o: ProcessDelta) -> ProcessDelta {
        ProcessDelta {
            user_s: self.user_s + o.user_s,
            sys_s: self.sys_s + o.sys_s,
            voluntary_cs: self.voluntary_cs + o.voluntary_cs,
            involuntary_cs: self.involuntary_cs + o.involuntary_cs,
            syscr: self.syscr + o.syscr,
            syscw: self.syscw + o.syscw,
        }
    }
}

/// Machine-wide percentages between two samples.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct MachineDelta {
    /// User (+ nice) share of all CPU time, percent.
    pub user_pct: f64,
    /// System (+ irq + softirq) share, percent.
    pub sys_pct: f64,
    /// Idle (+ iowait) share, percent.
    pub idle_pct: f64,
    /// Context switches on the whole machine.
    pub context_switches: u64,
}

impl MachineDelta {
    /// The shares between two samples (all zero if no tick passed).
    pub fn between(before: &MachineSample, after: &MachineSample) -> MachineDelta {
        let total = after.total.saturating_sub(before.total);
        let pct = |a: u64, b: u64| {
            if total == 0 {
                0.0
            } else {
                100.0 * a.saturating_sub(b) as f64 / total as f64
            }
        };
        MachineDelta {
            user_pct: pct(after.user, before.user),
            sys_pct: pct(after.system, before.system),
            idle_pct: pct(after.idle, before.idle),
            context_switches: after.ctxt.saturating_sub(before.ctxt),
        }
    }
}

/// CPUs of the machine (online), which servers may be pinned to. Not
/// `available_parallelism()`: that honours this process's own affinity, and
/// the client is often pinned away from the servers' CPUs on purpose.
pub fn machine_cpus() -> u32 {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|s| count_cpu_list(s.trim()))
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get() as u32))
}

/// The number of CPUs in a kernel CPU list such as `0-7,16-23` (`None` if it
/// does not parse).
pub fn count_cpu_list(list: &str) -> Option<u32> {
    let mut n = 0u32;
    for part in list.split(',') {
        n += match part.split_once('-') {
            Some((a, b)) => b.parse::<u32>().ok()?.checked_sub(a.parse::<u32>().ok()?)? + 1,
            None => {
                part.parse::<u32>().ok()?;
                1
            }
        };
    }
    (n > 0).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Captured from a Linux 6.1 machine; the command name has a space and a ')'.
    const STAT: &str = "4242 (canyon-work) x) S 1 4242 4242 0 -1 4194560 18311 0 3 0 1234 567 0 0 20 0 9 0 81234 1130496000 9981 18446744073709551615 1 1 0 0 0 0 0 4096 17991 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n";

    const STATUS: &str = "Name:\tcanyon\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4242\nThreads:\t9\nVmPeak:\t 1103996 kB\nVmRSS:\t   39924 kB\nRssAnon:\t   20000 kB\nvoluntary_ctxt_switches:\t152\nnonvoluntary_ctxt_switches:\t7\n";

    const IO: &str = "rchar: 123456\nwchar: 654321\nsyscr: 3011\nsyscw: 1200\nread_bytes: 0\nwrite_bytes: 409600\ncancelled_write_bytes: 0\n";

    const PROC_STAT: &str = "cpu  10132153 290696 3084719 46828483 16683 0 25195 0 0 0\ncpu0 1393280 32966 572056 13343292 6130 0 17875 0 0 0\nintr 1462898\nctxt 1990473\nbtime 1062191376\nprocesses 2915\n";

    #[test]
    fn stat_fields_counted_from_the_last_parenthesis() {
        let s = parse_stat(STAT).expect("fixture parses");
        assert_eq!(
            s,
            StatTimes {
                utime: 1234,
                stime: 567,
                threads: 9
            }
        );
        assert!(parse_stat("12 (x) S 1 2").is_err());
        assert!(parse_stat("no parenthesis").is_err());
    }

    #[test]
    fn status_context_switches_and_rss() {
        let s = parse_status(STATUS).expect("fixture parses");
        assert_eq!(s.voluntary, 152);
        assert_eq!(s.involuntary, 7);
        assert_eq!(s.rss_bytes, 39924 * 1024);
        assert!(parse_status("Name:\tx\n").is_err());
    }

    #[test]
    fn io_syscalls() {
        assert_eq!(
            parse_io(IO).expect("fixture parses"),
            IoCounts {
                syscr: 3011,
                syscw: 1200
            }
        );
        assert!(parse_io("rchar: 1\n").is_err());
    }

    #[test]
    fn machine_stat_groups_ticks() {
        let m = parse_machine_stat(PROC_STAT).expect("fixture parses");
        assert_eq!(m.user, 10132153 + 290696);
        assert_eq!(m.system, 3084719 + 25195);
        assert_eq!(m.idle, 46828483 + 16683);
        assert_eq!(m.total, m.user + m.system + m.idle);
        assert_eq!(m.ctxt, 1990473);
        assert!(parse_machine_stat("intr 1\n").is_err());
    }

    #[test]
    fn deltas() {
        let a = ProcessSample {
            stat: StatTimes {
                utime: 100,
                stime: 50,
                threads: 4,
            },
            status: StatusFields {
                voluntary: 10,
                involuntary: 5,
                rss_bytes: 0,
            },
            io: IoCounts { syscr: 1, syscw: 2 },
            io_readable: true,
        };
        let mut b = a;
        b.stat.utime = 300;
        b.stat.stime = 60;
        b.status.voluntary = 30;
        b.status.involuntary = 1; // a thread exited: no wrap-around
        b.io.syscw = 12;
        let d = ProcessDelta::between(&a, &b, 100.0);
        assert!((d.user_s - 2.0).abs() < 1e-9 && (d.sys_s - 0.1).abs() < 1e-9);
        assert_eq!((d.voluntary_cs, d.involuntary_cs), (20, 0));
        assert_eq!((d.syscr, d.syscw), (0, 10));

        let m0 = parse_machine_stat("cpu 100 0 100 800 0 0 0 0\nctxt 5\n").expect("parses");
        let m1 = parse_machine_stat("cpu 150 0 130 820 0 0 0 0\nctxt 25\n").expect("parses");
        let md = MachineDelta::between(&m0, &m1);
        assert!((md.user_pct - 50.0).abs() < 1e-9);
        assert!((md.sys_pct - 30.0).abs() < 1e-9);
        assert!((md.idle_pct - 20.0).abs() < 1e-9);
        assert_eq!(md.context_switches, 20);
    }

    #[test]
    fn sampling_this_process_works() {
        let s = sample_process("self").expect("/proc/self is readable");
        assert!(s.stat.threads >= 1);
        assert!(s.status.rss_bytes > 0);
        assert!(sample_machine().expect("/proc/stat").total > 0);
        assert!(ticks_per_second() > 0.0);
    }
}
