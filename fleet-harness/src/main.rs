//! Fleet mode on one machine (issue 17's harness): client OS processes call a real HTTP
//! server on loopback that admits 500 requests per second across all of them and answers the
//! rest 429 with `Retry-After: 1`; in fleet mode they share one retry budget and one adaptive
//! limiter through a real `redis-server` the harness starts, or a Redis Cluster of six
//! (`--redis-cluster`). Every second the harness prints (and writes to JSON and CSV) the
//! admitted rate, the 429s, the attempts, the store's commands (`INFO commandstats`), each
//! store node's round trips, script runs and CPU, and the call latency, per phase; faults
//! strike the store on a timeline (`SIGSTOP`/`SIGCONT`, kill and restart empty, `FLUSHALL`; a
//! cluster's master killed and its replica promoted, a slot migrated).
//!
//! ```text
//! cargo run -p fleet-harness --release -- run --phases local,fleet
//! cargo run -p fleet-harness --release -- run --phases fleet,fleet+faults \
//!     --fault 20s:stop --fault 25s:cont --fault 35s:kill --fault 40s:restart-empty \
//!     --fault 50s:flushall
//! cargo run -p fleet-harness --release -- run --redis-cluster --phases fleet,fleet+faults \
//!     --fault 20s:failover --fault 40s:migrate
//! ```
//!
//! `docs/fleet-harness.md` has the runs and their figures.

mod children;
mod client;
mod cluster_store;
mod command_stats;
mod duration_arg;
mod episode;
mod fault;
mod node_stats;
mod percentile;
mod phase;
mod phase_spec;
mod redis_process;
mod report;
mod resp;
mod run;
mod server;
mod store;
mod store_view;
mod summary;
mod table;
mod token_bucket;
mod wire;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The harness and its client role.
#[derive(Debug, Parser)]
#[command(
    name = "fleet-harness",
    about = "Fleet mode on one machine: client processes, a 500/s server, redis-server, faults"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Runs the phases and reports their figures.
    Run(Box<run::RunOptions>),
    /// One client process (started by `run`).
    #[command(hide = true)]
    Client(Box<client::ClientOptions>),
}

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Command::Run(options) => run::main(*options),
        Command::Client(options) => client::main(*options),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("fleet-harness: {error}");
            ExitCode::FAILURE
        }
    }
}
