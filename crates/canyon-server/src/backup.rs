//! `canyon backup` and `canyon restore`: hot backups of a running server.
//!
//! # How a backup is made
//!
//! RocksDB lets one process open a database, so the copy is made by the
//! server itself: `canyon backup` connects over the MySQL protocol and sends
//! `BACKUP TO '<DIR>/db'`. The server holds its commit mutex for a moment,
//! syncs, writes a RocksDB checkpoint into `<DIR>/db` (SST files hard-linked
//! when `DIR` is on the data directory's file system, copied otherwise) and
//! answers with the commit timestamp, GTID set and binary-log position the
//! image ends at. Why that image is a consistent database — Canyon's
//! recovery at open treats it exactly as the data directory after a
//! `kill -9` at that moment — is argued in `canyon-txn`'s `backup.rs`.
//! The backup directory must therefore be reachable by the server's file
//! system: `canyon backup` runs on the server's host, as `mariadb-backup`
//! does.
//!
//! Then this side finishes the backup:
//!
//! ```text
//!   DIR/db/...          the checkpoint (SST, MANIFEST, CURRENT, OPTIONS, WAL)
//!   DIR/manifest.json   position, Canyon version, every file's size and SHA-256
//!   DIR/COMPLETE        SHA-256 of manifest.json, written (and synced) last
//! ```
//!
//! A backup killed half way has no `COMPLETE` and is refused by `restore`
//! and `--verify`; `COMPLETE` names the manifest's checksum, so a manifest
//! edited or damaged afterwards is refused too.
//!
//! # Incremental backups
//!
//! With `--incremental-base PREV`, an SST file of the new checkpoint that
//! PREV's manifest lists under the same name, with the same size and the
//! same SHA-256 of its last 64 KiB, is the same file: RocksDB never changes
//! an SST once written, and the file's tail holds its properties block,
//! which names the database session that wrote it (`db_session_id`) — so
//! a file of another database, or of a database restored from the same
//! backup and grown apart since (file numbers continue there), differs in
//! its tail even where name and size agree. Such a file is replaced by a
//! hard link to PREV's copy (a copy where links are not possible) and its
//! checksum is taken from PREV's manifest instead of being read in full.
//!
//! # Restore
//!
//! `canyon restore --from DIR --data-dir NEW` verifies every checksum first,
//! then creates `NEW/db`: SST files hard-linked from the backup where the
//! file system allows (they are immutable; RocksDB only unlinks them), every
//! other file copied (RocksDB rewrites CURRENT, appends to nothing it did
//! not create, but a copy costs little for these small files and keeps the
//! backup untouchable). A server started on NEW recovers as after a crash
//! and holds the data as of the backup's commit timestamp.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Write};
use std::path::Path;
use std::time::Instant;

/// The manifest's file name.
pub const MANIFEST: &str = "manifest.json";
/// The completion marker's file name.
pub const COMPLETE: &str = "COMPLETE";
/// The checkpoint's directory inside a backup (and the database's inside a
/// data directory: `Config::db_path`).
pub const DB_DIR: &str = "db";
/// How much of an SST file's end identifies it (see the module doc).
const TAIL: u64 = 64 * 1024;
/// The manifest format this code writes and reads.
const FORMAT: u32 = 1;

/// `DIR/manifest.json`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Manifest {
    /// Always `FORMAT`.
    pub format: u32,
    /// The Canyon version that made the backup.
    pub canyon_version: String,
    /// When the backup was made (RFC 3339, UTC).
    pub created_at: String,
    /// The newest commit in the backup (Canyon's commit timestamp).
    pub commit_ts: u64,
    /// `gtid_executed` at the backup: every transaction in it.
    pub gtid_executed: String,
    /// The binary-log file and position the backup ends at (where a
    /// point-in-time recovery starts replaying); absent without a log.
    pub binlog_file: Option<String>,
    /// See `binlog_file`.
    pub binlog_position: Option<u64>,
    /// The source's `server_uuid`.
    pub server_uuid: String,
    /// The backup an incremental backup reused files of.
    pub incremental_base: Option<String>,
    /// Every file under `db/`, by name.
    pub files: BTreeMap<String, FileEntry>,
}

/// One file of a backup.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct FileEntry {
    /// Its size in bytes.
    pub size: u64,
    /// Its SHA-256, lowercase hex.
    pub sha256: String,
    /// SHA-256 of its last `TAIL` bytes (SST files only): what an
    /// incremental backup compares.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail_sha256: Option<String>,
    /// Whether it was taken from the incremental base.
    #[serde(default)]
    pub reused: bool,
}

/// How `canyon backup` reaches the server.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// Host name or address.
    pub host: String,
    /// TCP port.
    pub port: u16,
    /// Account (needs RELOAD).
    pub user: String,
    /// Its password.
    pub password: String,
}

fn io(what: &str, path: &Path, e: std::io::Error) -> String {
    format!("{what} {}: {e}", path.display())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// SHA-256 of a file, adding the bytes read to `progress`.
fn sha256_file(path: &Path, progress: &mut Progress) -> Result<String, String> {
    let mut f = fs::File::open(path).map_err(|e| io("open", path, e))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).map_err(|e| io("read", path, e))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
        progress.add(n as u64);
    }
    Ok(hex(&h.finalize()))
}

/// SHA-256 of the last [`TAIL`] bytes of a file.
fn tail_sha256(path: &Path) -> Result<String, String> {
    use std::io::{Seek, SeekFrom};
    let mut f = fs::File::open(path).map_err(|e| io("open", path, e))?;
    let len = f.metadata().map_err(|e| io("stat", path, e))?.len();
    f.seek(SeekFrom::Start(len.saturating_sub(TAIL)))
        .map_err(|e| io("seek", path, e))?;
    let mut buf = Vec::new();
    f.read_to_end(&mut buf).map_err(|e| io("read", path, e))?;
    Ok(hex(&Sha256::digest(&buf)))
}

/// The progress line on stderr: rewritten in place on a terminal, one line
/// per second otherwise (a log keeps a few lines, not thousands).
struct Progress {
    what: &'static str,
    total: u64,
    done: u64,
    files: usize,
    files_total: usize,
    started: Instant,
    last: Instant,
    tty: bool,
}

impl Progress {
    fn new(what: &'static str, total: u64, files_total: usize) -> Progress {
        use std::io::IsTerminal;
        Progress {
            what,
            total,
            done: 0,
            files: 0,
            files_total,
            started: Instant::now(),
            last: Instant::now(),
            tty: std::io::stderr().is_terminal(),
        }
    }

    fn add(&mut self, bytes: u64) {
        self.done += bytes;
        if self.last.elapsed().as_millis() >= if self.tty { 200 } else { 1000 } {
            self.last = Instant::now();
            self.print(false);
        }
    }

    fn file_done(&mut self) {
        self.files += 1;
    }

    fn print(&self, last: bool) {
        let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
        let secs = self.started.elapsed().as_secs_f64().max(1e-3);
        let line = format!(
            "canyon {}: {}/{} files, {:.1}/{:.1} MiB, {:.1} MiB/s",
            self.what,
            self.files,
            self.files_total,
            mib(self.done),
            mib(self.total),
            mib(self.done) / secs
        );
        let mut err = std::io::stderr().lock();
        let _ = if self.tty {
            write!(err, "\r{line}{}", if last { "\n" } else { "" })
        } else {
            writeln!(err, "{line}")
        };
    }
}

fn fsync_path(path: &Path) -> Result<(), String> {
    fs::File::open(path)
        .and_then(|f| f.sync_all())
        .map_err(|e| io("sync", path, e))
}

/// Writes `bytes` to `path` durably: a temporary file, synced, renamed, the
/// directory synced.
fn write_durably(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let tmp = path.with_extension("tmp");
    let mut f = fs::File::create(&tmp).map_err(|e| io("create", &tmp, e))?;
    f.write_all(bytes).map_err(|e| io("write", &tmp, e))?;
    f.sync_all().map_err(|e| io("sync", &tmp, e))?;
    fs::rename(&tmp, path).map_err(|e| io("rename", &tmp, e))?;
    fsync_path(path.parent().unwrap_or(Path::new(".")))
}

/// A hard link from `from` at `to`, or a copy where links are not possible
/// (another file system).
fn link_or_copy(from: &Path, to: &Path) -> Result<(), String> {
    if fs::hard_link(from, to).is_ok() {
        return Ok(());
    }
    fs::copy(from, to).map_err(|e| io("copy", from, e))?;
    fsync_path(to)
}

/// A directory that must be new: absent, or empty.
fn require_new_dir(dir: &Path) -> Result<(), String> {
    match fs::read_dir(dir) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                return Err(format!("{} exists and is not empty", dir.display()));
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            fs::create_dir_all(dir).map_err(|e| io("create", dir, e))
        }
        Err(e) => Err(io("read", dir, e)),
    }
}

/// The sorted names of the plain files in `dir` (a checkpoint is flat).
fn list_files(dir: &Path) -> Result<Vec<String>, String> {
    let mut names = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| io("read", dir, e))? {
        let entry = entry.map_err(|e| io("read", dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = entry
            .file_type()
            .map_err(|e| io("stat", &entry.path(), e))?;
        if !kind.is_file() {
            return Err(format!(
                "unexpected non-file {} in a checkpoint",
                entry.path().display()
            ));
        }
        names.push(name);
    }
    names.sort();
    Ok(names)
}

/// What `BACKUP TO` answered.
#[derive(Debug, Clone)]
struct Point {
    commit_ts: u64,
    gtids: String,
    file: Option<String>,
    position: Option<u64>,
    server_uuid: String,
}

/// Asks the server at `ep` to write its checkpoint into `db_dir`.
fn server_checkpoint(ep: &Endpoint, db_dir: &Path) -> Result<Point, String> {
    use mysql_async::prelude::Queryable;
    let dir = db_dir
        .to_str()
        .ok_or_else(|| format!("{} is not UTF-8", db_dir.display()))?;
    let quoted = dir.replace('\\', "\\\\").replace('\'', "\\'");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("starting a runtime: {e}"))?;
    runtime.block_on(async {
        let opts = mysql_async::OptsBuilder::default()
            .ip_or_hostname(ep.host.clone())
            .tcp_port(ep.port)
            .user(Some(ep.user.clone()))
            .pass(Some(ep.password.clone()))
            .prefer_socket(false);
        let mut conn = mysql_async::Conn::new(opts)
            .await
            .map_err(|e| format!("connecting to {}:{}: {e}", ep.host, ep.port))?;
        type Row = (u64, String, Option<String>, Option<u64>, String);
        let row: Option<Row> = conn
            .query_first(format!("BACKUP TO '{quoted}'"))
            .await
            .map_err(|e| format!("BACKUP TO '{dir}': {e}"))?;
        let _ = conn.disconnect().await;
        let (commit_ts, gtids, file, position, server_uuid) =
            row.ok_or("BACKUP TO returned no row")?;
        Ok(Point {
            commit_ts,
            gtids,
            file,
            position,
            server_uuid,
        })
    })
}

/// Reads and checks `DIR/manifest.json` against `DIR/COMPLETE`.
pub fn read_manifest(dir: &Path) -> Result<Manifest, String> {
    if !dir.is_dir() {
        return Err(format!("no backup at {}: not a directory", dir.display()));
    }
    let marker_path = dir.join(COMPLETE);
    let marker = match fs::read_to_string(&marker_path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!(
                "{} is not a complete backup (no {COMPLETE} marker: the backup did not \
                 finish)",
                dir.display()
            ))
        }
        Err(e) => return Err(io("read", &marker_path, e)),
    };
    let path = dir.join(MANIFEST);
    let bytes = fs::read(&path).map_err(|e| io("read", &path, e))?;
    if hex(&Sha256::digest(&bytes)) != marker.trim() {
        return Err(format!(
            "{} does not match the checksum in {COMPLETE}",
            path.display()
        ));
    }
    let m: Manifest =
        serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    if m.format != FORMAT {
        return Err(format!(
            "{}: manifest format {} (this Canyon reads {FORMAT})",
            path.display(),
            m.format
        ));
    }
    Ok(m)
}

/// Makes a backup of the server at `ep` into the new directory `to`.
pub fn backup(ep: &Endpoint, to: &Path, base: Option<&Path>) -> Result<Manifest, String> {
    let base_manifest = base.map(read_manifest).transpose()?;
    require_new_dir(to)?;
    let to = fs::canonicalize(to).map_err(|e| io("resolve", to, e))?;
    let db = to.join(DB_DIR);
    let point = server_checkpoint(ep, &db)?;
    let names = list_files(&db)?;
    let mut sizes = Vec::with_capacity(names.len());
    for name in &names {
        let p = db.join(name);
        sizes.push(fs::metadata(&p).map_err(|e| io("stat", &p, e))?.len());
    }
    let mut progress = Progress::new("backup", sizes.iter().sum(), names.len());
    let mut files = BTreeMap::new();
    for (name, size) in names.iter().zip(sizes) {
        let path = db.join(name);
        let tail = if name.ends_with(".sst") {
            Some(tail_sha256(&path)?)
        } else {
            None
        };
        let reusable = base_manifest.as_ref().and_then(|m| {
            let prev = m.files.get(name)?;
            (tail.is_some() && prev.size == size && prev.tail_sha256 == tail).then_some(prev)
        });
        let entry = match (reusable, base) {
            (Some(prev), Some(base)) => {
                // The same immutable file: keep the base's copy instead.
                fs::remove_file(&path).map_err(|e| io("remove", &path, e))?;
                link_or_copy(&base.join(DB_DIR).join(name), &path)?;
                progress.add(size);
                FileEntry {
                    size,
                    sha256: prev.sha256.clone(),
                    tail_sha256: tail,
                    reused: true,
                }
            }
            _ => FileEntry {
                size,
                sha256: sha256_file(&path, &mut progress)?,
                tail_sha256: tail,
                reused: false,
            },
        };
        progress.file_done();
        files.insert(name.clone(), entry);
    }
    progress.print(true);
    fsync_path(&db)?;

    let manifest = Manifest {
        format: FORMAT,
        canyon_version: env!("CARGO_PKG_VERSION").to_string(),
        created_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        commit_ts: point.commit_ts,
        gtid_executed: point.gtids,
        binlog_file: point.file,
        binlog_position: point.position,
        server_uuid: point.server_uuid,
        incremental_base: base.map(|b| b.display().to_string()),
        files,
    };
    let json = serde_json::to_vec_pretty(&manifest).map_err(|e| e.to_string())?;
    write_durably(&to.join(MANIFEST), &json)?;
    // Last: only now is the backup whole.
    write_durably(&to.join(COMPLETE), hex(&Sha256::digest(&json)).as_bytes())?;
    Ok(manifest)
}

/// Re-checks every file of the backup in `dir` against its manifest: the
/// marker, the manifest's checksum, each file's presence, size and SHA-256,
/// and that no file is there that the manifest does not list.
pub fn verify(dir: &Path) -> Result<Manifest, String> {
    let m = read_manifest(dir)?;
    let db = dir.join(DB_DIR);
    let present = list_files(&db)?;
    let mut problems = Vec::new();
    for name in &present {
        if !m.files.contains_key(name) {
            problems.push(format!("{name}: not in the manifest"));
        }
    }
    let mut progress = Progress::new(
        "verify",
        m.files.values().map(|f| f.size).sum(),
        m.files.len(),
    );
    for (name, entry) in &m.files {
        let path = db.join(name);
        match fs::metadata(&path) {
            Err(e) => problems.push(format!("{name}: {e}")),
            Ok(md) if md.len() != entry.size => problems.push(format!(
                "{name}: size {} (the manifest says {})",
                md.len(),
                entry.size
            )),
            Ok(_) => {
                let sum = sha256_file(&path, &mut progress)?;
                if sum != entry.sha256 {
                    problems.push(format!("{name}: checksum mismatch"));
                }
            }
        }
        progress.file_done();
    }
    progress.print(true);
    if problems.is_empty() {
        Ok(m)
    } else {
        Err(format!(
            "backup {} failed verification:\n  {}",
            dir.display(),
            problems.join("\n  ")
        ))
    }
}

/// Restores the backup in `from` into the new data directory `data_dir`
/// (see the module doc).
pub fn restore(from: &Path, data_dir: &Path) -> Result<Manifest, String> {
    let m = verify(from)?;
    require_new_dir(data_dir)?;
    let db = data_dir.join(DB_DIR);
    fs::create_dir(&db).map_err(|e| io("create", &db, e))?;
    let src = from.join(DB_DIR);
    for name in m.files.keys() {
        let (a, b) = (src.join(name), db.join(name));
        if name.ends_with(".sst") {
            link_or_copy(&a, &b)?;
        } else {
            fs::copy(&a, &b).map_err(|e| io("copy", &a, e))?;
            fsync_path(&b)?;
        }
    }
    fsync_path(&db)?;
    fsync_path(data_dir)?;
    Ok(m)
}
