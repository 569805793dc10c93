//! Targets: the MySQL-protocol servers a run measures.
//!
//! A target is one system under test made of one or more *shards* (endpoints);
//! sharded workloads route each transaction to one shard, the others spread
//! their clients over the shards. Three kinds:
//!
//! - `canyon` (the default): Canyon servers this process starts itself — the
//!   running `canyon` binary (or `--canyon-bin`) with `serve --data-dir <temp>
//!   --port 0`, one per shard, stopped and deleted at the end.
//! - `mariadb`: local MariaDB servers (`mariadb-install-db` + `mariadbd` on a
//!   temporary directory and a spare port), for side-by-side figures.
//! - `[mysql://][user[:password]@]host:port[,host:port...]`: servers someone else
//!   runs. Nothing is sampled from /proc for them and they cannot be pinned.
//!
//! Local targets expose their process ids, which is what lets a step report
//! server CPU, context switches and syscalls per transaction, and can be
//! restarted pinned to a set of CPUs (`taskset -c`), which is what the CPU sweep
//! does.

pub mod local;

pub use local::{LocalCanyon, LocalMariadb, LocalOptions};

use std::fmt;
use std::path::PathBuf;

/// Where and how to log in to one shard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// Host name or IP address.
    pub host: String,
    /// TCP port.
    pub port: u16,
    /// User name.
    pub user: String,
    /// Password.
    pub password: String,
    /// A Unix-domain socket to connect to instead of `host:port` (local
    /// servers with `--unix-socket`).
    pub socket: Option<std::path::PathBuf>,
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.socket {
            Some(p) => write!(f, "unix:{}", p.display()),
            None => write!(f, "{}:{}", self.host, self.port),
        }
    }
}

/// A system under test.
///
/// Contract:
/// - [`Target::endpoints`] is non-empty, in shard order, and valid from
///   construction until [`Target::stop`]; a [`Target::restart`] may change the
///   ports (call `endpoints` again), never the number of shards nor the data.
/// - [`Target::processes`] lists the server processes on this machine (one per
///   shard) or nothing for a remote target; samples of those pids are the
///   server's costs.
/// - [`Target::check`] never blocks; it reports a server process that exited
///   (a crash mid-run) with whatever the server printed last.
/// - [`Target::stop`] is idempotent and also happens on drop; it removes what the
///   target created on disk.
/// - Methods block (process start and stop); call them off the async workers.
pub trait Target: Send {
    /// How the target is named in messages and reports: `canyon (local)`,
    /// `mariadb (local)`, `db1:3306,db2:3306`.
    fn name(&self) -> String;

    /// `canyon-local`, `mariadb-local` or `remote`.
    fn kind(&self) -> &'static str;

    /// One endpoint per shard.
    fn endpoints(&self) -> Vec<Endpoint>;

    /// Local server process ids to sample, one per shard; empty if remote.
    fn processes(&self) -> Vec<u32>;

    /// Restarts every local server process pinned to CPUs `0..cpus` (`None`:
    /// unpinned), keeping its data. Errors for remote targets.
    fn restart(&mut self, cpus: Option<u32>) -> Result<(), String>;

    /// `Some(why)` if a server process has exited.
    fn check(&mut self) -> Option<String>;

    /// Stops local servers and deletes their temporary data.
    fn stop(&mut self);
}

/// A target as given on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetSpec {
    /// Start Canyon locally (optionally a given binary).
    LocalCanyon(Option<PathBuf>),
    /// Start MariaDB locally.
    LocalMariadb,
    /// Existing servers, one endpoint per shard.
    Remote(Vec<Endpoint>),
}

impl TargetSpec {
    /// Parses `canyon`, `canyon:/path/to/canyon`, `mariadb`, or
    /// `[mysql://][user[:password]@]host:port[,host:port...]`; `user` and
    /// `password` fill in what an address leaves out.
    pub fn parse(s: &str, user: &str, password: &str) -> Result<TargetSpec, String> {
        let s = s.trim();
        match s {
            "canyon" | "local" => return Ok(TargetSpec::LocalCanyon(None)),
            "mariadb" => return Ok(TargetSpec::LocalMariadb),
            _ => {}
        }
        if let Some(path) = s.strip_prefix("canyon:") {
            return Ok(TargetSpec::LocalCanyon(Some(PathBuf::from(path))));
        }
        let rest = s.strip_prefix("mysql://").unwrap_or(s);
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        let (creds, hosts) = match rest.rfind('@') {
            Some(at) => (Some(&rest[..at]), &rest[at + 1..]),
            None => (None, rest),
        };
        let (user, password) = match creds {
            None => (user.to_owned(), password.to_owned()),
            Some(c) => match c.split_once(':') {
                Some((u, p)) => (u.to_owned(), p.to_owned()),
                None => (c.to_owned(), password.to_owned()),
            },
        };
        if user.is_empty() {
            return Err(format!("target {s:?}: empty user name"));
        }
        let mut endpoints = Vec::new();
        for h in hosts.split(',') {
            let (host, port) = h.rsplit_once(':').ok_or_else(|| {
                format!("target {s:?}: {h:?} is not host:port (or canyon, mariadb)")
            })?;
            let host = host.trim_start_matches('[').trim_end_matches(']');
            if host.is_empty() {
                return Err(format!("target {s:?}: empty host in {h:?}"));
            }
            let port: u16 = port
                .parse()
                .map_err(|_| format!("target {s:?}: bad port in {h:?}"))?;
            endpoints.push(Endpoint {
                host: host.to_owned(),
                port,
                user: user.clone(),
                password: password.clone(),
                socket: None,
            });
        }
        Ok(TargetSpec::Remote(endpoints))
    }
}

/// Servers someone else runs.
pub struct Remote {
    endpoints: Vec<Endpoint>,
}

impl Remote {
    /// A remote target over `endpoints` (one per shard, at least one).
    pub fn new(endpoints: Vec<Endpoint>) -> Remote {
        assert!(!endpoints.is_empty(), "a remote target has an endpoint");
        Remote { endpoints }
    }
}

impl Target for Remote {
    fn name(&self) -> String {
        self.endpoints
            .iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join(",")
    }

    fn kind(&self) -> &'static str {
        "remote"
    }

    fn endpoints(&self) -> Vec<Endpoint> {
        self.endpoints.clone()
    }

    fn processes(&self) -> Vec<u32> {
        Vec::new()
    }

    fn restart(&mut self, _cpus: Option<u32>) -> Result<(), String> {
        Err(format!(
            "{} is a remote server: only local servers (canyon, mariadb) can be restarted \
             pinned to CPUs",
            self.name()
        ))
    }

    fn check(&mut self) -> Option<String> {
        None
    }

    fn stop(&mut self) {}
}

/// Starts the target `spec` with `shards` shards (local targets; a remote one
/// has as many shards as endpoints).
pub fn open(
    spec: &TargetSpec,
    shards: usize,
    opts: &LocalOptions,
) -> Result<Box<dyn Target>, String> {
    Ok(match spec {
        TargetSpec::LocalCanyon(bin) => Box::new(LocalCanyon::start(bin.clone(), shards, opts)?),
        TargetSpec::LocalMariadb => Box::new(LocalMariadb::start(shards, opts)?),
        TargetSpec::Remote(eps) => Box::new(Remote::new(eps.clone())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_specs() {
        assert_eq!(
            TargetSpec::parse("canyon", "root", ""),
            Ok(TargetSpec::LocalCanyon(None))
        );
        assert_eq!(
            TargetSpec::parse("canyon:/opt/canyon", "root", ""),
            Ok(TargetSpec::LocalCanyon(Some("/opt/canyon".into())))
        );
        assert_eq!(
            TargetSpec::parse("mariadb", "root", ""),
            Ok(TargetSpec::LocalMariadb)
        );
        let ep = |h: &str, p, u: &str, pw: &str| Endpoint {
            host: h.into(),
            port: p,
            user: u.into(),
            password: pw.into(),
            socket: None,
        };
        assert_eq!(
            TargetSpec::parse("127.0.0.1:3306", "root", "pw"),
            Ok(TargetSpec::Remote(vec![ep(
                "127.0.0.1",
                3306,
                "root",
                "pw"
            )]))
        );
        assert_eq!(
            TargetSpec::parse("mysql://bob:s3:cr@t@db1:3307,db2:3308/", "root", "pw"),
            Ok(TargetSpec::Remote(vec![
                ep("db1", 3307, "bob", "s3:cr@t"),
                ep("db2", 3308, "bob", "s3:cr@t")
            ]))
        );
        assert_eq!(
            TargetSpec::parse("alice@[::1]:3306", "root", "pw"),
            Ok(TargetSpec::Remote(vec![ep("::1", 3306, "alice", "pw")]))
        );
        assert!(TargetSpec::parse("db1", "root", "").is_err());
        assert!(TargetSpec::parse("db1:port", "root", "").is_err());
        assert!(TargetSpec::parse(":3306", "root", "").is_err());
    }

    #[test]
    fn remote_cannot_be_pinned() {
        let mut r = Remote::new(vec![Endpoint {
            host: "h".into(),
            port: 1,
            user: "u".into(),
            password: String::new(),
            socket: None,
        }]);
        assert!(r.restart(Some(1)).is_err());
        assert!(r.processes().is_empty());
        assert_eq!(r.name(), "h:1");
    }
}
