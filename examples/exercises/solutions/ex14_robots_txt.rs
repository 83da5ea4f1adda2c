//! Exercise 14 ★★: honour robots.txt (reference solution).
//!
//! Parse the file into groups, keep the rules of the groups that name our
//! product token (else those of `*`), and decide a path by its most
//! specific matching rule, `Allow` winning a tie.

use stage3_crawler::http::Client;
use url::{Position, Url};

/// One `Allow` or `Disallow` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    pub allow: bool,
    /// A path prefix, in which `*` matches any run of characters and a
    /// final `$` anchors the end.
    pub pattern: String,
}

/// The rules that apply to one crawler, from one robots.txt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Robots {
    rules: Vec<Rule>,
}

impl Robots {
    /// No rules: everything may be fetched.
    pub fn allow_all() -> Robots {
        Robots { rules: Vec::new() }
    }

    /// Nothing may be fetched.
    pub fn disallow_all() -> Robots {
        Robots {
            rules: vec![Rule {
                allow: false,
                pattern: "/".to_string(),
            }],
        }
    }

    /// The rules that apply to `user_agent` (a product token such as
    /// `exercise-crawler`, compared without regard to case): those of every
    /// group that names it, or else those of every `*` group.
    pub fn parse(text: &str, user_agent: &str) -> Robots {
        let mut ours = Vec::new();
        let mut anyone = Vec::new();
        // The agents of the group being read, and whether a rule has been
        // seen since its user-agent lines (a user-agent line after a rule
        // starts a new group).
        let mut agents: Vec<String> = Vec::new();
        let mut in_rules = false;
        let mut named_us = false;
        for line in text.lines() {
            let line = line.split('#').next().unwrap_or_default();
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let (key, value) = (key.trim().to_ascii_lowercase(), value.trim());
            match key.as_str() {
                "user-agent" => {
                    if in_rules {
                        agents.clear();
                        in_rules = false;
                    }
                    named_us |= value.eq_ignore_ascii_case(user_agent);
                    agents.push(value.to_ascii_lowercase());
                }
                "allow" | "disallow" => {
                    in_rules = true;
                    // An empty Disallow disallows nothing; an empty Allow
                    // allows nothing new.
                    if value.is_empty() {
                        continue;
                    }
                    let rule = Rule {
                        allow: key == "allow",
                        pattern: value.to_string(),
                    };
                    if agents.iter().any(|a| a.eq_ignore_ascii_case(user_agent)) {
                        ours.push(rule.clone());
                    }
                    if agents.iter().any(|a| a == "*") {
                        anyone.push(rule);
                    }
                }
                _ => {} // sitemap, crawl-delay, and whatever comes next
            }
        }
        Robots {
            rules: if named_us { ours } else { anyone },
        }
    }

    /// The rules that apply.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Whether `url` may be fetched: its path and query are decided by the
    /// longest matching rule; on a tie `Allow` wins; no match allows.
    pub fn allowed(&self, url: &Url) -> bool {
        let path = &url[Position::BeforePath..Position::AfterQuery];
        let best = self
            .rules
            .iter()
            .filter(|rule| matches(&rule.pattern, path))
            .max_by_key(|rule| (rule.pattern.len(), rule.allow));
        best.is_none_or(|rule| rule.allow)
    }
}

/// Whether `pattern` matches the start of `path` (all of it, with `$`).
fn matches(pattern: &str, path: &str) -> bool {
    let (pattern, anchored) = match pattern.strip_suffix('$') {
        Some(p) => (p, true),
        None => (pattern, false),
    };
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = path.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        // No `*`: a prefix, or with `$` the whole path.
        return !anchored || rest.is_empty();
    };
    // Each middle piece as early as it occurs leaves the most room for the
    // rest.
    for piece in middle {
        match rest.find(piece) {
            Some(i) => rest = &rest[i + piece.len()..],
            None => return false,
        }
    }
    if anchored {
        rest.ends_with(last)
    } else {
        rest.contains(last)
    }
}

/// Fetches and parses the robots.txt at `robots_url`. A 4xx means there
/// are no rules; a 5xx or a failed fetch means the site cannot say, and
/// the safe reading of that is "disallow everything" (RFC 9309).
pub async fn fetch_robots(client: &Client, robots_url: &Url, user_agent: &str) -> Robots {
    match client.get(robots_url).await {
        Ok(r) if (200..300).contains(&r.status) => {
            Robots::parse(&String::from_utf8_lossy(&r.body), user_agent)
        }
        Ok(r) if (400..500).contains(&r.status) => Robots::allow_all(),
        Ok(_) | Err(_) => Robots::disallow_all(),
    }
}
