//! The api service in-process, on a real redis-server and PostgreSQL: what needs a
//! setting the command line does not offer, such as a short request
//! timeout.

mod common;

use std::net::SocketAddr;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use common::postgres::PgServer;
use common::{Client, PATIENCE};
use jobs_pipeline::Shutdown;
use jobs_pipeline::api::{Api, ApiConfig};
use jobs_pipeline::front::Closed;
use jobs_pipeline::postgres::PgConfig;
use redis_client::RedisServer;

/// Runs the api on its own thread until `shutdown`; returns its address and
/// what shutdown found.
fn start(
    redis: &RedisServer,
    pg: &PgServer,
    shutdown: &Shutdown,
) -> (SocketAddr, mpsc::Receiver<Closed>) {
    let config = ApiConfig {
        addr: SocketAddr::from(([127, 0, 0, 1], 0)),
        broker: redis.url("jobs"),
        db: PgConfig::parse(&pg.url(), None).unwrap(),
        grace: Duration::from_secs(30),
        limits: jobs_pipeline::front::Limits {
            request_timeout: Duration::from_millis(200),
            ..jobs_pipeline::front::Limits::default()
        },
        connections: 4,
    };
    let (addr_tx, addr_rx) = mpsc::channel();
    let (tx, rx) = mpsc::channel();
    let shutdown = shutdown.clone();
    // The listener belongs to the thread whose runtime serves it.
    thread::spawn(move || {
        let api = Api::bind(config).unwrap();
        addr_tx.send(api.local_addr()).unwrap();
        let closed = runtime::run_until_complete(async {
            api.check_services().await.unwrap();
            api.serve(shutdown).await
        })
        .unwrap();
        let _ = tx.send(closed);
    });
    (addr_rx.recv_timeout(PATIENCE).unwrap(), rx)
}

#[test]
fn a_slow_client_gets_408_and_the_service_goes_on() {
    let redis = RedisServer::start();
    let pg = PgServer::start();
    let shutdown = Shutdown::new();
    let (addr, closed) = start(&redis, &pg, &shutdown);
    let mut slow = Client::connect(addr).unwrap();
    slow.write_raw(b"POST /jobs HTTP/1.1\r\nContent-Length: 40\r\n\r\n{\"na")
        .unwrap();
    let reply = slow.read_reply().unwrap();
    assert_eq!(
        (reply.status, reply.body.as_str(), reply.close),
        (
            408,
            r#"{"error":"the request took over 200ms to arrive"}"#,
            true
        )
    );
    let ok = common::request(addr, "GET", "/jobs/1", None).unwrap();
    assert_eq!(ok.status, 404);
    shutdown.trigger();
    assert_eq!(closed.recv_timeout(PATIENCE).unwrap(), Closed::default());
}

#[test]
fn shutdown_lets_a_request_in_progress_finish() {
    let redis = RedisServer::start();
    let pg = PgServer::start();
    let shutdown = Shutdown::new();
    let (addr, closed) = start(&redis, &pg, &shutdown);
    let mut idle = Client::connect(addr).unwrap();
    assert_eq!(
        idle.send("GET", "/jobs/1", None, false).unwrap().status,
        404
    );
    // Half a request, then shutdown, then the other half: it is answered.
    let mut busy = Client::connect(addr).unwrap();
    let body = r#"{"name": "late", "priority": 2}"#;
    busy.write_raw(
        format!(
            "POST /jobs HTTP/1.1\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .as_bytes(),
    )
    .unwrap();
    // The service has read the head once a request on another connection
    // has been answered after it (one loop thread, requests in order).
    assert_eq!(
        common::request(addr, "GET", "/jobs/2", None)
            .unwrap()
            .status,
        404
    );
    shutdown.trigger();
    common::wait_until_refused(addr);
    busy.write_raw(body.as_bytes()).unwrap();
    let reply = busy.read_reply().unwrap();
    assert_eq!((reply.status, reply.close), (202, true));
    // The idle connection (and any of `wait_until_refused`'s probes still
    // open) were closed; the busy one finished.
    let closed = closed.recv_timeout(PATIENCE).unwrap();
    assert_eq!((closed.finished, closed.cut_off), (1, 0));
    assert!(closed.idle_closed >= 1, "{closed:?}");
    drop(idle);
}

#[test]
fn an_id_no_job_can_have_is_404_and_never_reaches_the_lookups() {
    let redis = RedisServer::start();
    let pg = PgServer::start();
    let shutdown = Shutdown::new();
    let (addr, closed) = start(&redis, &pg, &shutdown);
    // 2^53 is past every id; 2^63 and 2^64-1 are past PostgreSQL's bigint,
    // and once failed the whole batch of lookups they joined with 503.
    for id in [
        "0",
        "9007199254740992",
        "9223372036854775808",
        "18446744073709551615",
    ] {
        let reply = common::request(addr, "GET", &format!("/jobs/{id}"), None).unwrap();
        assert_eq!(
            (reply.status, reply.body.as_str()),
            (404, format!(r#"{{"error":"no job {id}"}}"#).as_str()),
            "GET /jobs/{id}"
        );
    }
    let past = common::request(addr, "GET", "/jobs/18446744073709551616", None).unwrap();
    assert_eq!(past.status, 400);
    let real = common::request(addr, "GET", "/jobs/9007199254740991", None).unwrap();
    assert_eq!(real.status, 404);
    shutdown.trigger();
    assert_eq!(closed.recv_timeout(PATIENCE).unwrap(), Closed::default());
}
