//! `scale`: how stage 3's cost grows with the site. It crawls the demo
//! site's large mode at 10,000, 100,000 and 1,000,000 pages
//! (`--max-tasks 500`, the report to a file) and prints, for each size,
//! wall time, time per URL, peak RSS and RSS per URL seen; then writes the
//! table the Performance appendix includes and the figure beside it.
//! spider-rs (`spider_cli`, which `examples/bench/scale.sh` builds) crawls
//! the same sites as the peer, when it is there.
//!
//! `examples/bench/scale.sh` (or `cargo run --release -p bench --bin scale`)

use std::ffi::OsString;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, SystemTime};

use bench::child::{self, Measured};
use bench::machine::{Machine, git_commit};
use bench::plot::{self, Chart, Series};
use bench::scale::{self, Counted, Point};
use crawl_kit::dates::utc_date;
use demo_site::{DemoSite, SiteConfig};

const USAGE: &str = "\
usage: examples/bench/scale.sh [OPTIONS]
       (cargo run --release -p bench --bin scale -- [OPTIONS])

Crawls the demo site's large mode at each size with stage 3 (the JSON
report, then the text report) and with spider-rs if it is built, each in a
fresh child process, and prints wall time, time per URL, peak RSS and RSS
per URL seen.

options:
  --sizes N,N,...  pages of each site [default: 10000,100000,1000000]
  --rounds N       crawls of each site by each crawler; the table shows the
                   one with the median wall time [default: 3]
  --quick          sizes 1000,10000, one round; writes no file unless --out
                   is given
  --out DIR        write scale-table.md here and scale.svg to DIR/../figures
                   [default: book/src/generated]
  --no-write       print the table only
  --stage3 PATH    the stage-3 binary [default: target/release/stage3-crawler]
  --spider PATH    spider-rs's binary [default: target/spider/bin/spider,
                   left out if absent]
  -h, --help       print this help";

/// Workers, as the issue that asked for this benchmark says.
const MAX_TASKS: &str = "500";
/// Bytes per page: small pages, so that the run measures the crawler's
/// cost per URL, not the parser's per byte (and a million pages take a
/// minute, not five).
const PAGE_SIZE: usize = 1_000;
/// A crawl by stage 3 gets this long before it is killed as hung.
const LIMIT: Duration = Duration::from_secs(900);
/// The peer gets this long before it is given up on: its row is then a
/// note, and the run goes on.
const PEER_LIMIT: Duration = Duration::from_secs(120);

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("measure") => measure(&args[1..]),
        _ => Options::parse(&args).and_then(|opts| match opts {
            Some(opts) => drive(&opts),
            None => {
                println!("{USAGE}");
                Ok(())
            }
        }),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("\nscale: ABORTED: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The launcher: `measure OUT PROGRAM ARGS...` runs PROGRAM with its
/// stdout in the file OUT and reports what it cost (see `bench::child`).
fn measure(args: &[String]) -> Result<(), String> {
    let [out, program, rest @ ..] = args else {
        return Err(format!("bad measure arguments: {args:?}"));
    };
    let file = File::create(out).map_err(|e| format!("{out}: {e}"))?;
    let rest: Vec<OsString> = rest.iter().map(OsString::from).collect();
    let (code, usage) = child::launch_with(program.as_ref(), &rest, Stdio::from(file))
        .map_err(|e| format!("cannot run {program:?}: {e}"))?;
    eprintln!("{}", usage.to_line());
    std::process::exit(code);
}

struct Options {
    sizes: Vec<usize>,
    rounds: usize,
    quick: bool,
    out: Option<PathBuf>,
    stage3: PathBuf,
    spider: Option<PathBuf>,
}

impl Options {
    fn parse(args: &[String]) -> Result<Option<Options>, String> {
        let root = workspace_root();
        let mut opts = Options {
            sizes: vec![10_000, 100_000, 1_000_000],
            rounds: 3,
            quick: false,
            out: Some(root.join("book/src/generated")),
            stage3: root.join("target/release/stage3-crawler"),
            spider: Some(root.join("target/spider/bin/spider")),
        };
        let (mut sizes, mut rounds, mut out, mut no_write) = (None, None, None, false);
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let mut value = || {
                args.next()
                    .cloned()
                    .ok_or_else(|| format!("{arg} needs a value\n\n{USAGE}"))
            };
            match arg.as_str() {
                "-h" | "--help" => return Ok(None),
                "--sizes" => {
                    let list = value()?;
                    let parsed: Result<Vec<usize>, _> =
                        list.split(',').map(|n| n.trim().parse::<usize>()).collect();
                    match parsed {
                        Ok(list) if !list.is_empty() && list.iter().all(|&n| n > 0) => {
                            sizes = Some(list)
                        }
                        _ => return Err(format!("--sizes takes positive numbers, not {list:?}")),
                    }
                }
                "--rounds" => match value()?.parse::<usize>() {
                    Ok(n) if n > 0 => rounds = Some(n),
                    _ => return Err(format!("--rounds takes a positive number\n\n{USAGE}")),
                },
                "--quick" => opts.quick = true,
                "--out" => out = Some(PathBuf::from(value()?)),
                "--no-write" => no_write = true,
                "--stage3" => opts.stage3 = PathBuf::from(value()?),
                "--spider" => opts.spider = Some(PathBuf::from(value()?)),
                other => return Err(format!("unknown argument {other:?}\n\n{USAGE}")),
            }
        }
        if opts.quick {
            opts.sizes = vec![1_000, 10_000];
            opts.rounds = 1;
        }
        opts.rounds = rounds.unwrap_or(opts.rounds);
        if let Some(sizes) = sizes {
            opts.sizes = sizes;
        }
        opts.out = match (no_write, out, opts.quick) {
            (true, _, _) | (false, None, true) => None,
            (false, Some(out), _) => Some(out),
            (false, None, false) => opts.out,
        };
        if !opts.stage3.exists() {
            return Err(format!(
                "no stage-3 binary at {} (cargo build --release -p stage3-crawler)",
                opts.stage3.display()
            ));
        }
        opts.spider = opts.spider.filter(|spider| spider.exists());
        Ok(Some(opts))
    }
}

fn workspace_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::canonicalize(&root).unwrap_or(root)
}

/// The crawlers of one run, in the order of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Who {
    Json,
    Text,
    Spider,
}

impl Who {
    fn name(self) -> &'static str {
        match self {
            Who::Json => "stage 3, --report json",
            Who::Text => "stage 3, --report text",
            Who::Spider => "spider-rs (spider_cli)",
        }
    }
}

/// One crawl, and how many of the site's URLs it found (spider-rs finds
/// fewer; stage 3's reports are checked to be exact).
struct Run {
    who: Who,
    point: Point,
    site_urls: u64,
}

fn drive(opts: &Options) -> Result<(), String> {
    let machine = Machine::current();
    eprintln!("scale: {machine}");
    match &opts.spider {
        Some(spider) => eprintln!("scale: spider-rs at {}", spider.display()),
        None => eprintln!("scale: spider-rs is not built: its rows are left out"),
    }
    let scratch = std::env::temp_dir().join(format!("bench-scale-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let (mut runs, mut notes) = (Vec::new(), Vec::new());
    let result = (|| {
        // Round by round, every size in each, so that a slow minute of
        // the machine touches one run of each size rather than all the
        // runs of one.
        for round in 1..=opts.rounds {
            for &pages in &opts.sizes {
                eprintln!("scale: round {round} of {}, {pages} pages", opts.rounds);
                runs.extend(crawl_site(opts, pages, &scratch, &mut notes)?);
            }
        }
        Ok::<_, String>(())
    })();
    let runs = medians(runs);
    // A peer that fails on a size fails the same way in every round.
    notes.sort();
    notes.dedup();
    let _ = std::fs::remove_dir_all(&scratch);
    result?;
    let mut table = table(&runs, &opts.sizes);
    for note in &notes {
        table.push_str(&format!("\nNote: {note}\n"));
    }
    println!("\n{table}");
    if let Some(dir) = &opts.out {
        let page = format!(
            "<!-- Written by `examples/bench/scale.sh`. Do not edit: run it again. -->\n\n\
             Measured {} on {machine}; commit {}; of {} rounds, the run with the median \
             wall time; the demo site in the harness's process.\n\n{table}",
            utc_date(SystemTime::now()),
            git_commit(&workspace_root()),
            opts.rounds,
        );
        let md = dir.join("scale-table.md");
        std::fs::write(&md, page).map_err(|e| format!("{}: {e}", md.display()))?;
        let svg = dir.join("../figures/scale.svg");
        std::fs::write(&svg, figure(&runs)).map_err(|e| format!("{}: {e}", svg.display()))?;
        eprintln!("scale: wrote {} and {}", md.display(), svg.display());
    }
    Ok(())
}

/// For each size and crawler, the run with the median wall time.
fn medians(mut runs: Vec<Run>) -> Vec<Run> {
    runs.sort_by(|a, b| {
        (a.point.pages, a.who as u8)
            .cmp(&(b.point.pages, b.who as u8))
            .then(a.point.usage.wall.cmp(&b.point.usage.wall))
    });
    let mut out = Vec::new();
    let mut rest = runs.as_slice();
    while let Some(first) = rest.first() {
        let key = (first.point.pages, first.who);
        let same = rest
            .iter()
            .take_while(|r| (r.point.pages, r.who) == key)
            .count();
        let (group, tail) = rest.split_at(same);
        let median = &group[group.len() / 2];
        out.push(Run {
            who: median.who,
            point: median.point,
            site_urls: median.site_urls,
        });
        rest = tail;
    }
    out
}

/// Every crawler on a large site of `pages` pages.
/// A peer that fails or runs out of time leaves a note in `notes`.
fn crawl_site(
    opts: &Options,
    pages: usize,
    scratch: &Path,
    notes: &mut Vec<String>,
) -> Result<Vec<Run>, String> {
    let site = DemoSite::start(SiteConfig {
        pages,
        page_size: PAGE_SIZE,
        large: true,
        ..SiteConfig::default()
    })
    .map_err(|e| format!("cannot start the demo site: {e}"))?;
    let origin = site.base_url();
    let root = site.url("/");
    let site_urls = site.expected_large_len() as u64;
    let report = scratch.join("report");
    let mut runs = Vec::new();
    for who in [Who::Json, Who::Text, Who::Spider] {
        let (program, args): (&Path, Vec<&str>) = match who {
            Who::Json | Who::Text => (
                &opts.stage3,
                vec![
                    &root,
                    "--max-tasks",
                    MAX_TASKS,
                    "--report",
                    if who == Who::Json { "json" } else { "text" },
                    "-q",
                    "--progress",
                    "never",
                ],
            ),
            Who::Spider => match &opts.spider {
                Some(spider) => (spider, vec!["--url", &root, "crawl", "--output-links"]),
                None => continue,
            },
        };
        eprint!("scale: {pages} pages, {}... ", who.name());
        let limit = if who == Who::Spider {
            PEER_LIMIT
        } else {
            LIMIT
        };
        let measured = match run(program, &args, &report, limit) {
            Ok(measured) => measured,
            Err(e) if who == Who::Spider => {
                let first = e.lines().next().unwrap_or_default().to_string();
                eprintln!("failed: {e}");
                notes.push(format!(
                    "spider-rs on {pages} pages: no result in at least one round ({})",
                    if first.contains("did not finish") {
                        format!("not finished in {} s", PEER_LIMIT.as_secs())
                    } else {
                        first
                    }
                ));
                continue;
            }
            Err(e) => return Err(e),
        };
        let counted = match who {
            Who::Json => scale::check_json_report(&report, &origin, pages)?,
            Who::Text => scale::check_text_report(&report, &origin, pages)?,
            Who::Spider => count_links(&report, &origin)?,
        };
        let point = Point {
            pages,
            fetched: counted.fetched,
            seen: counted.seen,
            usage: measured.usage,
        };
        eprintln!(
            "{:.2} s, {:.1} us per URL, {:.1} MB",
            point.usage.wall.as_secs_f64(),
            point.secs_per_url() * 1e6,
            point.usage.max_rss as f64 / 1e6
        );
        runs.push(Run {
            who,
            point,
            site_urls,
        });
    }
    site.shutdown();
    Ok(runs)
}

/// Runs `program` through the launcher, its stdout into `report`.
fn run(program: &Path, args: &[&str], report: &Path, limit: Duration) -> Result<Measured, String> {
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut launcher = Command::new(me);
    launcher.arg("measure").arg(report).arg(program).args(args);
    child::run(&mut launcher, limit).map_err(|e| e.to_string())
}

/// spider-rs's `--output-links`: one URL per line. Those of the site, each
/// once, are what it fetched.
fn count_links(path: &Path, origin: &str) -> Result<Counted, String> {
    let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut urls = std::collections::HashSet::new();
    for line in BufReader::new(file).lines() {
        let line = line.map_err(|e| e.to_string())?;
        if line.starts_with(origin) {
            urls.insert(line);
        }
    }
    let n = urls.len() as u64;
    Ok(Counted {
        fetched: n,
        seen: n,
    })
}

fn table(runs: &[Run], sizes: &[usize]) -> String {
    let mut out = String::from(
        "| pages | crawler | URLs fetched | URLs seen | wall | per URL | peak RSS | RSS per URL seen |\n\
         |---:|---|---:|---:|---:|---:|---:|---:|\n",
    );
    for run in runs {
        let p = &run.point;
        let found = if p.fetched == run.site_urls {
            format!("{}", p.fetched)
        } else {
            format!("{} of {}", p.fetched, run.site_urls)
        };
        out.push_str(&format!(
            "| {} | {} | {found} | {} | {:.2} s | {:.1} µs | {:.1} MB | {:.0} B |\n",
            p.pages,
            run.who.name(),
            p.seen,
            p.usage.wall.as_secs_f64(),
            p.secs_per_url() * 1e6,
            p.usage.max_rss as f64 / 1e6,
            p.rss_per_url()
        ));
    }
    // The targets: time per URL flat within ±20% from the smallest site to
    // the largest, and peak RSS under 256 MB at 1M pages with the JSON report.
    let json: Vec<&Point> = runs
        .iter()
        .filter(|r| r.who == Who::Json)
        .map(|r| &r.point)
        .collect();
    if let (Some(first), Some(last)) = (json.first(), json.last())
        && json.len() > 1
    {
        let base = first.secs_per_url();
        let worst = json
            .iter()
            .map(|p| (p.secs_per_url() / base - 1.0).abs())
            .fold(0.0, f64::max);
        out.push_str(&format!(
            "\nTime per URL with the JSON report, {} to {} pages: within ±{:.0}% of the \
             smallest site's (target ±20%: {}).\n",
            first.pages,
            last.pages,
            worst * 100.0,
            if worst <= 0.2 { "met" } else { "not met" }
        ));
    }
    if let Some(big) = json.iter().find(|p| p.pages == 1_000_000)
        && sizes.contains(&1_000_000)
    {
        let mb = big.usage.max_rss as f64 / 1e6;
        out.push_str(&format!(
            "Peak RSS at 1,000,000 pages with the JSON report: {mb:.1} MB (target under 256 MB: {}).\n",
            if big.usage.max_rss < 256_000_000 {
                "met"
            } else {
                "not met"
            }
        ));
    }
    out
}

fn figure(runs: &[Run]) -> String {
    let series = |value: fn(&Point) -> f64| -> Vec<Series> {
        [Who::Json, Who::Text, Who::Spider]
            .into_iter()
            .filter_map(|who| {
                let points: Vec<(f64, f64)> = runs
                    .iter()
                    .filter(|r| r.who == who)
                    .map(|r| (r.point.pages as f64, value(&r.point)))
                    .collect();
                (!points.is_empty()).then(|| Series {
                    name: who.name().to_string(),
                    points,
                })
            })
            .collect()
    };
    let charts = [
        Chart {
            title: "Wall time per URL fetched".into(),
            format: |v| format!("{:.0} µs", v * 1e6),
            series: series(Point::secs_per_url),
            limit: None,
        },
        Chart {
            title: "Peak RSS".into(),
            format: |v| format!("{:.0} MB", v / 1e6),
            series: series(|p| p.usage.max_rss as f64),
            limit: Some((256e6, "target: 256 MB at 1M".into())),
        },
    ];
    plot::svg(
        "Crawling the demo site's large mode (--max-tasks 500)",
        &charts,
    )
}
