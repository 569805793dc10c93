//! FULLTEXT search as InnoDB does it: the tokenizer, the stopword list, the
//! search-string parser of `MATCH ... AGAINST` and the relevance formula.
//!
//! # What
//! A FULLTEXT index (an index whose `IndexAttrs::fulltext` is set) over
//! CHAR / VARCHAR / TEXT columns is searched with `MATCH (cols) AGAINST
//! ('text' [IN NATURAL LANGUAGE MODE | IN BOOLEAN MODE])`. This file holds
//! the pure parts, over text and numbers only (layer 1): how a document is
//! cut into words ([`tokenize`]), which words are indexed ([`indexed`]), how
//! a search string is read ([`parse_query`]) and how a document is ranked
//! against it given the statistics of the whole table ([`Query::rank`]).
//! The index entries are built by `crate::catalog::rows::index_keys_by`, the
//! statistics are gathered by the executor (`crate::exec::select`), which
//! reads the index, and `MATCH` is bound by `crate::plan::bind`.
//!
//! # Why InnoDB's rules, exactly
//! Applications compare relevance numbers and depend on which rows a search
//! returns; MySQL 8.0's InnoDB (and MariaDB 10.11's, the same code in
//! `storage/innobase/fts/fts0que.cc`) fixes both, so Canyon follows it:
//!
//! 1. **Words** are maximal runs of letters, digits and `_` (Unicode letters
//!    and digits count); everything else separates. A word is indexed when it
//!    has 3 to 84 characters (`innodb_ft_min_token_size` /
//!    `innodb_ft_max_token_size`) and is not in [`STOPWORDS`], InnoDB's
//!    default list (`INFORMATION_SCHEMA.INNODB_FT_DEFAULT_STOPWORD`).
//! 2. Words compare **case-insensitively** under a case-insensitive column
//!    collation (folded to lower case, as InnoDB's `innobase_fts_casedn_str`),
//!    bytewise under a binary or `_bin` one.
//! 3. A document is the concatenation of the index's columns; NULL columns
//!    contribute nothing, but a row whose columns are all NULL still counts
//!    in the number of documents.
//! 4. **IDF** of a word = `log10(total_docs / doc_count)`, where `total_docs`
//!    is the number of rows in the table and `doc_count` the number of rows
//!    containing the word; a word in every row gets `log10(1.0001)` instead of
//!    0, so that a match always ranks above a non-match. In natural-language
//!    mode a word written `k` times in the search string has its `doc_count`
//!    counted `k` times (InnoDB looks it up `k` times and adds each count; the
//!    term frequency is not multiplied). Where Canyon differs: `doc_count`
//!    counts the rows the statement sees, while InnoDB keeps counting
//!    deleted rows and the old versions of updated ones until OPTIMIZE
//!    TABLE purges them from its auxiliary tables, so after deletes and
//!    updates its numbers drift (the rows found do not change); and
//!    InnoDB's `total_docs` is its row-count estimate
//!    (`dict_table_get_n_rows`, TABLE_ROWS), Canyon's the exact count.
//! 5. **Rank** of a document = Σ over the distinct query words it contains of
//!    `tf × idf × idf`, `tf` the word's occurrences in the document, summed in
//!    single precision (`fts_rank_t` is a float), so the numbers print as
//!    MariaDB prints them.
//! 6. **Natural-language mode**: the rows with rank > 0, highest rank first
//!    when the WHERE clause's MATCH drives the query and there is no ORDER BY
//!    (ties by primary key; InnoDB's by its hidden FTS_DOC_ID, the insertion
//!    order).
//! 7. **Boolean mode**, per parenthesised group, as InnoDB's two passes: first
//!    the `+` terms intersect (the first one seeds the set) and the `-` terms
//!    are excluded for good; then, in order, plain, `>` and `<` terms add their
//!    documents to the set (only rank, when the group has a `+` term), `>`
//!    adding 1 and `<` subtracting 1 from the document's rank adjustment, and
//!    `~` subtracts 1 from documents already in the set at that point (nothing
//!    when the group has a `+` term: InnoDB gives them no penalty then). A
//!    document's rank is its adjustment clamped to [-1, 1] plus rule 5's sum
//!    over the words that matched it; a group's rank is the sum of its terms'.
//!    `word*` matches the words beginning with `word`, ranked as one term
//!    whose `doc_count` is the number of (word, row) pairs it matches and
//!    whose `tf` in a row is that of the greatest word it matches there
//!    (InnoDB's frequency of each matched word overwrites the previous);
//!    `"a phrase"` matches documents with the phrase's words consecutive (all
//!    words counted for adjacency, stopwords and short words included). The
//!    rows returned are the rows in the set (a negative rank included).
//!
//! # Invariants
//! - [`tokenize`] is the only tokenizer: the index entries, the statistics and
//!   the per-row rank all see the same words, so the entries found for a
//!   word are a superset of the rows that contain it (they are markers, see
//!   `canyon_txn::mvcc`; the executor re-tokenizes each row it reads).
//! - The key of a word in the index is [`word_key`]: the folded word's UTF-8
//!   bytes and a 0 byte. No word contains a 0 byte, so `word*` is the key range
//!   from `word` to its byte successor and an exact word the range
//!   `[word 00, word 01)`.
//!
//! # Not implemented
//! - `WITH QUERY EXPANSION` (1235), `WITH PARSER` (ngram, MeCab; 1235),
//!   proximity search `"a b" @ 3` (1235), user stopword tables
//!   (`innodb_ft_user_stopword_table`), and the token-size variables: they are
//!   fixed at InnoDB's defaults.
//! - Quoted phrases in natural-language mode are read as their words.
//! - Accent folding: under an accent-insensitive collation `cafe` does not
//!   find `café` (InnoDB compares words with the collation, so it does).
//! - InnoDB's result cache limit (`innodb_ft_result_cache_limit`).

use std::collections::HashMap;

/// `innodb_ft_min_token_size`'s default: shorter words are not indexed.
pub const MIN_TOKEN_SIZE: usize = 3;
/// `innodb_ft_max_token_size`'s default: longer words are not indexed.
pub const MAX_TOKEN_SIZE: usize = 84;

/// InnoDB's default stopword list (`INFORMATION_SCHEMA.INNODB_FT_DEFAULT_STOPWORD`,
/// which lists `the` twice), sorted for a binary search.
pub const STOPWORDS: &[&str] = &[
    "a", "about", "an", "are", "as", "at", "be", "by", "com", "de", "en", "for", "from", "how",
    "i", "in", "is", "it", "la", "of", "on", "or", "that", "the", "this", "to", "und", "was",
    "what", "when", "where", "who", "will", "with", "www",
];

/// Whether `c` is part of a word (letters, digits and `_`, InnoDB's
/// `true_word_char`).
fn word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Calls `f` with each word of `text` in order, folded to lower case when
/// `fold` (a case-insensitive collation), short words and stopwords included
/// (phrases count them for adjacency; see [`indexed`]).
pub fn tokenize(text: &str, fold: bool, f: &mut dyn FnMut(&str)) {
    let mut word = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if word_char(c) {
            if fold {
                word.extend(c.to_lowercase());
            } else {
                word.push(c);
            }
        } else if !word.is_empty() {
            f(&word);
            word.clear();
        }
    }
}

/// Whether a (folded) word is indexed: 3 to 84 characters and not a
/// stopword.
pub fn indexed(word: &str) -> bool {
    let n = word.chars().count();
    (MIN_TOKEN_SIZE..=MAX_TOKEN_SIZE).contains(&n) && !is_stopword(word)
}

/// Whether `word` (folded) is in [`STOPWORDS`]; compared in lower case, so a
/// word under a binary collation is a stopword in any case, as InnoDB's.
pub fn is_stopword(word: &str) -> bool {
    let lower = word.to_lowercase();
    STOPWORDS.binary_search(&lower.as_str()).is_ok()
}

/// The index key of a word: its bytes and a terminating 0.
pub fn word_key(word: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(word.len() + 1);
    k.extend_from_slice(word.as_bytes());
    k.push(0);
    k
}

/// A document's words: each indexed word's occurrences, and the whole word
/// sequence (for phrases).
#[derive(Debug, Default, Clone)]
pub struct Doc {
    /// Occurrences of each indexed word.
    pub tf: HashMap<String, u32>,
    /// Every word in order, short words and stopwords included.
    pub seq: Vec<String>,
}

impl Doc {
    /// The document made of `texts` (the index's columns, NULLs left out).
    pub fn new<'a>(texts: impl IntoIterator<Item = &'a str>, fold: bool) -> Doc {
        let mut d = Doc::default();
        for t in texts {
            tokenize(t, fold, &mut |w| {
                if indexed(w) {
                    *d.tf.entry(w.to_string()).or_insert(0) += 1;
                }
                d.seq.push(w.to_string());
            });
        }
        d
    }

    /// The distinct indexed words (the index entries of the row).
    pub fn words(&self) -> impl Iterator<Item = &str> {
        self.tf.keys().map(String::as_str)
    }
}

/// The search modifier of a MATCH.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `IN NATURAL LANGUAGE MODE` (the default).
    Natural,
    /// `IN BOOLEAN MODE`.
    Boolean,
}

/// A boolean-mode operator in front of a term.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// No operator: optional, adds rank.
    None,
    /// `+`: must be present.
    Exist,
    /// `-`: must be absent.
    Ignore,
    /// `>`: raises the rank.
    Incr,
    /// `<`: lowers the rank.
    Decr,
    /// `~`: lowers the rank of rows it is in.
    Negate,
}

/// One term of a boolean search string.
#[derive(Debug, Clone)]
pub enum Atom {
    /// A word (folded).
    Word(String),
    /// `word*`: words beginning with this (folded).
    Prefix(String),
    /// `"a phrase"`: its words (folded), consecutive.
    Phrase(Vec<String>),
    /// `( ... )`.
    Group(Vec<(Op, Atom)>),
}

/// A parsed search string.
#[derive(Debug, Clone)]
pub enum Query {
    /// Natural-language mode: each distinct indexed word with the number of
    /// times the string names it (see rule 4 of the module essay).
    Natural(Vec<(String, u32)>),
    /// Boolean mode: the top-level group.
    Boolean(Vec<(Op, Atom)>),
}

/// A word or word prefix whose documents the statistics must count.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Lookup {
    /// Exactly this word.
    Word(String),
    /// Every word beginning with this.
    Prefix(String),
}

/// Parses the search string of a MATCH; `fold` as for [`tokenize`].
pub fn parse_query(text: &str, mode: Mode, fold: bool) -> canyon_common::Result<Query> {
    match mode {
        Mode::Natural => {
            let mut words: Vec<(String, u32)> = Vec::new();
            tokenize(text, fold, &mut |w| {
                if indexed(w) {
                    match words.iter_mut().find(|(x, _)| x == w) {
                        Some((_, n)) => *n += 1,
                        None => words.push((w.to_string(), 1)),
                    }
                }
            });
            Ok(Query::Natural(words))
        }
        Mode::Boolean => {
            let chars: Vec<char> = text.chars().collect();
            let mut pos = 0;
            let group = parse_group(&chars, &mut pos, fold, 0)?;
            Ok(Query::Boolean(group))
        }
    }
}

/// Reads terms until `)` (depth > 0) or the end.
fn parse_group(
    s: &[char],
    pos: &mut usize,
    fold: bool,
    depth: usize,
) -> canyon_common::Result<Vec<(Op, Atom)>> {
    if depth > 32 {
        return Err(canyon_common::Error::Syntax(
            "full-text search string nested too deeply".into(),
        ));
    }
    let mut items = Vec::new();
    let mut op = Op::None;
    while *pos < s.len() {
        let c = s[*pos];
        match c {
            '+' | '-' | '>' | '<' | '~' => {
                op = match c {
                    '+' => Op::Exist,
                    '-' => Op::Ignore,
                    '>' => Op::Incr,
                    '<' => Op::Decr,
                    _ => Op::Negate,
                };
                *pos += 1;
            }
            '(' => {
                *pos += 1;
                let g = parse_group(s, pos, fold, depth + 1)?;
                items.push((op, Atom::Group(g)));
                op = Op::None;
            }
            ')' => {
                *pos += 1;
                if depth > 0 {
                    return Ok(items);
                }
            }
            '"' => {
                *pos += 1;
                let start = *pos;
                while *pos < s.len() && s[*pos] != '"' {
                    *pos += 1;
                }
                let text: String = s[start..*pos].iter().collect();
                *pos += 1;
                let mut words = Vec::new();
                tokenize(&text, fold, &mut |w| words.push(w.to_string()));
                let mut next = *pos;
                while next < s.len() && s[next].is_whitespace() {
                    next += 1;
                }
                if next < s.len() && s[next] == '@' {
                    return Err(canyon_common::Error::Unsupported(
                        "full-text proximity search (\"...\" @ distance)".into(),
                    ));
                }
                if words.iter().any(|w| indexed(w)) {
                    items.push((op, Atom::Phrase(words)));
                }
                op = Op::None;
            }
            c if word_char(c) => {
                let mut w = String::new();
                while *pos < s.len() && word_char(s[*pos]) {
                    if fold {
                        w.extend(s[*pos].to_lowercase());
                    } else {
                        w.push(s[*pos]);
                    }
                    *pos += 1;
                }
                let prefix = *pos < s.len() && s[*pos] == '*';
                if prefix {
                    *pos += 1;
                }
                // A prefix term may be shorter than the minimum token size
                // (InnoDB looks the prefix up as it is); a whole word must be
                // indexable, else the term is dropped with its operator.
                if prefix && !w.is_empty() && !is_stopword(&w) {
                    items.push((op, Atom::Prefix(w)));
                } else if indexed(&w) {
                    items.push((op, Atom::Word(w)));
                }
                op = Op::None;
            }
            _ => {
                *pos += 1;
                op = Op::None;
            }
        }
    }
    Ok(items)
}

impl Query {
    /// The words and prefixes whose document counts the rank needs, each once.
    pub fn lookups(&self) -> Vec<Lookup> {
        let mut out = Vec::new();
        match self {
            Query::Natural(words) => {
                for (w, _) in words {
                    out.push(Lookup::Word(w.clone()));
                }
            }
            Query::Boolean(g) => group_lookups(g, &mut out),
        }
        out
    }

    /// The rank of `doc` (see the module essay): 0 for a document the
    /// search does not select. `stats` gives the IDF of each word.
    pub fn rank(&self, doc: &Doc, stats: &Stats) -> f64 {
        match self {
            Query::Natural(words) => {
                let mut rank = 0f32;
                for (w, k) in words {
                    if let Some(&tf) = doc.tf.get(w) {
                        let idf = stats.idf(w, u64::from(*k));
                        rank += (f64::from(tf) * idf * idf) as f32;
                    }
                }
                f64::from(rank)
            }
            Query::Boolean(g) => match group_rank(g, doc, stats) {
                Some(r) => f64::from(r),
                None => 0.0,
            },
        }
    }
}

fn group_lookups(g: &[(Op, Atom)], out: &mut Vec<Lookup>) {
    for (_, a) in g {
        let l = match a {
            Atom::Word(w) => Lookup::Word(w.clone()),
            Atom::Prefix(p) => Lookup::Prefix(p.clone()),
            Atom::Phrase(ws) => {
                for w in ws.iter().filter(|w| indexed(w)) {
                    let l = Lookup::Word(w.clone());
                    if !out.contains(&l) {
                        out.push(l);
                    }
                }
                continue;
            }
            Atom::Group(inner) => {
                group_lookups(inner, out);
                continue;
            }
        };
        if !out.contains(&l) {
            out.push(l);
        }
    }
}

/// Whether `doc` matches `atom`, and the weight it contributes (Σ tf·idf²
/// over the words it matched).
fn atom_weight(atom: &Atom, doc: &Doc, stats: &Stats) -> Option<f32> {
    let weight = |w: &str, tf: u32| {
        let idf = stats.idf(w, 1);
        (f64::from(tf) * idf * idf) as f32
    };
    match atom {
        Atom::Word(w) => doc.tf.get(w).map(|&tf| weight(w, tf)),
        Atom::Prefix(p) => {
            // InnoDB ranks a prefix as one term: the term frequency of the
            // greatest word it matches in the row (each matched word's
            // frequency overwrites the last, in index order), the IDF of
            // the (word, row) pairs it matches in the table.
            let tf = doc
                .tf
                .iter()
                .filter(|(w, _)| w.starts_with(p.as_str()))
                .max_by(|a, b| a.0.cmp(b.0))
                .map(|(_, &tf)| tf)?;
            let idf = stats.idf_of(stats.prefix_count.get(p).copied().unwrap_or(0));
            Some((f64::from(tf) * idf * idf) as f32)
        }
        Atom::Phrase(ws) => {
            let n = ws.len();
            let hit = n > 0 && doc.seq.windows(n).any(|win| win == ws.as_slice());
            hit.then(|| {
                ws.iter()
                    .filter(|w| indexed(w))
                    .filter_map(|w| doc.tf.get(w).map(|&tf| weight(w, tf)))
                    .sum()
            })
        }
        Atom::Group(g) => group_rank(g, doc, stats),
    }
}

/// The rank of `doc` under one boolean group, `None` when the group does not
/// select it (rule 7 of the module essay).
fn group_rank(g: &[(Op, Atom)], doc: &Doc, stats: &Stats) -> Option<f32> {
    let has_exist = g.iter().any(|(op, _)| *op == Op::Exist);
    // Pass 1: `+` and `-`.
    let mut selected = false;
    let mut adjust = 0f32;
    let mut weight = 0f32;
    for (op, a) in g {
        match op {
            Op::Exist => {
                let w = atom_weight(a, doc, stats)?;
                selected = true;
                weight += w;
            }
            Op::Ignore if atom_weight(a, doc, stats).is_some() => return None,
            _ => {}
        }
    }
    // Pass 2: the others, in order.
    for (op, a) in g {
        let bump = match op {
            Op::Exist | Op::Ignore => continue,
            Op::None => 0.0,
            Op::Incr => 1.0,
            Op::Decr => -1.0,
            Op::Negate => {
                if selected && !has_exist {
                    if let Some(w) = atom_weight(a, doc, stats) {
                        adjust = (adjust - 1.0).clamp(-1.0, 1.0);
                        weight += w;
                    }
                }
                continue;
            }
        };
        if let Some(w) = atom_weight(a, doc, stats) {
            if has_exist && !selected {
                continue;
            }
            selected = true;
            adjust = (adjust + bump).clamp(-1.0, 1.0);
            weight += w;
        }
    }
    selected.then_some(adjust + weight)
}

/// One statement's search: the parsed search string and the statistics of
/// its table at the statement's read point (computed once per statement).
#[derive(Debug, Clone)]
pub struct Search {
    /// The search string, parsed.
    pub query: Query,
    /// The table's statistics for its words.
    pub stats: Stats,
    /// The primary keys of the rows that hold at least one of the search's
    /// words (or prefixes), in key order: every row the search can select
    /// is among them.
    pub candidates: std::collections::BTreeSet<Vec<u8>>,
}

/// What the rank needs of the whole table: its number of rows and, for each
/// word of the search (prefixes expanded), the number of rows containing it.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    /// Rows in the table (`total_docs`).
    pub total_docs: u64,
    /// Rows containing each word.
    pub doc_count: HashMap<String, u64>,
    /// For each prefix (`word*`), the (word, row) pairs it matches: a row
    /// with two words of the prefix counts twice, as in InnoDB.
    pub prefix_count: HashMap<String, u64>,
}

impl Stats {
    /// The IDF of `word`, its document count taken `times` times (rule 4).
    pub fn idf(&self, word: &str, times: u64) -> f64 {
        self.idf_of(self.doc_count.get(word).copied().unwrap_or(0) * times)
    }

    /// The IDF of a term found `n` times (rows, or word-row pairs).
    pub fn idf_of(&self, n: u64) -> f64 {
        if n == 0 {
            return 0.0;
        }
        if n == self.total_docs {
            // InnoDB: log10(1) would rank a match as a non-match.
            return 1.0001f64.log10();
        }
        (self.total_docs as f64 / n as f64).log10()
    }

    /// Counts one row's words toward the lookups it matches (each word
    /// once); whether any did.
    pub fn count_doc(&mut self, doc: &Doc, lookups: &[Lookup]) -> bool {
        let mut any = false;
        for w in doc.words() {
            for l in lookups {
                match l {
                    Lookup::Word(x) if x == w => {
                        *self.doc_count.entry(w.to_string()).or_insert(0) += 1;
                        any = true;
                    }
                    Lookup::Prefix(p) if w.starts_with(p.as_str()) => {
                        *self.prefix_count.entry(p.clone()).or_insert(0) += 1;
                        any = true;
                    }
                    _ => {}
                }
            }
        }
        any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(total: u64, counts: &[(&str, u64)]) -> Stats {
        Stats {
            total_docs: total,
            doc_count: counts.iter().map(|(w, n)| (w.to_string(), *n)).collect(),
            prefix_count: HashMap::new(),
        }
    }

    #[test]
    fn tokenizer_keeps_letters_digits_underscore() {
        let mut words = Vec::new();
        tokenize("Tut_orial, a1b2 -- Été's x", true, &mut |w| {
            words.push(w.to_string())
        });
        assert_eq!(words, ["tut_orial", "a1b2", "été", "s", "x"]);
        assert!(indexed("été"));
        assert!(!indexed("ab"));
        assert!(!indexed("the"));
        assert!(!indexed(&"x".repeat(85)));
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn natural_rank_matches_innodb() {
        // MariaDB 10.11: 8 rows, 'database' in 3, one row has it twice.
        let q = parse_query("database", Mode::Natural, true).expect("parses");
        let s = stats(8, &[("database", 3)]);
        let d = Doc::new(["database database", "x"], true);
        assert_eq!(format!("{}", q.rank(&d, &s) as f32), "0.3628987");
        // A word named twice counts its documents twice.
        let q = parse_query("database database", Mode::Natural, true).expect("parses");
        let d = Doc::new(["database"], true);
        assert_eq!(format!("{}", q.rank(&d, &s) as f32), "0.015609688");
    }

    #[test]
    fn boolean_operators() {
        let s = stats(8, &[("database", 3), ("tutorial", 3)]);
        let q = parse_query(">database <tutorial", Mode::Boolean, true).expect("parses");
        let only_tutorial = Doc::new(["tutorial"], true);
        assert_eq!(
            format!("{}", q.rank(&only_tutorial, &s) as f32),
            "-0.81855065"
        );
        let q = parse_query("+database -tutorial", Mode::Boolean, true).expect("parses");
        assert_eq!(q.rank(&only_tutorial, &s), 0.0);
        let both = Doc::new(["database tutorial"], true);
        assert_eq!(q.rank(&both, &s), 0.0);
        let q = parse_query("\"database tutorial\"", Mode::Boolean, true).expect("parses");
        assert!(q.rank(&both, &s) > 0.0);
        assert_eq!(q.rank(&Doc::new(["tutorial database"], true), &s), 0.0);
        let q = parse_query("data*", Mode::Boolean, true).expect("parses");
        assert_eq!(q.rank(&both, &s), 0.0, "no (word, row) pairs counted");
        // MariaDB 10.11: 10 rows, apple in 4, applet in 4: 'app*' is one term
        // of 8 pairs; a row's frequency is applet's.
        let mut s = stats(10, &[]);
        s.prefix_count.insert("app".into(), 8);
        let q = parse_query("app*", Mode::Boolean, true).expect("parses");
        let d = Doc::new(["apple apple applet"], true);
        assert_eq!(format!("{}", q.rank(&d, &s) as f32), "0.009391551");
        let d = Doc::new(["applet applet apple"], true);
        assert_eq!(format!("{}", q.rank(&d, &s) as f32), "0.018783102");
    }
}
