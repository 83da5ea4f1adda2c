use demo_site::DemoSite;
use exercises::ex14_robots_txt::{Robots, fetch_robots};
use stage3_crawler::http::{Client, ClientConfig};
use url::{Position, Url};

use crate::common::{block_on, expected_urls};

const AGENT: &str = "exercise-crawler";

const ROBOTS: &str = "\
# Rules for the demo site
User-agent: other-bot
Disallow: /

User-agent: *
Disallow: /pages/
Allow: /pages/a/
Disallow: /*.png$
Disallow: /redirect/      # no redirects...
Allow: /redirect/target.html
Sitemap: http://example.com/sitemap.xml
";

/// Which of the demo site's URLs `robots` allows.
fn kept(site: &DemoSite, robots: &Robots) -> Vec<String> {
    expected_urls(site)
        .into_iter()
        .filter(|u| robots.allowed(&Url::parse(u).unwrap()))
        .collect()
}

fn path(url: &str) -> String {
    let url = Url::parse(url).unwrap();
    url[Position::BeforePath..Position::AfterQuery].to_string()
}

#[test]
fn the_star_group_filters_the_demo_site_exactly() {
    let site = DemoSite::start_default().unwrap();
    let robots = Robots::parse(ROBOTS, AGENT);
    // The same rules, written out by hand for these paths.
    let by_hand: Vec<String> = expected_urls(&site)
        .into_iter()
        .filter(|u| {
            let p = path(u);
            if p.starts_with("/redirect/") {
                p.starts_with("/redirect/target.html")
            } else if p.starts_with("/pages/") {
                p.starts_with("/pages/a/")
            } else {
                !p.ends_with(".png")
            }
        })
        .collect();
    assert!(by_hand.len() < expected_urls(&site).len());
    assert_eq!(kept(&site, &robots), by_hand);
}

#[test]
fn a_group_that_names_us_replaces_the_star_group() {
    let site = DemoSite::start_default().unwrap();
    for agent in ["other-bot", "OTHER-BOT"] {
        let robots = Robots::parse(ROBOTS, agent);
        assert_eq!(
            kept(&site, &robots),
            Vec::<String>::new(),
            "{agent} may fetch nothing"
        );
    }
    let text = "User-agent: *\nDisallow: /\n\nUser-agent: someone\nUser-agent: Exercise-Crawler\nDisallow: /charset/\n\nUser-agent: exercise-crawler\nDisallow: /framing/\nDisallow:\n";
    let robots = Robots::parse(text, AGENT);
    let by_hand: Vec<String> = expected_urls(&site)
        .into_iter()
        .filter(|u| !path(u).starts_with("/charset/") && !path(u).starts_with("/framing/"))
        .collect();
    assert_eq!(kept(&site, &robots), by_hand);
}

#[test]
fn wildcards_anchors_and_ties() {
    let text = "User-agent: *\nDisallow: /a*z$\nDisallow: /b\nAllow: /b\nDisallow: /c/*/d\n";
    let robots = Robots::parse(text, AGENT);
    let allowed = |p: &str| robots.allowed(&Url::parse(&format!("http://h{p}")).unwrap());
    assert!(!allowed("/abcz"));
    assert!(!allowed("/az"));
    assert!(allowed("/azz?"), "`$` anchors the end, query included");
    assert!(allowed("/abc"));
    assert!(
        allowed("/b/x"),
        "a tie between Allow and Disallow goes to Allow"
    );
    assert!(!allowed("/c/x/y/d/e"));
    assert!(allowed("/c/d"));
    assert!(allowed("/"));
}

#[test]
fn fetching_follows_the_status() {
    let site = DemoSite::start_default().unwrap();
    let url = |p: &str| Url::parse(&site.url(p)).unwrap();
    let results = block_on("fetch_robots", async {
        let client = Client::new(ClientConfig::default());
        let mut results = Vec::new();
        // 404: no robots.txt, no rules. 200 text: parsed (and it has no
        // rules). 500 and a dropped connection: the site cannot say.
        for p in ["/robots.txt", "/notes.txt", "/error/500", "/fault/drop"] {
            results.push(fetch_robots(&client, &url(p), AGENT).await);
        }
        results
    });
    assert_eq!(
        results,
        [
            Robots::allow_all(),
            Robots::allow_all(),
            Robots::disallow_all(),
            Robots::disallow_all()
        ]
    );
    assert!(!Robots::disallow_all().allowed(&url("/")));
    assert!(Robots::allow_all().allowed(&url("/pages/a/1.html")));
}

/// RFC 9309 2.2.2: of an Allow and a Disallow that match with patterns of
/// the same length, the Allow wins, wherever each stands in the file.
#[test]
fn allow_wins_a_tie_whichever_comes_first() {
    for (rules, path) in [
        ("Disallow: /b\nAllow: /b\n", "/b/x"),
        ("Allow: /b\nDisallow: /b\n", "/b/x"),
        ("Disallow: /pa\nAllow: /p*\n", "/pa/x"),
        ("Allow: /p*\nDisallow: /pa\n", "/pa/x"),
    ] {
        let robots = Robots::parse(&format!("User-agent: *\n{rules}"), AGENT);
        let url = Url::parse(&format!("http://h{path}")).unwrap();
        assert!(
            robots.allowed(&url),
            "{path} with\n{rules}a tie goes to Allow, whatever the order"
        );
    }
    // Only a tie: a longer Disallow still beats a shorter Allow.
    let robots = Robots::parse("User-agent: *\nAllow: /p\nDisallow: /pa\n", AGENT);
    assert!(!robots.allowed(&Url::parse("http://h/pa/x").unwrap()));
}
