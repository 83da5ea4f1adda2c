//! `jobs-pipeline`: POST jobs, they are queued, a consumer stores them in a
//! JSON Lines file; Ctrl-C stops it without losing one.

mod services;
mod signals;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use jobs_pipeline::{Config, Server, Shutdown};
use runtime::run_until_complete;
use services::jobs;

/// Takes jobs over HTTP on 127.0.0.1 and stores them in a JSON Lines file:
/// POST /jobs {"name": "...", "priority": 0-9} stores a job (202 Accepted
/// once it is in the file, 507 if the file cannot take it), GET /jobs lists
/// the stored jobs a page at a time (?after=ID&limit=N, 100 by default; a
/// Link header names the next page). Ctrl-C stops accepting, finishes open
/// requests, and stores every queued job; a second Ctrl-C exits at once.
///
/// With `api` or `store`: the article's two services, with Redis Streams
/// where Kafka stands and PostgreSQL where MongoDB stands.
#[derive(Debug, Parser)]
#[command(name = "jobs-pipeline", args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    service: Option<Service>,
    /// The port; 0 picks a free one.
    #[arg(long, value_name = "PORT", default_value_t = 8080)]
    port: u16,
    /// Where jobs go.
    #[arg(long, value_name = "FILE", default_value = "jobs.jsonl")]
    store: PathBuf,
    /// How long open requests may take to finish at shutdown.
    #[arg(long = "grace-ms", value_name = "MS", default_value_t = 5000,
          value_parser = clap::value_parser!(u64).range(0..=3_600_000))]
    grace_ms: u64,
}

#[derive(Debug, Subcommand)]
enum Service {
    Api(services::ApiArgs),
    Store(services::StoreArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.service {
        Some(Service::Api(api)) => return api.run(),
        Some(Service::Store(store)) => return store.run(),
        None => {}
    }
    env_logger::init();
    let config = Config {
        addr: SocketAddr::from(([127, 0, 0, 1], cli.port)),
        store: cli.store,
        grace: Duration::from_millis(cli.grace_ms),
        limits: jobs_pipeline::front::Limits::default(),
    };
    let server = match Server::bind(config) {
        Ok(server) => server,
        Err(e) => {
            eprintln!("jobs-pipeline: {e}");
            return ExitCode::FAILURE;
        }
    };
    // Before the banner: whoever reads it may signal us at once.
    let signals = match signals::install_or_say("jobs-pipeline") {
        Ok(signals) => signals,
        Err(code) => return code,
    };
    let addr = server.local_addr();
    let store = server.store().path().display().to_string();
    println!(
        "jobs-pipeline: listening on http://{addr}/jobs, storing jobs in {store} ({} there already)",
        jobs(server.store().jobs().len() as u64)
    );
    println!("try: curl -i -d '{{\"name\": \"resize\", \"priority\": 3}}' http://{addr}/jobs");
    if server.store().next_id().is_none() {
        // It still serves its jobs, so this is a warning, not a refusal to
        // start; every POST gets a 507 saying the same.
        eprintln!(
            "jobs-pipeline: {store} holds job id {}, the highest there is: new jobs will be refused",
            u64::MAX
        );
    }
    let shutdown = Shutdown::new();
    let summary = run_until_complete(async {
        let watcher = signals::trigger_on_signal(
            signals,
            &shutdown,
            "no longer accepting connections; finishing open requests",
        );
        let summary = server.serve(shutdown).await;
        watcher.cancel();
        summary
    });
    let summary = match summary {
        Ok(Ok(summary)) => summary,
        Ok(Err(e)) | Err(e) => {
            eprintln!("jobs-pipeline: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "connections at shutdown: {} idle, closed; {} busy, finished their request; {} cut off after the grace period",
        summary.idle_closed, summary.finished, summary.cut_off
    );
    let lost = match summary.failed {
        0 => String::new(),
        n => format!(
            ", and {} refused with 507: the store could not write them (see the log)",
            jobs(n)
        ),
    };
    println!(
        "drained the queue: {} stored this run{lost}; {store} holds {}",
        jobs(summary.stored),
        jobs(summary.total as u64)
    );
    if summary.failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
