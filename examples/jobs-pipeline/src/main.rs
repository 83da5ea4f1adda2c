//! `jobs-pipeline`: POST jobs, they are queued, a consumer stores them in a
//! JSON Lines file; Ctrl-C stops it without losing one.

mod services;
mod signals;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use jobs_pipeline::{Config, Server, Shutdown};
use runtime::{run_until_complete, spawn};

const USAGE: &str = "usage: jobs-pipeline [--port PORT] [--store FILE] [--grace-ms MS]

Takes jobs over HTTP on 127.0.0.1 and stores them in a JSON Lines file.
  POST /jobs  {\"name\": \"...\", \"priority\": 0-9}  queues a job (202 Accepted)
  GET /jobs                                   lists the stored jobs
Ctrl-C stops accepting, finishes open requests, and stores every queued job;
a second Ctrl-C exits at once.
  --port PORT     the port (default 8080; 0 picks a free one)
  --store FILE    where jobs go (default jobs.jsonl)
  --grace-ms MS   how long open requests may take to finish at shutdown
                  (default 5000)";

fn main() -> ExitCode {
    // `api` and `store`, the two-service mode, parse their own options.
    if let Some(code) = services::run_if_named(&std::env::args().skip(1).collect::<Vec<_>>()) {
        return code;
    }
    env_logger::init();
    let config = match parse_args(std::env::args().skip(1)) {
        Ok(Some(config)) => config,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("jobs-pipeline: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let server = match Server::bind(config) {
        Ok(server) => server,
        Err(e) => {
            eprintln!("jobs-pipeline: {e}");
            return ExitCode::FAILURE;
        }
    };
    // Before the banner: whoever reads it may signal us at once.
    let signals = match signals::SignalPipe::install() {
        Ok(signals) => signals,
        Err(e) => {
            eprintln!("jobs-pipeline: cannot handle Ctrl-C: {e}");
            return ExitCode::FAILURE;
        }
    };
    let addr = server.local_addr();
    let store = server.store().path().display().to_string();
    println!(
        "jobs-pipeline: listening on http://{addr}/jobs, storing jobs in {store} ({} there already)",
        jobs(server.store().jobs().len() as u64)
    );
    println!("try: curl -i -d '{{\"name\": \"resize\", \"priority\": 3}}' http://{addr}/jobs");
    let shutdown = Shutdown::new();
    let summary = run_until_complete(async {
        let watcher = spawn({
            let shutdown = shutdown.clone();
            async move {
                match signals.wait().await {
                    Ok(()) => println!(
                        "shutting down: no longer accepting connections; finishing open requests"
                    ),
                    Err(e) => eprintln!("jobs-pipeline: waiting for Ctrl-C failed: {e}"),
                }
                shutdown.trigger();
            }
        });
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
        n => format!(", and {} could not be stored (see the log)", jobs(n)),
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

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Option<Config>, String> {
    let mut config = Config::default();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "-h" | "--help" => return Ok(None),
            "--port" => {
                let port = value("--port")?;
                let port: u16 = port
                    .parse()
                    .map_err(|_| format!("--port takes a number from 0 to 65535, not {port:?}"))?;
                config.addr = SocketAddr::from(([127, 0, 0, 1], port));
            }
            "--store" => config.store = PathBuf::from(value("--store")?),
            "--grace-ms" => {
                let ms = value("--grace-ms")?;
                let ms: u64 = ms
                    .parse()
                    .ok()
                    .filter(|ms| *ms <= 3_600_000)
                    .ok_or_else(|| {
                        format!("--grace-ms takes a number from 0 to 3600000, not {ms:?}")
                    })?;
                config.grace = Duration::from_millis(ms);
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(Some(config))
}

/// "1 job", "2 jobs".
fn jobs(n: u64) -> String {
    if n == 1 {
        "1 job".into()
    } else {
        format!("{n} jobs")
    }
}
