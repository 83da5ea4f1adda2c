//! The client against a real redis-server.

mod common;

use std::rc::Rc;
use std::sync::mpsc;
use std::time::Duration;

use redis_client::{Connection, Error, Frame, Pool, RedisServer, Script, StreamEntry};
use runtime::{run_until_complete, spawn};

use common::bounded;

fn bulk(s: &str) -> Frame {
    Frame::Bulk(s.as_bytes().to_vec())
}

#[test]
fn commands_round_trip() {
    let server = RedisServer::start();
    let addr = server.addr();
    bounded(async move || {
        let mut conn = Connection::connect(addr).await.unwrap();
        conn.ping().await.unwrap();
        assert!(conn.set_nx("k", b"first", None).await.unwrap());
        assert!(!conn.set_nx("k", b"second", None).await.unwrap());
        assert_eq!(conn.get("k").await.unwrap(), Some(b"first".to_vec()));
        assert_eq!(conn.get("missing").await.unwrap(), None);
        // An error reply is an error for that command, not for the
        // connection.
        let err = conn.command(&["INCR", "k"]).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            "redis: ERR value is not an integer or out of range"
        );
        assert!(!err.is_fatal());
        assert_eq!(
            conn.command(&["GENERIC", "x"])
                .await
                .unwrap_err()
                .to_string(),
            "redis: ERR unknown command 'GENERIC', with args beginning with: 'x' "
        );
        conn.ping().await.unwrap();
    });
}

#[test]
fn a_megabyte_value_crosses_many_reads() {
    let server = RedisServer::start();
    let addr = server.addr();
    bounded(async move || {
        let mut conn = Connection::connect(addr).await.unwrap();
        let value: Vec<u8> = (0..1_000_000u32).map(|i| (i % 251) as u8).collect();
        conn.command(&[&b"SET"[..], b"big", &value]).await.unwrap();
        assert_eq!(conn.get("big").await.unwrap(), Some(value));
    });
}

#[test]
fn a_pipeline_is_one_write_and_replies_in_order() {
    let server = RedisServer::start();
    let addr = server.addr();
    bounded(async move || {
        let mut conn = Connection::connect(addr).await.unwrap();
        let mut commands: Vec<Vec<&str>> = (0..100).map(|_| vec!["INCR", "n"]).collect();
        commands.insert(50, vec!["HGET", "n", "f"]); // wrong type: fails alone
        let replies = conn.pipeline(&commands).await.unwrap();
        assert_eq!(replies.len(), 101);
        let mut expected = 1;
        for (i, reply) in replies.into_iter().enumerate() {
            if i == 50 {
                assert!(
                    reply
                        .unwrap_err()
                        .to_string()
                        .starts_with("redis: WRONGTYPE"),
                    "the bad command fails"
                );
            } else {
                assert_eq!(reply.unwrap(), Frame::Integer(expected));
                expected += 1;
            }
        }
    });
}

#[test]
fn a_consumer_group_delivers_acks_and_reclaims() {
    let server = RedisServer::start();
    let addr = server.addr();
    bounded(async move || {
        let mut conn = Connection::connect(addr).await.unwrap();
        assert!(conn.xgroup_create("s", "g", "0").await.unwrap());
        assert!(
            !conn.xgroup_create("s", "g", "0").await.unwrap(),
            "BUSYGROUP"
        );
        let mut ids = Vec::new();
        for n in ["1", "2", "3"] {
            ids.push(conn.xadd("s", &[("job", n.as_bytes())]).await.unwrap());
        }
        let got = conn.xreadgroup("g", "alice", "s", 2, None).await.unwrap();
        assert_eq!(
            got,
            vec![
                StreamEntry {
                    id: ids[0].clone(),
                    fields: vec![(b"job".to_vec(), b"1".to_vec())]
                },
                StreamEntry {
                    id: ids[1].clone(),
                    fields: vec![(b"job".to_vec(), b"2".to_vec())]
                },
            ]
        );
        assert_eq!(got[1].field("job"), Some(&b"2"[..]));
        // Alice acknowledges one and "crashes" with the other pending.
        assert_eq!(conn.xack("s", "g", &[&ids[0]]).await.unwrap(), 1);
        // Bob gets only what nobody was given yet...
        let bob = conn
            .xreadgroup("g", "bob", "s", 10, Some(Duration::from_millis(10)))
            .await
            .unwrap();
        assert_eq!(bob.iter().map(|e| &e.id).collect::<Vec<_>>(), [&ids[2]]);
        // ...and a block that times out is an empty list.
        let none = conn
            .xreadgroup("g", "bob", "s", 10, Some(Duration::from_millis(10)))
            .await
            .unwrap();
        assert!(none.is_empty());
        // Entries idle for an hour: none. Idle for no time: alice's and
        // bob's pending entries move to carol.
        let claimed = conn
            .xautoclaim("s", "g", "carol", Duration::from_secs(3600), "0", 10)
            .await
            .unwrap();
        assert!(claimed.entries.is_empty());
        let claimed = conn
            .xautoclaim("s", "g", "carol", Duration::ZERO, "0", 10)
            .await
            .unwrap();
        assert_eq!(claimed.next, "0-0");
        assert_eq!(
            claimed.entries.iter().map(|e| &e.id).collect::<Vec<_>>(),
            [&ids[1], &ids[2]]
        );
        assert_eq!(
            conn.xack("s", "g", &[&ids[1], &ids[2], &ids[0]])
                .await
                .unwrap(),
            2
        );
    });
}

#[test]
fn resp3_replies_decode_like_resp2() {
    let server = RedisServer::start();
    let addr = server.addr();
    bounded(async move || {
        let mut conn = Connection::connect(addr).await.unwrap();
        let hello = conn.command(&["HELLO", "3"]).await.unwrap();
        assert!(matches!(hello, Frame::Map(_)), "{hello:?}");
        conn.command(&["HSET", "h", "a", "1"]).await.unwrap();
        assert_eq!(
            conn.command(&["HGETALL", "h"]).await.unwrap(),
            Frame::Map(vec![(bulk("a"), bulk("1"))])
        );
        assert_eq!(conn.command(&["GET", "nope"]).await.unwrap(), Frame::Null);
        conn.xgroup_create("s", "g", "0").await.unwrap();
        let id = conn.xadd("s", &[("f", b"v")]).await.unwrap();
        let got = conn.xreadgroup("g", "c", "s", 10, None).await.unwrap();
        assert_eq!(
            got,
            [StreamEntry {
                id,
                fields: vec![(b"f".to_vec(), b"v".to_vec())]
            }]
        );
        assert!(
            conn.xreadgroup("g", "c", "s", 10, Some(Duration::from_millis(10)))
                .await
                .unwrap()
                .is_empty()
        );
    });
}

#[test]
fn scripts_survive_a_flushed_cache() {
    let server = RedisServer::start();
    let addr = server.addr();
    bounded(async move || {
        let mut conn = Connection::connect(addr).await.unwrap();
        let script = Script::new("return redis.call('INCRBY', KEYS[1], ARGV[1])");
        assert_eq!(
            script.invoke(&mut conn, &["n"], &[b"5"]).await.unwrap(),
            Frame::Integer(5)
        );
        // As after a server restart: the digest is unknown, EVAL it again.
        conn.command(&["SCRIPT", "FLUSH"]).await.unwrap();
        assert_eq!(
            script.invoke(&mut conn, &["n"], &[b"2"]).await.unwrap(),
            Frame::Integer(7)
        );
        let err = Script::new("return redis.call('NOPE')")
            .invoke(&mut conn, &[], &[])
            .await
            .unwrap_err();
        assert!(matches!(err, Error::Server(_)), "{err}");
    });
}

#[test]
fn a_lost_server_is_an_io_error() {
    let mut server = RedisServer::start();
    let addr = server.addr();
    let (tx, rx) = mpsc::channel::<()>();
    let (ready_tx, ready_rx) = mpsc::channel::<()>();
    let client = std::thread::spawn(move || {
        run_until_complete(async move {
            let mut conn = Connection::connect(addr).await.unwrap();
            conn.ping().await.unwrap();
            ready_tx.send(()).unwrap();
            rx.recv().unwrap(); // the server is gone now
            let err = conn.ping().await.unwrap_err();
            assert!(err.is_fatal(), "{err}");
            let err = Connection::connect(addr).await.unwrap_err();
            assert!(
                err.to_string().starts_with(&format!(
                    "redis connection: cannot connect to redis at {addr}"
                )),
                "{err}"
            );
        })
        .unwrap();
    });
    ready_rx.recv_timeout(Duration::from_secs(60)).unwrap();
    server.kill();
    tx.send(()).unwrap();
    client.join().unwrap();
}

#[test]
fn a_pool_shares_few_connections_among_many_tasks() {
    let server = RedisServer::start();
    let url = server.url("unused");
    let addr = server.addr();
    bounded(async move || {
        // Counts the connections the server accepts from here on.
        let mut conn = Connection::connect(addr).await.unwrap();
        let before = connections_received(&mut conn).await;
        let pool = Rc::new(Pool::new(url, 4));
        let tasks: Vec<_> = (0..50)
            .map(|_| {
                let pool = pool.clone();
                spawn(async move {
                    let mut conn = pool.get().await.unwrap();
                    conn.command(&["INCR", "n"]).await.unwrap();
                    conn.release();
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
        assert_eq!(conn.get("n").await.unwrap(), Some(b"50".to_vec()));
        // Never more than four connections for fifty tasks. (How many of
        // the four were opened depends on how fast the first commands were
        // answered: a task that finds an idle connection takes it.)
        let opened = connections_received(&mut conn).await - before;
        assert!((1..=4).contains(&opened), "{opened} connections opened");
    });
}

/// The connections the server has accepted since it started.
async fn connections_received(conn: &mut Connection) -> u64 {
    let stats = conn.command(&["INFO", "stats"]).await.unwrap();
    let stats = stats.as_str().unwrap().to_string();
    stats
        .lines()
        .find_map(|l| l.strip_prefix("total_connections_received:"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no total_connections_received in {stats}"))
}

#[test]
fn a_subscribed_connection_receives_what_is_published() {
    let server = RedisServer::start();
    let addr = server.addr();
    bounded(async move || {
        let mut listener = Connection::connect(addr).await.unwrap();
        let confirmed = listener.command(&["SUBSCRIBE", "bell"]).await.unwrap();
        assert_eq!(
            confirmed,
            Frame::Array(vec![bulk("subscribe"), bulk("bell"), Frame::Integer(1)])
        );
        // A wait cut short by a timeout (nothing was published yet) loses
        // nothing of what comes later.
        let nothing = runtime::timeout(Duration::from_millis(20), listener.receive()).await;
        assert!(nothing.is_err());
        let mut other = Connection::connect(addr).await.unwrap();
        let heard = other.command(&["PUBLISH", "bell", "ding"]).await.unwrap();
        assert_eq!(heard, Frame::Integer(1));
        assert_eq!(
            listener.receive().await.unwrap(),
            Frame::Array(vec![bulk("message"), bulk("bell"), bulk("ding")])
        );
    });
}

#[test]
fn a_reply_of_megabytes_is_read_whole_and_the_next_one_after_it() {
    // 50,000 elements, about 1.3 MB: read with reads that grow past the
    // first 16 KiB, then a small reply on the same connection.
    let server = RedisServer::start();
    let addr = server.addr();
    bounded(async move || {
        let mut conn = Connection::connect(addr).await.unwrap();
        let values: Vec<String> = (0..50_000).map(|i| format!("value-{i:020}")).collect();
        for batch in values.chunks(5_000) {
            let mut args = vec!["RPUSH", "l"];
            args.extend(batch.iter().map(String::as_str));
            conn.command(&args).await.unwrap();
        }
        let reply = conn.command(&["LRANGE", "l", "0", "-1"]).await.unwrap();
        let want: Vec<Frame> = values.iter().map(|v| bulk(v)).collect();
        assert_eq!(reply, Frame::Array(want));
        assert_eq!(
            conn.command(&["LLEN", "l"]).await.unwrap(),
            Frame::Integer(50_000)
        );
    });
}
