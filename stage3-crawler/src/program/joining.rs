//! The command line's side of a shared crawl (`--frontier`): creating the
//! crawl or joining it, with the rules every process must apply; the
//! merged report (`--report-only`); and `--frontier-clear`.
//!
//! A crawl's identity, kept in Redis, is its roots and its rules: the
//! options that decide which URLs are fetched and how hard a host is hit.
//! The first process writes it; a process that joins takes the rules from
//! it, so that `stage3-crawler --frontier URL` needs nothing else, and is
//! refused only for an option it passes explicitly that differs.

use std::io::{self, Write};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use redis_client::RedisUrl;
use regex::Regex;
use serde::{Deserialize, Serialize};
use url::Url;

use crate::keeping::journal::stat_from_json;
use crate::polite::sitemap::SitemapOutcome;
use crate::program::cli::Args;
use crate::report::reporting::{self, Crawl};
use crate::sharing::frontier::{Frontier, Settings};
use crate::sharing::shared::{Shared, root_link};
use crate::skipped::{SkipReason, Skipped};
use crate::stats::FetchStatistic;

/// The identity's format; a newer or older one is refused (2: `seen` is a
/// hash, and a crawl may have shards; 3: leases are given in grants, and
/// the report's records leave out what Redis adds).
const FORMAT: u32 = 3;

/// How long a process without roots waits for the crawl to be created.
pub const JOIN_WAIT: Duration = Duration::from_secs(30);

/// Connections to Redis per process: the feeder, the renewer, and
/// workers completing URLs.
const CONNECTIONS: usize = 4;

/// The options every process of a shared crawl applies alike.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharedRules {
    lenient: bool,
    exclude: Option<String>,
    max_pages: Option<u64>,
    ignore_robots: bool,
    user_agent: String,
    max_redirect: u32,
    max_url_length: u32,
    max_path_repetition: u32,
    max_query_variants: u32,
    /// Absent in crawls made before --max-depth could be shared.
    #[serde(default)]
    max_depth: Option<u32>,
    /// Absent in crawls made before --sitemaps could be shared.
    #[serde(default)]
    sitemaps: bool,
    per_host: u32,
    delay_ms: u64,
    max_crawl_delay_ms: u64,
    lease_ms: u64,
    /// Absent in crawls made before --max-body was a rule of the crawl:
    /// each process then kept its own.
    #[serde(default)]
    max_body: Option<u64>,
}

/// Which options of the command line are the crawl's rules (decided when
/// the crawl is created, taken from Redis by every process that joins it,
/// refused when a joiner passes another value: what they decide must not
/// depend on which process fetched a URL) and which are each process's
/// own (how it runs and reports, and how hard it tries over its own
/// network). Every option is in this table: a test walks `--help`.
pub const OPTIONS: &[(&str, Scope)] = &[
    ("roots", Scope::Crawl),
    ("strict", Scope::Crawl),
    ("lenient", Scope::Crawl),
    ("exclude", Scope::Crawl),
    ("max_pages", Scope::Crawl),
    ("ignore_robots", Scope::Crawl),
    ("user_agent", Scope::Crawl),
    ("max_redirect", Scope::Crawl),
    ("max_url_length", Scope::Crawl),
    ("max_path_repetition", Scope::Crawl),
    ("max_query_variants", Scope::Crawl),
    ("max_depth", Scope::Crawl),
    ("sitemaps", Scope::Crawl),
    ("per_host", Scope::Crawl),
    ("delay", Scope::Crawl),
    ("max_crawl_delay", Scope::Crawl),
    ("lease", Scope::Crawl),
    // A body over it fails its URL, whoever fetched it.
    ("max_body", Scope::Crawl),
    ("max_tasks", Scope::Process),
    // Tries and timeouts answer this process's network, not the site.
    ("max_tries", Scope::Process),
    ("connect_timeout", Scope::Process),
    ("read_timeout", Scope::Process),
    ("fetch_timeout", Scope::Process),
    ("resolve", Scope::Process),
    ("ca_file", Scope::Process),
    // How this process talks to a server, not what it fetches.
    ("http2", Scope::Process),
    ("http2_prior_knowledge", Scope::Process),
    // Where this process's requests leave from.
    ("proxy", Scope::Process),
    // A shared crawl keeps no cookies at all (see --help).
    ("no_cookies", Scope::Process),
    ("no_proxy", Scope::Process),
    ("parse_threads", Scope::Process),
    ("loops", Scope::Process),
    ("verbose", Scope::Process),
    ("quiet", Scope::Process),
    ("report", Scope::Process),
    ("progress", Scope::Process),
    ("warc", Scope::Process),
    ("state", Scope::Process),
    ("recrawl", Scope::Process),
    ("frontier", Scope::Process),
    ("report_only", Scope::Process),
    ("frontier_clear", Scope::Process),
    ("frontier_patience", Scope::Process),
];

/// Whose an option is, in a shared crawl (see [`OPTIONS`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The crawl's: the roots, and the rules in its identity.
    Crawl,
    /// Each process's own.
    Process,
}

/// What the crawl's `identity` in Redis holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Identity {
    format: u32,
    roots: Vec<String>,
    rules: SharedRules,
}

impl SharedRules {
    /// The rules `args` ask for.
    pub fn of(args: &Args) -> SharedRules {
        SharedRules {
            lenient: args.lenient,
            exclude: args.exclude.as_ref().map(|r| r.as_str().to_string()),
            max_pages: args.max_pages,
            ignore_robots: args.ignore_robots,
            user_agent: args.user_agent.clone(),
            max_redirect: args.max_redirect,
            max_url_length: args.max_url_length,
            max_path_repetition: args.max_path_repetition,
            max_query_variants: args.max_query_variants,
            max_depth: args.max_depth,
            sitemaps: args.sitemaps,
            per_host: args.per_host,
            delay_ms: millis(args.delay),
            max_crawl_delay_ms: millis(args.max_crawl_delay),
            lease_ms: millis(args.lease),
            max_body: Some(args.max_body),
        }
    }

    /// Each rule: the options that set it, its name, and its value.
    fn each(&self) -> Vec<(&'static [&'static str], &'static str, String)> {
        let ms = |n: u64| format!("{:?}", Duration::from_millis(n));
        let or_none = |v: Option<String>| v.unwrap_or_else(|| "none".into());
        vec![
            (
                &["lenient", "strict"],
                "host matching",
                (if self.lenient {
                    "--lenient"
                } else {
                    "--strict"
                })
                .into(),
            ),
            (&["exclude"], "--exclude", or_none(self.exclude.clone())),
            (
                &["max_pages"],
                "--max-pages",
                or_none(self.max_pages.map(|n| n.to_string())),
            ),
            (
                &["ignore_robots"],
                "--ignore-robots",
                self.ignore_robots.to_string(),
            ),
            (&["user_agent"], "--user-agent", self.user_agent.clone()),
            (
                &["max_redirect"],
                "--max-redirect",
                self.max_redirect.to_string(),
            ),
            (
                &["max_url_length"],
                "--max-url-length",
                self.max_url_length.to_string(),
            ),
            (
                &["max_path_repetition"],
                "--max-path-repetition",
                self.max_path_repetition.to_string(),
            ),
            (
                &["max_query_variants"],
                "--max-query-variants",
                self.max_query_variants.to_string(),
            ),
            (
                &["max_depth"],
                "--max-depth",
                or_none(self.max_depth.map(|n| n.to_string())),
            ),
            (&["sitemaps"], "--sitemaps", self.sitemaps.to_string()),
            (&["per_host"], "--per-host", self.per_host.to_string()),
            (&["delay"], "--delay", ms(self.delay_ms)),
            (
                &["max_crawl_delay"],
                "--max-crawl-delay",
                ms(self.max_crawl_delay_ms),
            ),
            (&["lease"], "--lease", ms(self.lease_ms)),
            (
                &["max_body"],
                "--max-body",
                // A crawl older than the rule has none: the joiner's own.
                or_none(self.max_body.map(|n| n.to_string())),
            ),
        ]
    }

    /// The options given on the command line (`explicit`) that differ
    /// from the crawl's, in words.
    fn conflicts(&self, crawl: &SharedRules, explicit: &[String]) -> Vec<String> {
        // Only the crawl's rules can conflict: the rest is each process's.
        let explicit: Vec<&String> = explicit
            .iter()
            .filter(|id| {
                OPTIONS
                    .iter()
                    .any(|(option, scope)| option == id && *scope == Scope::Crawl)
            })
            .collect();
        self.each()
            .into_iter()
            .zip(crawl.each())
            .filter(|((ids, _, ours), (_, _, theirs))| {
                ours != theirs && ids.iter().any(|id| explicit.iter().any(|e| *e == id))
            })
            .map(|((_, name, ours), (_, _, theirs))| {
                format!("{name} is {ours} here, {theirs} in the crawl")
            })
            .collect()
    }

    /// Refuses rules that no command line could have set. They are read
    /// from Redis, which anyone who can reach it can write: a per-host of
    /// 0 would leave every process waiting for a free slot forever, and a
    /// User-Agent with a line break would add headers to every request.
    /// Each rule goes through the command line's own check.
    fn check(&self) -> Result<(), String> {
        crate::program::cli::parse_user_agent(&self.user_agent)
            .map_err(|e| format!("--user-agent: {e}"))?;
        for (name, n) in [
            ("--per-host", self.per_host),
            ("--max-url-length", self.max_url_length),
            ("--max-path-repetition", self.max_path_repetition),
            ("--max-query-variants", self.max_query_variants),
        ] {
            if n == 0 {
                return Err(format!("{name} is 0; it must be at least 1"));
            }
        }
        if self.max_pages == Some(0) {
            return Err("--max-pages is 0; it must be at least 1".into());
        }
        if self.max_body == Some(0) {
            return Err("--max-body is 0; it must be at least 1".into());
        }
        type Parse = fn(&str) -> Result<Duration, String>;
        for (name, ms, parse) in [
            (
                "--delay",
                self.delay_ms,
                crate::program::cli::parse_gap as Parse,
            ),
            (
                "--max-crawl-delay",
                self.max_crawl_delay_ms,
                crate::program::cli::parse_gap,
            ),
            (
                "--lease",
                self.lease_ms,
                crate::program::cli::parse_duration,
            ),
        ] {
            parse(&format!("{ms}ms")).map_err(|e| format!("{name}: {e}"))?;
        }
        Ok(())
    }

    /// `args` with these rules in place of theirs.
    fn apply(&self, args: &Args) -> io::Result<Args> {
        self.check().map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("the crawl's rules in Redis are not ones a command line can set: {e}"),
            )
        })?;
        let mut args = args.clone();
        args.lenient = self.lenient;
        args.strict = !self.lenient;
        args.exclude = match &self.exclude {
            Some(re) => Some(Regex::new(re).map_err(|e| {
                io::Error::other(format!("the crawl's --exclude {re:?} is not a regex: {e}"))
            })?),
            None => None,
        };
        args.max_pages = self.max_pages;
        args.ignore_robots = self.ignore_robots;
        args.user_agent.clone_from(&self.user_agent);
        args.max_redirect = self.max_redirect;
        args.max_url_length = self.max_url_length;
        args.max_path_repetition = self.max_path_repetition;
        args.max_query_variants = self.max_query_variants;
        args.max_depth = self.max_depth;
        args.sitemaps = self.sitemaps;
        args.per_host = self.per_host;
        args.delay = Duration::from_millis(self.delay_ms);
        args.max_crawl_delay = Duration::from_millis(self.max_crawl_delay_ms);
        args.lease = Duration::from_millis(self.lease_ms);
        if let Some(max_body) = self.max_body {
            args.max_body = max_body;
        }
        Ok(args)
    }

    fn settings(&self) -> Settings {
        Settings {
            per_host: self.per_host as usize,
            max_pages: self.max_pages,
            robots: !self.ignore_robots,
            delay: Duration::from_millis(self.delay_ms),
            lease: Duration::from_millis(self.lease_ms),
            max_query_variants: self.max_query_variants as usize,
            max_depth: self.max_depth,
        }
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// A process's way into a shared crawl: its roots, the options it runs
/// with (the crawl's rules in place), and its part of the frontier.
pub struct Joined {
    /// The crawl's roots.
    pub roots: Vec<Url>,
    /// The command line, with the crawl's rules.
    pub args: Args,
    /// The frontier, for the crawler.
    pub shared: Shared,
}

// ANCHOR: join
/// Creates the crawl `url` names, with `args`' roots and rules, or joins
/// it. Without roots, waits up to [`JOIN_WAIT`] for it to be created.
pub async fn join(args: &Args, url: &RedisUrl) -> io::Result<Joined> {
    // An unreachable Redis at the start is reported at once.
    let frontier = Frontier::new(url.clone(), CONNECTIONS, Duration::ZERO);
    let ours = Identity {
        format: FORMAT,
        roots: args.roots.iter().map(Url::to_string).collect(),
        rules: SharedRules::of(args),
    };
    let existing = if args.roots.is_empty() {
        Some(wait_for_crawl(&frontier, url).await?)
    } else {
        let json = serde_json::to_string(&ours).map_err(io::Error::other)?;
        let roots: Vec<_> = args.roots.iter().map(root_link).collect();
        frontier
            .create(&json, &ours.rules.settings(), &roots, args.max_redirect)
            .await?
    };
    let identity = match existing {
        None => ours,
        Some(json) => {
            let theirs = parse_identity(&json, url)?;
            refuse_conflicts(&ours, &theirs, args, url)?;
            theirs
        }
    };
    let roots = identity
        .roots
        .iter()
        .map(|r| Url::parse(r))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| io::Error::other(format!("the crawl {url} has a bad root: {e}")))?;
    frontier.add_workers(args.max_tasks as usize).await?;
    frontier.set_patience(args.frontier_patience);
    let lease = Duration::from_millis(identity.rules.lease_ms);
    let args = identity.rules.apply(args)?;
    let every_link = args.max_depth.is_some() && args.sitemaps;
    Ok(Joined {
        roots,
        shared: Shared::new(frontier, lease, every_link),
        args,
    })
}
// ANCHOR_END: join

async fn wait_for_crawl(frontier: &Frontier, url: &RedisUrl) -> io::Result<String> {
    let deadline = runtime::now() + JOIN_WAIT;
    loop {
        if let Some(identity) = frontier.identity().await? {
            return Ok(identity);
        }
        if runtime::now() >= deadline {
            return Err(io::Error::other(format!(
                "there is no crawl at {url} (waited {JOIN_WAIT:?}): start it with its roots"
            )));
        }
        runtime::sleep(Duration::from_millis(100)).await;
    }
}

fn parse_identity(json: &str, url: &RedisUrl) -> io::Result<Identity> {
    #[derive(Deserialize)]
    struct Format {
        format: u32,
    }
    let format = serde_json::from_str::<Format>(json).map(|f| f.format);
    if let Ok(format) = format
        && format > FORMAT
    {
        return Err(io::Error::other(format!(
            "the crawl at {url} was made by a newer stage3-crawler (format {format}, this one reads {FORMAT})"
        )));
    }
    if let Ok(format) = format
        && format < FORMAT
    {
        return Err(io::Error::other(format!(
            "the crawl at {url} was made by an older stage3-crawler (format {format}, this one \
             reads {FORMAT}): finish it with that one, or remove it with --frontier-clear"
        )));
    }
    serde_json::from_str(json).map_err(|e| {
        io::Error::other(format!(
            "{url} holds something that is not a crawl of stage3-crawler ({e})"
        ))
    })
}

fn refuse_conflicts(
    ours: &Identity,
    theirs: &Identity,
    args: &Args,
    url: &RedisUrl,
) -> io::Result<()> {
    if !args.roots.is_empty() && ours.roots != theirs.roots {
        return Err(io::Error::other(format!(
            "the crawl at {url} has other roots ({}): join it without roots, or name another crawl",
            theirs.roots.join(" ")
        )));
    }
    let conflicts = ours.rules.conflicts(&theirs.rules, &args.explicit);
    if conflicts.is_empty() {
        return Ok(());
    }
    Err(io::Error::other(format!(
        "the crawl at {url} has other rules: {}; leave them out to take the crawl's",
        conflicts.join("; ")
    )))
}

/// Prints the report of the whole shared crawl, from Redis: every URL
/// once, whichever process fetched or skipped it.
pub async fn merged_report(
    url: &RedisUrl,
    json: bool,
    list_skipped: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    let frontier = Frontier::new(url.clone(), 1, Duration::ZERO);
    if frontier.identity().await?.is_none() {
        return Err(io::Error::other(format!("there is no crawl at {url}")));
    }
    let records = frontier.records().await?;
    let sitemaps = frontier
        .sitemap_outcomes()
        .await?
        .into_iter()
        .map(|(url, outcome)| SitemapOutcome { url, outcome })
        .collect();
    let status = frontier.status().await?;
    let mut done = Vec::new();
    let mut skipped = Vec::new();
    let mut unreadable = 0;
    for record in &records {
        match parse_record(record) {
            Some(Record::Fetched(stat)) => done.push(stat),
            Some(Record::Skipped(skip)) => skipped.push(skip),
            None => {
                log::error!("{url}: a record this crawler cannot read: {record}");
                unreadable += 1;
            }
        }
    }
    // HSCAN may return a field twice while the hash changes (a crawl still
    // running): each URL once.
    done.sort_by(|a, b| a.url.cmp(&b.url));
    done.dedup_by(|a, b| a.url == b.url);
    skipped.sort_by(|a, b| a.url.cmp(&b.url));
    skipped.dedup_by(|a, b| a.url == b.url);
    let end_ms = if status.finished_ms > 0 {
        status.finished_ms
    } else {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, millis)
    };
    let crawl = Crawl {
        done: &done,
        skipped: &skipped,
        tally: reporting::Tally::of(&done, &skipped),
        secs: end_ms.saturating_sub(status.created_ms) as f64 / 1000.0,
        max_tasks: status.workers as usize,
        todo: status.pending as usize,
        connections: 0,
        interrupted: status.pending > 0,
        robots: Vec::new(),
        sitemaps,
        // A shared crawl's processes keep their waits to themselves.
        waits: Vec::new(),
        waits_unlisted: 0,
    };
    if json {
        for stat in &done {
            writeln!(out, "{}", reporting::json_line(stat))?;
        }
        let mut listing = reporting::SkipListing::default();
        for skip in &skipped {
            if listing.list(skip.reason) {
                writeln!(out, "{}", reporting::json_skipped(skip))?;
            }
        }
        for more in listing.json_more() {
            writeln!(out, "{more}")?;
        }
        let summary = reporting::summary_of(&crawl);
        writeln!(out, "{}", reporting::json_summary(&summary))?;
    } else {
        reporting::report_of(&crawl, list_skipped, out)?;
    }
    // The report is short of these URLs: say so in the exit status too.
    if unreadable > 0 || status.unreadable > 0 {
        return Err(io::Error::other(format!(
            "{} records and {} queued URLs of the crawl could not be read, and are not in \
             the report",
            unreadable, status.unreadable
        )));
    }
    Ok(())
}

enum Record {
    Fetched(FetchStatistic),
    Skipped(Skipped),
}

fn parse_record(record: &str) -> Option<Record> {
    let v: serde_json::Value = serde_json::from_str(record).ok()?;
    match v.get("skipped") {
        Some(reason) => Some(Record::Skipped(Skipped {
            url: v["url"].as_str()?.to_string(),
            reason: SkipReason::from_name(reason.as_str()?)?,
            from: v["from"].as_str().map(str::to_string),
        })),
        None => stat_from_json(&v).map(Record::Fetched),
    }
}

/// Deletes every key of the crawl at `url`; how many there were.
pub async fn clear(url: &RedisUrl) -> io::Result<usize> {
    Frontier::new(url.clone(), 1, Duration::ZERO).clear().await
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, Parser};
    use std::collections::BTreeSet;

    fn rules() -> SharedRules {
        SharedRules::of(&Args::try_parse_from(["c", "x.org"]).unwrap())
    }

    #[test]
    fn rules_no_command_line_could_set_are_refused() {
        let args = Args::try_parse_from(["c", "x.org"]).unwrap();
        assert!(rules().apply(&args).is_ok());
        let refused = |change: fn(&mut SharedRules)| {
            let mut r = rules();
            change(&mut r);
            let err = r.apply(&args).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidData);
            err.to_string()
                .strip_prefix("the crawl's rules in Redis are not ones a command line can set: ")
                .unwrap()
                .to_string()
        };
        assert_eq!(
            refused(|r| r.user_agent = "x\r\nX-Injected: 1".into()),
            "--user-agent: the User-Agent may hold printable ASCII only, not '\\r'"
        );
        assert_eq!(
            refused(|r| r.per_host = 0),
            "--per-host is 0; it must be at least 1"
        );
        assert_eq!(
            refused(|r| r.max_query_variants = 0),
            "--max-query-variants is 0; it must be at least 1"
        );
        assert_eq!(
            refused(|r| r.max_pages = Some(0)),
            "--max-pages is 0; it must be at least 1"
        );
        assert_eq!(
            refused(|r| r.delay_ms = u64::MAX),
            "--delay: \"18446744073709551615ms\" is longer than a day"
        );
        assert_eq!(
            refused(|r| r.lease_ms = 0),
            "--lease: \"0ms\" is not a usable duration"
        );
        assert_eq!(
            refused(|r| r.max_body = Some(0)),
            "--max-body is 0; it must be at least 1"
        );
    }

    #[test]
    fn every_option_of_help_is_the_crawl_s_or_the_process_s() {
        let command = Args::command();
        let listed: BTreeSet<&str> = command
            .get_arguments()
            .map(|arg| arg.get_id().as_str())
            .filter(|id| !matches!(*id, "help" | "version"))
            .collect();
        let classified: BTreeSet<&str> = OPTIONS.iter().map(|(id, _)| *id).collect();
        assert_eq!(listed, classified, "options --help lists against OPTIONS");
        assert_eq!(
            OPTIONS.len(),
            classified.len(),
            "an option twice in OPTIONS"
        );
        // The crawl's rules are exactly those its identity keeps (the
        // roots apart, which the identity holds on their own).
        let kept: BTreeSet<&str> = rules()
            .each()
            .into_iter()
            .flat_map(|(ids, _, _)| ids.iter().copied())
            .collect();
        let crawl: BTreeSet<&str> = OPTIONS
            .iter()
            .filter(|(id, scope)| *scope == Scope::Crawl && *id != "roots")
            .map(|(id, _)| *id)
            .collect();
        assert_eq!(kept, crawl);
    }

    #[test]
    fn a_joiner_takes_the_crawl_s_max_body_and_may_not_pass_another() {
        let crawl =
            SharedRules::of(&Args::try_parse_from(["c", "x.org", "--max-body", "1M"]).unwrap());
        let joiner = Args::try_parse_from(["c"]).unwrap();
        assert_eq!(crawl.apply(&joiner).unwrap().max_body, 1 << 20);
        let mut other = Args::try_parse_from(["c", "--max-body", "1K"]).unwrap();
        other.explicit = vec!["max_body".into()];
        assert_eq!(
            SharedRules::of(&other).conflicts(&crawl, &other.explicit),
            ["--max-body is 1024 here, 1048576 in the crawl"]
        );
        // A crawl made before the rule: the joiner keeps its own.
        let old = SharedRules {
            max_body: None,
            ..crawl
        };
        assert_eq!(old.apply(&other).unwrap().max_body, 1 << 10);
    }
}
