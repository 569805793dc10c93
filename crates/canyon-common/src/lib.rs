//! Canyon's one error type, shared by every layer.
//!
//! Variants are grouped by **how the caller reacts** (STYLE.md rule 10):
//!
//! | group | caller's reaction | examples |
//! |---|---|---|
//! | transaction aborted | retry the transaction (sysbench does for 1213/1205) | [`Error::Deadlock`], [`Error::LockWaitTimeout`] |
//! | invalid input | fix the statement; the session and transaction go on | [`Error::Syntax`], [`Error::UnknownTable`], [`Error::DuplicateEntry`] |
//! | access | authenticate or ask for a grant | [`Error::AccessDenied`], [`Error::DbAccessDenied`] |
//! | unsupported | use another statement; never a silent OK | [`Error::Unsupported`] |
//! | resource limits | back off | [`Error::TooManyConnections`], [`Error::PacketTooLarge`] |
//! | invalid data / IO | the server cannot go on safely with this object | [`Error::Io`], [`Error::Corrupt`] |
//!
//! The mapping to MySQL's (error number, SQLSTATE, message) lives in exactly one
//! function at the protocol edge (`canyon_server::protocol::errors`). Each variant's
//! doc names the MySQL error it becomes, so the two stay easy to check side by side.
//!
//! What this crate does not do: it does not know about packets or clients, and it
//! does not log. Panics are reserved for broken invariants; every condition a client
//! or the disk can cause is a value of [`Error`].

use std::fmt;

/// The result type of every fallible Canyon operation.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Most tables one query block may join, as in MySQL (61): the planner's work
/// grows with the square of the count.
pub const MAX_JOIN_TABLES: usize = 61;

/// Most elements one WITH clause may define. MariaDB refuses more than 64
/// (error 4003); MySQL 8 sets no limit. Canyon plans a CTE where it is
/// referenced, so a chain of CTEs each reading the one before recurses once per
/// element: the limit bounds that recursion (see canyon-sql's `limits`).
pub const MAX_WITH_ELEMENTS: usize = 256;

/// Every error Canyon reports. See the module doc for the grouping.
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    // ---- transaction aborted: retry -------------------------------------------
    /// A deadlock was found and this transaction was chosen as the victim; the whole
    /// transaction has been rolled back. MySQL 1213 ER_LOCK_DEADLOCK, SQLSTATE 40001.
    Deadlock,
    /// A row lock was not granted within `innodb_lock_wait_timeout`; only the
    /// statement is rolled back (InnoDB's default). MySQL 1205
    /// ER_LOCK_WAIT_TIMEOUT, SQLSTATE HY000.
    LockWaitTimeout,
    /// Not a failure: the statement must wait for a row lock, and its
    /// transaction is in deferred-wait mode, so instead of blocking it was
    /// rolled back with its transaction's waiter left in the lock's queue. The
    /// caller awaits the wait (`Transaction::lock_wait`) and runs the
    /// statement again. Never sent to a client; if one leaks, the protocol
    /// edge reports it as 1205.
    LockWaitPending,
    /// Not a failure: LOAD DATA LOCAL needs the client's file, named here.
    /// The caller (the server) sends the LOCAL INFILE request packet, hands
    /// the client's bytes to the session and finishes the statement there
    /// (canyon-sql's `Session::finish_local_infile`), whose result is the
    /// statement's. Never sent to a client; if one leaks, the protocol edge
    /// reports it as 1235.
    LocalInfileRequest(String),

    // ---- invalid input: the statement fails, the session goes on --------------
    /// The statement does not parse. The string is the text near the error.
    /// MySQL 1064 ER_PARSE_ERROR, SQLSTATE 42000.
    Syntax(String),
    /// Expressions or sub-queries nested deeper than the server allows.
    /// MySQL 1064 (the parser's "too deep" is a parse error there too), SQLSTATE 42000.
    TooDeep,
    /// A statement needed more stack than its thread has left: a recursive path
    /// that the depth limits did not bound (a bug to fix, answered instead of an
    /// abort). MySQL 1436 ER_STACK_OVERRUN_NEED_MORE, SQLSTATE HY000.
    StackOverrun {
        /// Bytes of stack left when the check refused to go deeper.
        remaining: usize,
        /// Bytes the check wants left before it goes deeper.
        needed: usize,
    },
    /// A WITH clause with more elements than [`MAX_WITH_ELEMENTS`]. MariaDB's
    /// 4003 ER_TOO_MANY_DEFINITIONS_IN_WITH_CLAUSE, SQLSTATE 42000 (MySQL 8 has no
    /// such limit, and so no error number for it).
    TooManyWithElements,
    /// No database is selected and the statement names a table without one.
    /// MySQL 1046 ER_NO_DB_ERROR, SQLSTATE 3D000.
    NoDatabaseSelected,
    /// MySQL 1049 ER_BAD_DB_ERROR, SQLSTATE 42000: Unknown database '%s'.
    UnknownDatabase(String),
    /// MySQL 1007 ER_DB_CREATE_EXISTS, SQLSTATE HY000.
    DatabaseExists(String),
    /// DROP DATABASE of a database that does not exist.
    /// MySQL 1008 ER_DB_DROP_EXISTS, SQLSTATE HY000.
    DropDatabaseMissing(String),
    /// MySQL 1146 ER_NO_SUCH_TABLE, SQLSTATE 42S02: Table 'db.t' doesn't exist.
    UnknownTable {
        /// Database name.
        db: String,
        /// Table name.
        table: String,
    },
    /// MySQL 1109 ER_UNKNOWN_TABLE, SQLSTATE 42S02: Unknown table '%s' in %s
    /// (a multi-table DELETE's target that no table reference names).
    UnknownTableIn {
        /// The table as named.
        table: String,
        /// Where: "MULTI DELETE", ...
        context: String,
    },
    /// MySQL 1051 ER_BAD_TABLE_ERROR, SQLSTATE 42S02: Unknown table 'db.t' (DROP TABLE).
    BadTable(String),
    /// MySQL 1050 ER_TABLE_EXISTS_ERROR, SQLSTATE 42S01.
    TableExists(String),
    /// MySQL 1054 ER_BAD_FIELD_ERROR, SQLSTATE 42S22: Unknown column '%s' in '%s'.
    UnknownColumn {
        /// The column as written.
        column: String,
        /// Where it was used: "field list", "where clause", "order clause", ...
        context: String,
    },
    /// MySQL 1052 ER_NON_UNIQ_ERROR, SQLSTATE 23000: Column '%s' in %s is ambiguous.
    AmbiguousColumn {
        /// The column as written.
        column: String,
        /// Where it was used: "field list", "where clause", "from clause", ...
        context: String,
    },
    /// MySQL 1060 ER_DUP_FIELDNAME, SQLSTATE 42S21.
    DuplicateColumn(String),
    /// MySQL 1110 ER_FIELD_SPECIFIED_TWICE, SQLSTATE 42000: a column named twice
    /// in an INSERT column list or `INSERT ... SET`.
    ColumnSpecifiedTwice(String),
    /// MySQL 1061 ER_DUP_KEYNAME, SQLSTATE 42000.
    DuplicateKeyName(String),
    /// MySQL 1068 ER_MULTIPLE_PRI_KEY, SQLSTATE 42000.
    MultiplePrimaryKey,
    /// MySQL 1091 ER_CANT_DROP_FIELD_OR_KEY, SQLSTATE 42000: DROP of a column
    /// or key that does not exist.
    CantDropKey {
        /// What was dropped, as MariaDB's text names it (`INDEX`, `COLUMN`).
        kind: &'static str,
        /// Its name.
        name: String,
    },
    /// An error in the words of the server's `presentation` setting rather
    /// than MySQL 8.0's (MariaDB's text, for MariaDB's own test files): the
    /// number and SQLSTATE are the error's own.
    Presented {
        /// MySQL error number.
        code: u16,
        /// SQLSTATE.
        sqlstate: &'static str,
        /// The message.
        message: String,
    },
    /// MySQL 1090 ER_CANT_REMOVE_ALL_FIELDS, SQLSTATE 42000: ALTER TABLE would
    /// drop every column.
    CantRemoveAllFields,
    /// MySQL 1062 ER_DUP_ENTRY, SQLSTATE 23000: Duplicate entry '%s' for key '%s'.
    DuplicateEntry {
        /// The duplicated value, as MySQL prints it ('1', or '1-2' for composites).
        value: String,
        /// The key name: `table.PRIMARY` or `table.k_1` (MySQL 8.0 style).
        key: String,
    },
    /// MySQL 1136 ER_WRONG_VALUE_COUNT_ON_ROW, SQLSTATE 21S01.
    ValueCountMismatch {
        /// 1-based row number.
        row: u64,
    },
    /// MySQL 1048 ER_BAD_NULL_ERROR, SQLSTATE 23000: Column '%s' cannot be null.
    BadNull(String),
    /// MySQL 1364 ER_NO_DEFAULT_FOR_FIELD, SQLSTATE HY000.
    NoDefault(String),
    /// MySQL 1406 ER_DATA_TOO_LONG, SQLSTATE 22001: Data too long for column '%s' at row %ld.
    DataTooLong {
        /// Column name.
        column: String,
        /// 1-based row number.
        row: u64,
    },
    /// MySQL 1264 ER_WARN_DATA_OUT_OF_RANGE, SQLSTATE 22003.
    OutOfRange {
        /// Column name.
        column: String,
        /// 1-based row number.
        row: u64,
    },
    /// MySQL 1366 ER_TRUNCATED_WRONG_VALUE_FOR_FIELD, SQLSTATE HY000:
    /// Incorrect %s value: '%s' for column '%s' at row %ld.
    IncorrectValue {
        /// Type name as MySQL prints it ("integer", "decimal", "datetime", ...).
        type_name: String,
        /// The offending value.
        value: String,
        /// Column name.
        column: String,
        /// 1-based row number.
        row: u64,
    },
    /// A warning strict SQL mode turns into an error in INSERT, UPDATE and
    /// DELETE (as MySQL's STRICT_TRANS_TABLES does): the warning's code —
    /// 1264, 1265, 1292, 1365, 1366 or 1406 — and message, with the SQLSTATE
    /// MySQL gives that code.
    StrictModeError {
        /// The MySQL error code.
        code: u16,
        /// The message, as the warning had it.
        message: String,
    },
    /// An expression's integer result does not fit its type (BIGINT overflow).
    /// MySQL 1690 ER_DATA_OUT_OF_RANGE, SQLSTATE 22003: %s value is out of range in '%s'.
    ValueOutOfRange {
        /// "BIGINT" or "BIGINT UNSIGNED".
        type_name: String,
        /// The expression, as text.
        expr: String,
    },
    /// Statement text that is not valid utf8mb4.
    /// MySQL 1300 ER_INVALID_CHARACTER_STRING, SQLSTATE HY000.
    InvalidCharacterString(String),
    /// MySQL 1193 ER_UNKNOWN_SYSTEM_VARIABLE, SQLSTATE HY000.
    UnknownSystemVariable(String),
    /// MySQL 1231 ER_WRONG_VALUE_FOR_VAR, SQLSTATE 42000.
    WrongValueForVar {
        /// Variable name.
        name: String,
        /// The rejected value.
        value: String,
    },
    /// MySQL 1238 ER_INCORRECT_GLOBAL_LOCAL_VAR, SQLSTATE HY000 (e.g. SET of a read-only variable).
    ReadOnlyVariable(String),
    /// MySQL 1228 ER_LOCAL_VARIABLE, SQLSTATE HY000: a session-only variable
    /// given to SET GLOBAL.
    SessionOnlyVariable(String),
    /// MySQL 1229 ER_GLOBAL_VARIABLE, SQLSTATE HY000: a global-only variable
    /// given to SET \[SESSION\].
    GlobalOnlyVariable(String),
    /// MariaDB 1971 ER_SET_STATEMENT_NOT_SUPPORTED, SQLSTATE 42000: a variable
    /// that `SET STATEMENT ... FOR` may not set for one statement.
    SetStatementNotSupported(String),
    /// MySQL 1210 ER_WRONG_ARGUMENTS, SQLSTATE HY000: Incorrect arguments to %s.
    /// Used for wrong prepared-statement parameter counts.
    WrongArguments(String),
    /// MySQL 1243 ER_UNKNOWN_STMT_HANDLER, SQLSTATE HY000.
    UnknownStatementHandler {
        /// The statement id the client sent.
        id: u32,
        /// The command it was given to ("mysqld_stmt_execute", ...).
        command: String,
    },
    /// A session holds the most prepared statements allowed.
    /// MySQL 1461 ER_MAX_PREPARED_STMT_COUNT_REACHED, SQLSTATE 42000.
    TooManyPreparedStatements(u64),
    /// MySQL 1305 ER_SP_DOES_NOT_EXIST, SQLSTATE 42000: FUNCTION %s does not exist.
    UnknownFunction(String),
    /// MySQL 1582 ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT, SQLSTATE 42000.
    WrongFunctionArgs(String),
    /// MySQL 1111 ER_INVALID_GROUP_FUNC_USE, SQLSTATE HY000.
    InvalidGroupFuncUse,
    /// A window function or window definition breaking one of MySQL 8's
    /// rules ([`WindowRule`]: errors 3579 to 3596, SQLSTATE HY000), with the
    /// window or function it names (two names, for a template with two
    /// `%s`, separated by NUL).
    Window(WindowRule, String),
    /// A recursive common table expression breaking one of MySQL 8's rules
    /// ([`CteRule`]: errors 3573 to 3577, SQLSTATE HY000), with its name.
    RecursiveCte(CteRule, String),
    /// A recursive common table expression needed more iterations than
    /// `cte_max_recursion_depth`; the number is the iteration refused
    /// (the limit + 1), as MySQL's message counts. MySQL 3636
    /// ER_CTE_MAX_RECURSION_DEPTH, SQLSTATE HY000.
    CteMaxRecursionDepth(u64),
    /// MySQL 1241 ER_OPERAND_COLUMNS, SQLSTATE 21000: Operand should contain %d column(s).
    OperandColumns(usize),
    /// MySQL 1242 ER_SUBQUERY_NO_1_ROW, SQLSTATE 21000.
    SubqueryMoreThanOneRow,
    /// An UPDATE or DELETE whose subquery reads the table being changed (the
    /// string is the table name). MySQL 1093 ER_UPDATE_TABLE_USED, SQLSTATE HY000:
    /// You can't specify target table '%s' for update in FROM clause.
    UpdateTableUsed(String),
    /// MySQL 1116 ER_TOO_MANY_TABLES, SQLSTATE HY000: a join of more than
    /// [`MAX_JOIN_TABLES`] tables.
    TooManyTables,
    /// MySQL 1066 ER_NONUNIQ_TABLE, SQLSTATE 42000: Not unique table/alias: '%s'.
    NonUniqueTable(String),
    /// MySQL 1248 ER_DERIVED_MUST_HAVE_ALIAS, SQLSTATE 42000.
    DerivedNeedsAlias,
    /// MySQL 1222 ER_WRONG_NUMBER_OF_COLUMNS_IN_SELECT, SQLSTATE 21000: the
    /// operands of a UNION, INTERSECT or EXCEPT have different column counts.
    SetOpColumnCount,
    /// MySQL 1250 ER_TABLENAME_NOT_ALLOWED_HERE, SQLSTATE 42000: a UNION's
    /// ORDER BY names a column through one operand's table (the string).
    SetOpOrderTable(String),
    /// MySQL 1179 ER_CANT_DO_THIS_DURING_AN_TRANSACTION, SQLSTATE 25000.
    NotDuringTransaction,
    /// MySQL 1568 ER_CANT_CHANGE_TX_CHARACTERISTICS, SQLSTATE 25001.
    CantChangeTxCharacteristics,
    /// MySQL 1792 ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION, SQLSTATE 25006: a
    /// write in a READ ONLY transaction.
    ReadOnlyTransaction,
    /// MySQL 1396 ER_CANNOT_USER, SQLSTATE HY000: Operation %s failed for %s.
    CannotUser {
        /// "CREATE USER", "DROP USER", ...
        operation: String,
        /// 'user'@'host'
        user: String,
    },
    /// MySQL 1133 ER_PASSWORD_NO_MATCH, SQLSTATE 42000 (GRANT to an unknown user).
    NoSuchUser(String),
    /// MySQL 1273 ER_UNKNOWN_COLLATION, SQLSTATE HY000: Unknown collation: '%s'.
    UnknownCollation(String),
    /// MySQL 1115 ER_UNKNOWN_CHARACTER_SET, SQLSTATE 42000: Unknown character
    /// set: '%s'.
    UnknownCharset(String),
    /// MySQL 1253 ER_COLLATION_CHARSET_MISMATCH, SQLSTATE 42000: COLLATION '%s'
    /// is not valid for CHARACTER SET '%s'.
    CollationCharsetMismatch {
        /// The collation named.
        collation: String,
        /// The character set it was named with.
        charset: String,
    },
    /// MySQL 1267 ER_CANT_AGGREGATE_2COLLATIONS, SQLSTATE HY000: Illegal mix of
    /// collations (%s,%s) and (%s,%s) for operation '%s'. The payload is the
    /// text inside "Illegal mix of collations ".
    IllegalMixOfCollations(String),
    /// MySQL 1305 ER_SP_DOES_NOT_EXIST, SQLSTATE 42000: SAVEPOINT %s does not
    /// exist (ROLLBACK TO / RELEASE of an unknown savepoint).
    NoSuchSavepoint(String),
    /// MySQL 1141 ER_NONEXISTING_GRANT, SQLSTATE 42000: REVOKE at a level where
    /// the account holds nothing.
    NonexistingGrant {
        /// User name.
        user: String,
        /// Host.
        host: String,
    },
    /// MySQL 1144 ER_ILLEGAL_GRANT_FOR_TABLE, SQLSTATE 42000: a privilege that
    /// cannot be granted on a table (EXECUTE ON db.t).
    IllegalGrantForTable,
    /// MySQL 1221 ER_WRONG_USAGE, SQLSTATE HY000: Incorrect usage of %s.
    WrongUsage(String),
    /// MySQL 1524 ER_PLUGIN_IS_NOT_LOADED, SQLSTATE HY000: an authentication
    /// plugin Canyon does not have (`IDENTIFIED WITH sha256_password`).
    PluginNotLoaded(String),
    /// MySQL 3159 ER_SECURE_TRANSPORT_REQUIRED, SQLSTATE HY000: a TCP connection
    /// without TLS while `require_secure_transport` is on.
    InsecureTransport,
    /// A FOREIGN KEY constraint refused a statement: MySQL's number and
    /// message, built where the constraint is known (`canyon_sql::foreign`).
    /// SQLSTATE 23000 for the row checks (1451 ER_ROW_IS_REFERENCED_2, 1452
    /// ER_NO_REFERENCED_ROW_2), 42000 for 1091, 1239 and 1701, HY000 for the DDL
    /// checks (1553, 1822, 1824, 1826, 1828, 1829, 1830, 3008, 3730, 3734,
    /// 3780).
    ForeignKey {
        /// The MySQL error number.
        code: u16,
        /// The message, in MySQL's words.
        message: String,
    },
    /// A partitioned table refused a definition or a row: MySQL's number
    /// (1484-1526, 1564, 1659, ...) and message, built where the partitioning
    /// is known (`canyon_sql::catalog::partition`, `canyon_sql::ddl::partition`).
    /// SQLSTATE HY000 for all of them.
    Partition {
        /// The MySQL error number.
        code: u16,
        /// The message, in MySQL's words.
        message: String,
    },
    /// A view refused a statement: MySQL's number and message, built where the
    /// view is known (`canyon_sql`'s view files). All are SQLSTATE HY000:
    /// 1347 ER_WRONG_OBJECT, 1353 ER_VIEW_WRONG_LIST, 1356 ER_VIEW_INVALID,
    /// 1288 ER_NON_UPDATABLE_TABLE, 1348 ER_NONUPDATEABLE_COLUMN, 1369
    /// ER_VIEW_CHECK_FAILED, 1394 ER_VIEW_DELETE_MERGE_VIEW, 1395
    /// ER_VIEW_MULTIUPDATE, 1462 ER_VIEW_RECURSIVE, 1471 ER_NON_INSERTABLE_TABLE.
    View {
        /// The MySQL error number.
        code: u16,
        /// The message, in MySQL's words.
        message: String,
    },
    /// A value or argument a client sent that fits none of the cases above.
    /// MySQL 1210 ER_WRONG_ARGUMENTS, SQLSTATE HY000.
    InvalidArgument(String),

    // ---- access ------------------------------------------------------------------
    /// MySQL 1045 ER_ACCESS_DENIED_ERROR, SQLSTATE 28000.
    AccessDenied {
        /// User name as sent by the client.
        user: String,
        /// Client host.
        host: String,
        /// Whether the client sent a password.
        using_password: bool,
    },
    /// MySQL 1044 ER_DBACCESS_DENIED_ERROR, SQLSTATE 42000.
    DbAccessDenied {
        /// User name.
        user: String,
        /// Host.
        host: String,
        /// Database.
        db: String,
    },
    /// MySQL 1142 ER_TABLEACCESS_DENIED_ERROR, SQLSTATE 42000.
    TableAccessDenied {
        /// The command ("SELECT", "INSERT", ...).
        command: String,
        /// User name.
        user: String,
        /// Host.
        host: String,
        /// Table name.
        table: String,
    },
    /// MySQL 1227 ER_SPECIFIC_ACCESS_DENIED_ERROR, SQLSTATE 42000.
    SpecificAccessDenied(String),

    /// An error whose MySQL number, SQLSTATE and message are decided where it
    /// is raised: SIGNAL / RESIGNAL in a stored program, and the stored-program
    /// errors (1304 ER_SP_ALREADY_EXISTS, 1305 ER_SP_DOES_NOT_EXIST, 1329
    /// ER_SP_FETCH_NO_DATA, 1362 / 1363 trigger row errors, 1424, 1456, ...).
    /// The SQLSTATE is five ASCII characters.
    Sql {
        /// The MySQL error number.
        code: u16,
        /// The SQLSTATE.
        sqlstate: [u8; 5],
        /// The message.
        message: String,
    },

    // ---- unsupported ---------------------------------------------------------------
    /// A statement or feature Canyon does not implement (yet). Never a silent OK.
    /// MySQL 1235 ER_NOT_SUPPORTED_YET, SQLSTATE 42000:
    /// This version of MySQL doesn't yet support '%s'.
    Unsupported(String),

    // ---- resource limits --------------------------------------------------------------
    /// MySQL 1040 ER_CON_COUNT_ERROR, SQLSTATE 08004.
    TooManyConnections,
    /// MySQL 1153 ER_NET_PACKET_TOO_LARGE, SQLSTATE 08S01.
    PacketTooLarge,
    /// A packet arrived with the wrong sequence id. MySQL 1156
    /// ER_NET_PACKETS_OUT_OF_ORDER, SQLSTATE 08S01.
    PacketsOutOfOrder,
    /// A statement's working memory would pass its limit (the per-statement
    /// `statement_memory_limit`, or what is left of the server-wide
    /// `statement_memory_budget`). MySQL 1037 ER_OUTOFMEMORY, SQLSTATE HY001,
    /// with Canyon's message naming the limit instead of "restart server".
    OutOfMemory {
        /// Bytes the statement was estimated to need.
        needed: usize,
        /// Which limit refused it.
        limit: &'static str,
    },
    /// MySQL 1047 ER_UNKNOWN_COM_ERROR, SQLSTATE 08S01.
    UnknownCommand(u8),
    /// MySQL 1158/1161-style malformed packet: 1835 ER_MALFORMED_PACKET, SQLSTATE HY000.
    MalformedPacket(String),
    /// The statement was stopped by KILL QUERY / KILL CONNECTION; only the
    /// statement is rolled back, the transaction stays open (as in MySQL).
    /// MySQL 1317 ER_QUERY_INTERRUPTED, SQLSTATE 70100.
    Interrupted,
    /// A SELECT ran longer than max_execution_time and was stopped; only the
    /// statement is rolled back. MySQL 3024 ER_QUERY_TIMEOUT, SQLSTATE HY000.
    QueryTimeout,
    /// KILL of a connection id that does not exist (or that the account may not
    /// see). MySQL 1094 ER_NO_SUCH_THREAD, SQLSTATE HY000.
    UnknownThread(u64),
    /// KILL of another account's connection without SUPER (CONNECTION_ADMIN).
    /// MySQL 1095 ER_KILL_DENIED_ERROR, SQLSTATE HY000.
    KillDenied(u64),

    // ---- invalid data / IO -------------------------------------------------------------
    /// The storage layer failed (disk, RocksDB). MySQL 1030 ER_GET_ERRNO, SQLSTATE HY000.
    Io(String),
    /// Stored bytes do not decode: a bug or on-disk corruption.
    /// MySQL 1030 ER_GET_ERRNO, SQLSTATE HY000.
    Corrupt(String),
    /// A broken invariant caught without panicking. MySQL 1105 ER_UNKNOWN_ERROR, HY000.
    Internal(String),
}

/// MySQL 8's rules on window functions and windows ([`Error::Window`]); each
/// names its error number and the message's template (`%s`: the name the
/// error carries).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowRule {
    /// 3579 ER_WINDOW_NO_SUCH_WINDOW: Window name '%s' is not defined.
    NoSuchWindow,
    /// 3580 ER_WINDOW_CIRCULARITY_IN_WINDOW_GRAPH.
    Circularity,
    /// 3581 ER_WINDOW_NO_CHILD_PARTITIONING.
    NoChildPartitioning,
    /// 3582 ER_WINDOW_NO_INHERIT_FRAME.
    NoInheritFrame,
    /// 3583 ER_WINDOW_NO_REDEFINE_ORDER_BY.
    NoRedefineOrderBy,
    /// 3584 ER_WINDOW_FRAME_START_ILLEGAL.
    FrameStartIllegal,
    /// 3585 ER_WINDOW_FRAME_END_ILLEGAL.
    FrameEndIllegal,
    /// 3586 ER_WINDOW_FRAME_ILLEGAL.
    FrameIllegal,
    /// 3587 ER_WINDOW_RANGE_FRAME_ORDER_TYPE.
    RangeFrameOrderType,
    /// 3588 ER_WINDOW_RANGE_FRAME_TEMPORAL_TYPE.
    RangeFrameTemporalType,
    /// 3589 ER_WINDOW_RANGE_FRAME_NUMERIC_TYPE.
    RangeFrameNumericType,
    /// 3590 ER_WINDOW_RANGE_BOUND_NOT_CONSTANT.
    RangeBoundNotConstant,
    /// 3591 ER_WINDOW_DUPLICATE_NAME.
    DuplicateName,
    /// 3593 ER_WINDOW_INVALID_WINDOW_FUNC_USE.
    InvalidUse,
    /// 3594 ER_WINDOW_INVALID_WINDOW_FUNC_ALIAS_USE.
    InvalidAliasUse,
    /// 3595 ER_WINDOW_NESTED_WINDOW_FUNC_USE_IN_WINDOW_SPEC.
    NestedInSpec,
    /// 3596 ER_WINDOW_ROWS_INTERVAL_USE.
    RowsIntervalUse,
}

impl WindowRule {
    /// MySQL's error number and message template.
    pub fn mysql(self) -> (u16, &'static str) {
        use WindowRule::*;
        match self {
            NoSuchWindow => (3579, "Window name '%s' is not defined."),
            Circularity => (3580, "There is a circularity in the window dependency graph."),
            NoChildPartitioning => (
                3581,
                "A window which depends on another cannot define partitioning.",
            ),
            NoInheritFrame => (
                3582,
                "Window '%s' has a frame definition, so cannot be referenced by another window.",
            ),
            NoRedefineOrderBy => (
                3583,
                "Window '%s' cannot inherit '%s' since both contain an ORDER BY clause.",
            ),
            FrameStartIllegal => (
                3584,
                "Window '%s': frame start cannot be UNBOUNDED FOLLOWING.",
            ),
            FrameEndIllegal => (
                3585,
                "Window '%s': frame end cannot be UNBOUNDED PRECEDING.",
            ),
            FrameIllegal => (
                3586,
                "Window '%s': frame start or end is negative, NULL or of non-integral type",
            ),
            RangeFrameOrderType => (
                3587,
                "Window '%s' with RANGE N PRECEDING/FOLLOWING frame requires exactly one ORDER BY expression, of numeric or temporal type",
            ),
            RangeFrameTemporalType => (
                3588,
                "Window '%s' with RANGE frame has ORDER BY expression of datetime type. Only INTERVAL bound value allowed.",
            ),
            RangeFrameNumericType => (
                3589,
                "Window '%s' with RANGE frame has ORDER BY expression of numeric type, INTERVAL bound value not allowed.",
            ),
            RangeBoundNotConstant => (3590, "Window '%s' has a non-constant frame bound."),
            DuplicateName => (3591, "Window '%s' is defined twice."),
            InvalidUse => (
                3593,
                "You cannot use the window function '%s' in this context.'",
            ),
            InvalidAliasUse => (
                3594,
                "You cannot use the alias '%s' of an expression containing a window function in this context.'",
            ),
            NestedInSpec => (
                3595,
                "You cannot nest a window function in the specification of window '%s'.",
            ),
            RowsIntervalUse => (
                3596,
                "Window '%s': INTERVAL can only be used with RANGE frames.",
            ),
        }
    }
}

/// MySQL 8's rules on recursive common table expressions
/// ([`Error::RecursiveCte`]), as [`WindowRule`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CteRule {
    /// 3573 ER_CTE_RECURSIVE_REQUIRES_UNION.
    RequiresUnion,
    /// 3574 ER_CTE_RECURSIVE_REQUIRES_NONRECURSIVE_FIRST.
    NonRecursiveFirst,
    /// 3575 ER_CTE_RECURSIVE_FORBIDS_AGGREGATION.
    ForbidsAggregation,
    /// 3576 ER_CTE_RECURSIVE_FORBIDDEN_JOIN_ORDER.
    ForbiddenJoinOrder,
    /// 3577 ER_CTE_RECURSIVE_REQUIRES_SINGLE_REFERENCE.
    SingleReference,
}

impl CteRule {
    /// MySQL's error number and message template.
    pub fn mysql(self) -> (u16, &'static str) {
        match self {
            CteRule::RequiresUnion => (
                3573,
                "Recursive Common Table Expression '%s' should contain a UNION",
            ),
            CteRule::NonRecursiveFirst => (
                3574,
                "Recursive Common Table Expression '%s' should have one or more non-recursive query blocks followed by one or more recursive ones",
            ),
            CteRule::ForbidsAggregation => (
                3575,
                "Recursive Common Table Expression '%s' can contain neither aggregation nor window functions in recursive query block",
            ),
            CteRule::ForbiddenJoinOrder => (
                3576,
                "In recursive query block of Recursive Common Table Expression '%s', the recursive table must neither be in the right argument of a LEFT JOIN, nor be forced to be non-first with join order hints",
            ),
            CteRule::SingleReference => (
                3577,
                "In recursive query block of Recursive Common Table Expression '%s', the recursive table must be referenced only once, and not in any subquery",
            ),
        }
    }
}

impl Error {
    /// Whether the transaction was aborted and the client may simply retry it.
    pub fn is_retryable(&self) -> bool {
        matches!(self, Error::Deadlock | Error::LockWaitTimeout)
    }

    /// Whether this error has rolled back the whole transaction (not just the
    /// statement). Only a deadlock does, as in InnoDB.
    pub fn rolls_back_transaction(&self) -> bool {
        matches!(self, Error::Deadlock)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A readable rendering for logs and tests; the client-facing MySQL message
        // is built at the protocol edge.
        write!(f, "{self:?}")
    }
}

impl std::error::Error for Error {}
