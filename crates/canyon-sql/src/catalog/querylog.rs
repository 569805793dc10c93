//! The slow query log and the general query log, in mysqld 8's file formats
//! (what `mysqldumpslow` and pt-query-digest read).
//!
//! # Writing without a shared lock
//!
//! mysqld serialises both logs on a mutex (`LOCK_log`): every connection
//! that logs waits for every other, which caps a server with the general log
//! on at the speed of one writer. Canyon's connections share nothing on the
//! logging path:
//!
//! - Each connection formats its whole entry (all the lines of a slow-log
//!   entry, or one general-log line) into its own buffer ([`SessionLog`],
//!   reused from statement to statement) and hands it to the kernel with ONE
//!   `write(2)` on a file opened with `O_APPEND`.
//! - The open file is in an atomically swapped snapshot ([`ArcSwap`] of a
//!   `LogFile`): a writer loads it (no lock; arc-swap's fast path is a few
//!   atomic operations on per-thread debt slots, not a shared counter),
//!   writes, and drops it. `FLUSH LOGS` opens the path again and swaps the
//!   new file in; a writer holding the old snapshot finishes its write into
//!   the old (renamed) file, and the old file is closed when its last holder
//!   lets go. That is log rotation as logrotate's `postrotate` expects it.
//! - When a log is off, the statement pays one relaxed atomic load
//!   ([`QueryLogs::slow_on`], [`QueryLogs::general_on`]).
//!
//! Why one `O_APPEND` write is one whole entry: on Linux, a `write(2)` to a
//! regular file runs under the inode's write lock (`inode_lock` in
//! `generic_file_write_iter` and the ext4 / xfs / btrfs equivalents), and
//! with `O_APPEND` the file position is set to the end of the file inside
//! that lock. Two writes to the same file therefore never interleave, and
//! neither overwrites the other, whatever their sizes, from threads or from
//! processes (POSIX itself promises atomicity only for pipe writes up to
//! PIPE_BUF; this is Linux's behaviour for local regular files, not NFS).
//! A single write moves at most `MAX_RW_COUNT` (2 GiB − 4 KiB) bytes; an
//! entry is bounded by the statement text, which `max_allowed_packet`
//! (at most 1 GiB) bounds, so our entries always fit in one call.
//!
//! A write to a regular file returns short only when the file cannot grow
//! (ENOSPC, EFBIG, RLIMIT_FSIZE) or a fatal signal arrived. Writing the rest
//! with a second call would let another connection's entry land between the
//! two halves, so Canyon does not: the entry stays truncated, the failure is
//! logged (once per file) on the server's log, and the next entry starts on
//! a line of its own (entries are written whole, so only the truncated one
//! is lost to a parser). mysqld in the same state stops logging as well.
//!
//! # What the entries hold
//!
//! `Query_time` is the request's wall time; `Lock_time` the time it waited
//! for row and table locks, and `Rows_examined` the rows its scans read,
//! both from the request's tally (`crate::catalog::perfschema::io`; a lock
//! wait taken inside a stored program's statement blocks in the
//! transaction layer and is not counted). With
//! `log_queries_not_using_indexes` ON a statement that scanned a base table
//! fully is logged whatever its time, as mysqld's (still subject to
//! `min_examined_row_limit`; `log_throttle_queries_not_using_indexes` is not
//! implemented: no throttling). `log_output` takes FILE and NONE; TABLE (the
//! `mysql.slow_log` / `mysql.general_log` tables) is refused.

use crate::types::value::Value;
use arc_swap::ArcSwap;
use canyon_common::{Error, Result};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

/// The system variables this module keeps (all GLOBAL only; read live).
pub const VARS: &[&str] = &[
    "general_log",
    "general_log_file",
    "log_output",
    "log_queries_not_using_indexes",
    "min_examined_row_limit",
    "slow_query_log",
    "slow_query_log_file",
];

/// Whether `name` is one of [`VARS`].
pub fn is_var(name: &str) -> bool {
    VARS.contains(&name)
}

/// The settings a server starts with (its configuration file).
#[derive(Debug, Clone)]
pub struct QueryLogConfig {
    /// `slow_query_log`.
    pub slow_query_log: bool,
    /// `slow_query_log_file`.
    pub slow_query_log_file: PathBuf,
    /// `general_log`.
    pub general_log: bool,
    /// `general_log_file`.
    pub general_log_file: PathBuf,
    /// `long_query_time` (seconds): the global value sessions start with.
    pub long_query_time: f64,
    /// `log_output`: FILE or NONE (TABLE is refused).
    pub log_output: String,
    /// `min_examined_row_limit`.
    pub min_examined_row_limit: u64,
}

/// One log's open file (or none while the log is off), swapped whole.
struct LogFile {
    path: PathBuf,
    file: Option<File>,
    /// A short write was reported for this file (warn once).
    warned: AtomicBool,
}

struct Log {
    /// Whether entries are written: the only thing read when the log is off.
    on: AtomicBool,
    file: ArcSwap<LogFile>,
}

impl Log {
    fn new(path: PathBuf) -> Log {
        Log {
            on: AtomicBool::new(false),
            file: ArcSwap::from_pointee(LogFile {
                path,
                file: None,
                warned: AtomicBool::new(false),
            }),
        }
    }

    /// Appends one whole entry with one write (see the module doc).
    fn append(&self, entry: &[u8]) {
        let snapshot = self.file.load();
        let Some(file) = snapshot.file.as_ref() else {
            return;
        };
        let result = (&*file).write(entry);
        let short = match result {
            Ok(n) if n == entry.len() => return,
            Ok(n) => format!("{n} of {} bytes written", entry.len()),
            Err(e) => e.to_string(),
        };
        if !snapshot.warned.swap(true, Relaxed) {
            tracing::warn!(
                path = %snapshot.path.display(),
                "query log entry not written whole ({short}); later failures on this file are not reported"
            );
        }
    }
}

/// Both logs of one server and their settings.
pub struct QueryLogs {
    slow: Log,
    general: Log,
    output_none: AtomicBool,
    min_examined: AtomicU64,
    /// `log_queries_not_using_indexes`.
    not_using_indexes: AtomicBool,
    /// The first two header lines mysqld writes on opening a log.
    header: String,
    /// Slow-log entries in MariaDB's layout (`presentation = "mariadb"`).
    mariadb: bool,
    /// Serialises SET GLOBAL and FLUSH LOGS against each other (an open and a
    /// swap must not cross another's). Never taken on the logging path.
    admin: parking_lot::Mutex<()>,
}

impl QueryLogs {
    /// Both logs off, with `version` and `port` for the files' headers;
    /// `mariadb`: slow-log entries in MariaDB 10.11's layout (see
    /// [`SessionLog::end`]).
    pub fn new(version: &str, port: u16, mariadb: bool) -> QueryLogs {
        // mysqld's first line starts with its path, which mysqldumpslow
        // looks for to skip the header.
        let exe = std::env::current_exe()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| "/canyon".into());
        QueryLogs {
            slow: Log::new(PathBuf::from("canyon-slow.log")),
            general: Log::new(PathBuf::from("canyon-general.log")),
            output_none: AtomicBool::new(false),
            min_examined: AtomicU64::new(0),
            not_using_indexes: AtomicBool::new(false),
            header: format!(
                "{exe}, Version: {version} (Canyon). started with:\nTcp port: {port}  Unix socket: \n"
            ),
            mariadb,
            admin: parking_lot::Mutex::new(()),
        }
    }

    /// Applies the configuration's settings (at startup): the logs it turns
    /// on are opened now, so that an unwritable path stops the start.
    pub fn configure(&self, cfg: &QueryLogConfig) -> Result<()> {
        self.set("log_output", &Value::str(&cfg.log_output))?;
        self.set(
            "min_examined_row_limit",
            &Value::UInt(cfg.min_examined_row_limit),
        )?;
        let _admin = self.admin.lock();
        self.set_file(&self.slow, cfg.slow_query_log_file.clone())?;
        self.set_file(&self.general, cfg.general_log_file.clone())?;
        self.switch(&self.slow, cfg.slow_query_log)?;
        self.switch(&self.general, cfg.general_log)
    }

    /// Whether slow-log entries are written (one relaxed load).
    #[inline]
    pub fn slow_on(&self) -> bool {
        self.slow.on.load(Relaxed)
    }

    /// Whether general-log lines are written (one relaxed load).
    #[inline]
    pub fn general_on(&self) -> bool {
        self.general.on.load(Relaxed)
    }

    /// The value of one of [`VARS`].
    pub fn var(&self, name: &str) -> Option<Value> {
        let path = |l: &Log| Value::str(&l.file.load().path.to_string_lossy());
        Some(match name {
            "slow_query_log" => Value::Int(self.slow_on() as i64),
            "general_log" => Value::Int(self.general_on() as i64),
            "slow_query_log_file" => path(&self.slow),
            "general_log_file" => path(&self.general),
            "log_output" => Value::str(if self.output_none.load(Relaxed) {
                "NONE"
            } else {
                "FILE"
            }),
            "log_queries_not_using_indexes" => {
                Value::Int(self.not_using_indexes.load(Relaxed) as i64)
            }
            "min_examined_row_limit" => Value::UInt(self.min_examined.load(Relaxed)),
            _ => return None,
        })
    }

    /// SET GLOBAL of one of [`VARS`] (the caller checked the privilege).
    pub fn set(&self, name: &str, value: &Value) -> Result<()> {
        let wrong = || Error::WrongValueForVar {
            name: name.to_string(),
            value: value.to_display(),
        };
        let _admin = self.admin.lock();
        match name {
            "slow_query_log" => {
                self.switch(&self.slow, crate::types::value::parse_bool(name, value)?)
            }
            "general_log" => {
                self.switch(&self.general, crate::types::value::parse_bool(name, value)?)
            }
            "slow_query_log_file" | "general_log_file" => {
                let log = if name == "slow_query_log_file" {
                    &self.slow
                } else {
                    &self.general
                };
                let path = match value {
                    Value::Null => return Err(wrong()),
                    v => PathBuf::from(v.to_display()),
                };
                if path.as_os_str().is_empty() {
                    return Err(wrong());
                }
                self.set_file(log, path)
            }
            "log_output" => {
                let text = value.to_display().to_ascii_uppercase();
                let mut none = false;
                for part in text.split(',').map(str::trim) {
                    match part {
                        "FILE" => {}
                        "NONE" => none = true,
                        "TABLE" => {
                            return Err(Error::Unsupported(
                                "log_output=TABLE (the mysql.slow_log and mysql.general_log tables); Canyon writes its query logs to files: use FILE".into(),
                            ))
                        }
                        _ => return Err(wrong()),
                    }
                }
                // As mysqld: NONE in a list wins.
                self.output_none.store(none, Relaxed);
                Ok(())
            }
            "log_queries_not_using_indexes" => {
                let on = crate::types::value::parse_bool(name, value)?;
                self.not_using_indexes.store(on, Relaxed);
                Ok(())
            }
            "min_examined_row_limit" => {
                let n = value.to_i64().filter(|n| *n >= 0).ok_or_else(wrong)?;
                self.min_examined.store(n as u64, Relaxed);
                Ok(())
            }
            _ => Err(Error::UnknownSystemVariable(name.to_string())),
        }
    }

    /// FLUSH LOGS / FLUSH SLOW LOGS / FLUSH GENERAL LOGS: each open log is
    /// opened again by its path (a renamed file gets no more entries once
    /// the writers holding it are done).
    pub fn reopen(&self, slow: bool, general: bool) -> Result<()> {
        let _admin = self.admin.lock();
        for (log, wanted) in [(&self.slow, slow), (&self.general, general)] {
            if wanted && log.on.load(Relaxed) {
                let path = log.file.load().path.clone();
                log.file.store(Arc::new(self.open(path)?));
            }
        }
        Ok(())
    }

    /// Turns a log on (opening its file) or off (closing it once its last
    /// writer is done).
    fn switch(&self, log: &Log, on: bool) -> Result<()> {
        if on == log.on.load(Relaxed) {
            return Ok(());
        }
        let path = log.file.load().path.clone();
        if on {
            log.file.store(Arc::new(self.open(path)?));
            log.on.store(true, Relaxed);
        } else {
            log.on.store(false, Relaxed);
            log.file.store(Arc::new(LogFile {
                path,
                file: None,
                warned: AtomicBool::new(false),
            }));
        }
        Ok(())
    }

    /// A new path: opened now if the log is on (the old file stays as it is).
    fn set_file(&self, log: &Log, path: PathBuf) -> Result<()> {
        let next = if log.on.load(Relaxed) {
            self.open(path)?
        } else {
            LogFile {
                path,
                file: None,
                warned: AtomicBool::new(false),
            }
        };
        log.file.store(Arc::new(next));
        Ok(())
    }

    /// Opens `path` for appending and writes mysqld's header lines.
    fn open(&self, path: PathBuf) -> Result<LogFile> {
        let file = open_append(&path)
            .map_err(|e| Error::Io(format!("cannot open query log {}: {e}", path.display())))?;
        let header = format!(
            "{}Time                 Id Command    Argument\n",
            self.header
        );
        (&file)
            .write_all(header.as_bytes())
            .map_err(|e| Error::Io(format!("cannot write query log {}: {e}", path.display())))?;
        Ok(LogFile {
            path,
            file: Some(file),
            warned: AtomicBool::new(false),
        })
    }

    /// Writes one general-log line (`command` as mysqld names it: Query,
    /// Connect, Quit, Init DB, Execute, ...), if the log is on.
    pub fn general(&self, buf: &mut SessionLog, id: u32, command: &str, argument: &str) {
        if !self.general_on() || self.output_none.load(Relaxed) {
            return;
        }
        let out = &mut buf.buf;
        out.clear();
        write_time(out);
        // mysqld: "%s\t%5u %s\t%s\n" (time, thread id, command, argument).
        let _ = write!(out, "\t{id:>5} {command}\t");
        out.extend_from_slice(argument.as_bytes());
        out.push(b'\n');
        self.general.append(out);
    }
}

/// Opens a file for appending, creating it (mode 0640 as mysqld's logs).
fn open_append(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o640)
        .open(path)
}

/// The current time as mysqld's logs write it (UTC, microseconds:
/// `2026-11-28T19:48:00.123456Z`).
///
/// Written digit by digit rather than through `chrono`'s `format`: the
/// general log writes this on every statement, and parsing the strftime
/// pattern each time was a third of the log's CPU on sysbench point_select
/// (perf, 2026-11-28); the field extraction is plain integer arithmetic.
fn write_time(out: &mut Vec<u8>) {
    write_time_at(out, chrono::Utc::now());
}

fn write_time_at(out: &mut Vec<u8>, now: chrono::DateTime<chrono::Utc>) {
    use chrono::{Datelike, Timelike};
    let mut field = |value: u32, width: usize, then: u8| {
        let mut digits = [b'0'; 6];
        let mut v = value;
        for d in digits[..width].iter_mut().rev() {
            *d = b'0' + (v % 10) as u8;
            v /= 10;
        }
        out.extend_from_slice(&digits[..width]);
        out.push(then);
    };
    // Years outside 0..=9999 cannot come from the system clock of a running
    // server; clamp rather than write a malformed line.
    field(now.year().clamp(0, 9999) as u32, 4, b'-');
    field(now.month(), 2, b'-');
    field(now.day(), 2, b'T');
    field(now.hour(), 2, b':');
    field(now.minute(), 2, b':');
    field(now.second(), 2, b'.');
    // A leap second shows as nanosecond >= 1e9 in chrono; MySQL has none.
    field((now.nanosecond() / 1000).min(999_999), 6, b'Z');
}

/// One connection's logging state: its entry buffer (reused) and what the
/// slow log needs from the start of the statement.
#[derive(Default)]
pub struct SessionLog {
    buf: Vec<u8>,
    /// The running statement's text, copied at its start only while the
    /// slow log is on.
    text: String,
    /// Whether `text` belongs to the running statement.
    have_text: bool,
    /// The database of this connection's last slow-log entry (`use db;`
    /// is written when it changes).
    last_db: Option<String>,
}

/// What the slow log writes about one statement.
pub struct SlowEntry<'a> {
    /// The connection id.
    pub id: u32,
    /// The account's user name.
    pub user: &'a str,
    /// The client's host (address).
    pub host: &'a str,
    /// The current database.
    pub db: Option<&'a str>,
    /// The statement's wall time.
    pub elapsed: std::time::Duration,
    /// The session's `long_query_time`.
    pub long_query_secs: f64,
    /// Rows returned.
    pub rows_sent: u64,
    /// Rows examined.
    pub rows_examined: u64,
    /// Rows inserted, changed or deleted (MariaDB's `Rows_affected`).
    pub rows_affected: u64,
    /// Time spent waiting for locks.
    pub lock: std::time::Duration,
    /// Whether the statement scanned a base table fully.
    pub no_index_used: bool,
}

impl SessionLog {
    /// The start of a client statement: a general-log line, and the text kept
    /// for the slow log. Two relaxed loads when both logs are off.
    pub fn start(&mut self, logs: &QueryLogs, id: u32, command: &str, text: &str) {
        self.have_text = false;
        if logs.general_on() {
            logs.general(self, id, command, text);
        }
        if logs.slow_on() {
            self.text.clear();
            self.text.push_str(text);
            self.have_text = true;
        }
    }

    /// The end of a client statement: its slow-log entry if it qualifies.
    pub fn end(&mut self, logs: &QueryLogs, e: &SlowEntry<'_>) {
        if !logs.slow_on() || !std::mem::take(&mut self.have_text) {
            return;
        }
        let secs = e.elapsed.as_secs_f64();
        // mysqld's log_slow_applicable(): slow, or a full scan while
        // log_queries_not_using_indexes is ON.
        let slow =
            secs > e.long_query_secs || (e.no_index_used && logs.not_using_indexes.load(Relaxed));
        if logs.output_none.load(Relaxed)
            || !slow
            || e.rows_examined < logs.min_examined.load(Relaxed)
        {
            return;
        }
        let out = &mut self.buf;
        out.clear();
        // mysqld resolves 127.0.0.1 to localhost; Canyon does no lookups.
        let (name, ip) = match e.host {
            "localhost" => ("localhost", ""),
            "127.0.0.1" | "::1" => ("localhost", e.host),
            h => ("", h),
        };
        if logs.mariadb {
            // MariaDB 10.11's layout, which its mysqldumpslow (Debian's)
            // parses; it cannot read MySQL 8's ISO `# Time:` line.
            let now = chrono::Utc::now();
            let _ = write!(
                out,
                "# Time: {}\n# User@Host: {user}[{user}] @ {name} [{ip}]\n\
                 # Thread_id: {id}  Schema: {db}  QC_hit: No\n\
                 # Query_time: {secs:.6}  Lock_time: {lock:.6}  Rows_sent: {sent}  Rows_examined: {examined}\n\
                 # Rows_affected: {changed}  Bytes_sent: 0\n",
                now.format("%y%m%d %k:%M:%S"),
                user = e.user,
                id = e.id,
                db = e.db.unwrap_or(""),
                lock = e.lock.as_secs_f64(),
                sent = e.rows_sent,
                examined = e.rows_examined,
                changed = e.rows_affected,
            );
        } else {
            out.extend_from_slice(b"# Time: ");
            write_time(out);
            let _ = write!(
            out,
            "\n# User@Host: {user}[{user}] @ {name} [{ip}]  Id: {id:>5}\n\
             # Query_time: {secs:.6}  Lock_time: {lock:.6} Rows_sent: {sent}  Rows_examined: {examined}\n",
            user = e.user,
            id = e.id,
            lock = e.lock.as_secs_f64(),
            sent = e.rows_sent,
            examined = e.rows_examined,
            );
        }
        if let Some(db) = e.db {
            if self.last_db.as_deref() != Some(db) {
                let _ = writeln!(out, "use {db};");
                self.last_db = Some(db.to_string());
            }
        }
        let _ = writeln!(out, "SET timestamp={};", chrono::Utc::now().timestamp());
        out.extend_from_slice(self.text.as_bytes());
        out.extend_from_slice(b";\n");
        logs.slow.append(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("canyon-querylog-{}-{name}", std::process::id()));
        let _ = std::fs::remove_file(&dir);
        dir
    }

    #[test]
    fn hand_written_time_equals_chrono_format() {
        for micros in [
            0i64,
            1,
            999_999,
            1_796_000_000_123_456,
            253_402_300_799_999_999,
        ] {
            let at = chrono::DateTime::from_timestamp_micros(micros).unwrap();
            let mut out = Vec::new();
            write_time_at(&mut out, at);
            let want = at.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string();
            assert_eq!(String::from_utf8(out).unwrap(), want);
        }
    }

    #[test]
    fn slow_entry_format_and_use_db_once() {
        let logs = QueryLogs::new("8.0.36", 3306, false);
        let path = temp("slow");
        logs.set("slow_query_log_file", &Value::str(&path.to_string_lossy()))
            .unwrap();
        logs.set("slow_query_log", &Value::Int(1)).unwrap();
        let mut s = SessionLog::default();
        let entry = SlowEntry {
            id: 8,
            user: "root",
            host: "127.0.0.1",
            db: Some("test"),
            elapsed: std::time::Duration::from_micros(123),
            long_query_secs: 0.0,
            rows_sent: 1,
            rows_examined: 1,
            rows_affected: 0,
            lock: std::time::Duration::ZERO,
            no_index_used: false,
        };
        for _ in 0..2 {
            s.start(&logs, 8, "Query", "SELECT 1");
            s.end(&logs, &entry);
        }
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(
            text.contains("# User@Host: root[root] @ localhost [127.0.0.1]  Id:     8\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "# Query_time: 0.000123  Lock_time: 0.000000 Rows_sent: 1  Rows_examined: 1\n"
            ),
            "{text}"
        );
        assert_eq!(text.matches("use test;\n").count(), 1, "{text}");
        assert_eq!(text.matches("\nSELECT 1;\n").count(), 2, "{text}");
        assert!(text.contains(", Version: 8.0.36 (Canyon). started with:\n"));
    }

    #[test]
    fn table_output_is_refused_and_off_writes_nothing() {
        let logs = QueryLogs::new("8.0.36", 3306, false);
        assert!(logs.set("log_output", &Value::str("TABLE")).is_err());
        logs.set("log_output", &Value::str("NONE")).unwrap();
        assert_eq!(logs.var("log_output"), Some(Value::str("NONE")));
        logs.set("log_queries_not_using_indexes", &Value::Int(1))
            .unwrap();
        assert_eq!(
            logs.var("log_queries_not_using_indexes"),
            Some(Value::Int(1))
        );
        let mut s = SessionLog::default();
        s.start(&logs, 1, "Query", "SELECT 1");
        assert!(!s.have_text);
    }
}
