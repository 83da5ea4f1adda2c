//! The shared frontier's scripts against a real redis-server: claims under
//! the per-host cap, the global seen set and --max-pages, leases that run
//! out and come back, and the distributed join.

use std::collections::BTreeSet;
use std::time::Duration;

use redis_client::{RedisCluster, RedisServer, RedisUrl};
use runtime::Runtime;
use stage3_crawler::frontier::{
    Claim, Completed, Completion, Frontier, Held, Leased, Link, Seen, Settings,
};

fn settings() -> Settings {
    Settings {
        per_host: 2,
        max_pages: None,
        robots: true,
        delay: Duration::ZERO,
        lease: Duration::from_secs(60),
        max_query_variants: 1000,
        max_depth: None,
    }
}

fn link(url: &str) -> Link {
    Link {
        sitemap: false,
        url: url.into(),
        host: host(url),
        variant: None,
        refused: None,
        robots: false,
        counts: true,
    }
}

/// The host key of a test URL: `http://h/...` is `h:80`.
fn host(url: &str) -> String {
    let rest = url.trim_start_matches("http://");
    format!("{}:80", rest.split('/').next().unwrap())
}

/// Completing `url`'s lease `token` with its statistic and `links`.
fn completion(url: &str, token: u64, delay: Option<Duration>, links: &[Link]) -> Completion {
    Completion {
        url: url.into(),
        host: host(url),
        token,
        delay,
        record: stat(url),
        known: 0,
        depth: 1,
        redirects: 10,
        links: links.to_vec(),
    }
}

fn stat(url: &str) -> String {
    format!(r#"{{"url":"{url}","status":200,"num_urls":0,"num_new_urls":0}}"#)
}

fn urls(claim: &Claim) -> Vec<String> {
    match claim {
        Claim::Work(leased) => leased
            .iter()
            .map(|l| {
                // The work's first line is its URL.
                let url = l.work.lines().next().unwrap();
                assert_eq!(url, l.url);
                url.to_string()
            })
            .collect(),
        other => panic!("expected work, got {other:?}"),
    }
}

fn work(claim: Claim) -> Vec<Leased> {
    match claim {
        Claim::Work(leased) => leased,
        other => panic!("expected work, got {other:?}"),
    }
}

fn frontier(server: &RedisServer, name: &str) -> Frontier {
    frontier_at(&server.url(name))
}

/// A process's frontier of the crawl `url` names, on a server or a cluster.
fn frontier_at(url: &RedisUrl) -> Frontier {
    Frontier::new(url.clone(), 2, Duration::from_secs(5))
}

#[test]
fn one_request_at_a_time_until_the_host_is_known_then_per_host() {
    let server = RedisServer::start();
    Runtime::new()
        .unwrap()
        .block_on(async {
            let f = frontier(&server, "c1");
            assert_eq!(f.identity().await.unwrap(), None);
            let roots = [link("http://h/"), link("http://h/b")];
            assert_eq!(
                f.create("id-1", &settings(), &roots, 10).await.unwrap(),
                None
            );
            // A second process finds the crawl, and queues nothing.
            let other = frontier(&server, "c1");
            assert_eq!(
                other.create("id-2", &settings(), &roots, 10).await.unwrap(),
                Some("id-1".into())
            );
            assert_eq!(other.identity().await.unwrap(), Some("id-1".into()));

            // The host's rules are not known: one URL, then nothing.
            let first = f.claim(10).await.unwrap();
            assert_eq!(urls(&first), ["http://h/"]);
            assert!(matches!(other.claim(10).await.unwrap(), Claim::Wait(_)));

            // Completing it with its delay known (0) frees the host to two
            // at once; its links join the seen set.
            let lease = &work(first)[0];
            let links = [link("http://h/b"), link("http://h/c"), link("http://h/d")];
            let done = f
                .complete(completion(
                    "http://h/",
                    lease.token,
                    Some(Duration::ZERO),
                    &links,
                ))
                .await
                .unwrap();
            assert_eq!(
                done,
                Completed::Done {
                    urls: 3,
                    new: 2,
                    seen: vec![Seen::Before, Seen::Queued, Seen::Queued]
                }
            );
            let two = other.claim(10).await.unwrap();
            assert_eq!(urls(&two), ["http://h/b", "http://h/c"]);
            assert!(matches!(f.claim(10).await.unwrap(), Claim::Wait(_)));
            for lease in work(two) {
                let url = lease.url.as_str();
                other
                    .complete(completion(url, lease.token, Some(Duration::ZERO), &[]))
                    .await
                    .unwrap();
            }
            let last = work(f.claim(10).await.unwrap());
            assert_eq!(last.len(), 1);
            // Not finished while a URL is leased, though nothing is queued.
            assert!(matches!(other.claim(10).await.unwrap(), Claim::Wait(_)));
            f.complete(completion("http://h/d", last[0].token, None, &[]))
                .await
                .unwrap();
            assert_eq!(other.claim(10).await.unwrap(), Claim::Finished);

            // The report holds each URL once, with num_new_urls counted
            // against the global seen set.
            let records = f.records().await.unwrap();
            assert_eq!(records.len(), 4);
            let records: Vec<serde_json::Value> = records
                .iter()
                .map(|r| serde_json::from_str(r).unwrap())
                .collect();
            let root = records.iter().find(|r| r["url"] == "http://h/").unwrap();
            assert_eq!(root["num_urls"], 3);
            assert_eq!(root["num_new_urls"], 2);
            assert_eq!(f.status().await.unwrap().pending, 0);
            assert!(f.clear().await.unwrap() > 5);
            assert_eq!(f.identity().await.unwrap(), None);
        })
        .unwrap();
}

#[test]
fn a_lease_that_runs_out_goes_back_and_its_holder_cannot_complete_it() {
    let server = RedisServer::start();
    Runtime::new()
        .unwrap()
        .block_on(async {
            let f = frontier(&server, "c2");
            let short = Settings {
                lease: Duration::from_millis(100),
                robots: false,
                ..settings()
            };
            f.create("id", &short, &[link("http://h/")], 10)
                .await
                .unwrap();
            let first = work(f.claim(1).await.unwrap());
            // The time a lease lasts is what is tested here.
            runtime::sleep(Duration::from_millis(150)).await;
            let again = work(f.claim(1).await.unwrap());
            assert_eq!(again[0].work, first[0].work);
            assert_ne!(again[0].token, first[0].token);
            assert_eq!(f.status().await.unwrap().expired, 1);
            assert_eq!(
                f.complete(completion("http://h/", first[0].token, None, &[]))
                    .await
                    .unwrap(),
                Completed::Lost
            );
            // Renewed, it stays ours; released, it goes back at once.
            let held = [Held {
                url: "http://h/".into(),
                host: "h:80".into(),
                token: again[0].token,
            }];
            assert_eq!(f.renew(&held).await.unwrap(), 1);
            assert_eq!(f.release(&held).await.unwrap(), 1);
            let third = work(f.claim(1).await.unwrap());
            f.complete(completion("http://h/", third[0].token, None, &[]))
                .await
                .unwrap();
            assert_eq!(f.claim(1).await.unwrap(), Claim::Finished);
            assert_eq!(f.records().await.unwrap().len(), 1);
        })
        .unwrap();
}

#[test]
fn a_grant_runs_out_with_only_the_urls_it_still_holds_which_go_back_in_order() {
    let server = RedisServer::start();
    Runtime::new()
        .unwrap()
        .block_on(async {
            let f = frontier(&server, "grants");
            let short = Settings {
                per_host: 4,
                lease: Duration::from_millis(100),
                robots: false,
                ..settings()
            };
            let roots = ["http://h/a", "http://h/b", "http://h/c", "http://h/d"].map(link);
            f.create("id", &short, &roots, 10).await.unwrap();
            // One claim of one host's URLs: one grant, one token.
            let taken = work(f.claim(4).await.unwrap());
            assert_eq!(
                leased_urls(&taken),
                ["http://h/a", "http://h/b", "http://h/c", "http://h/d"]
            );
            let token = taken[0].token;
            assert!(taken.iter().all(|l| l.token == token), "{taken:?}");
            let held = |url: &str| Held {
                url: url.into(),
                host: "h:80".into(),
                token,
            };
            // a is completed and b given back; c and d are still held,
            // and renewing answers for each URL.
            f.complete(completion("http://h/a", token, None, &[]))
                .await
                .unwrap();
            assert_eq!(f.release(&[held("http://h/b")]).await.unwrap(), 1);
            assert_eq!(
                f.renew(&[held("http://h/a"), held("http://h/c")])
                    .await
                    .unwrap(),
                1
            );
            // The time a lease lasts is what is tested here.
            runtime::sleep(Duration::from_millis(150)).await;
            // c and d run out and go back to the head of the line, in the
            // order they were taken, before b.
            let again = work(f.claim(4).await.unwrap());
            let order: Vec<&str> = again.iter().map(|l| l.url.as_str()).collect();
            assert_eq!(order, ["http://h/c", "http://h/d", "http://h/b"]);
            assert_eq!(f.status().await.unwrap().expired, 2);
            assert_eq!(
                f.complete(completion("http://h/d", token, None, &[]))
                    .await
                    .unwrap(),
                Completed::Lost
            );
            for l in &again {
                f.complete(completion(&l.url, l.token, None, &[]))
                    .await
                    .unwrap();
            }
            assert_eq!(f.claim(1).await.unwrap(), Claim::Finished);
            assert_eq!(f.records().await.unwrap().len(), 4);
            // Every grant is over, and gone from Redis.
            let mut conn = server.url("grants").connect().await.unwrap();
            for pattern in ["*grant*", "*works:*", "*leases"] {
                let keys = conn
                    .command(&["KEYS", &format!("stage3:{{grants}}:{pattern}")])
                    .await
                    .unwrap();
                assert_eq!(keys, redis_client::Frame::Array(Vec::new()), "{pattern}");
            }
        })
        .unwrap();
}

#[test]
fn max_pages_counts_every_process_and_refused_urls_are_reported_once() {
    let server = RedisServer::start();
    Runtime::new()
        .unwrap()
        .block_on(async {
            let f = frontier(&server, "c3");
            let capped = Settings {
                max_pages: Some(2),
                robots: false,
                ..settings()
            };
            f.create("id", &capped, &[link("http://h/")], 10)
                .await
                .unwrap();
            let root = work(f.claim(1).await.unwrap());
            let mut off = link("http://elsewhere/");
            off.refused = Some("off-host");
            off.counts = false;
            let links = [link("http://h/a"), link("http://h/b"), off.clone(), off];
            let done = f
                .complete(completion("http://h/", root[0].token, None, &links))
                .await
                .unwrap();
            assert_eq!(
                done,
                Completed::Done {
                    urls: 2,
                    new: 2,
                    seen: vec![
                        Seen::Queued,
                        Seen::OverMaxPages,
                        Seen::Refused,
                        Seen::Before
                    ]
                }
            );
            let mut records: Vec<(String, String)> = f
                .records()
                .await
                .unwrap()
                .iter()
                .map(|r| {
                    let v: serde_json::Value = serde_json::from_str(r).unwrap();
                    let what = v.get("skipped").map_or("fetched".into(), |s| s.to_string());
                    (v["url"].as_str().unwrap().to_string(), what)
                })
                .collect();
            records.sort();
            assert_eq!(
                records,
                [
                    ("http://elsewhere/".into(), r#""off-host""#.into()),
                    ("http://h/".into(), "fetched".into()),
                    ("http://h/b".into(), r#""max-pages""#.into()),
                ]
            );
        })
        .unwrap();
}

#[test]
fn query_variants_are_counted_over_the_whole_crawl_and_robots_refusals_reported() {
    let server = RedisServer::start();
    Runtime::new()
        .unwrap()
        .block_on(async {
            let f = frontier(&server, "c4");
            let two = Settings {
                max_query_variants: 2,
                robots: false,
                ..settings()
            };
            f.create("id", &two, &[link("http://h/")], 10)
                .await
                .unwrap();
            let root = work(f.claim(1).await.unwrap());
            let query = |n: u32| {
                let mut l = link(&format!("http://h/q?n={n}"));
                l.variant = Some("http://h/q".into());
                l
            };
            let mut disallowed = link("http://h/private");
            disallowed.robots = true;
            let links = [query(1), query(2), disallowed, query(3)];
            let done = f
                .complete(completion("http://h/", root[0].token, None, &links))
                .await
                .unwrap();
            // Counted as one process counts them: all four pass the rules
            // as they stood before the page's links were seen.
            assert_eq!(
                done,
                Completed::Done {
                    urls: 4,
                    new: 4,
                    seen: vec![
                        Seen::Queued,
                        Seen::Queued,
                        Seen::Robots,
                        Seen::QueryVariants
                    ]
                }
            );
            // A later page's variant of the same path is over the limit
            // too, whichever process finds it.
            let next = work(f.claim(1).await.unwrap());
            let url = next[0].url.as_str();
            let done = f
                .complete(completion(url, next[0].token, None, &[query(4)]))
                .await
                .unwrap();
            assert_eq!(
                done,
                Completed::Done {
                    urls: 0,
                    new: 0,
                    seen: vec![Seen::QueryVariants]
                }
            );
        })
        .unwrap();
}

#[test]
fn work_that_cannot_be_read_is_set_aside_and_the_crawl_still_ends() {
    let server = RedisServer::start();
    Runtime::new()
        .unwrap()
        .block_on(async {
            let f = frontier(&server, "c5");
            let loose = Settings {
                robots: false,
                ..settings()
            };
            f.create("id", &loose, &[link("http://h/")], 10)
                .await
                .unwrap();
            // Someone else's bytes in the host's line, counted as pending.
            let mut conn = server.url("c5").connect().await.unwrap();
            conn.command(&["LPUSH", "stage3:{c5}:q:h:80", "not json"])
                .await
                .unwrap();
            conn.command(&["INCR", "stage3:{c5}:pending"])
                .await
                .unwrap();
            let claimed = work(f.claim(10).await.unwrap());
            assert_eq!(claimed.len(), 1, "the good URL, and not the bad one");
            let set_aside = conn
                .command(&["LRANGE", "stage3:{c5}:unreadable", "0", "-1"])
                .await
                .unwrap();
            assert_eq!(
                set_aside,
                redis_client::Frame::Array(vec![redis_client::Frame::Bulk(b"not json".to_vec())])
            );
            let url = "http://h/";
            f.complete(completion(url, claimed[0].token, None, &[]))
                .await
                .unwrap();
            assert_eq!(f.claim(10).await.unwrap(), Claim::Finished);
        })
        .unwrap();
}

#[test]
fn a_crawl_whose_keys_vanished_is_an_error_not_a_finished_crawl() {
    let server = RedisServer::start();
    Runtime::new()
        .unwrap()
        .block_on(async {
            let f = frontier(&server, "c6");
            f.create("id", &settings(), &[link("http://h/")], 10)
                .await
                .unwrap();
            let leased = work(f.claim(1).await.unwrap());
            // A Redis that restarted without its data, or was flushed.
            let mut conn = server.url("c6").connect().await.unwrap();
            conn.command(&["FLUSHALL"]).await.unwrap();
            let claimed = f.claim(1).await.unwrap_err().to_string();
            assert!(claimed.contains("is gone from Redis"), "{claimed}");
            let completed = f
                .complete(completion("http://h/", leased[0].token, None, &[]))
                .await
                .unwrap_err()
                .to_string();
            assert!(completed.contains("is gone from Redis"), "{completed}");
        })
        .unwrap();
}

#[test]
fn once_the_crawl_is_gone_no_call_writes_to_redis() {
    // `--frontier-clear` under running processes deletes every shard's
    // `meta` first: from then on, whatever a process still calls must
    // write nothing, or its keys outlive the clear.
    let server = RedisServer::start();
    Runtime::new()
        .unwrap()
        .block_on(async {
            let f = frontier(&server, "c7");
            f.create(
                "id",
                &settings(),
                &[link("http://h/"), link("http://i/")],
                10,
            )
            .await
            .unwrap();
            let leased = work(f.claim(2).await.unwrap());
            assert_eq!(leased.len(), 2);
            let mut conn = server.url("c7").connect().await.unwrap();
            conn.command(&["DEL", "stage3:{c7}:meta"]).await.unwrap();
            let before = contents(&mut conn).await;
            let held: Vec<Held> = leased.iter().map(Leased::held).collect();
            let gone = |e: std::io::Error| e.to_string().contains("is gone from Redis");
            assert_eq!(f.release(&held).await.unwrap(), 0);
            assert!(f.renew(&held).await.is_err_and(gone));
            assert!(f.add_workers(4).await.is_err_and(gone));
            assert!(f.claim(1).await.is_err_and(gone));
            let done = completion(&leased[0].url, leased[0].token, None, &[link("http://j/")]);
            assert!(f.complete(done).await.is_err_and(gone));
            assert_eq!(contents(&mut conn).await, before);
        })
        .unwrap();
}

/// Every key in the server, with its value as DUMP serializes it.
async fn contents(conn: &mut redis_client::Connection) -> Vec<(Vec<u8>, Vec<u8>)> {
    let keys = conn.command(&["KEYS", "*"]).await.unwrap();
    let mut out = Vec::new();
    for key in keys.into_items().unwrap() {
        let key = key.as_bytes().unwrap().to_vec();
        let dump = conn.command(&[&b"DUMP"[..], &key]).await.unwrap();
        out.push((key, dump.as_bytes().unwrap().to_vec()));
    }
    out.sort();
    out
}

/// The URLs a claim leased, by URL.
fn leased_urls(leased: &[Leased]) -> Vec<String> {
    let mut urls: Vec<String> = leased.iter().map(|l| l.url.clone()).collect();
    urls.sort();
    urls
}

#[test]
fn on_a_cluster_hosts_spread_over_the_shards_and_the_crawl_ends_exactly_once() {
    let cluster = RedisCluster::start(3);
    let url = cluster.url("k1");
    Runtime::new()
        .unwrap()
        .block_on(async {
            let f = frontier_at(&url);
            let other = frontier_at(&url);
            let loose = Settings {
                robots: false,
                ..settings()
            };
            let roots = [link("http://a/"), link("http://b/"), link("http://c/")];
            assert_eq!(f.create("id", &loose, &roots, 10).await.unwrap(), None);
            assert_eq!(other.identity().await.unwrap(), Some("id".into()));
            // Three hosts, three shards, one on each master.
            let nodes = redis_client::Cluster::new(url.clone(), 1);
            let home = nodes.pool_for(b"{k1}").await.unwrap();
            let mut conn = home.get().await.unwrap();
            let shards = conn
                .command(&["HGET", "stage3:{k1}:meta", "shards"])
                .await
                .unwrap();
            let shards = shards.as_str().unwrap().to_string();
            assert_eq!(shards.split_whitespace().count(), 2, "{shards}");
            let placed = conn.command(&["HVALS", "stage3:{k1}:hosts"]).await.unwrap();
            let mut placed: Vec<String> = placed
                .into_items()
                .unwrap()
                .iter()
                .map(|f| f.as_str().unwrap().to_string())
                .collect();
            placed.sort();
            assert_eq!(placed, ["0", "1", "2"]);
            conn.release();

            let roots = work(f.claim(10).await.unwrap());
            assert_eq!(leased_urls(&roots), ["http://a/", "http://b/", "http://c/"]);
            assert!(matches!(other.claim(10).await.unwrap(), Claim::Wait(_)));
            let token = |u: &str| roots.iter().find(|l| l.url == u).unwrap().token;
            // a/ links to b and c, whose lines live on other shards: they
            // are offered there first. A completion whose lease is not
            // ours (a process that died after offering them) changes
            // nothing when it is offered again by whoever fetches the page.
            let links = [
                link("http://a/1"),
                link("http://b/1"),
                link("http://c/1"),
                link("http://b/"),
            ];
            let stale = f
                .complete(completion(
                    "http://a/",
                    token("http://a/") + 1000,
                    None,
                    &links,
                ))
                .await
                .unwrap();
            assert_eq!(stale, Completed::Lost);
            // A page whose lease is not ours offers nothing elsewhere.
            assert!(matches!(other.claim(10).await.unwrap(), Claim::Wait(_)));
            let done = f
                .complete(completion("http://a/", token("http://a/"), None, &links))
                .await
                .unwrap();
            assert_eq!(
                done,
                Completed::Done {
                    urls: 4,
                    new: 3,
                    seen: vec![Seen::Queued, Seen::Queued, Seen::Queued, Seen::Before]
                }
            );
            // Each link once, from whichever shard holds its host.
            let next = work(other.claim(10).await.unwrap());
            assert_eq!(
                leased_urls(&next),
                ["http://a/1", "http://b/1", "http://c/1"]
            );
            for page in ["http://b/", "http://c/"] {
                f.complete(completion(page, token(page), None, &[]))
                    .await
                    .unwrap();
            }
            // Not over while leases are out on any shard.
            assert!(matches!(f.claim(10).await.unwrap(), Claim::Wait(_)));
            let (done, _) = other
                .complete_many(
                    &next
                        .iter()
                        .map(|l| completion(&l.url, l.token, None, &[]))
                        .collect::<Vec<_>>(),
                    0,
                )
                .await
                .unwrap();
            assert!(done.iter().all(|d| matches!(d, Completed::Done { .. })));
            assert_eq!(f.claim(10).await.unwrap(), Claim::Finished);
            assert_eq!(other.claim(10).await.unwrap(), Claim::Finished);

            // The report, from every shard: each URL once.
            let mut records: Vec<String> = f
                .records()
                .await
                .unwrap()
                .iter()
                .map(|r| {
                    let v: serde_json::Value = serde_json::from_str(r).unwrap();
                    v["url"].as_str().unwrap().to_string()
                })
                .collect();
            records.sort();
            assert_eq!(
                records,
                [
                    "http://a/",
                    "http://a/1",
                    "http://b/",
                    "http://b/1",
                    "http://c/",
                    "http://c/1"
                ]
            );
            let status = f.status().await.unwrap();
            assert_eq!((status.pending, status.expired), (0, 0));
            assert!(status.finished_ms >= status.created_ms && status.created_ms > 0);

            // Cleared from every master.
            assert!(f.clear().await.unwrap() > 10);
            assert_eq!(f.identity().await.unwrap(), None);
            for pool in nodes.masters().await.unwrap() {
                let mut conn = pool.get().await.unwrap();
                let keys = conn.command(&["KEYS", "stage3:*"]).await.unwrap();
                assert_eq!(keys, redis_client::Frame::Array(Vec::new()));
                conn.release();
            }
        })
        .unwrap();
}

#[test]
fn on_a_cluster_a_page_fetched_again_after_a_crash_changes_nothing_of_what_it_offered() {
    let cluster = RedisCluster::start(3);
    let url = cluster.url("k2");
    Runtime::new()
        .unwrap()
        .block_on(async {
            let a = frontier_at(&url);
            let b = frontier_at(&url);
            let short = Settings {
                robots: false,
                lease: Duration::from_millis(200),
                max_query_variants: 1,
                ..settings()
            };
            let roots = [link("http://a/"), link("http://b/"), link("http://c/")];
            a.create("id", &short, &roots, 10).await.unwrap();
            let leased = work(a.claim(10).await.unwrap());
            let page = leased.iter().find(|l| l.url == "http://a/").unwrap();
            // Two queries of one path on another shard: the first fills the
            // path's one place, and both count in the page's num_urls, as
            // one process counts them.
            let query = |n: u32| {
                let mut l = link(&format!("http://b/q?n={n}"));
                l.variant = Some("http://b/q".into());
                l
            };
            let links = [query(1), query(2), link("http://c/1")];
            // The process offers the links, then dies: the page stays
            // leased until its lease runs out.
            a.offer(&[completion("http://a/", page.token, None, &links)])
                .await
                .unwrap();
            // The time a lease lasts is what is tested here.
            runtime::sleep(Duration::from_millis(300)).await;
            let again = work(b.claim(10).await.unwrap());
            let page = again.iter().find(|l| l.url == "http://a/").unwrap();
            let done = b
                .complete(completion("http://a/", page.token, None, &links))
                .await
                .unwrap();
            assert_eq!(
                done,
                Completed::Done {
                    urls: 3,
                    new: 3,
                    seen: vec![Seen::Queued, Seen::QueryVariants, Seen::Queued]
                }
            );
            // Each link queued once: what the first offer queued was
            // claimable already, with the roots whose leases ran out.
            let mut urls: Vec<String> = again.iter().map(|l| l.url.clone()).collect();
            while let Claim::Work(leased) = b.claim(10).await.unwrap() {
                urls.extend(leased.into_iter().map(|l| l.url));
            }
            urls.sort();
            assert_eq!(
                urls,
                [
                    "http://a/",
                    "http://b/",
                    "http://b/q?n=1",
                    "http://c/",
                    "http://c/1"
                ]
            );
            let records = b.records().await.unwrap();
            let queued: Vec<_> = records
                .iter()
                .filter(|r| r.contains("q?n=1") || r.contains("c/1"))
                .collect();
            assert!(
                queued.is_empty(),
                "not fetched yet, so not in the report: {queued:?}"
            );
        })
        .unwrap();
}

fn sitemap(url: &str) -> Link {
    Link {
        sitemap: true,
        counts: false,
        ..link(url)
    }
}

#[test]
fn a_sitemap_is_queued_once_under_its_own_key_beside_a_page_of_the_same_url() {
    let server = RedisServer::start();
    Runtime::new()
        .unwrap()
        .block_on(async {
            let f = frontier(&server, "sitemaps");
            let settings = Settings {
                robots: false,
                max_pages: Some(3),
                ..settings()
            };
            f.create("id", &settings, &[link("http://h/")], 10)
                .await
                .unwrap();
            let root = work(f.claim(1).await.unwrap());
            // The root links /sitemap.xml as a page, and the process offers
            // the root's sitemap, the same URL, with the same completion,
            // twice (as two processes would).
            let links = [
                link("http://h/sitemap.xml"),
                sitemap("http://h/sitemap.xml"),
                sitemap("http://h/sitemap.xml"),
            ];
            let done = f
                .complete(completion("http://h/", root[0].token, None, &links))
                .await
                .unwrap();
            // The page link counts in num_urls; the sitemap does not.
            assert!(
                matches!(&done, Completed::Done { urls: 1, new: 1, seen }
                    if seen == &[Seen::Queued, Seen::Queued, Seen::Before]),
                "{done:?}"
            );
            let both = work(f.claim(2).await.unwrap());
            let keys: BTreeSet<&str> = both.iter().map(|l| l.url.as_str()).collect();
            assert_eq!(
                keys,
                BTreeSet::from(["http://h/sitemap.xml", "~http://h/sitemap.xml"])
            );
            // Completing the sitemap offers what it lists, and keeps what
            // reading it came to; its pages count in --max-pages, it does
            // not: of the two pages listed, one is over the limit of 3.
            let read = both.iter().find(|l| l.url.starts_with('~')).unwrap();
            let page = both.iter().find(|l| !l.url.starts_with('~')).unwrap();
            let listed = Completion {
                record: "2 URLs".into(),
                ..completion(
                    &read.url,
                    read.token,
                    None,
                    &[link("http://h/a"), link("http://h/b")],
                )
            };
            let done = f.complete(listed).await.unwrap();
            assert!(
                matches!(&done, Completed::Done { seen, .. }
                    if seen == &[Seen::Queued, Seen::OverMaxPages]),
                "{done:?}"
            );
            f.complete(completion(&page.url, page.token, None, &[]))
                .await
                .unwrap();
            let a = work(f.claim(1).await.unwrap());
            f.complete(completion(&a[0].url, a[0].token, None, &[]))
                .await
                .unwrap();
            assert_eq!(f.claim(1).await.unwrap(), Claim::Finished);
            assert_eq!(
                f.sitemap_outcomes().await.unwrap(),
                [("http://h/sitemap.xml".to_string(), "2 URLs".to_string())]
            );
            // The report: the pages, and /b over --max-pages; no sitemap.
            let records = f.records().await.unwrap();
            assert_eq!(records.len(), 4, "{records:?}");
            assert!(!records.iter().any(|r| r.contains('~')), "{records:?}");
        })
        .unwrap();
}

#[test]
fn a_link_is_seen_already_only_if_another_page_offered_it_first() {
    let server = RedisServer::start();
    Runtime::new()
        .unwrap()
        .block_on(async {
            let f = frontier(&server, "seen-already");
            let settings = Settings {
                robots: false,
                ..settings()
            };
            f.create("id", &settings, &[link("http://h/")], 10)
                .await
                .unwrap();
            let root = work(f.claim(1).await.unwrap());
            f.complete(completion(
                "http://h/",
                root[0].token,
                None,
                &[link("http://h/a")],
            ))
            .await
            .unwrap();
            let (a, b) = (link("http://h/a"), link("http://h/b"));
            // /a was offered by the root: seen, for any other page; for the
            // root itself (fetched again after a crash), `see` must answer
            // as the first time. /b nobody offered.
            let asked = [(&a, "http://h/x"), (&a, "http://h/"), (&b, "http://h/x")];
            assert_eq!(f.seen_already(&asked).await.unwrap(), [true, false, false]);
        })
        .unwrap();
}
