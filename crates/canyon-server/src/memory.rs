//! One memory budget, divided: what `memory_budget_bytes` sets.
//!
//! # Why one setting
//! The server's memory has five sizeable users, each with a size of its own:
//! RocksDB's block cache (`block_cache_bytes`, 512 MiB by default), RocksDB's
//! memtables (up to 512 MiB together), the row cache (`row_cache_bytes`,
//! 256 MiB), old row versions kept for snapshots (`history_memory_bytes`,
//! 128 MiB) and statement parsing (`statement_memory_budget`, up to 1 GiB of
//! estimated parse memory). Each default is sound on its own; together they
//! may reach 2.4 GiB, and an operator who gives the server a container of
//! 768 MiB has five numbers to lower and no way to know what is left for the
//! rest. InnoDB users set one number, `innodb_buffer_pool_size`; this is
//! Canyon's.
//!
//! # The division
//! Of a budget B:
//!
//! | share | goes to | why this much |
//! |-------|---------|---------------|
//! | 50 %  | RocksDB's block cache, *with the memtables charged to it* (at most B/8 of it: RocksDB's `WriteBufferManager` with the cache) | the blocks are what a read larger than memory misses; the memtables take their place in the cache while they are large and give it back when flushed; past B/8 writers wait for a flush (`allow_stall`). The cache's capacity is not strict: memtables past it do not evict below zero |
//! | 10 %  | the row cache | hot rows (sysbench's pareto, TPC-C's district and warehouse rows) found by one hash lookup; a small share suffices, as it holds rows, not blocks |
//! | 5 %   | old row versions | past it they go to RocksDB: a long snapshot costs disk, not memory |
//! | 35 %  | not handed out: the reserve | what no setting sizes: connections and their buffers, sessions, the catalog, RocksDB's table readers, iterators and compaction buffers, and the allocator's free memory — and statement parsing (below) |
//!
//! Parsing is not a standing use but a passing one, and can be a large one:
//! a parse is estimated before it runs by its tokens and nodes (canyon-sql's
//! `parse::limits`, measured against VmHWM), about 120 bytes per byte for a
//! multi-row INSERT of small values, so one of the 1 MiB INSERTs mariadb-dump
//! writes by default may need ~126 MiB while it is parsed (sysbench's 519 KB
//! prepare batches, whose values are long strings, need a few MiB). Parses are
//! therefore allowed `max(B/4, 128 MiB)` of estimated memory together (and
//! one parse no more than that, nor than its own default), drawn from the
//! reserve: a restore runs in a small budget, and only many large
//! statements parsed at once with every cache full could pass the budget.
//!
//! Each memtable is a quarter of the memtables' share (capped at the
//! defaults, 64 MiB and 32 MiB for Rows): one column family then fills its
//! share only after four flushes' worth of writes, and a flush writes an L0
//! file of a useful size.
//!
//! Not yet a bound everywhere: during a long load (8 clients, 8 × 800,000
//! rows, two `CREATE INDEX` beside the inserts) a 154 MiB budget's server
//! peaked at 278-322 MiB resident with the block cache at 77 MiB and the
//! memtables at 9 MiB: the reserve's users took more than their 35 %
//! (docs/benchmarks.md, "Session 47 A/B"; issue 28 has it as the next step).
//!
//! The kernel's page cache is not in the budget: with buffered I/O RocksDB's
//! compressed blocks are cached there too, and a memory cgroup charges them
//! to the server. The kernel reclaims them under the cgroup's limit, so they
//! cost speed, not an OOM kill; `direct_io` keeps them out altogether.
//!
//! # The allocator is held to the budget too
//! Every allocation, RocksDB's C++ included (the `override` feature of the
//! `mimalloc` crate makes it the process's `malloc`), goes to mimalloc. By
//! default mimalloc (version 3) commits its arenas eagerly and keeps freed
//! memory a second before it gives it back; memory it releases from an
//! eagerly committed arena stays charged to a memory cgroup. Under a budget
//! the server runs with `MIMALLOC_ARENA_EAGER_COMMIT=0` and
//! `MIMALLOC_PURGE_DELAY=0` ([`reexec_for_budget`]): arena memory is
//! committed as it is used and freed memory is returned at once, so the
//! transient memory of statements (parses, write sets, commit batches)
//! leaves the resident set when they end. mimalloc reads these at its own
//! start, before `main`, so the server sets them by executing itself again.
//! Measured (2 vCPUs; 8 sysbench clients loading 8 × 200,000 rows, then 20 s
//! of oltp_read_write, budget 154 MiB, memory cgroup limit 256 MiB): with
//! glibc's malloc under RocksDB the server was OOM-killed within a second of
//! the load; with mimalloc and its defaults, too; with the two settings it
//! loaded and ran with 149 MiB resident and 104 MiB of page cache. Outside a
//! cgroup the same load peaked at 576 MiB resident (glibc), 564 MiB (mimalloc)
//! and 282 MiB (mimalloc, both settings), at the same point-select
//! throughput.

use crate::config::{Config, ConfigError};
use std::os::unix::process::CommandExt;

/// The smallest budget: below it the shares are too small to run with (a
/// memtable of a few MiB flushes constantly).
pub const MIN_BUDGET: u64 = 64 << 20;

/// What a budget gives each memory user, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryPlan {
    /// RocksDB's block cache, memtables included when `charge_write_buffers`.
    pub block_cache: u64,
    /// The memtables' cap, all column families together.
    pub write_buffers: u64,
    /// One memtable of every keyspace but Rows.
    pub write_buffer: u64,
    /// One memtable of Rows.
    pub rows_write_buffer: u64,
    /// Whether the memtables are charged to the block cache.
    pub charge_write_buffers: bool,
    /// The row cache.
    pub row_cache: u64,
    /// Old row versions kept in memory.
    pub history: u64,
    /// One statement's estimated parse memory.
    pub statement_limit: u64,
    /// All statements' estimated parse memory at once.
    pub statement_budget: u64,
}

impl MemoryPlan {
    /// The plan `config` asks for: the budget divided (module doc), or, with
    /// no budget, each size as set and RocksDB's memtable defaults.
    pub fn of(config: &Config) -> MemoryPlan {
        let rocks = canyon_rocksdb::RocksOptions::default();
        let b = config.memory_budget_bytes;
        if b == 0 {
            return MemoryPlan {
                block_cache: config.block_cache_bytes,
                write_buffers: rocks.total_write_buffer_bytes as u64,
                write_buffer: rocks.write_buffer_bytes as u64,
                rows_write_buffer: rocks.rows_write_buffer_bytes as u64,
                charge_write_buffers: false,
                row_cache: config.row_cache_bytes,
                history: config.history_memory_bytes,
                statement_limit: config.statement_memory_limit,
                statement_budget: config.statement_memory_budget,
            };
        }
        let write_buffers = b / 8;
        let statements = (b / 4).max(128 << 20);
        let plan = MemoryPlan {
            block_cache: b / 2,
            write_buffers,
            write_buffer: (write_buffers / 4).min(rocks.write_buffer_bytes as u64),
            rows_write_buffer: (write_buffers / 4).min(rocks.rows_write_buffer_bytes as u64),
            charge_write_buffers: true,
            row_cache: b / 10,
            history: b / 20,
            statement_limit: statements.min(config.statement_memory_limit),
            statement_budget: statements,
        };
        debug_assert!(
            plan.block_cache + plan.row_cache + plan.history <= b * 13 / 20,
            "the standing shares leave the reserve: {plan:?} of {b}"
        );
        plan
    }

    /// Config::validate's part: a budget is at least [`MIN_BUDGET`], and the
    /// sizes it divides are not also set (which of the two would win is not
    /// something an operator should have to remember). A size is "set" when it
    /// differs from its default.
    pub fn check(config: &Config) -> Result<(), ConfigError> {
        let b = config.memory_budget_bytes;
        if b == 0 {
            return Ok(());
        }
        if b < MIN_BUDGET {
            return Err(ConfigError(format!(
                "memory_budget_bytes must be 0 (unset) or at least {MIN_BUDGET} (64 MiB), not {b}"
            )));
        }
        let d = Config::default();
        let set: Vec<&str> = [
            (
                "block_cache_bytes",
                config.block_cache_bytes != d.block_cache_bytes,
            ),
            (
                "row_cache_bytes",
                config.row_cache_bytes != d.row_cache_bytes,
            ),
            (
                "history_memory_bytes",
                config.history_memory_bytes != d.history_memory_bytes,
            ),
            (
                "statement_memory_budget",
                config.statement_memory_budget != d.statement_memory_budget,
            ),
        ]
        .into_iter()
        .filter_map(|(name, differs)| differs.then_some(name))
        .collect();
        if !set.is_empty() {
            return Err(ConfigError(format!(
                "memory_budget_bytes divides the server's memory itself: leave {} unset, or \
                 set memory_budget_bytes = 0",
                set.join(", ")
            )));
        }
        Ok(())
    }

    /// RocksDB's options for this plan (`direct_io` as configured).
    pub fn rocks_options(&self, config: &Config) -> canyon_rocksdb::RocksOptions {
        let size = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        canyon_rocksdb::RocksOptions {
            block_cache_bytes: size(self.block_cache),
            total_write_buffer_bytes: size(self.write_buffers),
            write_buffer_bytes: size(self.write_buffer),
            rows_write_buffer_bytes: size(self.rows_write_buffer),
            charge_write_buffers_to_cache: self.charge_write_buffers,
            direct_io: config.direct_io,
            block_size_bytes: usize::try_from(config.block_size_bytes).unwrap_or(16 << 10),
            ..Default::default()
        }
    }
}

/// mimalloc's settings under a budget (module doc).
pub const ALLOCATOR_ENV: [(&str, &str); 2] = [
    ("MIMALLOC_ARENA_EAGER_COMMIT", "0"),
    ("MIMALLOC_PURGE_DELAY", "0"),
];

/// Under a memory budget, executes the server again with [`ALLOCATOR_ENV`]
/// in its environment, unless each variable is already set (by an earlier
/// exec, or by the operator, whose values stand). Call it first thing, before
/// any thread starts. Returns only when there is nothing to do (`Ok`) or the
/// exec failed (the server then runs with mimalloc's defaults).
pub fn reexec_for_budget(config: &Config) -> std::io::Result<()> {
    let missing: Vec<_> = ALLOCATOR_ENV
        .iter()
        .filter(|(k, _)| std::env::var_os(k).is_none())
        .collect();
    if config.memory_budget_bytes == 0 || missing.is_empty() {
        return Ok(());
    }
    let mut again = std::process::Command::new(std::env::current_exe()?);
    again.args(std::env::args_os().skip(1));
    for (k, v) in missing {
        again.env(k, v);
    }
    Err(again.exec())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn no_budget_keeps_each_size_as_set() {
        let mut c = Config {
            block_cache_bytes: 100 * MIB,
            row_cache_bytes: 0,
            ..Config::default()
        };
        let p = MemoryPlan::of(&c);
        assert_eq!(p.block_cache, 100 * MIB);
        assert_eq!(p.row_cache, 0);
        assert!(!p.charge_write_buffers);
        assert_eq!(p.write_buffers, 512 * MIB);
        c.memory_budget_bytes = 0;
        assert!(MemoryPlan::check(&c).is_ok());
    }

    #[test]
    fn a_budget_is_divided_and_leaves_a_reserve() {
        let c = Config {
            memory_budget_bytes: 512 * MIB,
            ..Config::default()
        };
        MemoryPlan::check(&c).expect("a budget alone is valid");
        let p = MemoryPlan::of(&c);
        assert_eq!(p.block_cache, 256 * MIB);
        assert_eq!(p.write_buffers, 64 * MIB);
        assert_eq!(p.write_buffer, 16 * MIB);
        assert_eq!(p.rows_write_buffer, 16 * MIB);
        assert!(
            p.charge_write_buffers,
            "memtables count inside the cache's share"
        );
        let standing = p.block_cache + p.row_cache + p.history;
        assert!(standing <= 512 * MIB * 13 / 20, "{standing}");
        // mariadb-dump's 1 MiB INSERTs are estimated at ~126 MiB of parse
        // memory: a restore must fit.
        assert!(p.statement_limit >= 128 * MIB, "{}", p.statement_limit);
    }

    #[test]
    fn a_large_budget_keeps_the_memtable_defaults() {
        let c = Config {
            memory_budget_bytes: 64 << 30,
            ..Config::default()
        };
        let p = MemoryPlan::of(&c);
        assert_eq!(p.write_buffer, 64 * MIB);
        assert_eq!(p.rows_write_buffer, 32 * MIB);
        assert_eq!(
            p.statement_limit,
            Config::default().statement_memory_limit,
            "one statement's limit is never raised past its default"
        );
    }

    #[test]
    fn a_budget_with_a_size_of_its_own_is_refused() {
        let c = Config {
            memory_budget_bytes: 512 * MIB,
            row_cache_bytes: 0,
            ..Config::default()
        };
        let e = MemoryPlan::check(&c).expect_err("both set");
        assert!(e.0.contains("row_cache_bytes"), "{e:?}");
        let tiny = Config {
            memory_budget_bytes: MIB,
            ..Config::default()
        };
        assert!(MemoryPlan::check(&tiny).is_err());
    }
}
