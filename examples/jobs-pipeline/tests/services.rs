//! The two services, `api` and `store`, as processes, against a real
//! redis-server and a real PostgreSQL: the happy path, bad input, a store
//! killed with SIGKILL, PostgreSQL restarted, Redis lost.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::postgres::{PASSWORD, PgServer};
use common::{Client, PATIENCE, Reply};
use jobs_pipeline::postgres::{Client as Db, PgConfig};
use redis_client::{Connection, Frame, RedisServer};
use runtime::run_until_complete;

/// How long a whole run may take to settle before the test fails.
const SETTLE: Duration = Duration::from_secs(90);

fn lines(from: impl Read + Send + 'static) -> Receiver<String> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(from).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// A running `jobs-pipeline api` or `store`.
struct Proc {
    child: Child,
    banner: String,
    stdout: Receiver<String>,
    stderr: Receiver<String>,
}

impl Proc {
    fn start(args: &[&str]) -> Proc {
        let mut child = Command::new(env!("CARGO_BIN_EXE_jobs-pipeline"))
            .args(args)
            .env("RUST_LOG", "jobs_pipeline=info")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = lines(child.stdout.take().unwrap());
        let stderr = lines(child.stderr.take().unwrap());
        let banner = stdout.recv_timeout(PATIENCE).unwrap_or_else(|_| {
            panic!(
                "no banner; stderr: {:?}",
                stderr.try_iter().collect::<Vec<_>>()
            )
        });
        Proc {
            child,
            banner,
            stdout,
            stderr,
        }
    }

    fn api(broker: &str, db: &str) -> (Proc, SocketAddr) {
        let api = Proc::start(&["api", "--port", "0", "--broker", broker, "--db", db]);
        let addr = api
            .banner
            .strip_prefix("jobs-pipeline api: listening on http://")
            .and_then(|rest| rest.split_once("/jobs"))
            .unwrap_or_else(|| panic!("{}", api.banner))
            .0
            .parse()
            .unwrap();
        (api, addr)
    }

    fn store(broker: &str, db: &str, name: &str) -> Proc {
        Proc::store_with(broker, db, name, "10")
    }

    fn store_with(broker: &str, db: &str, name: &str, batch: &str) -> Proc {
        let store = Proc::start(&[
            "store",
            "--broker",
            broker,
            "--db",
            db,
            "--consumer",
            name,
            "--batch",
            batch,
            "--claim-idle-ms",
            "1000",
        ]);
        assert!(
            store
                .banner
                .starts_with(&format!("jobs-pipeline store: consumer {name} in group \"store\" of {broker}, storing jobs in postgres://postgres@127.0.0.1:")),
            "{}",
            store.banner
        );
        store
    }

    /// Reads the log until a line contains `needle`; returns the lines read.
    /// The deadline is for the whole wait: a store that logs a retry every
    /// few seconds, forever, must fail the test rather than hang it.
    fn wait_for_log(&self, needle: &str) -> Vec<String> {
        let deadline = Instant::now() + SETTLE;
        let mut seen = Vec::new();
        loop {
            let line = self
                .stderr
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .unwrap_or_else(|_| panic!("no log line with {needle:?} in {seen:?}"));
            let found = line.contains(needle);
            seen.push(line);
            if found {
                return seen;
            }
        }
    }

    fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args([&format!("-{name}"), &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Ctrl-C, then the exit status, stdout and stderr.
    fn interrupt(mut self) -> (ExitStatus, Vec<String>, Vec<String>) {
        self.signal("INT");
        let pid = self.child.id();
        let (done, finished) = mpsc::channel::<()>();
        thread::spawn(move || {
            if finished.recv_timeout(PATIENCE).is_err() {
                let _ = Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .status();
            }
        });
        let status = self.child.wait().unwrap();
        let _ = done.send(());
        (
            status,
            self.stdout.iter().collect(),
            self.stderr.iter().collect(),
        )
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn post(client: &mut Client, body: &str, key: Option<&str>) -> std::io::Result<Reply> {
    let mut request = format!(
        "POST /jobs HTTP/1.1\r\nHost: t\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(key) = key {
        request.push_str(&format!("Idempotency-Key: {key}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    client.write_raw(request.as_bytes())?;
    client.read_reply()
}

fn id_of(reply: &Reply) -> u64 {
    let value: serde_json::Value = serde_json::from_str(&reply.body).unwrap();
    value["id"].as_u64().unwrap()
}

/// Runs `f` against the database on a fresh runtime and connection.
fn with_db<T>(url: &str, f: impl AsyncFnOnce(&mut Db) -> T) -> T {
    let config = PgConfig::parse(url, None).unwrap();
    run_until_complete(async move {
        let mut db = Db::connect(&config).await.unwrap();
        f(&mut db).await
    })
    .unwrap()
}

/// The job ids in the table, or `None` while the database is down.
fn stored_ids(url: &str) -> Option<BTreeSet<u64>> {
    let config = PgConfig::parse(url, None).unwrap();
    run_until_complete(async move {
        let mut db = Db::connect(&config).await.ok()?;
        let rows = db.query("SELECT id FROM jobs", &[]).await.ok()?;
        Some(
            rows.iter()
                .filter_map(|r| r.first()?.as_deref()?.parse().ok())
                .collect(),
        )
    })
    .unwrap()
}

/// Entries delivered to consumers and not yet acknowledged.
fn pending(redis: SocketAddr, consumer: Option<&str>) -> i64 {
    run_until_complete(async move {
        let mut conn = Connection::connect(redis).await.unwrap();
        match consumer {
            Some(name) => conn
                .command(&["XPENDING", "jobs:stream", "store", "-", "+", "10000", name])
                .await
                .unwrap()
                .into_items()
                .unwrap()
                .len() as i64,
            None => conn
                .command(&["XPENDING", "jobs:stream", "store"])
                .await
                .unwrap()
                .into_items()
                .unwrap()[0]
                .as_integer()
                .unwrap(),
        }
    })
    .unwrap()
}

/// Polls `condition` until it holds, failing after `SETTLE`.
fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + SETTLE;
    while !condition() {
        assert!(
            Instant::now() < deadline,
            "{what} did not happen within {SETTLE:?}"
        );
        thread::sleep(Duration::from_millis(50)); // polling, with a deadline
    }
}

/// Posts `n` jobs from `threads` threads, each job with its own
/// idempotency key; returns the accepted ids and when each 202 came.
fn post_many(
    addr: SocketAddr,
    jobs: std::ops::Range<usize>,
    threads: usize,
) -> thread::JoinHandle<BTreeMap<u64, SystemTime>> {
    thread::spawn(move || {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let jobs = jobs.clone();
                thread::spawn(move || {
                    let mut accepted = BTreeMap::new();
                    let mut client = Client::connect(addr).unwrap();
                    for i in jobs.skip(t).step_by(threads) {
                        let body = format!(r#"{{"name": "job {i}", "priority": {}}}"#, i % 10);
                        let reply = post(&mut client, &body, Some(&format!("load-{i}"))).unwrap();
                        assert_eq!(reply.status, 202, "{}", reply.body);
                        accepted.insert(id_of(&reply), SystemTime::now());
                    }
                    accepted
                })
            })
            .collect();
        let mut all = BTreeMap::new();
        for worker in workers {
            all.extend(worker.join().unwrap());
        }
        all
    })
}

#[test]
fn jobs_flow_from_api_to_postgres_and_bad_ones_never_do() {
    let redis = RedisServer::start();
    let pg = PgServer::start();
    let broker = redis.url("jobs").to_string();
    let (api, addr) = Proc::api(&broker, &pg.url());
    let store = Proc::store(&broker, &pg.url(), "store-a");
    let mut client = Client::connect(addr).unwrap();
    // Bad input: 4xx, and nothing reaches the stream.
    for (body, status) in [
        ("{", 400),
        (r#"{"name": "x", "priority": 12}"#, 400),
        (r#"{"name": "x", "priority": 1, "extra": 1}"#, 400),
    ] {
        let reply = post(&mut client, body, None).unwrap();
        assert_eq!(reply.status, status, "{body}: {}", reply.body);
    }
    let huge = format!(
        "POST /jobs HTTP/1.1\r\nContent-Length: {}\r\n\r\n",
        10 << 20
    );
    let mut big = Client::connect(addr).unwrap();
    big.write_raw(huge.as_bytes()).unwrap();
    assert_eq!(big.read_reply().unwrap().status, 413);
    assert_eq!(
        common::request(addr, "GET", "/jobs/12345", None)
            .unwrap()
            .status,
        404
    );
    assert_eq!(
        common::request(addr, "GET", "/jobs/abc", None)
            .unwrap()
            .status,
        400
    );
    // A keyed job posted twice is one job.
    let first = post(
        &mut client,
        r#"{"name": "resize", "priority": 3}"#,
        Some("k-1"),
    )
    .unwrap();
    let again = post(
        &mut client,
        r#"{"name": "resize", "priority": 3}"#,
        Some("k-1"),
    )
    .unwrap();
    assert_eq!((first.status, again.status), (202, 202));
    assert_eq!(first.body, again.body);
    let mut ids = BTreeSet::from([id_of(&first)]);
    for i in 0..20 {
        let reply = post(
            &mut client,
            &format!(r#"{{"name": "n{i}", "priority": 1}}"#),
            None,
        )
        .unwrap();
        assert_eq!(reply.status, 202);
        ids.insert(id_of(&reply));
    }
    eventually("every job stored", || {
        stored_ids(&pg.url()) == Some(ids.clone())
    });
    for id in &ids {
        let reply = common::request(addr, "GET", &format!("/jobs/{id}"), None).unwrap();
        assert_eq!(reply.body, format!(r#"{{"id":{id},"status":"stored"}}"#));
    }
    let doc = with_db(&pg.url(), async |db| {
        db.query(
            "SELECT doc::text FROM jobs WHERE id = $1",
            &[Some(&id_of(&first).to_string())],
        )
        .await
        .unwrap()
    });
    assert_eq!(
        doc,
        [vec![Some(format!(
            r#"{{"id": {}, "name": "resize", "priority": 3}}"#,
            id_of(&first)
        ))]]
    );
    assert_eq!(pending(redis.addr(), None), 0);
    drop(client);
    let (status, out, err) = store.interrupt();
    assert!(status.success(), "{status} {err:?}");
    assert_eq!(
        out,
        [
            "shutting down: finishing the batch in hand",
            "store stopped: 21 jobs stored, 0 already stored, 0 claimed from other consumers; 0 left pending in the stream"
        ]
    );
    assert!(
        err.iter().all(|line| !line.contains(PASSWORD)),
        "the password leaked into the log: {err:?}"
    );
    let (status, out, _) = api.interrupt();
    assert!(status.success());
    assert_eq!(
        out[0],
        "shutting down: no longer accepting connections; finishing open requests"
    );
}

// ANCHOR: kill_test
#[test]
fn a_store_killed_mid_batch_loses_nothing_and_duplicates_nothing() {
    let redis = RedisServer::start();
    let pg = PgServer::start();
    let broker = redis.url("jobs").to_string();
    let (api, addr) = Proc::api(&broker, &pg.url());
    let a = Proc::store(&broker, &pg.url(), "store-a");
    let b = Proc::store(&broker, &pg.url(), "store-b");
    let mut accepted = post_many(addr, 0..500, 25).join().unwrap();
    // Halfway, freeze A and post a few more jobs until Redis has handed
    // some to A, then kill it: the kill lands between delivery and
    // acknowledgement, wherever A was in its batch.
    let mut client = Client::connect(addr).unwrap();
    let mut next = 500;
    let held = loop {
        assert!(next < 1000, "store-a never received a job while frozen");
        a.signal("STOP");
        for i in next..next + 10 {
            let body = format!(r#"{{"name": "job {i}", "priority": 1}}"#);
            let reply = post(&mut client, &body, Some(&format!("load-{i}"))).unwrap();
            assert_eq!(reply.status, 202);
            accepted.insert(id_of(&reply), SystemTime::now());
        }
        next += 10;
        let held = pending(redis.addr(), Some("store-a"));
        if held > 0 {
            break held;
        }
        a.signal("CONT");
    };
    a.signal("KILL");
    accepted.extend(post_many(addr, next..1000, 25).join().unwrap());
    assert_eq!(accepted.len(), 1000);
    let expected: BTreeSet<u64> = accepted.keys().copied().collect();
    eventually("every accepted job stored and acknowledged", || {
        stored_ids(&pg.url()).as_ref() == Some(&expected) && pending(redis.addr(), None) == 0
    });
    // Exactly once: the primary key makes a duplicate row impossible, and
    // the set equality above says none is missing or extra.
    let (status, out, _) = b.interrupt();
    assert!(status.success());
    let claimed: u64 = out[1]
        .split(", ")
        .find_map(|part| {
            part.strip_suffix(" claimed from other consumers; 0 left pending in the stream")
        })
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{out:?}"));
    assert!(
        claimed >= held as u64,
        "B claimed {claimed} of the {held} A held"
    );
    // And the api agrees with the database.
    let mut client = Client::connect(addr).unwrap();
    for id in &expected {
        let reply = client
            .send("GET", &format!("/jobs/{id}"), None, false)
            .unwrap();
        assert_eq!(reply.body, format!(r#"{{"id":{id},"status":"stored"}}"#));
    }
    drop(api);
}
// ANCHOR_END: kill_test

#[test]
fn postgres_down_mid_run_loses_nothing() {
    let redis = RedisServer::start();
    let mut pg = PgServer::start();
    let broker = redis.url("jobs").to_string();
    let (_api, addr) = Proc::api(&broker, &pg.url());
    let store = Proc::store(&broker, &pg.url(), "store-a");
    let mut accepted = post_many(addr, 0..500, 25).join().unwrap();
    eventually("500 jobs stored", || {
        stored_ids(&pg.url()).is_some_and(|ids| ids.len() == 500)
    });
    // PostgreSQL goes away; the api keeps accepting, the store holds its
    // batch unacknowledged and retries with backoff.
    pg.stop();
    accepted.extend(post_many(addr, 500..1000, 25).join().unwrap());
    let mut log = store.wait_for_log("; retrying in ");
    assert!(pending(redis.addr(), None) > 0);
    pg.start_again();
    let expected: BTreeSet<u64> = accepted.keys().copied().collect();
    assert_eq!(expected.len(), 1000);
    eventually("every accepted job stored after the restart", || {
        stored_ids(&pg.url()).as_ref() == Some(&expected) && pending(redis.addr(), None) == 0
    });
    let (status, _, err) = store.interrupt();
    assert!(status.success());
    log.extend(err);
    let err = log;
    assert!(
        err.iter()
            .any(|line| line.contains("reconnected to postgres://postgres@127.0.0.1:")),
        "{err:?}"
    );
    assert!(err.iter().all(|line| !line.contains(PASSWORD)), "{err:?}");
}

#[test]
fn without_redis_the_api_answers_503_and_recovers() {
    let mut redis = RedisServer::start();
    let mut pg = PgServer::start();
    let broker = redis.url("jobs").to_string();
    let (api, addr) = Proc::api(&broker, &pg.url());
    let mut client = Client::connect(addr).unwrap();
    assert_eq!(
        post(&mut client, r#"{"name": "a", "priority": 1}"#, Some("r-1"))
            .unwrap()
            .status,
        202
    );
    redis.kill();
    let reply = post(&mut client, r#"{"name": "b", "priority": 1}"#, Some("r-2")).unwrap();
    assert_eq!(reply.status, 503);
    assert!(
        reply.body.starts_with(&format!(
            r#"{{"error":"the broker at {broker} is unavailable (redis connection: "#
        )),
        "{}",
        reply.body
    );
    assert!(
        reply
            .body
            .ends_with(r#"; the job was not accepted, retry later"}"#),
        "{}",
        reply.body
    );
    redis.restart(); // empty: no append-only file
    let retry = post(&mut client, r#"{"name": "b", "priority": 1}"#, Some("r-2")).unwrap();
    assert_eq!(retry.status, 202, "{}", retry.body);
    drop(api);
    // With no PostgreSQL, or no Redis, at start, the api does not start.
    let db = pg.url();
    let start_api = || {
        let out = Command::new(env!("CARGO_BIN_EXE_jobs-pipeline"))
            .args(["api", "--port", "0", "--broker", &broker, "--db", &db])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        String::from_utf8(out.stderr).unwrap()
    };
    pg.stop();
    let stderr = start_api();
    assert!(
        stderr.starts_with(&format!(
            "jobs-pipeline api: the database at postgres://postgres@127.0.0.1:{}/postgres does not answer: postgres connection: ",
            pg.port()
        )),
        "{stderr}"
    );
    assert!(!stderr.contains(PASSWORD), "{stderr}");
    redis.kill();
    let stderr = start_api();
    assert!(
        stderr.starts_with(&format!("jobs-pipeline api: the broker at {broker} does not answer: redis connection: cannot connect to redis at 127.0.0.1:")),
        "{stderr}"
    );
}

#[test]
fn both_services_carry_on_after_redis_restarts_empty() {
    let mut redis = RedisServer::start();
    let pg = PgServer::start();
    let broker = redis.url("jobs").to_string();
    let (_api, addr) = Proc::api(&broker, &pg.url());
    let store = Proc::store(&broker, &pg.url(), "store-a");
    let mut client = Client::connect(addr).unwrap();
    let first = post(
        &mut client,
        r#"{"name": "before", "priority": 1}"#,
        Some("b-1"),
    )
    .unwrap();
    assert_eq!(first.status, 202);
    eventually("the first job stored", || {
        stored_ids(&pg.url()) == Some(BTreeSet::from([id_of(&first)]))
    });
    // No persistence: the stream, the group and the keys are gone.
    redis.restart();
    // The api's pooled connection is dead; a keyed retry gets through.
    let mut second = post(
        &mut client,
        r#"{"name": "after", "priority": 1}"#,
        Some("a-1"),
    )
    .unwrap();
    if second.status == 503 {
        second = post(
            &mut client,
            r#"{"name": "after", "priority": 1}"#,
            Some("a-1"),
        )
        .unwrap();
    }
    assert_eq!(second.status, 202, "{}", second.body);
    eventually("the second job stored", || {
        stored_ids(&pg.url()) == Some(BTreeSet::from([id_of(&first), id_of(&second)]))
    });
    let (status, _, err) = store.interrupt();
    assert!(status.success());
    assert!(
        err.iter()
            .any(|line| line.contains("made the consumer group again")),
        "{err:?}"
    );
}

#[test]
fn a_retry_after_an_api_crash_is_the_same_job() {
    let redis = RedisServer::start();
    let pg = PgServer::start();
    let broker = redis.url("jobs").to_string();
    let (first_api, addr) = Proc::api(&broker, &pg.url());
    let mut client = Client::connect(addr).unwrap();
    let body = r#"{"name": "once", "priority": 5}"#;
    let first = post(&mut client, body, Some("crash-1")).unwrap();
    assert_eq!(first.status, 202);
    drop(client);
    drop(first_api); // SIGKILL
    let (_api, addr) = Proc::api(&broker, &pg.url());
    let mut client = Client::connect(addr).unwrap();
    let retry = post(&mut client, body, Some("crash-1")).unwrap();
    assert_eq!((retry.status, &retry.body), (202, &first.body));
    let _store = Proc::store(&broker, &pg.url(), "store-a");
    eventually("the job stored once", || {
        stored_ids(&pg.url()) == Some(BTreeSet::from([id_of(&first)]))
    });
}

/// An Idempotency-Key names one request (issue 42): reused with another job
/// it is refused with 422, and the job stored is the first one; the same
/// job, however its body is spaced, is a retry and gets the first answer.
#[test]
fn a_key_reused_for_another_job_is_refused() {
    let redis = RedisServer::start();
    let pg = PgServer::start();
    let broker = redis.url("jobs").to_string();
    let (_api, addr) = Proc::api(&broker, &pg.url());
    let mut client = Client::connect(addr).unwrap();
    let first = post(&mut client, r#"{"name": "a", "priority": 1}"#, Some("k-1")).unwrap();
    assert_eq!(first.status, 202);
    let other = post(&mut client, r#"{"name": "b", "priority": 1}"#, Some("k-1")).unwrap();
    assert_eq!(other.status, 422, "{}", other.body);
    assert!(
        other.body.contains(&format!(
            "this Idempotency-Key was used for another job (id {})",
            id_of(&first)
        )),
        "{}",
        other.body
    );
    let same = post(&mut client, r#"{"priority":1,"name":"a"}"#, Some("k-1")).unwrap();
    assert_eq!((same.status, &same.body), (202, &first.body));
    let _store = Proc::store(&broker, &pg.url(), "store-a");
    eventually("the first job stored, once", || {
        stored_ids(&pg.url()) == Some(BTreeSet::from([id_of(&first)]))
    });
}

/// The answer to a key does not change when Redis forgets it (issue 42):
/// while the job is queued Redis keeps the key with no expiry; once it is
/// stored, the key expires in a day and the status leaves Redis at once,
/// and the api asks PostgreSQL. After the key expired, and after Redis
/// restarted empty, a retry gets the first answer, another job with the
/// key gets 422, and nothing is appended again.
#[test]
fn a_key_gets_the_same_answer_after_redis_forgets_it() {
    let mut redis = RedisServer::start();
    let pg = PgServer::start();
    let broker = redis.url("jobs").to_string();
    let (_api, addr) = Proc::api(&broker, &pg.url());
    let mut client = Client::connect(addr).unwrap();
    let first = post(&mut client, r#"{"name": "a", "priority": 1}"#, Some("k-1")).unwrap();
    assert_eq!(first.status, 202, "{}", first.body);
    let id = id_of(&first);
    let record = format!("jobs:idempotency:{id}");
    let status = format!("/jobs/{id}");
    let said = |addr| common::request(addr, "GET", &status, None).unwrap().body;
    assert_eq!(said(addr), format!(r#"{{"id":{id},"status":"queued"}}"#));
    // Queued: Redis keeps the key for as long as the job waits.
    assert_eq!(
        redis_commands(redis.addr(), &[vec!["TTL", &record]]),
        [Frame::Integer(-1)]
    );
    let store = Proc::store(&broker, &pg.url(), "store-a");
    eventually("the job stored", || {
        stored_ids(&pg.url()) == Some(BTreeSet::from([id]))
    });
    // Stored: its status is gone from Redis, and the table answers.
    eventually("the status left Redis", || {
        redis_commands(redis.addr(), &[vec!["HLEN", "jobs:status"]]) == [Frame::Integer(0)]
    });
    assert_eq!(said(addr), format!(r#"{{"id":{id},"status":"stored"}}"#));
    let ttl = redis_commands(redis.addr(), &[vec!["TTL", &record]]);
    assert!(
        matches!(ttl[..], [Frame::Integer(t)] if (86_300..=86_400).contains(&t)),
        "{ttl:?}"
    );
    let answers = |client: &mut Client| {
        let other = post(client, r#"{"name": "b", "priority": 1}"#, Some("k-1")).unwrap();
        assert_eq!(other.status, 422, "{}", other.body);
        assert!(
            other.body.contains(&format!(
                "this Idempotency-Key was used for another job (id {id})"
            )),
            "{}",
            other.body
        );
        let retry = post(client, r#"{"priority":1,"name":"a"}"#, Some("k-1")).unwrap();
        assert_eq!((retry.status, &retry.body), (202, &first.body));
    };
    // A day later: the key expired (deleted here, rather than waited for).
    redis_commands(redis.addr(), &[vec!["DEL", &record]]);
    answers(&mut client);
    // Nothing was appended again: one entry ever added to the stream.
    let info = redis_commands(redis.addr(), &[vec!["XINFO", "STREAM", "jobs:stream"]]);
    let items = info[0].clone().into_items().unwrap();
    let added = items
        .iter()
        .position(|f| f.as_str() == Some("entries-added"))
        .and_then(|i| items[i + 1].as_integer());
    assert_eq!(added, Some(1), "{items:?}");
    // Redis restarted empty: the same answers. (The api's pooled
    // connection to the old Redis fails once, with a 503.) (The store is
    // stopped first: it would make its group, and the stream, again.)
    drop(store);
    redis.restart();
    let stale = common::request(addr, "GET", &status, None).unwrap();
    assert!(matches!(stale.status, 200 | 503), "{}", stale.body);
    answers(&mut client);
    assert_eq!(said(addr), format!(r#"{{"id":{id},"status":"stored"}}"#));
    assert_eq!(
        redis_commands(redis.addr(), &[vec!["EXISTS", "jobs:stream"]]),
        [Frame::Integer(0)]
    );
    assert_eq!(stored_ids(&pg.url()), Some(BTreeSet::from([id])));
}

/// While PostgreSQL is down the api cannot ask the table about a key Redis
/// has forgotten, and queues the job rather than refuse work; the store
/// then finds the id taken by another job and sets the new one aside with
/// the reason: accepted, and not lost. Redis is told the stored job, so a
/// retry of the other job gets its 422 from then on.
#[test]
fn a_key_reused_while_postgres_is_down_is_set_aside_not_lost() {
    let redis = RedisServer::start();
    let mut pg = PgServer::start();
    let broker = redis.url("jobs").to_string();
    let (_api, addr) = Proc::api(&broker, &pg.url());
    let store = Proc::store(&broker, &pg.url(), "store-a");
    let mut client = Client::connect(addr).unwrap();
    let first = post(&mut client, r#"{"name": "a", "priority": 1}"#, Some("k-1")).unwrap();
    assert_eq!(first.status, 202, "{}", first.body);
    let id = id_of(&first);
    eventually("the job stored", || {
        stored_ids(&pg.url()) == Some(BTreeSet::from([id]))
    });
    let record = format!("jobs:idempotency:{id}");
    redis_commands(redis.addr(), &[vec!["DEL", &record]]); // a day later
    pg.stop();
    let other = post(&mut client, r#"{"name": "b", "priority": 1}"#, Some("k-1")).unwrap();
    assert_eq!(other.status, 202, "{}", other.body);
    pg.start_again();
    store.wait_for_log("set aside stream entry");
    let dead = redis_commands(redis.addr(), &[vec!["XRANGE", "jobs:dead", "-", "+"]]);
    let letters = dead[0].clone().into_items().unwrap();
    assert_eq!(letters.len(), 1, "{letters:?}");
    let fields = letters[0].clone().into_items().unwrap()[1]
        .clone()
        .into_items()
        .unwrap();
    let text: Vec<String> = fields
        .iter()
        .map(|f| String::from_utf8_lossy(f.as_bytes().unwrap()).into_owned())
        .collect();
    assert_eq!(
        text[2..],
        [
            "reason".to_string(),
            format!(
                "job id {id} is taken by another job stored earlier: an Idempotency-Key \
                 reused for another job, or two ids that collided"
            ),
            "job".to_string(),
            format!(r#"{{"id":{id},"name":"b","priority":1}}"#),
            "keyed".to_string(),
            "1".to_string(),
        ]
    );
    assert_eq!(stored_ids(&pg.url()), Some(BTreeSet::from([id])));
    let said = common::request(addr, "GET", &format!("/jobs/{id}"), None).unwrap();
    assert_eq!(said.body, format!(r#"{{"id":{id},"status":"stored"}}"#));
    let again = post(&mut client, r#"{"name": "b", "priority": 1}"#, Some("k-1")).unwrap();
    assert_eq!(again.status, 422, "{}", again.body);
    let retry = post(&mut client, r#"{"name": "a", "priority": 1}"#, Some("k-1")).unwrap();
    assert_eq!((retry.status, &retry.body), (202, &first.body));
}

/// Redis does not grow forever (issue 42): an entry stored and
/// acknowledged is deleted from the stream, and its status from the hash,
/// in the same round trip.
#[test]
fn stored_jobs_leave_the_stream() {
    let redis = RedisServer::start();
    let pg = PgServer::start();
    let broker = redis.url("jobs").to_string();
    let (_api, addr) = Proc::api(&broker, &pg.url());
    let mut client = Client::connect(addr).unwrap();
    let mut ids = BTreeSet::new();
    for i in 0..50 {
        let reply = post(
            &mut client,
            &format!(r#"{{"name": "j{i}", "priority": 1}}"#),
            None,
        )
        .unwrap();
        assert_eq!(reply.status, 202);
        ids.insert(id_of(&reply));
    }
    let _store = Proc::store(&broker, &pg.url(), "store-a");
    eventually("every job stored", || {
        stored_ids(&pg.url()) == Some(ids.clone())
    });
    // Deleted after the commit, in the round trip that acknowledges them,
    // with their statuses; the table answers for them.
    eventually("the stream emptied", || {
        redis_commands(
            redis.addr(),
            &[vec!["XLEN", "jobs:stream"], vec!["HLEN", "jobs:status"]],
        ) == [Frame::Integer(0), Frame::Integer(0)]
    });
    for id in &ids {
        let reply = common::request(addr, "GET", &format!("/jobs/{id}"), None).unwrap();
        assert_eq!(reply.body, format!(r#"{{"id":{id},"status":"stored"}}"#));
    }
}

/// Sends each command on one connection; returns the replies.
fn redis_commands(redis: SocketAddr, commands: &[Vec<&str>]) -> Vec<Frame> {
    let commands: Vec<Vec<String>> = commands
        .iter()
        .map(|c| c.iter().map(|a| a.to_string()).collect())
        .collect();
    run_until_complete(async move {
        let mut conn = Connection::connect(redis).await.unwrap();
        let mut replies = Vec::new();
        for command in &commands {
            replies.push(conn.command(command).await.unwrap());
        }
        replies
    })
    .unwrap()
}

/// The log line's message, without env_logger's time and level.
fn message(line: &str) -> &str {
    line.split_once("] ").map_or(line, |(_, m)| m)
}

#[test]
fn a_job_postgres_refuses_is_set_aside_and_the_jobs_behind_it_flow() {
    let redis = RedisServer::start();
    let pg = PgServer::start();
    let broker = redis.url("jobs").to_string();
    let (_api, addr) = Proc::api(&broker, &pg.url());
    // The api refuses what PostgreSQL cannot hold.
    let mut client = Client::connect(addr).unwrap();
    let reply = post(
        &mut client,
        r#"{"name":"bad\u0000name","priority":1}"#,
        None,
    )
    .unwrap();
    assert_eq!(
        (reply.status, reply.body.as_str()),
        (
            400,
            r#"{"error":"invalid job: name must not contain U+0000 (NUL)"}"#
        )
    );
    // But a stream can hold such jobs from before that check, or from
    // another producer: one batch with bad entries between good ones,
    // queued before the store starts so that it reads them all at once.
    let bad_name = r#"{"id":2,"name":"bad\u0000name","priority":1}"#;
    let huge_id = r#"{"id":18446744073709551615,"name":"huge","priority":1}"#;
    let entries = [
        ("job", r#"{"id":1,"name":"first","priority":1}"#),
        ("job", bad_name),
        ("job", r#"{"id":3,"name":"between","priority":1}"#),
        ("job", huge_id),
        ("job", "oops"),
        ("note", "no job here"),
        ("job", r#"{"id":4,"name":"last","priority":1}"#),
    ];
    let mut commands: Vec<Vec<&str>> = entries
        .iter()
        .map(|&(field, value)| vec!["XADD", "jobs:stream", "*", field, value])
        .collect();
    // What the api's accept script records beside each job.
    for id in ["1", "2", "3", "18446744073709551615", "4"] {
        commands.push(vec!["HSET", "jobs:status", id, "queued"]);
    }
    let replies = redis_commands(redis.addr(), &commands);
    let entry: Vec<&str> = replies[..entries.len()]
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    let store = Proc::store(&broker, &pg.url(), "store-a");
    let mut log = store.wait_for_log("stored and acknowledged a batch of 3");
    // The jobs behind them flow.
    let later = post(&mut client, r#"{"name": "later", "priority": 2}"#, None).unwrap();
    assert_eq!(later.status, 202, "{}", later.body);
    log.extend(store.wait_for_log("stored and acknowledged a batch of 1"));
    let (status, out, err) = store.interrupt();
    assert!(status.success(), "{status} {err:?}");
    log.extend(err);
    assert_eq!(
        out,
        [
            "shutting down: finishing the batch in hand",
            "store stopped: 4 jobs stored, 0 already stored, 0 claimed from other consumers; \
             0 left pending in the stream; 4 could never be stored and were set aside in \
             jobs:dead (see the log)"
        ]
    );
    let unicode = "postgres: ERROR: unsupported Unicode escape sequence (SQLSTATE 22P05)";
    let range = "postgres: ERROR: value \"18446744073709551615\" is out of range for type \
                 bigint (SQLSTATE 22003)";
    let oops = "not a job: expected value at line 1 column 1";
    let no_job = "not a job: the entry has no job field";
    let said: Vec<&str> = log
        .iter()
        .map(|line| message(line))
        .filter(|m| m.contains("refused for its data") || m.starts_with("set aside"))
        .collect();
    assert_eq!(
        said,
        [
            format!(
                "{unicode}: the batch of 5 jobs was refused for its data; inserting them one by one"
            ),
            format!(
                "set aside stream entry {} (job 2) in jobs:dead: {unicode}",
                entry[1]
            ),
            format!(
                "set aside stream entry {} (job 18446744073709551615) in jobs:dead: {range}",
                entry[3]
            ),
            format!("set aside stream entry {} in jobs:dead: {oops}", entry[4]),
            format!("set aside stream entry {} in jobs:dead: {no_job}", entry[5]),
        ]
    );
    // The good jobs are stored, the bad ones are not.
    let rows = with_db(&pg.url(), async |db| {
        db.query("SELECT id, doc->>'name' FROM jobs ORDER BY id", &[])
            .await
            .unwrap()
    });
    let row = |id: u64, name: &str| vec![Some(id.to_string()), Some(name.to_string())];
    assert_eq!(
        rows,
        [
            row(1, "first"),
            row(3, "between"),
            row(4, "last"),
            row(id_of(&later), "later")
        ]
    );
    // Each bad entry is in the dead-letter stream, in stream order, with
    // its reason and its own fields; all are acknowledged.
    let dead = redis_commands(redis.addr(), &[vec!["XRANGE", "jobs:dead", "-", "+"]]);
    let letters: Vec<Vec<String>> = dead[0]
        .clone()
        .into_items()
        .unwrap()
        .into_iter()
        .map(|letter| {
            let fields = letter.into_items().unwrap().pop().unwrap();
            fields
                .into_items()
                .unwrap()
                .iter()
                .map(|f| f.as_str().unwrap().to_string())
                .collect()
        })
        .collect();
    let letter = |entry: &str, reason: &str, field: &str, value: &str| {
        ["entry", entry, "reason", reason, field, value]
            .map(String::from)
            .to_vec()
    };
    assert_eq!(
        letters,
        [
            letter(entry[1], unicode, "job", bad_name),
            letter(entry[3], range, "job", huge_id),
            letter(entry[4], oops, "job", "oops"),
            letter(entry[5], no_job, "note", "no job here"),
        ]
    );
    assert_eq!(pending(redis.addr(), None), 0);
    // And the api says what became of each.
    for (id, state) in [
        ("1", "stored"),
        ("2", "failed"),
        ("3", "stored"),
        ("18446744073709551615", "failed"),
        ("4", "stored"),
        (&id_of(&later).to_string(), "stored"),
    ] {
        let reply = client
            .send("GET", &format!("/jobs/{id}"), None, false)
            .unwrap();
        assert_eq!(reply.body, format!(r#"{{"id":{id},"status":"{state}"}}"#));
    }
}

#[test]
fn bad_service_arguments_are_usage_errors() {
    for (args, message) in [
        (
            &["api"][..],
            "error: the following required arguments were not provided:\n  --broker <redis://HOST:PORT/NAME>",
        ),
        (
            &["store", "--broker", "redis://h/x"][..],
            "error: the following required arguments were not provided:\n  --db <postgres://USER@HOST:PORT/DB>",
        ),
        (
            &["api", "--broker", "http://h/x"][..],
            "error: invalid value 'http://h/x' for '--broker <redis://HOST:PORT/NAME>': \
             \"http://h/x\": only redis:// URLs are supported, not http://",
        ),
        (
            &["api", "--broker", "redis://h/x"][..],
            "error: the following required arguments were not provided:\n  --db <postgres://USER@HOST:PORT/DB>",
        ),
        (
            &[
                "api",
                "--broker",
                "redis://h/x",
                "--db",
                "postgres://u:hunter2@h:99999/d",
            ][..],
            "error: invalid value for '--db <postgres://USER@HOST:PORT/DB>':",
        ),
        (
            &[
                "store",
                "--broker",
                "redis://h/x",
                "--db",
                "postgres://u:hunter2@h/d",
                "--batch",
                "0",
            ][..],
            "error: invalid value '0' for '--batch <N>': 0 is not in 1..=10000",
        ),
        (
            &[
                "store",
                "--broker",
                "redis://h/x",
                "--db",
                "mysql://u:hunter2@h/d",
            ][..],
            "error: invalid value for '--db <postgres://USER@HOST:PORT/DB>':",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_jobs-pipeline"))
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(stderr.starts_with(message), "{args:?}: {stderr}");
        assert!(!stderr.contains("hunter2"));
    }
}

/// Not a check but a measurement, for the README: jobs per second from the
/// first POST until the last row, with one and with two `store` processes,
/// and the time from each 202 to its row's commit.
/// `cargo test --release -p jobs-pipeline --test services -- --ignored --nocapture`
#[test]
#[ignore]
fn measure_throughput_and_latency() {
    for stores in [1, 2] {
        let redis = RedisServer::start();
        let pg = PgServer::start();
        let broker = redis.url("jobs").to_string();
        let (_api, addr) = Proc::api(&broker, &pg.url());
        let _stores: Vec<Proc> = (0..stores)
            .map(|i| Proc::store_with(&broker, &pg.url(), &format!("store-{i}"), "100"))
            .collect();
        let n = 5000;
        let start = SystemTime::now();
        let accepted = post_many(addr, 0..n, 50).join().unwrap();
        let expected: BTreeSet<u64> = accepted.keys().copied().collect();
        eventually("all stored", || {
            stored_ids(&pg.url()).as_ref() == Some(&expected)
        });
        let rows = with_db(&pg.url(), async |db| {
            db.query(
                "SELECT id, extract(epoch from stored_at)::float8 FROM jobs",
                &[],
            )
            .await
            .unwrap()
        });
        let mut last = 0.0f64;
        let mut latencies: Vec<f64> = rows
            .iter()
            .map(|row| {
                let id: u64 = row[0].as_deref().unwrap().parse().unwrap();
                let stored: f64 = row[1].as_deref().unwrap().parse().unwrap();
                last = last.max(stored);
                let answered = accepted[&id]
                    .duration_since(UNIX_EPOCH)
                    .unwrap()
                    .as_secs_f64();
                // The store can commit before the client has read its 202.
                ((stored - answered) * 1000.0).max(0.0)
            })
            .collect();
        latencies.sort_by(f64::total_cmp);
        let elapsed = last - start.duration_since(UNIX_EPOCH).unwrap().as_secs_f64();
        println!(
            "{stores} store(s), posting and storing at once: {n} jobs in {elapsed:.2} s = {:.0} jobs/s; 202 to stored: median {:.1} ms, p99 {:.1} ms",
            n as f64 / elapsed,
            latencies[latencies.len() / 2],
            latencies[latencies.len() * 99 / 100]
        );
        // The stores alone: a backlog queued while none runs, drained.
        drop(_stores);
        let start = SystemTime::now();
        let backlog = post_many(addr, n..3 * n, 50).join().unwrap();
        let queued = start.elapsed().unwrap().as_secs_f64();
        let expected: BTreeSet<u64> = expected
            .into_iter()
            .chain(backlog.keys().copied())
            .collect();
        let start = SystemTime::now();
        let _stores: Vec<Proc> = (0..stores)
            .map(|i| Proc::store_with(&broker, &pg.url(), &format!("drain-{i}"), "100"))
            .collect();
        eventually("backlog stored", || {
            stored_ids(&pg.url()).as_ref() == Some(&expected)
        });
        let last = with_db(&pg.url(), async |db| {
            db.query(
                "SELECT extract(epoch from max(stored_at))::float8 FROM jobs",
                &[],
            )
            .await
            .unwrap()
        });
        let last: f64 = last[0][0].as_deref().unwrap().parse().unwrap();
        let elapsed = last - start.duration_since(UNIX_EPOCH).unwrap().as_secs_f64();
        println!(
            "{stores} store(s), draining a backlog: {} jobs in {elapsed:.2} s = {:.0} jobs/s (the api alone queued them at {:.0} jobs/s)",
            2 * n,
            2.0 * n as f64 / elapsed,
            2.0 * n as f64 / queued
        );
    }
}
