//! The statistics of a `MATCH ... AGAINST` search, read from its FULLTEXT
//! index at the statement's read point (the ranking rules are
//! `crate::types::fulltext`'s).
//!
//! # How the index is read
//! A FULLTEXT index holds one entry per distinct indexed word of each row,
//! `(index, word 00, pk)`, maintained by the same write path as every
//! secondary index (`crate::catalog::rows::index_keys_by`): entries are
//! buffered with the row, written in the commit's atomic batch, and read
//! through MVCC as markers (`canyon_txn::mvcc`, "Index entries"). So the
//! index is exactly as transactional and crash-safe as the rows.
//!
//! For each word (or prefix) of the search, [`search`] scans the word's key
//! range; each row it yields is the version this statement sees, which is
//! re-tokenized to confirm it holds the word (an entry may be a stale marker
//! of an older version). That gives each word's `doc_count` without
//! tokenizing the rows that do not contain it. `total_docs` is the number
//! of rows visible to the statement, counted by a key-only scan of the
//! table (InnoDB reads its row-count estimate instead; an exact count keeps
//! relevance reproducible).
//!
//! # What a transaction sees
//! Through MVCC, a statement's search sees the rows its snapshot sees **and
//! the transaction's own uncommitted writes** (the write buffer's new index
//! entries are merged into the scan). InnoDB indexes FULLTEXT entries only
//! at commit, so there a transaction's MATCH misses its own inserts and
//! still finds its own deleted rows' old words. Canyon's choice is the
//! consistent one (docs/compatibility.md).
//!
//! # Reading the rows
//! The same scans collect the primary keys of the rows that hold a word of
//! the search ([`Search::candidates`]). A join step whose WHERE conjuncts
//! include a MATCH over its table, and which would otherwise scan the whole
//! table, reads only those rows, by primary key (`Step::fulltext`, chosen
//! by `crate::plan::join`); its filter then ranks each from its text. So a
//! search tokenizes the rows that contain its words, twice, and no others.
//!
//! # Not implemented
//! - A MATCH under OR, or in the select list only, still ranks every row
//!   the access path reads (correct, not fast).
//! - The candidates are held in memory for the statement (a word in every
//!   row holds every primary key).
//! - `total_docs` costs a key-only scan of the table per statement.

use crate::catalog::rows::{decode_table_row, fulltext_doc};
use crate::expr::MatchExpr;
use crate::types::fulltext::{parse_query, word_key, Lookup, Search, Stats};
use canyon_common::Result;
use canyon_storage::KeyRange;
use canyon_txn::Reader;
use std::collections::BTreeSet;
use std::ops::ControlFlow;

/// The search `m` makes with search string `against`, at `reader`'s read
/// point (see the module doc).
pub(crate) fn search(reader: &Reader<'_>, m: &MatchExpr, against: &str) -> Result<Search> {
    let table = &m.table;
    let index = &table.def.indexes[m.index];
    let query = parse_query(against, m.mode, m.fold)?;
    let lookups = query.lookups();
    let mut stats = Stats::default();
    let mut candidates = BTreeSet::new();
    if lookups.is_empty() {
        return Ok(Search {
            query,
            stats,
            candidates,
        });
    }
    let mut total = 0u64;
    reader.scan(table.def.id, &KeyRange::all(), false, &mut |_, _| {
        total += 1;
        ControlFlow::Continue(())
    })?;
    stats.total_docs = total;
    let mut row = Vec::new();
    for lookup in &lookups {
        let range = match lookup {
            Lookup::Word(w) => KeyRange::prefix(&word_key(w)),
            Lookup::Prefix(p) => KeyRange::prefix(p.as_bytes()),
        };
        // Counted apart for each lookup: a word both named and reached by a
        // prefix has one count.
        let mut counts = Stats::default();
        let mut err = None;
        crate::exec::check_index_ready(index, reader.read_point())?;
        reader.scan_index(
            table.def.id,
            index.id,
            &range,
            false,
            &mut |_, pk, bytes| {
                if let Err(e) = decode_table_row(table, bytes, &mut row) {
                    err = Some(e);
                    return ControlFlow::Break(());
                }
                let doc = fulltext_doc(table, &index.columns, &|c| &row[c]);
                if counts.count_doc(&doc, std::slice::from_ref(lookup)) {
                    candidates.insert(pk.to_vec());
                }
                ControlFlow::Continue(())
            },
        )?;
        if let Some(e) = err {
            return Err(e);
        }
        stats.doc_count.extend(counts.doc_count);
        stats.prefix_count.extend(counts.prefix_count);
    }
    Ok(Search {
        query,
        stats,
        candidates,
    })
}
