//! The one place where a [`canyon_common::Error`] becomes MySQL's
//! (error number, SQLSTATE, message) triple, as sent in an ERR packet.
//!
//! Messages follow MySQL 8.0's `share/messages_to_clients.txt` formats word for
//! word, because applications and ORMs parse them (e.g. the key name in
//! "Duplicate entry '5' for key 'sbtest1.PRIMARY'"). Where MySQL truncates an
//! argument (`%-.80s`), so does Canyon.
//!
//! The match below names every variant without a wildcard, so adding a variant to
//! the error type does not compile until it has a MySQL mapping here.

use canyon_common::Error;

/// What an ERR packet carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MysqlError {
    /// MySQL error number (`ER_*`).
    pub code: u16,
    /// Five-character SQLSTATE.
    pub sqlstate: &'static str,
    /// Human-readable message in MySQL's wording.
    pub message: String,
}

impl MysqlError {
    fn new(code: u16, sqlstate: &'static str, message: String) -> Self {
        MysqlError {
            code,
            sqlstate,
            message,
        }
    }
}

/// The first half of MySQL's ER_PARSE_ERROR text (its ER_SYNTAX_ERROR).
const SYNTAX_PREFIX: &str = "You have an error in your SQL syntax; check the manual that \
corresponds to your MySQL server version for the right syntax to use";

/// ER_EMPTY_QUERY: a COM_QUERY with no statement in it (only whitespace or
/// comments). The engine returns no result at all for it, so this triple is made
/// here rather than from an [`Error`].
pub fn empty_query() -> MysqlError {
    MysqlError::new(1065, "42000", "Query was empty".to_string())
}

/// Maps an engine error to the ERR packet MySQL would send for it.
pub fn mysql_error(err: &Error) -> MysqlError {
    use MysqlError as M;
    match err {
        Error::Deadlock => M::new(
            1213,
            "40001",
            "Deadlock found when trying to get lock; try restarting transaction".into(),
        ),
        Error::LockWaitTimeout | Error::LockWaitPending => M::new(
            1205,
            "HY000",
            "Lock wait timeout exceeded; try restarting transaction".into(),
        ),
        Error::LocalInfileRequest(_) => M::new(
            1235,
            "42000",
            "This version of MySQL doesn't yet support 'LOAD DATA LOCAL here'".into(),
        ),
        Error::Syntax(near) => M::new(
            1064,
            "42000",
            format!("{SYNTAX_PREFIX} near '{}' at line 1", truncate(near, 80)),
        ),
        Error::TooDeep => M::new(
            1064,
            "42000",
            format!(
                "{SYNTAX_PREFIX} near '' at line 1: expressions or subqueries are nested too deeply"
            ),
        ),
        Error::NoDatabaseSelected => M::new(1046, "3D000", "No database selected".into()),
        Error::UnknownDatabase(db) => M::new(1049, "42000", format!("Unknown database '{db}'")),
        Error::TooManyPreparedStatements(n) => M::new(
            1461,
            "42000",
            format!("Can't create more than max_prepared_stmt_count statements (current value: {n})"),
        ),
        Error::DropDatabaseMissing(db) => M::new(
            1008,
            "HY000",
            format!("Can't drop database '{db}'; database doesn't exist"),
        ),
        Error::ValueOutOfRange { type_name, expr } => M::new(
            1690,
            "22003",
            format!("{type_name} value is out of range in '{}'", truncate(expr, 192)),
        ),
        Error::InvalidCharacterString(s) => M::new(
            1300,
            "HY000",
            format!("Invalid utf8mb4 character string: '{}'", truncate(s, 64)),
        ),
        Error::DatabaseExists(db) => M::new(
            1007,
            "HY000",
            format!("Can't create database '{db}'; database exists"),
        ),
        Error::UnknownTable { db, table } => M::new(
            1146,
            "42S02",
            format!("Table '{db}.{table}' doesn't exist"),
        ),
        Error::BadTable(t) => M::new(1051, "42S02", format!("Unknown table '{t}'")),
        Error::TableExists(t) => M::new(1050, "42S01", format!("Table '{t}' already exists")),
        Error::UnknownColumn { column, context } => M::new(
            1054,
            "42S22",
            format!("Unknown column '{column}' in '{context}'"),
        ),
        Error::AmbiguousColumn { column, context } => M::new(
            1052,
            "23000",
            format!("Column '{column}' in {context} is ambiguous"),
        ),
        Error::DuplicateColumn(c) => {
            M::new(1060, "42S21", format!("Duplicate column name '{c}'"))
        }
        Error::ColumnSpecifiedTwice(c) => {
            M::new(1110, "42000", format!("Column '{c}' specified twice"))
        }
        Error::DuplicateKeyName(k) => M::new(1061, "42000", format!("Duplicate key name '{k}'")),
        Error::MultiplePrimaryKey => {
            M::new(1068, "42000", "Multiple primary key defined".into())
        }
        Error::Presented {
            code,
            sqlstate,
            message,
        } => M::new(*code, sqlstate, message.clone()),
        Error::CantDropKey { name: k, .. } => M::new(
            1091,
            "42000",
            format!("Can't DROP '{k}'; check that column/key exists"),
        ),
        Error::CantRemoveAllFields => M::new(
            1090,
            "42000",
            "You can't delete all columns with ALTER TABLE; use DROP TABLE instead".into(),
        ),
        Error::DuplicateEntry { value, key } => M::new(
            1062,
            "23000",
            format!("Duplicate entry '{}' for key '{key}'", truncate(value, 64)),
        ),
        Error::ValueCountMismatch { row } => M::new(
            1136,
            "21S01",
            format!("Column count doesn't match value count at row {row}"),
        ),
        Error::BadNull(c) => M::new(1048, "23000", format!("Column '{c}' cannot be null")),
        Error::NoDefault(c) => M::new(
            1364,
            "HY000",
            format!("Field '{c}' doesn't have a default value"),
        ),
        Error::DataTooLong { column, row } => M::new(
            1406,
            "22001",
            format!("Data too long for column '{column}' at row {row}"),
        ),
        Error::OutOfRange { column, row } => M::new(
            1264,
            "22003",
            format!("Out of range value for column '{column}' at row {row}"),
        ),
        Error::IncorrectValue {
            type_name,
            value,
            column,
            row,
        } => M::new(
            // MySQL reports bad temporal values as ER_TRUNCATED_WRONG_VALUE (1292)
            // and other bad values as ER_TRUNCATED_WRONG_VALUE_FOR_FIELD (1366).
            if matches!(type_name.as_str(), "date" | "datetime" | "time" | "timestamp") {
                1292
            } else {
                1366
            },
            if matches!(type_name.as_str(), "date" | "datetime" | "time" | "timestamp") {
                "22007"
            } else {
                "HY000"
            },
            format!(
                "Incorrect {type_name} value: '{}' for column '{column}' at row {row}",
                truncate(value, 192)
            ),
        ),
        Error::UnknownSystemVariable(v) => {
            M::new(1193, "HY000", format!("Unknown system variable '{v}'"))
        }
        Error::WrongValueForVar { name, value } => M::new(
            1231,
            "42000",
            format!(
                "Variable '{name}' can't be set to the value of '{}'",
                truncate(value, 200)
            ),
        ),
        Error::ReadOnlyVariable(v) => M::new(
            1238,
            "HY000",
            format!("Variable '{v}' is a read only variable"),
        ),
        Error::SessionOnlyVariable(v) => M::new(
            1228,
            "HY000",
            format!("Variable '{v}' is a SESSION variable and can't be used with SET GLOBAL"),
        ),
        Error::GlobalOnlyVariable(v) => M::new(
            1229,
            "HY000",
            format!("Variable '{v}' is a GLOBAL variable and should be set with SET GLOBAL"),
        ),
        Error::SetStatementNotSupported(v) => M::new(
            1971,
            "42000",
            format!("The system variable {v} cannot be set in SET STATEMENT."),
        ),
        Error::WrongArguments(what) | Error::InvalidArgument(what) => {
            M::new(1210, "HY000", format!("Incorrect arguments to {what}"))
        }
        Error::UnknownStatementHandler { id, command } => M::new(
            1243,
            "HY000",
            format!("Unknown prepared statement handler ({id}) given to {command}"),
        ),
        Error::UnknownFunction(f) => M::new(1305, "42000", format!("FUNCTION {f} does not exist")),
        Error::WrongFunctionArgs(f) => M::new(
            1582,
            "42000",
            format!("Incorrect parameter count in the call to native function '{f}'"),
        ),
        Error::InvalidGroupFuncUse => M::new(1111, "HY000", "Invalid use of group function".into()),
        Error::Window(rule, name) => {
            let (code, template) = rule.mysql();
            M::new(code, "HY000", fill_names(template, name))
        }
        Error::RecursiveCte(rule, name) => {
            let (code, template) = rule.mysql();
            M::new(code, "HY000", fill_names(template, name))
        }
        Error::CteMaxRecursionDepth(n) => M::new(
            3636,
            "HY000",
            format!(
                "Recursive query aborted after {n} iterations. Try increasing \
                 @@cte_max_recursion_depth to a larger value."
            ),
        ),
        Error::OperandColumns(n) => M::new(
            1241,
            "21000",
            format!("Operand should contain {n} column(s)"),
        ),
        Error::SubqueryMoreThanOneRow => {
            M::new(1242, "21000", "Subquery returns more than 1 row".into())
        }
        Error::UnknownTableIn { table, context } => M::new(
            1109,
            "42S02",
            format!("Unknown table '{table}' in {context}"),
        ),
        Error::UpdateTableUsed(t) => M::new(
            1093,
            "HY000",
            format!("You can't specify target table '{t}' for update in FROM clause"),
        ),
        Error::TooManyTables => M::new(
            1116,
            "HY000",
            format!(
                "Too many tables; MySQL can only use {} tables in a join",
                canyon_common::MAX_JOIN_TABLES
            ),
        ),
        Error::NonUniqueTable(t) => M::new(1066, "42000", format!("Not unique table/alias: '{t}'")),
        Error::DerivedNeedsAlias => M::new(
            1248,
            "42000",
            "Every derived table must have its own alias".into(),
        ),
        Error::ForeignKey { code, message } => M::new(
            *code,
            match code {
                1451 | 1452 => "23000",
                1091 | 1239 | 1701 => "42000",
                _ => "HY000",
            },
            message.clone(),
        ),
        Error::Partition { code, message } => M::new(*code, "HY000", message.clone()),
        Error::View { code, message } => M::new(*code, "HY000", message.clone()),
        Error::SetOpColumnCount => M::new(
            1222,
            "21000",
            "The used SELECT statements have a different number of columns".into(),
        ),
        Error::SetOpOrderTable(t) => M::new(
            1250,
            "42000",
            format!("Table '{t}' from one of the SELECTs cannot be used in global ORDER clause"),
        ),
        Error::NotDuringTransaction => M::new(
            1179,
            "25000",
            "You are not allowed to execute this command in a transaction".into(),
        ),
        Error::CantChangeTxCharacteristics => M::new(
            1568,
            "25001",
            "Transaction characteristics can't be changed while a transaction is in progress"
                .into(),
        ),
        Error::ReadOnlyTransaction => M::new(
            1792,
            "25006",
            "Cannot execute statement in a READ ONLY transaction.".into(),
        ),
        Error::CannotUser { operation, user } => M::new(
            1396,
            "HY000",
            format!("Operation {operation} failed for {user}"),
        ),
        Error::NoSuchUser(_) => M::new(
            1133,
            "42000",
            "Can't find any matching row in the user table".into(),
        ),
        Error::AccessDenied {
            user,
            host,
            using_password,
        } => M::new(
            1045,
            "28000",
            format!(
                "Access denied for user '{user}'@'{host}' (using password: {})",
                if *using_password { "YES" } else { "NO" }
            ),
        ),
        Error::DbAccessDenied { user, host, db } => M::new(
            1044,
            "42000",
            format!("Access denied for user '{user}'@'{host}' to database '{db}'"),
        ),
        Error::TableAccessDenied {
            command,
            user,
            host,
            table,
        } => M::new(
            1142,
            "42000",
            format!("{command} command denied to user '{user}'@'{host}' for table '{table}'"),
        ),
        Error::UnknownCollation(name) => {
            M::new(1273, "HY000", format!("Unknown collation: '{name}'"))
        }
        Error::UnknownCharset(name) => {
            M::new(1115, "42000", format!("Unknown character set: '{name}'"))
        }
        Error::CollationCharsetMismatch { collation, charset } => M::new(
            1253,
            "42000",
            format!("COLLATION '{collation}' is not valid for CHARACTER SET '{charset}'"),
        ),
        Error::IllegalMixOfCollations(what) => {
            M::new(1267, "HY000", format!("Illegal mix of collations {what}"))
        }
        Error::NoSuchSavepoint(name) => {
            M::new(1305, "42000", format!("SAVEPOINT {name} does not exist"))
        }
        Error::NonexistingGrant { user, host } => M::new(
            1141,
            "42000",
            format!("There is no such grant defined for user '{user}' on host '{host}'"),
        ),
        Error::IllegalGrantForTable => M::new(
            1144,
            "42000",
            "Illegal GRANT/REVOKE command; please consult the manual to see which \
             privileges can be used"
                .to_string(),
        ),
        Error::WrongUsage(what) => M::new(1221, "HY000", format!("Incorrect usage of {what}")),
        Error::PluginNotLoaded(name) => {
            M::new(1524, "HY000", format!("Plugin '{name}' is not loaded"))
        }
        Error::InsecureTransport => M::new(
            3159,
            "HY000",
            "Connections using insecure transport are prohibited while \
             --require_secure_transport=ON."
                .to_string(),
        ),
        Error::SpecificAccessDenied(privilege) => M::new(
            1227,
            "42000",
            format!(
                "Access denied; you need (at least one of) the {privilege} privilege(s) for this operation"
            ),
        ),
        Error::Unsupported(what) => M::new(
            1235,
            "42000",
            format!("This version of MySQL doesn't yet support '{what}'"),
        ),
        Error::TooManyConnections => M::new(1040, "08004", "Too many connections".into()),
        Error::PacketsOutOfOrder => M::new(1156, "08S01", "Got packets out of order".into()),
        Error::OutOfMemory { needed, limit } => M::new(
            1037,
            "HY001",
            format!("Out of memory; the statement needs about {needed} bytes, more than {limit} allows"),
        ),
        Error::StackOverrun { remaining, needed } => M::new(
            1436,
            "HY000",
            format!(
                "Thread stack overrun: {remaining} bytes of stack left, {needed} needed; \
                 the statement nests too deeply"
            ),
        ),
        Error::TooManyWithElements => M::new(
            4003,
            "42000",
            "Too many WITH elements in WITH clause".into(),
        ),
        Error::PacketTooLarge => M::new(
            1153,
            "08S01",
            "Got a packet bigger than 'max_allowed_packet' bytes".into(),
        ),
        Error::UnknownCommand(_) => M::new(1047, "08S01", "Unknown command".into()),
        Error::MalformedPacket(_) => {
            M::new(1835, "HY000", "Malformed communication packet.".into())
        }
        Error::Interrupted => M::new(1317, "70100", "Query execution was interrupted".into()),
        Error::QueryTimeout => M::new(
            3024,
            "HY000",
            "Query execution was interrupted, maximum statement execution time exceeded".into(),
        ),
        Error::UnknownThread(id) => M::new(1094, "HY000", format!("Unknown thread id: {id}")),
        Error::KillDenied(id) => M::new(
            1095,
            "HY000",
            format!("You are not owner of thread {id}"),
        ),
        // ER_GET_ERRNO "Got error %d - '%-.192s' from storage engine"; the number
        // is the handler error: 168 HA_ERR_GENERIC, 126 HA_ERR_CRASHED.
        Error::Io(msg) => M::new(
            1030,
            "HY000",
            format!("Got error 168 - '{}' from storage engine", truncate(msg, 192)),
        ),
        Error::Corrupt(msg) => M::new(
            1030,
            "HY000",
            format!(
                "Got error 126 - 'corrupt data: {}' from storage engine",
                truncate(msg, 178)
            ),
        ),
        Error::Internal(msg) => M::new(1105, "HY000", format!("Internal error: {msg}")),
        Error::Sql {
            code,
            sqlstate,
            message,
        } => M::new(*code, intern_sqlstate(sqlstate), message.clone()),
        Error::StrictModeError { code, message } => M::new(
            *code,
            match code {
                1138 => "22004",
                1264 => "22003",
                1265 => "01000",
                1292 => "22007",
                1365 => "22012",
                1406 => "22001",
                _ => "HY000",
            },
            message.clone(),
        ),
    }
}

/// A SQLSTATE as the `&'static str` an ERR packet carries. SIGNAL may name
/// any SQLSTATE, so each distinct one is leaked once and kept in a set: five
/// bytes each, and a session can only name SQLSTATEs of five characters
/// of `[0-9A-Z]` (anything else is written as HY000).
/// A message template with each `%s` replaced by the next of `names`
/// (separated by NUL; the last one repeats).
fn fill_names(template: &str, names: &str) -> String {
    let mut parts = names.split('\0');
    let mut last = "";
    let mut out = String::new();
    for (i, piece) in template.split("%s").enumerate() {
        if i > 0 {
            if let Some(p) = parts.next() {
                last = p;
            }
            out.push_str(last);
        }
        out.push_str(piece);
    }
    out
}

fn intern_sqlstate(s: &[u8; 5]) -> &'static str {
    static SEEN: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    let Ok(text) = std::str::from_utf8(s) else {
        return "HY000";
    };
    if !text
        .bytes()
        .all(|b| b.is_ascii_digit() || b.is_ascii_uppercase())
    {
        return "HY000";
    }
    let mut seen = SEEN.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(found) = seen.iter().find(|t| **t == text) {
        return found;
    }
    let leaked: &'static str = Box::leak(text.to_string().into_boxed_str());
    seen.push(leaked);
    leaked
}

/// The first `max` characters of `s` (MySQL's `%-.Ns`).
fn truncate(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(err: Error, code: u16, state: &str, message: &str) {
        let m = mysql_error(&err);
        assert_eq!(m.code, code, "{err:?}");
        assert_eq!(m.sqlstate, state, "{err:?}");
        assert_eq!(m.message, message, "{err:?}");
        assert_eq!(m.sqlstate.len(), 5);
    }

    fn s(v: &str) -> String {
        v.to_string()
    }

    #[test]
    fn transaction_aborts() {
        check(
            Error::Deadlock,
            1213,
            "40001",
            "Deadlock found when trying to get lock; try restarting transaction",
        );
        check(
            Error::LockWaitTimeout,
            1205,
            "HY000",
            "Lock wait timeout exceeded; try restarting transaction",
        );
    }

    #[test]
    fn syntax_errors() {
        check(
            Error::Syntax(s("FROM x")),
            1064,
            "42000",
            "You have an error in your SQL syntax; check the manual that corresponds to your \
             MySQL server version for the right syntax to use near 'FROM x' at line 1",
        );
        let long: String = "é".repeat(100);
        let m = mysql_error(&Error::Syntax(long));
        assert!(m
            .message
            .contains(&format!("near '{}' at line 1", "é".repeat(80))));
        let m = mysql_error(&Error::TooDeep);
        assert_eq!((m.code, m.sqlstate), (1064, "42000"));
        assert!(m.message.starts_with(SYNTAX_PREFIX));
        assert_eq!(empty_query().code, 1065);
    }

    #[test]
    fn names_and_objects() {
        check(
            Error::NoDatabaseSelected,
            1046,
            "3D000",
            "No database selected",
        );
        check(
            Error::UnknownDatabase(s("x")),
            1049,
            "42000",
            "Unknown database 'x'",
        );
        check(
            Error::DatabaseExists(s("d")),
            1007,
            "HY000",
            "Can't create database 'd'; database exists",
        );
        check(
            Error::UnknownTable {
                db: s("db"),
                table: s("t"),
            },
            1146,
            "42S02",
            "Table 'db.t' doesn't exist",
        );
        check(
            Error::BadTable(s("db.t")),
            1051,
            "42S02",
            "Unknown table 'db.t'",
        );
        check(
            Error::TableExists(s("t")),
            1050,
            "42S01",
            "Table 't' already exists",
        );
        check(
            Error::UnknownColumn {
                column: s("x"),
                context: s("field list"),
            },
            1054,
            "42S22",
            "Unknown column 'x' in 'field list'",
        );
        check(
            Error::AmbiguousColumn {
                column: s("id"),
                context: s("field list"),
            },
            1052,
            "23000",
            "Column 'id' in field list is ambiguous",
        );
        check(
            Error::DuplicateColumn(s("c")),
            1060,
            "42S21",
            "Duplicate column name 'c'",
        );
        check(
            Error::ColumnSpecifiedTwice(s("c")),
            1110,
            "42000",
            "Column 'c' specified twice",
        );
        check(
            Error::DuplicateKeyName(s("k")),
            1061,
            "42000",
            "Duplicate key name 'k'",
        );
        check(
            Error::MultiplePrimaryKey,
            1068,
            "42000",
            "Multiple primary key defined",
        );
        check(
            Error::CantDropKey {
                kind: "INDEX",
                name: s("k"),
            },
            1091,
            "42000",
            "Can't DROP 'k'; check that column/key exists",
        );
        check(
            Error::CantRemoveAllFields,
            1090,
            "42000",
            "You can't delete all columns with ALTER TABLE; use DROP TABLE instead",
        );
    }

    #[test]
    fn data_errors() {
        check(
            Error::DuplicateEntry {
                value: s("5"),
                key: s("sbtest1.PRIMARY"),
            },
            1062,
            "23000",
            "Duplicate entry '5' for key 'sbtest1.PRIMARY'",
        );
        check(
            Error::ValueCountMismatch { row: 2 },
            1136,
            "21S01",
            "Column count doesn't match value count at row 2",
        );
        check(
            Error::BadNull(s("c")),
            1048,
            "23000",
            "Column 'c' cannot be null",
        );
        check(
            Error::NoDefault(s("c")),
            1364,
            "HY000",
            "Field 'c' doesn't have a default value",
        );
        check(
            Error::DataTooLong {
                column: s("c"),
                row: 1,
            },
            1406,
            "22001",
            "Data too long for column 'c' at row 1",
        );
        check(
            Error::OutOfRange {
                column: s("k"),
                row: 3,
            },
            1264,
            "22003",
            "Out of range value for column 'k' at row 3",
        );
        check(
            Error::IncorrectValue {
                type_name: s("integer"),
                value: s("abc"),
                column: s("k"),
                row: 1,
            },
            1366,
            "HY000",
            "Incorrect integer value: 'abc' for column 'k' at row 1",
        );
    }

    #[test]
    fn variables_arguments_functions() {
        check(
            Error::UnknownSystemVariable(s("foo")),
            1193,
            "HY000",
            "Unknown system variable 'foo'",
        );
        check(
            Error::WrongValueForVar {
                name: s("autocommit"),
                value: s("7"),
            },
            1231,
            "42000",
            "Variable 'autocommit' can't be set to the value of '7'",
        );
        check(
            Error::ReadOnlyVariable(s("version")),
            1238,
            "HY000",
            "Variable 'version' is a read only variable",
        );
        check(
            Error::SessionOnlyVariable(s("warning_count")),
            1228,
            "HY000",
            "Variable 'warning_count' is a SESSION variable and can't be used with SET GLOBAL",
        );
        check(
            Error::GlobalOnlyVariable(s("max_connections")),
            1229,
            "HY000",
            "Variable 'max_connections' is a GLOBAL variable and should be set with SET GLOBAL",
        );
        check(
            Error::SetStatementNotSupported(s("autocommit")),
            1971,
            "42000",
            "The system variable autocommit cannot be set in SET STATEMENT.",
        );
        check(
            Error::WrongArguments(s("mysqld_stmt_execute")),
            1210,
            "HY000",
            "Incorrect arguments to mysqld_stmt_execute",
        );
        check(
            Error::InvalidArgument(s("COM_QUERY")),
            1210,
            "HY000",
            "Incorrect arguments to COM_QUERY",
        );
        check(
            Error::UnknownStatementHandler {
                id: 7,
                command: s("mysqld_stmt_execute"),
            },
            1243,
            "HY000",
            "Unknown prepared statement handler (7) given to mysqld_stmt_execute",
        );
        check(
            Error::UnknownFunction(s("db.f")),
            1305,
            "42000",
            "FUNCTION db.f does not exist",
        );
        check(
            Error::WrongFunctionArgs(s("abs")),
            1582,
            "42000",
            "Incorrect parameter count in the call to native function 'abs'",
        );
        check(
            Error::Window(canyon_common::WindowRule::NoSuchWindow, s("w")),
            3579,
            "HY000",
            "Window name 'w' is not defined.",
        );
        check(
            Error::Window(canyon_common::WindowRule::NoRedefineOrderBy, s("w2\0w")),
            3583,
            "HY000",
            "Window 'w2' cannot inherit 'w' since both contain an ORDER BY clause.",
        );
        check(
            Error::CteMaxRecursionDepth(1001),
            3636,
            "HY000",
            "Recursive query aborted after 1001 iterations. Try increasing @@cte_max_recursion_depth to a larger value.",
        );
        check(
            Error::InvalidGroupFuncUse,
            1111,
            "HY000",
            "Invalid use of group function",
        );
        check(
            Error::OperandColumns(1),
            1241,
            "21000",
            "Operand should contain 1 column(s)",
        );
        check(
            Error::SubqueryMoreThanOneRow,
            1242,
            "21000",
            "Subquery returns more than 1 row",
        );
        check(
            Error::TooManyTables,
            1116,
            "HY000",
            "Too many tables; MySQL can only use 61 tables in a join",
        );
        check(
            Error::UpdateTableUsed("t".into()),
            1093,
            "HY000",
            "You can't specify target table 't' for update in FROM clause",
        );
        check(
            Error::NonUniqueTable("t".into()),
            1066,
            "42000",
            "Not unique table/alias: 't'",
        );
        check(
            Error::DerivedNeedsAlias,
            1248,
            "42000",
            "Every derived table must have its own alias",
        );
        check(
            Error::ForeignKey {
                code: 1452,
                message: s("Cannot add or update a child row"),
            },
            1452,
            "23000",
            "Cannot add or update a child row",
        );
        check(
            Error::ForeignKey {
                code: 3730,
                message: s("Cannot drop table"),
            },
            3730,
            "HY000",
            "Cannot drop table",
        );
        check(
            Error::View {
                code: 1356,
                message: s("View 'test.v' references invalid table(s)"),
            },
            1356,
            "HY000",
            "View 'test.v' references invalid table(s)",
        );
        check(
            Error::SetOpColumnCount,
            1222,
            "21000",
            "The used SELECT statements have a different number of columns",
        );
        check(
            Error::SetOpOrderTable("t".into()),
            1250,
            "42000",
            "Table 't' from one of the SELECTs cannot be used in global ORDER clause",
        );
        check(
            Error::NotDuringTransaction,
            1179,
            "25000",
            "You are not allowed to execute this command in a transaction",
        );
        check(
            Error::CantChangeTxCharacteristics,
            1568,
            "25001",
            "Transaction characteristics can't be changed while a transaction is in progress",
        );
        check(
            Error::ReadOnlyTransaction,
            1792,
            "25006",
            "Cannot execute statement in a READ ONLY transaction.",
        );
    }

    #[test]
    fn users_and_access() {
        check(
            Error::CannotUser {
                operation: s("CREATE USER"),
                user: s("'u'@'%'"),
            },
            1396,
            "HY000",
            "Operation CREATE USER failed for 'u'@'%'",
        );
        check(
            Error::NoSuchUser(s("'u'@'%'")),
            1133,
            "42000",
            "Can't find any matching row in the user table",
        );
        check(
            Error::AccessDenied {
                user: s("u"),
                host: s("h"),
                using_password: true,
            },
            1045,
            "28000",
            "Access denied for user 'u'@'h' (using password: YES)",
        );
        check(
            Error::AccessDenied {
                user: s("u"),
                host: s("h"),
                using_password: false,
            },
            1045,
            "28000",
            "Access denied for user 'u'@'h' (using password: NO)",
        );
        check(
            Error::DbAccessDenied {
                user: s("u"),
                host: s("h"),
                db: s("d"),
            },
            1044,
            "42000",
            "Access denied for user 'u'@'h' to database 'd'",
        );
        check(
            Error::TableAccessDenied {
                command: s("SELECT"),
                user: s("u"),
                host: s("h"),
                table: s("t"),
            },
            1142,
            "42000",
            "SELECT command denied to user 'u'@'h' for table 't'",
        );
        check(
            Error::NonexistingGrant {
                user: s("u"),
                host: s("%"),
            },
            1141,
            "42000",
            "There is no such grant defined for user 'u' on host '%'",
        );
        check(
            Error::UnknownCollation(s("klingon_ci")),
            1273,
            "HY000",
            "Unknown collation: 'klingon_ci'",
        );
        check(
            Error::UnknownCharset(s("klingon")),
            1115,
            "42000",
            "Unknown character set: 'klingon'",
        );
        check(
            Error::CollationCharsetMismatch {
                collation: s("latin1_bin"),
                charset: s("utf8mb4"),
            },
            1253,
            "42000",
            "COLLATION 'latin1_bin' is not valid for CHARACTER SET 'utf8mb4'",
        );
        check(
            Error::IllegalMixOfCollations(s(
                "(utf8mb4_general_ci,IMPLICIT) and (utf8mb4_0900_ai_ci,IMPLICIT) for operation '='",
            )),
            1267,
            "HY000",
            "Illegal mix of collations (utf8mb4_general_ci,IMPLICIT) and (utf8mb4_0900_ai_ci,IMPLICIT) for operation '='",
        );
        check(
            Error::NoSuchSavepoint(s("sp")),
            1305,
            "42000",
            "SAVEPOINT sp does not exist",
        );
        check(
            Error::IllegalGrantForTable,
            1144,
            "42000",
            "Illegal GRANT/REVOKE command; please consult the manual to see which privileges can be used",
        );
        check(
            Error::WrongUsage(s("DB GRANT and GLOBAL PRIVILEGES")),
            1221,
            "HY000",
            "Incorrect usage of DB GRANT and GLOBAL PRIVILEGES",
        );
        check(
            Error::PluginNotLoaded(s("sha256_password")),
            1524,
            "HY000",
            "Plugin 'sha256_password' is not loaded",
        );
        check(
            Error::InsecureTransport,
            3159,
            "HY000",
            "Connections using insecure transport are prohibited while --require_secure_transport=ON.",
        );
        check(
            Error::SpecificAccessDenied(s("SUPER")),
            1227,
            "42000",
            "Access denied; you need (at least one of) the SUPER privilege(s) for this operation",
        );
    }

    #[test]
    fn stored_program_errors_carry_their_own_code_and_sqlstate() {
        check(
            Error::Sql {
                code: 1644,
                sqlstate: *b"45000",
                message: s("custom"),
            },
            1644,
            "45000",
            "custom",
        );
        // A SQLSTATE that is not five of [0-9A-Z] is sent as HY000.
        check(
            Error::Sql {
                code: 1644,
                sqlstate: *b"4a0 0",
                message: s("m"),
            },
            1644,
            "HY000",
            "m",
        );
    }

    #[test]
    fn unsupported_limits_and_io() {
        check(
            Error::Unsupported(s("LOAD DATA")),
            1235,
            "42000",
            "This version of MySQL doesn't yet support 'LOAD DATA'",
        );
        check(
            Error::TooManyConnections,
            1040,
            "08004",
            "Too many connections",
        );
        check(
            Error::PacketTooLarge,
            1153,
            "08S01",
            "Got a packet bigger than 'max_allowed_packet' bytes",
        );
        check(
            Error::UnknownCommand(0x42),
            1047,
            "08S01",
            "Unknown command",
        );
        check(
            Error::PacketsOutOfOrder,
            1156,
            "08S01",
            "Got packets out of order",
        );
        check(
            Error::OutOfMemory {
                needed: 300,
                limit: "statement_memory_limit",
            },
            1037,
            "HY001",
            "Out of memory; the statement needs about 300 bytes, more than statement_memory_limit allows",
        );
        check(
            Error::StackOverrun {
                remaining: 1,
                needed: 2,
            },
            1436,
            "HY000",
            "Thread stack overrun: 1 bytes of stack left, 2 needed; the statement nests too deeply",
        );
        check(
            Error::TooManyWithElements,
            4003,
            "42000",
            "Too many WITH elements in WITH clause",
        );
        check(
            Error::MalformedPacket(s("x")),
            1835,
            "HY000",
            "Malformed communication packet.",
        );
        check(
            Error::Interrupted,
            1317,
            "70100",
            "Query execution was interrupted",
        );
        check(
            Error::QueryTimeout,
            3024,
            "HY000",
            "Query execution was interrupted, maximum statement execution time exceeded",
        );
        check(
            Error::UnknownThread(42),
            1094,
            "HY000",
            "Unknown thread id: 42",
        );
        check(
            Error::KillDenied(7),
            1095,
            "HY000",
            "You are not owner of thread 7",
        );
        check(
            Error::Io(s("disk full")),
            1030,
            "HY000",
            "Got error 168 - 'disk full' from storage engine",
        );
        check(
            Error::Corrupt(s("bad row")),
            1030,
            "HY000",
            "Got error 126 - 'corrupt data: bad row' from storage engine",
        );
        check(
            Error::StrictModeError {
                code: 1365,
                message: s("Division by 0"),
            },
            1365,
            "22012",
            "Division by 0",
        );
        check(
            Error::StrictModeError {
                code: 1292,
                message: s("Truncated incorrect DOUBLE value: 'abc'"),
            },
            1292,
            "22007",
            "Truncated incorrect DOUBLE value: 'abc'",
        );
        check(
            Error::Internal(s("oops")),
            1105,
            "HY000",
            "Internal error: oops",
        );
        check(
            Error::TooManyPreparedStatements(16382),
            1461,
            "42000",
            "Can't create more than max_prepared_stmt_count statements (current value: 16382)",
        );
        check(
            Error::DropDatabaseMissing(s("gone")),
            1008,
            "HY000",
            "Can't drop database 'gone'; database doesn't exist",
        );
        check(
            Error::ValueOutOfRange {
                type_name: s("BIGINT"),
                expr: s("9223372036854775807 + 1"),
            },
            1690,
            "22003",
            "BIGINT value is out of range in '9223372036854775807 + 1'",
        );
        check(
            Error::InvalidCharacterString(s("\u{fffd}")),
            1300,
            "HY000",
            "Invalid utf8mb4 character string: '\u{fffd}'",
        );
        check(
            Error::IncorrectValue {
                type_name: s("datetime"),
                value: s("2023-02-30"),
                column: s("d"),
                row: 1,
            },
            1292,
            "22007",
            "Incorrect datetime value: '2023-02-30' for column 'd' at row 1",
        );
    }
}
