//! The shared frontier (`--frontier`) on workload (b): one process on a
//! frontier in a real redis-server against two and four, with the same
//! workers in all (`max_tasks` split between them), and one process
//! without a frontier; and what Redis costs per URL: its commands, and its
//! own CPU time. Then (d), where links dominate, on one Redis, and (e),
//! thirty sites on a Redis Cluster of three masters: how evenly the shards
//! share the work.

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use bench::child::{self, Measured};
use bench::crawl::{self, Visit, Workload};
use bench::stats::median;
use bench::table::{Row, Target, Unit};
use demo_site::DemoSite;
use redis_client::{RedisCluster, RedisServer};

use super::{CRAWL_LIMIT, Options, check, loops, measure, on_path, stage3_crawl};

/// Processes on one frontier; 0 is a crawl without one.
const LAYOUTS: [usize; 4] = [0, 1, 2, 4];

/// One crawl of a layout: wall time, CPU summed over its processes, and
/// Redis's commands and CPU seconds during it, summed over the masters
/// (one, but for a cluster), and each master's CPU seconds.
struct Run {
    wall: f64,
    cpu: f64,
    round_trips: f64,
    commands: f64,
    redis_cpu: f64,
    masters_cpu: Vec<f64>,
}

/// Where a layout crawls: the frontier's URL, the Redis masters that
/// serve it (whose `INFO` measures it), and the roots.
struct Frontier<'a> {
    url: String,
    masters: &'a [SocketAddr],
    roots: &'a [String],
}

/// The rows, or none (and a note) without `redis-server`.
pub(super) fn frontier_rows(
    workload: &Workload,
    site: &DemoSite,
    opts: &Options,
    me: &Path,
    bin: &Path,
    expected: &BTreeSet<Visit>,
    notes: &mut Vec<String>,
) -> Result<Vec<Row>, String> {
    if on_path("redis-server").is_none() {
        notes.push("the shared frontier was not measured: redis-server is not installed".into());
        return Ok(Vec::new());
    }
    let redis = RedisServer::start();
    let mut runs: Vec<Vec<Run>> = LAYOUTS.iter().map(|_| Vec::new()).collect();
    let mut crawl = 0;
    for round in 0..opts.rounds {
        // A different layout goes first each round.
        for i in (0..LAYOUTS.len()).map(|i| (i + round) % LAYOUTS.len()) {
            crawl += 1;
            let name = format!("bench-{crawl}");
            let at = Frontier {
                url: redis.url(&name).to_string(),
                masters: &[redis.addr()],
                roots: &[site.url("/")],
            };
            let run = run_layout(LAYOUTS[i], &at, workload.max_tasks, me, bin, expected)?;
            println!(
                "  round {}: {:<24} {:.3} s wall {:.3} s CPU, redis: {:.2} round trips \
                 and {:.1} commands per URL",
                round + 1,
                layout_name(LAYOUTS[i], workload.max_tasks),
                run.wall,
                run.cpu,
                run.round_trips / expected.len() as f64,
                run.commands / expected.len() as f64
            );
            runs[i].push(run);
        }
    }
    let med = |i: usize, f: fn(&Run) -> f64| median(&runs[i].iter().map(f).collect::<Vec<_>>());
    let (k, title) = (workload.key, workload.title);
    let urls = expected.len() as f64;
    let mut rows = vec![Row {
        what: format!("({k}) {title}, one process on a shared frontier: wall time (against none)"),
        unit: Unit::Secs,
        ours: med(1, |r| r.wall),
        theirs: med(0, |r| r.wall),
        target: None,
    }];
    for (i, &processes) in LAYOUTS.iter().enumerate().skip(2) {
        rows.push(Row {
            what: format!(
                "({k}) {title}, {}: wall time (against one process of {})",
                layout_name(processes, workload.max_tasks),
                workload.max_tasks
            ),
            unit: Unit::Secs,
            ours: med(i, |r| r.wall),
            theirs: med(1, |r| r.wall),
            target: None,
        });
    }
    rows.push(Row {
        what: format!("({k}) {title}, one process on a shared frontier: CPU time (against none)"),
        unit: Unit::Secs,
        ours: med(1, |r| r.cpu),
        theirs: med(0, |r| r.cpu),
        target: None,
    });
    rows.push(Row {
        what: format!("({k}) shared frontier, one process: Redis round trips (scripts) per URL"),
        unit: Unit::Count,
        ours: med(1, |r| r.round_trips).map(|c| c / urls),
        theirs: None,
        target: None,
    });
    rows.push(Row {
        what: format!(
            "({k}) shared frontier, one process: Redis commands per URL, scripts' included"
        ),
        unit: Unit::Count,
        ours: med(1, |r| r.commands).map(|c| c / urls),
        theirs: None,
        target: None,
    });
    rows.push(Row {
        what: format!("({k}) shared frontier, one process: Redis's CPU per URL"),
        unit: Unit::Nanos,
        ours: med(1, |r| r.redis_cpu).map(|c| c * 1e9 / urls),
        theirs: None,
        target: None,
    });
    rows.extend(link_heavy_rows(&redis, opts, me, bin)?);
    rows.extend(many_hosts_rows(opts, me, bin)?);
    Ok(rows)
}

/// Redis's target on a link-heavy crawl: CPU per URL, in nanoseconds.
const LINK_HEAVY_TARGET_NS: f64 = 20_000.0;

/// What one process on a shared frontier may cost against none.
const SHARED_COST: f64 = 1.3;

/// The most of a three-master cluster's Redis CPU that its busiest master
/// may do on a crawl of many hosts.
const BUSIEST_SHARE: f64 = 0.45;

/// Sites in (e).
pub(super) const MANY_HOSTS: usize = 30;

/// [`MANY_HOSTS`] demo sites sharing link-heavy pages (20 KB, 20 links
/// each), the visits a crawl of them all must make, and their roots.
pub(super) struct ManySites {
    pub(super) sites: Vec<DemoSite>,
    pub(super) expected: BTreeSet<Visit>,
    pub(super) roots: Vec<String>,
}

impl ManySites {
    /// `pages` pages in all.
    pub(super) fn start(pages: usize) -> Result<ManySites, String> {
        let config = demo_site::SiteConfig {
            pages: pages / MANY_HOSTS,
            fan_out: 20,
            page_size: 20_000,
            ..demo_site::SiteConfig::default()
        };
        let sites = (0..MANY_HOSTS)
            .map(|_| DemoSite::start(config.clone()).map_err(|e| format!("demo site: {e}")))
            .collect::<Result<Vec<_>, _>>()?;
        let expected = sites.iter().flat_map(crawl::expected_visits).collect();
        let roots = sites.iter().map(|s| s.url("/")).collect();
        Ok(ManySites {
            sites,
            expected,
            roots,
        })
    }
}

// ANCHOR: many_hosts_rows
/// (e) The link-heavy pages spread over thirty demo sites (thirty hosts),
/// crawled by one process of 100 workers on a Redis Cluster of three
/// masters: Redis's CPU per URL summed over the masters, and the busiest
/// master's share of it. Each host's keys live on one shard, so the
/// shards share the work as evenly as the hosts are spread.
fn many_hosts_rows(opts: &Options, me: &Path, bin: &Path) -> Result<Vec<Row>, String> {
    if on_path("redis-cli").is_none() {
        return Ok(Vec::new());
    }
    let ManySites {
        sites,
        expected,
        roots,
    } = ManySites::start(5_000)?;
    let mut cluster = RedisCluster::start(3);
    let addrs: Vec<SocketAddr> = cluster.nodes().iter().map(|n| n.addr()).collect();
    let (mut per_url, mut busiest) = (Vec::new(), Vec::new());
    for round in 0..opts.rounds {
        let at = Frontier {
            url: cluster.url(&format!("bench-hosts-{round}")).to_string(),
            masters: &addrs,
            roots: &roots,
        };
        let run = run_layout(1, &at, 100, me, bin, &expected)?;
        let (cpu, total) = (&run.masters_cpu, run.redis_cpu);
        let most = cpu.iter().cloned().fold(0.0, f64::max);
        let ns = total * 1e9 / expected.len() as f64;
        println!(
            "  round {}: (e) {} URLs of {MANY_HOSTS} hosts on a three-master cluster: {:.3} s \
             wall, redis: {ns:.0} ns CPU per URL, shards {:?} ms",
            round + 1,
            expected.len(),
            run.wall,
            cpu.iter().map(|c| (c * 1000.0).round()).collect::<Vec<_>>()
        );
        per_url.push(ns);
        busiest.push(if total > 0.0 { most / total } else { 1.0 });
    }
    for site in sites {
        site.shutdown();
    }
    Ok(vec![
        Row {
            what: format!(
                "(e) the same pages on {MANY_HOSTS} hosts ({} URLs), one process on a shared \
                 frontier in a Redis Cluster of three masters: Redis's CPU per URL, summed over \
                 the masters",
                expected.len()
            ),
            unit: Unit::Nanos,
            ours: median(&per_url),
            theirs: None,
            target: Some(Target::Below(LINK_HEAVY_TARGET_NS)),
        },
        Row {
            what: "(e) shared frontier in a Redis Cluster: the busiest master's share of the \
                   cluster's Redis CPU"
                .into(),
            unit: Unit::Count,
            ours: median(&busiest),
            theirs: None,
            target: Some(Target::Below(BUSIEST_SHARE)),
        },
    ])
}
// ANCHOR_END: many_hosts_rows

// ANCHOR: link_heavy_rows
/// The frontier's cost where links dominate: 5,000 pages of 20 KB with 20
/// links each (most of them to URLs already seen), crawled by one process
/// of 100 workers on the frontier. Redis's CPU per URL, and the URLs a
/// second of Redis's CPU can settle: how far one Redis core carries a
/// shared crawl, however many processes share it.
fn link_heavy_rows(
    redis: &RedisServer,
    opts: &Options,
    me: &Path,
    bin: &Path,
) -> Result<Vec<Row>, String> {
    let workload = Workload {
        key: "d",
        title: "link-heavy crawl",
        site: demo_site::SiteConfig {
            pages: 5_000,
            fan_out: 20,
            page_size: 20_000,
            ..demo_site::SiteConfig::default()
        },
        max_tasks: 100,
    };
    let site = DemoSite::start(workload.site.clone()).map_err(|e| format!("demo site: {e}"))?;
    let expected = crawl::expected_visits(&site);
    let (mut per_url, mut shared, mut alone) = (Vec::new(), Vec::new(), Vec::new());
    let (masters, roots) = ([redis.addr()], [site.url("/")]);
    for round in 0..opts.rounds {
        let at = Frontier {
            url: redis.url(&format!("bench-links-{round}")).to_string(),
            masters: &masters,
            roots: &roots,
        };
        let tasks = workload.max_tasks;
        // Without a frontier first on odd rounds, second on even ones.
        let alone_first = round % 2 == 1;
        if alone_first {
            alone.push(run_layout(0, &at, tasks, me, bin, &expected)?);
        }
        let run = run_layout(1, &at, tasks, me, bin, &expected)?;
        if !alone_first {
            alone.push(run_layout(0, &at, tasks, me, bin, &expected)?);
        }
        let ns = run.redis_cpu * 1e9 / expected.len() as f64;
        let none = alone.last().map_or(0.0, |r| r.wall);
        println!(
            "  round {}: (d) {} URLs on a shared frontier, one process: {:.3} s wall \
             ({none:.3} s without), redis: {:.0} ns CPU and {:.1} commands per URL",
            round + 1,
            expected.len(),
            run.wall,
            ns,
            run.commands / expected.len() as f64
        );
        per_url.push(ns);
        shared.push(run);
    }
    site.shutdown();
    let ns = median(&per_url);
    let med = |runs: &[Run], f: fn(&Run) -> f64| median(&runs.iter().map(f).collect::<Vec<_>>());
    Ok(vec![
        Row {
            what:
                "(d) link-heavy crawl, one process on a shared frontier: wall time (against none)"
                    .into(),
            unit: Unit::Secs,
            ours: med(&shared, |r| r.wall),
            theirs: med(&alone, |r| r.wall),
            target: Some(Target::RatioAtMost(SHARED_COST)),
        },
        Row {
            what: "(d) link-heavy crawl, one process on a shared frontier: CPU time (against none)"
                .into(),
            unit: Unit::Secs,
            ours: med(&shared, |r| r.cpu),
            theirs: med(&alone, |r| r.cpu),
            target: None,
        },
        Row {
            what: format!(
                "(d) link-heavy crawl (5,000 pages of 20 KB, 20 links each: {} URLs), one \
                 process on a shared frontier: Redis's CPU per URL",
                expected.len()
            ),
            unit: Unit::Nanos,
            ours: ns,
            theirs: None,
            target: Some(Target::Below(LINK_HEAVY_TARGET_NS)),
        },
        Row {
            what:
                "(d) link-heavy crawl on a shared frontier: URLs settled per second of one Redis \
                   core"
                    .into(),
            unit: Unit::Count,
            ours: ns.map(|ns| 1e9 / ns),
            theirs: None,
            target: None,
        },
    ])
}
// ANCHOR_END: link_heavy_rows

fn layout_name(processes: usize, max_tasks: usize) -> String {
    match processes {
        0 => "no frontier".into(),
        1 => "1 process".into(),
        n => format!("{n} processes of {}", max_tasks / n),
    }
}

/// Crawls `at`'s roots with `processes` processes on its frontier (none
/// at all for 0), all started at once, with `max_tasks` workers in all, and
/// checks the whole crawl's report against the sites' answer key.
fn run_layout(
    processes: usize,
    at: &Frontier<'_>,
    max_tasks: usize,
    me: &Path,
    bin: &Path,
    expected: &BTreeSet<Visit>,
) -> Result<Run, String> {
    let total = max_tasks.to_string();
    let each = (max_tasks / processes.max(1)).to_string();
    let before = infos(at.masters)?;
    let started = Instant::now();
    let children: Vec<_> = (0..processes.max(1))
        .map(|_| {
            let mut command = measure(me, bin);
            // Every process names the roots: the first creates the crawl,
            // the others join it at once (a joiner without roots polls).
            stage3_crawl(&mut command, &at.roots[0], &each)
                .args(&at.roots[1..])
                .args(["--per-host", &total, "--ignore-robots"]);
            if processes > 0 {
                command.args(["--frontier", &at.url]);
            }
            std::thread::spawn(move || child::run(&mut command, CRAWL_LIMIT))
        })
        .collect();
    let mut measured: Vec<Measured> = Vec::new();
    for child in children {
        let run = child
            .join()
            .map_err(|_| "a crawl's thread panicked".to_string())?
            .map_err(|e| format!("stage 3 on a shared frontier failed: {e}"))?;
        measured.push(run);
    }
    let wall = started.elapsed().as_secs_f64();
    let after = infos(at.masters)?;
    let report = if processes == 0 {
        measured
            .first()
            .map(|m| m.stdout.clone())
            .unwrap_or_default()
    } else {
        merged_report(bin, &at.url)?
    };
    let crawled = crawl::parse_stage3_json(&report)?;
    check("stage 3 on a shared frontier", &crawled.visits, expected)?;
    let change = |f: fn(&Info) -> f64| -> Vec<f64> {
        before
            .iter()
            .zip(&after)
            .map(|(b, a)| f(a) - f(b))
            .collect()
    };
    let masters_cpu = change(|i| i.cpu);
    Ok(Run {
        wall,
        cpu: measured.iter().map(|m| m.usage.cpu.as_secs_f64()).sum(),
        round_trips: change(|i| i.round_trips).iter().sum(),
        commands: change(|i| i.commands).iter().sum(),
        redis_cpu: masters_cpu.iter().sum(),
        masters_cpu,
    })
}

fn merged_report(bin: &Path, frontier: &str) -> Result<String, String> {
    let mut command = Command::new(bin);
    command.args(["--frontier", frontier, "--report-only", "--report", "json"]);
    for name in child::PROXY_VARIABLES {
        command.env_remove(name);
    }
    let out = command
        .output()
        .map_err(|e| format!("stage 3 --report-only: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "stage 3 --report-only failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    String::from_utf8(out.stdout).map_err(|e| format!("stage 3 --report-only: {e}"))
}

/// What Redis's `INFO` says of the work done so far.
struct Info {
    /// Scripts run, each one round trip.
    round_trips: f64,
    /// Every command, the ones scripts ran included.
    commands: f64,
    /// User plus system CPU seconds.
    cpu: f64,
}

/// Redis's counters, from `INFO all`.
/// `redis_info` of each of a cluster's masters.
fn infos(addrs: &[SocketAddr]) -> Result<Vec<Info>, String> {
    addrs.iter().map(|a| redis_info(*a)).collect()
}

fn redis_info(addr: SocketAddr) -> Result<Info, String> {
    let fail = |e: std::io::Error| format!("redis INFO: {e}");
    let mut stream = TcpStream::connect(addr).map_err(fail)?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .map_err(fail)?;
    stream.write_all(b"INFO all\r\n").map_err(fail)?;
    let mut reply = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    // `$LEN\r\n` then LEN bytes and `\r\n`.
    loop {
        let n = stream.read(&mut chunk).map_err(fail)?;
        if n == 0 {
            return Err("redis INFO: the connection closed".into());
        }
        reply.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&reply);
        if let Some((head, body)) = text.split_once("\r\n")
            && let Ok(len) = head.trim_start_matches('$').parse::<usize>()
            && body.len() >= len
        {
            let field = |name: &str| {
                body.lines()
                    .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
                    .and_then(|v| v.trim().parse::<f64>().ok())
                    .unwrap_or(0.0)
            };
            // `cmdstat_evalsha:calls=12,usec=...`: how often each command ran.
            let calls = |name: &str| {
                body.lines()
                    .find_map(|line| line.strip_prefix(&format!("cmdstat_{name}:calls=")))
                    .and_then(|rest| rest.split(',').next())
                    .and_then(|n| n.parse::<f64>().ok())
                    .unwrap_or(0.0)
            };
            let commands = field("total_commands_processed");
            // A script's own commands count in their names' totals (hget,
            // zadd, ...), so the round trips are the scripts' calls: all
            // but a few one-off commands per process.
            let round_trips = calls("evalsha") + calls("eval");
            return Ok(Info {
                round_trips,
                commands,
                cpu: field("used_cpu_sys") + field("used_cpu_user"),
            });
        }
    }
}

/// Processes on one frontier in (f); 0 is a crawl without one.
const SCALING_LAYOUTS: [usize; 5] = [0, 1, 2, 4, 8];

/// (f) `--only scaling`: the many-core workload (20,000 pages of
/// 20 KB, 20 links each, 200 workers in all), crawled without a frontier
/// and by 1, 2, 4 and 8 processes sharing one Redis. On two cores the
/// processes only take turns; this is the measurement for a machine with
/// cores to spare, where N processes should come close to N times one until
/// the site (on the same machine) or Redis is the limit.
pub(super) fn scaling_rows(opts: &Options, me: &Path, bin: &Path) -> Result<Vec<Row>, String> {
    if on_path("redis-server").is_none() {
        return Err("--only scaling needs redis-server".into());
    }
    let workload = Workload {
        key: "f",
        title: "many processes",
        site: demo_site::SiteConfig {
            pages: if opts.quick { 2_000 } else { 20_000 },
            fan_out: 20,
            page_size: 20_000,
            ..demo_site::SiteConfig::default()
        },
        max_tasks: 200,
    };
    let redis = RedisServer::start();
    let site = DemoSite::start(workload.site.clone()).map_err(|e| format!("demo site: {e}"))?;
    let expected = crawl::expected_visits(&site);
    let urls = expected.len() as f64;
    let mut runs: Vec<Vec<Run>> = SCALING_LAYOUTS.iter().map(|_| Vec::new()).collect();
    let list = loops::url_list(&expected)?;
    let mut floor = Vec::new();
    for round in 0..opts.rounds {
        // The floor: the site's URLs fetched by a plain client over the
        // crawl's 200 connections, all to its one host.
        let run = loops::run_floor(me, &list, workload.max_tasks, expected.len())?;
        println!(
            "  round {}: (f) floor: {:.3} s wall; the site {:.3} s CPU",
            round + 1,
            run.wall,
            run.site_cpu
        );
        floor.push(run.wall);
        for i in (0..SCALING_LAYOUTS.len()).map(|i| (i + round) % SCALING_LAYOUTS.len()) {
            let processes = SCALING_LAYOUTS[i];
            let at = Frontier {
                url: redis
                    .url(&format!("bench-scaling-{round}-{processes}"))
                    .to_string(),
                masters: &[redis.addr()],
                roots: &[site.url("/")],
            };
            let run = run_layout(processes, &at, workload.max_tasks, me, bin, &expected)?;
            println!(
                "  round {}: (f) {} URLs, {:<24} {:.3} s wall {:.3} s CPU, redis: {:.0} ns CPU \
                 and {:.2} round trips per URL",
                round + 1,
                expected.len(),
                layout_name(processes, workload.max_tasks),
                run.wall,
                run.cpu,
                run.redis_cpu * 1e9 / urls,
                run.round_trips / urls
            );
            runs[i].push(run);
        }
    }
    site.shutdown();
    let _ = std::fs::remove_file(&list);
    let med = |i: usize, f: fn(&Run) -> f64| median(&runs[i].iter().map(f).collect::<Vec<_>>());
    let mut rows = Vec::new();
    for (i, &processes) in SCALING_LAYOUTS.iter().enumerate().skip(1) {
        rows.push(Row {
            what: format!(
                "(f) {} on a shared frontier: wall time (against the floor)",
                layout_name(processes, workload.max_tasks)
            ),
            unit: Unit::Secs,
            ours: med(i, |r| r.wall),
            theirs: median(&floor),
            target: None,
        });
    }
    rows.push(Row {
        what: format!(
            "(f) {} URLs, one process of 200 on a shared frontier: wall time (against none)",
            expected.len()
        ),
        unit: Unit::Secs,
        ours: med(1, |r| r.wall),
        theirs: med(0, |r| r.wall),
        target: Some(Target::RatioAtMost(SHARED_COST)),
    });
    for (i, &processes) in SCALING_LAYOUTS.iter().enumerate().skip(2) {
        rows.push(Row {
            what: format!(
                "(f) {} on a shared frontier: wall time (against one process of 200)",
                layout_name(processes, workload.max_tasks)
            ),
            unit: Unit::Secs,
            ours: med(i, |r| r.wall),
            theirs: med(1, |r| r.wall),
            target: None,
        });
    }
    for (i, &processes) in SCALING_LAYOUTS.iter().enumerate().skip(1) {
        rows.push(Row {
            what: format!(
                "(f) {} on a shared frontier: Redis's CPU per URL",
                layout_name(processes, workload.max_tasks)
            ),
            unit: Unit::Nanos,
            ours: med(i, |r| r.redis_cpu).map(|c| c * 1e9 / urls),
            theirs: None,
            target: Some(Target::Below(LINK_HEAVY_TARGET_NS)),
        });
    }
    rows.extend(cluster_scaling_rows(opts, me, bin)?);
    Ok(rows)
}

/// (g) The same pages on thirty hosts, on a Redis Cluster of three
/// masters, crawled by 1, 2, 4 and 8 processes: one Redis core is the
/// limit of (f) once a few processes share it, and here the hosts' keys
/// spread over three.
fn cluster_scaling_rows(opts: &Options, me: &Path, bin: &Path) -> Result<Vec<Row>, String> {
    if on_path("redis-cli").is_none() {
        return Ok(Vec::new());
    }
    let ManySites {
        sites,
        expected,
        roots,
    } = ManySites::start(if opts.quick { 2_000 } else { 20_000 })?;
    let mut cluster = RedisCluster::start(3);
    let addrs: Vec<SocketAddr> = cluster.nodes().iter().map(|n| n.addr()).collect();
    let layouts = &SCALING_LAYOUTS[1..];
    let mut walls: Vec<Vec<f64>> = layouts.iter().map(|_| Vec::new()).collect();
    let mut per_url: Vec<Vec<f64>> = layouts.iter().map(|_| Vec::new()).collect();
    let list = loops::url_list(&expected)?;
    let mut floor = Vec::new();
    for round in 0..opts.rounds {
        // The floor: 200 connections, as the crawl's workers, spread over
        // the hosts.
        let per_host = (200 / MANY_HOSTS).max(1);
        let run = loops::run_floor(me, &list, per_host, expected.len())?;
        println!(
            "  round {}: (g) floor: {:.3} s wall; the sites {:.3} s CPU",
            round + 1,
            run.wall,
            run.site_cpu
        );
        floor.push(run.wall);
        for i in (0..layouts.len()).map(|i| (i + round) % layouts.len()) {
            let processes = layouts[i];
            let at = Frontier {
                url: cluster
                    .url(&format!("bench-cluster-{round}-{processes}"))
                    .to_string(),
                masters: &addrs,
                roots: &roots,
            };
            let run = run_layout(processes, &at, 200, me, bin, &expected)?;
            let (wall, cpu) = (run.wall, run.redis_cpu);
            let ns = cpu * 1e9 / expected.len() as f64;
            println!(
                "  round {}: (g) {} URLs of {MANY_HOSTS} hosts on three masters, {:<24} \
                 {wall:.3} s wall, redis: {ns:.0} ns CPU per URL",
                round + 1,
                expected.len(),
                layout_name(processes, 200),
            );
            walls[i].push(wall);
            per_url[i].push(ns);
        }
    }
    for site in sites {
        site.shutdown();
    }
    let _ = std::fs::remove_file(&list);
    let mut rows = Vec::new();
    for (i, &processes) in layouts.iter().enumerate() {
        rows.push(Row {
            what: format!(
                "(g) {} on a three-master cluster: wall time (against the floor)",
                layout_name(processes, 200)
            ),
            unit: Unit::Secs,
            ours: median(&walls[i]),
            theirs: median(&floor),
            // 8 processes: at least 4 times one, or near the floor.
            target: (processes == 8).then_some(Target::RatioAtMost(1.3)),
        });
    }
    for (i, &processes) in layouts.iter().enumerate().skip(1) {
        rows.push(Row {
            what: format!(
                "(g) {} URLs of {MANY_HOSTS} hosts on a three-master cluster, {}: wall time \
                 (against one process of 200)",
                expected.len(),
                layout_name(processes, 200)
            ),
            unit: Unit::Secs,
            ours: median(&walls[i]),
            theirs: median(&walls[0]),
            // 8 processes: at least 4 times one, or near the floor.
            target: (processes == 8).then_some(Target::RatioAtMost(0.25)),
        });
    }
    for (i, &processes) in layouts.iter().enumerate() {
        rows.push(Row {
            what: format!(
                "(g) {} on a three-master cluster: Redis's CPU per URL, summed over the masters",
                layout_name(processes, 200)
            ),
            unit: Unit::Nanos,
            ours: median(&per_url[i]),
            theirs: None,
            target: Some(Target::Below(LINK_HEAVY_TARGET_NS)),
        });
    }
    Ok(rows)
}
