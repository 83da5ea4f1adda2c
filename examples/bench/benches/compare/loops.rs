//! (h) One crawl on 1, 2, 4 and 8 event loops (`--loops`), on the thirty
//! hosts of (e), each against its floor: the same URLs fetched by a plain
//! client that knows them in advance, over the same connections (eight a
//! host, the crawler's `--per-host`), measured in the same round. The
//! thirty sites run in this process: its CPU during a crawl is the site's.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use bench::child;
use bench::crawl::{self, Visit};
use bench::stats::median;
use bench::table::{Row, Target, Unit};

use super::frontier::{MANY_HOSTS, ManySites};
use super::{CRAWL_LIMIT, Options, check, measure, stage3_crawl};

/// Loops in each layout.
const LOOPS: [usize; 4] = [1, 2, 4, 8];

/// Connections to each host: the crawler's default `--per-host`.
const PER_HOST: usize = 8;

/// Workers in all, shared out among the loops: enough for every host's
/// connections at once.
const WORKERS: usize = MANY_HOSTS * PER_HOST;

/// What 8 loops must do against one (its wall time at most this share),
/// unless it is within [`NEAR_FLOOR`] of the floor.
const EIGHT_LOOPS: f64 = 1.0 / 5.0;
const NEAR_FLOOR: f64 = 1.3;

/// One measured run: wall time, and the CPU of the crawler and the site.
#[derive(Clone, Copy)]
pub(super) struct Run {
    pub(super) wall: f64,
    pub(super) cpu: f64,
    pub(super) site_cpu: f64,
}

pub(super) fn loops_rows(opts: &Options, me: &Path, bin: &Path) -> Result<Vec<Row>, String> {
    let ManySites {
        sites,
        expected,
        roots,
    } = ManySites::start(if opts.quick { 2_000 } else { 20_000 })?;
    let list = url_list(&expected)?;
    let mut floor = Vec::new();
    let mut runs: Vec<Vec<Run>> = LOOPS.iter().map(|_| Vec::new()).collect();
    println!(
        "\n(h) {} URLs of {MANY_HOSTS} hosts on 1, 2, 4 and 8 loops, {WORKERS} workers, \
         {PER_HOST} connections a host",
        expected.len()
    );
    for round in 0..opts.rounds {
        let run = run_floor(me, &list, PER_HOST, expected.len())?;
        println!(
            "  round {}: (h) floor: {:.3} s wall, {:.3} s CPU; the site {:.3} s CPU",
            round + 1,
            run.wall,
            run.cpu,
            run.site_cpu
        );
        floor.push(run);
        // A different layout goes first each round.
        for i in (0..LOOPS.len()).map(|i| (i + round) % LOOPS.len()) {
            let run = run_loops(LOOPS[i], &roots, me, bin, &expected)?;
            println!(
                "  round {}: (h) --loops {}: {:.3} s wall, {:.3} s CPU; the site {:.3} s CPU",
                round + 1,
                LOOPS[i],
                run.wall,
                run.cpu,
                run.site_cpu
            );
            runs[i].push(run);
        }
    }
    let _ = std::fs::remove_file(&list);
    for site in sites {
        site.shutdown();
    }
    let med = |runs: &[Run], f: fn(&Run) -> f64| median(&runs.iter().map(f).collect::<Vec<_>>());
    let mut rows = Vec::new();
    for (i, &loops) in LOOPS.iter().enumerate() {
        rows.push(Row {
            what: format!(
                "(h) {} URLs of {MANY_HOSTS} hosts, --loops {loops}: wall time (against the \
                 floor)",
                expected.len()
            ),
            unit: Unit::Secs,
            ours: med(&runs[i], |r| r.wall),
            theirs: med(&floor, |r| r.wall),
            target: (loops == 8).then_some(Target::RatioAtMost(NEAR_FLOOR)),
        });
    }
    for (i, &loops) in LOOPS.iter().enumerate().skip(1) {
        rows.push(Row {
            what: format!("(h) --loops {loops}: wall time (against --loops 1)"),
            unit: Unit::Secs,
            ours: med(&runs[i], |r| r.wall),
            theirs: med(&runs[0], |r| r.wall),
            target: (loops == 8).then_some(Target::RatioAtMost(EIGHT_LOOPS)),
        });
    }
    for (i, &loops) in LOOPS.iter().enumerate() {
        rows.push(Row {
            what: format!("(h) --loops {loops}: CPU per URL, the crawler's (against the site's)"),
            unit: Unit::Nanos,
            ours: med(&runs[i], |r| r.cpu).map(|c| c * 1e9 / expected.len() as f64),
            theirs: med(&runs[i], |r| r.site_cpu).map(|c| c * 1e9 / expected.len() as f64),
            target: None,
        });
    }
    Ok(rows)
}

/// This process's CPU time so far, all threads: the thirty sites'.
fn own_cpu() -> f64 {
    child::own_cpu().as_secs_f64()
}

/// `expected`'s URLs in a file, one a line, for the floor's child.
pub(super) fn url_list(expected: &BTreeSet<Visit>) -> Result<PathBuf, String> {
    static LISTS: AtomicUsize = AtomicUsize::new(0);
    let list = std::env::temp_dir().join(format!(
        "bench-floor-{}-{}.txt",
        std::process::id(),
        LISTS.fetch_add(1, Ordering::Relaxed)
    ));
    let urls: Vec<&str> = expected.iter().map(|v| v.url.as_str()).collect();
    std::fs::write(&list, urls.join("\n")).map_err(|e| format!("{}: {e}", list.display()))?;
    Ok(list)
}

/// The floor of the URLs in `list`: fetched by a plain client, `per_host`
/// connections to each host; its wall time and CPU, and the site's CPU.
pub(super) fn run_floor(
    me: &Path,
    list: &Path,
    per_host: usize,
    urls: usize,
) -> Result<Run, String> {
    let site_before = own_cpu();
    let measured = child::run(
        measure(me, me)
            .args(["child", "floor", &per_host.to_string()])
            .arg(list),
        CRAWL_LIMIT,
    )
    .map_err(|e| format!("the floor: {e}"))?;
    let fetched: usize = measured
        .stdout
        .trim()
        .parse()
        .map_err(|e| format!("the floor's output {:?}: {e}", measured.stdout))?;
    if fetched != urls {
        return Err(format!("the floor fetched {fetched} of {urls} URLs"));
    }
    Ok(Run {
        wall: measured.usage.wall.as_secs_f64(),
        cpu: measured.usage.cpu.as_secs_f64(),
        site_cpu: own_cpu() - site_before,
    })
}

fn run_loops(
    loops: usize,
    roots: &[String],
    me: &Path,
    bin: &Path,
    expected: &BTreeSet<Visit>,
) -> Result<Run, String> {
    let site_before = own_cpu();
    let mut command = measure(me, bin);
    stage3_crawl(&mut command, &roots[0], &(WORKERS / loops).to_string())
        .args(&roots[1..])
        .args(["--ignore-robots", "--loops", &loops.to_string()]);
    let measured =
        child::run(&mut command, CRAWL_LIMIT).map_err(|e| format!("--loops {loops}: {e}"))?;
    let crawled = crawl::parse_stage3_json(&measured.stdout)?;
    check(
        &format!("stage 3 on {loops} loops"),
        &crawled.visits,
        expected,
    )?;
    Ok(Run {
        wall: measured.usage.wall.as_secs_f64(),
        cpu: measured.usage.cpu.as_secs_f64(),
        site_cpu: own_cpu() - site_before,
    })
}
