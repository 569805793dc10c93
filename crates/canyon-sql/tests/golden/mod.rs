//! What the data-driven tests (`sqllogic.rs`, `plans.rs`) share: finding their
//! files, and ending a file — rewriting it with the actual output under
//! `CANYON_BLESS=1`, otherwise failing with every mismatch listed.

use std::path::{Path, PathBuf};

/// The files with extension `ext` in `tests/<dir>`, sorted; at least one.
pub fn files(dir: &str, ext: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(dir);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .{ext} files in {}", dir.display());
    files
}

/// Whether this run re-blesses the expected outputs.
pub fn blessing() -> bool {
    std::env::var_os("CANYON_BLESS").is_some()
}

/// Ends one file: writes `blessed` (the file with actual outputs) when
/// blessing, then fails if there were mismatches.
pub fn finish(path: &Path, blessed: &str, failures: &[String]) {
    if blessing() {
        std::fs::write(path, blessed.trim_end().to_string() + "\n").expect("bless writes");
    }
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
