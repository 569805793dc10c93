//! The layer rule of canyon-sql (see `src/lib.rs`): a file imports its own
//! folder or the folders below it, never one above; a circle of files is
//! allowed only inside one folder, and that folder's essay (`mod.rs`) names
//! it.
//!
//! The test reads every `crate::` path in the code of `src/` (comments are
//! skipped; `use` lines and paths written inline both count). A failure names
//! the importing file, the line, and the file or folder it reached.
//!
//! `DEBT` lists the upward imports that remain from the flat layout, each
//! with what removes it. The list only shrinks: an upward import not in it
//! fails, and so does an entry no longer needed.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The layer folders, bottom up.
const LAYERS: &[&str] = &[
    "types", "catalog", "parse", "expr", "plan", "exec", "ddl", "binlog", "session",
];

/// Upward imports still to remove: (importing file, folder above it, why and
/// what removes it).
const DEBT: &[(&str, &str, &str)] = &[];

fn rank(folder: &str) -> Option<usize> {
    LAYERS.iter().position(|l| *l == folder)
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("read src") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `text` with comments blanked (line comments, doc comments and block
/// comments), string and char literals kept: a `crate::` inside a comment is
/// prose, not an import.
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut in_str = false;
    let mut block = 0usize;
    while i < b.len() {
        let c = b[i];
        if block > 0 {
            if c == b'*' && b.get(i + 1) == Some(&b'/') {
                block -= 1;
                i += 2;
            } else {
                if c == b'\n' {
                    out.push('\n');
                }
                i += 1;
            }
            continue;
        }
        if in_str {
            if c == b'\\' {
                i += 2;
                out.push(' ');
                continue;
            }
            if c == b'"' {
                in_str = false;
            }
            out.push(if c == b'\n' { '\n' } else { ' ' });
            i += 1;
            continue;
        }
        match c {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                block += 1;
                i += 2;
            }
            b'"' => {
                in_str = true;
                out.push(' ');
                i += 1;
            }
            // A char literal such as '"' must not open a string.
            b'\'' if b.get(i + 2) == Some(&b'\'') => {
                out.push_str("   ");
                i += 3;
            }
            b'\'' if b.get(i + 1) == Some(&b'\\') && b.get(i + 3) == Some(&b'\'') => {
                out.push_str("    ");
                i += 4;
            }
            _ => {
                // Copy one whole character (the text is UTF-8).
                let len = text[i..].chars().next().map_or(1, char::len_utf8);
                out.push_str(&text[i..i + len]);
                i += len;
            }
        }
    }
    out
}

/// One `crate::a::b` reference: the path's first two segments.
struct Reference {
    line: usize,
    folder: String,
    second: Option<String>,
}

fn references(code: &str) -> Vec<Reference> {
    let mut refs = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let mut rest = line;
        while let Some(pos) = rest.find("crate::") {
            let before = rest[..pos].chars().next_back();
            rest = &rest[pos + "crate::".len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue; // e.g. `canyon_crate::`
            }
            let segment = |s: &str| -> String {
                s.chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect()
            };
            let folder = segment(rest);
            let after = &rest[folder.len()..];
            let second = after
                .strip_prefix("::")
                .map(segment)
                .filter(|s| !s.is_empty());
            refs.push(Reference {
                line: n + 1,
                folder,
                second,
            });
        }
    }
    refs
}

/// The file a reference reaches, for messages: `plan/select.rs` when the
/// second segment is a file of the folder, else the folder's face.
fn target_file(src: &Path, r: &Reference) -> String {
    if let Some(s) = &r.second {
        if src.join(&r.folder).join(format!("{s}.rs")).exists() {
            return format!("{}/{s}.rs", r.folder);
        }
    }
    format!("{}/mod.rs (its face)", r.folder)
}

/// Strongly connected components of a directed graph (Tarjan), members sorted.
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on_stack.insert(v);
        let graph = s.graph;
        for w in graph.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut members = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                members.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if members.len() > 1 {
                members.sort();
                s.out.push(members);
            }
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

#[test]
fn no_file_imports_a_layer_above_its_own() {
    let src = src();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut failures = Vec::new();
    let mut upward: BTreeSet<(String, String)> = BTreeSet::new();
    for path in &files {
        let rel = path
            .strip_prefix(&src)
            .expect("under src")
            .to_string_lossy()
            .replace('\\', "/");
        let Some((own, _)) = rel.split_once('/') else {
            continue; // lib.rs: the crate's face re-exports every layer
        };
        let own_rank = rank(own).unwrap_or_else(|| panic!("{rel}: folder {own} is not a layer"));
        let code = code_only(&fs::read_to_string(path).expect("read source"));
        for r in references(&code) {
            let Some(to_rank) = rank(&r.folder) else {
                failures.push(format!(
                    "{rel}:{}: `crate::{}` is not a layer folder; import through the \
                     folder path (the crate root's re-exports are for other crates)",
                    r.line, r.folder
                ));
                continue;
            };
            if to_rank > own_rank {
                upward.insert((rel.clone(), r.folder.clone()));
                if !DEBT.iter().any(|(f, to, _)| *f == rel && *to == r.folder) {
                    failures.push(format!(
                        "{rel}:{}: imports {} from `{}`, a layer above `{own}`",
                        r.line,
                        target_file(&src, &r),
                        r.folder
                    ));
                }
            }
        }
    }
    for (file, to, why) in DEBT {
        if !upward.contains(&(file.to_string(), to.to_string())) {
            failures.push(format!(
                "{file} no longer imports `{to}` ({why}): remove the entry from DEBT"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "layer rule broken:\n{}",
        failures.join("\n")
    );
}

#[test]
fn circles_stay_inside_one_folder_and_are_named() {
    let src = src();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    // File-level import graph, inside each folder.
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for path in &files {
        let rel = path
            .strip_prefix(&src)
            .expect("under src")
            .to_string_lossy()
            .replace('\\', "/");
        let Some((own, file)) = rel.split_once('/') else {
            continue;
        };
        let stem = file.trim_end_matches(".rs");
        let node = format!("{own}/{stem}");
        graph.entry(node.clone()).or_default();
        let code = code_only(&fs::read_to_string(path).expect("read source"));
        let face = main_file(&src.join(own));
        for r in references(&code) {
            if r.folder != own {
                continue;
            }
            let to = match &r.second {
                Some(s) if src.join(own).join(format!("{s}.rs")).exists() => s.clone(),
                _ => face.clone(),
            };
            if to != stem {
                graph
                    .entry(node.clone())
                    .or_default()
                    .insert(format!("{own}/{to}"));
            }
        }
    }
    let mut failures = Vec::new();
    for members in circles(&graph) {
        let folder = members[0].split('/').next().expect("folder").to_string();
        let essay = fs::read_to_string(src.join(&folder).join("mod.rs")).expect("mod.rs");
        let named = essay.contains("circle")
            && members
                .iter()
                .all(|m| essay.contains(&format!("`{}`", &m[folder.len() + 1..])));
        if !named {
            failures.push(format!(
                "{folder}/mod.rs must name the circle {members:?} (the word `circle` and \
                 each file as `name`)"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The file a folder's `mod.rs` re-exports with `pub use <file>::*` (its
/// face), or `mod` when there is none.
fn main_file(folder: &Path) -> String {
    let text = fs::read_to_string(folder.join("mod.rs")).unwrap_or_default();
    text.lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("pub use ")
                .and_then(|r| r.strip_suffix("::*;"))
                .map(str::to_string)
        })
        .unwrap_or_else(|| "mod".to_string())
}

#[test]
fn the_scanner_sees_code_not_comments() {
    let code = code_only(
        "use crate::plan::Plan; // crate::ddl in a comment\n\
         /// see [`crate::session`]\n\
         let s = \"crate::exec\"; let c = '\"'; let x = crate::exec::dml::f();\n",
    );
    let refs = references(&code);
    let found: Vec<(usize, &str, Option<&str>)> = refs
        .iter()
        .map(|r| (r.line, r.folder.as_str(), r.second.as_deref()))
        .collect();
    assert_eq!(
        found,
        vec![(1, "plan", Some("Plan")), (3, "exec", Some("dml"))]
    );
}
