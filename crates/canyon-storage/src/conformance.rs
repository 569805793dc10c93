//! The conformance suite: checks that every [`Storage`] implementation must pass.
//!
//! Each `check_*` function takes a fresh, empty storage, exercises one clause of the
//! [`Storage`] contract and panics (through `assert!`) on the first violation. They
//! are ordinary library code, not `#[cfg(test)]`, so that every implementation's
//! crate runs the very same checks:
//!
//! ```text
//! // in crates/<impl>/tests/conformance.rs
//! canyon_storage::storage_conformance_tests!(|| -> Arc<dyn Storage> { Arc::new(MyStorage::new()) });
//! ```
//!
//! [`storage_conformance_tests!`](crate::storage_conformance_tests) expands to one
//! `#[test]` per check (named after it), plus a test that the expansion names every
//! entry of [`CHECKS`]; [`run_all`] runs them all in one go:
//!
//! ```
//! use canyon_storage::{conformance, MemoryStorage, Storage};
//! use std::sync::Arc;
//!
//! conformance::run_all(&|| -> Arc<dyn Storage> { Arc::new(MemoryStorage::new()) });
//! ```
//!
//! | check | contract clause |
//! |---|---|
//! | [`check_empty_storage`] | a new storage is empty; empty batches and `sync` succeed |
//! | [`check_get_put_overwrite`] | point reads see the latest write |
//! | [`check_delete_absent_key`] | deleting an absent key is not an error |
//! | [`check_bytewise_order`] | memcmp order, a prefix before its extensions |
//! | [`check_scan_bounds`] | every Included/Excluded/Unbounded combination, both directions |
//! | [`check_prefix_ranges`] | [`KeyRange::prefix`] incl. all-0xFF and empty prefixes |
//! | [`check_scan_break`] | [`ControlFlow::Break`] stops the scan at once |
//! | [`check_scan_callback_may_read`] | a scan callback may read the same storage |
//! | [`check_batch_later_op_wins`] | within a batch, the later operation on a key wins |
//! | [`check_batch_applies_whole`] | a returned `write` made every operation visible |
//! | [`check_keyspace_isolation`] | keyspaces never see each other's keys |
//! | [`check_sync_write`] | `write(.., true)` and `sync()` succeed and keep data |
//! | [`check_large_values`] | 1 MiB values, 8 KiB keys |
//! | [`check_random_ops_match_model`] | a seeded random history agrees with a `BTreeMap` model |
//! | [`check_concurrent_writers_and_readers`] | many threads: ordered, well-formed, monotonic reads |
//! | [`check_concurrent_batches_do_not_interleave`] | concurrent batches apply as units |
//!
//! What these checks cannot see: durability across a crash. That needs a real
//! restart and is tested by the durable implementation itself
//! (`crates/canyon-rocksdb/tests/`).

use crate::{prefix_successor, KeyRange, Keyspace, Storage, WriteBatch};
use std::collections::BTreeMap;
use std::ops::{Bound, ControlFlow};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// One named conformance check.
#[derive(Debug, Clone, Copy)]
pub struct Check {
    /// The check's function name (also the test name the macro generates).
    pub name: &'static str,
    /// Runs the check against a fresh, empty storage; panics on a violation.
    pub run: fn(&dyn Storage),
}

/// Every check, in the order [`run_all`] runs them.
pub const CHECKS: &[Check] = &[
    Check {
        name: "check_empty_storage",
        run: check_empty_storage,
    },
    Check {
        name: "check_get_put_overwrite",
        run: check_get_put_overwrite,
    },
    Check {
        name: "check_delete_absent_key",
        run: check_delete_absent_key,
    },
    Check {
        name: "check_bytewise_order",
        run: check_bytewise_order,
    },
    Check {
        name: "check_scan_bounds",
        run: check_scan_bounds,
    },
    Check {
        name: "check_prefix_ranges",
        run: check_prefix_ranges,
    },
    Check {
        name: "check_scan_break",
        run: check_scan_break,
    },
    Check {
        name: "check_scan_callback_may_read",
        run: check_scan_callback_may_read,
    },
    Check {
        name: "check_batch_later_op_wins",
        run: check_batch_later_op_wins,
    },
    Check {
        name: "check_batch_applies_whole",
        run: check_batch_applies_whole,
    },
    Check {
        name: "check_keyspace_isolation",
        run: check_keyspace_isolation,
    },
    Check {
        name: "check_sync_write",
        run: check_sync_write,
    },
    Check {
        name: "check_large_values",
        run: check_large_values,
    },
    Check {
        name: "check_split_points_within_range",
        run: check_split_points_within_range,
    },
    Check {
        name: "check_random_ops_match_model",
        run: check_random_ops_match_model,
    },
    Check {
        name: "check_concurrent_writers_and_readers",
        run: check_concurrent_writers_and_readers,
    },
    Check {
        name: "check_concurrent_batches_do_not_interleave",
        run: check_concurrent_batches_do_not_interleave,
    },
];

/// Runs every check in [`CHECKS`], each against a fresh storage from `make`.
pub fn run_all(make: &dyn Fn() -> Arc<dyn Storage>) {
    for check in CHECKS {
        let storage = make();
        (check.run)(&*storage);
    }
}

/// Expands to one `#[test]` per conformance check, each calling the check on a
/// fresh storage from `$make` (an expression of a type that implements
/// `Fn() -> Arc<dyn Storage>`), plus `conformance_suite_is_complete`, which fails if
/// this expansion misses an entry of [`CHECKS`].
#[macro_export]
macro_rules! storage_conformance_tests {
    ($make:expr) => {
        $crate::storage_conformance_tests!(@tests $make;
            check_empty_storage,
            check_get_put_overwrite,
            check_delete_absent_key,
            check_bytewise_order,
            check_scan_bounds,
            check_prefix_ranges,
            check_scan_break,
            check_scan_callback_may_read,
            check_batch_later_op_wins,
            check_batch_applies_whole,
            check_keyspace_isolation,
            check_sync_write,
            check_large_values,
            check_split_points_within_range,
            check_random_ops_match_model,
            check_concurrent_writers_and_readers,
            check_concurrent_batches_do_not_interleave,
        );
    };
    (@tests $make:expr; $($check:ident),* $(,)?) => {
        $(
            #[test]
            fn $check() {
                let make: &dyn Fn() -> ::std::sync::Arc<dyn $crate::Storage> = &$make;
                let storage = make();
                $crate::conformance::$check(&*storage);
            }
        )*

        #[test]
        fn conformance_suite_is_complete() {
            let expanded: &[&str] = &[$(stringify!($check)),*];
            let listed: ::std::vec::Vec<&str> =
                $crate::conformance::CHECKS.iter().map(|c| c.name).collect();
            assert_eq!(expanded, listed.as_slice());
        }
    };
}

// ---- helpers ---------------------------------------------------------------------

/// Unwraps a storage result; a storage error fails the check with its context.
fn ok<T>(r: canyon_common::Result<T>, what: &str) -> T {
    match r {
        Ok(v) => v,
        Err(e) => panic!("{what}: unexpected storage error: {e:?}"),
    }
}

fn put(s: &dyn Storage, ks: Keyspace, key: &[u8], value: &[u8]) {
    let mut b = WriteBatch::new();
    b.put(ks, key.to_vec(), value.to_vec());
    ok(s.write(b, false), "put");
}

fn delete(s: &dyn Storage, ks: Keyspace, key: &[u8]) {
    let mut b = WriteBatch::new();
    b.delete(ks, key.to_vec());
    ok(s.write(b, false), "delete");
}

fn get(s: &dyn Storage, ks: Keyspace, key: &[u8]) -> Option<Vec<u8>> {
    ok(s.get(ks, key), "get")
}

type Pairs = Vec<(Vec<u8>, Vec<u8>)>;

/// Every pair of `range` in scan order.
fn collect(s: &dyn Storage, ks: Keyspace, range: &KeyRange, reverse: bool) -> Pairs {
    let mut out = Vec::new();
    ok(
        s.scan(ks, range, reverse, &mut |k, v| {
            out.push((k.to_vec(), v.to_vec()));
            ControlFlow::Continue(())
        }),
        "scan",
    );
    out
}

fn keys(pairs: &Pairs) -> Vec<Vec<u8>> {
    pairs.iter().map(|(k, _)| k.clone()).collect()
}

/// The value the checks store under `key` when they only care about pairing.
fn value_for(key: &[u8]) -> Vec<u8> {
    let mut v = b"v:".to_vec();
    v.extend_from_slice(key);
    v
}

/// What a correct scan of `model` returns.
fn model_scan(model: &BTreeMap<Vec<u8>, Vec<u8>>, range: &KeyRange, reverse: bool) -> Pairs {
    let mut out: Pairs = model
        .iter()
        .filter(|(k, _)| range.contains(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if reverse {
        out.reverse();
    }
    out
}

/// A small deterministic generator (xorshift64*), so failures replay exactly.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Keys chosen to hit the edges of bytewise order: the empty key, 0x00 and 0xFF
/// runs, and prefixes of one another. Already in the correct (memcmp) order.
const EDGE_KEYS: &[&[u8]] = &[
    b"",
    b"\x00",
    b"\x00\x00",
    b"\x00\x01",
    b"\x01",
    b"\x01\x00",
    b"\x01\xff",
    b"\x02",
    b"A",
    b"AB",
    b"B",
    b"a",
    b"\x7f\xff",
    b"\x80",
    b"\xfe\xff",
    b"\xff",
    b"\xff\x00",
    b"\xff\xff",
    b"\xff\xff\xff",
];

// ---- checks ----------------------------------------------------------------------

/// A new storage is empty in every keyspace; an empty batch and `sync` succeed.
pub fn check_empty_storage(s: &dyn Storage) {
    assert!(!s.name().is_empty());
    for ks in Keyspace::ALL {
        assert_eq!(get(s, ks, b""), None);
        assert_eq!(get(s, ks, b"anything"), None);
        assert!(collect(s, ks, &KeyRange::all(), false).is_empty());
        assert!(collect(s, ks, &KeyRange::all(), true).is_empty());
    }
    ok(s.write(WriteBatch::new(), false), "empty batch");
    ok(s.write(WriteBatch::new(), true), "empty synced batch");
    ok(s.sync(), "sync");
    for ks in Keyspace::ALL {
        assert!(collect(s, ks, &KeyRange::all(), false).is_empty());
    }
}

/// A get returns the latest value written; an empty value is distinct from absent.
pub fn check_get_put_overwrite(s: &dyn Storage) {
    let ks = Keyspace::Rows;
    put(s, ks, b"k", b"one");
    assert_eq!(get(s, ks, b"k").as_deref(), Some(&b"one"[..]));
    put(s, ks, b"k", b"two, longer");
    assert_eq!(get(s, ks, b"k").as_deref(), Some(&b"two, longer"[..]));
    put(s, ks, b"k", b"");
    assert_eq!(get(s, ks, b"k").as_deref(), Some(&b""[..]), "empty value");
    // Neighbours of a present key are absent.
    assert_eq!(get(s, ks, b""), None);
    assert_eq!(get(s, ks, b"k\x00"), None);
    assert_eq!(get(s, ks, b"j\xff"), None);
    // The empty key is a key like any other.
    put(s, ks, b"", b"empty key");
    assert_eq!(get(s, ks, b"").as_deref(), Some(&b"empty key"[..]));
    assert_eq!(
        keys(&collect(s, ks, &KeyRange::all(), false)),
        vec![b"".to_vec(), b"k".to_vec()]
    );
}

/// Deleting an absent key succeeds and changes nothing; deleting twice is fine.
pub fn check_delete_absent_key(s: &dyn Storage) {
    let ks = Keyspace::Index;
    delete(s, ks, b"never written");
    assert!(collect(s, ks, &KeyRange::all(), false).is_empty());
    put(s, ks, b"a", b"1");
    put(s, ks, b"b", b"2");
    delete(s, ks, b"ab");
    delete(s, ks, b"a\x00");
    assert_eq!(
        keys(&collect(s, ks, &KeyRange::all(), false)),
        vec![b"a".to_vec(), b"b".to_vec()]
    );
    delete(s, ks, b"a");
    delete(s, ks, b"a");
    assert_eq!(get(s, ks, b"a"), None);
    assert_eq!(get(s, ks, b"b").as_deref(), Some(&b"2"[..]));
    // A deleted key can be written again.
    put(s, ks, b"a", b"again");
    assert_eq!(get(s, ks, b"a").as_deref(), Some(&b"again"[..]));
}

/// Keys come back in memcmp order — unsigned bytes, a prefix before every key it
/// prefixes — whatever order they were written in; reverse is the exact mirror.
pub fn check_bytewise_order(s: &dyn Storage) {
    let ks = Keyspace::Rows;
    // Write in a scrambled order, half of them in one batch.
    let mut b = WriteBatch::new();
    for (i, k) in EDGE_KEYS.iter().enumerate().rev() {
        if i % 2 == 0 {
            b.put(ks, k.to_vec(), value_for(k));
        } else {
            put(s, ks, k, &value_for(k));
        }
    }
    ok(s.write(b, false), "batch");

    let expected: Vec<Vec<u8>> = EDGE_KEYS.iter().map(|k| k.to_vec()).collect();
    let forward = collect(s, ks, &KeyRange::all(), false);
    assert_eq!(keys(&forward), expected, "forward order");
    for (k, v) in &forward {
        assert_eq!(v, &value_for(k), "value paired with {k:?}");
    }
    let mut reversed = expected.clone();
    reversed.reverse();
    assert_eq!(
        keys(&collect(s, ks, &KeyRange::all(), true)),
        reversed,
        "reverse order"
    );
}

/// Every combination of Unbounded / Included(p) / Excluded(p) lower and upper
/// bounds, over probes that are present keys and keys between them (including
/// inverted and empty ranges), agrees with a model, forward and reverse.
pub fn check_scan_bounds(s: &dyn Storage) {
    let ks = Keyspace::History;
    let mut model = BTreeMap::new();
    let mut b = WriteBatch::new();
    for k in EDGE_KEYS {
        b.put(ks, k.to_vec(), value_for(k));
        model.insert(k.to_vec(), value_for(k));
    }
    ok(s.write(b, false), "batch");

    let mut probes: Vec<Vec<u8>> = EDGE_KEYS.iter().map(|k| k.to_vec()).collect();
    for absent in [
        &b"\x00\x00\x00"[..],
        b"\x01\x80",
        b"\x03",
        b"AA",
        b"\xff\x01",
        b"\xff\xff\xff\xff",
    ] {
        probes.push(absent.to_vec());
    }
    let mut bounds = vec![Bound::Unbounded];
    for p in &probes {
        bounds.push(Bound::Included(p.clone()));
        bounds.push(Bound::Excluded(p.clone()));
    }
    for start in &bounds {
        for end in &bounds {
            let range = KeyRange {
                start: start.clone(),
                end: end.clone(),
            };
            for reverse in [false, true] {
                let got = collect(s, ks, &range, reverse);
                let want = model_scan(&model, &range, reverse);
                assert_eq!(got, want, "range {range:?} reverse={reverse}");
            }
        }
    }
}

/// [`KeyRange::prefix`] returns exactly the keys that start with the prefix,
/// including prefixes ending in 0xFF (whose successor carries) and all-0xFF and
/// empty prefixes (which have no successor, so the range is unbounded above).
pub fn check_prefix_ranges(s: &dyn Storage) {
    let ks = Keyspace::Index;
    let stored: &[&[u8]] = &[
        b"",
        b"\x00",
        b"\x01",
        b"\x01\x00",
        b"\x01\xfe\xff",
        b"\x01\xff",
        b"\x01\xff\x00",
        b"\x01\xff\xff",
        b"\x01\xff\xff\xff",
        b"\x02",
        b"\x02\x00",
        b"\xfe",
        b"\xfe\xff\xff",
        b"\xff",
        b"\xff\x00",
        b"\xff\xff",
        b"\xff\xff\x01",
        b"\xff\xff\xff",
    ];
    let mut model = BTreeMap::new();
    let mut b = WriteBatch::new();
    for k in stored {
        b.put(ks, k.to_vec(), value_for(k));
        model.insert(k.to_vec(), value_for(k));
    }
    ok(s.write(b, false), "batch");

    let prefixes: &[&[u8]] = &[
        b"",
        b"\x00",
        b"\x01",
        b"\x01\xff",
        b"\x01\xff\xff",
        b"\x01\xfe",
        b"\x02",
        b"\x03",
        b"\xfe",
        b"\xfe\xff",
        b"\xff",
        b"\xff\xff",
        b"\xff\xff\xff",
        b"\xff\xff\xff\xff",
    ];
    for p in prefixes {
        let range = KeyRange::prefix(p);
        for reverse in [false, true] {
            let got = collect(s, ks, &range, reverse);
            let mut want: Pairs = model
                .iter()
                .filter(|(k, _)| k.starts_with(p))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            if reverse {
                want.reverse();
            }
            assert_eq!(got, want, "prefix {p:?} reverse={reverse}");
        }
    }
    // The successor itself is the first key past the prefix.
    assert_eq!(prefix_successor(b"\x01\xff"), Some(b"\x02".to_vec()));
    assert_eq!(prefix_successor(b"\xff\xff"), None);
    assert_eq!(prefix_successor(b""), None);
}

/// [`ControlFlow::Break`] ends the scan immediately, in both directions, including
/// on the very first entry; the entries before it are exactly the range's first.
pub fn check_scan_break(s: &dyn Storage) {
    let ks = Keyspace::Rows;
    let mut b = WriteBatch::new();
    for i in 0u16..300 {
        let k = i.to_be_bytes();
        b.put(ks, k.to_vec(), value_for(&k));
    }
    ok(s.write(b, false), "batch");

    for reverse in [false, true] {
        for stop_after in [1usize, 2, 7, 64, 65, 200, 299] {
            let mut seen = Vec::new();
            ok(
                s.scan(ks, &KeyRange::all(), reverse, &mut |k, _| {
                    seen.push(k.to_vec());
                    if seen.len() == stop_after {
                        ControlFlow::Break(())
                    } else {
                        ControlFlow::Continue(())
                    }
                }),
                "scan",
            );
            let mut want: Vec<Vec<u8>> = (0u16..300).map(|i| i.to_be_bytes().to_vec()).collect();
            if reverse {
                want.reverse();
            }
            want.truncate(stop_after);
            assert_eq!(seen, want, "stop_after={stop_after} reverse={reverse}");
        }
    }
    // Break on a bounded range, too.
    let range = KeyRange {
        start: Bound::Excluded(10u16.to_be_bytes().to_vec()),
        end: Bound::Included(20u16.to_be_bytes().to_vec()),
    };
    let mut seen = Vec::new();
    ok(
        s.scan(ks, &range, true, &mut |k, _| {
            seen.push(k.to_vec());
            ControlFlow::Break(())
        }),
        "scan",
    );
    assert_eq!(seen, vec![20u16.to_be_bytes().to_vec()]);
}

/// A scan callback may call [`Storage::get`] and start a nested scan on the same
/// storage (the contract only forbids the write path) without deadlocking.
pub fn check_scan_callback_may_read(s: &dyn Storage) {
    let ks = Keyspace::Meta;
    let mut b = WriteBatch::new();
    for i in 0u16..200 {
        let k = i.to_be_bytes();
        b.put(ks, k.to_vec(), value_for(&k));
    }
    ok(s.write(b, false), "batch");
    let mut visited = 0;
    ok(
        s.scan(ks, &KeyRange::all(), false, &mut |k, v| {
            visited += 1;
            assert_eq!(get(s, ks, k).as_deref(), Some(v));
            if visited % 50 == 0 {
                let inner = collect(s, ks, &KeyRange::prefix(&k[..1]), true);
                assert!(!inner.is_empty());
            }
            ControlFlow::Continue(())
        }),
        "scan",
    );
    assert_eq!(visited, 200);
}

/// Within one batch, the later operation on a key wins: put-put, put-delete,
/// delete-put, and the same key in two keyspaces kept apart.
pub fn check_batch_later_op_wins(s: &dyn Storage) {
    put(s, Keyspace::Rows, b"existing", b"old");
    let mut b = WriteBatch::new();
    b.put(Keyspace::Rows, b"pp".to_vec(), b"first".to_vec());
    b.put(Keyspace::Rows, b"pp".to_vec(), b"second".to_vec());
    b.put(Keyspace::Rows, b"pd".to_vec(), b"gone".to_vec());
    b.delete(Keyspace::Rows, b"pd".to_vec());
    b.delete(Keyspace::Rows, b"dp".to_vec());
    b.put(Keyspace::Rows, b"dp".to_vec(), b"back".to_vec());
    b.delete(Keyspace::Rows, b"existing".to_vec());
    b.put(Keyspace::Rows, b"existing".to_vec(), b"new".to_vec());
    b.delete(Keyspace::Rows, b"existing".to_vec());
    b.put(Keyspace::Rows, b"existing".to_vec(), b"newest".to_vec());
    b.put(Keyspace::Index, b"pp".to_vec(), b"index".to_vec());
    b.put(Keyspace::Rows, b"pdp".to_vec(), b"1".to_vec());
    b.delete(Keyspace::Rows, b"pdp".to_vec());
    b.put(Keyspace::Rows, b"pdp".to_vec(), b"3".to_vec());
    b.delete(Keyspace::Index, b"pp".to_vec());
    ok(s.write(b, false), "batch");

    let rows = collect(s, Keyspace::Rows, &KeyRange::all(), false);
    let want: Pairs = vec![
        (b"dp".to_vec(), b"back".to_vec()),
        (b"existing".to_vec(), b"newest".to_vec()),
        (b"pdp".to_vec(), b"3".to_vec()),
        (b"pp".to_vec(), b"second".to_vec()),
    ];
    assert_eq!(rows, want);
    assert_eq!(get(s, Keyspace::Rows, b"pd"), None);
    assert_eq!(
        get(s, Keyspace::Index, b"pp"),
        None,
        "index: put then delete"
    );
}

/// Once `write` returns, every operation of the batch is visible, in every
/// keyspace it touched, and nothing else changed.
pub fn check_batch_applies_whole(s: &dyn Storage) {
    put(s, Keyspace::Meta, b"untouched", b"yes");
    let mut b = WriteBatch::new();
    for i in 0u32..2_000 {
        let k = i.to_be_bytes();
        let ks = Keyspace::ALL[i as usize % Keyspace::ALL.len()];
        b.put(ks, k.to_vec(), value_for(&k));
    }
    for i in (0u32..2_000).step_by(10) {
        let ks = Keyspace::ALL[i as usize % Keyspace::ALL.len()];
        b.delete(ks, i.to_be_bytes().to_vec());
    }
    assert_eq!(b.len(), 2_200);
    ok(s.write(b, false), "batch");
    for i in 0u32..2_000 {
        let k = i.to_be_bytes();
        let ks = Keyspace::ALL[i as usize % Keyspace::ALL.len()];
        let want = if i % 10 == 0 {
            None
        } else {
            Some(value_for(&k))
        };
        assert_eq!(get(s, ks, &k), want, "key {i} in {ks:?}");
    }
    let total: usize = Keyspace::ALL
        .iter()
        .map(|ks| collect(s, *ks, &KeyRange::all(), false).len())
        .sum();
    assert_eq!(total, 1_800 + 1);
    assert_eq!(
        get(s, Keyspace::Meta, b"untouched").as_deref(),
        Some(&b"yes"[..])
    );
}

/// The same key in different keyspaces holds different values; scans, deletes
/// and overwrites in one keyspace never show in another.
pub fn check_keyspace_isolation(s: &dyn Storage) {
    let mut b = WriteBatch::new();
    for ks in Keyspace::ALL {
        b.put(ks, b"shared".to_vec(), ks.name().as_bytes().to_vec());
        b.put(
            ks,
            format!("only-{}", ks.name()).into_bytes(),
            b"x".to_vec(),
        );
    }
    ok(s.write(b, false), "batch");
    for ks in Keyspace::ALL {
        assert_eq!(get(s, ks, b"shared").as_deref(), Some(ks.name().as_bytes()));
        let want = vec![
            format!("only-{}", ks.name()).into_bytes(),
            b"shared".to_vec(),
        ];
        assert_eq!(keys(&collect(s, ks, &KeyRange::all(), false)), want);
        for other in Keyspace::ALL {
            if other != ks {
                let k = format!("only-{}", other.name()).into_bytes();
                assert_eq!(get(s, ks, &k), None, "{other:?} key seen in {ks:?}");
            }
        }
    }
    delete(s, Keyspace::Rows, b"shared");
    put(s, Keyspace::Index, b"shared", b"changed");
    assert_eq!(get(s, Keyspace::Rows, b"shared"), None);
    assert_eq!(
        get(s, Keyspace::Index, b"shared").as_deref(),
        Some(&b"changed"[..])
    );
    assert_eq!(
        get(s, Keyspace::History, b"shared").as_deref(),
        Some(&b"history"[..])
    );
    assert_eq!(
        get(s, Keyspace::Meta, b"shared").as_deref(),
        Some(&b"meta"[..])
    );
}

/// `write(batch, true)` and `sync()` succeed and lose nothing (durability across
/// a crash is tested by the durable implementation itself).
pub fn check_sync_write(s: &dyn Storage) {
    let mut b = WriteBatch::new();
    b.put(Keyspace::Rows, b"synced".to_vec(), b"1".to_vec());
    ok(s.write(b, true), "synced write");
    put(s, Keyspace::Rows, b"later", b"2");
    ok(s.sync(), "sync");
    ok(s.sync(), "second sync");
    assert_eq!(
        get(s, Keyspace::Rows, b"synced").as_deref(),
        Some(&b"1"[..])
    );
    assert_eq!(get(s, Keyspace::Rows, b"later").as_deref(), Some(&b"2"[..]));
}

/// `split_points` (an estimate, possibly empty) gives at most `parts - 1`
/// keys, strictly ascending and inside the range, and none for fewer than two
/// parts or an empty range.
pub fn check_split_points_within_range(s: &dyn Storage) {
    let mut b = WriteBatch::new();
    for i in 0u32..3_000 {
        for table in [1u8, 2, 3] {
            b.put(
                Keyspace::Rows,
                [&[table][..], &i.to_be_bytes()].concat(),
                value_for(&i.to_be_bytes()),
            );
        }
    }
    ok(s.write(b, true), "load");
    let ranges = [
        KeyRange::prefix(&[2]),
        KeyRange {
            start: Bound::Excluded([&[1u8][..], &1_000u32.to_be_bytes()].concat()),
            end: Bound::Included([&[3u8][..], &10u32.to_be_bytes()].concat()),
        },
    ];
    for range in &ranges {
        for parts in [2, 7, 64] {
            let points = ok(s.split_points(Keyspace::Rows, range, parts), "split_points");
            assert!(
                points.len() < parts,
                "{} points for {parts} parts",
                points.len()
            );
            assert!(
                points.windows(2).all(|w| w[0] < w[1]),
                "ascending: {points:?}"
            );
            assert!(
                points.iter().all(|p| range.contains(p)),
                "inside {range:?}: {points:?}"
            );
        }
        assert!(ok(s.split_points(Keyspace::Rows, range, 1), "one part").is_empty());
    }
    let nothing = KeyRange::prefix(&[9]);
    assert!(ok(s.split_points(Keyspace::Rows, &nothing, 8), "empty range").is_empty());
}

/// Values of 1 MiB (alone and several in one batch) and 8 KiB keys round-trip
/// through get and scan, and can be overwritten by small values.
pub fn check_large_values(s: &dyn Storage) {
    const MIB: usize = 1 << 20;
    let big = |seed: u8| -> Vec<u8> {
        (0..MIB)
            .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
            .collect()
    };
    let ks = Keyspace::Rows;
    put(s, ks, b"big-0", &big(0));
    let mut b = WriteBatch::new();
    for i in 1u8..=4 {
        b.put(ks, format!("big-{i}").into_bytes(), big(i));
    }
    let long_key: Vec<u8> = (0..8192).map(|i| (i % 251) as u8).collect();
    b.put(ks, long_key.clone(), big(9));
    ok(s.write(b, true), "large batch");

    for i in 0u8..=4 {
        let got = get(s, ks, format!("big-{i}").as_bytes());
        assert!(got.as_deref() == Some(&big(i)[..]), "big-{i} differs");
    }
    assert!(get(s, ks, &long_key).as_deref() == Some(&big(9)[..]));
    let all = collect(s, ks, &KeyRange::all(), false);
    assert_eq!(all.len(), 6);
    assert!(all.iter().all(|(_, v)| v.len() == MIB));
    assert_eq!(all[0].0, long_key, "\\x00.. sorts before 'b'");

    put(s, ks, b"big-2", b"small");
    assert_eq!(get(s, ks, b"big-2").as_deref(), Some(&b"small"[..]));
    delete(s, ks, &long_key);
    assert_eq!(get(s, ks, &long_key), None);
}

/// A seeded random history of puts, deletes and mixed batches over a small key
/// alphabet (so keys collide, prefix each other and get re-created) agrees with a
/// `BTreeMap` model at every point read and at random scans.
pub fn check_random_ops_match_model(s: &dyn Storage) {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut model: [BTreeMap<Vec<u8>, Vec<u8>>; Keyspace::ALL.len()] = Default::default();
    let random_key = |rng: &mut Rng| -> Vec<u8> {
        let len = rng.below(4) as usize;
        (0..len)
            .map(|_| [0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff][rng.below(6) as usize])
            .collect()
    };
    for step in 0..1_500u32 {
        let mut b = WriteBatch::new();
        let n = 1 + rng.below(6);
        for _ in 0..n {
            let ksi = rng.below(4) as usize;
            let ks = Keyspace::ALL[ksi];
            let key = random_key(&mut rng);
            if rng.below(3) == 0 {
                b.delete(ks, key.clone());
                model[ksi].remove(&key);
            } else {
                let value = format!("{step}").into_bytes();
                b.put(ks, key.clone(), value.clone());
                model[ksi].insert(key, value);
            }
        }
        ok(s.write(b, rng.below(50) == 0), "batch");

        let ksi = rng.below(4) as usize;
        let ks = Keyspace::ALL[ksi];
        let key = random_key(&mut rng);
        assert_eq!(
            get(s, ks, &key),
            model[ksi].get(&key).cloned(),
            "step {step}"
        );
        if step % 5 == 0 {
            let bound = |rng: &mut Rng| match rng.below(3) {
                0 => Bound::Unbounded,
                1 => Bound::Included(random_key(rng)),
                _ => Bound::Excluded(random_key(rng)),
            };
            let range = KeyRange {
                start: bound(&mut rng),
                end: bound(&mut rng),
            };
            let reverse = rng.below(2) == 0;
            assert_eq!(
                collect(s, ks, &range, reverse),
                model_scan(&model[ksi], &range, reverse),
                "step {step} {ks:?} {range:?} reverse={reverse}"
            );
        }
    }
    for (ksi, ks) in Keyspace::ALL.iter().enumerate() {
        assert_eq!(
            collect(s, *ks, &KeyRange::all(), false),
            model_scan(&model[ksi], &KeyRange::all(), false)
        );
    }
}

/// Four writer threads add disjoint keys (each batch puts a row and its index
/// entry) while two reader threads scan and get. Readers always see keys in strict
/// order, values paired with their keys, and never fewer keys than an earlier
/// completed scan saw (writes only add). A scan started after every writer
/// returned sees every key.
pub fn check_concurrent_writers_and_readers(s: &dyn Storage) {
    const WRITERS: u32 = 4;
    const BATCHES: u32 = 300;
    let key = |w: u32, i: u32| -> Vec<u8> {
        let mut k = w.to_be_bytes().to_vec();
        k.extend_from_slice(&i.to_be_bytes());
        k
    };
    let writers_done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let mut writers = Vec::new();
        for w in 0..WRITERS {
            writers.push(scope.spawn(move || {
                for i in 0..BATCHES {
                    let k = key(w, i);
                    let mut b = WriteBatch::new();
                    b.put(Keyspace::Rows, k.clone(), value_for(&k));
                    b.put(Keyspace::Index, k.clone(), value_for(&k));
                    ok(s.write(b, i % 100 == 0), "concurrent write");
                }
            }));
        }
        let mut readers = Vec::new();
        for r in 0..2u32 {
            let writers_done = &writers_done;
            readers.push(scope.spawn(move || {
                let mut last_count = 0;
                let mut rounds = 0u32;
                loop {
                    // Read the flag first: a scan that starts after it is set
                    // sees everything, which the final round checks.
                    let last_round = writers_done.load(Ordering::Acquire);
                    let rows = collect(s, Keyspace::Rows, &KeyRange::all(), r == 1);
                    assert!(rows.len() >= last_count, "a later scan saw fewer keys");
                    last_count = rows.len();
                    let mut ordered: Vec<&Vec<u8>> = rows.iter().map(|(k, _)| k).collect();
                    if r == 1 {
                        ordered.reverse();
                    }
                    assert!(ordered.windows(2).all(|p| p[0] < p[1]), "scan out of order");
                    for (k, v) in &rows {
                        assert_eq!(v, &value_for(k), "value not paired with its key");
                    }
                    // Point reads of keys that may or may not be written yet.
                    // (Whether a row and its index entry show together is not
                    // asserted: the contract lets readers see a batch partly.)
                    for w in 0..WRITERS {
                        let k = key(w, rounds % BATCHES);
                        for ks in [Keyspace::Rows, Keyspace::Index] {
                            if let Some(v) = get(s, ks, &k) {
                                assert_eq!(v, value_for(&k));
                            }
                        }
                    }
                    rounds += 1;
                    if last_round {
                        assert_eq!(last_count, (WRITERS * BATCHES) as usize);
                        break;
                    }
                }
                rounds
            }));
        }
        for w in writers {
            if let Err(p) = w.join() {
                std::panic::resume_unwind(p);
            }
        }
        writers_done.store(true, Ordering::Release);
        for r in readers {
            match r.join() {
                Ok(rounds) => assert!(rounds >= 1),
                Err(p) => std::panic::resume_unwind(p),
            }
        }
    });
    for ks in [Keyspace::Rows, Keyspace::Index] {
        let all = collect(s, ks, &KeyRange::all(), false);
        assert_eq!(all.len(), (WRITERS * BATCHES) as usize, "{ks:?}");
    }
}

/// Threads race batches that each set the same two keys (in two keyspaces) to the
/// thread's own value. Batches are atomic units, so when all have returned both
/// keys hold the value of the same batch — an interleaving would leave them apart.
pub fn check_concurrent_batches_do_not_interleave(s: &dyn Storage) {
    const THREADS: u32 = 4;
    const ROUNDS: u32 = 4;
    for round in 0..ROUNDS {
        std::thread::scope(|scope| {
            for t in 0..THREADS {
                scope.spawn(move || {
                    for i in 0..50u32 {
                        let v = format!("t{t}-r{round}-i{i}").into_bytes();
                        let mut b = WriteBatch::new();
                        b.put(Keyspace::Rows, b"a".to_vec(), v.clone());
                        for filler in 0..8u8 {
                            b.put(Keyspace::History, vec![b'f', filler], v.clone());
                        }
                        b.put(Keyspace::Index, b"b".to_vec(), v);
                        ok(s.write(b, false), "racing batch");
                    }
                });
            }
        });
        let a = get(s, Keyspace::Rows, b"a");
        let b = get(s, Keyspace::Index, b"b");
        assert!(a.is_some());
        assert_eq!(a, b, "two batches interleaved (round {round})");
        for filler in 0..8u8 {
            assert_eq!(get(s, Keyspace::History, &[b'f', filler]), a);
        }
    }
}
