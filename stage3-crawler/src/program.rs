//! The program: the command line's [`Args`] made into a crawler (its
//! journal, archive, shared frontier and reports plugged in), run, and
//! reported. What the command line accepts is [`crate::program::cli`]'s.

pub mod cli;
pub mod interrupt;
pub(crate) mod joining;
pub(crate) mod progress;
pub(crate) mod ps;
pub(crate) mod spread;

use std::cell::RefCell;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use std::rc::Rc;

use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches};
use demo_site::DemoSite;
use redis_client::RedisUrl;
use runtime::Runtime;
use url::Url;

use crate::assembly::{self, Plugins};
use crate::crawling::{Crawler, Outcome};
use crate::http::HearExchanges;
use crate::keeping::archive::Archive;
use crate::keeping::journal::{ANOTHER_CRAWL, Journal, Replayed};
use crate::keeping::warc::Info;
use crate::records::Records;
use crate::report::reporting::{self, Reported, TextReport};
use cli::{Args, Report, parse_root};
use interrupt::{EXIT_INTERRUPTED, Interrupt, ReportOut};
use ps::Ps;
use spread::Merged;

/// The target of the program's own log lines: the one they had when the
/// program lived in `cli.rs`, which users' scripts may match
/// (`INFO stage3_crawler::cli: archived ...`).
const LOG: &str = "stage3_crawler::cli";
use crate::sharing::shared::{STATE_KEPT, Shared};

/// Sends log records to env_logger, erasing the progress line first.
struct Logger {
    inner: env_logger::Logger,
}

impl log::Log for Logger {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        self.inner.enabled(metadata)
    }

    fn log(&self, record: &log::Record<'_>) {
        if self.inner.matches(record) {
            progress::clear();
            self.inner.log(record);
        }
    }

    fn flush(&self) {
        self.inner.flush();
    }
}

fn rustls_level(level: log::LevelFilter) -> log::LevelFilter {
    if level == log::LevelFilter::Trace {
        level
    } else {
        level.min(log::LevelFilter::Error)
    }
}

/// Logs to stderr at `level`, as `LEVEL target: message`. `RUST_LOG` adds
/// to it (`RUST_LOG=runtime=trace` traces the runtime).
fn init_logging(level: log::LevelFilter) {
    use std::io::Write as _;
    let inner = env_logger::Builder::new()
        .filter_level(level)
        // rustls warns about every alert it sends, which repeats our own
        // line for each bad certificate: quiet it but for -vv (everything).
        // RUST_LOG=rustls=debug still works.
        .filter_module("rustls", rustls_level(level))
        .parse_default_env()
        .format(|buf, record| {
            writeln!(
                buf,
                "{} {}: {}",
                record.level(),
                record.target(),
                record.args()
            )
        })
        .build();
    let max = inner.filter();
    if log::set_boxed_logger(Box::new(Logger { inner })).is_ok() {
        log::set_max_level(max);
    }
}

/// The program: parse the arguments, crawl, report. Returns the exit status.
pub fn main() -> ExitCode {
    let matches = Args::command().get_matches(); // exits with status 2 on a usage error
    let mut args = Args::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    args.explicit = matches
        .ids()
        .filter(|id| matches.value_source(id.as_str()) == Some(ValueSource::CommandLine))
        .map(|id| id.to_string())
        .collect();
    args.proxies = args
        .read_proxies(|name| std::env::var(name).ok())
        .unwrap_or_else(|e| {
            Args::command()
                .error(clap::error::ErrorKind::ValueValidation, e)
                .exit()
        });
    init_logging(args.log_level());
    match run(&args) {
        Ok(code) => code,
        Err(e) if e.get_ref().is_some_and(|inner| inner.is::<Usage>()) => Args::command()
            .error(clap::error::ErrorKind::ArgumentConflict, e)
            .exit(),
        Err(e) => {
            eprintln!("stage3-crawler: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The journal (`--state`), with what it held, and the archive (`--warc`).
type State = (Option<(Rc<Journal>, Replayed)>, Option<Rc<Archive>>);

/// Opens `--state` and `--warc`. A crawl that resumes reopens its archive,
/// cutting off a record torn by a crash, and fetches again what the
/// journal has done but the archive lost.
fn open_state(args: &Args, roots: &[Url]) -> io::Result<State> {
    let mut begun = None;
    let mut state = match &args.state {
        Some(dir) => {
            let identity = args.identity(roots);
            let (journal, mut replayed) = Journal::open(dir, &identity).map_err(|e| {
                let message = format!("--state {}: {e}", dir.display());
                // A recrawl is of the crawl whose state it is, by definition.
                match args.recrawl && e.contains(&format!(": {ANOTHER_CRAWL}")) {
                    true => usage(message),
                    false => io::Error::other(message),
                }
            })?;
            if args.recrawl && begin_recrawl(dir, &mut replayed)? {
                begun = Some(replayed.generation);
            }
            Some((Rc::new(journal), replayed))
        }
        None => None,
    };
    let generation = state.as_ref().map_or(0, |(_, r)| r.generation);
    let info = |path| Info {
        generation,
        ..args.warc_info(path)
    };
    let resuming = state
        .as_ref()
        .is_some_and(|(_, replayed)| !replayed.is_empty());
    let archive = match &args.warc {
        Some(path) if resuming => {
            let (archive, held) = Archive::reopen(path, &info(path))?;
            if held.cut > 0 {
                log::warn!(target: LOG,
                    "{}: cut off the last {} bytes, a record torn by a crash",
                    path.display(),
                    held.cut
                );
            }
            if let Some((_, replayed)) = &mut state {
                let again = replayed.forget_unarchived(&held.responses);
                if again > 0 {
                    log::info!(target: LOG, "{again} URLs done but not yet archived will be fetched again");
                }
            }
            Some(Rc::new(archive))
        }
        Some(path) => Some(Rc::new(Archive::create(path, &info(path))?)),
        None => None,
    };
    // A recrawl keeps a 304 as a revisit of the record holding the page,
    // so it asks with that record's validators; a page the archive does not
    // hold whole is asked for whole.
    if let (Some((_, replayed)), Some(archive)) = (&mut state, &archive)
        && replayed.generation > 0
    {
        replayed.validators = replayed
            .known
            .iter()
            .filter_map(|q| Some((q.url.clone(), archive.page_validators(&q.url)?)))
            .collect();
    }
    // The new generation begins in the journal once everything it needs
    // has opened.
    if let (Some(generation), Some((journal, _)), Some(dir)) = (begun, &state, &args.state) {
        journal
            .begin_recrawl(generation)
            .map_err(|e| io::Error::new(e.kind(), format!("--state {}: {e}", dir.display())))?;
    }
    Ok((state, archive))
}

// ANCHOR: begin_recrawl
/// `--recrawl`: whether a new generation of the finished crawl in the
/// journal begins (`replayed` is then that generation's, and the journal
/// is yet to say so), or a recrawl stopped before its end goes on.
fn begin_recrawl(dir: &Path, replayed: &mut Replayed) -> io::Result<bool> {
    let dir = dir.display();
    if replayed.is_empty() {
        return Err(usage(format!(
            "--recrawl: {dir} holds no crawl to crawl again; crawl it first (the same \
             command without --recrawl)"
        )));
    }
    if !replayed.finished() {
        if replayed.generation == 0 {
            return Err(usage(format!(
                "--recrawl: the crawl in {dir} did not finish; resume it first (the same \
                 command without --recrawl)"
            )));
        }
        log::info!(target: LOG, "recrawl {} was stopped before its end: resuming it", replayed.generation);
        return Ok(false);
    }
    replayed.begin_recrawl();
    Ok(true)
}
// ANCHOR_END: begin_recrawl

/// A mistake in how the program was called that only shows once it runs
/// (`--recrawl` of a crawl that is not there): it exits with status 2, as
/// the command line's own mistakes do.
#[derive(Debug)]
struct Usage(String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

fn usage(message: String) -> io::Error {
    io::Error::other(Usage(message))
}

/// `--frontier` with `--frontier-clear` or `--report-only`: no crawl.
fn frontier_command(args: &Args, url: &RedisUrl) -> io::Result<ExitCode> {
    let runtime = Runtime::new()?;
    if args.frontier_clear {
        let deleted = runtime.block_on(joining::clear(url))??;
        eprintln!("Deleted the crawl at {url}: {deleted} keys.");
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = BufWriter::new(io::stdout());
    let json = args.report == Report::Json;
    let written = runtime.block_on(joining::merged_report(
        url,
        json,
        args.verbose > 0,
        &mut out,
    ))?;
    if let Err(e) = written.and_then(|()| out.flush())
        && e.kind() != io::ErrorKind::BrokenPipe
    {
        return Err(e);
    }
    Ok(ExitCode::SUCCESS)
}

fn run(args: &Args) -> io::Result<ExitCode> {
    let runtime = Runtime::new()?;
    if args.loops > 1 {
        return crawl_on_loops(&runtime, args);
    }
    let joined = match &args.frontier {
        Some(url) if args.frontier_clear || args.report_only => {
            return frontier_command(args, url);
        }
        Some(url) => Some(runtime.block_on(joining::join(args, url))??),
        None => None,
    };
    match joined {
        Some(joined) => crawl(&runtime, &joined.args, joined.roots, Some(joined.shared)),
        None => crawl(&runtime, args, Vec::new(), None),
    }
}

/// The text report, fed by `crawler` as it records each statistic and
/// skipped URL (when `wanted`). The first error it meets (a temporary file
/// it cannot write) becomes the report's error.
fn text_report(
    records: &Records,
    wanted: bool,
    list_skipped: bool,
) -> Rc<RefCell<io::Result<TextReport>>> {
    let text = Rc::new(RefCell::new(Ok(TextReport::new(list_skipped))));
    if !wanted {
        return text;
    }
    fn add(
        text: &RefCell<io::Result<TextReport>>,
        f: impl FnOnce(&mut TextReport) -> io::Result<()>,
    ) {
        let mut text = text.borrow_mut();
        if let Ok(report) = text.as_mut()
            && let Err(e) = f(report)
        {
            *text = Err(e);
        }
    }
    let stats_text = Rc::clone(&text);
    records.on_stat(move |stat| add(&stats_text, |report| report.stat(stat)));
    let skips_text = Rc::clone(&text);
    records.on_skip(move |skip| add(&skips_text, |report| report.skip(skip)));
    text
}

/// The roots of a crawl: a shared crawl's, the arguments', or the demo
/// site's, started here (kept running, in the second value, until the
/// report is written).
fn roots(
    args: &Args,
    shared_roots: Vec<Url>,
    shared: bool,
) -> io::Result<(Vec<Url>, Option<DemoSite>)> {
    if shared {
        return Ok((shared_roots, None));
    }
    if !args.roots.is_empty() {
        return Ok((args.roots.clone(), None));
    }
    if args.state.is_some() {
        // The demo site's port changes from run to run, and with it
        // the crawl: there would be nothing to resume.
        Args::command()
            .error(
                clap::error::ErrorKind::MissingRequiredArgument,
                "--state needs the roots of the crawl (the built-in demo site's \
                 address changes from run to run)",
            )
            .exit();
    }
    let site = DemoSite::start_default()?;
    let root = site.url("/");
    eprintln!("No root given: crawling the demo site, started in-process at {root}");
    Ok((
        vec![parse_root(&root).map_err(io::Error::other)?],
        Some(site),
    ))
}

/// Stdout, for the report. Into a pipe or a file, JSON lines go out in
/// blocks, as C's stdio does it: a write per line would be a system call
/// per URL on the loop thread, and a wakeup for whatever reads the pipe.
/// A terminal still sees each line at once.
type Out = Rc<RefCell<ReportOut<BufWriter<io::Stdout>>>>;

/// The JSON Lines report, written by `crawler` as it records each
/// statistic and skipped URL; `listing` decides which skipped URLs are
/// listed (at most `MAX_LISTED_SKIPS` per reason).
fn json_report(records: &Records, out: &Out, listing: &Rc<RefCell<reporting::SkipListing>>) {
    let each_line = io::stdout().is_terminal();
    // A closed stdout (`| head`) must not stop the crawl.
    let write_line = move |out: &RefCell<ReportOut<BufWriter<io::Stdout>>>, line: String| {
        let mut out = out.borrow_mut();
        let _ = writeln!(out, "{line}");
        if each_line {
            let _ = out.flush();
        }
    };
    let stats_out = Rc::clone(out);
    records.on_stat(move |stat| write_line(&stats_out, reporting::json_line(stat)));
    let skips_out = Rc::clone(out);
    let listing = Rc::clone(listing);
    records.on_skip(move |skip| {
        if listing.borrow_mut().list(skip.reason) {
            write_line(&skips_out, reporting::json_skipped(skip));
        }
    });
}

/// Runs the crawl on `runtime` until it ends or Ctrl-C, with the progress
/// line if `show_progress`, taking up `resume` first. Returns how it ended,
/// and the Ctrl-C watcher, which keeps counting while the report is
/// written.
fn run_crawl(
    runtime: &Runtime,
    crawler: &Rc<Crawler>,
    resume: Option<assembly::Resume>,
    show_progress: bool,
) -> io::Result<(Outcome, Option<Interrupt>)> {
    runtime.block_on(async {
        let interrupt = Interrupt::install()
            .inspect_err(|e| log::warn!(target: LOG, "Ctrl-C will not print a report: {e}"))
            .ok();
        let progress = show_progress.then(|| {
            runtime::TaskBuilder::new().name("progress").spawn({
                let crawler = Rc::clone(crawler);
                async move { progress::run(|| progress::line(&crawler)).await }
            })
        });
        // `kill -USR1 PID` prints the task table. The main future watches
        // for it beside Ctrl-C, so the table holds only the crawl's tasks.
        let ps = Ps::install()
            .inspect_err(|e| log::warn!(target: LOG, "SIGUSR1 will not print the task table: {e}"))
            .ok();
        let ctrl_c = async {
            match &interrupt {
                Some(interrupt) => interrupt.wait().await,
                None => std::future::pending().await,
            }
        };
        let usr1 = async {
            match &ps {
                Some(ps) => ps.serve().await,
                None => std::future::pending().await,
            }
        };
        let stop = async {
            // `usr1` never ends: only Ctrl-C stops the crawl early.
            let _ = runtime::select(ctrl_c, usr1).await;
        };
        // A crawl taken up from its journal: after the report's sinks,
        // so that they hear what was done before.
        if let Some(resume) = resume {
            resume.take_up(crawler);
        }
        let outcome = crawler.crawl_until(stop).await;
        if let Some(progress) = progress {
            progress.cancel();
            progress::finish(&progress::line(crawler));
        }
        (outcome, interrupt)
    })
}

/// Where the report goes: stdout, fed by `records` as it records each
/// statistic and skipped URL (as JSON lines, or kept for the text report),
/// and which skipped URLs are listed.
struct Sinks {
    out: Out,
    listing: Rc<RefCell<reporting::SkipListing>>,
    text: Rc<RefCell<io::Result<TextReport>>>,
}

impl Sinks {
    /// The sinks `args` ask for, hearing `records`.
    fn new(args: &Args, records: &Records) -> Sinks {
        let out: Out = Rc::new(RefCell::new(ReportOut::new(BufWriter::new(io::stdout()))));
        let listing = Rc::new(RefCell::new(reporting::SkipListing::default()));
        if args.report == Report::Json {
            json_report(records, &out, &listing);
        }
        let text = text_report(records, args.report == Report::Text, args.verbose > 0);
        Sinks { out, listing, text }
    }
}

/// Writes the report's end: the text report, or the JSON report's
/// summary (its lines went out as the crawl went).
fn write_report(
    args: &Args,
    crawler: &impl Reported,
    outcome: Outcome,
    sinks: &Sinks,
    interrupt: Option<Interrupt>,
) -> io::Result<()> {
    let Sinks { out, listing, text } = sinks;
    let mut out = out.borrow_mut();
    out.report_begins(interrupt);
    let written = match args.report {
        Report::Text => {
            let summary = reporting::summary(crawler, outcome);
            let text = text.replace(Ok(TextReport::new(false)));
            text.and_then(|report| report.write(&summary, &mut *out))
        }
        Report::Json => listing
            .borrow()
            .json_more()
            .try_for_each(|more| writeln!(out, "{more}"))
            .and_then(|()| {
                writeln!(
                    out,
                    "{}",
                    reporting::json_summary(&reporting::summary(crawler, outcome))
                )
            }),
    };
    match written.and_then(|()| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(e),
        _ => Ok(()),
    }
}

/// Crawls `roots` (or `args`' roots, or the demo site), alone or as part
/// of a `shared` crawl, and reports.
fn crawl(
    runtime: &Runtime,
    args: &Args,
    shared_roots: Vec<Url>,
    shared: Option<Shared>,
) -> io::Result<ExitCode> {
    let is_shared = shared.is_some();
    // Keeps the demo site running until the report is written.
    let (roots, _site) = roots(args, shared_roots, is_shared)?;
    let (state, archive) = open_state(args, &roots)?;
    let journal = state.as_ref().map(|(journal, _)| Rc::clone(journal));
    let plugins = Plugins {
        // --state with --frontier is a usage error.
        journal: state.filter(|_| !is_shared),
        shared,
        exchanges: archive
            .as_ref()
            .map(|archive| Rc::clone(archive) as Rc<dyn HearExchanges>),
        shard: None,
    };
    let (crawler, resume) = assembly::build(roots, args.config(), plugins)?;
    let crawler = Rc::new(crawler);
    let sinks = Sinks::new(args, crawler.records());
    let (outcome, interrupt) = run_crawl(runtime, &crawler, resume, args.progress.enabled())?;
    if outcome == Outcome::Interrupted {
        eprintln!("Interrupted");
    }
    if let (Outcome::Lost, Some(url)) = (outcome, &args.frontier) {
        // Why, and where the crawl's state is (gone, if it was cleared).
        eprintln!(
            "Stopped: {}.",
            crawler
                .stopped_by()
                .unwrap_or_else(|| format!("lost redis at {url}. {STATE_KEPT}"))
        );
    }
    // The journal is complete before the report says so; if it could not
    // be written, the report still comes, and then the error.
    let saved = journal.as_ref().map_or(Ok(()), |journal| journal.close());
    if let (Some(dir), Outcome::Interrupted, Ok(())) = (&args.state, outcome, &saved) {
        eprintln!(
            "The crawl's state is saved in {}: run the same command again to resume it.",
            dir.display()
        );
    }
    write_report(args, &crawler, outcome, &sinks, interrupt)?;
    saved?;
    if let Some(archive) = archive {
        finish_archive(&archive)?;
    }
    Ok(if outcome == Outcome::Interrupted {
        ExitCode::from(EXIT_INTERRUPTED)
    } else if outcome == Outcome::Lost {
        ExitCode::FAILURE
    } else if is_shared {
        // Another process may have fetched the roots.
        ExitCode::SUCCESS
    } else if !crawler.any_root_fetched() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Waits for the archive to be written, and says how much it holds.
fn finish_archive(archive: &Archive) -> io::Result<()> {
    let archived = archive.finish()?;
    log::info!(target: LOG,
        "archived {} exchanges in {} ({} bytes)",
        archived.exchanges,
        archive.path().display(),
        archived.bytes
    );
    Ok(())
}

/// Crawls `args`' roots (or the demo site) on `--loops` event loops, and
/// reports: the report is made here, on the main thread, from the records
/// each loop sends as it makes them, into the same sinks as one loop's.
fn crawl_on_loops(runtime: &Runtime, args: &Args) -> io::Result<ExitCode> {
    if let Some(option) = args.not_with_loops() {
        Args::command()
            .error(
                clap::error::ErrorKind::ArgumentConflict,
                format!(
                    "--loops {} cannot be used with {option} yet: run that crawl on one loop",
                    args.loops
                ),
            )
            .exit();
    }
    let (roots, _site) = roots(args, Vec::new(), false)?;
    let (_, archive) = open_state(args, &roots)?;
    let mut config = args.config();
    let records = Rc::new(Records::new(&roots, config.keep_records, Vec::new()));
    // Each loop keeps nothing: what it records comes here.
    config.keep_records = false;
    // The loops are the cores: by default each parses on its own thread.
    if args.parse_threads.is_none() {
        config.parse_threads = 0;
    }
    let sinks = Sinks::new(args, &records);
    let (ended, interrupt) = runtime.block_on(async {
        let interrupt = Interrupt::install()
            .inspect_err(|e| log::warn!(target: LOG, "Ctrl-C will not print a report: {e}"))
            .ok();
        let (heard_tx, mut heard) = runtime::mpsc::channel();
        let archive = archive.as_ref().map(|a| a.handle());
        let spread = spread::start(
            &roots,
            &config,
            usize::from(args.loops),
            &heard_tx,
            archive.as_ref(),
        )?;
        drop(heard_tx);
        let stopper = spread.stopper();
        let started = std::time::Instant::now();
        let line = {
            let (records, pending) = (Rc::clone(&records), spread.pending());
            move || {
                progress::line_of_loops(
                    records.done_count(),
                    records.errors(),
                    pending.load(std::sync::atomic::Ordering::Relaxed),
                    started.elapsed().as_secs_f64(),
                )
            }
        };
        let shown = args.progress.enabled().then(|| {
            let line = line.clone();
            runtime::TaskBuilder::new()
                .name("progress")
                .spawn(async move { progress::run(line).await })
        });
        let ctrl_c = async {
            if let Some(interrupt) = &interrupt {
                interrupt.wait().await;
                stopper.stop();
            }
            std::future::pending::<std::convert::Infallible>().await
        };
        let ended = match runtime::select(spread.finish(&mut heard, &records), ctrl_c).await {
            runtime::Either::Left(ended) => ended?,
            runtime::Either::Right(never) => match never {},
        };
        if let Some(shown) = shown {
            shown.cancel();
            progress::finish(&line());
        }
        io::Result::Ok((ended, interrupt))
    })??;
    let outcome = ended.outcome();
    if outcome == Outcome::Interrupted {
        eprintln!("Interrupted");
    }
    let merged = Merged {
        records: &records,
        ended: &ended,
        max_tasks: config.max_tasks * usize::from(args.loops),
    };
    write_report(args, &merged, outcome, &sinks, interrupt)?;
    if let Some(archive) = archive {
        finish_archive(&archive)?;
    }
    Ok(if outcome == Outcome::Interrupted {
        ExitCode::from(EXIT_INTERRUPTED)
    } else if !records.any_root_fetched() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
