//! Workloads: what the clients send. A workload is pure — it generates SQL text
//! and transactions from a seed and never touches the network — so its statement
//! mix can be tested without a server, and the driver ([`crate::driver`]) is the
//! only code that talks to one.
//!
//! | name | tables | one transaction |
//! |---|---|---|
//! | `oltp_point_select` | sysbench `sbtestN` | 1 point SELECT (no BEGIN/COMMIT) |
//! | `oltp_read_only` | sysbench `sbtestN` | BEGIN, 10 point, 4 range SELECTs, COMMIT |
//! | `oltp_read_write` | sysbench `sbtestN` | read-only's 14 SELECTs + 2 UPDATEs, DELETE, INSERT |
//! | `oltp_write_only` | sysbench `sbtestN` | BEGIN, 2 UPDATEs, DELETE, INSERT, COMMIT |
//! | `order_entry` | `oe_customer`, `oe_order`, range-partitioned by customer | BEGIN, 4 SELECTs, DELETE, INSERT, COMMIT on the customer's shard |
//! | `connect` | none | connect, `SELECT 1`, disconnect |
//!
//! Not implemented: sysbench's `--skip-trx`, `--secondary`, `--auto-inc=off`
//! variations and per-query count flags (`--point-selects=N` ...); the text
//! protocol (`--db-ps-mode=disable`).

mod connect;
mod oltp;
mod order_entry;
pub mod rng;

pub use connect::Connect;
pub use oltp::{Oltp, OltpKind};
pub use order_entry::{shard_of, shard_range, OrderEntry};

/// A value bound to one `?` of a prepared statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Param {
    /// An integer (MYSQL_TYPE_LONGLONG on the wire).
    Int(i64),
    /// A string (MYSQL_TYPE_VAR_STRING on the wire).
    Str(String),
}

/// How sysbench classifies a statement in its "queries performed" counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StmtClass {
    /// SELECT.
    Read,
    /// INSERT, UPDATE, DELETE.
    Write,
    /// Everything else: BEGIN, COMMIT.
    Other,
}

/// One statement a client prepares on each of its connections.
#[derive(Debug, Clone)]
pub struct StatementSpec {
    /// The SQL text, with `?` placeholders.
    pub sql: String,
    /// Its class, for the query counts.
    pub class: StmtClass,
}

impl StatementSpec {
    /// A statement of `class`.
    pub fn new(sql: impl Into<String>, class: StmtClass) -> StatementSpec {
        StatementSpec {
            sql: sql.into(),
            class,
        }
    }
}

/// One statement execution inside a transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Op {
    /// Index into [`Workload::statements`].
    pub stmt: usize,
    /// The parameter values, one per `?`.
    pub params: Vec<Param>,
}

/// One transaction: the shard it goes to and the statements, in order
/// (BEGIN and COMMIT included when the workload uses them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Txn {
    /// Index of the shard (target endpoint) that must run the whole transaction.
    pub shard: usize,
    /// The statements.
    pub ops: Vec<Op>,
}

impl Txn {
    /// Empties the transaction for reuse (keeps the allocation).
    pub fn clear(&mut self) {
        self.shard = 0;
        self.ops.clear();
    }

    /// Appends an execution of statement `stmt`.
    pub fn push(&mut self, stmt: usize, params: Vec<Param>) {
        self.ops.push(Op { stmt, params });
    }
}

/// How a client uses connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectionMode {
    /// One connection per shard for the whole step; every statement prepared once
    /// per connection (COM_STMT_PREPARE), then executed with COM_STMT_EXECUTE —
    /// what sysbench does.
    Persistent,
    /// A new connection for every transaction, its statements sent as text
    /// (COM_QUERY), then COM_QUIT: the connection storm. Such a workload's
    /// statements take no parameters.
    PerTransaction,
}

/// One independent stream of work for the data load: statements run in order on
/// one connection. Streams of one shard may run concurrently.
pub type PrepareStream = Box<dyn Iterator<Item = String> + Send>;

/// A benchmark workload.
///
/// Contract:
/// - **Deterministic**: [`Workload::client`] with the same `(client, seed,
///   shards)` yields the same transactions, and [`Workload::prepare`] the same
///   data, so a seed reproduces a run and both sides of a `--compare` get the
///   same work.
/// - **Self-contained transactions**: a transaction never depends on the rows an
///   earlier statement returned, and all of its statements go to
///   [`Txn::shard`]. (This is what lets the driver retry a deadlocked
///   transaction by simply generating the next one, as sysbench does.)
/// - **Shard-local data**: `prepare(shard, shards)` creates exactly the rows the
///   transactions routed to that shard use.
/// - Workloads are `Send + Sync`; each client gets its own [`TxnSource`].
pub trait Workload: Send + Sync {
    /// The workload's name in reports (`oltp_read_write`, `order_entry` ...).
    fn name(&self) -> &'static str;

    /// The size and shape parameters, as they appear in the report.
    fn params(&self) -> serde_json::Value;

    /// The database the clients connect to, created by the prepare phase; `None`
    /// if the workload needs no schema.
    fn database(&self) -> Option<&str>;

    /// Whether the prepare phase creates [`Workload::database`] (`CREATE
    /// DATABASE IF NOT EXISTS`); not in a Vitess keyspace, which Vitess makes.
    fn creates_database(&self) -> bool {
        true
    }

    /// The statements each client prepares on each connection; [`Op::stmt`]
    /// indexes this list.
    fn statements(&self) -> &[StatementSpec];

    /// How clients use connections.
    fn connection_mode(&self) -> ConnectionMode {
        ConnectionMode::Persistent
    }

    /// The statements that create and fill shard `shard` of `shards`, run inside
    /// [`Workload::database`]; existing tables of the same name are dropped first.
    fn prepare(&self, shard: usize, shards: usize) -> Vec<PrepareStream>;

    /// The statements that drop what [`Workload::prepare`] made.
    fn cleanup(&self) -> Vec<String>;

    /// Client `client`'s transaction stream.
    fn client(&self, client: u64, seed: u64, shards: usize) -> Box<dyn TxnSource>;
}

/// An endless stream of transactions for one client.
pub trait TxnSource: Send {
    /// Fills `txn` (cleared by the caller) with the next transaction.
    fn next_txn(&mut self, txn: &mut Txn);
}

/// The workloads `--workload` accepts, with the names sysbench uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum WorkloadKind {
    /// sysbench oltp_point_select.
    #[value(name = "oltp_point_select", alias = "point-select")]
    PointSelect,
    /// sysbench oltp_read_only.
    #[value(name = "oltp_read_only", alias = "read-only")]
    ReadOnly,
    /// sysbench oltp_read_write.
    #[value(name = "oltp_read_write", alias = "read-write")]
    ReadWrite,
    /// sysbench oltp_write_only.
    #[value(name = "oltp_write_only", alias = "write-only")]
    WriteOnly,
    /// Customers and orders, range-partitioned by customer across the shards.
    #[value(name = "order_entry", alias = "order-entry")]
    OrderEntry,
    /// Connection storm: connect, one query, disconnect.
    #[value(name = "connect")]
    Connect,
}

/// Size parameters for building a workload.
#[derive(Debug, Clone)]
pub struct WorkloadOptions {
    /// sysbench `--tables`.
    pub tables: u32,
    /// sysbench `--table-size`.
    pub table_size: u64,
    /// sysbench `--range-size`.
    pub range_size: u64,
    /// sysbench `--rand-type`.
    pub distribution: rng::Distribution,
    /// order-entry: number of customers.
    pub customers: u64,
    /// order-entry: orders per customer.
    pub orders_per_customer: u64,
    /// The target is a Vitess vtgate and the workload runs in this keyspace
    /// (see [`InKeyspace`]).
    pub vitess_keyspace: Option<String>,
}

impl Default for WorkloadOptions {
    fn default() -> Self {
        WorkloadOptions {
            tables: 1,
            table_size: 10_000,
            range_size: 100,
            distribution: rng::Distribution::Special,
            customers: 10_000,
            orders_per_customer: 10,
            vitess_keyspace: None,
        }
    }
}

/// Builds the workload `kind`.
pub fn build(kind: WorkloadKind, o: &WorkloadOptions) -> Box<dyn Workload> {
    let oltp = |k| -> Box<dyn Workload> {
        Box::new(Oltp::new(
            k,
            o.tables,
            o.table_size,
            o.range_size,
            o.distribution,
        ))
    };
    let w: Box<dyn Workload> = match kind {
        WorkloadKind::PointSelect => oltp(OltpKind::PointSelect),
        WorkloadKind::ReadOnly => oltp(OltpKind::ReadOnly),
        WorkloadKind::ReadWrite => oltp(OltpKind::ReadWrite),
        WorkloadKind::WriteOnly => oltp(OltpKind::WriteOnly),
        WorkloadKind::OrderEntry if o.vitess_keyspace.is_some() => Box::new(
            OrderEntry::routed_by_vindex(o.customers, o.orders_per_customer),
        ),
        WorkloadKind::OrderEntry => Box::new(OrderEntry::new(o.customers, o.orders_per_customer)),
        WorkloadKind::Connect => Box::new(Connect::new()),
    };
    match &o.vitess_keyspace {
        Some(keyspace) => Box::new(InKeyspace {
            inner: w,
            keyspace: keyspace.clone(),
        }),
        None => w,
    }
}

/// A workload run through a Vitess vtgate in an existing keyspace: the
/// keyspace is the database (vtgate routes each statement to the shard its
/// VSchema's vindex names), and it is not created by the prepare phase.
/// Everything else is the inner workload's: one endpoint, so one "shard" to
/// the bench, the real sharding being Vitess'.
pub struct InKeyspace {
    inner: Box<dyn Workload>,
    keyspace: String,
}

impl Workload for InKeyspace {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn params(&self) -> serde_json::Value {
        let mut p = self.inner.params();
        if let Some(m) = p.as_object_mut() {
            m.insert("vitess_keyspace".into(), self.keyspace.clone().into());
        }
        p
    }

    fn database(&self) -> Option<&str> {
        self.inner.database().map(|_| self.keyspace.as_str())
    }

    fn creates_database(&self) -> bool {
        false
    }

    fn statements(&self) -> &[StatementSpec] {
        self.inner.statements()
    }

    fn connection_mode(&self) -> ConnectionMode {
        self.inner.connection_mode()
    }

    fn prepare(&self, shard: usize, shards: usize) -> Vec<PrepareStream> {
        self.inner.prepare(shard, shards)
    }

    fn cleanup(&self) -> Vec<String> {
        self.inner.cleanup()
    }

    fn client(&self, client: u64, seed: u64, shards: usize) -> Box<dyn TxnSource> {
        self.inner.client(client, seed, shards)
    }
}

/// Rows per multi-row INSERT in the data load (sysbench bounds its INSERTs by
/// size instead; 500 rows of sysbench data is about 100 KiB, well inside any
/// max_allowed_packet).
pub(crate) const LOAD_BATCH_ROWS: u64 = 500;
