//! What a statement may cost before the rest of the engine sees it: stack
//! depth, memory, and the shape of its text. No statement, however written,
//! may abort the server (a stack overflow kills the whole process, not one
//! connection) or take the memory every other session needs.
//!
//! # Why the stack needs an argument
//! Parsing, binding, planning, evaluation and the destruction of parsed trees
//! all recurse over the statement's tree, and a tree's depth is the client's
//! choice. sqlparser bounds its own recursion (`RECURSION_LIMIT` in `parse`),
//! but two loops of its grammar build trees deeper than the recursion that
//! built them: an operator chain `1+1+1+...` (or `a OR b OR c ...`, `x IS NULL
//! IS NULL ...`) becomes a left-deep `Expr` tree one level per operator, and a
//! set-operation chain `SELECT 1 UNION SELECT 1 ...` a left-deep `SetExpr`
//! tree one level per operator. Neither loop recurses, so sqlparser accepts
//! them at any length — and dropping, cloning or binding the result recurses
//! once per level. Before this module, 135,000 `+` terms overflowed the stack
//! in `Drop` after the binder had already refused the tree.
//!
//! # The rules
//! Every statement passes these, in this order, in [`crate::parse`]:
//!
//! 1. **Shape** ([`scan`]): one linear pass over the text, working on bytes
//!    but slicing only at ASCII positions (so never inside a character),
//!    counts the tokens sqlparser will make and the set operators. More than
//!    [`MAX_SET_OPERATIONS`] set operators: [`Error::TooDeep`] before
//!    anything is built.
//! 2. **Memory** ([`crate::catalog::budget::MemoryBudget::reserve`]): every token costs a
//!    `TokenWithSpan` and every token that is not `,` `(` `)` `;` `.` a tree
//!    node too ([`Shape::memory`]); the estimate must fit the per-statement
//!    limit and what is left of the server-wide budget, else
//!    [`Error::OutOfMemory`] (1037) before anything is built. The reservation
//!    is held until the statement's result is made.
//! 3. **Whitespace**: a text of [`COMPACT_FROM`] bytes or more has each run of
//!    whitespace outside quotes and comments cut to one character, because
//!    sqlparser makes one token (~90 bytes) of every whitespace character and
//!    then steps over each of them on every look-ahead.
//! 4. **Depth** ([`check_depth`]): after parsing, a statement with more tokens
//!    than [`MAX_EXPR_DEPTH`] (fewer cannot be that deep) is walked once; an
//!    expression nested deeper than [`MAX_EXPR_DEPTH`], counted through
//!    subqueries (the binder's recursion is the sum over the nested blocks),
//!    is refused with [`Error::TooDeep`] and the tree is taken apart by
//!    [`dispose`], which never recurses through an expression.
//!
//! Past the gate every tree is at most [`MAX_EXPR_DEPTH`] expressions and
//! [`MAX_SET_OPERATIONS`] set operations deep, and queries are nested at most
//! `RECURSION_LIMIT` deep; planning a WITH clause recurses once per element,
//! at most [`canyon_common::MAX_WITH_ELEMENTS`] (4003 beyond). Each recursive
//! path of the engine therefore needs a bounded stack: [`STATEMENT_STACK`].
//!
//! 5. **Stack** ([`with_statement_stack`]): the session runs every statement
//!    where at least [`STATEMENT_STACK`] is left — on the calling thread
//!    when it has that much (the server's workers have 8 MiB, so the hot
//!    path pays one comparison), else on a fresh stack of that size
//!    (threads of tests and embedders have 2 MiB).
//! 6. **Last line** ([`check_stack`]): the binder and planner check the stack
//!    left before each recursive step and answer [`Error::StackOverrun`]
//!    (1436, as MySQL's `check_stack_overrun`) instead of running off the
//!    end. Reaching it means one of the bounds above is missing a case: the
//!    client gets an error, and the tests that search for each construct's
//!    largest accepted size (`tests/limits.rs`) show that it is not reached.
//!
//! sqlparser's own `Visit` and expression `Display` grow their stack on
//! demand (its `recursive-protection` feature), so [`check_depth`],
//! [`dispose`] and [`count_placeholders`] are safe at any depth. Its derived
//! `Clone` is not, and copies a whole `Select` inline per set-operation level
//! (3.5 KiB of stack each): the planner copies query bodies through
//! [`clone_query`] and [`clone_set_expr`], which run the copy on a stack
//! sized for the chain. sqlparser's `Drop` of a refused or half-built tree is
//! covered by [`with_parse_stack`].
//!
//! # Not bounded here
//! Execution memory (a large sort or join result is held in memory) and the
//! time a statement takes to plan: KILL and `max_execution_time` stop parsing
//! (see `parse::Interrupt`), and large texts are parsed off the
//! connection-serving workers (see `Session::execute`).

use canyon_common::{Error, Result};
use sqlparser::ast::{
    Expr, Query, SetExpr, Statement, Value, Values, Visit, VisitMut, Visitor, VisitorMut,
};
use std::ops::ControlFlow;

/// Deepest expression nesting a statement may have, counted from the
/// statement down through every subquery. The binder's own limit
/// ([`crate::expr::MAX_DEPTH`]) applies per expression and is lower.
pub const MAX_EXPR_DEPTH: usize = 1000;

/// Most set operators (UNION, INTERSECT, EXCEPT, MINUS) one statement may
/// hold: sqlparser nests one `SetExpr` level per operator.
pub const MAX_SET_OPERATIONS: usize = 10_000;

/// Most CTE references one statement may plan: each plans the CTE's body
/// again, so a chain of CTEs that each read the one before twice would
/// otherwise plan 2^n bodies (1235 beyond, until CTEs are materialised).
pub const MAX_CTE_EXPANSIONS: usize = 10_000;

/// Texts at least this long have their whitespace runs compacted (rule 3).
/// Shorter texts are parsed as written, so error messages quote them exactly.
pub const COMPACT_FROM: usize = 64 << 10;

/// What one token costs while its statement is parsed: sqlparser's token.
pub const TOKEN_BYTES: usize = std::mem::size_of::<sqlparser::tokenizer::TokenWithSpan>();

/// What a token that is not punctuation costs on top of [`TOKEN_BYTES`]: the
/// tree node made of it, an `Expr` at most (328 bytes in sqlparser 0.63).
/// Measured peaks (VmHWM, release build, parse of one text) against
/// [`Shape::memory`]: `SELECT 1 IN (1,1,...)` of 2 MB: 542 MB, estimate 571;
/// a 2 MB `1+1+...` chain (refused for depth, then disposed): 830 MB,
/// estimate 1,040; a 2.8 MB multi-row INSERT `(12345,'abcdefgh',4.5,NULL)`:
/// 260 MB, estimate 337.
pub const NODE_BYTES: usize = std::mem::size_of::<Expr>();

/// Stack a statement runs with (rule 5): the deepest tree the gate accepts
/// needs well under half of it (`tests/limits.rs` runs each on it).
pub const STATEMENT_STACK: usize = 4 << 20;

/// Stack [`check_stack`] wants left before a recursive step: more than the
/// largest frames between two checks.
pub const STACK_RED_ZONE: usize = 256 << 10;

/// What one linear pass over a statement's text finds (rule 1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Shape {
    /// Tokens sqlparser will make of the text (an upper bound: multi-character
    /// operators and numbers with a point count as several).
    pub tokens: usize,
    /// Tokens other than the punctuation `,` `(` `)` `;` `.`: those that may
    /// become a node of the tree.
    pub nodes: usize,
    /// UNION, INTERSECT, EXCEPT and MINUS outside quotes and comments.
    pub set_operations: usize,
}

impl Shape {
    /// Bytes a statement of this shape is estimated to need while parsed
    /// and planned: its tokens and its nodes, plus a quarter for the slack
    /// of vectors grown by doubling (see [`NODE_BYTES`] for measurements).
    pub fn memory(&self) -> usize {
        let bytes = self
            .tokens
            .saturating_mul(TOKEN_BYTES)
            .saturating_add(self.nodes.saturating_mul(NODE_BYTES));
        bytes.saturating_add(bytes / 4)
    }
}

/// What [`pieces`] cuts a text into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Piece {
    /// One whitespace character.
    Space,
    /// A quoted string or identifier, a comment, a word or one punctuation
    /// character.
    Token,
    /// A bare word.
    Word,
}

/// Whether `c` is whitespace to sqlparser's tokenizer.
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// Whether `c` continues a bare word: ASCII letters, digits, `_`, `$`, and
/// every byte of a non-ASCII character (so a word never ends inside one).
fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

/// Calls `f` with each piece of `text` and its byte range, in order. Every
/// range starts and ends at an ASCII byte or at the text's ends, so slicing
/// `text` with it is always at a character boundary. Linear in the text.
fn pieces(text: &str, mut f: impl FnMut(Piece, usize, usize)) {
    let b = text.as_bytes();
    let n = b.len();
    let mut i = 0;
    while i < n {
        let c = b[i];
        let start = i;
        let piece = if is_space(c) {
            i += 1;
            Piece::Space
        } else if matches!(c, b'\'' | b'"' | b'`') {
            // MySQL's quoting: a doubled quote stands for itself, and in
            // strings (not identifiers) a backslash escapes the next byte.
            i += 1;
            while i < n {
                if b[i] == b'\\' && c != b'`' {
                    i += 2;
                } else if b[i] == c {
                    i += 1;
                    if i < n && b[i] == c {
                        i += 1;
                    } else {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            i = i.min(n);
            Piece::Token
        } else if c == b'#'
            || (c == b'-'
                && b.get(i + 1) == Some(&b'-')
                && b.get(i + 2).is_none_or(|&d| is_space(d)))
        {
            while i < n && b[i] != b'\n' {
                i += 1;
            }
            Piece::Token
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i = match text[i + 2..].find("*/") {
                Some(end) => i + 2 + end + 2,
                None => n,
            };
            Piece::Token
        } else if is_word(c) {
            while i < n && is_word(b[i]) {
                i += 1;
            }
            Piece::Word
        } else {
            i += 1;
            Piece::Token
        };
        f(piece, start, i);
    }
}

/// Rule 1: the tokens and set operators of `text`, in one pass.
pub fn scan(text: &str) -> Shape {
    let mut shape = Shape::default();
    pieces(text, |piece, start, end| {
        shape.tokens += 1;
        if !(end == start + 1 && matches!(text.as_bytes()[start], b',' | b'(' | b')' | b';' | b'.'))
            && piece != Piece::Space
        {
            shape.nodes += 1;
        }
        if piece == Piece::Word {
            let w = &text.as_bytes()[start..end];
            if [&b"UNION"[..], b"INTERSECT", b"EXCEPT", b"MINUS"]
                .iter()
                .any(|k| w.eq_ignore_ascii_case(k))
            {
                shape.set_operations += 1;
            }
        }
    });
    shape
}

/// Rule 3: `text` with every run of whitespace outside quotes and comments
/// cut to one character (a newline if the run held one, so a `--` comment
/// still ends where it did).
pub fn compact_whitespace(text: &str) -> String {
    let mut out = String::with_capacity(text.len() / 2);
    let mut run: Option<(usize, bool)> = None;
    pieces(text, |piece, start, end| {
        if piece == Piece::Space {
            let newline = text.as_bytes()[start] == b'\n';
            run = Some(match run {
                None => (start, newline),
                Some((s, nl)) => (s, nl || newline),
            });
            return;
        }
        if let Some((_, newline)) = run.take() {
            out.push(if newline { '\n' } else { ' ' });
        }
        out.push_str(&text[start..end]);
    });
    if let Some((_, newline)) = run {
        out.push(if newline { '\n' } else { ' ' });
    }
    out
}

/// Rule 4: refuses a statement whose expressions nest deeper than
/// [`MAX_EXPR_DEPTH`], counting through subqueries. `tokens` is the
/// statement text's token count: a tree cannot be deeper than its tokens, so
/// short statements (every OLTP statement) are not walked at all.
pub fn check_depth(stmt: &Statement, tokens: usize) -> Result<()> {
    if tokens <= MAX_EXPR_DEPTH {
        return Ok(());
    }
    struct Depth(usize);
    impl Visitor for Depth {
        type Break = ();
        fn pre_visit_expr(&mut self, _: &Expr) -> ControlFlow<()> {
            self.0 += 1;
            if self.0 > MAX_EXPR_DEPTH {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        }
        fn post_visit_expr(&mut self, _: &Expr) -> ControlFlow<()> {
            self.0 -= 1;
            ControlFlow::Continue(())
        }
    }
    match Visit::visit(stmt, &mut Depth(0)) {
        ControlFlow::Continue(()) => Ok(()),
        ControlFlow::Break(()) => Err(Error::TooDeep),
    }
}

/// A cheap leaf to leave where an expression was taken out.
fn leaf_expr() -> Expr {
    Expr::Value(Value::Null.into())
}

/// A cheap leaf to leave where a query body was taken out.
fn leaf_body() -> Box<SetExpr> {
    Box::new(SetExpr::Values(Values {
        explicit_row: false,
        value_keyword: false,
        rows: Vec::new(),
    }))
}

/// Drops a statement of any depth without recursing through its
/// expressions or set operations: a refused tree is one the ordinary `Drop`
/// could overflow the stack on.
///
/// A post-order walk (sqlparser's `VisitMut`, which grows its own stack)
/// replaces each expression by a leaf once its children have been, dropping
/// it then (one level deep), and takes each query body's chain of set
/// operations apart with a work list. Linear in the tree's size, and it
/// frees as it goes: no memory beyond the tree's.
pub fn dispose(mut stmt: Statement) {
    struct Detach;
    impl VisitorMut for Detach {
        type Break = ();
        fn post_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
            // Post-order: `e`'s children are leaves already, so this drop
            // is one level deep.
            drop(std::mem::replace(e, leaf_expr()));
            ControlFlow::Continue(())
        }
        fn post_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
            // The query's expressions (and its nested queries) are leaves by
            // now; its set-operation chain is taken apart with a work list.
            let mut work = vec![std::mem::replace(&mut q.body, leaf_body())];
            while let Some(mut body) = work.pop() {
                if let SetExpr::SetOperation { left, right, .. } = &mut *body {
                    work.push(std::mem::replace(left, leaf_body()));
                    work.push(std::mem::replace(right, leaf_body()));
                }
                drop(body);
            }
            ControlFlow::Continue(())
        }
    }
    let _ = VisitMut::visit(&mut stmt, &mut Detach);
}

/// Rule 6: an error instead of a stack overflow when less than
/// [`STACK_RED_ZONE`] is left. Called before each recursive step of the
/// binder and the planner.
pub fn check_stack() -> Result<()> {
    match stacker::remaining_stack() {
        Some(remaining) if remaining < STACK_RED_ZONE => Err(Error::StackOverrun {
            remaining,
            needed: STACK_RED_ZONE,
        }),
        _ => Ok(()),
    }
}

/// Stack a parse needs per token of a text that may hold a deep tree: what
/// `Drop` of one level of a left-deep expression chain takes (measured in
/// `tests/limits.rs`, with room to spare).
pub const PARSE_STACK_PER_TOKEN: usize = 256;

/// Runs the parse of a text of `shape` on a stack deep enough for sqlparser
/// to drop, on its error paths, the deepest tree the text can hold: a syntax
/// error after 135,000 `+` terms drops a 135,000-deep tree inside the parser,
/// where no depth check can come first. A text of at most [`MAX_EXPR_DEPTH`]
/// tokens cannot hold a tree deeper than the gate allows anyway and parses
/// where it is; a longer one gets a fresh stack of
/// [`PARSE_STACK_PER_TOKEN`] per token. That stack is address space: only
/// what a deep drop touches becomes memory, less than the tree it drops.
pub fn with_parse_stack<R>(shape: &Shape, f: impl FnOnce() -> R) -> R {
    if shape.tokens <= MAX_EXPR_DEPTH {
        return f();
    }
    let size = STATEMENT_STACK.saturating_add(shape.tokens.saturating_mul(PARSE_STACK_PER_TOKEN));
    stacker::grow(size, f)
}

/// Stack one level of a set-operation chain takes when sqlparser's derived
/// `Clone` copies it: `SetExpr::clone` copies a whole `Select` inline, 3.5 KiB
/// per level measured (release build), doubled for room.
pub const CLONE_STACK_PER_SET_LEVEL: usize = 8 << 10;

/// How deep `e`'s tree of set operations is, found without recursion.
pub fn set_depth(e: &SetExpr) -> usize {
    let mut deepest = 0;
    let mut work = vec![(e, 1usize)];
    while let Some((e, d)) = work.pop() {
        deepest = deepest.max(d);
        if let SetExpr::SetOperation { left, right, .. } = e {
            work.push((left, d + 1));
            work.push((right, d + 1));
        }
    }
    deepest
}

/// `e.clone()` on a stack deep enough for its set-operation chain: the
/// planner copies operand chains into synthesized query blocks, and a
/// 10,000-operator chain would need 35 MiB of stack for the copy.
pub fn clone_set_expr(e: &SetExpr) -> SetExpr {
    let depth = set_depth(e);
    if depth < 64 {
        return e.clone();
    }
    stacker::grow(
        STATEMENT_STACK.saturating_add(depth.saturating_mul(CLONE_STACK_PER_SET_LEVEL)),
        || e.clone(),
    )
}

/// `q.clone()` on a stack deep enough for its body's set operations (see
/// [`clone_set_expr`]).
pub fn clone_query(q: &Query) -> Query {
    let depth = set_depth(&q.body);
    if depth < 64 {
        return q.clone();
    }
    stacker::grow(
        STATEMENT_STACK.saturating_add(depth.saturating_mul(CLONE_STACK_PER_SET_LEVEL)),
        || q.clone(),
    )
}

/// `s.clone()` on a stack deep enough for the set operations of every query
/// in it (EXPLAIN copies the statement it plans).
pub fn clone_statement(s: &Statement) -> Statement {
    struct Deepest(usize);
    impl Visitor for Deepest {
        type Break = ();
        fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<()> {
            self.0 = self.0.max(set_depth(&q.body));
            ControlFlow::Continue(())
        }
    }
    let mut deepest = Deepest(0);
    let _ = Visit::visit(s, &mut deepest);
    if deepest.0 < 64 {
        return s.clone();
    }
    stacker::grow(
        STATEMENT_STACK.saturating_add(deepest.0.saturating_mul(CLONE_STACK_PER_SET_LEVEL)),
        || s.clone(),
    )
}

/// The `?` placeholders in `q` (a query, a select item, an expression),
/// counted by sqlparser's `Visit` (which grows its stack) rather than by
/// printing and scanning the text again: `Display` recurses once per set
/// operation without that protection, and a printed quoted name can hold a
/// `?` or an unbalanced quote (`@`a?``, found by the `sql` fuzz target).
pub fn count_placeholders<V: Visit>(q: &V) -> usize {
    struct Count(usize);
    impl Visitor for Count {
        type Break = ();
        fn pre_visit_value(&mut self, v: &sqlparser::ast::ValueWithSpan) -> ControlFlow<()> {
            if matches!(&v.value, Value::Placeholder(p) if p == "?") {
                self.0 += 1;
            }
            ControlFlow::Continue(())
        }
    }
    let mut count = Count(0);
    let _ = Visit::visit(q, &mut count);
    count.0
}

/// Rule 5: runs `f` with at least [`STATEMENT_STACK`] of stack left: here
/// when the thread has it, else on a fresh stack of that size.
pub fn with_statement_stack<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(STATEMENT_STACK, STATEMENT_STACK, f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_counts_tokens_and_set_operators_outside_quotes() {
        let s =
            scan("SELECT 'union' UNION ALL select `except` /* union */ except SELECT 1 -- union\n");
        assert_eq!(s.set_operations, 2);
        let s = scan("select 1");
        assert_eq!(s.tokens, 3);
        // Non-ASCII anywhere, including where a keyword matcher would slice.
        for text in [
            "éé",
            "/*ñ*/ SELECT 1",
            "SELECT 'ñ",
            "ñUNION",
            "`é",
            "\"\\",
            "--",
            "/*",
        ] {
            let _ = scan(text);
            let _ = compact_whitespace(text);
        }
        assert_eq!(scan("ñUNION").set_operations, 0);
    }

    #[test]
    fn compaction_keeps_quotes_comments_and_line_ends() {
        assert_eq!(
            compact_whitespace("SELECT   'a   b'  ,\n\n  \"c  d\" -- x  y\n   FROM  t  "),
            "SELECT 'a   b' ,\n\"c  d\" -- x  y\nFROM t "
        );
        assert_eq!(compact_whitespace("a/*  */  b"), "a/*  */ b");
    }

    #[test]
    fn budget_refuses_over_the_limit_and_gives_back_on_drop() {
        let budget = crate::catalog::budget::MemoryBudget::new(9 << 20, 6 << 20);
        let big = Shape {
            tokens: (4 << 20) / (TOKEN_BYTES + NODE_BYTES),
            nodes: (4 << 20) / (TOKEN_BYTES + NODE_BYTES),
            set_operations: 0,
        };
        assert!(big.memory() <= 5 << 20 && big.memory() > 4 << 20);
        let r = budget.reserve(big.memory()).expect("fits");
        assert_eq!(budget.used(), big.memory());
        assert!(matches!(
            budget.reserve(big.memory()),
            Err(Error::OutOfMemory {
                limit: "statement_memory_budget",
                ..
            })
        ));
        drop(r);
        assert_eq!(budget.used(), 0);
        let huge = Shape {
            tokens: (7 << 20) / TOKEN_BYTES,
            nodes: 0,
            set_operations: 0,
        };
        assert!(matches!(
            budget.reserve(huge.memory()),
            Err(Error::OutOfMemory {
                limit: "statement_memory_limit",
                ..
            })
        ));
        assert!(budget.reserve(Shape::default().memory()).is_ok());
    }

    #[test]
    fn stack_check_passes_with_room() {
        with_statement_stack(|| assert!(check_stack().is_ok()));
    }
}
