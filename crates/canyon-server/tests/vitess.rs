//! Canyon nodes as Vitess tablets (issue 26): Vitess v0.24.4's vtgate,
//! vttablet (unmanaged, one per Canyon node), vtctld and etcd, started by
//! `scripts/vitess.sh` over real Canyon servers, all driven as a user would
//! (vtctldclient, the MySQL protocol through vtgate, sysbench).
//!
//! One test, in the order a deployment lives:
//! 1. Three nodes: `commerce` unsharded, `customer` sharded `-80`, `80-` by
//!    `xxhash(id)`. Every `_vt` sidecar table is created on every node (the
//!    tablets come up serving), vtgate speaks as MySQL 8.0 (its default).
//! 2. sysbench `oltp_read_write` through vtgate: no error but the deadlocks
//!    sysbench retries by default; every row is on the shard the vindex
//!    names (XXH64 computed here, as Vitess does).
//!    Then `canyon bench -w order_entry --vitess-keyspace customer` through
//!    vtgate (prepared statements, the tables sharded by a vindex on the
//!    customer): exits 0, no error but retried deadlocks, every customer's
//!    rows on its shard, none lost or doubled.
//! 3. An ALTER through vtgate is seen by the next queries (schema tracking
//!    follows information_schema.TABLES.CREATE_TIME).
//! 4. MoveTables of `product` from `commerce` into `customer` under a write
//!    load: VDiff finds no difference; SwitchTraffic, ReverseTraffic,
//!    SwitchTraffic, Complete; every committed write is there.
//! 5. Reshard `customer` from `-80,80-` to four shards under a write load,
//!    with one target node killed -9 during the workflow and restarted: the
//!    workflow resumes, VDiff is clean, SwitchTraffic and Complete; every
//!    committed write is on the shard its id hashes to.
//! 6. Online DDL (`ddl_strategy='vitess'`) completes an ALTER under load.
//!
//! Needs the Vitess binaries (`scripts/vitess.sh build`, run by
//! scripts/install-deps.sh) and sysbench; skips loudly without them, fails
//! under CI.

mod common;

use common::client::Client;
use common::{skip_missing, skip_without, tools_dir, Server, ServerOptions};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The account every tablet uses on its node.
const VT_USER: &str = "vt";
const VT_PASSWORD: &str = "vtpw";
/// How long any one step may take on two busy cores.
const STEP: Duration = Duration::from_secs(180);

fn vitess_bin() -> PathBuf {
    tools_dir().join("vitess-v0.24.4/bin")
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/vitess.sh")
}

/// A Canyon node with the binary log on (VReplication streams it) and the
/// tablets' account. Row lock waits end after 5 s: a deadlock between two
/// shards' transactions of one vtgate transaction is seen by neither node,
/// and only the lock wait timeout ends it (vttablet kills a query after
/// 30 s, before InnoDB's default of 50 s would; Vitess deployments lower
/// `innodb_lock_wait_timeout` for this, docs/scale-out.md).
fn node(id: u32) -> Server {
    let s = Server::start_with(ServerOptions {
        extra_toml: format!("log_bin = true\nserver_id = {id}\nmemory_budget_bytes = 134217728\n"),
        lock_wait_timeout_secs: Some(5),
        ..ServerOptions::default()
    });
    let mut c = s.client();
    c.exec(&format!(
        "CREATE USER '{VT_USER}'@'%' IDENTIFIED BY '{VT_PASSWORD}'"
    ));
    c.exec(&format!(
        "GRANT ALL ON *.* TO '{VT_USER}'@'%' WITH GRANT OPTION"
    ));
    s
}

/// The ports `scripts/vitess.sh` takes above its base: servers at +0..+11,
/// tablets zone1-101.. at +22.., the Reshard targets zone1-110..113 up to +47.
const PORT_SPAN: u16 = 48;

/// A base whose port range is free now. Below Linux's ephemeral range
/// (32768 and up), where the Canyon nodes (port 0) and every client socket
/// get their ports, so nothing started later takes one of these.
fn free_base() -> u16 {
    let seed = std::process::id() as u16;
    for i in 0..200u16 {
        let base = 20_000 + (seed.wrapping_add(i.wrapping_mul(97)) % 240) * 50;
        if (base..base + PORT_SPAN).all(|p| std::net::TcpListener::bind(("127.0.0.1", p)).is_ok()) {
            return base;
        }
    }
    panic!("no {PORT_SPAN} free ports in 20000..32000");
}

/// The cluster; `scripts/vitess.sh down` when dropped.
struct Cluster {
    run: tempfile::TempDir,
    base: u16,
}

impl Cluster {
    fn up(specs: &[String]) -> Cluster {
        let run = tempfile::Builder::new()
            .prefix("canyon-vitess-")
            .tempdir_in("/tmp")
            .expect("a run directory");
        let base = free_base();
        let c = Cluster { run, base };
        let mut args = vec!["up".to_string(), c.dir(), base.to_string()];
        args.extend(specs.iter().cloned());
        c.script(&args);
        c
    }

    fn dir(&self) -> String {
        self.run.path().display().to_string()
    }

    fn script(&self, args: &[String]) {
        let out = Command::new("bash")
            .arg(script())
            .args(args)
            .env("CANYON_VITESS_USER", VT_USER)
            .env("CANYON_VITESS_PASSWORD", VT_PASSWORD)
            .output()
            .expect("run scripts/vitess.sh");
        assert!(
            out.status.success(),
            "vitess.sh {args:?} failed:\n{}\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            self.logs()
        );
    }

    /// One more tablet (zone1-`uid`) over the node on `port`.
    fn tablet(&self, uid: u32, ks: &str, shard: &str, port: u16) {
        self.script(&[
            "tablet".into(),
            self.dir(),
            self.base.to_string(),
            uid.to_string(),
            format!("{ks}:{shard}:{port}"),
        ]);
    }

    /// vtctldclient `args`; its output, or a panic with it.
    fn vtctld(&self, args: &[&str]) -> String {
        self.try_vtctld(args)
            .unwrap_or_else(|text| panic!("vtctldclient {args:?}:\n{text}"))
    }

    /// vtctldclient `args`: its output, `Err` with it when it failed.
    fn try_vtctld(&self, args: &[&str]) -> Result<String, String> {
        let out = Command::new(self.run.path().join("bin/vtctldclient"))
            .arg("--server")
            .arg(format!("127.0.0.1:{}", self.base + 1))
            .args(args)
            .output()
            .expect("run vtctldclient");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if out.status.success() {
            Ok(text)
        } else {
            Err(text)
        }
    }

    fn vtgate_port(&self) -> u16 {
        self.base + 4
    }

    /// A connection through vtgate (it takes any login: `--mysql-auth-server-impl none`).
    fn vtgate(&self, keyspace: &str) -> Client {
        let mut c = Client::connect(self.vtgate_port(), "app", "")
            .unwrap_or_else(|e| panic!("connect to vtgate: {e}\n{}", self.logs()));
        c.exec(&format!("USE `{keyspace}`"));
        c
    }

    /// The last lines of every server's log, for failure messages.
    fn logs(&self) -> String {
        let mut out = String::new();
        if let Ok(dir) = std::fs::read_dir(self.run.path().join("logs")) {
            for e in dir.flatten() {
                let text = std::fs::read_to_string(e.path()).unwrap_or_default();
                let errors: Vec<&str> = text
                    .lines()
                    .filter(|l| l.contains(" ERR ") || l.contains("rror"))
                    .collect();
                let tail = &errors[errors.len().saturating_sub(8)..];
                out.push_str(&format!(
                    "--- {}\n{}\n",
                    e.path().display(),
                    tail.join("\n")
                ));
            }
        }
        out
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(script())
            .args(["down", &self.dir()])
            .output();
    }
}

/// Polls `f` until it gives a value; panics naming `what` after [`STEP`].
fn eventually<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(start.elapsed() < STEP, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// XXH64 with seed 0 (the reference algorithm; inputs here are under 32
/// bytes): Vitess' `xxhash` vindex hashes an integer id's decimal text and
/// takes the hash's little-endian bytes as the keyspace id.
fn xxh64(input: &[u8]) -> u64 {
    const P1: u64 = 11_400_714_785_074_694_791;
    const P2: u64 = 14_029_467_366_897_019_727;
    const P3: u64 = 1_609_587_929_392_839_161;
    const P4: u64 = 9_650_029_242_287_828_579;
    const P5: u64 = 2_870_177_450_012_600_261;
    assert!(input.len() < 32, "only short inputs");
    let mut h = P5.wrapping_add(input.len() as u64);
    let mut rest = input;
    while rest.len() >= 8 {
        let k = u64::from_le_bytes(rest[..8].try_into().expect("8 bytes"));
        let k = k.wrapping_mul(P2).rotate_left(31).wrapping_mul(P1);
        h = (h ^ k).rotate_left(27).wrapping_mul(P1).wrapping_add(P4);
        rest = &rest[8..];
    }
    if rest.len() >= 4 {
        let k = u64::from(u32::from_le_bytes(rest[..4].try_into().expect("4 bytes")));
        h = (h ^ k.wrapping_mul(P1))
            .rotate_left(23)
            .wrapping_mul(P2)
            .wrapping_add(P3);
        rest = &rest[4..];
    }
    for &b in rest {
        h = (h ^ u64::from(b).wrapping_mul(P5))
            .rotate_left(11)
            .wrapping_mul(P1);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(P2);
    h ^= h >> 29;
    h = h.wrapping_mul(P3);
    h ^ (h >> 32)
}

/// The first byte of `id`'s keyspace id: which shard holds it.
fn keyspace_byte(id: i64) -> u8 {
    xxh64(id.to_string().as_bytes()).to_le_bytes()[0]
}

/// Whether keyspace-id byte `b` falls in shard `shard` (`-80`, `40-80`, `c0-`).
fn in_shard(b: u8, shard: &str) -> bool {
    let (lo, hi) = shard.split_once('-').expect("a key range");
    let parse = |s: &str, default: u16| {
        if s.is_empty() {
            default
        } else {
            u16::from_str_radix(s, 16).expect("hex")
        }
    };
    let (lo, hi) = (parse(lo, 0), parse(hi, 256));
    (lo..hi).contains(&u16::from(b))
}

/// Every id in `table` on the node behind `port`.
fn ids_on(node: &Server, db: &str, table: &str) -> Vec<i64> {
    node.client()
        .exec(&format!("SELECT id FROM `{db}`.`{table}` ORDER BY id"))
        .rows()
        .into_iter()
        .map(|r| r[0].as_deref().unwrap_or("0").parse().expect("an id"))
        .collect()
}

/// Asserts that `shards` hold exactly `want` between them, each id on the
/// shard its hash names.
fn assert_placed(shards: &[(&str, &Server)], db: &str, table: &str, want: &[i64]) {
    let mut all = Vec::new();
    for (shard, n) in shards {
        for id in ids_on(n, db, table) {
            assert!(
                in_shard(keyspace_byte(id), shard),
                "{table} id {id} (keyspace id {:02x}..) is on shard {shard}",
                keyspace_byte(id)
            );
            all.push(id);
        }
    }
    all.sort_unstable();
    let mut want = want.to_vec();
    want.sort_unstable();
    assert_eq!(
        all.len(),
        want.len(),
        "{table}: rows on the shards vs committed"
    );
    assert_eq!(all, want, "{table}: the committed ids");
}

/// A write load through vtgate: inserts rows with fresh ids into `table`
/// and updates earlier ones, retrying across the errors a traffic switch
/// gives (as a client must); the ids whose INSERT committed.
struct Writer {
    stop: Arc<AtomicBool>,
    committed: Arc<Mutex<Vec<i64>>>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Writer {
    fn start(port: u16, keyspace: &str, table: &str, first_id: i64) -> Writer {
        let stop = Arc::new(AtomicBool::new(false));
        let committed = Arc::new(Mutex::new(Vec::new()));
        let (s, c) = (stop.clone(), committed.clone());
        let (ks, t) = (keyspace.to_string(), table.to_string());
        let handle = std::thread::spawn(move || {
            let mut client: Option<Client> = None;
            let mut id = first_id;
            while !s.load(Ordering::Relaxed) {
                let conn = match client.as_mut() {
                    Some(conn) => conn,
                    None => match Client::connect(port, "app", "") {
                        Ok(mut conn) => {
                            if conn.query(&format!("USE `{ks}`")).is_err() {
                                std::thread::sleep(Duration::from_millis(100));
                                continue;
                            }
                            client.insert(conn)
                        }
                        Err(_) => {
                            std::thread::sleep(Duration::from_millis(100));
                            continue;
                        }
                    },
                };
                let sql = format!("INSERT INTO `{t}` (id, v) VALUES ({id}, 0)");
                match conn.query(&sql) {
                    Ok(_) => c.lock().expect("ids").push(id),
                    Err(e) if e.is_connection_error() => client = None,
                    Err(_) => std::thread::sleep(Duration::from_millis(50)),
                }
                // Whether or not it committed, the next row gets a new id (a
                // failed INSERT may have committed; never reuse it).
                id += 1;
                if id % 3 == 0 {
                    if let Some(conn) = client.as_mut() {
                        let _ = conn.query(&format!(
                            "UPDATE `{t}` SET v = v + 1 WHERE id = {}",
                            first_id + (id - first_id) / 2
                        ));
                    }
                }
            }
        });
        Writer {
            stop,
            committed,
            handle: Some(handle),
        }
    }

    /// Stops it; the ids it saw committed.
    fn finish(mut self) -> Vec<i64> {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            h.join().expect("writer thread");
        }
        self.committed.lock().expect("ids").clone()
    }
}

/// VDiff of `workflow` in `keyspace`, run to completion: panics unless it
/// compared rows and found no difference.
fn vdiff_clean(cluster: &Cluster, workflow: &str, keyspace: &str) {
    let out = cluster.vtctld(&[
        "VDiff",
        "--workflow",
        workflow,
        "--target-keyspace",
        keyspace,
        "create",
        "--wait",
    ]);
    assert!(out.contains("State:        completed"), "VDiff:\n{out}");
    assert!(out.contains("HasMismatch:  false"), "VDiff:\n{out}");
}

/// Waits until `workflow`'s streams all run with the copy done.
fn wait_replicating(cluster: &Cluster, kind: &str, workflow: &str, keyspace: &str) {
    eventually(&format!("{kind} {workflow} to finish copying"), || {
        let out = cluster.vtctld(&[
            kind,
            "--workflow",
            workflow,
            "--target-keyspace",
            keyspace,
            "status",
        ]);
        let streams: Vec<&str> = out.lines().filter(|l| l.starts_with("id=")).collect();
        (!streams.is_empty() && streams.iter().all(|l| l.contains("Status: Running"))).then_some(())
    });
}

#[test]
fn canyon_nodes_serve_as_vitess_tablets() {
    if skip_without("sysbench") {
        return;
    }
    if !vitess_bin().join("vtgate").exists() || !vitess_bin().join("etcd").exists() {
        skip_missing("Vitess v0.24.4 (scripts/vitess.sh build)");
        return;
    }

    // 1. The cluster.
    let commerce = node(1);
    let mut shards: Vec<(String, Server)> = ["-80", "80-"]
        .iter()
        .enumerate()
        .map(|(i, s)| (s.to_string(), node(2 + i as u32)))
        .collect();
    let cluster = Cluster::up(&[
        format!("commerce:0:{}", commerce.port()),
        format!("customer:-80:{}", shards[0].1.port()),
        format!("customer:80-:{}", shards[1].1.port()),
    ]);
    let vschema = r#"{"sharded":true,"vindexes":{"xxhash":{"type":"xxhash"}},"tables":{
        "sbtest1":{"column_vindexes":[{"column":"id","name":"xxhash"}]},
        "product":{"column_vindexes":[{"column":"id","name":"xxhash"}]},
        "orders":{"column_vindexes":[{"column":"id","name":"xxhash"}]},
        "oe_customer":{"column_vindexes":[{"column":"c_id","name":"xxhash"}]},
        "oe_order":{"column_vindexes":[{"column":"o_c_id","name":"xxhash"}]}}}"#;
    cluster.vtctld(&["ApplyVSchema", "--vschema", vschema, "customer"]);
    for n in std::iter::once(&commerce).chain(shards.iter().map(|(_, n)| n)) {
        let tables = n.client().exec("SHOW TABLES FROM _vt").rows().len();
        assert!(
            tables >= 20,
            "the _vt sidecar tables on port {}: {tables}",
            n.port()
        );
    }
    let mut gate = cluster.vtgate("customer");
    let version = gate.exec("SELECT @@version").scalar().unwrap_or_default();
    assert!(version.starts_with("8.0"), "vtgate presents {version}");
    // vtgate routes by the VSchema once it has it.
    eventually("vtgate to load the sharded VSchema", || {
        gate.query("CREATE TABLE orders (id BIGINT PRIMARY KEY, v INT NOT NULL)")
            .ok()
    });

    // 2. sysbench through vtgate, ids given by sysbench (no sequence).
    let sb = |cmd: &str, extra: &[&str]| {
        let out = Command::new("sysbench")
            .arg("oltp_read_write")
            .args([
                "--mysql-host=127.0.0.1",
                &format!("--mysql-port={}", cluster.vtgate_port()),
                "--mysql-user=app",
                "--mysql-db=customer",
                "--tables=1",
                "--table-size=2000",
                "--auto-inc=off",
                "--db-ps-mode=disable",
            ])
            .args(extra)
            .arg(cmd)
            .output()
            .expect("run sysbench");
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "sysbench {cmd}:\n{text}\n{}",
            cluster.logs()
        );
        text
    };
    sb("prepare", &[]);
    // vtgate merges a scatter ORDER BY with the column's collation, which it
    // learns from the tablets' schema tracking.
    eventually("vtgate to track sbtest1", || {
        gate.query("SELECT c FROM sbtest1 WHERE id BETWEEN 1 AND 50 ORDER BY c")
            .ok()
    });
    let report = sb("run", &["--threads=4", "--time=10"]);
    // sysbench's default: a deadlock (1213) or lock wait timeout (1205)
    // is retried, as OLTP clients do; any other error stops it, and the run
    // must exit 0.
    let tx: f64 = common::sysbench_stat(&report, "transactions:");
    let retried: f64 = common::sysbench_stat(&report, "ignored errors:");
    assert!(tx > 0.0, "{report}");
    eprintln!("sysbench through vtgate: {tx} transactions, {retried} retried");
    let placed: Vec<(&str, &Server)> = shards.iter().map(|(s, n)| (s.as_str(), n)).collect();
    assert_placed(
        &placed,
        "customer",
        "sbtest1",
        &(1..=2000).collect::<Vec<_>>(),
    );

    // 2b. `canyon bench` order_entry through vtgate, sharded by a vindex on
    // the customer: loaded through vtgate, run with prepared statements, no
    // error but retried deadlocks, every customer's rows on its shard.
    let (customers, per_customer) = (1_000i64, 5i64);
    let out = tempfile::tempdir().expect("a results directory");
    let bench = Command::new(env!("CARGO_BIN_EXE_canyon"))
        .args(["bench", "-w", "order_entry", "--shape", "fixed", "-t", "4"])
        .args(["--duration", "5", "--warmup", "1", "--report-interval", "0"])
        .arg(format!("--customers={customers}"))
        .arg(format!("--orders-per-customer={per_customer}"))
        .arg(format!("--target=app@127.0.0.1:{}", cluster.vtgate_port()))
        .args(["--vitess-keyspace", "customer", "--out"])
        .arg(out.path())
        .output()
        .expect("run canyon bench");
    let printed = String::from_utf8_lossy(&bench.stdout).into_owned()
        + &String::from_utf8_lossy(&bench.stderr);
    assert!(
        bench.status.success(),
        "canyon bench through vtgate:\n{printed}\n{}",
        cluster.logs()
    );
    let results: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.path().join("results.json")).expect("results.json"),
    )
    .expect("results.json parses");
    let step = &results["steps"][0];
    assert_eq!(step["status"], "ok", "{printed}");
    let transactions = step["transactions"].as_u64().unwrap_or(0);
    assert!(transactions > 0, "{printed}");
    let errors = step["errors"].as_object().cloned().unwrap_or_default();
    assert!(
        errors.keys().all(|code| code == "1213" || code == "1205"),
        "canyon bench through vtgate: errors {errors:?}\n{printed}"
    );
    eprintln!(
        "canyon bench order_entry through vtgate: {transactions} transactions, errors {errors:?}"
    );
    for (shard, n) in &shards {
        let mut c = n.client();
        for (table, column) in [("oe_customer", "c_id"), ("oe_order", "o_c_id")] {
            for r in c
                .exec(&format!("SELECT DISTINCT {column} FROM customer.{table}"))
                .rows()
            {
                let id: i64 = r[0].as_deref().unwrap_or("0").parse().expect("an id");
                assert!(
                    in_shard(keyspace_byte(id), shard),
                    "{table}.{column} {id} is on shard {shard}"
                );
            }
        }
    }
    let count = |table: &str| -> i64 {
        shards
            .iter()
            .map(|(_, n)| {
                let v = n
                    .client()
                    .exec(&format!("SELECT COUNT(*) FROM customer.{table}"));
                v.scalar()
                    .unwrap_or_default()
                    .parse::<i64>()
                    .expect("a count")
            })
            .sum()
    };
    assert_eq!(count("oe_customer"), customers);
    // Each transaction replaces one order by one with the same id.
    assert_eq!(count("oe_order"), customers * per_customer);

    // 3. An ALTER through vtgate, then queries naming the new column.
    gate.exec("ALTER TABLE sbtest1 ADD COLUMN email VARCHAR(40)");
    eventually("vtgate to see sbtest1.email", || {
        gate.query("UPDATE sbtest1 SET email = 'a@b' WHERE id = 7")
            .ok()
    });
    assert_eq!(
        gate.exec("SELECT email FROM sbtest1 WHERE id = 7").scalar(),
        Some("a@b".to_string())
    );

    // 4. MoveTables commerce.product -> customer under writes.
    let mut shop = cluster.vtgate("commerce");
    shop.exec("CREATE TABLE product (id BIGINT PRIMARY KEY, v INT NOT NULL, doc JSON)");
    let values: Vec<String> = (1..=500)
        .map(|i| format!("({i}, {i}, '{{\"sku\": {i}}}')"))
        .collect();
    eventually("vtgate to track commerce.product", || {
        shop.query(&format!("INSERT INTO product VALUES {}", values.join(",")))
            .ok()
    });
    let writer = Writer::start(cluster.vtgate_port(), "commerce", "product", 1_000);
    let mt = |args: &[&str]| {
        let mut all = vec![
            "MoveTables",
            "--workflow",
            "shop",
            "--target-keyspace",
            "customer",
        ];
        all.extend_from_slice(args);
        cluster.vtctld(&all)
    };
    mt(&[
        "create",
        "--source-keyspace",
        "commerce",
        "--tables",
        "product",
    ]);
    wait_replicating(&cluster, "MoveTables", "shop", "customer");
    vdiff_clean(&cluster, "shop", "customer");
    mt(&["switchtraffic"]);
    mt(&["reversetraffic"]);
    mt(&["switchtraffic"]);
    let mut committed = writer.finish();
    mt(&["complete"]);
    committed.extend(1..=500);
    assert!(committed.len() > 500, "the writer committed nothing");
    let placed: Vec<(&str, &Server)> = shards.iter().map(|(s, n)| (s.as_str(), n)).collect();
    assert_placed(&placed, "customer", "product", &committed);

    // 5. Reshard -80,80- into four shards under writes; a target node is
    //    killed during the workflow and comes back.
    let targets = ["-40", "40-80", "80-c0", "c0-"];
    let mut new_nodes: Vec<(String, Server)> = targets
        .iter()
        .enumerate()
        .map(|(i, s)| (s.to_string(), node(10 + i as u32)))
        .collect();
    for (i, (shard, n)) in new_nodes.iter().enumerate() {
        cluster.tablet(110 + i as u32, "customer", shard, n.port());
    }
    let writer = Writer::start(cluster.vtgate_port(), "customer", "orders", 1);
    let rs = |args: &[&str]| {
        let mut all = vec![
            "Reshard",
            "--workflow",
            "four",
            "--target-keyspace",
            "customer",
        ];
        all.extend_from_slice(args);
        cluster.vtctld(&all)
    };
    // Refused until the new tablets' VReplication engines have opened.
    let target_shards = targets.join(",");
    eventually("Reshard create to be accepted", || {
        cluster
            .try_vtctld(&[
                "Reshard",
                "--workflow",
                "four",
                "--target-keyspace",
                "customer",
                "create",
                "--source-shards",
                "-80,80-",
                "--target-shards",
                &target_shards,
            ])
            .map_err(|e| assert!(e.contains("engine is closed"), "Reshard create:\n{e}"))
            .ok()
    });
    // Kill -9 the node of one target shard, and start it again.
    new_nodes[2].1.kill9();
    std::thread::sleep(Duration::from_millis(500));
    new_nodes[2].1.restart();
    wait_replicating(&cluster, "Reshard", "four", "customer");
    vdiff_clean(&cluster, "four", "customer");
    rs(&["switchtraffic"]);
    let orders = writer.finish();
    rs(&["complete"]);
    assert!(!orders.is_empty(), "the writer committed nothing");
    let placed: Vec<(&str, &Server)> = new_nodes.iter().map(|(s, n)| (s.as_str(), n)).collect();
    assert_placed(&placed, "customer", "orders", &orders);
    assert_placed(
        &placed,
        "customer",
        "sbtest1",
        &(1..=2000).collect::<Vec<_>>(),
    );
    let served = gate.exec("SHOW VITESS_SHARDS").rows();
    for t in targets {
        assert!(
            served
                .iter()
                .any(|r| r[0].as_deref() == Some(&format!("customer/{t}"))),
            "customer/{t} in {served:?}"
        );
    }
    shards.clear();

    // 6. Online DDL under load.
    let writer = Writer::start(cluster.vtgate_port(), "customer", "orders", 1_000_000);
    let mut ddl = cluster.vtgate("customer");
    ddl.exec("SET @@ddl_strategy = 'vitess'");
    ddl.exec("ALTER TABLE orders ADD COLUMN note VARCHAR(20) DEFAULT 'n'");
    eventually(
        "the Online DDL migration to complete on every shard",
        || {
            let rows = ddl.exec("SHOW VITESS_MIGRATIONS").rows();
            let status: Vec<String> = rows
                .iter()
                .filter_map(|r| {
                    r.iter()
                        .flatten()
                        .find(|v| {
                            [
                                "complete",
                                "failed",
                                "cancelled",
                                "running",
                                "queued",
                                "ready",
                            ]
                            .contains(&v.as_str())
                        })
                        .cloned()
                })
                .collect();
            assert!(
                !status.iter().any(|s| s == "failed"),
                "migration failed: {rows:?}"
            );
            (status.len() == targets.len() && status.iter().all(|s| s == "complete")).then_some(())
        },
    );
    let _ = writer.finish();
    for (_, n) in &new_nodes {
        let with_note = n
            .client()
            .exec("SELECT COUNT(*) FROM customer.orders WHERE note = 'n'")
            .scalar();
        let all = n
            .client()
            .exec("SELECT COUNT(*) FROM customer.orders")
            .scalar();
        assert_eq!(with_note, all, "every row has the new column's default");
    }
    for (_, n) in new_nodes.iter_mut() {
        n.assert_running();
    }
}
