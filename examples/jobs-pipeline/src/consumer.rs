//! The article's second service: read the stream in a consumer group,
//! insert each job into PostgreSQL, and acknowledge it only after the
//! insert committed.
//!
//! That order is the whole guarantee. A process killed between the commit
//! and the `XACK` leaves the entry pending; another consumer claims it
//! (`XAUTOCLAIM`) and inserts it again, and the primary key turns the
//! second insert into nothing. At least once, plus an idempotent write,
//! is exactly once where it counts: in the table.

use std::time::{Duration, Instant};

use redis_client::{Connection, Error as RedisError, RedisUrl, StreamEntry};
use runtime::{sleep, timeout};

use crate::broker::{GROUP, Keys};
use crate::front::{Either, race};
use crate::job::Job;
use crate::postgres::{Client, PgConfig, PgError};
use crate::shutdown::Shutdown;

#[derive(Clone, Debug)]
pub struct ConsumerConfig {
    pub broker: RedisUrl,
    pub db: PgConfig,
    /// This process's name in the group; unique per process.
    pub consumer: String,
    /// The most jobs read, inserted and acknowledged at once.
    pub batch: usize,
    /// How long an entry must sit unacknowledged before another consumer
    /// takes it over.
    pub claim_idle: Duration,
}

/// What a run did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConsumerSummary {
    /// Jobs this process inserted.
    pub stored: u64,
    /// Jobs it found already in the table (redelivered after a crash).
    pub duplicates: u64,
    /// Entries it took over from other consumers.
    pub claimed: u64,
    /// Jobs it held when it stopped without storing them: they stay
    /// pending in the stream for another consumer.
    pub left_pending: u64,
}

pub const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS jobs (
    id bigint PRIMARY KEY,
    doc jsonb NOT NULL,
    stored_at timestamptz NOT NULL DEFAULT clock_timestamp()
)";

// ANCHOR: insert
/// The idempotent insert: the job id is the primary key, and a second
/// insert of the same job does nothing.
pub const INSERT: &str =
    "INSERT INTO jobs (id, doc) VALUES ($1, $2::jsonb) ON CONFLICT (id) DO NOTHING";
// ANCHOR_END: insert

/// How long one `XREADGROUP` waits for new entries: also how quickly an
/// idle consumer notices Ctrl-C.
const BLOCK: Duration = Duration::from_millis(500);
/// How long one round trip may take before the connection is deemed lost.
const IO_TIMEOUT: Duration = Duration::from_secs(10);
const BACKOFF_FIRST: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(5);

/// Connects to both servers and prepares the group and the table. Either
/// one unreachable here is an error for the caller to report: a wrong URL
/// should not look like an outage.
pub async fn prepare(config: &ConsumerConfig) -> Result<(Connection, Client), String> {
    let keys = Keys::new(&config.broker);
    let mut redis = timeout(IO_TIMEOUT, config.broker.connect())
        .await
        .map_err(|e| format!("redis at {}: {e}", config.broker))?
        .map_err(|e| format!("{e}"))?;
    // From `0`: jobs appended before any consumer existed are read too.
    redis
        .xgroup_create(&keys.stream, GROUP, "0")
        .await
        .map_err(|e| e.to_string())?;
    let mut db = timeout(IO_TIMEOUT, Client::connect(&config.db))
        .await
        .map_err(|e| format!("postgres at {}: {e}", config.db))?
        .map_err(|e| e.to_string())?;
    db.execute(SCHEMA, &[]).await.map_err(|e| e.to_string())?;
    Ok((redis, db))
}

/// The consumer's connections; `None` after one was lost.
struct Links {
    redis: Option<Connection>,
    db: Option<Client>,
    /// Redis said `NOGROUP`: it restarted without its data, and the group
    /// must be made again before the next read.
    regroup: bool,
}

/// Consumes until `shutdown`. The loop holds at most one batch: it is
/// read (or claimed), inserted in one transaction, then acknowledged. A
/// lost server is retried with backoff, the batch kept; Ctrl-C lets the
/// batch finish if it can, and otherwise leaves it pending in the stream.
pub async fn run(
    config: &ConsumerConfig,
    redis: Connection,
    db: Client,
    shutdown: &Shutdown,
) -> ConsumerSummary {
    let keys = Keys::new(&config.broker);
    let mut links = Links {
        redis: Some(redis),
        db: Some(db),
        regroup: false,
    };
    let mut summary = ConsumerSummary::default();
    let mut batch: Vec<StreamEntry> = Vec::new();
    let mut claim_cursor = "0-0".to_string();
    let mut next_claim = Instant::now();
    let mut backoff = BACKOFF_FIRST;
    loop {
        if shutdown.is_triggered() && (batch.is_empty() || links.db.is_none()) {
            summary.left_pending = batch.len() as u64;
            return summary;
        }
        let result = turn(
            config,
            &keys,
            &mut links,
            &mut batch,
            &mut claim_cursor,
            &mut next_claim,
            &mut summary,
        )
        .await;
        match result {
            Ok(()) => backoff = BACKOFF_FIRST,
            Err(e) => {
                links.regroup |= e.contains("NOGROUP");
                log::warn!(
                    "{e}; retrying in {backoff:?} with {} jobs held",
                    batch.len()
                );
                if let Either::Right(()) = race(sleep(backoff), shutdown.wait()).await {
                    // Try the batch once more, then stop either way.
                    let _ = turn(
                        config,
                        &keys,
                        &mut links,
                        &mut batch,
                        &mut claim_cursor,
                        &mut next_claim,
                        &mut summary,
                    )
                    .await;
                    summary.left_pending = batch.len() as u64;
                    return summary;
                }
                backoff = (backoff * 2).min(BACKOFF_MAX);
            }
        }
    }
}

// ANCHOR: turn
/// One turn: fill the batch if it is empty (claimed entries first, then
/// new ones), insert it, acknowledge it.
async fn turn(
    config: &ConsumerConfig,
    keys: &Keys,
    links: &mut Links,
    batch: &mut Vec<StreamEntry>,
    claim_cursor: &mut String,
    next_claim: &mut Instant,
    summary: &mut ConsumerSummary,
) -> Result<(), String> {
    if links.regroup {
        let redis = redis_link(config, &mut links.redis).await?;
        let made = io(redis.xgroup_create(&keys.stream, GROUP, "0")).await;
        check_redis(made, &mut links.redis)?;
        log::warn!("made the consumer group again: the stream was gone from Redis");
        links.regroup = false;
    }
    if batch.is_empty() {
        let redis = redis_link(config, &mut links.redis).await?;
        if Instant::now() >= *next_claim {
            let claimed = io(redis.xautoclaim(
                &keys.stream,
                GROUP,
                &config.consumer,
                config.claim_idle,
                claim_cursor,
                config.batch,
            ))
            .await;
            let claimed = check_redis(claimed, &mut links.redis)?;
            if claimed.next == "0-0" {
                // A full scan of the pending list: look again later.
                *next_claim = Instant::now() + config.claim_idle / 2;
            }
            *claim_cursor = claimed.next;
            if !claimed.entries.is_empty() {
                log::info!(
                    "claimed {} jobs left pending by another consumer",
                    claimed.entries.len()
                );
                summary.claimed += claimed.entries.len() as u64;
                *batch = claimed.entries;
            }
        }
        if batch.is_empty() {
            let redis = redis_link(config, &mut links.redis).await?;
            let read = io(redis.xreadgroup(
                GROUP,
                &config.consumer,
                &keys.stream,
                config.batch,
                Some(BLOCK),
            ))
            .await;
            *batch = check_redis(read, &mut links.redis)?;
        }
        if batch.is_empty() {
            return Ok(());
        }
    }
    // Decode; an entry that is not a job can never be stored, so it is
    // logged and acknowledged rather than retried forever.
    let mut jobs = Vec::with_capacity(batch.len());
    for entry in batch.iter() {
        match entry.field("job").map(serde_json::from_slice::<Job>) {
            Some(Ok(job)) => jobs.push((
                job.id.to_string(),
                String::from_utf8_lossy(entry.field("job").unwrap_or_default()).into_owned(),
            )),
            _ => log::error!(
                "stream entry {} is not a job; acknowledging it unstored",
                entry.id
            ),
        }
    }
    let params: Vec<[Option<&str>; 2]> = jobs
        .iter()
        .map(|(id, json)| [Some(id.as_str()), Some(json.as_str())])
        .collect();
    let params: Vec<&[Option<&str>]> = params.iter().map(|p| &p[..]).collect();
    if !params.is_empty() {
        let db = db_link(config, &mut links.db).await?;
        let counts = match timeout(IO_TIMEOUT, db.execute_batch(INSERT, &params)).await {
            Ok(Ok(counts)) => counts,
            Ok(Err(e)) => {
                if e.is_fatal() {
                    links.db = None;
                }
                return Err(format!("cannot store {} jobs: {e}", params.len()));
            }
            Err(elapsed) => {
                links.db = None;
                return Err(format!(
                    "cannot store {} jobs: postgres {elapsed}",
                    params.len()
                ));
            }
        };
        let inserted = counts.iter().filter(|n| **n == 1).count() as u64;
        summary.stored += inserted;
        summary.duplicates += counts.len() as u64 - inserted;
    }
    // Committed: now, and only now, acknowledge. The status hash is
    // written in the same round trip.
    let ids: Vec<&str> = batch.iter().map(|e| e.id.as_str()).collect();
    let mut ack = vec!["XACK", keys.stream.as_str(), GROUP];
    ack.extend(&ids);
    let mut mark = vec!["HSET", keys.status.as_str()];
    for (id, _) in &jobs {
        mark.extend([id.as_str(), "stored"]);
    }
    let mut commands = vec![ack];
    if !jobs.is_empty() {
        commands.push(mark);
    }
    let redis = redis_link(config, &mut links.redis).await?;
    let replies = check_redis(io(redis.pipeline(&commands)).await, &mut links.redis)?;
    for reply in replies {
        reply.map_err(|e| e.to_string())?;
    }
    log::info!("stored and acknowledged a batch of {}", jobs.len());
    batch.clear();
    Ok(())
}
// ANCHOR_END: turn

/// Runs one Redis call with a deadline.
async fn io<T>(call: impl Future<Output = Result<T, RedisError>>) -> Result<T, RedisError> {
    match timeout(IO_TIMEOUT, call).await {
        Ok(result) => result,
        Err(elapsed) => Err(RedisError::Io(elapsed.into())),
    }
}

/// Drops the Redis connection after an error that broke it.
fn check_redis<T>(
    result: Result<T, RedisError>,
    link: &mut Option<Connection>,
) -> Result<T, String> {
    result.map_err(|e| {
        if e.is_fatal() {
            *link = None;
        }
        e.to_string()
    })
}

async fn redis_link<'a>(
    config: &ConsumerConfig,
    link: &'a mut Option<Connection>,
) -> Result<&'a mut Connection, String> {
    if link.is_none() {
        let conn = io(config.broker.connect())
            .await
            .map_err(|e| e.to_string())?;
        log::info!("reconnected to {}", config.broker);
        *link = Some(conn);
    }
    link.as_mut()
        .ok_or_else(|| "no redis connection".to_string())
}

async fn db_link<'a>(
    config: &ConsumerConfig,
    link: &'a mut Option<Client>,
) -> Result<&'a mut Client, String> {
    if link.is_none() {
        let client = match timeout(IO_TIMEOUT, Client::connect(&config.db)).await {
            Ok(Ok(client)) => client,
            Ok(Err(e)) => return Err(e.to_string()),
            Err(elapsed) => return Err(PgError::Io(elapsed.into()).to_string()),
        };
        log::info!("reconnected to {}", config.db);
        *link = Some(client);
    }
    link.as_mut()
        .ok_or_else(|| "no postgres connection".to_string())
}
