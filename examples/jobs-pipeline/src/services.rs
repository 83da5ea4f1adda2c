//! The two services of the article as subcommands: `jobs-pipeline api` and
//! `jobs-pipeline store`. Their options are parsed here, apart from the
//! embedded mode's in `main.rs`, so each can change on its own.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use jobs_pipeline::Shutdown;
use jobs_pipeline::api::{Api, ApiConfig};
use jobs_pipeline::broker::Keys;
use jobs_pipeline::consumer::{self, ConsumerConfig};
use jobs_pipeline::postgres::PgConfig;
use redis_client::RedisUrl;
use runtime::run_until_complete;

use crate::signals;

/// `jobs-pipeline api`: POST /jobs appends each job to the stream
/// NAME:stream and answers 202 once Redis has it (503 if Redis is down); an
/// Idempotency-Key header makes a retry the same job. GET /jobs/ID says
/// queued, stored, or failed. What Redis has forgotten (a stored job's
/// status, a key a day after its job was stored) the api asks the store's
/// table.
#[derive(Debug, Args)]
pub struct ApiArgs {
    /// The Redis server; NAME prefixes every key.
    #[arg(long, value_name = "redis://HOST:PORT/NAME", value_parser = RedisUrl::parse)]
    broker: RedisUrl,
    /// The store's database; a password goes in the URL or PGPASSWORD.
    #[arg(long, value_name = "postgres://USER@HOST:PORT/DB")]
    db: String,
    /// The port on 127.0.0.1; 0 picks a free one.
    #[arg(long, value_name = "PORT", default_value_t = 8080)]
    port: u16,
    /// How long open requests may take to finish at Ctrl-C.
    #[arg(long = "grace-ms", value_name = "MS", default_value_t = 5000,
          value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    grace_ms: u64,
    /// The most Redis connections.
    #[arg(long, value_name = "N", default_value_t = 16,
          value_parser = clap::value_parser!(u16).range(1..=1024))]
    connections: u16,
}

/// `jobs-pipeline store`: reads the stream in the consumer group "store",
/// inserts each job into the table jobs (id bigint primary key, doc jsonb),
/// and acknowledges it after the commit. An entry it can never store (not
/// a job, or refused by PostgreSQL for its data) goes to the stream
/// NAME:dead with the reason. Run several to share the work.
#[derive(Debug, Args)]
pub struct StoreArgs {
    /// The Redis server; NAME prefixes every key.
    #[arg(long, value_name = "redis://HOST:PORT/NAME", value_parser = RedisUrl::parse)]
    broker: RedisUrl,
    /// The database; a password goes in the URL or PGPASSWORD. Checked after
    /// parsing, so that no error message can echo a password.
    #[arg(long, value_name = "postgres://USER@HOST:PORT/DB")]
    db: String,
    /// This process's name in the group [default: store-PID].
    #[arg(long, value_name = "NAME", value_parser = parse_consumer)]
    consumer: Option<String>,
    /// Jobs per transaction.
    #[arg(long, value_name = "N", default_value_t = 100,
          value_parser = clap::value_parser!(u16).range(1..=10_000))]
    batch: u16,
    /// Take over another consumer's jobs after they waited this long
    /// unacknowledged.
    #[arg(long = "claim-idle-ms", value_name = "MS", default_value_t = 30_000,
          value_parser = clap::value_parser!(u64).range(1..=86_400_000))]
    claim_idle_ms: u64,
}

fn parse_consumer(text: &str) -> Result<String, String> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_graphic()) {
        return Err("a name of visible ASCII characters".into());
    }
    Ok(text.to_string())
}

/// Logs at warn unless `RUST_LOG` says otherwise: the services print their
/// own progress lines.
fn init_logging() {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
}

/// The `--db` URL, with PGPASSWORD. Checked after clap has parsed, so
/// that no error message of clap's can echo a password; a bad URL is a
/// usage error all the same.
fn db_config(url: &str) -> Result<PgConfig, ExitCode> {
    PgConfig::parse(url, std::env::var("PGPASSWORD").ok()).map_err(|message| {
        eprintln!("error: invalid value for '--db <postgres://USER@HOST:PORT/DB>': {message}");
        ExitCode::from(2)
    })
}

impl ApiArgs {
    pub fn run(self) -> ExitCode {
        init_logging();
        let db = match db_config(&self.db) {
            Ok(db) => db,
            Err(code) => return code,
        };
        run_api(ApiConfig {
            addr: SocketAddr::from(([127, 0, 0, 1], self.port)),
            broker: self.broker,
            db,
            grace: Duration::from_millis(self.grace_ms),
            limits: jobs_pipeline::front::Limits::default(),
            connections: usize::from(self.connections),
        })
    }
}

impl StoreArgs {
    pub fn run(self) -> ExitCode {
        init_logging();
        let db = match db_config(&self.db) {
            Ok(db) => db,
            Err(code) => return code,
        };
        run_store(ConsumerConfig {
            broker: self.broker,
            db,
            consumer: self
                .consumer
                .unwrap_or_else(|| format!("store-{}", std::process::id())),
            batch: usize::from(self.batch),
            claim_idle: Duration::from_millis(self.claim_idle_ms),
        })
    }
}

fn run_api(config: ApiConfig) -> ExitCode {
    let broker = config.broker.clone();
    let db = config.db.clone();
    let api = match Api::bind(config) {
        Ok(api) => api,
        Err(e) => {
            eprintln!("jobs-pipeline api: {e}");
            return ExitCode::FAILURE;
        }
    };
    let signals = match signals::install_or_say("jobs-pipeline api") {
        Ok(signals) => signals,
        Err(code) => return code,
    };
    let shutdown = Shutdown::new();
    let result = run_until_complete(async {
        api.check_services().await?;
        println!(
            "jobs-pipeline api: listening on http://{}/jobs, queueing jobs in {broker}, asking {db} about stored jobs",
            api.local_addr()
        );
        signals::trigger_on_signal(
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
    let signals = match signals::install_or_say("jobs-pipeline store") {
        Ok(signals) => signals,
        Err(code) => return code,
    };
    let shutdown = Shutdown::new();
    let dead = Keys::new(&config.broker).dead;
    let result = run_until_complete(async {
        let (redis, db) = consumer::prepare(&config).await?;
        println!(
            "jobs-pipeline store: consumer {} in group \"{}\" of {}, storing jobs in {}",
            config.consumer,
            jobs_pipeline::broker::GROUP,
            config.broker,
            config.db
        );
        signals::trigger_on_signal(signals, &shutdown, "finishing the batch in hand");
        Ok::<_, String>(consumer::run(&config, redis, db, &shutdown).await)
    });
    match result {
        Ok(Ok(summary)) => {
            // Said only when it happened, like the embedded mode's failures.
            let aside = match summary.set_aside {
                0 => String::new(),
                n => format!(
                    "; {n} could never be stored and were set aside in {dead} (see the log)"
                ),
            };
            println!(
                "store stopped: {} stored, {} already stored, {} claimed from other consumers; {} left pending in the stream{aside}",
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
pub fn jobs(n: u64) -> String {
    if n == 1 {
        "1 job".into()
    } else {
        format!("{n} jobs")
    }
}
