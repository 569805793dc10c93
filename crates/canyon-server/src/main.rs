//! The `canyon` binary.
//!
//! ```text
//! canyon serve [--config FILE] [--data-dir DIR] [--bind ADDR] [--port N] [--in-memory]
//! canyon bench [OPTIONS]      (the scalability lab, crate canyon-bench; docs/bench.md)
//! canyon backup --to DIR [--incremental-base PREV] [--host H --port N --user U --password P]
//! canyon backup --verify DIR
//! canyon restore --from DIR --data-dir NEW      (docs/backup.md)
//! ```
//!
//! Startup order: configuration -> logging -> open-file limit -> storage and
//! engine (recovery happens here) -> root account on a first start -> runtime ->
//! listen -> "canyon: ready for connections on ADDR:PORT" on stdout. SIGTERM or
//! SIGINT stops accepting, closes every connection (rolling back open
//! transactions) and closes the engine.
//!
//! Only this binary installs a tracing subscriber (the libraries just emit):
//! logs go to stderr, filtered by RUST_LOG (default `info`); stdout carries only
//! the lines scripts wait for.

use canyon_server::{Config, Overrides, ServerOptions};

use clap::{Args, Parser, Subcommand};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use tracing::{info, warn};

/// mimalloc instead of glibc malloc: per-thread free lists without the arena
/// locks and consolidation passes that took ~10% of server CPU in a
/// sysbench oltp_read_write profile (about half that with mimalloc). Its
/// `override` feature makes it RocksDB's `malloc` too: under glibc's, RocksDB's
/// threads each grew an arena of their own that kept what they freed
/// (`canyon_server::memory`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "canyon",
    version,
    about = "Canyon: a MySQL-protocol OLTP database server"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the database server.
    Serve(ServeArgs),
    /// Benchmark a server (by default a local Canyon started for the run); see docs/bench.md.
    Bench(Box<canyon_bench::BenchArgs>),
    /// Back up a running server (or, with --verify, check a backup); see docs/backup.md.
    Backup(BackupArgs),
    /// Restore a backup into a new data directory; see docs/backup.md.
    Restore(RestoreArgs),
}

#[derive(Args)]
#[command(group(clap::ArgGroup::new("mode").required(true).args(["to", "verify"])))]
struct BackupArgs {
    /// The new backup directory (absent or empty; on the server's host).
    #[arg(long, value_name = "DIR")]
    to: Option<PathBuf>,
    /// Re-check every file of the backup in DIR against its manifest instead.
    #[arg(long, value_name = "DIR")]
    verify: Option<PathBuf>,
    /// A previous backup of the same server whose unchanged files are reused.
    #[arg(long, value_name = "DIR", requires = "to")]
    incremental_base: Option<PathBuf>,
    /// The server's host.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// The server's port.
    #[arg(long, default_value_t = 3306)]
    port: u16,
    /// An account with the RELOAD privilege.
    #[arg(long, default_value = "root")]
    user: String,
    /// Its password (default: $MYSQL_PWD, else empty).
    #[arg(long)]
    password: Option<String>,
}

#[derive(Args)]
struct RestoreArgs {
    /// The backup directory.
    #[arg(long, value_name = "DIR")]
    from: PathBuf,
    /// The new data directory (absent or empty).
    #[arg(long, value_name = "DIR")]
    data_dir: PathBuf,
}

#[derive(Args)]
struct ServeArgs {
    /// TOML configuration file (see canyon.example.toml).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Data directory (default ./data).
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Address to listen on (default 127.0.0.1).
    #[arg(long, value_name = "ADDR")]
    bind: Option<String>,
    /// TCP port (default 3306; 0 picks a free one).
    #[arg(long, value_name = "N")]
    port: Option<u16>,
    /// Keep all data in memory; nothing is written to disk.
    #[arg(long)]
    in_memory: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    install_tracing();
    let result = match cli.command {
        Command::Serve(args) => serve(args),
        Command::Bench(args) => canyon_bench::run(*args),
        Command::Backup(args) => backup(args),
        Command::Restore(args) => restore(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("canyon: error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn backup(args: BackupArgs) -> Result<(), String> {
    use canyon_server::backup;
    if let Some(dir) = args.verify {
        let m = backup::verify(&dir)?;
        println!(
            "canyon: backup {} verified: {} files, commit ts {}, GTID set '{}'",
            dir.display(),
            m.files.len(),
            m.commit_ts,
            m.gtid_executed
        );
        return Ok(());
    }
    let to = args.to.expect("clap requires --to or --verify");
    let ep = backup::Endpoint {
        host: args.host,
        port: args.port,
        user: args.user,
        password: args
            .password
            .or_else(|| std::env::var("MYSQL_PWD").ok())
            .unwrap_or_default(),
    };
    let m = backup::backup(&ep, &to, args.incremental_base.as_deref())?;
    let reused = m.files.values().filter(|f| f.reused).count();
    println!(
        "canyon: backup complete in {}: commit ts {}, GTID set '{}', binlog {} {}, {} files ({} reused)",
        to.display(),
        m.commit_ts,
        m.gtid_executed,
        m.binlog_file.as_deref().unwrap_or("-"),
        m.binlog_position.map_or("-".to_string(), |p| p.to_string()),
        m.files.len(),
        reused
    );
    Ok(())
}

fn restore(args: RestoreArgs) -> Result<(), String> {
    let m = canyon_server::backup::restore(&args.from, &args.data_dir)?;
    println!(
        "canyon: restored {} into {}: commit ts {}, GTID set '{}', binlog {} {}",
        args.from.display(),
        args.data_dir.display(),
        m.commit_ts,
        m.gtid_executed,
        m.binlog_file.as_deref().unwrap_or("-"),
        m.binlog_position.map_or("-".to_string(), |p| p.to_string()),
    );
    Ok(())
}

fn install_tracing() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
}

fn serve(args: ServeArgs) -> Result<(), String> {
    let overrides = Overrides {
        data_dir: args.data_dir,
        bind: args.bind,
        port: args.port,
        in_memory: args.in_memory,
    };
    let config = Config::load(
        args.config.as_deref(),
        |k| std::env::var(k).ok(),
        &overrides,
    )
    .map_err(|e| e.to_string())?;
    if let Err(e) = canyon_server::memory::reexec_for_budget(&config) {
        warn!("cannot restart with the allocator's settings for memory_budget_bytes: {e}");
    }
    info!(?config, version = %canyon_server::server_version(), "starting");

    raise_open_file_limit();

    let engine = canyon_server::open_engine(&config).map_err(|e| format!("opening: {e}"))?;
    let root_env = std::env::var("CANYON_ROOT_PASSWORD").ok();
    let root = canyon_server::ensure_root_account(&engine, &config, root_env)
        .map_err(|e| format!("creating the root account: {e}"))?;
    if let Some(root) = root.filter(|r| r.generated) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "canyon: generated root password: {}", root.password);
        if !config.in_memory {
            let _ = writeln!(
                out,
                "canyon: (also stored in {}, mode 0600)",
                config.root_password_path().display()
            );
        }
        let _ = out.flush();
    }

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(config.worker_threads)
        .thread_name("canyon-worker")
        // Parsing and evaluation recurse (bounded by the parser's nesting limit);
        // 8 MiB of stack keeps the deepest accepted statement far from the end.
        .thread_stack_size(8 << 20)
        // A statement of a multi-statement text that waits for a row lock
        // blocks its thread (see `server::blocking_hook`; one-statement
        // requests await their locks instead), and tokio then hands the
        // worker's other tasks to a replacement thread from this pool. Were
        // the pool smaller than the connections that can wait at once (tokio's
        // default is 512), waiters beyond it would leave the runtime without
        // workers — and the lock holders, whose next statement needs one,
        // could not reach their COMMIT: when every wait blocked, 1,000
        // sysbench clients on a few hot rows fell to zero throughput until
        // lock wait timeouts. Room for every connection, plus the workers.
        .max_blocking_threads(
            usize::try_from(config.max_connections).unwrap_or(usize::MAX / 2)
                + config.worker_threads
                + 16,
        )
        .enable_all()
        .build()
        .map_err(|e| format!("starting the runtime: {e}"))?;
    let tls = if config.tls_cert.is_empty() {
        None
    } else {
        Some(canyon_server::tls::acceptor(
            &config.tls_cert,
            &config.tls_key,
        )?)
    };
    let options = ServerOptions {
        max_connections: config.max_connections,
        max_allowed_packet: usize::try_from(config.max_allowed_packet).unwrap_or(usize::MAX),
        connect_timeout: std::time::Duration::from_secs(config.connect_timeout),
        max_unauthenticated_connections: config.max_unauthenticated_connections,
        tls,
        require_secure_transport: config.require_secure_transport,
    };
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind((config.bind.as_str(), config.port))
            .await
            .map_err(|e| format!("listening on {}:{}: {e}", config.bind, config.port))?;
        let local = listener
            .local_addr()
            .map_err(|e| format!("listening socket: {e}"))?;
        info!(%local, workers = config.worker_threads, "listening");
        if !config.metrics_address.is_empty() {
            canyon_server::metrics::serve(&config.metrics_address, engine.clone()).await?;
        }
        let unix = if config.socket.is_empty() {
            None
        } else {
            Some(bind_unix_socket(std::path::Path::new(&config.socket))?)
        };
        {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(
                out,
                "canyon: ready for connections on {}:{}",
                local.ip(),
                local.port()
            );
            let _ = out.flush();
        }
        canyon_server::serve(listener, unix, engine.clone(), options, shutdown_signal()).await;
        Ok::<(), String>(())
    })?;
    drop(runtime);
    drop(engine);
    info!("stopped");
    Ok(())
}

/// Completes on SIGTERM or SIGINT.
async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = match signal(SignalKind::terminate()) {
        Ok(s) => Some(s),
        Err(e) => {
            warn!("cannot listen for SIGTERM: {e}");
            None
        }
    };
    let term = async {
        match term.as_mut() {
            Some(s) => {
                s.recv().await;
            }
            None => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => info!("SIGINT received"),
        _ = term => info!("SIGTERM received"),
    }
}

/// Raises the soft RLIMIT_NOFILE to the hard limit: every connection is a file
/// descriptor, and so is every RocksDB table file kept open.
fn raise_open_file_limit() {
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => info!(limit, "open-file limit (RLIMIT_NOFILE)"),
        Err(e) => warn!("cannot raise the open-file limit: {e}"),
    }
}

/// Binds the Unix socket, replacing a socket file a killed server left behind
/// (anything else at that path is an error, not something to delete).
fn bind_unix_socket(path: &std::path::Path) -> Result<tokio::net::UnixListener, String> {
    use std::os::unix::fs::FileTypeExt;
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.file_type().is_socket() {
            return Err(format!("{} exists and is not a socket", path.display()));
        }
        let _ = std::fs::remove_file(path);
    }
    let l = tokio::net::UnixListener::bind(path)
        .map_err(|e| format!("listening on {}: {e}", path.display()))?;
    info!(path = %path.display(), "listening on the Unix socket");
    Ok(l)
}
