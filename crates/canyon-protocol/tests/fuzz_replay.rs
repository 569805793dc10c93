//! The fuzz targets on stable Rust, on every `cargo test`: each protocol
//! target's seed corpus (`fuzz/corpus/<target>/`), then seeded random inputs and
//! mutations of the corpus files, through the same `canyon_protocol::fuzzing`
//! functions libFuzzer drives (`fuzz/`, `scripts/fuzz.sh`). A panic fails the
//! test by itself; the message names the seed, and the input is printed.
//!
//! `CANYON_FUZZ_SEED` picks another seed (default 22), `CANYON_FUZZ_ITERATIONS`
//! the number of generated inputs per target (default 20,000).
//!
//! The `sql` target's stable counterpart is canyon-sql's `tests/limits.rs`
//! (`front_end_fuzz_never_panics`), so it is not replayed here.

use canyon_protocol::fuzzing;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::path::PathBuf;

type Target = fn(&[u8]);

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The seed corpus of `target`, sorted by file name so runs are reproducible.
fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("seed corpus {}: {e}", dir.display()))
        .map(|entry| entry.expect("corpus directory entry").path())
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, bytes)
        })
        .collect()
}

/// One libFuzzer-like mutation: flip, set interesting bytes, insert, delete,
/// duplicate a range, splice another seed in, or truncate.
fn mutate(rng: &mut StdRng, input: &[u8], seeds: &[(PathBuf, Vec<u8>)]) -> Vec<u8> {
    let mut v = input.to_vec();
    let at = |rng: &mut StdRng, len: usize| if len == 0 { 0 } else { rng.gen_range(0..len) };
    match rng.gen_range(0..7) {
        0 if !v.is_empty() => {
            let i = at(rng, v.len());
            v[i] ^= 1 << rng.gen_range(0..8);
        }
        1 if !v.is_empty() => {
            let i = at(rng, v.len());
            v[i] = [0x00, 0x01, 0x7f, 0x80, 0xfb, 0xfc, 0xfd, 0xfe, 0xff][rng.gen_range(0..9)];
        }
        2 => {
            let i = at(rng, v.len() + 1);
            let n = rng.gen_range(1..9);
            for _ in 0..n {
                v.insert(i.min(v.len()), rng.gen());
            }
        }
        3 if !v.is_empty() => {
            let i = at(rng, v.len());
            let n = rng.gen_range(1..=v.len() - i);
            v.drain(i..i + n);
        }
        4 if !v.is_empty() => {
            let i = at(rng, v.len());
            let n = rng.gen_range(1..=(v.len() - i).min(32));
            let copy = v[i..i + n].to_vec();
            let j = at(rng, v.len() + 1);
            v.splice(j..j, copy);
        }
        5 if !seeds.is_empty() => {
            let other = &seeds[rng.gen_range(0..seeds.len())].1;
            let cut = at(rng, v.len() + 1);
            let from = at(rng, other.len() + 1);
            v.truncate(cut);
            v.extend_from_slice(&other[from..]);
        }
        _ => {
            let keep = at(rng, v.len() + 1);
            v.truncate(keep);
        }
    }
    v
}

/// Runs `f` on `input`, printing the input first when it panics (the panic then
/// fails the test).
fn run_one(name: &str, f: Target, what: &str, input: &[u8]) {
    if std::panic::catch_unwind(|| f(input)).is_err() {
        panic!("fuzz target {name} panicked on {what}: {input:?}");
    }
}

fn replay(name: &str, f: Target) {
    let seed: u64 = env_or("CANYON_FUZZ_SEED", 22);
    let iterations: usize = env_or("CANYON_FUZZ_ITERATIONS", 20_000);
    let seeds = corpus(name);
    assert!(!seeds.is_empty(), "fuzz/corpus/{name} has seed files");
    for (path, bytes) in &seeds {
        run_one(name, f, &path.display().to_string(), bytes);
    }
    let mut rng = StdRng::seed_from_u64(seed ^ name.len() as u64);
    for i in 0..iterations {
        let input = if i % 4 == 0 {
            let len = rng.gen_range(0..128);
            (0..len).map(|_| rng.gen()).collect()
        } else {
            let mut v = seeds[rng.gen_range(0..seeds.len())].1.clone();
            for _ in 0..rng.gen_range(1..5) {
                v = mutate(&mut rng, &v, &seeds);
            }
            v
        };
        run_one(name, f, &format!("input {i} of seed {seed}"), &input);
    }
}

#[test]
fn packets() {
    replay("packets", fuzzing::packets);
}

#[test]
fn handshake() {
    replay("handshake", fuzzing::handshake);
}

#[test]
fn stmt_execute() {
    replay("stmt_execute", fuzzing::stmt_execute);
}

#[test]
fn query_text() {
    replay("query_text", fuzzing::query_text);
}
