//! MariaDB's Spider storage engine as a sharding head over two Canyon nodes,
//! with two-phase commit between them (`spider_internal_xa = 1`).
//!
//! A MariaDB 10.11 head (`mariadbd` with `ha_spider`, Debian's
//! mariadb-plugin-spider) declares `sbtest1` and `sbtest2` as Spider tables
//! `PARTITION BY HASH(id)` over two Canyon nodes: even ids live on the first,
//! odd ids on the second. Every head transaction that touches both nodes is
//! committed by Spider with `XA START` / `XA END` / `XA PREPARE` / `XA COMMIT`
//! on each of them, the XA statements batched with its session settings in
//! one multi-statement COM_QUERY (`set session ...;xa start 0x..,0x..,1`).
//!
//! What it proves:
//! - the sysbench tables, prepared on the head, copy through Spider into the
//!   nodes (`INSERT ... SELECT`), each row on its partition's node;
//! - one head transaction over both nodes commits on both, and a rolled-back
//!   one leaves both untouched;
//! - sysbench oltp_read_write (4 threads, 20 s) through the head runs with
//!   `--mysql-ignore-errors=none`, so that any error Canyon returns to Spider
//!   (a deadlock included) stops it: it must exit 0 with zero errors, zero
//!   reconnects and some transactions;
//! - XA really was used: each node's general log holds an `xa prepare` for at
//!   least half of sysbench's transactions (Spider prepares every node a
//!   transaction touched; every sysbench transaction reads ranges on both),
//!   `Com_xa_prepare` agrees, and afterwards no branch
//!   is left prepared (`XA RECOVER` is empty on both nodes) and the head has no
//!   XA in doubt (`mysql.spider_xa` is empty);
//! - the data is consistent: each node still holds exactly its half of each
//!   table (every id 1..=TABLE_SIZE once, on the node its hash names: sysbench
//!   deletes and re-inserts rows in one transaction), and the head's COUNT and
//!   SUM(k) over the Spider tables are the nodes' added up.
//!
//! Why 127.0.0.1 and 127.0.0.2: Spider keys its XA member records
//! (`mysql.spider_xa_member`) by xid and host but not port, so two backends on
//! one address would make every two-phase commit fail with 12606 ("This xid
//! member already exists"). The nodes therefore listen on different loopback
//! addresses (all of 127.0.0.0/8 is loopback on Linux), which is why this test
//! starts `canyon serve --bind 127.0.0.2` itself rather than through
//! `common::Server` (always 127.0.0.1).
//!
//! The head runs with Spider's defaults except `spider_internal_xa = 1`
//! (the two-phase commit this test is about). The nodes run with
//! `presentation = mariadb` (`CANYON_PRESENTATION`): Spider expects a MariaDB
//! backend. With its default `spider_crd_mode = 1` it reads the cardinality
//! of a remote table's keys with `SHOW INDEX FROM db.t` and refuses any
//! answer with more than 14 columns (12710 "Invalid information from remote
//! table"); MariaDB answers with 14 (`Ignored` last), MySQL 8.0 with 15
//! (`Visible`, `Expression`), so a MySQL 8.0 backend fails the same way.
//! Canyon presenting as MariaDB answers as MariaDB does.
//!
//! Skips loudly without sysbench, MariaDB or the Spider plugin (`ha_spider.so`
//! in the head's plugin_dir); under CI that fails instead.

mod common;

use common::client::Client;
use common::{
    find_program, run_bounded, skip_missing, skip_without, sysbench_per_sec, sysbench_stat,
    Mariadb, CLIENT_TIMEOUT,
};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const TABLES: u32 = 2;
/// Rows per table. Larger than sysbench.rs's 2,000: with `--mysql-ignore-errors=none`
/// a deadlock (legitimate under random row order, and across two nodes invisible
/// to either's detector, so only a lock wait timeout ends it) would fail the run;
/// more rows make two transactions' rows meet far less often (with uniform row
/// picks: see the `--rand-type` of the run).
const TABLE_SIZE: u32 = 10_000;
const THREADS: u32 = 4;
const SECONDS: u32 = 20;

/// How long a node may take to print its ready line.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// A `canyon serve` on `host` (a loopback address) and a port it picks, with its
/// general query log on; its output goes to `out.log` in its directory. Killed
/// when dropped.
struct Node {
    child: Child,
    dir: tempfile::TempDir,
    host: &'static str,
    port: u16,
    password: String,
}

impl Node {
    fn start(host: &'static str) -> Node {
        let dir = tempfile::Builder::new()
            .prefix("canyon-spider-")
            .tempdir()
            .expect("create a temporary directory");
        let password = format!("Pw-{:016x}", rand::random::<u64>());
        let out_path = dir.path().join("out.log");
        let out = std::fs::File::create(&out_path).expect("create the node's output file");
        let mut child = Command::new(env!("CARGO_BIN_EXE_canyon"))
            .arg("serve")
            .arg("--data-dir")
            .arg(dir.path().join("data"))
            .args(["--bind", host, "--port", "0"])
            .env("CANYON_ROOT_PASSWORD", &password)
            .env("CANYON_PRESENTATION", "mariadb")
            .env("CANYON_GENERAL_LOG", "1")
            .env("CANYON_GENERAL_LOG_FILE", dir.path().join("general.log"))
            .stdin(Stdio::null())
            .stdout(out.try_clone().expect("clone a file handle"))
            .stderr(out)
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {}: {e}", env!("CARGO_BIN_EXE_canyon")));
        // "canyon: ready for connections on HOST:PORT"
        let deadline = Instant::now() + START_TIMEOUT;
        let port = loop {
            let log = std::fs::read_to_string(&out_path).unwrap_or_default();
            let ready = log
                .lines()
                .find(|l| l.contains("ready for connections on"))
                .and_then(|l| l.rsplit(':').next())
                .and_then(|p| p.trim().parse::<u16>().ok());
            if let Some(port) = ready {
                break port;
            }
            if let Ok(Some(status)) = child.try_wait() {
                panic!("canyon on {host} exited ({status}) before it was ready:\n{log}");
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("canyon on {host} was not ready within {START_TIMEOUT:?}:\n{log}");
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        Node {
            child,
            dir,
            host,
            port,
            password,
        }
    }

    /// Runs `sql` as root with the `mariadb` CLI (`-N --batch --raw`), over TCP
    /// to the node's address; panics with the error and the node's logs.
    fn sql(&self, sql: &str) -> String {
        let mut cmd =
            Command::new(find_program("mariadb").expect("the mariadb client is installed"));
        cmd.args([
            "--no-defaults",
            "--protocol=TCP",
            "--batch",
            "--raw",
            "-N",
            "-A",
        ])
        .arg("--connect-timeout=30")
        .arg(format!("-h{}", self.host))
        .arg(format!("-P{}", self.port))
        .arg("-uroot")
        .arg(format!("-p{}", self.password));
        let out = run_bounded(&mut cmd, sql, CLIENT_TIMEOUT);
        assert!(
            out.status.success(),
            "on canyon {}:{}: {sql}\n  failed: {}\n{}",
            self.host,
            self.port,
            out.stderr,
            self.tail()
        );
        out.stdout
    }

    /// The one value `sql` returns.
    fn value(&self, sql: &str) -> String {
        self.sql(sql).trim().to_string()
    }

    fn general_log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("general.log")).unwrap_or_default()
    }

    /// How many times `what` (lower case) occurs in the general log, in any case.
    fn logged(&self, what: &str) -> usize {
        self.general_log()
            .to_ascii_lowercase()
            .matches(what)
            .count()
    }

    fn output(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("out.log")).unwrap_or_default()
    }

    /// The last lines of the node's output and general log, for failure messages.
    fn tail(&self) -> String {
        let last = |s: String, n: usize| {
            let lines: Vec<&str> = s.lines().collect();
            lines[lines.len().saturating_sub(n)..].join("\n")
        };
        format!(
            "--- canyon {}:{} output (last lines) ---\n{}\n--- its general log (last lines) ---\n{}",
            self.host,
            self.port,
            last(self.output(), 40),
            last(self.general_log(), 40)
        )
    }

    /// Panics (with its output) if the node exited or printed a panic.
    fn assert_healthy(&mut self) {
        if let Ok(Some(status)) = self.child.try_wait() {
            panic!("canyon on {} exited ({status})\n{}", self.host, self.tail());
        }
        let out = self.output();
        let alarms: Vec<&str> = out
            .lines()
            .filter(|l| l.contains("panicked") || l.contains("overflowed its stack"))
            .collect();
        assert!(alarms.is_empty(), "canyon on {}: {alarms:#?}", self.host);
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Both nodes' logs, for failure messages of statements run on the head.
fn tails(nodes: &[&Node]) -> String {
    nodes
        .iter()
        .map(|n| n.tail())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs `sql` on the head; panics with the error and both nodes' logs (an
/// error Spider got from a node is in the node's general log, just before).
fn head_exec(head: &mut Client, sql: &str, nodes: &[&Node]) -> common::client::QueryOutcome {
    match head.query(sql) {
        Ok(o) => o,
        Err(e) => panic!("on the Spider head: {sql}\n  failed: {e}\n{}", tails(nodes)),
    }
}

fn head_value(head: &mut Client, sql: &str, nodes: &[&Node]) -> String {
    head_exec(head, sql, nodes).scalar().unwrap_or_default()
}

/// The sysbench table `sbtest<n>` as sysbench's oltp_common.lua creates it.
fn table_ddl(n: u32) -> String {
    format!(
        "CREATE TABLE sbtest{n} (id INTEGER NOT NULL, k INTEGER DEFAULT '0' NOT NULL, \
         c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, \
         PRIMARY KEY (id), KEY k_{n} (k))"
    )
}

/// `sysbench` against the head; returns stdout, panicking with all it printed
/// (and the nodes' logs) unless it exits 0 without FATAL.
fn sysbench(head: &Mariadb, db: &str, args: &[String], phase: &str, nodes: &[&Node]) -> String {
    let mut cmd = Command::new(find_program("sysbench").expect("sysbench is installed"));
    cmd.arg("oltp_read_write")
        .arg("--db-driver=mysql")
        .arg("--mysql-host=127.0.0.1")
        .arg(format!("--mysql-port={}", head.port()))
        .arg("--mysql-user=root")
        .arg(format!("--mysql-password={}", head.password()))
        .arg(format!("--mysql-db={db}"))
        .arg(format!("--tables={TABLES}"))
        .arg(format!("--table-size={TABLE_SIZE}"))
        .args(args)
        .arg(phase);
    let out = run_bounded(&mut cmd, "", Duration::from_secs(240));
    let all = format!("{}\n{}", out.stdout, out.stderr);
    assert!(
        out.status.success() && !all.contains("FATAL"),
        "sysbench oltp_read_write {args:?} {phase} through the Spider head failed ({}):\n{all}\n{}",
        out.status,
        tails(nodes)
    );
    out.stdout
}

/// Starts the head and installs Spider; `None` (after a loud skip) when MariaDB
/// or the Spider plugin is missing.
fn spider_head() -> Option<Mariadb> {
    let head = Mariadb::start()?;
    let mut c = head.client();
    let plugin_dir = c.exec("SELECT @@plugin_dir").scalar().unwrap_or_default();
    let so = PathBuf::from(&plugin_dir).join("ha_spider.so");
    if !so.is_file() {
        skip_missing(&format!(
            "mariadb-plugin-spider ({} is missing)",
            so.display()
        ));
        return None;
    }
    // INSTALL SONAME also creates Spider's system tables (mysql.spider_*).
    c.exec("INSTALL SONAME 'ha_spider'");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let engine = c
            .query("SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE = 'SPIDER'")
            .ok()
            .and_then(|o| match o {
                common::client::QueryOutcome::Rows(r) => r.first().and_then(|r| r[0].clone()),
                _ => None,
            });
        let tables = c
            .query("SELECT COUNT(*) FROM mysql.spider_xa_member")
            .is_ok();
        if engine.as_deref() == Some("YES") && tables {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "Spider did not come up on the head (engine {engine:?}, system tables {tables})\n{}",
            head.error_log()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    c.exec("SET GLOBAL spider_internal_xa = 1");
    Some(head)
}

#[test]
fn sysbench_oltp_read_write_through_spider_with_xa_over_two_nodes() {
    if skip_without("sysbench") || skip_without("mariadb") {
        return;
    }
    let Some(head) = spider_head() else {
        return;
    };
    let mut n1 = Node::start("127.0.0.1");
    let mut n2 = Node::start("127.0.0.2");
    let nodes = [&n1, &n2];

    // The nodes' tables; then on the head one server per node and the Spider
    // tables, partition p1 (HASH(id) = id MOD 2 = 0: even ids) on the first node.
    let ddl: String = (1..=TABLES)
        .map(|n| format!("{};\n", table_ddl(n)))
        .collect();
    for n in &nodes {
        n.sql(&format!("CREATE DATABASE sbtest; USE sbtest;\n{ddl}"));
    }
    let mut h = head.client();
    head_exec(&mut h, "CREATE DATABASE sbtest", &nodes);
    head_exec(&mut h, "USE sbtest", &nodes);
    for (i, n) in nodes.iter().enumerate() {
        head_exec(
            &mut h,
            &format!(
                "CREATE SERVER b{} FOREIGN DATA WRAPPER mysql OPTIONS \
                 (HOST '{}', PORT {}, DATABASE 'sbtest', USER 'root', PASSWORD '{}')",
                i + 1,
                n.host,
                n.port,
                n.password
            ),
            &nodes,
        );
    }
    for t in 1..=TABLES {
        head_exec(
            &mut h,
            &format!(
                "{} ENGINE=SPIDER COMMENT='wrapper \"mysql\", table \"sbtest{t}\"' \
                 PARTITION BY HASH(id) (PARTITION p1 COMMENT = 'srv \"b1\"', \
                 PARTITION p2 COMMENT = 'srv \"b2\"')",
                table_ddl(t)
            ),
            &nodes,
        );
    }

    // sysbench's rows, prepared in a local InnoDB database on the head, copied
    // through Spider (each row to its partition's node, in XA transactions).
    head_exec(&mut h, "CREATE DATABASE sbload", &nodes);
    sysbench(&head, "sbload", &[], "prepare", &nodes);
    for t in 1..=TABLES {
        head_exec(
            &mut h,
            &format!("INSERT INTO sbtest.sbtest{t} SELECT * FROM sbload.sbtest{t}"),
            &nodes,
        );
    }

    // One transaction over both nodes: rolled back, nothing changes on either;
    // committed, both change. Ids 1 and 2 are on different nodes.
    let marked = |n: &Node, mark: &str| {
        n.value(&format!(
            "SELECT COUNT(*) FROM sbtest.sbtest1 WHERE c = '{mark}'"
        ))
    };
    head_exec(&mut h, "BEGIN", &nodes);
    head_exec(
        &mut h,
        "UPDATE sbtest1 SET c = 'rolled-back' WHERE id IN (1, 2)",
        &nodes,
    );
    head_exec(&mut h, "ROLLBACK", &nodes);
    for n in &nodes {
        assert_eq!(
            marked(n, "rolled-back"),
            "0",
            "canyon {}: a rolled-back change",
            n.host
        );
    }
    head_exec(&mut h, "BEGIN", &nodes);
    head_exec(
        &mut h,
        "UPDATE sbtest1 SET c = 'committed' WHERE id IN (1, 2)",
        &nodes,
    );
    head_exec(&mut h, "COMMIT", &nodes);
    for n in &nodes {
        assert_eq!(
            marked(n, "committed"),
            "1",
            "canyon {}: the committed change",
            n.host
        );
    }

    let prepares_before: Vec<usize> = nodes.iter().map(|n| n.logged("xa prepare ")).collect();
    assert!(
        prepares_before.iter().all(|&p| p > 0),
        "the load and the committed transaction prepared no XA branch on some node \
         ({prepares_before:?}): is spider_internal_xa on?\n{}",
        tails(&nodes)
    );
    // Spider's default cardinality path (crd_mode 1) read each node's keys
    // with SHOW INDEX and took the answer (a refused one is error 12710).
    let show_index: Vec<usize> = nodes.iter().map(|n| n.logged("show index from")).collect();
    assert!(
        show_index.iter().all(|&p| p > 0),
        "Spider never read a node's keys with SHOW INDEX ({show_index:?})\n{}",
        tails(&nodes)
    );

    let report = sysbench(
        &head,
        "sbtest",
        &[
            format!("--threads={THREADS}"),
            format!("--time={SECONDS}"),
            "--events=0".into(),
            "--report-interval=5".into(),
            "--mysql-ignore-errors=none".into(),
            // sysbench's default (`special`) sends 75% of its row picks to the
            // middle 1% of ids: 100 rows per table, where four threads' writes
            // deadlock legitimately (a 1213 from one node's detector; CI hit
            // one). Uniform picks make that as rare as TABLE_SIZE intends.
            "--rand-type=uniform".into(),
        ],
        "run",
        &nodes,
    );
    let transactions = sysbench_stat::<usize>(&report, "transactions:");
    let errors = sysbench_stat::<u64>(&report, "ignored errors:");
    let reconnects = sysbench_stat::<u64>(&report, "reconnects:");
    eprintln!(
        "sysbench oltp_read_write through Spider over two Canyon nodes: {transactions} transactions \
         ({} tps), {} queries ({} qps), {errors} errors, {reconnects} reconnects",
        sysbench_per_sec(&report, "transactions:"),
        sysbench_stat::<u64>(&report, "queries:"),
        sysbench_per_sec(&report, "queries:"),
    );
    assert!(transactions > 0, "no transaction committed:\n{report}");
    assert_eq!(errors, 0, "sysbench saw errors:\n{report}");
    assert_eq!(reconnects, 0, "sysbench reconnected:\n{report}");

    // XA was used on both nodes, and nothing is left in doubt.
    for (n, before) in nodes.iter().zip(&prepares_before) {
        let prepares = n.logged("xa prepare ");
        let during = prepares - before;
        eprintln!(
            "canyon {}: {during} XA PREPAREs during the run, {prepares} in all",
            n.host
        );
        assert!(
            during * 2 >= transactions,
            "canyon {}: {during} XA PREPAREs for {transactions} sysbench transactions: \
             Spider did not commit with two-phase commit\n{}",
            n.host,
            n.tail()
        );
        let counted = n.sql("SHOW GLOBAL STATUS LIKE 'Com_xa_prepare'");
        let v: usize = counted
            .split_whitespace()
            .nth(1)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("canyon {}: no Com_xa_prepare: {counted:?}", n.host));
        assert!(
            v >= prepares,
            "canyon {}: Com_xa_prepare is {v}, its general log has {prepares}",
            n.host
        );
        assert_eq!(
            n.sql("XA RECOVER"),
            "",
            "canyon {}: XA branches left prepared",
            n.host
        );
    }
    assert_eq!(
        head_value(&mut h, "SELECT COUNT(*) FROM mysql.spider_xa", &nodes),
        "0",
        "the head has XA transactions in doubt"
    );

    // Every id on its node, once; the head sees the nodes' rows added up.
    let half = TABLE_SIZE / 2;
    for t in 1..=TABLES {
        let mut count = 0u64;
        let mut sum = 0i64;
        for (i, n) in nodes.iter().enumerate() {
            let remainder = if i == 0 { 0 } else { 1 };
            let got = n.sql(&format!(
                "SELECT COUNT(*), COALESCE(SUM(id % 2 <> {remainder}), 0), \
                 COALESCE(MIN(id), 0), COALESCE(MAX(id), 0), COALESCE(SUM(k), 0) \
                 FROM sbtest.sbtest{t}"
            ));
            let f: Vec<i64> = got
                .split_whitespace()
                .map(|v| v.parse().expect("a number"))
                .collect();
            assert_eq!(
                (f[0], f[1]),
                (half as i64, 0),
                "canyon {}: sbtest{t} must hold exactly the {half} ids with id % 2 = {remainder} \
                 (count, misplaced: {got})",
                n.host
            );
            assert!(
                f[2] >= 1 && f[3] <= TABLE_SIZE as i64,
                "canyon {}: sbtest{t} has ids outside 1..={TABLE_SIZE}: {got}",
                n.host
            );
            count += f[0] as u64;
            sum += f[4];
        }
        assert_eq!(
            head_value(&mut h, &format!("SELECT COUNT(*) FROM sbtest{t}"), &nodes),
            count.to_string(),
            "sbtest{t}: the head's COUNT(*)"
        );
        assert_eq!(
            head_value(&mut h, &format!("SELECT SUM(k) FROM sbtest{t}"), &nodes),
            sum.to_string(),
            "sbtest{t}: the head's SUM(k)"
        );
    }

    n1.assert_healthy();
    n2.assert_healthy();
}
