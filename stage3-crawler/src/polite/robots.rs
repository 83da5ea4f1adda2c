//! robots.txt, as RFC 9309 defines it: which group applies to us, which of
//! its rules wins for a URL, and the two records outside the rules that
//! crawlers honour, `Crawl-delay` and `Sitemap`.
//!
//! The file is read forgivingly, as the RFC asks: lines end in LF, CR or
//! CRLF, `#` starts a comment, keys are case-insensitive, unknown lines are
//! ignored, invalid UTF-8 is replaced, and only the first 500 KiB count.
//! Nothing in a file can make parsing or matching panic, or cost more than
//! time linear in the file and the URL.

use std::fmt;
use std::time::Duration;

use serde::{Serialize, Serializer};

use url::{Position, Url};

/// At most this much of a robots.txt is parsed: the RFC asks crawlers to
/// read at least 500 KiB, and lets them stop there.
pub const MAX_ROBOTS_BYTES: usize = 500 * 1024;

/// Rules kept for our group; the rest are ignored. Each URL is checked
/// against every rule, so this bounds the cost of a hostile file.
const MAX_RULES: usize = 10_000;

/// `Sitemap:` lines kept.
const MAX_SITEMAPS: usize = 1_000;

/// One `Allow` or `Disallow` line of our group.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Rule {
    allow: bool,
    /// Percent-encoding normalised; `*` is any run of characters, and a
    /// final `$` anchors the pattern at the end of the path.
    pattern: String,
}

/// The rules of one robots.txt that apply to one crawler.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Robots {
    rules: Vec<Rule>,
    crawl_delay: Option<Duration>,
    sitemaps: Vec<String>,
}

/// The records of the groups that name one user agent, gathered while the
/// file is read.
#[derive(Default)]
struct Gathered {
    /// Whether any group named it at all: a group with no rules still
    /// counts, and means "everything allowed".
    named: bool,
    rules: Vec<Rule>,
    crawl_delay: Option<Duration>,
}

impl Gathered {
    fn rule(&mut self, allow: bool, value: &str) {
        // An empty Allow or Disallow is no rule at all.
        if !value.is_empty() && self.rules.len() < MAX_RULES {
            let pattern = normalise(value);
            self.rules.push(Rule { allow, pattern });
        }
    }
}

/// Which of the two candidates the group being read belongs to.
#[derive(Clone, Copy, Default)]
struct Group {
    ours: bool,
    star: bool,
}

/// What an origin's rules were made from, so that a resumed crawl
/// (`--state`) can make them again without asking the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RobotsSource {
    /// A robots.txt file, as text (the parser reads it as UTF-8, replacing
    /// what is not).
    File(String),
    /// No rules: a 4xx, a file too large to read, too many redirects.
    AllowAll,
    /// Complete disallow: a 5xx.
    DisallowAll,
}

impl RobotsSource {
    /// A robots.txt file's body as the parser reads it: at most
    /// [`MAX_ROBOTS_BYTES`], cut at a line's end, as UTF-8. A byte-order
    /// mark before the first line is skipped, and so is the start of one
    /// (`EF` or `EF BB`), as Google's parser, the reference in practice,
    /// skips it: read as text, a partial mark would become U+FFFD, spoil
    /// the first line, and with it the first group's rules.
    pub fn text_of(body: &[u8]) -> String {
        let body = cut(body);
        let bom = body
            .iter()
            .zip(b"\xEF\xBB\xBF")
            .take_while(|(byte, mark)| byte == mark)
            .count();
        String::from_utf8_lossy(&body[bom..]).into_owned()
    }

    /// The rules, for the crawler whose product token is `token`.
    pub fn rules(&self, token: &str) -> Robots {
        match self {
            RobotsSource::File(text) => Robots::parse_text(text, token),
            RobotsSource::AllowAll => Robots::allow_all(),
            RobotsSource::DisallowAll => Robots::disallow_all(),
        }
    }
}

impl Robots {
    /// Parses `body` for the crawler whose product token is `token` (as
    /// `stage3-crawler`). Our group is every group that names the token,
    /// compared case-insensitively, all of them together; if none does,
    /// every `*` group; if there is neither, there are no rules.
    pub fn parse(body: &[u8], token: &str) -> Robots {
        Robots::parse_text(&RobotsSource::text_of(body), token)
    }

    /// [`parse`](Self::parse), of a file already read as text.
    fn parse_text(text: &str, token: &str) -> Robots {
        let (mut ours, mut star) = (Gathered::default(), Gathered::default());
        let mut group: Option<Group> = None;
        // Consecutive user-agent lines open one group together.
        let mut naming = false;
        let mut sitemaps = Vec::new();
        for (key, value) in records(text) {
            match key.as_str() {
                "user-agent" => {
                    let mut current = if naming {
                        group.unwrap_or_default()
                    } else {
                        Group::default()
                    };
                    current.ours |= agent_token(value).eq_ignore_ascii_case(token);
                    current.star |= value == "*";
                    ours.named |= current.ours;
                    star.named |= current.star;
                    group = Some(current);
                    naming = true;
                }
                // Not part of any group: it neither opens nor ends one.
                "sitemap" if !value.is_empty() && sitemaps.len() < MAX_SITEMAPS => {
                    sitemaps.push(value.to_string());
                }
                "allow" | "disallow" | "crawl-delay" => {
                    naming = false;
                    // Lines before the first user-agent belong to no one.
                    let Some(group) = group else { continue };
                    for (member, gathered) in [(group.ours, &mut ours), (group.star, &mut star)] {
                        if member {
                            record(gathered, &key, value);
                        }
                    }
                }
                // Records we do not know (Host, Clean-param ...) change
                // nothing, not even where a group ends.
                _ => {}
            }
        }
        let chosen = if ours.named { ours } else { star };
        Robots {
            rules: chosen.rules,
            crawl_delay: chosen.crawl_delay,
            sitemaps,
        }
    }

    /// No rules at all: a robots.txt that answered 4xx, or none asked for.
    pub fn allow_all() -> Robots {
        Robots::default()
    }

    /// The RFC's "complete disallow", for a robots.txt that answered 5xx.
    pub fn disallow_all() -> Robots {
        Robots {
            rules: vec![Rule {
                allow: false,
                pattern: "/".to_string(),
            }],
            ..Robots::default()
        }
    }

    /// Whether the crawler may fetch `url`. The rule with the longest
    /// pattern that matches the path (and query) decides; on a tie, Allow
    /// wins; with no match, the URL is allowed. `/robots.txt` itself always
    /// is.
    pub fn is_allowed(&self, url: &Url) -> bool {
        let target = &url[Position::BeforePath..Position::AfterQuery];
        let path = normalise(if target.is_empty() { "/" } else { target });
        if path == "/robots.txt" {
            return true;
        }
        let mut best: Option<&Rule> = None;
        for rule in self.rules.iter().filter(|r| matches(&r.pattern, &path)) {
            let better = best.is_none_or(|b| {
                let (len, best_len) = (rule.pattern.len(), b.pattern.len());
                len > best_len || (len == best_len && rule.allow && !b.allow)
            });
            if better {
                best = Some(rule);
            }
        }
        best.is_none_or(|rule| rule.allow)
    }

    /// The Crawl-delay of our group, if it gave a valid one (a number of
    /// seconds, fractions allowed). The caller caps it.
    pub fn crawl_delay(&self) -> Option<Duration> {
        self.crawl_delay
    }

    /// The `Sitemap:` lines of the whole file, as written, in order.
    pub fn sitemaps(&self) -> &[String] {
        &self.sitemaps
    }

    /// How many Allow and Disallow rules apply to us.
    pub fn rule_count(&self) -> usize {
        self.rules.len()
    }
}

/// A rule or a Crawl-delay line of one of the groups being gathered.
fn record(gathered: &mut Gathered, key: &str, value: &str) {
    match key {
        "allow" => gathered.rule(true, value),
        "disallow" => gathered.rule(false, value),
        "crawl-delay" if gathered.crawl_delay.is_none() => {
            gathered.crawl_delay = parse_delay(value);
        }
        _ => {}
    }
}

/// The first [`MAX_ROBOTS_BYTES`] of `body`, without a line the limit cut
/// in two (half a rule could mean the opposite of the whole one).
fn cut(body: &[u8]) -> &[u8] {
    if body.len() <= MAX_ROBOTS_BYTES {
        return body;
    }
    let head = &body[..MAX_ROBOTS_BYTES];
    match head.iter().rposition(|&b| b == b'\n' || b == b'\r') {
        Some(end) => &head[..end],
        None => &[],
    }
}

/// The `key: value` records of the file: keys lower-cased, values trimmed,
/// comments dropped. A line without a colon is a record when it is two
/// words apart (`Disallow /`), as Google's parser reads it: being lenient
/// there makes the crawl more polite, not less. Any other line is dropped.
fn records(text: &str) -> impl Iterator<Item = (String, &str)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    text.split(['\n', '\r']).filter_map(|line| {
        let line = line.split('#').next().unwrap_or("").trim();
        let (key, value) = match line.split_once(':') {
            Some(record) => record,
            None => {
                let (key, value) = line.split_once([' ', '\t'])?;
                let value = value.trim_start();
                if value.contains([' ', '\t']) {
                    return None;
                }
                (key, value)
            }
        };
        Some((key.trim().to_ascii_lowercase(), value.trim()))
    })
}

/// The product token a `User-agent:` line names: `Googlebot/2.1` names
/// `Googlebot`. The RFC allows letters, `_` and `-`; we take digits too,
/// so that a name like ours (`stage3-crawler`) can be named.
fn agent_token(value: &str) -> &str {
    let end = value
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .unwrap_or(value.len());
    &value[..end]
}

/// The product token of a User-Agent header: `stage3-crawler/0.1 (+url)`
/// gives `stage3-crawler`, the name robots.txt groups are matched against.
pub fn product_token(user_agent: &str) -> &str {
    agent_token(user_agent.trim())
}

/// A Crawl-delay value: seconds, as a non-negative decimal number.
fn parse_delay(value: &str) -> Option<Duration> {
    let seconds: f64 = value.parse().ok()?;
    if !seconds.is_finite() || seconds < 0.0 {
        return None;
    }
    // Finite but larger than a Duration holds: as long as can be; the
    // caller caps it at --max-crawl-delay anyway.
    Some(Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX))
}

/// The RFC's percent-encoding normalisation, applied to patterns and paths
/// alike before they are compared: characters outside ASCII become their
/// UTF-8 bytes percent-encoded, escapes of unreserved characters (letters,
/// digits, `-._~`) are decoded, and the hex digits of the others are
/// upper-cased. `%2F` stays `%2F`: it is not a `/`.
fn normalise(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let escape = (b == b'%')
            .then(|| Some((hex(*bytes.get(i + 1)?)?, hex(*bytes.get(i + 2)?)?)))
            .flatten();
        if let Some((hi, lo)) = escape {
            let decoded = hi << 4 | lo;
            if decoded.is_ascii_alphanumeric() || b"-._~".contains(&decoded) {
                out.push(char::from(decoded));
            } else {
                out.push_str(&format!("%{decoded:02X}"));
            }
            i += 3;
        } else if b.is_ascii() {
            out.push(char::from(b));
            i += 1;
        } else {
            out.push_str(&format!("%{b:02X}"));
            i += 1;
        }
    }
    out
}

fn hex(b: u8) -> Option<u8> {
    char::from(b)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

/// Whether `pattern` matches `path` from its start. `*` matches any run of
/// characters; a `$` at the very end anchors the pattern at the end.
///
/// The pattern is cut at its stars into literal pieces. The first must be
/// a prefix; each next one is found at its leftmost place after the one
/// before (leftmost is never worse, as a star can swallow anything
/// between); with `$`, the last must end the path. Each piece is looked
/// for once, so the cost is linear, however many stars a hostile file
/// writes.
fn matches(pattern: &str, path: &str) -> bool {
    let (pattern, anchored) = match pattern.strip_suffix('$') {
        Some(p) => (p, true),
        None => (pattern, false),
    };
    let mut pieces = pattern.split('*');
    let first = pieces.next().unwrap_or("");
    let Some(mut rest) = path.strip_prefix(first) else {
        return false;
    };
    let pieces: Vec<&str> = pieces.collect();
    let Some((last, middle)) = pieces.split_last() else {
        // No star: a prefix, or with `$` the whole path.
        return !anchored || rest.is_empty();
    };
    for piece in middle {
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    if anchored {
        rest.ends_with(last)
    } else {
        rest.contains(last)
    }
}

/// What robots.txt said for one origin, for the report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RobotsOutcome {
    /// `https://h:8443`.
    pub origin: String,
    /// The final status of the robots.txt fetch, after redirects; `None`
    /// when no response came.
    pub status: Option<u16>,
    /// What the crawl made of it, in words: "3 rules", "no robots.txt: no
    /// rules", "5xx: complete disallow", "unreachable: ...".
    pub verdict: String,
    /// The rules that apply to us.
    pub rules: usize,
    /// The Crawl-delay asked for, before the cap (in JSON, seconds).
    #[serde(serialize_with = "seconds")]
    pub crawl_delay: Option<Duration>,
    /// Whether the Crawl-delay was cut to `--max-crawl-delay`.
    pub capped: bool,
}

impl fmt::Display for RobotsOutcome {
    /// `http://h:8000: 2 rules, Crawl-delay 5s` (and ", capped" if it was).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.origin, self.verdict)?;
        if let Some(delay) = self.crawl_delay {
            write!(f, ", Crawl-delay {}s", delay.as_secs_f64())?;
            if self.capped {
                f.write_str(" (capped by --max-crawl-delay)")?;
            }
        }
        Ok(())
    }
}

fn seconds<S: Serializer>(delay: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match delay {
        Some(d) => s.serialize_f64(d.as_secs_f64()),
        None => s.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn robots(text: &str) -> Robots {
        Robots::parse(text.as_bytes(), "stage3-crawler")
    }

    fn allowed(r: &Robots, path: &str) -> bool {
        r.is_allowed(&Url::parse(&format!("http://h{path}")).unwrap())
    }

    #[test]
    fn our_group_beats_the_star_group() {
        let r = robots(
            "User-agent: *\nDisallow: /\n\n\
             User-agent: BadBot\nDisallow: /\n\n\
             User-agent: Stage3-Crawler\nDisallow: /private/\n",
        );
        assert!(allowed(&r, "/"));
        assert!(allowed(&r, "/public"));
        assert!(!allowed(&r, "/private/x"));
        assert_eq!(r.rule_count(), 1);
        // Another crawler gets the star group.
        let other = Robots::parse(b"User-agent: *\nDisallow: /\n", "otherbot");
        assert!(!allowed(&other, "/a"));
    }

    #[test]
    fn groups_that_name_us_combine_and_share_lines() {
        let r = robots(
            "User-agent: stage3-crawler\nDisallow: /a\n\
             User-agent: other\nDisallow: /b\n\
             User-agent: other2\nUser-agent: stage3-crawler/1.0\nDisallow: /c\n",
        );
        assert!(!allowed(&r, "/a"));
        assert!(allowed(&r, "/b"));
        assert!(!allowed(&r, "/c"));
    }

    #[test]
    fn a_group_naming_us_without_rules_allows_everything() {
        let r = robots("User-agent: *\nDisallow: /\nUser-agent: stage3-crawler\n");
        assert!(allowed(&r, "/x"));
    }

    #[test]
    fn a_longer_product_token_is_another_crawler() {
        // Googlebot-News is not Googlebot, and the other way round.
        let text = b"User-agent: Googlebot-News\nDisallow: /news\nUser-agent: *\nDisallow: /all\n";
        let r = Robots::parse(text, "Googlebot");
        assert!(allowed(&r, "/news"));
        assert!(!allowed(&r, "/all"));
        let r = Robots::parse(text, "googlebot-news");
        assert!(!allowed(&r, "/news"));
        assert!(allowed(&r, "/all"));
    }

    #[test]
    fn the_longest_match_wins_and_allow_wins_a_tie() {
        let r = robots(
            "User-agent: *\nDisallow: /private/\nAllow: /private/open.html\n\
             Allow: /tie\nDisallow: /tie\n",
        );
        assert!(!allowed(&r, "/private/secret.html"));
        assert!(allowed(&r, "/private/open.html"));
        assert!(allowed(&r, "/tie"));
        let r = robots("User-agent: *\nAllow: /p\nDisallow: /\n");
        assert!(allowed(&r, "/page"));
        assert!(!allowed(&r, "/other"));
    }

    #[test]
    fn wildcards_and_the_end_anchor() {
        let r = robots("User-agent: *\nDisallow: /*.pdf$\nDisallow: /search?\nDisallow: /a*b*c\n");
        assert!(!allowed(&r, "/files/report.pdf"));
        assert!(allowed(&r, "/files/report.pdf?download=1"));
        assert!(allowed(&r, "/files/report.pdfx"));
        assert!(!allowed(&r, "/search?q=x"));
        assert!(allowed(&r, "/search"));
        assert!(!allowed(&r, "/aXbYc/z"));
        assert!(allowed(&r, "/acb"));
        // A `$` that is not last is an ordinary character.
        let r = robots("User-agent: *\nDisallow: /a$b\n");
        assert!(!allowed(&r, "/a$b"));
        assert!(allowed(&r, "/a"));
        // `/` with `$` disallows only the root.
        let r = robots("User-agent: *\nDisallow: /$\n");
        assert!(!allowed(&r, "/"));
        assert!(allowed(&r, "/a"));
    }

    #[test]
    fn percent_encoding_is_normalised_on_both_sides() {
        let r =
            robots("User-agent: *\nDisallow: /%7Euser\nDisallow: /a%2fb\nDisallow: /caf\u{e9}\n");
        // %7E is `~`, an unreserved character.
        assert!(!allowed(&r, "/~user/x"));
        assert!(!allowed(&r, "/%7euser"));
        // %2F is not `/`, and hex case does not matter.
        assert!(!allowed(&r, "/a%2Fb"));
        assert!(allowed(&r, "/a/b"));
        // Non-ASCII in the file matches its UTF-8 escapes in the URL.
        assert!(!allowed(&r, "/caf%C3%A9"));
        assert_eq!(
            normalise("/foo/bar?baz=https://foo.bar"),
            "/foo/bar?baz=https://foo.bar"
        );
        assert_eq!(normalise("/%41%zz%"), "/A%zz%");
    }

    #[test]
    fn comments_bom_line_endings_and_odd_spacing() {
        let r = robots("\u{feff}User-Agent : *  # everyone\r\nDISALLOW:/x # no\rdisallow :  /y\n");
        assert!(!allowed(&r, "/x"));
        assert!(!allowed(&r, "/y"));
        assert!(allowed(&r, "/z"));
        // Empty Disallow: no rule. Rules before any user-agent: ignored.
        let r = robots("Disallow: /a\nUser-agent: *\nDisallow:\n");
        assert!(allowed(&r, "/a"));
        assert_eq!(r.rule_count(), 0);
        assert_eq!(robots(""), Robots::allow_all());
    }

    #[test]
    fn like_the_reference_parser_a_missing_colon_and_a_partial_bom() {
        // No colon: two words are a record; three are not.
        let r = robots("User-agent *\nDisallow /x\nDisallow /y z\n");
        assert!(!allowed(&r, "/x"));
        assert!(allowed(&r, "/y"));
        assert_eq!(r.rule_count(), 1);
        // A byte-order mark, whole or begun, before the first line.
        for bom in [&b"\xEF"[..], b"\xEF\xBB", b"\xEF\xBB\xBF"] {
            let body = [bom, b"User-agent: *\nDisallow: /\n"].concat();
            let r = Robots::parse(&body, "stage3-crawler");
            assert!(!allowed(&r, "/a"), "{bom:?}");
        }
        // Not a mark: the first line is spoiled, as it should be.
        let r = Robots::parse(b"\xBBUser-agent: *\nDisallow: /\n", "stage3-crawler");
        assert!(allowed(&r, "/a"));
    }

    #[test]
    fn robots_txt_itself_is_always_allowed() {
        assert!(allowed(&Robots::disallow_all(), "/robots.txt"));
        assert!(!allowed(&Robots::disallow_all(), "/"));
        assert!(!allowed(&Robots::disallow_all(), "/a?b"));
    }

    #[test]
    fn crawl_delay_values() {
        let delay = |v: &str| robots(&format!("User-agent: *\nCrawl-delay: {v}\n")).crawl_delay();
        assert_eq!(delay("10"), Some(Duration::from_secs(10)));
        assert_eq!(delay("0.5"), Some(Duration::from_millis(500)));
        assert_eq!(delay("99999999"), Some(Duration::from_secs(99_999_999)));
        assert_eq!(delay("1e300"), Some(Duration::MAX));
        for bad in ["-1", "abc", "1e400", "NaN", "inf", ""] {
            assert_eq!(delay(bad), None, "{bad}");
        }
        // Our group's delay, not the star group's.
        let r =
            robots("User-agent: *\nCrawl-delay: 9\nUser-agent: stage3-crawler\nCrawl-delay: 2\n");
        assert_eq!(r.crawl_delay(), Some(Duration::from_secs(2)));
    }

    #[test]
    fn sitemaps_come_from_anywhere_in_the_file() {
        let r = robots(
            "Sitemap: http://h/a.xml\nUser-agent: *\nSitemap: http://h/b.xml\nDisallow: /x\n",
        );
        assert_eq!(r.sitemaps(), ["http://h/a.xml", "http://h/b.xml"]);
        // A Sitemap line between user-agent lines does not split the group.
        let r = robots(
            "User-agent: a\nSitemap: http://h/s\nUser-agent: stage3-crawler\nDisallow: /q\n",
        );
        assert!(!allowed(&r, "/q"));
    }

    #[test]
    fn product_tokens() {
        assert_eq!(
            product_token("stage3-crawler/0.1.0 (+https://x)"),
            "stage3-crawler"
        );
        assert_eq!(product_token("Googlebot"), "Googlebot");
        assert_eq!(product_token(" Mozilla/5.0"), "Mozilla");
    }

    #[test]
    fn only_the_first_500_kib_count_and_a_cut_line_is_dropped() {
        let mut text = String::from("User-agent: *\n");
        while text.len() < MAX_ROBOTS_BYTES - 10 {
            text.push_str("# filler\n");
        }
        text.push_str("Disallow: /secret-that-is-cut\n");
        let r = robots(&text);
        // The line straddles the limit: dropped whole, not read as "/secr".
        assert!(allowed(&r, "/secr"));
        assert_eq!(r.rule_count(), 0);
    }

    #[test]
    fn ten_megabytes_of_garbage_is_no_rules() {
        let garbage: Vec<u8> = (0..10_000_000u64).map(|i| (i * 7919 % 251) as u8).collect();
        let r = Robots::parse(&garbage, "stage3-crawler");
        assert!(allowed(&r, "/anything"));
    }

    #[test]
    fn many_stars_cost_linear_time() {
        let pattern = format!("/{}b", "*a".repeat(1000));
        let r = robots(&format!("User-agent: *\nDisallow: {pattern}\n"));
        let path = format!("/{}", "a".repeat(2000));
        // Without a linear matcher this would backtrack for ages.
        assert!(allowed(&r, &path));
        assert!(!allowed(&r, &format!("{path}b")));
    }

    #[test]
    fn the_matcher() {
        assert!(matches("/", "/anything"));
        assert!(matches("*", "/x"));
        assert!(matches("/*", "/"));
        assert!(matches("/a*", "/a"));
        assert!(matches("/a*$", "/abc"));
        assert!(matches("/*.php$", "/index.php"));
        assert!(!matches("/*.php$", "/index.php5"));
        assert!(matches("/fish*.php", "/fish.php"));
        assert!(matches("/fish*.php", "/fishheads/catfish.php?p=1"));
        assert!(!matches("/fish*.php", "/Fish.PHP"));
        assert!(matches("/a*b$", "/ab"));
        assert!(matches("/a*ab$", "/aab"));
        assert!(!matches("/ab*ba$", "/aba"));
    }
}
