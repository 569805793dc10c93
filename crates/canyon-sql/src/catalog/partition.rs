//! Partitioned tables: the definition a table's catalog record carries, and
//! the pure functions of it — which partition a row's partitioning value
//! belongs to, and how SHOW CREATE TABLE and `information_schema.PARTITIONS`
//! print it. MySQL 8.0's semantics (manual, chapter 26 "Partitioning").
//!
//! # Storage: logical partitioning
//! A partitioned table keeps **one keyspace**: its rows stay under the
//! table's id, keyed by the primary key, exactly as an unpartitioned
//! table's, and its secondary indexes are the table's. A partition is a
//! *predicate* over the row — "the partitioning function of this row falls
//! in this partition's range / list / hash bucket" — not a place.
//!
//! ```text
//!   rows keyspace:  [table id][pk] -> row      (all partitions interleaved)
//!   catalog:        TableDef.partitioning = RANGE(year(d)) p0 <1990, p1 <2000, ...
//!   partition of a row = locate(f(row))         (computed, never stored)
//! ```
//!
//! Why: InnoDB gives each partition its own tablespace, so that DROP
//! PARTITION is a file delete and pruning skips whole B-trees. Canyon's rows
//! live in one ordered keyspace shared by every table; giving each partition
//! its own table id would mean every access path, every index and every
//! unique check would have to fan out over the partitions (a unique key of a
//! partitioned table is only unique *within* a partition in InnoDB — MySQL
//! hides this by requiring every unique key to include the partitioning
//! columns, error 1503, which Canyon enforces too). Logical partitioning
//! keeps every existing path correct unchanged, and makes each partition
//! operation a question about the rows rather than about keyspaces.
//!
//! Consequences, which the rest of the code accepts:
//! 1. Every INSERT / UPDATE computes the row's partition
//!    (`crate::exec::partition`) only to *validate* it: a row that matches no
//!    RANGE / LIST partition fails with 1526 (a warning and a skipped row
//!    under IGNORE), as in MySQL.
//! 2. DROP PARTITION and TRUNCATE PARTITION scan the whole table and delete
//!    the rows whose partition is the named one, in one transaction (atomic
//!    and durable at commit, like any DELETE) — O(table), not O(1) as a file
//!    delete. DROP PARTITION then removes the definition; the rows it deleted
//!    are exactly the ones that would have moved to another partition.
//! 3. Pruning is a filter, not a skip: EXPLAIN shows the partitions a WHERE
//!    clause restricts the scan to (`crate::plan::partition`), but the rows
//!    of the other partitions are not read any less; the access path (a key
//!    range on the primary key or an index) is what limits the read.
//! 4. ADD / REORGANIZE / COALESCE PARTITION and PARTITION BY on an existing
//!    table change the definition and re-validate every row (a row that no
//!    longer fits fails the statement with 1526); no row moves.
//! 5. TABLE_ROWS per partition in `information_schema.PARTITIONS` is the
//!    table's estimate spread evenly over its partitions: there is no
//!    per-partition count to read.
//!
//! # Invariants
//! - **I1** Every stored row of a partitioned table has a partition under
//!   the published definition. Kept by placing every written row (INSERT,
//!   REPLACE, ON DUPLICATE KEY UPDATE, UPDATE: `crate::exec::partition`), by
//!   publishing a changed definition first and then checking every row,
//!   publishing the older one again if one has no partition, and by deleting
//!   a dropped partition's rows before publishing the definition without it
//!   (the order and its concurrency in `crate::session`'s `partition`).
//! - **I2** Every unique key, the primary key included, contains every column
//!   of the partitioning functions (1503): checked at CREATE TABLE and after
//!   every ALTER of the table (`crate::ddl::alter` runs
//!   `crate::ddl::partition::check_keys`). So a uniqueness check over the
//!   whole table, which Canyon makes, is the same as InnoDB's per partition.
//! - **I3** No foreign key is on, or references, a partitioned table
//!   (1506, as InnoDB): foreign-key cascades, which write rows without
//!   placing them, never write a partitioned table.
//!
//! The partitioning function is bound once per statement that writes the
//! table (`crate::plan::partition::Router`, from the expression's text): a
//! small parse and bind that an unpartitioned table does not pay.
//!
//! The KEY hash is Canyon's own (FNV-1a over the columns' key encoding), not
//! InnoDB's `my_hash_sort`: rows of a KEY-partitioned table are counted in
//! other partitions than MySQL would name. HASH (`MOD(|f|, n)`) and LINEAR
//! HASH (the power-of-two mask of `get_part_id_from_linear_hash`) follow
//! `sql_partition.cc` exactly.
//!
//! Not implemented: subpartitions are accepted and shown but rows are
//! routed to partitions only; EXCHANGE PARTITION; per-partition tablespaces
//! and row counts; partition selection (`SELECT ... FROM t PARTITION (p0)`).

use crate::types::collation::Collation;
use crate::types::value::{compare_as, Value};
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;

/// How rows are assigned to partitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PartitionMethod {
    /// HASH(expr): `|expr| MOD n`.
    Hash,
    /// LINEAR HASH(expr): the powers-of-two algorithm.
    LinearHash,
    /// KEY(cols): a hash of the columns.
    Key,
    /// LINEAR KEY(cols).
    LinearKey,
    /// RANGE(expr): VALUES LESS THAN.
    Range,
    /// RANGE COLUMNS(cols).
    RangeColumns,
    /// LIST(expr): VALUES IN.
    List,
    /// LIST COLUMNS(cols).
    ListColumns,
}

impl PartitionMethod {
    /// The name `information_schema.PARTITIONS.PARTITION_METHOD` shows.
    pub fn name(self) -> &'static str {
        match self {
            PartitionMethod::Hash => "HASH",
            PartitionMethod::LinearHash => "LINEAR HASH",
            PartitionMethod::Key => "KEY",
            PartitionMethod::LinearKey => "LINEAR KEY",
            PartitionMethod::Range => "RANGE",
            PartitionMethod::RangeColumns => "RANGE COLUMNS",
            PartitionMethod::List => "LIST",
            PartitionMethod::ListColumns => "LIST COLUMNS",
        }
    }

    /// KEY or a COLUMNS form: partitioned on column values, not an expression.
    pub fn by_columns(self) -> bool {
        matches!(
            self,
            PartitionMethod::Key
                | PartitionMethod::LinearKey
                | PartitionMethod::RangeColumns
                | PartitionMethod::ListColumns
        )
    }

    /// HASH or KEY (linear or not): partitions are buckets, defined by count.
    pub fn is_hash(self) -> bool {
        matches!(
            self,
            PartitionMethod::Hash
                | PartitionMethod::LinearHash
                | PartitionMethod::Key
                | PartitionMethod::LinearKey
        )
    }

    /// RANGE or RANGE COLUMNS.
    pub fn is_range(self) -> bool {
        matches!(self, PartitionMethod::Range | PartitionMethod::RangeColumns)
    }

    /// LIST or LIST COLUMNS.
    pub fn is_list(self) -> bool {
        matches!(self, PartitionMethod::List | PartitionMethod::ListColumns)
    }
}

/// One value of a partition's bound: VALUES LESS THAN (...) or VALUES IN (...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum BoundValue {
    /// MAXVALUE (RANGE only).
    MaxValue,
    /// NULL (LIST only).
    Null,
    /// An integer (every bound of a non-COLUMNS partitioning, evaluated).
    Int(i64),
    /// A string literal of a COLUMNS partitioning (compared as the column's
    /// type).
    Text(String),
}

impl BoundValue {
    /// The value compared with a row's.
    pub fn value(&self) -> Value {
        match self {
            BoundValue::MaxValue | BoundValue::Null => Value::Null,
            BoundValue::Int(i) => Value::Int(*i),
            BoundValue::Text(s) => Value::str(s),
        }
    }

    /// As SHOW CREATE TABLE prints it.
    pub fn sql(&self) -> String {
        match self {
            BoundValue::MaxValue => "MAXVALUE".into(),
            BoundValue::Null => "NULL".into(),
            BoundValue::Int(i) => i.to_string(),
            BoundValue::Text(s) => format!("'{}'", s.replace('\\', "\\\\").replace('\'', "''")),
        }
    }
}

/// What rows a partition holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum PartitionValues {
    /// A HASH / KEY bucket.
    Bucket,
    /// VALUES LESS THAN: one value per partitioning column (one for RANGE).
    LessThan(Vec<BoundValue>),
    /// VALUES IN: a list of tuples (each of one value for LIST).
    In(Vec<Vec<BoundValue>>),
}

/// One partition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartitionDef {
    /// Its name (unique in the table, compared case-insensitively).
    pub name: String,
    /// Which rows it holds.
    pub values: PartitionValues,
    /// COMMENT = '...'.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// DATA DIRECTORY = '...' (accepted and shown; Canyon has one directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_directory: Option<String>,
    /// INDEX DIRECTORY = '...' (as DATA DIRECTORY).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_directory: Option<String>,
    /// Its subpartitions' names, when named explicitly.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subpartitions: Vec<String>,
}

impl PartitionDef {
    /// A HASH / KEY bucket named `name`.
    pub fn bucket(name: String) -> PartitionDef {
        PartitionDef {
            name,
            values: PartitionValues::Bucket,
            comment: None,
            data_directory: None,
            index_directory: None,
            subpartitions: Vec::new(),
        }
    }
}

/// SUBPARTITION BY HASH / KEY: accepted and shown, not used to place rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubPartitioning {
    /// HASH, LINEAR HASH, KEY or LINEAR KEY.
    pub method: PartitionMethod,
    /// The HASH expression, as printed.
    #[serde(default)]
    pub expr: String,
    /// The KEY columns.
    #[serde(default)]
    pub columns: Vec<String>,
    /// Subpartitions per partition.
    pub count: u32,
    /// Given as SUBPARTITIONS n (not as named subpartitions, nor left to
    /// the default of one).
    pub by_count: bool,
}

/// A table's PARTITION BY clause, validated (see `crate::ddl::partition`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Partitioning {
    /// The method.
    pub method: PartitionMethod,
    /// HASH / RANGE / LIST: the expression, as SHOW CREATE TABLE prints it
    /// (identifiers quoted, function names lower case).
    #[serde(default)]
    pub expr: String,
    /// KEY / COLUMNS: the column names (for KEY `()`: the primary key's).
    #[serde(default)]
    pub columns: Vec<String>,
    /// KEY ALGORITHM = n.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_algorithm: Option<u8>,
    /// The partitions, in order.
    pub partitions: Vec<PartitionDef>,
    /// HASH / KEY given as PARTITIONS n (SHOW CREATE TABLE prints the count,
    /// not the list).
    pub by_count: bool,
    /// HASH / KEY with neither PARTITIONS n nor a list: one partition, and
    /// SHOW CREATE TABLE prints no count (MySQL's default number).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub default_count: bool,
    /// SUBPARTITION BY.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub: Option<SubPartitioning>,
}

/// Where a row goes: a partition's position, or the value no partition takes
/// (error 1526 "Table has no partition for value %s").
pub type Placement = std::result::Result<usize, String>;

impl Partitioning {
    /// Position of the partition named `name` (case-insensitive).
    pub fn position(&self, name: &str) -> Option<usize> {
        self.partitions
            .iter()
            .position(|p| p.name.eq_ignore_ascii_case(name))
    }

    /// The partition of a row whose partitioning value is `vals`: for HASH /
    /// RANGE / LIST the expression's value (one integer or NULL), for KEY
    /// and COLUMNS the columns' values (coerced to the columns' types; `colls`
    /// their collations). `key` is the columns' key encoding, for KEY only.
    pub fn locate(&self, vals: &[Value], colls: &[Option<Collation>], key: &[u8]) -> Placement {
        let n = self.partitions.len().max(1);
        match self.method {
            PartitionMethod::Hash => Ok(hash_bucket(int_of(vals), n)),
            PartitionMethod::LinearHash => Ok(linear_bucket(int_of(vals) as u64, n)),
            PartitionMethod::Key => Ok((fnv(key) % n as u64) as usize),
            PartitionMethod::LinearKey => Ok(linear_bucket(fnv(key), n)),
            PartitionMethod::Range | PartitionMethod::RangeColumns => {
                for (i, p) in self.partitions.iter().enumerate() {
                    if let PartitionValues::LessThan(bound) = &p.values {
                        if tuple_less(vals, bound, colls) {
                            return Ok(i);
                        }
                    }
                }
                Err(self.shown_value(vals))
            }
            PartitionMethod::List | PartitionMethod::ListColumns => {
                for (i, p) in self.partitions.iter().enumerate() {
                    if let PartitionValues::In(list) = &p.values {
                        if list.iter().any(|t| tuple_equal(vals, t, colls)) {
                            return Ok(i);
                        }
                    }
                }
                Err(self.shown_value(vals))
            }
        }
    }

    /// The value error 1526 names: the function's value, or "from column_list"
    /// for COLUMNS partitioning (as MySQL says).
    fn shown_value(&self, vals: &[Value]) -> String {
        if self.method.by_columns() {
            return "from column_list".into();
        }
        match vals.first() {
            None | Some(Value::Null) => "NULL".into(),
            Some(v) => v.to_display(),
        }
    }

    /// The clause SHOW CREATE TABLE appends: MySQL 8's form, inside its
    /// version comment (`/*!50100 PARTITION BY ... */`, names bare where
    /// they can be), or with `mariadb` MariaDB's (` PARTITION BY ...`, no
    /// comment, every name quoted, no KEY ALGORITHM).
    pub fn show_clause(&self, mariadb: bool) -> String {
        let version = if matches!(
            self.method,
            PartitionMethod::RangeColumns | PartitionMethod::ListColumns
        ) {
            50500
        } else {
            50100
        };
        let name = |n: &str| shown_ident(n, mariadb);
        let mut out = if mariadb {
            format!(" PARTITION BY {}", self.head(mariadb))
        } else {
            format!("/*!{version} PARTITION BY {}", self.head(mariadb))
        };
        if let Some(sub) = &self.sub {
            out.push_str("\nSUBPARTITION BY ");
            out.push_str(&method_head(
                sub.method,
                &sub.expr,
                &sub.columns,
                None,
                mariadb,
            ));
            if sub.by_count {
                out.push_str(&format!("\nSUBPARTITIONS {}", sub.count));
            }
        }
        if self.by_count {
            if !self.default_count {
                out.push_str(&format!("\nPARTITIONS {}", self.partitions.len()));
            }
        } else {
            let parts: Vec<String> = self
                .partitions
                .iter()
                .map(|p| {
                    let mut s = format!("PARTITION {}", name(&p.name));
                    match &p.values {
                        PartitionValues::Bucket => {}
                        PartitionValues::LessThan(b) => {
                            if !self.method.by_columns() && b == &[BoundValue::MaxValue] {
                                s.push_str(" VALUES LESS THAN MAXVALUE");
                            } else {
                                s.push_str(&format!(" VALUES LESS THAN ({})", tuple_sql(b)));
                            }
                        }
                        PartitionValues::In(list) => {
                            let items: Vec<String> = list
                                .iter()
                                .map(|t| {
                                    if t.len() == 1 {
                                        t[0].sql()
                                    } else {
                                        format!("({})", tuple_sql(t))
                                    }
                                })
                                .collect();
                            s.push_str(&format!(" VALUES IN ({})", items.join(",")));
                        }
                    }
                    // With named subpartitions the engine is theirs.
                    s.push_str(&options_sql(p, p.subpartitions.is_empty()));
                    if !p.subpartitions.is_empty() {
                        let subs: Vec<String> = p
                            .subpartitions
                            .iter()
                            .map(|n| format!("SUBPARTITION {} ENGINE = InnoDB", name(n)))
                            .collect();
                        s.push_str(&format!("\n ({})", subs.join(",\n  ")));
                    }
                    s
                })
                .collect();
            out.push_str(&format!("\n({})", parts.join(",\n ")));
        }
        if !mariadb {
            out.push_str(" */");
        }
        out
    }

    /// `RANGE (expr)`, `LINEAR KEY (a,b)`, `LIST  COLUMNS(a)`, ...
    fn head(&self, mariadb: bool) -> String {
        method_head(
            self.method,
            &self.expr,
            &self.columns,
            self.key_algorithm.filter(|_| !mariadb),
            mariadb,
        )
    }

    /// `information_schema.PARTITIONS.PARTITION_EXPRESSION`.
    pub fn expression(&self) -> String {
        if self.method.by_columns() {
            self.columns
                .iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(",")
        } else {
            self.expr.clone()
        }
    }

    /// `information_schema.PARTITIONS.PARTITION_DESCRIPTION` of partition `i`
    /// (NULL for HASH / KEY buckets).
    pub fn description(&self, i: usize) -> Option<String> {
        match &self.partitions[i].values {
            PartitionValues::Bucket => None,
            PartitionValues::LessThan(b) => Some(tuple_sql(b)),
            PartitionValues::In(list) => Some(
                list.iter()
                    .map(|t| {
                        if t.len() == 1 {
                            t[0].sql()
                        } else {
                            format!("({})", tuple_sql(t))
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(","),
            ),
        }
    }
}

/// The rows of `information_schema.PARTITIONS` for a partitioned table: one
/// per partition, or per subpartition, each a copy of `base` (the table's
/// unpartitioned row) with the partition's columns filled in. TABLE_ROWS is
/// the table's estimate spread evenly (see the module doc).
pub fn partitions_rows(part: &Partitioning, base: &[Value]) -> Vec<Vec<Value>> {
    let text = |s: &str| Value::str(s);
    let subs = part.sub.as_ref().map_or(1, |s| s.count.max(1) as usize);
    let total = (part.partitions.len() * subs).max(1) as u64;
    let rows = match base.get(12) {
        Some(Value::UInt(n)) => *n,
        _ => 0,
    };
    let mut out = Vec::with_capacity(total as usize);
    for (i, p) in part.partitions.iter().enumerate() {
        for k in 0..subs {
            let mut r = base.to_vec();
            r[3] = text(&p.name);
            r[5] = Value::UInt(i as u64 + 1);
            r[7] = text(part.method.name());
            r[9] = text(&part.expression());
            r[11] = part.description(i).map_or(Value::Null, |d| text(&d));
            r[12] = Value::UInt(rows / total + u64::from((i * subs + k) < (rows % total) as usize));
            r[22] = text(p.comment.as_deref().unwrap_or(""));
            if let Some(sub) = &part.sub {
                let name = p
                    .subpartitions
                    .get(k)
                    .cloned()
                    .unwrap_or_else(|| format!("{}sp{k}", p.name));
                r[4] = text(&name);
                r[6] = Value::UInt(k as u64 + 1);
                r[8] = text(sub.method.name());
                r[10] = text(&if sub.method.by_columns() {
                    sub.columns
                        .iter()
                        .map(|c| format!("`{c}`"))
                        .collect::<Vec<_>>()
                        .join(",")
                } else {
                    sub.expr.clone()
                });
            }
            out.push(r);
        }
    }
    out
}

/// The partitioning head of a method: `HASH (expr)`, `KEY (a,b)`, ...
fn method_head(
    m: PartitionMethod,
    expr: &str,
    columns: &[String],
    algo: Option<u8>,
    mariadb: bool,
) -> String {
    let cols = columns
        .iter()
        .map(|c| shown_ident(c, mariadb))
        .collect::<Vec<_>>()
        .join(",");
    let algo = algo
        .map(|a| format!("/*!50611 ALGORITHM = {a} */ "))
        .unwrap_or_default();
    match m {
        PartitionMethod::Hash => format!("HASH ({expr})"),
        PartitionMethod::LinearHash => format!("LINEAR HASH ({expr})"),
        PartitionMethod::Key => format!("KEY {algo}({cols})"),
        PartitionMethod::LinearKey => format!("LINEAR KEY {algo}({cols})"),
        PartitionMethod::Range => format!("RANGE ({expr})"),
        PartitionMethod::List => format!("LIST ({expr})"),
        PartitionMethod::RangeColumns => format!("RANGE  COLUMNS({cols})"),
        PartitionMethod::ListColumns => format!("LIST  COLUMNS({cols})"),
    }
}

/// `ENGINE = InnoDB` and the options before it, in MySQL's order
/// (`add_partition_options`: DATA / INDEX DIRECTORY, COMMENT, ENGINE).
fn options_sql(p: &PartitionDef, engine: bool) -> String {
    let mut s = String::new();
    if let Some(d) = &p.data_directory {
        s.push_str(&format!(" DATA DIRECTORY = '{d}'"));
    }
    if let Some(d) = &p.index_directory {
        s.push_str(&format!(" INDEX DIRECTORY = '{d}'"));
    }
    if let Some(c) = &p.comment {
        s.push_str(&format!(" COMMENT = '{}'", c.replace('\'', "''")));
    }
    if engine {
        s.push_str(" ENGINE = InnoDB");
    }
    s
}

fn tuple_sql(t: &[BoundValue]) -> String {
    t.iter().map(BoundValue::sql).collect::<Vec<_>>().join(",")
}

/// A partition or column name as the clause shows it: MariaDB quotes every
/// one, MySQL only those that need it ([`bare_ident`]).
fn shown_ident(n: &str, mariadb: bool) -> String {
    if mariadb {
        format!("`{}`", n.replace('`', "``"))
    } else {
        bare_ident(n)
    }
}

/// An identifier as MySQL prints partition and column names in the clause:
/// bare unless it needs quotes (`add_name_string` turns quoting off).
fn bare_ident(n: &str) -> String {
    let plain = !n.is_empty()
        && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !n.bytes().all(|b| b.is_ascii_digit());
    if plain {
        n.to_string()
    } else {
        format!("`{}`", n.replace('`', "``"))
    }
}

/// The integer a HASH function yields (NULL hashes as 0, as in MySQL).
fn int_of(vals: &[Value]) -> i64 {
    vals.first().and_then(Value::to_i64).unwrap_or(0)
}

/// HASH: `get_part_id_hash`, the remainder's absolute value.
fn hash_bucket(v: i64, n: usize) -> usize {
    (v % n as i64).unsigned_abs() as usize
}

/// LINEAR HASH / KEY: `get_part_id_from_linear_hash` — the value masked by
/// the next power of two, halved when it lands past the last partition.
fn linear_bucket(v: u64, n: usize) -> usize {
    let mask = (n as u64).next_power_of_two() - 1;
    let mut part = v & mask;
    if part >= n as u64 {
        part = v & (((mask + 1) >> 1).wrapping_sub(1));
    }
    part as usize
}

/// FNV-1a: the KEY hash (Canyon's own; see the module doc).
fn fnv(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Whether the row tuple is below the bound: compared column by column,
/// MAXVALUE above everything, NULL below everything (MySQL's rules).
fn tuple_less(vals: &[Value], bound: &[BoundValue], colls: &[Option<Collation>]) -> bool {
    for (i, b) in bound.iter().enumerate() {
        let v = vals.get(i).unwrap_or(&Value::Null);
        if matches!(b, BoundValue::MaxValue) {
            return true;
        }
        if v.is_null() {
            return true;
        }
        let coll = colls.get(i).copied().flatten();
        match compare_as(v, &b.value(), coll).unwrap_or(Ordering::Equal) {
            Ordering::Less => return true,
            Ordering::Greater => return false,
            Ordering::Equal => {}
        }
    }
    false
}

/// Whether the row tuple equals a VALUES IN tuple (NULL matches NULL here).
fn tuple_equal(vals: &[Value], t: &[BoundValue], colls: &[Option<Collation>]) -> bool {
    t.iter().enumerate().all(|(i, b)| {
        let v = vals.get(i).unwrap_or(&Value::Null);
        match b {
            BoundValue::Null => v.is_null(),
            BoundValue::MaxValue => false,
            _ => {
                !v.is_null()
                    && compare_as(v, &b.value(), colls.get(i).copied().flatten())
                        == Some(Ordering::Equal)
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(bounds: &[Option<i64>]) -> Partitioning {
        Partitioning {
            method: PartitionMethod::Range,
            expr: "`a`".into(),
            columns: Vec::new(),
            key_algorithm: None,
            partitions: bounds
                .iter()
                .enumerate()
                .map(|(i, b)| PartitionDef {
                    values: PartitionValues::LessThan(vec![match b {
                        Some(v) => BoundValue::Int(*v),
                        None => BoundValue::MaxValue,
                    }]),
                    ..PartitionDef::bucket(format!("p{i}"))
                })
                .collect(),
            by_count: false,
            default_count: false,
            sub: None,
        }
    }

    #[test]
    fn hash_follows_mysql() {
        assert_eq!(hash_bucket(7, 4), 3);
        assert_eq!(hash_bucket(-7, 4), 3);
        // LINEAR HASH over 6 partitions: mask 7, then 3 past the end.
        assert_eq!(linear_bucket(5, 6), 5);
        assert_eq!(linear_bucket(6, 6), 2);
        assert_eq!(linear_bucket(7, 6), 3);
    }

    #[test]
    fn range_places_and_refuses() {
        let p = range(&[Some(10), Some(20)]);
        assert_eq!(p.locate(&[Value::Int(9)], &[], &[]), Ok(0));
        assert_eq!(p.locate(&[Value::Int(10)], &[], &[]), Ok(1));
        assert_eq!(p.locate(&[Value::Null], &[], &[]), Ok(0));
        assert_eq!(p.locate(&[Value::Int(20)], &[], &[]), Err("20".into()));
        let p = range(&[Some(10), None]);
        assert_eq!(p.locate(&[Value::Int(1000)], &[], &[]), Ok(1));
        assert_eq!(
            p.show_clause(false),
            "/*!50100 PARTITION BY RANGE (`a`)\n(PARTITION p0 VALUES LESS THAN (10) ENGINE = InnoDB,\n PARTITION p1 VALUES LESS THAN MAXVALUE ENGINE = InnoDB) */"
        );
    }
}
