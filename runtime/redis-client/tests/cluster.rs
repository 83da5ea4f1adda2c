//! Routing keys to the masters of a real Redis Cluster (three masters on
//! 127.0.0.1), and a lone server seen through the same [`Cluster`].

mod common;

use common::bounded;
use redis_client::{Cluster, Frame, RedisCluster, RedisServer, is_redirect, key_slot};

#[test]
fn every_key_goes_to_the_master_that_holds_its_slot() {
    let cluster = RedisCluster::start(3);
    let url = cluster.url("t");
    bounded(async move || {
        let nodes = Cluster::new(url, 2);
        assert!(nodes.is_cluster().await.unwrap());
        let masters = nodes.masters().await.unwrap();
        assert_eq!(masters.len(), 3);
        let mut used = std::collections::BTreeSet::new();
        for i in 0..300 {
            let key = if i % 3 == 0 {
                format!("{{tag{}}}:k{i}", i / 30)
            } else {
                format!("key:{i}")
            };
            // Our slot is the server's.
            let pool = nodes.pool_for(key.as_bytes()).await.unwrap();
            let mut conn = pool.get().await.unwrap();
            let slot = conn.command(&["CLUSTER", "KEYSLOT", &key]).await.unwrap();
            assert_eq!(
                slot,
                Frame::Integer(i64::from(key_slot(key.as_bytes()))),
                "{key}"
            );
            // And the server holds it: no MOVED.
            conn.command(&["SET", &key, "v"]).await.unwrap();
            used.insert(conn.addr());
            conn.release();
        }
        assert_eq!(used.len(), 3, "300 keys land on every master");
        // A master that does not hold a key says where it is.
        let key = b"key:1";
        let home = nodes.pool_for(key).await.unwrap();
        let mut other = None;
        for pool in &masters {
            let mut conn = pool.get().await.unwrap();
            let mine = home.get().await.unwrap();
            let here = conn.addr() != mine.addr();
            mine.release();
            if here {
                other = Some(conn.command(&["GET", "key:1"]).await.unwrap_err());
                conn.release();
                break;
            }
            conn.release();
        }
        let moved = other.expect("another master");
        assert!(is_redirect(&moved), "{moved}");
        // Forgotten, the map is asked for again, and still right.
        nodes.forget();
        let again = nodes.pool_for(key).await.unwrap();
        let mut conn = again.get().await.unwrap();
        assert_eq!(
            conn.command(&["GET", "key:1"]).await.unwrap(),
            Frame::Bulk(b"v".to_vec())
        );
        conn.release();
    });
}

#[test]
fn a_lone_server_is_one_node_that_holds_every_key() {
    let server = RedisServer::start();
    let url = server.url("t");
    bounded(async move || {
        let nodes = Cluster::new(url, 2);
        assert!(!nodes.is_cluster().await.unwrap());
        assert_eq!(nodes.masters().await.unwrap().len(), 1);
        assert_eq!(nodes.master_of(0).await.unwrap(), None);
        for key in ["a", "b", "{x}c"] {
            let pool = nodes.pool_for(key.as_bytes()).await.unwrap();
            let mut conn = pool.get().await.unwrap();
            conn.command(&["SET", key, "v"]).await.unwrap();
            conn.release();
        }
    });
}

#[test]
fn a_server_that_refuses_cluster_slots_is_one_node() {
    // CLUSTER renamed away, as some operators do: no cluster, no error.
    let server = RedisServer::start_with_args(&["--rename-command", "CLUSTER", ""]);
    let url = server.url("t");
    bounded(async move || {
        let nodes = Cluster::new(url, 1);
        assert!(!nodes.is_cluster().await.unwrap());
        let pool = nodes.pool_for(b"k").await.unwrap();
        let mut conn = pool.get().await.unwrap();
        conn.command(&["SET", "k", "v"]).await.unwrap();
        conn.release();
    });
}
