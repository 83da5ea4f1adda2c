//! The two services of the article as subcommands: `jobs-pipeline api` and
//! `jobs-pipeline store`. Their options are parsed here, apart from the
//! embedded mode's in `main.rs`, so each can change on its own.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use jobs_pipeline::Shutdown;
use jobs_pipeline::api::{Api, ApiConfig};
use jobs_pipeline::consumer::{self, ConsumerConfig};
use jobs_pipeline::postgres::PgConfig;
use redis_client::RedisUrl;
use runtime::{run_until_complete, spawn};

use crate::signals::SignalPipe;

const USAGE: &str = "usage: jobs-pipeline api --broker redis://HOST:PORT/NAME [--port PORT] [--grace-ms MS] [--connections N]
       jobs-pipeline store --broker redis://HOST:PORT/NAME --db postgres://USER@HOST:PORT/DB
                           [--consumer NAME] [--batch N] [--claim-idle-ms MS]

The article's two services, with Redis Streams where Kafka stands and
PostgreSQL where MongoDB stands.
  api     POST /jobs appends each job to the stream NAME:stream and answers
          202 once Redis has it (503 if Redis is down); an Idempotency-Key
          header makes a retry the same job. GET /jobs/ID says queued or
          stored.
  store   reads the stream in the consumer group \"store\", inserts each job
          into the table jobs (id bigint primary key, doc jsonb), and
          acknowledges it after the commit. Run several to share the work.
  --broker URL         the Redis server; NAME prefixes every key
  --db URL             the database; a password goes in the URL or PGPASSWORD
  --port PORT          api: the port on 127.0.0.1 (default 8080; 0 picks one)
  --grace-ms MS        api: how long open requests may finish at Ctrl-C (5000)
  --connections N      api: the most Redis connections (default 16)
  --consumer NAME      store: this process's name in the group (store-PID)
  --batch N            store: jobs per transaction (default 100)
  --claim-idle-ms MS   store: take over another consumer's jobs after they
                       waited this long unacknowledged (default 30000)";

/// A parsed subcommand.
#[derive(Debug)]
enum Service {
    Api(ApiConfig),
    Store(ConsumerConfig),
    Help,
}

/// Runs `api` or `store` if the first argument names one; `None` leaves
/// the arguments to the embedded mode.
pub fn run_if_named(args: &[String]) -> Option<ExitCode> {
    let name = args.first()?;
    if name != "api" && name != "store" {
        return None;
    }
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let service = match parse(name, args.get(1..).unwrap_or_default()) {
        Ok(service) => service,
        Err(message) => {
            eprintln!("jobs-pipeline {name}: {message}\n{USAGE}");
            return Some(ExitCode::from(2));
        }
    };
    Some(match service {
        Service::Help => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Service::Api(config) => run_api(config),
        Service::Store(config) => run_store(config),
    })
}

fn parse(name: &str, args: &[String]) -> Result<Service, String> {
    let mut args = args.iter();
    let (mut broker, mut db) = (None, None);
    let mut port = 8080u16;
    let mut grace = Duration::from_secs(5);
    let mut connections = 16usize;
    let mut consumer = None;
    let mut batch = 100usize;
    let mut claim_idle = Duration::from_secs(30);
    while let Some(arg) = args.next() {
        let mut value = |flag: &str| args.next().ok_or(format!("{flag} needs a value"));
        let number = |flag: &str, text: &str, max: u64| {
            text.parse::<u64>()
                .ok()
                .filter(|n| (1..=max).contains(n) || (flag == "--port" && *n == 0))
                .ok_or(format!(
                    "{flag} takes a number from 1 to {max}, not {text:?}"
                ))
        };
        let api_only = |flag: &str| match name {
            "api" => Ok(()),
            _ => Err(format!("{flag} is an option of `api`, not of `{name}`")),
        };
        let store_only = |flag: &str| match name {
            "store" => Ok(()),
            _ => Err(format!("{flag} is an option of `store`, not of `{name}`")),
        };
        match arg.as_str() {
            "-h" | "--help" => return Ok(Service::Help),
            "--broker" => broker = Some(RedisUrl::parse(value("--broker")?)?),
            "--db" => {
                store_only("--db")?;
                db = Some(PgConfig::parse(
                    value("--db")?,
                    std::env::var("PGPASSWORD").ok(),
                )?);
            }
            "--port" => {
                api_only("--port")?;
                let text = value("--port")?;
                port = text
                    .parse()
                    .map_err(|_| format!("--port takes a number from 0 to 65535, not {text:?}"))?;
            }
            "--grace-ms" => {
                api_only("--grace-ms")?;
                grace =
                    Duration::from_millis(number("--grace-ms", value("--grace-ms")?, 3_600_000)?);
            }
            "--connections" => {
                api_only("--connections")?;
                connections = number("--connections", value("--connections")?, 1024)? as usize;
            }
            "--consumer" => {
                store_only("--consumer")?;
                let text = value("--consumer")?;
                if text.is_empty() || !text.bytes().all(|b| b.is_ascii_graphic()) {
                    return Err("--consumer takes a name of visible ASCII characters".into());
                }
                consumer = Some(text.clone());
            }
            "--batch" => {
                store_only("--batch")?;
                batch = number("--batch", value("--batch")?, 10_000)? as usize;
            }
            "--claim-idle-ms" => {
                store_only("--claim-idle-ms")?;
                claim_idle = Duration::from_millis(number(
                    "--claim-idle-ms",
                    value("--claim-idle-ms")?,
                    86_400_000,
                )?);
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    let broker =
        broker.ok_or("--broker is required, as in --broker redis://127.0.0.1:6379/jobs")?;
    if name == "api" {
        return Ok(Service::Api(ApiConfig {
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
            broker,
            grace,
            request_timeout: Duration::from_secs(10),
            connections,
        }));
    }
    Ok(Service::Store(ConsumerConfig {
        broker,
        db: db.ok_or("--db is required, as in --db postgres://jobs@127.0.0.1:5432/jobs")?,
        consumer: consumer.unwrap_or_else(|| format!("store-{}", std::process::id())),
        batch,
        claim_idle,
    }))
}

/// Turns the first Ctrl-C (or SIGTERM) into `shutdown`.
fn watch_signals(signals: SignalPipe, shutdown: &Shutdown, what: &'static str) {
    let shutdown = shutdown.clone();
    spawn(async move {
        match signals.wait().await {
            Ok(()) => println!("shutting down: {what}"),
            Err(e) => eprintln!("jobs-pipeline: waiting for Ctrl-C failed: {e}"),
        }
        shutdown.trigger();
    });
}

fn run_api(config: ApiConfig) -> ExitCode {
    let broker = config.broker.clone();
    let api = match Api::bind(config) {
        Ok(api) => api,
        Err(e) => {
            eprintln!("jobs-pipeline api: {e}");
            return ExitCode::FAILURE;
        }
    };
    let signals = match SignalPipe::install() {
        Ok(signals) => signals,
        Err(e) => {
            eprintln!("jobs-pipeline api: cannot handle Ctrl-C: {e}");
            return ExitCode::FAILURE;
        }
    };
    let shutdown = Shutdown::new();
    let result = run_until_complete(async {
        api.check_broker()
            .await
            .map_err(|e| format!("the broker at {broker} does not answer: {e}"))?;
        println!(
            "jobs-pipeline api: listening on http://{}/jobs, queueing jobs in {broker}",
            api.local_addr()
        );
        watch_signals(
            signals,
            &shutdown,
            "no longer accepting connections; finishing open requests",
        );
        Ok::<_, String>(api.serve(shutdown.clone()).await)
    });
    match result {
        Ok(Ok(closed)) => {
            println!(
                "api stopped: {} idle connections closed, {} finished their request, {} cut off",
                closed.idle_closed, closed.finished, closed.cut_off
            );
            ExitCode::SUCCESS
        }
        Ok(Err(message)) => {
            eprintln!("jobs-pipeline api: {message}");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("jobs-pipeline api: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run_store(config: ConsumerConfig) -> ExitCode {
    let signals = match SignalPipe::install() {
        Ok(signals) => signals,
        Err(e) => {
            eprintln!("jobs-pipeline store: cannot handle Ctrl-C: {e}");
            return ExitCode::FAILURE;
        }
    };
    let shutdown = Shutdown::new();
    let result = run_until_complete(async {
        let (redis, db) = consumer::prepare(&config).await?;
        println!(
            "jobs-pipeline store: consumer {} in group \"{}\" of {}, storing jobs in {}",
            config.consumer,
            jobs_pipeline::broker::GROUP,
            config.broker,
            config.db
        );
        watch_signals(signals, &shutdown, "finishing the batch in hand");
        Ok::<_, String>(consumer::run(&config, redis, db, &shutdown).await)
    });
    match result {
        Ok(Ok(summary)) => {
            println!(
                "store stopped: {} stored, {} already stored, {} claimed from other consumers; {} left pending in the stream",
                jobs(summary.stored),
                summary.duplicates,
                summary.claimed,
                summary.left_pending
            );
            ExitCode::SUCCESS
        }
        Ok(Err(message)) => {
            eprintln!("jobs-pipeline store: {message}");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("jobs-pipeline store: {e}");
            ExitCode::FAILURE
        }
    }
}

/// "1 job", "2 jobs".
fn jobs(n: u64) -> String {
    if n == 1 {
        "1 job".into()
    } else {
        format!("{n} jobs")
    }
}
