//! The catalog: databases, tables, indexes and accounts, as immutable snapshots.
//!
//! # Why snapshots
//! MySQL's LOCK_grant and dictionary locks are read-locked by every statement, and
//! at high core counts that read lock itself became the bottleneck. Canyon's
//! catalog is a tree of `Arc`s that is never modified in place: a statement loads
//! the current [`Catalog`] with one `ArcSwap::load` (no lock, no shared counter
//! written on arc-swap's fast path) and reads it freely. DDL and account
//! statements serialise on one DDL mutex, build a modified copy (sharing every
//! unchanged table), persist the changed records with a synced write, and swap
//! the new root in. Readers that loaded the old root keep a consistent old view.
//!
//! # Persistence
//! Records live in the Meta keyspace as JSON (human-inspectable; the catalog is
//! tiny next to the data): see docs/format.md. DDL is not transactional, as in
//! MySQL: each DDL statement commits the open transaction first and is durable
//! when it returns.
//!
//! What this module does not do: no MDL. DROP / TRUNCATE do not wait for
//! transactions that use the table; a concurrent DML on a dropped table fails or
//! writes rows that the drop's cleanup removes. ALTER TABLE and CREATE / DROP
//! INDEX wait for the transactions that ran on an older catalog through catalog
//! pins, without blocking anyone: see `crate::ddl::alter`.

use crate::types::collation::Collation;
use crate::types::value::Value;
use crate::types::{ExprKind, SqlType};
use canyon_txn::{IndexId, TableId};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

/// A column's default, as stored in the catalog.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum DefaultValue {
    /// DEFAULT NULL (or no DEFAULT on a nullable column).
    Null,
    /// A constant, stored as its text form and coerced to the column type on use.
    Literal(String),
    /// A numeric constant.
    Number(String),
    /// DEFAULT CURRENT_TIMESTAMP / NOW().
    CurrentTimestamp,
}

/// One column of a table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ColumnDef {
    /// Name as declared (compared case-insensitively, as MySQL does).
    pub name: String,
    /// Declared type (records written before temporal types carried their
    /// fsp read as fsp 0: see `sqltype::deserialize_compat`).
    #[serde(deserialize_with = "crate::types::sqltype::deserialize_compat")]
    pub ty: SqlType,
    /// Whether NULL is allowed.
    pub nullable: bool,
    /// DEFAULT clause; `None` means "no default" (an error in strict mode when
    /// omitted from an INSERT of a NOT NULL column).
    pub default: Option<DefaultValue>,
    /// AUTO_INCREMENT.
    pub auto_increment: bool,
    /// The collation of a character column (`binary` for binary strings; not
    /// used by other types). Records written before Canyon knew collations
    /// lack the field: their string keys hold raw bytes, which is
    /// `utf8mb4_0900_bin` (see `crate::types::collation`).
    #[serde(default = "legacy_collation")]
    pub collation: Collation,
    /// For a column added by ALTER TABLE ADD COLUMN: the value that rows stored
    /// before the ADD (which lack the column's slot) read as — the DEFAULT at
    /// ALTER time (CURRENT_TIMESTAMP frozen to the ALTER's time), or the type's
    /// implicit default for a NOT NULL column without one, as MySQL fills it.
    /// `None` for columns of CREATE TABLE: rows always hold them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added_default: Option<DefaultValue>,
    /// What the declaration says beyond type, nullability and default:
    /// COMMENT, display width, ON UPDATE CURRENT_TIMESTAMP.
    #[serde(default, skip_serializing_if = "ColumnAttrs::is_empty")]
    pub attrs: ColumnAttrs,
}

/// The parts of a column declaration beyond type, nullability and default:
/// most only shown (ON UPDATE is applied); `generated` decides the values.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnAttrs {
    /// COMMENT '...' (shown by SHOW CREATE TABLE, SHOW FULL COLUMNS and
    /// information_schema.COLUMNS).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub comment: String,
    /// The display width an integer type was declared with (`INT(5)`):
    /// shown where widths are (`EngineConfig::display_widths`); it never
    /// limits values, as in MySQL. For YEAR only 2 (MariaDB's YEAR(2), see
    /// [`ColumnDef::is_year2`]), which also changes how values read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_width: Option<u32>,
    /// ON UPDATE CURRENT_TIMESTAMP: an UPDATE that changes the row and does
    /// not assign this column sets it to the statement's time.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub on_update_now: bool,
    /// ZEROFILL (which makes the type UNSIGNED): shown with the type, and its
    /// display width, and set as the result column's ZEROFILL flag.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub zerofill: bool,
    /// A TIME column whose keys hold the time's value (signed microseconds,
    /// in time order: see `crate::catalog::rows::encode_column_key`) rather
    /// than its text. Set for every TIME column declared since keys were;
    /// records of older TIME columns lack it, and their existing keys keep
    /// the text form (whose order is wrong for negative times).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub time_key_ordered: bool,
    /// `GENERATED ALWAYS AS (expr) VIRTUAL | STORED`: the column's value is
    /// computed from the row (see `crate::ddl::generated`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated: Option<GeneratedColumn>,
}

/// A generated column's definition, as the catalog keeps it: the
/// expression as text (bound again by each statement that writes the
/// table, as a view's SELECT is planned again by each statement that reads
/// it) and the kind declared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GeneratedColumn {
    /// The expression in MySQL 8's printed form (identifiers quoted,
    /// operations parenthesised): what SHOW CREATE TABLE shows inside
    /// `AS (...)` and information_schema.COLUMNS.GENERATION_EXPRESSION.
    pub expr: String,
    /// STORED (else VIRTUAL, MySQL's default). Both are computed on write
    /// and kept in the row (see `crate::ddl::generated`); the kind is what
    /// the catalog shows and what the key rules read (a VIRTUAL column
    /// cannot be in the primary key).
    pub stored: bool,
}

impl ColumnAttrs {
    /// Whether nothing was declared (the record then omits the field).
    pub fn is_empty(&self) -> bool {
        *self == ColumnAttrs::default()
    }
}

impl ColumnDef {
    /// Whether this is a MariaDB YEAR(2) column (`presentation =
    /// "mariadb"` only, see `crate::ddl::column_type::year_widths`): a YEAR
    /// whose display width is 2. It stores the year as YEAR(4) does; results
    /// show it as two digits and expressions read it as the year modulo 100
    /// (`crate::plan::bind_members`).
    pub fn is_year2(&self) -> bool {
        self.ty == SqlType::Year && self.attrs.display_width == Some(2)
    }

    /// The column's type as SHOW CREATE TABLE and COLUMN_TYPE print it: with
    /// `display_widths` (MySQL 5.7 / MariaDB) the declared or default width;
    /// without (MySQL 8.0.19+) none, except a declared TINYINT(1), which
    /// MySQL 8 keeps showing (connectors read it as BOOLEAN).
    pub fn type_name(&self, display_widths: bool) -> String {
        let declared = self.attrs.display_width;
        // MySQL 8 still shows the width of a ZEROFILL column: it is what
        // the zeros fill to.
        let width = if display_widths || self.attrs.zerofill {
            declared.or(self.ty.default_display_width())
        } else {
            declared.filter(|w| *w == 1 && matches!(self.ty, SqlType::TinyInt { .. }))
        };
        let name = self.ty.sql_name_width(width);
        if !self.attrs.zerofill {
            name
        } else if name.ends_with(" unsigned") {
            format!("{name} zerofill")
        } else {
            format!("{name} unsigned zerofill")
        }
    }
}

fn legacy_collation() -> Collation {
    Collation::Utf8mb4_0900Bin
}

/// A secondary index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexDef {
    /// Globally unique id (the key prefix of its entries).
    pub id: IndexId,
    /// Name ("k_1"); unique within the table.
    pub name: String,
    /// Column positions, in key order.
    pub columns: Vec<usize>,
    /// UNIQUE.
    pub unique: bool,
    /// Where the index is in the online build protocol (see `crate::ddl::alter`).
    #[serde(default, skip_serializing_if = "IndexState::is_public")]
    pub state: IndexState,
    /// What the definition declared beyond its columns (shown, not acted on).
    #[serde(default, skip_serializing_if = "IndexAttrs::is_empty")]
    pub attrs: IndexAttrs,
    /// The oldest snapshot that may read through this index: an index made
    /// public by ADD INDEX has entries for the versions a snapshot from
    /// then on sees, not for older ones its back-fill skipped. A read of an
    /// older snapshot through it fails with 1412 ER_TABLE_DEF_CHANGED, as
    /// InnoDB's does (`crate::ddl::alter`, P3). Not stored: after a restart
    /// every snapshot is newer.
    #[serde(skip)]
    pub ready_since: u64,
}

/// What an index definition may declare beyond its columns: kept so SHOW
/// CREATE TABLE, SHOW INDEX and information_schema.STATISTICS give it back.
///
/// None of it but `fulltext` changes how Canyon stores the index: every other index is an
/// ordered key range in the LSM tree (what `USING BTREE` asks for; `USING
/// HASH` gets the same, as InnoDB gives it), read in either direction (so a
/// DESC key part costs nothing to serve), and a prefix key part (`c(10)`)
/// indexes the whole value. A UNIQUE index with a prefix part is therefore
/// unique over the whole values, not their prefixes as in MySQL
/// (docs/compatibility.md).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexAttrs {
    /// `USING BTREE` / `USING HASH`, as declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub using: Option<IndexAlgorithm>,
    /// `COMMENT '...'`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub comment: String,
    /// Per key part (in key order): the declared prefix length in
    /// characters (bytes for binary strings). Empty: no prefixes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prefixes: Vec<Option<u32>>,
    /// Per key part: declared DESC. Empty: all ascending.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub descending: Vec<bool>,
    /// A FULLTEXT index (the one attribute that changes what is stored): its
    /// entries are the row's words, not its column values (see
    /// [`crate::types::fulltext`]); never unique, never an access path for
    /// comparisons. Absent from catalogs written before FULLTEXT existed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fulltext: bool,
}

/// The index algorithm an index definition names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum IndexAlgorithm {
    /// USING BTREE.
    BTree,
    /// USING HASH.
    Hash,
}

impl IndexAlgorithm {
    /// The SQL word.
    pub fn name(self) -> &'static str {
        match self {
            IndexAlgorithm::BTree => "BTREE",
            IndexAlgorithm::Hash => "HASH",
        }
    }
}

impl IndexAttrs {
    /// Whether nothing was declared (the record then omits the field).
    pub fn is_empty(&self) -> bool {
        *self == IndexAttrs::default()
    }

    /// The prefix length of key part `seq`, if one was declared.
    pub fn prefix(&self, seq: usize) -> Option<u32> {
        self.prefixes.get(seq).copied().flatten()
    }

    /// Whether key part `seq` was declared DESC.
    pub fn desc(&self, seq: usize) -> bool {
        self.descending.get(seq).copied().unwrap_or(false)
    }

    /// Forgets key part `seq` (its column was dropped).
    pub fn remove_part(&mut self, seq: usize) {
        if seq < self.prefixes.len() {
            self.prefixes.remove(seq);
        }
        if seq < self.descending.len() {
            self.descending.remove(seq);
        }
    }
}

/// The state of a secondary index in the online ADD INDEX protocol (see
/// `crate::ddl::alter`): writers maintain every index in `def.indexes`; the planner
/// reads only public ones.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum IndexState {
    /// Maintained by every writer and read by the planner.
    #[default]
    Public,
    /// Maintained by every writer, not yet complete: never read, never shown.
    WriteOnly,
}

impl IndexState {
    /// Whether readers may use the index.
    pub fn is_public(&self) -> bool {
        matches!(self, IndexState::Public)
    }
}

/// What a foreign key does to the child rows of a parent row that is deleted,
/// or whose referenced columns are updated (`ON DELETE` / `ON UPDATE`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum FkAction {
    /// RESTRICT: the parent change fails with 1451 while a child row exists.
    Restrict,
    /// NO ACTION (the default): as RESTRICT — InnoDB checks immediately, it
    /// has no deferred constraints.
    #[default]
    NoAction,
    /// CASCADE: child rows are deleted, or their columns follow the update.
    Cascade,
    /// SET NULL: the child columns become NULL.
    SetNull,
}

impl FkAction {
    /// The SQL words, as SHOW CREATE TABLE and information_schema print them.
    pub fn sql(self) -> &'static str {
        match self {
            FkAction::Restrict => "RESTRICT",
            FkAction::NoAction => "NO ACTION",
            FkAction::Cascade => "CASCADE",
            FkAction::SetNull => "SET NULL",
        }
    }
}

/// A FOREIGN KEY constraint of the table that holds it (the child). See
/// `crate::exec::foreign` for how it is enforced.
///
/// The parent is named, not referenced by id: a foreign key may name a table
/// that does not exist (created with `foreign_key_checks = 0`, as mysqldump
/// output does), and RENAME TABLE of the parent rewrites the names, as InnoDB
/// does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForeignKeyDef {
    /// Constraint name, unique within the database (`<table>_ibfk_<n>` when
    /// not given, as InnoDB names them).
    pub name: String,
    /// The child's column positions, in constraint order.
    pub columns: Vec<usize>,
    /// The parent's database.
    pub ref_db: String,
    /// The parent table.
    pub ref_table: String,
    /// The parent's column names, pairwise with `columns`.
    pub ref_columns: Vec<String>,
    /// ON DELETE.
    pub on_delete: FkAction,
    /// ON UPDATE.
    pub on_update: FkAction,
}

/// A table's persistent definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableDef {
    /// Id (the key prefix of its rows); TRUNCATE gives the table a new one.
    pub id: TableId,
    /// Database name.
    pub db: String,
    /// Table name (case-sensitive, like MySQL on Linux).
    pub name: String,
    /// Columns in declaration order.
    pub columns: Vec<ColumnDef>,
    /// Primary key column positions; empty means a hidden 8-byte row id (as
    /// InnoDB's DB_ROW_ID).
    pub primary_key: Vec<usize>,
    /// Secondary indexes (UNIQUE and plain), public and write-only.
    pub indexes: Vec<IndexDef>,
    /// The physical slot of each column in a stored row (see "Instant ADD / DROP
    /// COLUMN" in `crate::ddl::alter`). Empty means the identity: column `i` is slot
    /// `i` and rows have `columns.len()` slots — every table CREATE TABLE made.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slots: Vec<u32>,
    /// Number of slots a row written now has (dropped columns keep theirs, as
    /// NULL); 0 with empty `slots`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub slot_count: u32,
    /// The table's default collation (`DEFAULT CHARSET` / `COLLATE` table
    /// options, else the server's), which ADD COLUMN gives new character
    /// columns. Legacy records lack it (see [`ColumnDef::collation`]).
    #[serde(default = "legacy_collation")]
    pub default_collation: Collation,
    /// FOREIGN KEY constraints this table (as the child) holds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub foreign_keys: Vec<ForeignKeyDef>,
    /// The table's COMMENT option.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub comment: String,
    /// PARTITION BY, for a partitioned table (see `crate::catalog::partition`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partitioning: Option<crate::catalog::partition::Partitioning>,
    /// The storage engine the definition names when it is not InnoDB
    /// (`MyISAM`, `Aria`, `MEMORY`; canonical spelling): kept to be shown
    /// (SHOW CREATE TABLE, information_schema.TABLES), so that a dump
    /// restores elsewhere as declared. Every table is stored by Canyon's
    /// transactional engine whatever it names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// When the table was created or last altered, in seconds since the
    /// Unix epoch (0: unknown, a table written before Canyon kept it):
    /// information_schema.TABLES.CREATE_TIME. MySQL 8 moves CREATE_TIME on
    /// every ALTER TABLE, and schema trackers (Vitess' vttablet) notice an
    /// ALTER by it.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub created: u64,
    /// The oldest transaction snapshot (a commit timestamp) that may read
    /// this table: set when a rewrite copied its rows into a new table, since
    /// a snapshot older than that would miss the copied rows (a new index
    /// has its own: `IndexDef::ready_since`).
    /// A statement of a transaction with an older snapshot fails with 1412
    /// ER_TABLE_DEF_CHANGED, as InnoDB's does (`crate::ddl::alter`, P3).
    /// Not stored: after a restart every snapshot is newer.
    #[serde(skip)]
    pub stable_since: u64,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

/// Now, in seconds since the Unix epoch: a [`TableDef::created`].
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The canonical name of a storage engine Canyon stands in for (its
/// tables are all stored by Canyon's transactional engine): InnoDB, and
/// the engines whose tables simply keep rows, MyISAM, Aria and MEMORY
/// (HEAP), so that schemas and dumps naming them load. `None` for any other
/// name (BLACKHOLE, CSV, ARCHIVE, FEDERATED, MERGE, ... change what a table
/// does, and unknown names): MySQL's 1286 under NO_ENGINE_SUBSTITUTION,
/// else InnoDB with a warning.
pub fn storage_engine(name: &str) -> Option<&'static str> {
    STORAGE_ENGINES
        .iter()
        .find(|e| e.eq_ignore_ascii_case(name))
        .copied()
        .or_else(|| name.eq_ignore_ascii_case("HEAP").then_some("MEMORY"))
}

/// The engines [`storage_engine`] accepts, InnoDB (the default) first, as
/// SHOW ENGINES lists them.
pub const STORAGE_ENGINES: [&str; 4] = ["InnoDB", "MyISAM", "Aria", "MEMORY"];

/// SHOW ENGINES' and information_schema.ENGINES' rows (Engine, Support,
/// Comment, Transactions, XA, Savepoints): every name Canyon accepts, all
/// stored by its one transactional engine, which has XA (`canyon_txn`'s
/// `xa.rs`).
pub fn engine_rows() -> impl Iterator<Item = [&'static str; 6]> {
    STORAGE_ENGINES.iter().map(|&e| {
        if e == "InnoDB" {
            [
                e,
                "DEFAULT",
                "Canyon's transactional storage (MVCC on RocksDB)",
                "YES",
                "YES",
                "NO",
            ]
        } else {
            [
                e,
                "YES",
                "Accepted by name: stored as InnoDB (Canyon's transactional storage)",
                "YES",
                "YES",
                "NO",
            ]
        }
    })
}

impl TableDef {
    /// Column `c`'s physical slot.
    pub fn slot(&self, c: usize) -> usize {
        self.slots.get(c).map_or(c, |&s| s as usize)
    }

    /// Slots of a row written now.
    pub fn physical_width(&self) -> usize {
        if self.slots.is_empty() {
            self.columns.len()
        } else {
            self.slot_count as usize
        }
    }

    /// Whether logical and physical layout coincide (no ALTER moved or dropped a
    /// column): rows encode and decode without a map.
    pub fn identity_layout(&self) -> bool {
        self.slots.is_empty()
    }

    /// The public secondary indexes with their positions in `indexes`.
    pub fn public_indexes(&self) -> impl Iterator<Item = (usize, &IndexDef)> {
        self.indexes
            .iter()
            .enumerate()
            .filter(|(_, i)| i.state.is_public())
    }

    /// The public ordered (B-tree) secondary indexes: the ones an access path
    /// or the statistics may read. FULLTEXT indexes are left out: only MATCH
    /// reads them ([`TableDef::fulltext_indexes`]).
    pub fn ordered_indexes(&self) -> impl Iterator<Item = (usize, &IndexDef)> {
        self.public_indexes().filter(|(_, i)| !i.attrs.fulltext)
    }

    /// The public FULLTEXT indexes with their positions in `indexes`.
    pub fn fulltext_indexes(&self) -> impl Iterator<Item = (usize, &IndexDef)> {
        self.indexes
            .iter()
            .enumerate()
            .filter(|(_, i)| i.state.is_public() && i.attrs.fulltext)
    }
}

/// A table as statements use it: the definition plus runtime state shared by
/// every catalog snapshot that contains this table.
#[derive(Debug)]
pub struct Table {
    /// The definition.
    pub def: TableDef,
    /// Next AUTO_INCREMENT value minus one (the largest value handed out or seen).
    pub auto_increment: Arc<AtomicU64>,
    /// Largest hidden row id handed out (tables without a primary key).
    pub row_id: Arc<AtomicU64>,
    /// Planner statistics (see `crate::catalog::stats`).
    pub stats: Arc<crate::catalog::stats::TableStats>,
    column_lookup: HashMap<String, usize>,
    /// What each column reads as in a row stored without its slot.
    missing: Vec<Value>,
    /// Set when an ALTER published a newer definition of this table with more
    /// slots: statements still running on this one then carry unknown slots
    /// over when they rewrite a row (`crate::exec`'s `encode_over`).
    pub superseded: std::sync::atomic::AtomicBool,
    /// Where a table rewrite of this table stands ([`REWRITE_OPEN`],
    /// [`REWRITE_FROZEN`], [`REWRITE_REPLACED`]): shared by every catalog
    /// snapshot that holds this table id, read by each row write (see
    /// `crate::ddl::rewrite`).
    pub rewrite: Arc<std::sync::atomic::AtomicU8>,
    /// The columns as the planner resolves names against them, built from
    /// `def` at the first statement that names this table and shared by
    /// every statement after (`crate::plan::bind::Scope::of_table`): a
    /// point select no longer copies each column's name to plan.
    pub(crate) scope_columns: std::sync::OnceLock<TableColumns>,
}

/// A base table's columns as a `crate::plan::bind::Scope` holds them, computed once per
/// table definition (`Table::scope_columns`) and shared.
#[derive(Debug)]
pub struct TableColumns {
    pub(crate) columns: Arc<[String]>,
    pub(crate) kinds: Arc<[ExprKind]>,
    pub(crate) colls: Arc<[Option<Collation>]>,
    pub(crate) member_types: Arc<[Option<SqlType>]>,
    pub(crate) years: Arc<[Option<YearColumn>]>,
}

impl TableColumns {
    pub(crate) fn of(def: &TableDef) -> TableColumns {
        TableColumns {
            columns: def.columns.iter().map(|c| c.name.clone()).collect(),
            kinds: def.columns.iter().map(|c| ExprKind::of(c.ty)).collect(),
            colls: def
                .columns
                .iter()
                .map(|c| c.ty.is_string().then_some(c.collation))
                .collect(),
            member_types: def
                .columns
                .iter()
                .map(|c| {
                    // A YEAR(2) column's entry is `SqlType::Year` (a YEAR(4)
                    // column has none): see `crate::plan::bind_members`.
                    (c.ty.members().is_some() || matches!(c.ty, SqlType::Time(_)) || c.is_year2())
                        .then_some(c.ty)
                })
                .collect(),
            years: def
                .columns
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let leads_key = def.primary_key.first() == Some(&i)
                        || def.indexes.iter().any(|x| x.columns.first() == Some(&i));
                    (c.ty == SqlType::Year).then_some(match (c.is_year2(), leads_key) {
                        (false, _) => YearColumn::Four,
                        (true, false) => YearColumn::Two,
                        (true, true) => YearColumn::TwoKeyed,
                    })
                })
                .collect(),
        }
    }
}

/// A YEAR column, as a `crate::plan::bind::Scope` knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum YearColumn {
    /// YEAR (YEAR(4)).
    Four,
    /// MariaDB's YEAR(2) (`crate::catalog::ColumnDef::is_year2`).
    Two,
    /// A YEAR(2) column that is the first column of a key.
    TwoKeyed,
}

/// [`Table::rewrite`]: no rewrite runs; writes go ahead.
pub const REWRITE_OPEN: u8 = 0;
/// [`Table::rewrite`]: a rewrite copies the rows; a write waits for it on the
/// table's rewrite lock.
pub const REWRITE_FROZEN: u8 = 1;
/// [`Table::rewrite`]: a rewrite published a new table in place of this one;
/// a write through this definition fails (1412), it would be lost.
pub const REWRITE_REPLACED: u8 = 2;

impl Table {
    /// Wraps a definition with fresh runtime state.
    pub fn new(def: TableDef) -> Table {
        Self::with_counters(def, Arc::default(), Arc::default())
    }

    /// Wraps a definition, sharing runtime counters with a previous version.
    pub fn with_counters(def: TableDef, auto_inc: Arc<AtomicU64>, row_id: Arc<AtomicU64>) -> Table {
        let column_lookup = def
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| (c.name.to_ascii_lowercase(), i))
            .collect();
        let missing = def
            .columns
            .iter()
            .map(|col| {
                let Some(d) = col.added_default.as_ref().or(col.default.as_ref()) else {
                    return Value::Null;
                };
                let v = default_value(d, || chrono::DateTime::UNIX_EPOCH.naive_utc());
                crate::types::coerce(v.clone(), col.ty, &col.name, 0).unwrap_or(v)
            })
            .collect();
        Table {
            def,
            auto_increment: auto_inc,
            row_id,
            stats: Arc::default(),
            column_lookup,
            missing,
            superseded: Default::default(),
            rewrite: Arc::default(),
            scope_columns: std::sync::OnceLock::new(),
        }
    }

    /// A new definition of `cur` (same table id), sharing its runtime state:
    /// counters and statistics.
    pub fn sharing_runtime(def: TableDef, cur: &Table) -> Table {
        let mut t = Self::with_counters(def, cur.auto_increment.clone(), cur.row_id.clone());
        t.stats = cur.stats.clone();
        t.rewrite = cur.rewrite.clone();
        t
    }

    /// Position of a column by (case-insensitive) name.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.column_lookup
            .get(&name.to_ascii_lowercase())
            .copied()
            .or_else(|| {
                self.def
                    .columns
                    .iter()
                    .position(|c| c.name.eq_ignore_ascii_case(name))
            })
    }

    /// What column `c` reads as in a row stored before it was added (see
    /// `crate::catalog::rows::decode_table_row`).
    pub fn missing_value(&self, c: usize) -> Value {
        self.missing.get(c).cloned().unwrap_or(Value::Null)
    }

    /// The AUTO_INCREMENT column, if any.
    pub fn auto_increment_column(&self) -> Option<usize> {
        self.def.columns.iter().position(|c| c.auto_increment)
    }

    /// Whether the primary key is the hidden row id.
    pub fn hidden_pk(&self) -> bool {
        self.def.primary_key.is_empty()
    }
}

/// A database.
#[derive(Debug, Clone)]
pub struct Database {
    /// Name.
    pub name: String,
    /// The default collation of its new tables (CREATE DATABASE ... CHARACTER
    /// SET / COLLATE; the server's when not given).
    pub default_collation: Collation,
    /// Tables by name.
    pub tables: BTreeMap<String, Arc<Table>>,
}

/// A database's persisted record (`{}` before collations: the server default).
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct DatabaseRecord {
    /// See [`Database::default_collation`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_collation: Option<Collation>,
}

/// A privilege grant at one level: global (`*.*`), database (`db.*`) or table
/// (`db.t`). See [`crate::catalog::privileges`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    /// `None` for `*.*`, else the database.
    pub db: Option<String>,
    /// With `db`: the table, for a table-level grant.
    #[serde(default)]
    pub table: Option<String>,
    /// Every privilege of the level (how grants were stored before privilege
    /// lists; new grants use `privs`).
    pub all: bool,
    /// The privileges, as [`crate::catalog::privileges::Privs`] bits.
    #[serde(default)]
    pub privs: u32,
    /// WITH GRANT OPTION.
    pub grant_option: bool,
    /// `privs` was written by a Canyon that knew MySQL 8's dynamic
    /// privileges. A grant from before then (the field absent) that holds
    /// SUPER globally also holds XA_RECOVER_ADMIN, as MySQL's upgrade to
    /// 8.0.19 gives it to every SUPER account.
    #[serde(default)]
    pub dynamic: bool,
}

/// An account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserDef {
    /// User name.
    pub user: String,
    /// Host pattern ('%' or a literal host).
    pub host: String,
    /// mysql_native_password: SHA1(SHA1(password)) as hex; empty for no
    /// password or another plugin.
    pub native_hash_hex: String,
    /// The authentication plugin's name (see [`crate::catalog::auth`]); accounts stored
    /// before plugins existed are mysql_native_password.
    #[serde(default = "native_plugin_name")]
    pub plugin: String,
    /// caching_sha2_password: the salted verifier of [`crate::catalog::auth::sha2_verifier`];
    /// empty for no password or another plugin.
    #[serde(default)]
    pub sha2_verifier: String,
    /// Grants.
    pub grants: Vec<Grant>,
}

fn native_plugin_name() -> String {
    crate::catalog::auth::AuthPlugin::NativePassword
        .name()
        .to_string()
}

/// Parent database → parent table → the (database, table) of each child
/// holding a foreign key that references it.
pub type ReferencedBy = BTreeMap<String, BTreeMap<String, Vec<(String, String)>>>;

/// One immutable catalog snapshot.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    /// Databases by name.
    pub databases: BTreeMap<String, Arc<Database>>,
    /// Accounts by (user, host).
    pub users: BTreeMap<(String, String), Arc<UserDef>>,
    /// Incremented by every change; prepared statements re-plan when it moved.
    pub version: u64,
    /// The foreign keys that reference each table, by parent database, then
    /// parent table: the (database, table) of each child that holds one.
    /// Nested so a lookup needs no owned key (it runs at every DML plan once
    /// any foreign key exists). Derived from the
    /// tables' definitions by [`Catalog::index_foreign_keys`], which every
    /// catalog change runs before publishing; shared between snapshots.
    pub referenced_by: Arc<ReferencedBy>,
    /// Views, by database then name (see [`crate::catalog::view`]); shared
    /// between snapshots until a view statement changes them.
    pub views: Arc<crate::catalog::view::Views>,
    /// Stored procedures and functions by (database, kind, lower-case name)
    /// (see [`crate::catalog::routines`]).
    pub routines: BTreeMap<
        (String, crate::catalog::routines::RoutineKind, String),
        Arc<crate::catalog::routines::RoutineDef>,
    >,
    /// Triggers by (database, name).
    pub triggers: BTreeMap<(String, String), Arc<crate::catalog::routines::TriggerDef>>,
}

impl Catalog {
    /// Rebuilds [`Catalog::referenced_by`] from the tables' foreign keys. One
    /// pass over the tables (a pointer test for each table without foreign
    /// keys); DDL only.
    pub fn index_foreign_keys(&mut self) {
        let mut map = ReferencedBy::new();
        for db in self.databases.values() {
            for t in db.tables.values() {
                for fk in &t.def.foreign_keys {
                    let children = map
                        .entry(fk.ref_db.clone())
                        .or_default()
                        .entry(fk.ref_table.clone())
                        .or_default();
                    let child = (t.def.db.clone(), t.def.name.clone());
                    if !children.contains(&child) {
                        children.push(child);
                    }
                }
            }
        }
        if map != *self.referenced_by {
            self.referenced_by = Arc::new(map);
        }
    }

    /// The tables holding a foreign key that references `db`.`table`.
    pub fn children_of(&self, db: &str, table: &str) -> &[(String, String)] {
        self.referenced_by
            .get(db)
            .and_then(|tables| tables.get(table))
            .map_or(&[], Vec::as_slice)
    }

    /// Whether a write to `table` has foreign keys to honour: it holds one, or
    /// one references it.
    pub fn has_foreign_keys(&self, table: &Table) -> bool {
        !table.def.foreign_keys.is_empty()
            || (!self.referenced_by.is_empty()
                && !self.children_of(&table.def.db, &table.def.name).is_empty())
    }

    /// Looks up a table.
    pub fn table(&self, db: &str, name: &str) -> Option<&Arc<Table>> {
        self.databases.get(db)?.tables.get(name)
    }

    /// Finds the account for a login: exact host first, then '%'.
    pub fn user(&self, user: &str, host: &str) -> Option<&Arc<UserDef>> {
        self.users
            .get(&(user.to_string(), host.to_string()))
            .or_else(|| {
                if host == "127.0.0.1" || host == "::1" {
                    self.users.get(&(user.to_string(), "localhost".to_string()))
                } else {
                    None
                }
            })
            .or_else(|| self.users.get(&(user.to_string(), "%".to_string())))
    }
}

/// A TIMESTAMP column's literal default as the instant it stands for, read in
/// `zone`: the literal is kept as UTC text (converted from the zone of the
/// CREATE or ALTER that gave it, as MySQL stores the instant; see
/// [`timestamp_default_to_utc`]). `None` for any other column or default.
pub fn timestamp_default(col: &ColumnDef, zone: &crate::types::timezone::Zone) -> Option<Value> {
    let (SqlType::Timestamp(_), Some(DefaultValue::Literal(s))) = (col.ty, &col.default) else {
        return None;
    };
    match crate::types::value::parse_datetime_bytes(s.as_bytes())? {
        Value::DateTime(utc) => Some(Value::Stamp(crate::types::timezone::localize(utc, zone))),
        _ => None,
    }
}

/// A TIMESTAMP column's literal default as it reads in `zone` (SHOW CREATE
/// TABLE, SHOW COLUMNS, information_schema); any other default's text.
pub fn shown_literal_default(
    col: &ColumnDef,
    text: &str,
    zone: &crate::types::timezone::Zone,
) -> String {
    match timestamp_default(col, zone) {
        Some(Value::Stamp(s)) => crate::types::value::format_datetime(&s.local),
        _ => text.to_string(),
    }
}

/// Converts a TIMESTAMP column's literal default, a local time in the
/// session's `zone` (as CREATE TABLE or ALTER TABLE gives it), into the UTC
/// text the catalog keeps: a TIMESTAMP default is an instant (MySQL 8; SHOW
/// CREATE TABLE shows it in the zone of whoever looks). Outside the
/// TIMESTAMP range it is 1067 Invalid default value.
pub fn timestamp_default_to_utc(
    col: &mut ColumnDef,
    zone: &crate::types::timezone::Zone,
) -> canyon_common::Result<()> {
    let (SqlType::Timestamp(_), Some(DefaultValue::Literal(s))) = (col.ty, &col.default) else {
        return Ok(());
    };
    let invalid = || canyon_common::Error::Sql {
        code: 1067,
        sqlstate: *b"42000",
        message: format!("Invalid default value for '{}'", col.name),
    };
    let Some(Value::DateTime(local)) = crate::types::value::parse_datetime_bytes(s.as_bytes())
    else {
        return Err(invalid());
    };
    let stamp = crate::types::timezone::stamp(local, zone).ok_or_else(invalid)?;
    col.default = Some(DefaultValue::Literal(crate::types::value::format_datetime(
        &stamp.utc,
    )));
    Ok(())
}

/// Turns a stored default into a value (before coercion to the column type).
pub fn default_value(d: &DefaultValue, now: impl FnOnce() -> chrono::NaiveDateTime) -> Value {
    match d {
        DefaultValue::Null => Value::Null,
        DefaultValue::Literal(s) => Value::str(s),
        DefaultValue::Number(s) => {
            if let Ok(i) = s.parse::<i64>() {
                Value::Int(i)
            } else if let Ok(u) = s.parse::<u64>() {
                Value::UInt(u)
            } else if let Ok(d) = crate::types::decimal::Decimal::from_str_exact(s) {
                Value::Decimal(d)
            } else {
                Value::Double(s.parse().unwrap_or(0.0))
            }
        }
        DefaultValue::CurrentTimestamp => Value::DateTime(now()),
    }
}
