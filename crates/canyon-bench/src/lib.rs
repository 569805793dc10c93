//! Canyon's scalability lab: `canyon bench`.
//!
//! It drives any MySQL-protocol server with sysbench-compatible and order-entry
//! workloads, in the load shapes of classic scaling studies (thread sweeps,
//! CPUs switched on one by one, tens of thousands of connections, paced
//! clients), and explains each figure with the server's CPU, context switches
//! and system calls per transaction. Run with no arguments it starts a Canyon
//! server on a temporary directory and produces a report.
//!
//! # One run, end to end
//!
//! `canyon bench -w oltp_read_write -t 8`:
//!
//! 1. [`cli::run`] turns the flags into a [`runner::Plan`]: the workload
//!    ([`workload::build`]), the steps ([`cli::plan_steps`]: threads 1, 2, 4, 8),
//!    the seed, the results directory; raises RLIMIT_NOFILE.
//! 2. The target starts ([`target::open`]): with no `--target`,
//!    [`target::LocalCanyon`] spawns this executable as `canyon serve --data-dir
//!    <temp> --port 0` and reads its ready line for the port.
//! 3. [`runner::run`] checks that every shard answers (`SELECT VERSION()`,
//!    naming the target on failure), then prepares the data: `CREATE DATABASE`,
//!    then the workload's [`workload::Workload::prepare`] streams (DROP, CREATE,
//!    multi-row INSERTs, CREATE INDEX), in parallel, and checks that every
//!    statement prepares.
//! 4. For each step (and round, and target — A B A B with `--compare`),
//!    [`driver::run_step`] connects the clients, prepares the statements on each
//!    connection, runs the clients ([`workload::TxnSource::next_txn`] →
//!    COM_STMT_EXECUTE per statement), waits out the warm-up, samples /proc
//!    ([`sample`]) around the measured window, and counts into HDR histograms
//!    ([`stats`]).
//! 5. Each [`result::StepResult`] is appended to `steps.jsonl` and
//!    `results.json` is rewritten ([`report::write_json`]), so a failure loses
//!    nothing measured; with two targets [`compare::compare`] pairs the rounds.
//! 6. At the end [`report::write_all`] writes `report.md`, `charts/*.svg`
//!    ([`report::render_svg`]) and the self-contained `report.html`; the
//!    classic table is printed; local servers are stopped and deleted.
//!
//! # Layout
//!
//! - [`workload`] — what clients send; pure and seeded ([`workload::Workload`]).
//! - [`target`] — what is measured; local or remote ([`target::Target`]).
//! - [`driver`] — the only code that talks to servers; one step.
//! - [`sample`], [`stats`] — /proc sampling, counters and histograms.
//! - [`runner`], [`compare`] — the plan over steps, rounds and targets.
//! - [`result`], [`report`] — the JSON schema, tables, charts, HTML.
//!
//! # Not implemented
//!
//! TLS to targets; the text protocol (sysbench `--db-ps-mode=disable`);
//! sysbench's per-query count options; pinning the load generator itself; a
//! syscall count that includes socket recv/send (see [`sample`]); restarting
//! `--in-memory` servers in a CPU sweep (their data does not survive).

pub mod cli;
pub mod compare;
pub mod driver;
pub mod report;
pub mod result;
pub mod runner;
pub mod sample;
pub mod stats;
pub mod target;
pub mod testing;
pub mod workload;

pub use cli::{run, BenchArgs};
pub use result::{RunReport, StepResult, SCHEMA};
pub use target::Target;
pub use workload::Workload;
