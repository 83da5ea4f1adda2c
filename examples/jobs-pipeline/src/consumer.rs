//! The article's second service: read the stream in a consumer group,
//! insert each job into PostgreSQL, and acknowledge it only after the
//! insert committed.
//!
//! That order is the whole guarantee. A process killed between the commit
//! and the `XACK` leaves the entry pending; another consumer claims it
//! (`XAUTOCLAIM`) and inserts it again, and the primary key turns the
//! second insert into nothing. At least once, plus an idempotent write,
//! is exactly once where it counts: in the table.
//!
//! An entry that can never be stored (not a job, or a job PostgreSQL
//! refuses for its data) would hold up every job behind it if it were
//! retried; it is copied to the dead-letter stream with the reason, then
//! acknowledged like the rest.

use std::time::{Duration, Instant};

use redis_client::{Connection, Error as RedisError, RedisUrl, StreamEntry};
use runtime::{Either, select, sleep, timeout};

use crate::broker::{GROUP, KEY_TTL_SECONDS, KEYED, Keys};
use crate::job::Job;
use crate::postgres::{Client, PgConfig, PgError};
use crate::shutdown::Shutdown;
use crate::table::{self, FIND, INSERT, SCHEMA};

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
    /// Entries it could never store (not a job, or a job PostgreSQL
    /// refused for its data), copied with the reason to the dead-letter
    /// stream and acknowledged.
    pub set_aside: u64,
    /// Jobs it held when it stopped without storing them: they stay
    /// pending in the stream for another consumer.
    pub left_pending: u64,
}

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
/// lost server is retried with backoff, the batch kept; a job PostgreSQL
/// refuses for its data is set aside instead (see `insert`). Ctrl-C lets
/// the batch finish if it can, and otherwise leaves it pending in the
/// stream.
pub async fn run(
    config: &ConsumerConfig,
    redis: Connection,
    db: Client,
    shutdown: &Shutdown,
) -> ConsumerSummary {
    let mut consumer = Consumer {
        config,
        keys: Keys::new(&config.broker),
        links: Links {
            redis: Some(redis),
            db: Some(db),
            regroup: false,
        },
        batch: Vec::new(),
        claim_cursor: "0-0".to_string(),
        next_claim: Instant::now(),
        summary: ConsumerSummary::default(),
    };
    let mut backoff = BACKOFF_FIRST;
    loop {
        if shutdown.is_triggered() && (consumer.batch.is_empty() || consumer.links.db.is_none()) {
            return consumer.stop();
        }
        match consumer.turn().await {
            Ok(()) => backoff = BACKOFF_FIRST,
            Err(e) => {
                consumer.links.regroup |= e.contains("NOGROUP");
                log::warn!(
                    "{e}; retrying in {backoff:?} with {} jobs held",
                    consumer.batch.len()
                );
                if let Either::Right(()) = select(sleep(backoff), shutdown.wait()).await {
                    // Try the batch once more, then stop either way.
                    let _ = consumer.turn().await;
                    return consumer.stop();
                }
                backoff = (backoff * 2).min(BACKOFF_MAX);
            }
        }
    }
}

/// What the consumer's loop carries from one turn to the next.
struct Consumer<'a> {
    config: &'a ConsumerConfig,
    keys: Keys,
    links: Links,
    /// The batch in hand: read or claimed, not yet acknowledged.
    batch: Vec<StreamEntry>,
    /// Where the next scan of other consumers' pending jobs goes on from.
    claim_cursor: String,
    /// When to scan for them again.
    next_claim: Instant,
    summary: ConsumerSummary,
}

impl Consumer<'_> {
    /// The summary, with what is left pending in the stream.
    fn stop(mut self) -> ConsumerSummary {
        self.summary.left_pending = self.batch.len() as u64;
        self.summary
    }
}

// ANCHOR: turn
/// One turn: fill the batch if it is empty (claimed entries first, then
/// new ones), insert it (setting aside what can never be stored),
/// acknowledge it.
impl Consumer<'_> {
    async fn turn(&mut self) -> Result<(), String> {
        let Consumer {
            config,
            keys,
            links,
            batch,
            claim_cursor,
            next_claim,
            summary,
        } = self;
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
        // An entry that is not a job can never be stored, so it is set aside
        // rather than retried forever; so is a job that PostgreSQL refuses for
        // its data.
        let (jobs, mut refused) = decode(batch);
        let stored = insert(config, &mut links.db, jobs, &mut refused, summary).await?;
        if !refused.is_empty() {
            set_aside(config, keys, &mut links.redis, batch, &refused).await?;
        }
        // Committed, and the rest set aside: now, and only now, acknowledge,
        // and delete the entries from the stream: the one group has them, and
        // an acknowledged entry kept would grow the stream by every job ever
        // accepted (100,000 jobs: 100,000 entries). What Redis knew about a
        // stored job goes in the same round trip, for the same reason: its
        // status at once, its idempotency key after a day of fast retries; the
        // api asks the table from then on. A failed job is in no table, so
        // Redis keeps its status and key.
        let ids: Vec<&str> = batch.iter().map(|e| e.id.as_str()).collect();
        let mut ack = vec!["XACK".to_string(), keys.stream.clone(), GROUP.to_string()];
        ack.extend(ids.iter().map(|id| id.to_string()));
        let mut delete = vec!["XDEL".to_string(), keys.stream.clone()];
        delete.extend(ids.iter().map(|id| id.to_string()));
        let mut commands = vec![ack, delete];
        if !stored.is_empty() {
            let mut forget = vec!["HDEL".to_string(), keys.status.clone()];
            forget.extend(stored.iter().map(|job| job.id.clone()));
            commands.push(forget);
        }
        let ttl = KEY_TTL_SECONDS.to_string();
        for job in stored.iter().filter(|job| job.keyed) {
            commands.push(vec![
                "EXPIRE".to_string(),
                keys.idempotency(&job.id),
                ttl.clone(),
            ]);
        }
        // A job whose id another job holds: Redis answers for the stored one.
        for taken in refused.iter().filter_map(|r| r.taken_by.as_ref()) {
            commands.push(vec![
                "HDEL".to_string(),
                keys.status.clone(),
                taken.id.clone(),
            ]);
            if taken.keyed {
                let first = serde_json::to_string(&taken.first).map_err(|e| e.to_string())?;
                commands.push(vec![
                    "SET".to_string(),
                    keys.idempotency(&taken.id),
                    first,
                    "EX".to_string(),
                    ttl.clone(),
                ]);
            }
        }
        let failed: Vec<&str> = refused.iter().filter_map(|r| r.id.as_deref()).collect();
        if !failed.is_empty() {
            let mut mark = vec!["HSET".to_string(), keys.status.clone()];
            for id in failed {
                mark.extend([id.to_string(), "failed".to_string()]);
            }
            commands.push(mark);
        }
        let redis = redis_link(config, &mut links.redis).await?;
        let replies = check_redis(io(redis.pipeline(&commands)).await, &mut links.redis)?;
        for reply in replies {
            reply.map_err(|e| e.to_string())?;
        }
        summary.set_aside += refused.len() as u64;
        log::info!("stored and acknowledged a batch of {}", stored.len());
        batch.clear();
        Ok(())
    }
}
// ANCHOR_END: turn

/// A job of the batch, as the insert takes it.
struct Row {
    /// Its entry's place in the batch.
    entry: usize,
    id: String,
    /// Whether it came with an idempotency key, whose record expires once
    /// the job is stored.
    keyed: bool,
    /// The job as the stream holds it.
    json: String,
}

/// An entry of the batch that can never be stored, and why.
struct Refused {
    /// Its place in the batch.
    entry: usize,
    /// The job id, when the entry is a job: its status becomes `failed`.
    id: Option<String>,
    reason: String,
    /// Set when the job's id is taken by another job in the table.
    taken_by: Option<Taken>,
}

/// A job id that belongs to a job stored earlier: Redis is told the stored
/// job, so that it answers as the table does.
struct Taken {
    id: String,
    keyed: bool,
    first: crate::Job,
}

/// Splits the batch into jobs and entries that are not jobs.
fn decode(batch: &[StreamEntry]) -> (Vec<Row>, Vec<Refused>) {
    let mut jobs = Vec::with_capacity(batch.len());
    let mut refused = Vec::new();
    for (entry, item) in batch.iter().enumerate() {
        let decoded = match item.field("job") {
            Some(raw) => serde_json::from_slice::<Job>(raw)
                .map(|job| (job.id, raw))
                .map_err(|e| format!("not a job: {e}")),
            None => Err("not a job: the entry has no job field".to_string()),
        };
        match decoded {
            Ok((id, raw)) => jobs.push(Row {
                entry,
                id: id.to_string(),
                keyed: item.field(KEYED).is_some(),
                json: String::from_utf8_lossy(raw).into_owned(),
            }),
            Err(reason) => refused.push(Refused {
                entry,
                id: None,
                reason,
                taken_by: None,
            }),
        }
    }
    (jobs, refused)
}

/// Inserts the jobs in one transaction and returns them, stored. If
/// PostgreSQL refuses the batch for its data ([`PgError::is_data_error`]:
/// a name with U+0000 from before the api refused those, an id beyond
/// `bigint` from another producer), the whole transaction rolled back, and
/// retrying it would fail the same way forever, holding up every job behind
/// it. So each job is inserted again on its own: the good ones are stored,
/// and the ones refused move to `refused` with the server's reason. Any
/// other error (a lost connection, a server shutting down) is returned, and
/// the caller keeps the batch and retries; jobs already inserted one by one
/// are then found in the table, which the primary key makes harmless.
async fn insert(
    config: &ConsumerConfig,
    link: &mut Option<Client>,
    jobs: Vec<Row>,
    refused: &mut Vec<Refused>,
    summary: &mut ConsumerSummary,
) -> Result<Vec<Row>, String> {
    if jobs.is_empty() {
        return Ok(jobs);
    }
    let params: Vec<[Option<&str>; 2]> = jobs
        .iter()
        .map(|job| [Some(job.id.as_str()), Some(job.json.as_str())])
        .collect();
    let params: Vec<&[Option<&str>]> = params.iter().map(|p| &p[..]).collect();
    let db = db_link(config, link).await?;
    let error = match timeout(IO_TIMEOUT, db.execute_batch(INSERT, &params)).await {
        Ok(Ok(counts)) => {
            let inserted = jobs.into_iter().zip(counts).collect();
            return check_taken(config, link, inserted, refused, summary).await;
        }
        Ok(Err(e)) if e.is_data_error() => e,
        Ok(Err(e)) => {
            if e.is_fatal() {
                *link = None;
            }
            return Err(format!("cannot store {} jobs: {e}", jobs.len()));
        }
        Err(elapsed) => {
            *link = None;
            return Err(format!(
                "cannot store {} jobs: postgres {elapsed}",
                jobs.len()
            ));
        }
    };
    log::warn!(
        "{error}: the batch of {} jobs was refused for its data; inserting them one by one",
        jobs.len()
    );
    // Counted only once the whole batch is through: after an error half
    // way, the retry counts the jobs inserted here as already stored.
    let mut inserted = Vec::with_capacity(jobs.len());
    for job in jobs {
        let params = [Some(job.id.as_str()), Some(job.json.as_str())];
        match timeout(IO_TIMEOUT, db.execute(INSERT, &params)).await {
            Ok(Ok(n)) => inserted.push((job, n)),
            Ok(Err(e)) if e.is_data_error() => refused.push(Refused {
                entry: job.entry,
                id: Some(job.id),
                reason: e.to_string(),
                taken_by: None,
            }),
            Ok(Err(e)) => {
                if e.is_fatal() {
                    *link = None;
                }
                return Err(format!("cannot store job {}: {e}", job.id));
            }
            Err(elapsed) => {
                *link = None;
                return Err(format!("cannot store job {}: postgres {elapsed}", job.id));
            }
        }
    }
    check_taken(config, link, inserted, refused, summary).await
}

/// Sorts what the insert did: a job inserted is stored; a job whose id was
/// in the table already is, almost always, the same job delivered again
/// (after a crash, or a retry the api queued while it could not ask the
/// table), and stored too. But the table is asked, because an id can be
/// taken by another job: an Idempotency-Key reused for a different job
/// more than a day after the first, while the api could not ask the table,
/// or two random ids that collided. Such a job is set aside with the
/// reason rather than counted as stored: nothing accepted vanishes.
async fn check_taken(
    config: &ConsumerConfig,
    link: &mut Option<Client>,
    inserted: Vec<(Row, u64)>,
    refused: &mut Vec<Refused>,
    summary: &mut ConsumerSummary,
) -> Result<Vec<Row>, String> {
    let (mut stored, mut new, mut again) = (Vec::with_capacity(inserted.len()), 0, 0);
    for (job, count) in inserted {
        if count == 1 {
            new += 1;
            stored.push(job);
            continue;
        }
        let db = db_link(config, link).await?;
        let rows = match timeout(IO_TIMEOUT, db.query(FIND, &[Some(job.id.as_str())])).await {
            Ok(Ok(rows)) => rows,
            Ok(Err(e)) => {
                if e.is_fatal() {
                    *link = None;
                }
                return Err(format!("cannot read job {}: {e}", job.id));
            }
            Err(elapsed) => {
                *link = None;
                return Err(format!("cannot read job {}: postgres {elapsed}", job.id));
            }
        };
        let first = rows.first().map(|row| table::job_of(row)).transpose()?;
        let this: Option<crate::Job> = serde_json::from_str(&job.json).ok();
        match first {
            Some(first) if Some(&first) != this.as_ref() => refused.push(Refused {
                entry: job.entry,
                id: None,
                reason: format!(
                    "job id {} is taken by another job stored earlier: an Idempotency-Key \
                     reused for another job, or two ids that collided",
                    job.id
                ),
                taken_by: Some(Taken {
                    id: job.id,
                    keyed: job.keyed,
                    first,
                }),
            }),
            _ => {
                again += 1;
                stored.push(job);
            }
        }
    }
    summary.stored += new;
    summary.duplicates += again;
    Ok(stored)
}

/// Copies each refused entry to the dead-letter stream, in stream order,
/// before the caller acknowledges it: an entry acknowledged unstored is
/// still kept, with its reason. Each dead letter holds `entry` (the
/// original stream id), `reason`, then the entry's own fields, so that
/// once the cause is mended `XADD NAME:stream * job …` replays it. A crash
/// between this and the `XACK` sets the entry aside again when it is
/// redelivered; the `entry` field shows the two are one.
async fn set_aside(
    config: &ConsumerConfig,
    keys: &Keys,
    link: &mut Option<Connection>,
    batch: &[StreamEntry],
    refused: &[Refused],
) -> Result<(), String> {
    let mut order: Vec<&Refused> = refused.iter().collect();
    order.sort_by_key(|r| r.entry);
    let mut commands = Vec::with_capacity(order.len());
    let mut letters = Vec::with_capacity(order.len());
    for r in order {
        let Some(entry) = batch.get(r.entry) else {
            continue;
        };
        let head: [&[u8]; 7] = [
            b"XADD",
            keys.dead.as_bytes(),
            b"*",
            b"entry",
            entry.id.as_bytes(),
            b"reason",
            r.reason.as_bytes(),
        ];
        let mut xadd = head.to_vec();
        for (name, value) in &entry.fields {
            xadd.extend([name.as_slice(), value.as_slice()]);
        }
        commands.push(xadd);
        letters.push((entry, r));
    }
    let redis = redis_link(config, link).await?;
    let replies = check_redis(io(redis.pipeline(&commands)).await, link)?;
    for reply in replies {
        reply.map_err(|e| e.to_string())?;
    }
    for (entry, r) in letters {
        let job = r.id.as_ref().map(|id| format!(" (job {id})"));
        log::error!(
            "set aside stream entry {}{} in {}: {}",
            entry.id,
            job.unwrap_or_default(),
            keys.dead,
            r.reason
        );
    }
    Ok(())
}

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
