//! Completing a leased URL in Redis: with what its fetch found, as a
//! sitemap read (or not), or as skipped; and what the frontier answered,
//! kept in this process's report.

use super::*;

impl Shared {
    // ANCHOR: complete_fetched
    /// Completes a leased URL in the frontier with what its fetch found,
    /// then keeps the statistic, and the links the frontier refused, in
    /// this process's report.
    pub(super) async fn complete_fetched(&self, crawl: &impl Crawl, work: &Work, found: Found) {
        if work.tag.sitemap {
            // A sitemap fetched as a page (a queue with no SitemapReader
            // around it): its pages were not read.
            return self.complete_sitemap(crawl, work, None).await;
        }
        let Found { mut stat, next } = found;
        let from: Rc<str> = Rc::from(work.url.as_str());
        let mut invalid = Vec::new();
        // The links, with the depth and redirects they are queued with.
        let mut origin = (work.tag.depth.saturating_add(1), crawl.max_redirect());
        let targets: Vec<(Url, bool)> = match next {
            Next::Nothing => Vec::new(),
            Next::Redirect(next_url) if work.max_redirect > 0 => {
                crawl
                    .log()
                    .info(format_args!("redirect to {next_url} from {}", work.url));
                origin = (work.tag.depth, work.max_redirect - 1);
                vec![(next_url, false)]
            }
            Next::Redirect(next_url) => {
                crawl.log().error(format_args!(
                    "redirect limit reached for {next_url} from {}",
                    work.url
                ));
                Vec::new()
            }
            // Saturating: the depth came from Redis, which anyone can write.
            Next::Links {
                links,
                invalid: hrefs,
            } => {
                invalid = hrefs;
                links.into_iter().map(|link| (link, true)).collect()
            }
        };
        // Links this process knows the frontier has seen stay here (see
        // `SeenHere`), unless Redis must count them: a link with a query
        // counts in the page's num_urls only while its path has room for
        // more queries, which only Redis knows.
        let mut known_counting = 0;
        let sent: Vec<bool> = targets
            .iter()
            .map(|(url, counts)| {
                let known = self.seen_here.borrow().contains(url.as_str());
                // A redirect's target always goes: it has its page's depth,
                // which may be shorter than the one it waits at
                // (--max-depth).
                if !known || !*counts || self.every_link {
                    return true;
                }
                let counting = *counts && crawl.rules().refusal_by_url(url).is_none();
                if counting && variant_key(url).is_some() {
                    return true;
                }
                known_counting += usize::from(counting);
                false
            })
            .collect();
        let links: Vec<Link> = targets
            .iter()
            .zip(&sent)
            .filter(|(_, sent)| **sent)
            .map(|((url, counts), _)| link(crawl.rules(), url, *counts))
            .collect();
        let record = frontier_record(&stat);
        let completed = self
            .complete(crawl, work, record, known_counting, origin, links)
            .await;
        let Some((urls, new, codes)) = completed else {
            return;
        };
        // Every link sent is in the seen set now, whatever became of it.
        {
            let mut seen_here = self.seen_here.borrow_mut();
            for ((url, _), _) in targets.iter().zip(&sent).filter(|(_, sent)| **sent) {
                seen_here.insert(url.as_str());
            }
        }
        let mut codes = codes.into_iter();
        let seen: Vec<Seen> = sent
            .iter()
            .map(|&sent| {
                if sent {
                    codes.next().unwrap_or(Seen::Before)
                } else {
                    Seen::Before
                }
            })
            .collect();
        // Counted against the whole crawl, as the report in Redis has them
        // (the links known here among them, none of them new).
        (stat.num_urls, stat.num_new_urls) = (urls, new);
        crawl.keep_statistic(stat);
        let urls = targets.into_iter().map(|(url, _)| url);
        keep_refused(crawl, urls.zip(seen), &from);
        // Hrefs that are not URLs: in this process's report (the frontier
        // in Redis holds URLs only).
        for href in invalid {
            crawl.keep_skip(Skipped {
                url: href,
                reason: SkipReason::InvalidUrl,
                from: Some(from.to_string()),
            });
        }
    }
    // ANCHOR_END: complete_fetched

    // ANCHOR: complete_sitemap
    /// Completes a leased sitemap: with the pages it lists (`None` if it
    /// was not read: robots.txt disallows it), offered as links one step
    /// from a root, and what reading it came to for the whole crawl's
    /// report. An index's sitemaps, found as it was read, go with it: its
    /// completion is their only record. The pages refused go in this
    /// process's report, as a page's links do.
    pub(super) async fn complete_sitemap(
        &self,
        crawl: &impl Crawl,
        work: &Work,
        pages: Option<Vec<Url>>,
    ) {
        let read = pages.is_some();
        let pages = pages.unwrap_or_default();
        let found = crawl.rules().take_found_sitemaps();
        let links = pages
            .iter()
            .map(|page| link(crawl.rules(), page, false))
            .chain(found.iter().map(sitemap_link));
        // The outcome the rules noted for it, the last if read again.
        let outcome = crawl
            .rules()
            .sitemap_outcomes()
            .into_iter()
            .rev()
            .find(|o| read && o.url == work.url.as_str())
            .map(|o| o.outcome)
            .unwrap_or_default();
        let origin = (1, crawl.max_redirect());
        let completed = self
            .complete(crawl, work, outcome, 0, origin, links.collect())
            .await;
        if let Some((_, _, seen)) = completed {
            keep_refused(crawl, pages.into_iter().zip(seen), work.url.as_str());
        }
    }
    // ANCHOR_END: complete_sitemap

    /// Completes a leased URL that was not fetched (robots.txt disallows
    /// it).
    pub(super) async fn complete_skipped(
        &self,
        crawl: &impl Crawl,
        work: &Work,
        reason: SkipReason,
    ) {
        let skipped = Skipped {
            url: work.url.to_string(),
            reason,
            from: work.from.as_deref().map(str::to_string),
        };
        if self
            .complete(crawl, work, json_skipped(&skipped), 0, (0, 0), Vec::new())
            .await
            .is_some()
        {
            crawl.keep_skip(skipped);
        }
    }

    /// Runs the frontier's `complete`, and frees the worker's place in
    /// this process. `None` if the lease was lost or Redis failed.
    pub(super) async fn complete(
        &self,
        crawl: &impl Crawl,
        work: &Work,
        record: String,
        known: usize,
        (depth, redirects): (u32, u32),
        links: Vec<Link>,
    ) -> Option<(usize, usize, Vec<Seen>)> {
        let token = work.tag.lease?;
        // A sitemap's lease is on '~' and its URL (see sitemap in common.lua).
        let key = if work.tag.sitemap {
            format!("~{}", work.url)
        } else {
            work.url.to_string()
        };
        let url = key.as_str();
        let (tx, rx) = runtime::oneshot::channel();
        // The host its lease named, which says the shard it lives on.
        let host = self.held.borrow().get(url).map(|(_, host)| host.clone());
        let completion = Completion {
            url: url.to_string(),
            host: host.unwrap_or_else(|| host_of(&work.url)),
            token,
            delay: crawl.rules().host_delay(&work.url),
            record,
            known,
            depth,
            redirects,
            links,
        };
        self.completions.put_nowait((completion, tx));
        let completed = rx.await.unwrap_or_else(|_| {
            Err(io::Error::other(
                "the frontier stopped before the URL was completed",
            ))
        });
        release_held(self, url, token);
        match completed {
            Ok(Completed::Done { urls, new, seen }) => Some((urls, new, seen)),
            Ok(Completed::Lost) => {
                crawl.log().warn(format_args!(
                    "the lease on {url} ran out before it was done: another worker will fetch it"
                ));
                None
            }
            Err(e) => {
                crawl.log().error(format_args!("completing {url}: {e}"));
                None
            }
        }
    }
}

/// The links the frontier refused, for this process's report, each with
/// what the frontier answered: why, and `from`, the page (or sitemap) that
/// led to it.
pub(super) fn keep_refused(
    crawl: &impl Crawl,
    answered: impl Iterator<Item = (Url, Seen)>,
    from: &str,
) {
    for (url, seen) in answered {
        let reason = match seen {
            // The frontier reports what is still too deep at the end.
            Seen::Before | Seen::Queued | Seen::TooDeep => continue,
            Seen::Refused => crawl
                .rules()
                .refusal_by_url(&url)
                .unwrap_or(SkipReason::Excluded),
            Seen::QueryVariants => SkipReason::QueryVariants,
            Seen::Robots => SkipReason::Robots,
            Seen::OverMaxPages => SkipReason::MaxPages,
        };
        crawl.keep_skip(Skipped {
            url: url.into(),
            reason,
            from: Some(from.to_string()),
        });
    }
}

/// What the frontier answered for a completion, with `Seen::Before` put
/// back where `keep_back_seen` kept links back (`kept`, in order), so that
/// the answers line up with the links the page found.
pub(super) fn with_kept_back(done: Completed, kept: &[usize]) -> Completed {
    match done {
        Completed::Done { urls, new, seen } if !kept.is_empty() => {
            let mut answers = seen.into_iter();
            let mut kept = kept.iter().peekable();
            let mut all = Vec::new();
            loop {
                if kept.next_if(|&&i| i == all.len()).is_some() {
                    all.push(Seen::Before);
                } else if let Some(answer) = answers.next() {
                    all.push(answer);
                } else {
                    break;
                }
            }
            Completed::Done {
                urls,
                new,
                seen: all,
            }
        }
        other => other,
    }
}

/// A sitemap to read, as the frontier's `see` takes it.
pub(super) fn sitemap_link(url: &Url) -> Link {
    Link {
        url: url.to_string(),
        host: host_of(url),
        variant: None,
        refused: None,
        robots: false,
        counts: false,
        sitemap: true,
    }
}

/// A URL this page leads to, as the frontier's `see` takes it: with the
/// verdict of this process's rules, which need no Redis.
pub(super) fn link(rules: &WebRules, url: &Url, counts: bool) -> Link {
    let refusal = rules.refusal_by_url(url);
    Link {
        sitemap: false,
        url: url.to_string(),
        host: host_of(url),
        variant: variant_key(url).map(str::to_string),
        refused: refusal.map(SkipReason::name),
        robots: rules.refusal_known(url).is_some(),
        counts: counts && refusal.is_none(),
    }
}
