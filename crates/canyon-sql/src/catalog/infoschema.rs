//! `information_schema`: a read-only virtual database whose tables are
//! generated from the catalog snapshot (and the process registry) for each
//! statement that reads them.
//!
//! # How a query reads it
//! ```text
//!   FROM information_schema.TABLES t      query.rs: SourceKind::System(SystemSource)
//!   WHERE t.TABLE_SCHEMA = 'd'            push_into_system: the equality (or IN list)
//!     AND t.TABLE_NAME = ?                on TABLE_SCHEMA / TABLE_NAME is kept as
//!                                         constant expressions in the source
//!   execution (select.rs)                 the source is materialised once per
//!                                         statement: the pushed expressions are
//!                                         evaluated, then EvalContext::system_rows
//!                                         -> generate() walks only database 'd',
//!                                         table `?`: one table, not all of them
//! ```
//! The rest of the SELECT machinery (joins, hash joins, WHERE, ORDER BY, LIKE,
//! subqueries) treats the generated rows like a derived table's. The WHERE
//! clause is still checked on every generated row, so the push-down only has
//! to produce a superset: it may never drop a row the filter would keep.
//! Lookups compare names bytewise (Canyon's names are case-sensitive, like
//! MySQL's on Linux) after removing trailing spaces (PAD SPACE comparison).
//!
//! # What is listed
//! As in MySQL, only what the account holds a privilege on: databases it may
//! use, and their tables. `information_schema` itself is always listed (its
//! tables as `SYSTEM VIEW`s). PROCESSLIST shows every session to an account
//! with global privileges (MySQL's PROCESS privilege), else only the account's
//! own. Writes to any of these tables fail with 1044, as in MySQL.
//!
//! Column names and types follow MySQL 8.0's data-dictionary views. Not
//! implemented: UPDATE_TIME (Canyon does not record it: NULL; CREATE_TIME
//! is when the table was created or last altered, as in MySQL 8),
//! byte sizes (DATA_LENGTH etc. are rough constants), events and
//! tablespaces (empty tables), and the 8.0 behaviour of
//! upper-casing unaliased column names in the result metadata (Canyon returns
//! names as written in the select list, as MariaDB does).

use crate::catalog::{Catalog, DefaultValue, Table, UserDef};
use crate::types::value::Value;
use crate::types::{ExprKind, SqlType};
use std::sync::Arc;

/// The database's name, as SHOW DATABASES lists it.
pub const NAME: &str = "information_schema";

/// Whether `db` names `information_schema` (case-insensitive, as in MySQL).
pub fn is_info_schema(db: &str) -> bool {
    db.eq_ignore_ascii_case(NAME)
}

/// One table of `information_schema`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SystemTable {
    /// SCHEMATA: one row per database.
    Schemata,
    /// TABLES: one row per table.
    Tables,
    /// COLUMNS: one row per column.
    Columns,
    /// STATISTICS: one row per index column.
    Statistics,
    /// KEY_COLUMN_USAGE: one row per PRIMARY / UNIQUE key column and per
    /// FOREIGN KEY column.
    KeyColumnUsage,
    /// TABLE_CONSTRAINTS: one row per PRIMARY / UNIQUE key and FOREIGN KEY.
    TableConstraints,
    /// REFERENTIAL_CONSTRAINTS: one row per FOREIGN KEY.
    ReferentialConstraints,
    /// ENGINES.
    Engines,
    /// CHARACTER_SETS.
    CharacterSets,
    /// COLLATIONS.
    Collations,
    /// PROCESSLIST: the process registry.
    Processlist,
    /// ROUTINES: stored procedures and functions.
    Routines,
    /// VIEWS: one row per view (`crate::catalog::view`).
    Views,
    /// TRIGGERS.
    Triggers,
    /// PARTITIONS: one row per partition (subpartition) of a partitioned
    /// table, one unpartitioned row for any other.
    Partitions,
    /// EVENTS: empty.
    Events,
    /// PLUGINS: the storage engine and the authentication plugin.
    Plugins,
    /// FILES: empty (no tablespaces; mariadb-dump and mysqldump query it).
    Files,
    /// INNODB_CMP and INNODB_CMPMEM: what MySQL shows when no table is
    /// compressed (a row per compressed page size, every counter 0), which
    /// is Canyon's case: it has no InnoDB page compression (RocksDB
    /// compresses its blocks: SHOW ENGINE ... STATUS). mysqld_exporter's
    /// default collectors read them.
    InnodbCmp,
    /// INNODB_CMPMEM (see `InnodbCmp`).
    InnodbCmpMem,
    /// GLOBAL_VARIABLES: every system variable's global value. MySQL 5.7 and
    /// MariaDB have it (MySQL 8 moved it to `performance_schema`); tools and
    /// MariaDB's own test files still read it.
    GlobalVariables,
    /// SESSION_VARIABLES: every system variable's value in this session.
    SessionVariables,
    /// GLOBAL_STATUS: SHOW GLOBAL STATUS as a table.
    GlobalStatus,
    /// SESSION_STATUS: SHOW SESSION STATUS as a table.
    SessionStatus,
    /// A table of `performance_schema` (`crate::catalog::perfschema`), read
    /// through the same machinery.
    Perf(crate::catalog::perfschema::PerfTable),
}

/// Whether `db` names a system schema: `information_schema` or
/// `performance_schema`.
pub fn is_system_schema(db: &str) -> bool {
    is_info_schema(db)
        || crate::catalog::perfschema::is_perf_schema(db)
        || crate::catalog::perfschema::is_sys_schema(db)
}

/// The tables of system schema `db` (empty for any other database), in
/// SHOW TABLES order.
pub fn system_tables(db: &str) -> Vec<SystemTable> {
    if is_info_schema(db) {
        SystemTable::ALL.to_vec()
    } else {
        crate::catalog::perfschema::PerfTable::tables_of(db)
            .iter()
            .map(|t| SystemTable::Perf(*t))
            .collect()
    }
}

/// The canonical name of system schema `db` (as SHOW DATABASES spells it).
pub fn system_schema_name(db: &str) -> Option<&'static str> {
    if is_info_schema(db) {
        Some(NAME)
    } else if crate::catalog::perfschema::is_perf_schema(db) {
        Some(crate::catalog::perfschema::NAME)
    } else if crate::catalog::perfschema::is_sys_schema(db) {
        Some(crate::catalog::perfschema::SYS)
    } else {
        None
    }
}

/// The table `name` of system schema `db` (`None`: `db` has no such table,
/// or is no system schema).
pub fn lookup_in(db: &str, name: &str) -> Option<SystemTable> {
    if is_info_schema(db) {
        SystemTable::lookup(name)
    } else {
        crate::catalog::perfschema::PerfTable::lookup_in(db, name).map(SystemTable::Perf)
    }
}

use ExprKind::{DateTime as D, Int as I, String as S, UInt as U};

const SCHEMATA: &[(&str, ExprKind)] = &[
    ("CATALOG_NAME", S),
    ("SCHEMA_NAME", S),
    ("DEFAULT_CHARACTER_SET_NAME", S),
    ("DEFAULT_COLLATION_NAME", S),
    ("SQL_PATH", S),
    ("DEFAULT_ENCRYPTION", S),
];
const TABLES: &[(&str, ExprKind)] = &[
    ("TABLE_CATALOG", S),
    ("TABLE_SCHEMA", S),
    ("TABLE_NAME", S),
    ("TABLE_TYPE", S),
    ("ENGINE", S),
    ("VERSION", I),
    ("ROW_FORMAT", S),
    ("TABLE_ROWS", U),
    ("AVG_ROW_LENGTH", U),
    ("DATA_LENGTH", U),
    ("MAX_DATA_LENGTH", U),
    ("INDEX_LENGTH", U),
    ("DATA_FREE", U),
    ("AUTO_INCREMENT", U),
    ("CREATE_TIME", D),
    ("UPDATE_TIME", D),
    ("CHECK_TIME", D),
    ("TABLE_COLLATION", S),
    ("CHECKSUM", I),
    ("CREATE_OPTIONS", S),
    ("TABLE_COMMENT", S),
];
const COLUMNS: &[(&str, ExprKind)] = &[
    ("TABLE_CATALOG", S),
    ("TABLE_SCHEMA", S),
    ("TABLE_NAME", S),
    ("COLUMN_NAME", S),
    ("ORDINAL_POSITION", U),
    ("COLUMN_DEFAULT", S),
    ("IS_NULLABLE", S),
    ("DATA_TYPE", S),
    ("CHARACTER_MAXIMUM_LENGTH", I),
    ("CHARACTER_OCTET_LENGTH", I),
    ("NUMERIC_PRECISION", U),
    ("NUMERIC_SCALE", U),
    ("DATETIME_PRECISION", U),
    ("CHARACTER_SET_NAME", S),
    ("COLLATION_NAME", S),
    ("COLUMN_TYPE", S),
    ("COLUMN_KEY", S),
    ("EXTRA", S),
    ("PRIVILEGES", S),
    ("COLUMN_COMMENT", S),
    ("GENERATION_EXPRESSION", S),
    ("SRS_ID", U),
];
const STATISTICS: &[(&str, ExprKind)] = &[
    ("TABLE_CATALOG", S),
    ("TABLE_SCHEMA", S),
    ("TABLE_NAME", S),
    ("NON_UNIQUE", I),
    ("INDEX_SCHEMA", S),
    ("INDEX_NAME", S),
    ("SEQ_IN_INDEX", U),
    ("COLUMN_NAME", S),
    ("COLLATION", S),
    ("CARDINALITY", I),
    ("SUB_PART", I),
    ("PACKED", S),
    ("NULLABLE", S),
    ("INDEX_TYPE", S),
    ("COMMENT", S),
    ("INDEX_COMMENT", S),
    ("IS_VISIBLE", S),
    ("EXPRESSION", S),
];
const KEY_COLUMN_USAGE: &[(&str, ExprKind)] = &[
    ("CONSTRAINT_CATALOG", S),
    ("CONSTRAINT_SCHEMA", S),
    ("CONSTRAINT_NAME", S),
    ("TABLE_CATALOG", S),
    ("TABLE_SCHEMA", S),
    ("TABLE_NAME", S),
    ("COLUMN_NAME", S),
    ("ORDINAL_POSITION", U),
    ("POSITION_IN_UNIQUE_CONSTRAINT", U),
    ("REFERENCED_TABLE_SCHEMA", S),
    ("REFERENCED_TABLE_NAME", S),
    ("REFERENCED_COLUMN_NAME", S),
];
const TABLE_CONSTRAINTS: &[(&str, ExprKind)] = &[
    ("CONSTRAINT_CATALOG", S),
    ("CONSTRAINT_SCHEMA", S),
    ("CONSTRAINT_NAME", S),
    ("TABLE_SCHEMA", S),
    ("TABLE_NAME", S),
    ("CONSTRAINT_TYPE", S),
    ("ENFORCED", S),
];
const REFERENTIAL_CONSTRAINTS: &[(&str, ExprKind)] = &[
    ("CONSTRAINT_CATALOG", S),
    ("CONSTRAINT_SCHEMA", S),
    ("CONSTRAINT_NAME", S),
    ("UNIQUE_CONSTRAINT_CATALOG", S),
    ("UNIQUE_CONSTRAINT_SCHEMA", S),
    ("UNIQUE_CONSTRAINT_NAME", S),
    ("MATCH_OPTION", S),
    ("UPDATE_RULE", S),
    ("DELETE_RULE", S),
    ("TABLE_NAME", S),
    ("REFERENCED_TABLE_NAME", S),
];
const ENGINES: &[(&str, ExprKind)] = &[
    ("ENGINE", S),
    ("SUPPORT", S),
    ("COMMENT", S),
    ("TRANSACTIONS", S),
    ("XA", S),
    ("SAVEPOINTS", S),
];
const CHARACTER_SETS: &[(&str, ExprKind)] = &[
    ("CHARACTER_SET_NAME", S),
    ("DEFAULT_COLLATE_NAME", S),
    ("DESCRIPTION", S),
    ("MAXLEN", U),
];
const COLLATIONS: &[(&str, ExprKind)] = &[
    ("COLLATION_NAME", S),
    ("CHARACTER_SET_NAME", S),
    ("ID", U),
    ("IS_DEFAULT", S),
    ("IS_COMPILED", S),
    ("SORTLEN", U),
    ("PAD_ATTRIBUTE", S),
];
const PROCESSLIST: &[(&str, ExprKind)] = &[
    ("ID", U),
    ("USER", S),
    ("HOST", S),
    ("DB", S),
    ("COMMAND", S),
    ("TIME", I),
    ("STATE", S),
    ("INFO", S),
];
const ROUTINES: &[(&str, ExprKind)] = &[
    ("SPECIFIC_NAME", S),
    ("ROUTINE_CATALOG", S),
    ("ROUTINE_SCHEMA", S),
    ("ROUTINE_NAME", S),
    ("ROUTINE_TYPE", S),
    ("DATA_TYPE", S),
    ("CHARACTER_MAXIMUM_LENGTH", I),
    ("CHARACTER_OCTET_LENGTH", I),
    ("NUMERIC_PRECISION", U),
    ("NUMERIC_SCALE", U),
    ("DATETIME_PRECISION", U),
    ("CHARACTER_SET_NAME", S),
    ("COLLATION_NAME", S),
    ("DTD_IDENTIFIER", S),
    ("ROUTINE_BODY", S),
    ("ROUTINE_DEFINITION", S),
    ("EXTERNAL_NAME", S),
    ("EXTERNAL_LANGUAGE", S),
    ("PARAMETER_STYLE", S),
    ("IS_DETERMINISTIC", S),
    ("SQL_DATA_ACCESS", S),
    ("SQL_PATH", S),
    ("SECURITY_TYPE", S),
    ("CREATED", D),
    ("LAST_ALTERED", D),
    ("SQL_MODE", S),
    ("ROUTINE_COMMENT", S),
    ("DEFINER", S),
    ("CHARACTER_SET_CLIENT", S),
    ("COLLATION_CONNECTION", S),
    ("DATABASE_COLLATION", S),
];
const VIEWS: &[(&str, ExprKind)] = &[
    ("TABLE_CATALOG", S),
    ("TABLE_SCHEMA", S),
    ("TABLE_NAME", S),
    ("VIEW_DEFINITION", S),
    ("CHECK_OPTION", S),
    ("IS_UPDATABLE", S),
    ("DEFINER", S),
    ("SECURITY_TYPE", S),
    ("CHARACTER_SET_CLIENT", S),
    ("COLLATION_CONNECTION", S),
];
const TRIGGERS: &[(&str, ExprKind)] = &[
    ("TRIGGER_CATALOG", S),
    ("TRIGGER_SCHEMA", S),
    ("TRIGGER_NAME", S),
    ("EVENT_MANIPULATION", S),
    ("EVENT_OBJECT_CATALOG", S),
    ("EVENT_OBJECT_SCHEMA", S),
    ("EVENT_OBJECT_TABLE", S),
    ("ACTION_ORDER", U),
    ("ACTION_CONDITION", S),
    ("ACTION_STATEMENT", S),
    ("ACTION_ORIENTATION", S),
    ("ACTION_TIMING", S),
    ("ACTION_REFERENCE_OLD_TABLE", S),
    ("ACTION_REFERENCE_NEW_TABLE", S),
    ("ACTION_REFERENCE_OLD_ROW", S),
    ("ACTION_REFERENCE_NEW_ROW", S),
    ("CREATED", D),
    ("SQL_MODE", S),
    ("DEFINER", S),
    ("CHARACTER_SET_CLIENT", S),
    ("COLLATION_CONNECTION", S),
    ("DATABASE_COLLATION", S),
];
const PARTITIONS: &[(&str, ExprKind)] = &[
    ("TABLE_CATALOG", S),
    ("TABLE_SCHEMA", S),
    ("TABLE_NAME", S),
    ("PARTITION_NAME", S),
    ("SUBPARTITION_NAME", S),
    ("PARTITION_ORDINAL_POSITION", U),
    ("SUBPARTITION_ORDINAL_POSITION", U),
    ("PARTITION_METHOD", S),
    ("SUBPARTITION_METHOD", S),
    ("PARTITION_EXPRESSION", S),
    ("SUBPARTITION_EXPRESSION", S),
    ("PARTITION_DESCRIPTION", S),
    ("TABLE_ROWS", U),
    ("AVG_ROW_LENGTH", U),
    ("DATA_LENGTH", U),
    ("MAX_DATA_LENGTH", U),
    ("INDEX_LENGTH", U),
    ("DATA_FREE", U),
    ("CREATE_TIME", D),
    ("UPDATE_TIME", D),
    ("CHECK_TIME", D),
    ("CHECKSUM", I),
    ("PARTITION_COMMENT", S),
    ("NODEGROUP", S),
    ("TABLESPACE_NAME", S),
];
const EVENTS: &[(&str, ExprKind)] = &[
    ("EVENT_CATALOG", S),
    ("EVENT_SCHEMA", S),
    ("EVENT_NAME", S),
    ("DEFINER", S),
    ("TIME_ZONE", S),
    ("EVENT_BODY", S),
    ("EVENT_DEFINITION", S),
    ("EVENT_TYPE", S),
    ("EXECUTE_AT", D),
    ("INTERVAL_VALUE", S),
    ("INTERVAL_FIELD", S),
    ("SQL_MODE", S),
    ("STARTS", D),
    ("ENDS", D),
    ("STATUS", S),
    ("ON_COMPLETION", S),
    ("CREATED", D),
    ("LAST_ALTERED", D),
    ("LAST_EXECUTED", D),
    ("EVENT_COMMENT", S),
    ("ORIGINATOR", U),
    ("CHARACTER_SET_CLIENT", S),
    ("COLLATION_CONNECTION", S),
    ("DATABASE_COLLATION", S),
];
const FILES: &[(&str, ExprKind)] = &[
    ("FILE_ID", I),
    ("FILE_NAME", S),
    ("FILE_TYPE", S),
    ("TABLESPACE_NAME", S),
    ("TABLE_CATALOG", S),
    ("TABLE_SCHEMA", S),
    ("TABLE_NAME", S),
    ("LOGFILE_GROUP_NAME", S),
    ("LOGFILE_GROUP_NUMBER", I),
    ("ENGINE", S),
    ("FULLTEXT_KEYS", S),
    ("DELETED_ROWS", S),
    ("UPDATE_COUNT", S),
    ("FREE_EXTENTS", I),
    ("TOTAL_EXTENTS", I),
    ("EXTENT_SIZE", I),
    ("INITIAL_SIZE", I),
    ("MAXIMUM_SIZE", I),
    ("AUTOEXTEND_SIZE", I),
    ("CREATION_TIME", S),
    ("LAST_UPDATE_TIME", S),
    ("LAST_ACCESS_TIME", S),
    ("RECOVER_TIME", S),
    ("TRANSACTION_COUNTER", S),
    ("VERSION", I),
    ("ROW_FORMAT", S),
    ("TABLE_ROWS", S),
    ("AVG_ROW_LENGTH", S),
    ("DATA_LENGTH", S),
    ("MAX_DATA_LENGTH", S),
    ("INDEX_LENGTH", S),
    ("DATA_FREE", I),
    ("CREATE_TIME", S),
    ("UPDATE_TIME", S),
    ("CHECK_TIME", S),
    ("CHECKSUM", S),
    ("STATUS", S),
    ("EXTRA", S),
];
/// The shape of GLOBAL_VARIABLES, SESSION_VARIABLES, GLOBAL_STATUS and
/// SESSION_STATUS (names upper-case, values as text, as MariaDB shows them).
const NAME_VALUE: &[(&str, ExprKind)] = &[("VARIABLE_NAME", S), ("VARIABLE_VALUE", S)];
const INNODB_CMP: &[(&str, ExprKind)] = &[
    ("PAGE_SIZE", U),
    ("COMPRESS_OPS", U),
    ("COMPRESS_OPS_OK", U),
    ("COMPRESS_TIME", U),
    ("UNCOMPRESS_OPS", U),
    ("UNCOMPRESS_TIME", U),
];
const INNODB_CMPMEM: &[(&str, ExprKind)] = &[
    ("PAGE_SIZE", U),
    ("BUFFER_POOL_INSTANCE", U),
    ("PAGES_USED", U),
    ("PAGES_FREE", U),
    ("RELOCATION_OPS", U),
    ("RELOCATION_TIME", U),
];
/// The compressed page sizes InnoDB reports a row for.
const COMPRESSED_PAGE_SIZES: [u64; 5] = [1024, 2048, 4096, 8192, 16384];
const PLUGINS: &[(&str, ExprKind)] = &[
    ("PLUGIN_NAME", S),
    ("PLUGIN_VERSION", S),
    ("PLUGIN_STATUS", S),
    ("PLUGIN_TYPE", S),
    ("PLUGIN_TYPE_VERSION", S),
    ("PLUGIN_LIBRARY", S),
    ("PLUGIN_LIBRARY_VERSION", S),
    ("PLUGIN_AUTHOR", S),
    ("PLUGIN_DESCRIPTION", S),
    ("PLUGIN_LICENSE", S),
    ("LOAD_OPTION", S),
];

impl SystemTable {
    /// Every table, in SHOW TABLES order.
    pub const ALL: &'static [SystemTable] = &[
        SystemTable::CharacterSets,
        SystemTable::Collations,
        SystemTable::Columns,
        SystemTable::Engines,
        SystemTable::Events,
        SystemTable::Files,
        SystemTable::GlobalStatus,
        SystemTable::GlobalVariables,
        SystemTable::InnodbCmp,
        SystemTable::InnodbCmpMem,
        SystemTable::KeyColumnUsage,
        SystemTable::Partitions,
        SystemTable::Plugins,
        SystemTable::Processlist,
        SystemTable::ReferentialConstraints,
        SystemTable::Routines,
        SystemTable::Schemata,
        SystemTable::SessionStatus,
        SystemTable::SessionVariables,
        SystemTable::Statistics,
        SystemTable::TableConstraints,
        SystemTable::Tables,
        SystemTable::Triggers,
        SystemTable::Views,
    ];

    /// The table's name (upper case, as MySQL 8 shows it).
    pub fn name(self) -> &'static str {
        match self {
            SystemTable::Schemata => "SCHEMATA",
            SystemTable::Tables => "TABLES",
            SystemTable::Columns => "COLUMNS",
            SystemTable::Statistics => "STATISTICS",
            SystemTable::KeyColumnUsage => "KEY_COLUMN_USAGE",
            SystemTable::TableConstraints => "TABLE_CONSTRAINTS",
            SystemTable::ReferentialConstraints => "REFERENTIAL_CONSTRAINTS",
            SystemTable::Engines => "ENGINES",
            SystemTable::CharacterSets => "CHARACTER_SETS",
            SystemTable::Collations => "COLLATIONS",
            SystemTable::Processlist => "PROCESSLIST",
            SystemTable::Routines => "ROUTINES",
            SystemTable::Views => "VIEWS",
            SystemTable::Triggers => "TRIGGERS",
            SystemTable::Partitions => "PARTITIONS",
            SystemTable::Events => "EVENTS",
            SystemTable::Plugins => "PLUGINS",
            SystemTable::Files => "FILES",
            SystemTable::InnodbCmp => "INNODB_CMP",
            SystemTable::InnodbCmpMem => "INNODB_CMPMEM",
            SystemTable::GlobalVariables => "GLOBAL_VARIABLES",
            SystemTable::SessionVariables => "SESSION_VARIABLES",
            SystemTable::GlobalStatus => "GLOBAL_STATUS",
            SystemTable::SessionStatus => "SESSION_STATUS",
            SystemTable::Perf(t) => t.name(),
        }
    }

    /// The schema the table belongs to.
    pub fn schema(self) -> &'static str {
        match self {
            SystemTable::Perf(t) => t.schema(),
            _ => NAME,
        }
    }

    /// Looks a table up by name (case-insensitive, as MySQL does for
    /// `information_schema`).
    pub fn lookup(name: &str) -> Option<SystemTable> {
        Self::ALL
            .iter()
            .copied()
            .find(|t| t.name().eq_ignore_ascii_case(name))
    }

    /// Column names and kinds.
    pub fn columns(self) -> &'static [(&'static str, ExprKind)] {
        match self {
            SystemTable::Schemata => SCHEMATA,
            SystemTable::Tables => TABLES,
            SystemTable::Columns => COLUMNS,
            SystemTable::Statistics => STATISTICS,
            SystemTable::KeyColumnUsage => KEY_COLUMN_USAGE,
            SystemTable::TableConstraints => TABLE_CONSTRAINTS,
            SystemTable::ReferentialConstraints => REFERENTIAL_CONSTRAINTS,
            SystemTable::Engines => ENGINES,
            SystemTable::CharacterSets => CHARACTER_SETS,
            SystemTable::Collations => COLLATIONS,
            SystemTable::Processlist => PROCESSLIST,
            SystemTable::Routines => ROUTINES,
            SystemTable::Views => VIEWS,
            SystemTable::Triggers => TRIGGERS,
            SystemTable::Partitions => PARTITIONS,
            SystemTable::Events => EVENTS,
            SystemTable::Plugins => PLUGINS,
            SystemTable::Files => FILES,
            SystemTable::InnodbCmp => INNODB_CMP,
            SystemTable::InnodbCmpMem => INNODB_CMPMEM,
            SystemTable::GlobalVariables
            | SystemTable::SessionVariables
            | SystemTable::GlobalStatus
            | SystemTable::SessionStatus => NAME_VALUE,
            SystemTable::Perf(t) => t.columns(),
        }
    }

    /// The collation of the table's string columns. MySQL 8 gives
    /// information_schema's text columns utf8mb3_general_ci, except where
    /// they name objects the file system names (databases, tables), which
    /// compare as that does: case-sensitively on Linux. Canyon compares every
    /// name column bytewise, and PROCESSLIST's columns (statement text,
    /// state, user) case-insensitively: tools find a statement there with
    /// `INFO LIKE '%rename%'` (Vitess' Online DDL cut-over).
    pub fn string_collation(self) -> crate::types::collation::Collation {
        use crate::types::collation::Collation;
        match self {
            SystemTable::Processlist => Collation::Utf8mb3GeneralCi,
            _ => Collation::Utf8mb4_0900Bin,
        }
    }

    /// The positions of the (schema, table name) columns a filter may be
    /// pushed into the generator on.
    pub fn key_columns(self) -> (Option<usize>, Option<usize>) {
        match self {
            SystemTable::Schemata => (Some(1), None),
            SystemTable::Tables
            | SystemTable::Columns
            | SystemTable::Statistics
            | SystemTable::Partitions
            | SystemTable::Views => (Some(1), Some(2)),
            SystemTable::KeyColumnUsage => (Some(4), Some(5)),
            SystemTable::TableConstraints => (Some(3), Some(4)),
            _ => (None, None),
        }
    }
}

/// The pushed filters, evaluated for one execution.
#[derive(Debug, Clone, Default)]
pub struct Pushed {
    /// Allowed schema names (`None`: any).
    pub schemas: Option<Vec<String>>,
    /// Allowed table names (`None`: any).
    pub names: Option<Vec<String>>,
}

/// One session as the generator sees it.
#[derive(Debug, Clone)]
pub struct ProcessRow {
    /// Connection id.
    pub id: u32,
    /// User.
    pub user: String,
    /// Host.
    pub host: String,
    /// Current database.
    pub db: Option<String>,
    /// Query or Sleep.
    pub running: bool,
    /// Seconds in the current state.
    pub time: i64,
    /// The statement text (whole).
    pub info: String,
}

/// What the generator reads.
pub struct GenCtx<'a> {
    /// The catalog snapshot.
    pub catalog: &'a Catalog,
    /// The account (privilege filter); `None` sees nothing but
    /// `information_schema`.
    pub account: Option<&'a UserDef>,
    /// The row locks held and awaited now (performance_schema.data_locks).
    pub locks: &'a dyn Fn() -> Vec<canyon_txn::HeldLock>,
    /// The process registry (performance_schema's per-thread statistics).
    pub registry: &'a crate::catalog::procs::ProcessList,
    /// The engine's table locks (`performance_schema.metadata_locks`).
    pub table_locks: &'a crate::catalog::table_locks::TableLocks,
    /// The sessions PROCESSLIST may show (already filtered by privilege).
    pub processes: &'a dyn Fn() -> Vec<ProcessRow>,
    /// The (name, value) pairs of the system variables (`true`: global
    /// values) or of the status counters (see [`Settings`]).
    pub settings: &'a dyn Fn(Settings) -> Vec<(String, String)>,
    /// COLUMN_TYPE shows integer display widths (`int(11)`; see
    /// `EngineConfig::display_widths`).
    pub display_widths: bool,
    /// The session's time zone: a TIMESTAMP's literal default (an instant)
    /// shows in it.
    pub time_zone: crate::types::timezone::Zone,
}

/// Which name/value list [`GenCtx::settings`] is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settings {
    /// System variables; `true`: the global values, `false`: the session's.
    Variables(bool),
    /// Status counters; `true`: global, `false`: the session's.
    Status(bool),
}

fn s(x: &str) -> Value {
    Value::str(x)
}

fn u(x: u64) -> Value {
    Value::UInt(x)
}

/// The `(database, table)` pairs to visit, honouring the pushed filters and
/// the account's privileges, in (database, table) order.
fn visible_tables<'c>(g: &GenCtx<'c>, p: &Pushed) -> Vec<(&'c str, &'c Arc<Table>)> {
    let mut out = Vec::new();
    let dbs: Vec<&'c str> = match &p.schemas {
        Some(list) => {
            let mut v: Vec<&str> = list
                .iter()
                .filter_map(|d| g.catalog.databases.get_key_value(d.as_str()))
                .map(|(k, _)| k.as_str())
                .collect();
            v.sort_unstable();
            v.dedup();
            v
        }
        None => g.catalog.databases.keys().map(String::as_str).collect(),
    };
    for db in dbs {
        if !g.account.is_some_and(|a| a.can_use_db(db)) {
            continue;
        }
        let Some(d) = g.catalog.databases.get(db) else {
            continue;
        };
        match &p.names {
            Some(names) => {
                let mut hits: Vec<(&str, &Arc<Table>)> = names
                    .iter()
                    .filter_map(|n| d.tables.get_key_value(n.as_str()))
                    .map(|(k, t)| (k.as_str(), t))
                    .collect();
                hits.sort_unstable_by(|a, b| a.0.cmp(b.0));
                hits.dedup_by(|a, b| a.0 == b.0);
                out.extend(hits.into_iter().map(|(_, t)| (db, t)));
            }
            None => out.extend(d.tables.values().map(|t| (db, t))),
        }
    }
    out
}

/// Whether `information_schema`'s own tables pass the pushed filters; the
/// matching system tables.
fn visible_system_tables(p: &Pushed) -> Vec<SystemTable> {
    let mut all = Vec::new();
    for db in [
        NAME,
        crate::catalog::perfschema::NAME,
        crate::catalog::perfschema::SYS,
    ] {
        if p.schemas
            .as_ref()
            .is_none_or(|l| l.iter().any(|d| d.eq_ignore_ascii_case(db)))
        {
            all.extend(system_tables(db));
        }
    }
    all.into_iter()
        .filter(|t| {
            p.names
                .as_ref()
                .is_none_or(|l| l.iter().any(|n| n.as_str() == t.name()))
        })
        .collect()
}

/// `DATA_TYPE`, `CHARACTER_MAXIMUM_LENGTH`, `CHARACTER_OCTET_LENGTH`,
/// `NUMERIC_PRECISION`, `NUMERIC_SCALE`, `DATETIME_PRECISION` of a column type,
/// as MySQL 8 reports them (utf8mb4: 4 bytes per character).
pub(crate) fn type_facts(ty: SqlType) -> (String, Value, Value, Value, Value, Value) {
    let null = Value::Null;
    let name = ty.sql_name();
    let base = name
        .split(['(', ' '])
        .next()
        .unwrap_or_default()
        .to_string();
    let chars = |n: u32, bytes_per: i64| (Value::Int(n as i64), Value::Int(n as i64 * bytes_per));
    match ty {
        SqlType::TinyInt { .. } => (base, null.clone(), null.clone(), u(3), u(0), null),
        SqlType::SmallInt { .. } => (base, null.clone(), null.clone(), u(5), u(0), null),
        SqlType::MediumInt { .. } => (base, null.clone(), null.clone(), u(7), u(0), null),
        SqlType::Int { .. } => (base, null.clone(), null.clone(), u(10), u(0), null),
        SqlType::BigInt { unsigned } => (
            base,
            null.clone(),
            null.clone(),
            u(if unsigned { 20 } else { 19 }),
            u(0),
            null,
        ),
        SqlType::Float { digits, .. } | SqlType::Double { digits, .. } => {
            let (p, s) = match digits {
                Some((m, d)) => (u(m as u64), u(d as u64)),
                None => (
                    u(if matches!(ty, SqlType::Float { .. }) {
                        12
                    } else {
                        22
                    }),
                    null.clone(),
                ),
            };
            (base, null.clone(), null.clone(), p, s, null)
        }
        SqlType::Decimal {
            precision, scale, ..
        } => (
            base,
            null.clone(),
            null.clone(),
            u(precision as u64),
            u(scale as u64),
            null,
        ),
        SqlType::Char(n) | SqlType::VarChar(n) => {
            let (c, o) = chars(n, 4);
            (base, c, o, null.clone(), null.clone(), null)
        }
        SqlType::Binary(n) | SqlType::VarBinary(n) | SqlType::Blob(n) => {
            let (c, o) = chars(n, 1);
            (base, c, o, null.clone(), null.clone(), null)
        }
        // The longest value: ENUM's longest member, SET's members and commas.
        SqlType::Enum(m) => {
            let (c, o) = chars(m.max_chars(crate::types::enumset::Kind::Enum), 4);
            (base, c, o, null.clone(), null.clone(), null)
        }
        SqlType::Set(m) => {
            let (c, o) = chars(m.max_chars(crate::types::enumset::Kind::Set), 4);
            (base, c, o, null.clone(), null.clone(), null)
        }
        // MySQL: no lengths for JSON.
        SqlType::Json => (
            base,
            null.clone(),
            null.clone(),
            null.clone(),
            null.clone(),
            null,
        ),
        SqlType::Text(n) => {
            // A TEXT column's limit is in bytes; MySQL reports it as both.
            let (c, o) = chars(n, 1);
            (base, c, o, null.clone(), null.clone(), null)
        }
        SqlType::Date => (
            base,
            null.clone(),
            null.clone(),
            null.clone(),
            null.clone(),
            null,
        ),
        SqlType::DateTime(f) | SqlType::Timestamp(f) | SqlType::Time(f) => (
            base,
            null.clone(),
            null.clone(),
            null.clone(),
            null.clone(),
            u(u64::from(f)),
        ),
        SqlType::Bit(n) => (
            base,
            null.clone(),
            null.clone(),
            u(n as u64),
            null.clone(),
            null,
        ),
        SqlType::Year => (
            base,
            null.clone(),
            null.clone(),
            null.clone(),
            null.clone(),
            null,
        ),
    }
}

/// COLUMN_KEY of column `i`, as DESCRIBE's Key column.
pub fn column_key(t: &Table, i: usize) -> &'static str {
    let def = &t.def;
    if def.primary_key.contains(&i) {
        "PRI"
    } else if def
        .indexes
        .iter()
        .any(|x| x.unique && x.columns.len() == 1 && x.columns[0] == i)
    {
        "UNI"
    } else if def.indexes.iter().any(|x| x.columns.first() == Some(&i)) {
        "MUL"
    } else {
        ""
    }
}

/// One key of a table, as the information_schema tables list it.
struct KeyOf<'a> {
    name: &'a str,
    unique: bool,
    columns: &'a [usize],
    /// The index id, for statistics (`None`: the primary key).
    id: Option<canyon_txn::IndexId>,
    /// What the definition declared (`None`: the primary key).
    attrs: Option<&'a crate::catalog::IndexAttrs>,
}

/// The keys of a table, primary key first.
fn keys_of(t: &Table) -> Vec<KeyOf<'_>> {
    let mut keys = Vec::new();
    if !t.def.primary_key.is_empty() {
        keys.push(KeyOf {
            name: "PRIMARY",
            unique: true,
            columns: &t.def.primary_key,
            id: None,
            attrs: None,
        });
    }
    for x in &t.def.indexes {
        keys.push(KeyOf {
            name: &x.name,
            unique: x.unique,
            columns: &x.columns,
            id: Some(x.id),
            attrs: Some(&x.attrs),
        });
    }
    keys
}

/// The TABLES row of a base table (also SHOW TABLE STATUS's source);
/// times as a session in `zone` reads them.
pub fn tables_row(db: &str, t: &Table, zone: &crate::types::timezone::Zone) -> Vec<Value> {
    let rows = t.stats.rows().unwrap_or(0.0).round() as u64;
    let auto_inc = match t.auto_increment_column() {
        Some(_) => u(t
            .auto_increment
            .load(std::sync::atomic::Ordering::Relaxed)
            .saturating_add(1)),
        None => Value::Null,
    };
    vec![
        s("def"),
        s(db),
        s(&t.def.name),
        s("BASE TABLE"),
        s(t.def.engine.as_deref().unwrap_or("InnoDB")),
        Value::Int(10),
        s("Dynamic"),
        u(rows),
        u(0),
        u(16384),
        u(0),
        u(16384 * t.def.indexes.len() as u64),
        u(0),
        auto_inc,
        created_time(t.def.created, zone),
        Value::Null,
        Value::Null,
        s(t.def.default_collation.name()),
        Value::Null,
        // CREATE_OPTIONS: MySQL names partitioned tables so.
        s(if t.def.partitioning.is_some() {
            "partitioned"
        } else {
            ""
        }),
        s(&t.def.comment),
    ]
}

/// CREATE_TIME: `created` (seconds since the epoch; 0 unknown) as a
/// session in `zone` reads it.
fn created_time(created: u64, zone: &crate::types::timezone::Zone) -> Value {
    match chrono::DateTime::from_timestamp(created as i64, 0) {
        Some(utc) if created > 0 => {
            Value::Stamp(crate::types::timezone::localize(utc.naive_utc(), zone))
        }
        _ => Value::Null,
    }
}

/// The rows of `table` under the pushed filters.
pub fn generate(table: SystemTable, p: &Pushed, g: &GenCtx<'_>) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    match table {
        SystemTable::Schemata => schemata_rows(p, g, &mut out),
        SystemTable::Tables => {
            for st in visible_system_tables(p) {
                let mut r = vec![Value::Null; TABLES.len()];
                r[0] = s("def");
                r[1] = s(st.schema());
                r[2] = s(st.name());
                if let SystemTable::Perf(t) = st {
                    if t.schema() == crate::catalog::perfschema::SYS {
                        // sys's objects are views in MySQL.
                        r[3] = s("VIEW");
                        out.push(r);
                        continue;
                    }
                    // MySQL 8: performance_schema's are tables of their own engine.
                    r[3] = s("BASE TABLE");
                    r[4] = s("PERFORMANCE_SCHEMA");
                    r[6] = s("Fixed");
                    r[17] = s("utf8mb4_0900_ai_ci");
                } else {
                    r[3] = s("SYSTEM VIEW");
                }
                r[5] = Value::Int(10);
                r[19] = s("");
                r[20] = s("");
                out.push(r);
            }
            for (db, t) in visible_tables(g, p) {
                out.push(tables_row(db, t, &g.time_zone));
            }
            crate::catalog::view::tables_rows(p, g, TABLES.len(), &mut out);
        }
        SystemTable::Columns => {
            columns_rows(p, g, &mut out);
            crate::catalog::view::columns_rows(p, g, &mut out);
        }
        SystemTable::Statistics => statistics_rows(p, g, &mut out),
        SystemTable::KeyColumnUsage => key_column_usage_rows(p, g, &mut out),
        SystemTable::TableConstraints => table_constraints_rows(p, g, &mut out),
        SystemTable::ReferentialConstraints => referential_constraints_rows(p, g, &mut out),
        SystemTable::Partitions => {
            for (db, t) in visible_tables(g, p) {
                let tr = tables_row(db, t, &g.time_zone);
                let mut r = vec![Value::Null; PARTITIONS.len()];
                r[0] = s("def");
                r[1] = s(db);
                r[2] = s(&t.def.name);
                // TABLE_ROWS .. DATA_FREE as in TABLES.
                r[12..18].clone_from_slice(&tr[7..13]);
                r[21] = Value::Null;
                r[22] = s("");
                r[23] = s("");
                match &t.def.partitioning {
                    Some(part) => out.extend(crate::catalog::partition::partitions_rows(part, &r)),
                    None => out.push(r),
                }
            }
        }
        SystemTable::Engines => {
            out.extend(crate::catalog::engine_rows().map(|r| r.iter().map(|x| s(x)).collect()))
        }
        SystemTable::CharacterSets => {
            for (cs, coll, desc, len) in crate::types::collation::CHARSETS {
                out.push(vec![s(cs), s(coll.name()), s(desc), u(*len as u64)]);
            }
        }
        SystemTable::Collations => {
            for c in crate::types::collation::Collation::ALL {
                out.push(vec![
                    s(c.name()),
                    s(c.charset()),
                    u(c.id() as u64),
                    s(if c.is_default() { "Yes" } else { "" }),
                    s("Yes"),
                    u(1),
                    s(if c.pad_space() { "PAD SPACE" } else { "NO PAD" }),
                ]);
            }
        }
        SystemTable::Processlist => {
            for p in (g.processes)() {
                out.push(vec![
                    u(p.id as u64),
                    s(&p.user),
                    s(&p.host),
                    p.db.as_deref().map_or(Value::Null, s),
                    s(if p.running { "Query" } else { "Sleep" }),
                    Value::Int(p.time),
                    s(if p.running { "executing" } else { "" }),
                    if p.running { s(&p.info) } else { Value::Null },
                ]);
            }
        }
        SystemTable::Plugins => {
            for (name, ty, desc, lic) in [
                (
                    "InnoDB",
                    "STORAGE ENGINE",
                    "Canyon's MVCC on RocksDB",
                    "GPL",
                ),
                (
                    "mysql_native_password",
                    "AUTHENTICATION",
                    "Native MySQL authentication",
                    "GPL",
                ),
            ] {
                out.push(vec![
                    s(name),
                    s("1.0"),
                    s("ACTIVE"),
                    s(ty),
                    s("80036.0"),
                    Value::Null,
                    Value::Null,
                    s("Canyon"),
                    s(desc),
                    s(lic),
                    s("FORCE"),
                ]);
            }
        }
        SystemTable::GlobalVariables
        | SystemTable::SessionVariables
        | SystemTable::GlobalStatus
        | SystemTable::SessionStatus => {
            let which = match table {
                SystemTable::GlobalVariables => Settings::Variables(true),
                SystemTable::SessionVariables => Settings::Variables(false),
                SystemTable::GlobalStatus => Settings::Status(true),
                _ => Settings::Status(false),
            };
            for (name, value) in (g.settings)(which) {
                out.push(vec![s(&name.to_ascii_uppercase()), s(&value)]);
            }
        }
        SystemTable::Views => crate::catalog::view::views_rows(p, g, &mut out),
        SystemTable::Routines => crate::catalog::routines::routine_rows(g, &mut out),
        SystemTable::Triggers => crate::catalog::routines::trigger_rows(g, &mut out),
        SystemTable::Events | SystemTable::Files => {}
        SystemTable::InnodbCmp => {
            for size in COMPRESSED_PAGE_SIZES {
                out.push(vec![u(size), u(0), u(0), u(0), u(0), u(0)]);
            }
        }
        SystemTable::InnodbCmpMem => {
            for size in COMPRESSED_PAGE_SIZES {
                out.push(vec![u(size), u(0), u(0), u(0), u(0), u(0)]);
            }
        }
        SystemTable::Perf(t) => crate::catalog::perfschema::tables::generate(t, g, &mut out),
    }
    debug_assert!(
        out.iter().all(|r| r.len() == table.columns().len()),
        "every generated row of {} has the table's width",
        table.name()
    );
    out
}

/// The rows of `information_schema.SCHEMATA`.
fn schemata_rows(p: &Pushed, g: &GenCtx<'_>, out: &mut Vec<Vec<Value>>) {
    let mut names: Vec<&str> = vec![
        NAME,
        crate::catalog::perfschema::NAME,
        crate::catalog::perfschema::SYS,
    ];
    names.extend(
        g.catalog
            .databases
            .keys()
            .map(String::as_str)
            .filter(|d| g.account.is_some_and(|a| a.can_use_db(d))),
    );
    names.sort_unstable();
    for d in names {
        if p.schemas
            .as_ref()
            .is_some_and(|l| !l.iter().any(|x| x == d))
        {
            continue;
        }
        let coll = match g.catalog.databases.get(d) {
            Some(db) => db.default_collation,
            None => crate::types::collation::Collation::Utf8mb3GeneralCi, // information_schema
        };
        out.push(vec![
            s("def"),
            s(d),
            s(coll.charset()),
            s(coll.name()),
            Value::Null,
            s("NO"),
        ]);
    }
}

/// The rows of `information_schema.COLUMNS`.
fn columns_rows(p: &Pushed, g: &GenCtx<'_>, out: &mut Vec<Vec<Value>>) {
    for st in visible_system_tables(p) {
        for (i, (c, kind)) in st.columns().iter().enumerate() {
            let (dt, ct) = match kind {
                ExprKind::UInt => ("bigint", "bigint unsigned"),
                ExprKind::Int => ("bigint", "bigint"),
                ExprKind::DateTime => ("datetime", "datetime"),
                _ => ("varchar", "varchar(64)"),
            };
            let is_str = dt == "varchar";
            out.push(vec![
                s("def"),
                s(st.schema()),
                s(st.name()),
                s(c),
                u(i as u64 + 1),
                Value::Null,
                s("YES"),
                s(dt),
                if is_str { Value::Int(64) } else { Value::Null },
                if is_str { Value::Int(192) } else { Value::Null },
                if dt == "bigint" {
                    u(19 + ct.ends_with("unsigned") as u64)
                } else {
                    Value::Null
                },
                if dt == "bigint" { u(0) } else { Value::Null },
                if dt == "datetime" { u(0) } else { Value::Null },
                if is_str { s("utf8mb3") } else { Value::Null },
                if is_str {
                    s("utf8mb3_general_ci")
                } else {
                    Value::Null
                },
                s(ct),
                s(""),
                s(""),
                s("select"),
                s(""),
                s(""),
                Value::Null,
            ]);
        }
    }
    for (db, t) in visible_tables(g, p) {
        for (i, c) in t.def.columns.iter().enumerate() {
            let (dt, maxlen, octets, prec, scale, dtprec) = type_facts(c.ty);
            let textual = c.ty.is_string() && !c.ty.is_binary();
            let default = match &c.default {
                None | Some(DefaultValue::Null) => Value::Null,
                Some(DefaultValue::Literal(v)) => {
                    s(&crate::catalog::shown_literal_default(c, v, &g.time_zone))
                }
                Some(DefaultValue::Number(v)) => s(v),
                Some(DefaultValue::CurrentTimestamp) => s(&c.ty.current_timestamp_name()),
            };
            let extra = match (c.auto_increment, &c.default, c.attrs.on_update_now) {
                // A generated column has none of the others (1221).
                _ if c.attrs.generated.as_ref().is_some_and(|g| g.stored) => "STORED GENERATED",
                _ if c.attrs.generated.is_some() => "VIRTUAL GENERATED",
                (true, _, _) => "auto_increment",
                (_, Some(DefaultValue::CurrentTimestamp), true) => {
                    "DEFAULT_GENERATED on update CURRENT_TIMESTAMP"
                }
                (_, Some(DefaultValue::CurrentTimestamp), false) => "DEFAULT_GENERATED",
                (_, _, true) => "on update CURRENT_TIMESTAMP",
                _ => "",
            };
            out.push(vec![
                s("def"),
                s(db),
                s(&t.def.name),
                s(&c.name),
                u(i as u64 + 1),
                default,
                s(if c.nullable { "YES" } else { "NO" }),
                s(&dt),
                maxlen,
                octets,
                prec,
                scale,
                dtprec,
                if textual {
                    s(c.collation.charset())
                } else {
                    Value::Null
                },
                if textual {
                    s(c.collation.name())
                } else {
                    Value::Null
                },
                s(&c.type_name(g.display_widths)),
                s(column_key(t, i)),
                s(extra),
                s("select,insert,update,references"),
                s(&c.attrs.comment),
                s(c.attrs.generated.as_ref().map_or("", |g| g.expr.as_str())),
                Value::Null,
            ]);
        }
    }
}

/// The rows of `information_schema.STATISTICS`.
fn statistics_rows(p: &Pushed, g: &GenCtx<'_>, out: &mut Vec<Vec<Value>>) {
    for (db, t) in visible_tables(g, p) {
        for k in keys_of(t) {
            let attrs = k.attrs.cloned().unwrap_or_default();
            for (seq, &c) in k.columns.iter().enumerate() {
                let col = &t.def.columns[c];
                let card = t.stats.n_diff(k.id, seq + 1);
                out.push(vec![
                    s("def"),
                    s(db),
                    s(&t.def.name),
                    Value::Int(!k.unique as i64),
                    s(db),
                    s(k.name),
                    u(seq as u64 + 1),
                    s(&col.name),
                    // A FULLTEXT index has no order and no statistics.
                    if attrs.fulltext {
                        Value::Null
                    } else {
                        s(if attrs.desc(seq) { "D" } else { "A" })
                    },
                    card.filter(|_| !attrs.fulltext)
                        .map_or(Value::Null, |c| Value::Int(c.round() as i64)),
                    attrs.prefix(seq).map_or(Value::Null, |n| u(n.into())),
                    Value::Null,
                    s(if col.nullable { "YES" } else { "" }),
                    s(if attrs.fulltext { "FULLTEXT" } else { "BTREE" }),
                    s(""),
                    s(&attrs.comment),
                    s("YES"),
                    Value::Null,
                ]);
            }
        }
    }
}

/// The rows of `information_schema.KEY_COLUMN_USAGE`.
fn key_column_usage_rows(p: &Pushed, g: &GenCtx<'_>, out: &mut Vec<Vec<Value>>) {
    for (db, t) in visible_tables(g, p) {
        for k in keys_of(t) {
            let (name, cols) = (k.name, k.columns);
            if !k.unique {
                continue;
            }
            for (seq, &c) in cols.iter().enumerate() {
                out.push(vec![
                    s("def"),
                    s(db),
                    s(name),
                    s("def"),
                    s(db),
                    s(&t.def.name),
                    s(&t.def.columns[c].name),
                    u(seq as u64 + 1),
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                ]);
            }
        }
        for fk in &t.def.foreign_keys {
            for (seq, (&c, rc)) in fk.columns.iter().zip(&fk.ref_columns).enumerate() {
                out.push(vec![
                    s("def"),
                    s(db),
                    s(&fk.name),
                    s("def"),
                    s(db),
                    s(&t.def.name),
                    s(&t.def.columns[c].name),
                    u(seq as u64 + 1),
                    u(seq as u64 + 1),
                    s(&fk.ref_db),
                    s(&fk.ref_table),
                    s(rc),
                ]);
            }
        }
    }
}

/// The rows of `information_schema.TABLE_CONSTRAINTS`.
fn table_constraints_rows(p: &Pushed, g: &GenCtx<'_>, out: &mut Vec<Vec<Value>>) {
    for (db, t) in visible_tables(g, p) {
        for k in keys_of(t) {
            let (name, id) = (k.name, k.id);
            if !k.unique {
                continue;
            }
            out.push(vec![
                s("def"),
                s(db),
                s(name),
                s(db),
                s(&t.def.name),
                s(if id.is_none() {
                    "PRIMARY KEY"
                } else {
                    "UNIQUE"
                }),
                s("YES"),
            ]);
        }
        for fk in &t.def.foreign_keys {
            out.push(vec![
                s("def"),
                s(db),
                s(&fk.name),
                s(db),
                s(&t.def.name),
                s("FOREIGN KEY"),
                s("YES"),
            ]);
        }
    }
}

/// The rows of `information_schema.REFERENTIAL_CONSTRAINTS`.
fn referential_constraints_rows(p: &Pushed, g: &GenCtx<'_>, out: &mut Vec<Vec<Value>>) {
    for (db, t) in visible_tables(g, p) {
        for fk in &t.def.foreign_keys {
            // The parent's key the constraint leans on: PRIMARY or a
            // UNIQUE index on exactly the referenced columns (NULL
            // for a plain index, as in MySQL).
            let unique_name = g.catalog.table(&fk.ref_db, &fk.ref_table).and_then(|pt| {
                let refs: Option<Vec<usize>> =
                    fk.ref_columns.iter().map(|c| pt.column(c)).collect();
                let refs = refs?;
                if pt.def.primary_key == refs {
                    return Some("PRIMARY".to_string());
                }
                pt.def
                    .indexes
                    .iter()
                    .find(|i| i.unique && i.columns == refs)
                    .map(|i| i.name.clone())
            });
            out.push(vec![
                s("def"),
                s(db),
                s(&fk.name),
                s("def"),
                s(&fk.ref_db),
                unique_name.as_deref().map_or(Value::Null, s),
                s("NONE"),
                s(fk.on_update.sql()),
                s(fk.on_delete.sql()),
                s(&t.def.name),
                s(&fk.ref_table),
            ]);
        }
    }
}
