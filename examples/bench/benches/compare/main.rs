//! `cargo bench -p bench`: stage 3 against a tokio + reqwest crawler, and
//! our runtime against tokio, side by side in one run. See the README.
//!
//! This one binary is both the driver and every measured child: the driver
//! starts the demo site, then runs the stage-3 binary and itself (`child
//! comparator ...`, `child micro ...`) as fresh child processes, alternating
//! the two sides round by round, and prints medians and ratios.

mod comparator;
mod frontier;
mod loops;
mod tokio_micro;

use std::collections::BTreeSet;
use std::env;
use std::ffi::OsString;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{Duration, SystemTime};

use bench::child::{self, Measured};
use bench::crawl::{self, Visit, Workload};
use bench::machine::{Machine, git_commit};
use bench::micro::{self, Micro, MicroResult};
use bench::stats::median;
use bench::table::{self, Row, Target, Unit};
use crawl_kit::dates::utc_date;
use demo_site::DemoSite;
use url::Url;

const USAGE: &str = "\
usage: cargo bench -p bench [-- OPTIONS]    (or examples/bench/run.sh [OPTIONS])

Runs stage 3 and the tokio + reqwest comparator on two demo-site workloads,
and four runtime micro-benchmarks on our runtime and on tokio, each in a
fresh child process, alternating sides, and prints medians and ratios.

options:
  --rounds N      rounds of every measurement [default: 5]
  --quick         small sites and counts, one round: tries the harness out;
                  writes no file unless --out is given
  --only WHAT     run only `crawl` or `micro`; or `scaling`: one crawl on
                  1, 2, 4 and 8 loops, then the shared frontier with 1, 2, 4
                  and 8 processes, each beside its floor, on 20,000 pages,
                  for a machine with many cores (not part of the default
                  run; writes no file unless --out is given); or `loops`:
                  the loops' rows alone
  --out FILE      write the Markdown table here
                  [default: book/src/generated/performance-table.md]
  --no-write      print the table only
  --stage3 PATH   the stage-3 binary [default: stage3-crawler next to this
                  benchmark's profile directory, i.e. target/release/]
  -h, --help      print this help";

/// A crawl child gets this long before it is killed as hung.
const CRAWL_LIMIT: Duration = Duration::from_secs(300);
const MICRO_LIMIT: Duration = Duration::from_secs(120);

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("child") => child_main(&args[1..]),
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
            eprintln!("\nbench: ABORTED: {e}");
            ExitCode::FAILURE
        }
    }
}

// ---------------------------------------------------------------- children

/// `child measure PROGRAM ARGS...`, `child comparator ROOT MAX_TASKS` or
/// `child micro ours|tokio NAME N`.
fn child_main(args: &[String]) -> Result<(), String> {
    if let [role, program, rest @ ..] = args
        && role == "measure"
    {
        let rest: Vec<OsString> = rest.iter().map(OsString::from).collect();
        let (code, usage) = child::launch(program.as_ref(), &rest)
            .map_err(|e| format!("cannot run {program:?}: {e}"))?;
        // The harness reads this as the last line of stderr.
        eprintln!("{}", usage.to_line());
        std::process::exit(code);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut out = BufWriter::new(io::stdout().lock());
    match args.as_slice() {
        ["comparator", root, max_tasks] => {
            let root = Url::parse(root).map_err(|e| format!("bad root {root:?}: {e}"))?;
            let (visits, took) = comparator::crawl(root, parse_count(max_tasks)?)
                .map_err(|e| format!("comparator: {e}"))?;
            for visit in visits {
                writeln!(out, "{}", visit.to_line()).map_err(|e| e.to_string())?;
            }
            writeln!(out, "{}", crawl::comparator_secs_line(took.as_secs_f64()))
                .map_err(|e| e.to_string())?;
        }
        ["floor", per_host, list] => {
            let text = std::fs::read_to_string(list).map_err(|e| format!("{list}: {e}"))?;
            let urls: Vec<String> = text.lines().map(String::from).collect();
            let fetched = bench::floor::fetch_all(&urls, parse_count(per_host)?)
                .map_err(|e| format!("the floor: {e}"))?;
            writeln!(out, "{}", fetched.responses).map_err(|e| e.to_string())?;
        }
        ["micro", side, name, n] => {
            let which =
                Micro::from_name(name).ok_or_else(|| format!("no micro-benchmark {name:?}"))?;
            let n = parse_count(n)?;
            let result = match *side {
                "ours" => micro::ours(which, n),
                "tokio" => tokio_micro::run(which, n),
                _ => return Err(format!("no side {side:?}: ours or tokio")),
            }
            .map_err(|e| format!("{side} {name}: {e}"))?;
            writeln!(out, "{}", result.to_line()).map_err(|e| e.to_string())?;
        }
        _ => return Err(format!("bad child arguments: {args:?}")),
    }
    out.flush().map_err(|e| e.to_string())
}

fn parse_count(s: &str) -> Result<usize, String> {
    match s.parse() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("expected a positive number, got {s:?}")),
    }
}

// ---------------------------------------------------------------- options

struct Options {
    rounds: usize,
    quick: bool,
    crawls: bool,
    micros: bool,
    scaling: bool,
    /// `--only loops`: the scaling rows of `--loops` alone.
    loops_only: bool,
    out: Option<PathBuf>,
    stage3: Option<PathBuf>,
}

impl Options {
    /// `None` for `--help`.
    fn parse(args: &[String]) -> Result<Option<Options>, String> {
        let mut opts = Options {
            rounds: 5,
            quick: false,
            crawls: true,
            micros: true,
            scaling: false,
            loops_only: false,
            out: None,
            stage3: None,
        };
        let (mut rounds, mut out, mut no_write) = (None, None, false);
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let mut value = || {
                args.next()
                    .cloned()
                    .ok_or_else(|| format!("{arg} needs a value\n\n{USAGE}"))
            };
            match arg.as_str() {
                // cargo bench passes this to every bench binary.
                "--bench" => {}
                "-h" | "--help" => return Ok(None),
                "--rounds" => rounds = Some(parse_count(&value()?)?),
                "--quick" => opts.quick = true,
                "--only" => match value()?.as_str() {
                    "crawl" => opts.micros = false,
                    "micro" => opts.crawls = false,
                    "scaling" => (opts.crawls, opts.micros, opts.scaling) = (false, false, true),
                    "loops" => {
                        (opts.crawls, opts.micros, opts.scaling, opts.loops_only) =
                            (false, false, true, true)
                    }
                    other => {
                        return Err(format!(
                            "--only crawl, micro, scaling or loops, not {other:?}"
                        ));
                    }
                },
                "--out" => out = Some(PathBuf::from(value()?)),
                "--no-write" => no_write = true,
                "--stage3" => opts.stage3 = Some(PathBuf::from(value()?)),
                other => return Err(format!("unknown argument {other:?}\n\n{USAGE}")),
            }
        }
        opts.rounds = rounds.unwrap_or(if opts.quick { 1 } else { 5 });
        // A quick run, or one of the scaling rows alone, is not the book's
        // table: it writes only where --out says.
        opts.out = match (no_write, out, opts.quick || opts.scaling) {
            (true, _, _) => None,
            (false, Some(out), _) => Some(out),
            (false, None, true) => None,
            (false, None, false) => {
                Some(workspace_root().join("book/src/generated/performance-table.md"))
            }
        };
        Ok(Some(opts))
    }

    fn pages(&self) -> usize {
        if self.quick { 200 } else { 2_000 }
    }

    /// Operations (or idle tasks) per micro-benchmark run.
    fn micro_n(&self) -> usize {
        if self.quick { 10_000 } else { 100_000 }
    }
}

fn workspace_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::canonicalize(&root).unwrap_or(root)
}

// ---------------------------------------------------------------- driver

fn drive(opts: &Options) -> Result<(), String> {
    let me = env::current_exe().map_err(|e| format!("cannot find this benchmark's binary: {e}"))?;
    let machine = Machine::current();
    println!("bench: {machine}; median of {} round(s)", opts.rounds);
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    if opts.crawls {
        let stage3 = find_stage3(opts, &me, &mut notes);
        for workload in [
            Workload::cpu_bound(opts.pages()),
            Workload::latency_bound(opts.pages()),
        ] {
            rows.extend(crawl_rows(
                &workload,
                opts,
                &me,
                stage3.as_deref(),
                &mut notes,
            )?);
        }
    }
    if opts.micros {
        rows.extend(micro_rows(opts, &me)?);
    }
    if opts.scaling {
        match find_stage3(opts, &me, &mut notes) {
            // Loops first: on a lent machine, its time is short.
            Some(bin) => {
                rows.extend(loops::loops_rows(opts, &me, &bin)?);
                if !opts.loops_only {
                    rows.extend(frontier::scaling_rows(opts, &me, &bin)?);
                }
            }
            None => return Err("--only scaling needs the stage-3 binary".into()),
        }
    }
    // The scaling rows race stage 3 against itself and against its floor.
    let (ours, theirs) = if opts.scaling {
        ("stage 3", "against")
    } else {
        ("stage 3 / our runtime", "reqwest + tokio / tokio")
    };
    let table = table::render(ours, theirs, &rows);
    println!("\n{table}");
    for note in &notes {
        println!("note: {note}");
    }
    if let Some(out) = &opts.out {
        let page = generated_page(opts, &machine, &table, &notes);
        std::fs::write(out, page).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
        println!("bench: wrote {}", out.display());
        // The rows a chapter talks about, beside the whole table, so that
        // the chapter includes its numbers rather than types them.
        for (name, about) in EXCERPTS {
            let picked: Vec<Row> = rows
                .iter()
                .filter(|row| row.what.contains(about))
                .cloned()
                .collect();
            if picked.is_empty() {
                continue;
            }
            let excerpt = table::render("stage 3 / our runtime", "against", &picked);
            let path = out.with_file_name(name);
            std::fs::write(&path, generated_page(opts, &machine, &excerpt, &[]))
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            println!("bench: wrote {}", path.display());
        }
    }
    Ok(())
}

/// The excerpts of the table that chapters include: a file beside the
/// table, and the text its rows' names contain.
const EXCERPTS: [(&str, &str); 2] = [
    ("performance-warc.md", "--warc"),
    ("performance-frontier.md", "frontier"),
];

/// The stage-3 binary, or `None` (with a note saying why) if there is none.
fn find_stage3(opts: &Options, me: &Path, notes: &mut Vec<String>) -> Option<PathBuf> {
    // The bench binary is target/<profile>/deps/compare-HASH.
    let path = opts.stage3.clone().or_else(|| {
        me.parent()
            .and_then(Path::parent)
            .map(|profile| profile.join("stage3-crawler"))
    })?;
    let Ok(built) = path.metadata().and_then(|m| m.modified()) else {
        notes.push(format!(
            "stage 3 was not measured: no binary at {}. Build it with \
             `cargo build --release -p stage3-crawler` (examples/bench/run.sh does).",
            path.display()
        ));
        eprintln!(
            "bench: WARNING: {}",
            notes.last().map_or("", String::as_str)
        );
        return None;
    };
    let root = workspace_root();
    let sources = ["runtime", "stage1-callbacks", "stage3-crawler"].map(|c| root.join(c));
    if sources
        .iter()
        .any(|dir| newest_mtime(dir).is_some_and(|t| t > built))
    {
        notes.push(format!(
            "{} is older than its sources: these stage-3 numbers may be stale \
             (examples/bench/run.sh rebuilds it).",
            path.display()
        ));
        eprintln!(
            "bench: WARNING: {}",
            notes.last().map_or("", String::as_str)
        );
    }
    Some(path)
}

/// The newest modification time of any file under `dir`.
fn newest_mtime(dir: &Path) -> Option<SystemTime> {
    let mut newest = None;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(t) = entry.metadata().and_then(|m| m.modified()) {
                newest = newest.max(Some(t));
            }
        }
    }
    newest
}

#[derive(Clone, Copy, PartialEq)]
enum Side {
    Ours,
    Theirs,
}

/// Alternates the sides: ours first in even rounds, theirs first in odd
/// ones, so that neither always runs on a machine the other just warmed.
fn order(round: usize) -> [Side; 2] {
    if round.is_multiple_of(2) {
        [Side::Ours, Side::Theirs]
    } else {
        [Side::Theirs, Side::Ours]
    }
}

fn crawl_rows(
    workload: &Workload,
    opts: &Options,
    me: &Path,
    stage3: Option<&Path>,
    notes: &mut Vec<String>,
) -> Result<Vec<Row>, String> {
    let site = DemoSite::start(workload.site.clone()).map_err(|e| format!("demo site: {e}"))?;
    let expected = crawl::expected_visits(&site);
    let root = site.url("/");
    let max_tasks = workload.max_tasks.to_string();
    println!(
        "\n({}) {}: {} URLs on {}, max_tasks {}",
        workload.key,
        workload.title,
        expected.len(),
        site.base_url(),
        max_tasks
    );
    let mut stage3 = stage3.map(Path::to_path_buf);
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    // What the demo site (in this process) spent serving each side.
    let (mut ours_site, mut theirs_site) = (Vec::new(), Vec::new());
    for round in 0..opts.rounds {
        for side in order(round) {
            site.reset_counters();
            let site_cpu = child::own_cpu();
            let (name, measured, crawl_secs) = match side {
                Side::Ours => {
                    let Some(bin) = &stage3 else { continue };
                    let run = child::run(
                        // Like with like: the comparators neither read
                        // robots.txt nor cap a host below max_tasks.
                        stage3_crawl(&mut measure(me, bin), &root, &max_tasks).args([
                            "--per-host",
                            &max_tasks,
                            "--ignore-robots",
                        ]),
                        CRAWL_LIMIT,
                    );
                    let measured = match run {
                        Ok(m) => m,
                        Err(e) => {
                            notes.push(format!(
                                "stage 3 was not measured on ({}): it failed to crawl: {e}",
                                workload.key
                            ));
                            eprintln!(
                                "bench: WARNING: {}",
                                notes.last().map_or("", String::as_str)
                            );
                            stage3 = None;
                            continue;
                        }
                    };
                    let crawled = crawl::parse_stage3_json(&measured.stdout)?;
                    check(
                        &format!("stage 3 on ({})", workload.key),
                        &crawled.visits,
                        &expected,
                    )?;
                    ours.push((measured.clone(), crawled.crawl_secs));
                    ("stage 3   ", measured, crawled.crawl_secs)
                }
                Side::Theirs => {
                    let measured = child::run(
                        measure(me, me).args(["child", "comparator", &root, &max_tasks]),
                        CRAWL_LIMIT,
                    )
                    .map_err(|e| format!("the comparator failed: {e}"))?;
                    let crawled = crawl::parse_comparator(&measured.stdout)?;
                    check(
                        &format!("the comparator on ({})", workload.key),
                        &crawled.visits,
                        &expected,
                    )?;
                    theirs.push((measured.clone(), crawled.crawl_secs));
                    ("comparator", measured, crawled.crawl_secs)
                }
            };
            let site_cpu = child::own_cpu().saturating_sub(site_cpu);
            match side {
                Side::Ours => ours_site.push(site_cpu.as_secs_f64()),
                Side::Theirs => theirs_site.push(site_cpu.as_secs_f64()),
            }
            let c = site.counters();
            println!(
                "  round {}: {name} {:>6.3} s wall ({:.3} s crawling) {:>6.3} s CPU \
                 {:>5.1} MB peak RSS | site: {:.3} s CPU, {} requests, {} connections, \
                 peak {} in flight",
                round + 1,
                measured.usage.wall.as_secs_f64(),
                crawl_secs,
                measured.usage.cpu.as_secs_f64(),
                measured.usage.max_rss as f64 / 1e6,
                site_cpu.as_secs_f64(),
                c.requests,
                c.connections,
                c.peak_in_flight
            );
        }
    }
    let defaults = match &stage3 {
        Some(bin) if workload.latency_bound_secs() > 0.0 => {
            vec![defaults_row(workload, &site, opts, me, bin, &expected)?]
        }
        Some(bin) => warc_rows(workload, &site, opts, me, bin, &expected)?,
        None => Vec::new(),
    };
    let floor = match &stage3 {
        Some(bin) => floor_rows(workload, &site, opts, me, bin, &expected, notes)?,
        None => Vec::new(),
    };
    let shared = match &stage3 {
        Some(bin) if workload.latency_bound_secs() > 0.0 => {
            frontier::frontier_rows(workload, &site, opts, me, bin, &expected, notes)?
        }
        _ => Vec::new(),
    };
    site.shutdown();

    let med = |runs: &[(Measured, f64)], f: fn(&(Measured, f64)) -> f64| {
        median(&runs.iter().map(f).collect::<Vec<_>>())
    };
    let wall = |(m, _): &(Measured, f64)| m.usage.wall.as_secs_f64();
    let crawling = |(_, secs): &(Measured, f64)| *secs;
    let cpu = |(m, _): &(Measured, f64)| m.usage.cpu.as_secs_f64();
    let rss = |(m, _): &(Measured, f64)| m.usage.max_rss as f64;
    let (k, title) = (workload.key, workload.title);
    // (a) is judged on the wall time. (b)'s bound is a bound on crawling,
    // so its absolute target applies to the crawl time, which leaves out
    // starting and ending the process; the wall time must still be no
    // worse than the comparator's.
    let (wall_target, crawl_target, cpu_target) = if workload.latency_bound_secs() == 0.0 {
        (
            Target::RatioAtMost(0.3),
            None,
            Some(Target::RatioAtMost(0.5)),
        )
    } else {
        (
            Target::RatioAtMost(1.0),
            Some(Target::AtMostAndNoWorse(
                workload.latency_bound_secs() * 1.1,
            )),
            None,
        )
    };
    let mut rows = vec![
        Row {
            what: format!("({k}) {title}: wall time"),
            unit: Unit::Secs,
            ours: med(&ours, wall),
            theirs: med(&theirs, wall),
            target: Some(wall_target),
        },
        Row {
            what: format!("({k}) {title}: crawl time, by its own clock"),
            unit: Unit::Secs,
            ours: med(&ours, crawling),
            theirs: med(&theirs, crawling),
            target: crawl_target,
        },
        Row {
            what: format!("({k}) {title}: CPU time"),
            unit: Unit::Secs,
            ours: med(&ours, cpu),
            theirs: med(&theirs, cpu),
            target: cpu_target,
        },
        Row {
            what: format!("({k}) {title}: peak RSS"),
            unit: Unit::Megabytes,
            ours: med(&ours, rss),
            theirs: med(&theirs, rss),
            target: None,
        },
        Row {
            what: format!("({k}) demo site's CPU time, same cores"),
            unit: Unit::Secs,
            ours: median(&ours_site),
            theirs: median(&theirs_site),
            target: None,
        },
    ];
    rows.extend(defaults);
    rows.extend(floor);
    rows.extend(shared);
    Ok(rows)
}

/// The fetch floor: curl fetching the same URLs as the crawl, `max_tasks`
/// at a time, and doing nothing with them, in rounds alternating with
/// stage 3 (like with like: no robots.txt, no per-host cap below
/// `max_tasks`). What a crawl costs beyond fetching is stage 3's time over
/// curl's. Without curl on the machine, the rows say so.
fn floor_rows(
    workload: &Workload,
    site: &DemoSite,
    opts: &Options,
    me: &Path,
    bin: &Path,
    expected: &BTreeSet<Visit>,
    notes: &mut Vec<String>,
) -> Result<Vec<Row>, String> {
    let Some(curl) = on_path("curl") else {
        notes.push("the fetch floor was not measured: curl is not installed".into());
        return Ok(Vec::new());
    };
    let dir = std::env::temp_dir().join(format!("bench-floor-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    // One `url` and one `output` per URL, in curl's config syntax.
    let config = dir.join("urls.curl");
    let lines: String = expected
        .iter()
        .map(|v| format!("url = \"{}\"\noutput = \"/dev/null\"\n", v.url))
        .collect();
    std::fs::write(&config, lines).map_err(|e| format!("{}: {e}", config.display()))?;
    let root = site.url("/");
    let max_tasks = workload.max_tasks.to_string();
    let (mut crawls, mut fetches) = (Vec::new(), Vec::new());
    for round in 0..opts.rounds {
        for side in order(round) {
            let mut command = match side {
                Side::Ours => measure(me, bin),
                Side::Theirs => measure(me, &curl),
            };
            match side {
                Side::Ours => stage3_crawl(&mut command, &root, &max_tasks).args([
                    "--per-host",
                    &max_tasks,
                    "--ignore-robots",
                ]),
                Side::Theirs => command
                    .args(["--parallel", "--parallel-max", &max_tasks, "--silent"])
                    .arg("--config")
                    .arg(&config),
            };
            let measured = child::run(&mut command, CRAWL_LIMIT)
                .map_err(|e| format!("the fetch floor's round failed: {e}"))?;
            let (wall, cpu) = (
                measured.usage.wall.as_secs_f64(),
                measured.usage.cpu.as_secs_f64(),
            );
            match side {
                Side::Ours => {
                    let crawled = crawl::parse_stage3_json(&measured.stdout)?;
                    check("stage 3 beside the fetch floor", &crawled.visits, expected)?;
                    println!(
                        "  round {}: stage 3     {wall:.3} s wall {cpu:.3} s CPU",
                        round + 1
                    );
                    crawls.push((wall, cpu));
                }
                Side::Theirs => {
                    println!(
                        "  round {}: curl floor  {wall:.3} s wall {cpu:.3} s CPU",
                        round + 1
                    );
                    fetches.push((wall, cpu));
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    let med = |runs: &[(f64, f64)], cpu: bool| {
        median(
            &runs
                .iter()
                .map(|r| if cpu { r.1 } else { r.0 })
                .collect::<Vec<_>>(),
        )
    };
    let (k, title) = (workload.key, workload.title);
    Ok(vec![
        Row {
            what: format!("({k}) {title} against the fetch floor (curl, same URLs): wall time"),
            unit: Unit::Secs,
            ours: med(&crawls, false),
            theirs: med(&fetches, false),
            target: Some(Target::RatioAtMost(1.5)),
        },
        Row {
            what: format!("({k}) {title} against the fetch floor (curl, same URLs): CPU time"),
            unit: Unit::Secs,
            ours: med(&crawls, true),
            theirs: med(&fetches, true),
            target: Some(Target::RatioAtMost(2.0)),
        },
    ])
}

/// The program `name` in one of `PATH`'s directories.
fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|path| path.is_file())
}

/// Stage 3 with its polite defaults (robots.txt read, `--per-host 8`),
/// alone: no comparator is polite in the same way, so the row is judged
/// against the bound the cap implies. With 8 requests at a time to the one
/// host, the numbered pages cost at least pages / 8 page delays; the crawl
/// must stay within 10% of that.
fn defaults_row(
    workload: &Workload,
    site: &DemoSite,
    opts: &Options,
    me: &Path,
    bin: &Path,
    expected: &BTreeSet<Visit>,
) -> Result<Row, String> {
    const PER_HOST: usize = 8;
    let capped = Workload {
        max_tasks: workload.max_tasks.min(PER_HOST),
        ..workload.clone()
    };
    let root = site.url("/");
    let mut secs = Vec::new();
    for round in 0..opts.rounds {
        let measured = child::run(
            stage3_crawl(
                &mut measure(me, bin),
                &root,
                &workload.max_tasks.to_string(),
            ),
            CRAWL_LIMIT,
        )
        .map_err(|e| format!("stage 3 with its defaults failed: {e}"))?;
        let crawled = crawl::parse_stage3_json(&measured.stdout)?;
        check("stage 3 with its defaults", &crawled.visits, expected)?;
        println!(
            "  round {}: stage 3 with its defaults (--per-host {PER_HOST}) {:.3} s crawling, \
             bound {:.3} s",
            round + 1,
            crawled.crawl_secs,
            capped.latency_bound_secs()
        );
        secs.push(crawled.crawl_secs);
    }
    Ok(Row {
        what: format!(
            "({}) {}, stage 3's defaults (--per-host {PER_HOST}): crawl time",
            workload.key, workload.title
        ),
        unit: Unit::Secs,
        ours: median(&secs),
        theirs: None,
        target: Some(Target::Below(capped.latency_bound_secs() * 1.1)),
    })
}

// ANCHOR: warc_row
/// Stage 3 with `--warc`, against itself without, in alternating rounds,
/// and with `--warc` to a `.warc.gz`. Three rows: the wall time (at most
/// 1.3× the crawl without the archive, a target for a machine with idle
/// cores, where the archivers run beside the crawl); the extra CPU time
/// the archive costs, against two SHA-1 passes over the archived bytes,
/// timed here with the crawler's own `sha1` crate (the digests' physical
/// floor: the target is 1.3× that); and the `.warc.gz` crawl's wall time.
fn warc_rows(
    workload: &Workload,
    site: &DemoSite,
    opts: &Options,
    me: &Path,
    bin: &Path,
    expected: &BTreeSet<Visit>,
) -> Result<Vec<Row>, String> {
    const LIMIT: f64 = 1.3;
    let dir = std::env::temp_dir().join(format!("bench-warc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let root = site.url("/");
    let max_tasks = workload.max_tasks.to_string();
    // (wall, CPU) per round, for each way.
    let (mut with, mut without, mut gz) = (Vec::new(), Vec::new(), Vec::new());
    let (mut sha, mut archived) = (Vec::new(), 0);
    let ways = [None, Some("crawl.warc"), Some("crawl.warc.gz")];
    for round in 0..opts.rounds {
        // A different way first in each round.
        for k in 0..ways.len() {
            let way = ways[(round + k) % ways.len()];
            let mut command = measure(me, bin);
            stage3_crawl(&mut command, &root, &max_tasks).args([
                "--per-host",
                &max_tasks,
                "--ignore-robots",
            ]);
            let file = way.map(|name| dir.join(name));
            if let Some(file) = &file {
                // Not the truncation of the last round's file: its cost
                // is the page cache's, not the archive's.
                let _ = std::fs::remove_file(file);
                command.arg("--warc").arg(file);
            }
            let measured = child::run(&mut command, CRAWL_LIMIT)
                .map_err(|e| format!("stage 3 (--warc {way:?}) failed: {e}"))?;
            let crawled = crawl::parse_stage3_json(&measured.stdout)?;
            check("stage 3 with --warc", &crawled.visits, expected)?;
            let (wall, cpu) = (
                measured.usage.wall.as_secs_f64(),
                measured.usage.cpu.as_secs_f64(),
            );
            let size = file
                .as_ref()
                .and_then(|f| std::fs::metadata(f).ok())
                .map_or(0, |m| m.len());
            println!(
                "  round {}: stage 3 {:<22} {wall:.3} s wall {cpu:.3} s CPU{}",
                round + 1,
                way.map_or("without".to_string(), |w| format!("with --warc {w}")),
                if size > 0 {
                    format!(" ({:.1} MB archived)", size as f64 / 1e6)
                } else {
                    String::new()
                }
            );
            match way {
                None => without.push((wall, cpu)),
                Some("crawl.warc") => {
                    with.push((wall, cpu));
                    // The same bytes, hashed twice, as the archivers do.
                    if let Some(file) = &file {
                        let bytes =
                            std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
                        let started = std::time::Instant::now();
                        for _ in 0..2 {
                            std::hint::black_box(<sha1::Sha1 as sha1::Digest>::digest(&bytes));
                        }
                        sha.push(started.elapsed().as_secs_f64());
                        archived = bytes.len();
                    }
                }
                Some(_) => gz.push((wall, cpu)),
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    let walls = |runs: &[(f64, f64)]| median(&runs.iter().map(|r| r.0).collect::<Vec<_>>());
    let cpus = |runs: &[(f64, f64)]| median(&runs.iter().map(|r| r.1).collect::<Vec<_>>());
    let without_wall = walls(&without);
    let extra = cpus(&with).zip(cpus(&without)).map(|(w, o)| w - o);
    let sha = median(&sha);
    let title = format!("({}) {}, stage 3 with --warc", workload.key, workload.title);
    Ok(vec![
        Row {
            what: format!(
                "{title}: wall time (without: {:.3} s, same rounds; 1.3× is for idle cores)",
                without_wall.unwrap_or(0.0)
            ),
            unit: Unit::Secs,
            ours: walls(&with),
            theirs: None,
            target: without_wall.map(|w| Target::Below(w * LIMIT)),
        },
        Row {
            what: format!(
                "{title}: CPU time it adds (two SHA-1 passes over the {:.0} MB archived: {:.3} s)",
                archived as f64 / 1e6,
                sha.unwrap_or(0.0)
            ),
            unit: Unit::Secs,
            ours: extra,
            theirs: None,
            target: sha.map(|s| Target::Below(s * LIMIT)),
        },
        Row {
            what: format!("{title} to a .warc.gz: wall time"),
            unit: Unit::Secs,
            ours: walls(&gz),
            theirs: None,
            target: None,
        },
    ])
}
// ANCHOR_END: warc_row

/// A command that runs `program` through this binary's launcher role (see
/// `bench::child`); add the program's arguments.
/// Stage 3's arguments for a measured crawl of `root`: the JSON report,
/// which the harness checks against the site's answer key, and no output
/// beside it.
fn stage3_crawl<'c>(command: &'c mut Command, root: &str, max_tasks: &str) -> &'c mut Command {
    command.args([
        root,
        "--max-tasks",
        max_tasks,
        "--report",
        "json",
        "--progress",
        "never",
        "-q",
    ])
}

fn measure(me: &Path, program: &Path) -> Command {
    let mut command = Command::new(me);
    command.args(["child".as_ref(), "measure".as_ref(), program.as_os_str()]);
    command
}

/// Aborts the run, loudly, if a crawler did not find exactly the site.
fn check(who: &str, found: &[Visit], expected: &BTreeSet<Visit>) -> Result<(), String> {
    crawl::check_visits(who, found, expected).map_err(|e| {
        format!("{e}\nThe two crawlers must do the same work for the comparison to mean anything.")
    })
}

fn micro_rows(opts: &Options, me: &Path) -> Result<Vec<Row>, String> {
    let n = opts.micro_n();
    println!("\n(c) runtime micro-benchmarks, n = {n}");
    let mut rows = Vec::new();
    for which in Micro::ALL {
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for round in 0..opts.rounds {
            for side in order(round) {
                let side_name = if side == Side::Ours { "ours" } else { "tokio" };
                let measured = child::run(
                    measure(me, me).args([
                        "child",
                        "micro",
                        side_name,
                        which.name(),
                        &n.to_string(),
                    ]),
                    MICRO_LIMIT,
                )
                .map_err(|e| format!("micro-benchmark {} on {side_name}: {e}", which.name()))?;
                let result = MicroResult::parse(measured.stdout.trim())?;
                println!(
                    "  round {}: {:<5} {:<5} {:>10.1} ({:.1} MB RSS)",
                    round + 1,
                    which.name(),
                    side_name,
                    result.value,
                    result.rss as f64 / 1e6
                );
                match side {
                    Side::Ours => ours.push(result),
                    Side::Theirs => theirs.push(result),
                }
            }
        }
        let value = |rs: &[MicroResult]| median(&rs.iter().map(|r| r.value).collect::<Vec<_>>());
        let rss = |rs: &[MicroResult]| median(&rs.iter().map(|r| r.rss as f64).collect::<Vec<_>>());
        let row = |what: &str, unit, target| Row {
            what: format!("(c) {what}"),
            unit,
            ours: value(&ours),
            theirs: value(&theirs),
            target,
        };
        match which {
            Micro::Spawn => rows.push(row("spawn + complete, per task", Unit::Nanos, None)),
            Micro::Wake => rows.push(row("wake round trip between two tasks", Unit::Nanos, None)),
            Micro::Queue => rows.push(row("queue put + get, getter waiting", Unit::Nanos, None)),
            Micro::Timers => rows.push(row(
                "sleep armed and fired (1-5 ms), per timer",
                Unit::Nanos,
                None,
            )),
            Micro::Cancel => rows.push(row(
                "sleep armed and cancelled, per timer",
                Unit::Nanos,
                None,
            )),
            Micro::PingPong => rows.push(row(
                "TCP ping-pong over loopback, per round trip",
                Unit::Nanos,
                None,
            )),
            Micro::PingPong100 => rows.push(row(
                "TCP ping-pong, 100 connections at once, per round trip",
                Unit::Nanos,
                None,
            )),
            Micro::LoopMessage => rows.push(row(
                "message round trip between two loops' threads",
                Unit::Nanos,
                Some(Target::RatioAtMost(1.0)),
            )),
            Micro::LoopSpawn => rows.push(row(
                "spawn onto another loop's thread + await, per task",
                Unit::Nanos,
                Some(Target::RatioAtMost(1.0)),
            )),
            Micro::Idle => {
                rows.push(row(
                    "bytes per idle task (future excluded)",
                    Unit::Bytes,
                    Some(Target::RatioAtMost(1.0)),
                ));
                rows.push(Row {
                    what: format!("(c) RSS with {n} idle tasks"),
                    unit: Unit::Megabytes,
                    ours: rss(&ours),
                    theirs: rss(&theirs),
                    target: Some(Target::Below(64e6)),
                });
            }
        }
    }
    Ok(rows)
}

// ---------------------------------------------------------------- the page

/// The Markdown the book includes: when, where and how, then the table.
fn generated_page(opts: &Options, machine: &Machine, table: &str, notes: &[String]) -> String {
    let mut page = String::new();
    page.push_str(
        "<!-- Written by `examples/bench/run.sh` (cargo bench -p bench). \
         Do not edit: run it again. -->\n\n",
    );
    page.push_str(&format!(
        "Measured {} on {machine}; commit {}; median of {} rounds{}.\n\n",
        utc_date(SystemTime::now()),
        git_commit(&workspace_root()),
        opts.rounds,
        if opts.quick {
            " (quick mode: small sizes)"
        } else {
            ""
        }
    ));
    page.push_str(table);
    for note in notes {
        page.push_str(&format!("\nNote: {note}\n"));
    }
    page
}
