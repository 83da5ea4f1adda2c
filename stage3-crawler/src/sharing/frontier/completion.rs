//! Completion: a URL done, with its record and its links, offered to the shards their hosts live on.

use super::*;

impl Frontier {
    /// Completes one leased URL: records it, queues its new links, and
    /// frees its host's slot, starting the host's delay if this process
    /// learned one. `known` links of the page were kept back, known to be
    /// seen: they count in its `num_urls` (see `shared.rs`'s `SeenHere`).
    pub async fn complete(&self, one: Completion) -> io::Result<Completed> {
        let (mut done, _) = self.complete_many(std::slice::from_ref(&one), 0).await?;
        done.pop().ok_or_else(|| unexpected("complete"))
    }

    /// Completes several leased URLs, each as [`complete`](Self::complete)
    /// would: what each came to, in order. On one Redis that is one script.
    /// On a cluster, the links whose hosts live on another shard than
    /// their page go there first (`see.lua`), and then each shard completes
    /// its pages (`complete.lua`).
    ///
    /// Then it claims up to `claim` URLs, as [`claim`](Self::claim) would
    /// (none if the crawl is over): a busy process gets its next work in
    /// the call that completes its last, with no script of its own.
    pub async fn complete_many(
        &self,
        batch: &[Completion],
        claim: usize,
    ) -> io::Result<(Vec<Completed>, Vec<Leased>)> {
        let mut claimed = Vec::new();
        match self.complete_into(batch, claim, &mut claimed).await {
            Ok(done) => Ok((done, claimed)),
            Err(e) => {
                // A shard failed after another had leased URLs to us:
                // give them back rather than leave them to run out.
                self.give_back(&claimed).await;
                Err(e)
            }
        }
    }

    /// Which of `links`, each with the page that offers it, the crawl has
    /// seen from another page, read with plain `HMGET`s (one per shard), no
    /// script: what a script costs Redis is mostly its handling of every
    /// argument, which a link seen before does not need. The seen set only
    /// grows, so a link read here as seen is seen for good; one read as not
    /// seen may be by the time it is offered, which `see` decides. A link
    /// its own page offered before (the page fetched again after a crash)
    /// is not "seen from another page": `see` answers it as the first time.
    pub async fn seen_already(&self, links: &[(&Link, &str)]) -> io::Result<Vec<bool>> {
        let shards = self.shards().await?;
        // Where `offer_elsewhere` offers them.
        let open: Vec<&str> = links
            .iter()
            .filter(|(l, _)| l.refused.is_none())
            .map(|(l, _)| l.host.as_str())
            .collect();
        let mut given = self.place(&open).await?.into_iter();
        let placed: Vec<usize> = links
            .iter()
            .map(|(l, _)| link_shard(l, &mut given, shards.len()))
            .collect();
        let mut seen = vec![false; links.len()];
        for (shard, prefix) in shards.iter().enumerate() {
            let here: Vec<usize> = (0..links.len()).filter(|&i| placed[i] == shard).collect();
            if here.is_empty() {
                continue;
            }
            let key = format!("{prefix}seen");
            let mut command: Vec<&str> = vec!["HMGET", &key];
            command.extend(here.iter().map(|&i| links[i].0.url.as_str()));
            let reply = self
                .call(&key, async |conn: &mut Connection| {
                    conn.command(&command).await
                })
                .await?;
            let values = items(reply)?;
            if values.len() != here.len() {
                return Err(unexpected("HMGET"));
            }
            for (i, value) in here.into_iter().zip(values) {
                // `seen`'s value: a code, whether it counted, and the
                // fingerprint of the page that offered it first.
                let page = links[i].1.strip_prefix('~').unwrap_or(links[i].1);
                let ours = format!("{:016x}", fnv1a(page.as_bytes()));
                seen[i] = match &value {
                    Frame::Null => false,
                    value => value.as_str().and_then(|v| v.get(2..)) != Some(ours.as_str()),
                };
            }
        }
        Ok(seen)
    }

    /// The first of `complete_many`'s two steps on a cluster, alone: the
    /// links go to their shards, and the pages stay leased. It is what a
    /// process that dies before completing its pages has done, which the
    /// tests play.
    pub async fn offer(&self, batch: &[Completion]) -> io::Result<()> {
        let shards = self.shards().await?;
        self.offer_elsewhere(batch, &shards).await.map(|_| ())
    }

    /// Where each page and link of `batch` lives, and what became of the
    /// links offered on other shards than their pages'.
    pub(super) async fn offer_elsewhere(
        &self,
        batch: &[Completion],
        shards: &[String],
    ) -> io::Result<Offered> {
        // Where each page and each link lives (see `link_shard`).
        let mut hosts: Vec<&str> = batch.iter().map(|c| c.host.as_str()).collect();
        for c in batch {
            hosts.extend(
                c.links
                    .iter()
                    .filter(|l| l.refused.is_none())
                    .map(|l| l.host.as_str()),
            );
        }
        let placed = self.place(&hosts).await?;
        let (pages, rest) = placed.split_at(batch.len());
        let mut rest = rest.iter().copied();
        let link_shard: Vec<Vec<usize>> = batch
            .iter()
            .map(|c| {
                c.links
                    .iter()
                    .map(|l| link_shard(l, &mut rest, shards.len()))
                    .collect()
            })
            .collect();
        // Offered elsewhere only by pages whose lease is still ours, just
        // renewed: a page whose lease ran out is someone else's now, and
        // its links could be queued after the crawl was found finished.
        let mut offers = vec![false; batch.len()];
        let remote: Vec<usize> = (0..batch.len())
            .filter(|&i| link_shard[i].iter().any(|s| *s != pages[i]))
            .collect();
        if !remote.is_empty() {
            let held: Vec<Held> = remote
                .iter()
                .map(|&i| Held {
                    url: batch[i].url.clone(),
                    host: batch[i].host.clone(),
                    token: batch[i].token,
                })
                .collect();
            for (&i, ours) in remote.iter().zip(self.renew_each(&held).await?) {
                offers[i] = ours;
            }
        }
        // Each page's links on other shards, offered there first.
        let mut elsewhere: Vec<(usize, usize)> = vec![(0, 0); batch.len()];
        let mut away: Vec<Vec<Option<Seen>>> =
            batch.iter().map(|c| vec![None; c.links.len()]).collect();
        for (shard, prefix) in shards.iter().enumerate() {
            let mut groups = Vec::new();
            let mut which = Vec::new();
            for (i, c) in batch.iter().enumerate() {
                if pages[i] == shard || !offers[i] {
                    continue;
                }
                let here: Vec<&Link> = c
                    .links
                    .iter()
                    .zip(&link_shard[i])
                    .filter(|(_, s)| **s == shard)
                    .map(|(l, _)| l)
                    .collect();
                if here.is_empty() {
                    continue;
                }
                groups.push(Group::new(
                    Some(&c.url),
                    c.depth,
                    c.redirects,
                    here.into_iter(),
                ));
                which.push(i);
            }
            if which.is_empty() {
                continue;
            }
            let mut args = Vec::new();
            for group in &groups {
                group.extend_args(&mut args);
            }
            let reply = self.run(&self.see, prefix, &args).await?;
            if gone_reply(&reply) {
                return Err(self.gone());
            }
            let replies = items(reply)?;
            if replies.len() != which.len() {
                return Err(unexpected("see"));
            }
            for (i, reply) in which.into_iter().zip(replies) {
                let (urls, new, codes) = match codes_of(reply)?.as_slice() {
                    [urls, new, codes @ ..] => (
                        (*urls).max(0) as usize,
                        (*new).max(0) as usize,
                        codes.to_vec(),
                    ),
                    _ => return Err(unexpected("see")),
                };
                elsewhere[i].0 += urls;
                elsewhere[i].1 += new;
                let mut codes = codes.into_iter();
                for (slot, s) in away[i].iter_mut().zip(&link_shard[i]) {
                    if *s == shard {
                        *slot = Some(seen_code(codes.next().ok_or_else(|| unexpected("see"))?));
                    }
                }
            }
        }
        Ok(Offered {
            pages: pages.to_vec(),
            link_shard,
            elsewhere,
            away,
        })
    }

    pub(super) async fn complete_into(
        &self,
        batch: &[Completion],
        claim: usize,
        claimed: &mut Vec<Leased>,
    ) -> io::Result<Vec<Completed>> {
        let shards = self.shards().await?;
        let Offered {
            pages,
            link_shard,
            elsewhere,
            away,
        } = self.offer_elsewhere(batch, &shards).await?;

        // Then each shard completes its own pages, with the links that
        // live there.
        let mut done: Vec<Option<Completed>> = vec![None; batch.len()];
        for (shard, prefix) in shards.iter().enumerate() {
            let mine: Vec<usize> = (0..batch.len()).filter(|&i| pages[i] == shard).collect();
            if mine.is_empty() {
                continue;
            }
            let wanted = claim.saturating_sub(claimed.len()).to_string();
            let mut fields: Vec<[String; 3]> = Vec::with_capacity(mine.len());
            let mut groups = Vec::with_capacity(mine.len());
            for &i in &mine {
                let c = &batch[i];
                let here = c
                    .links
                    .iter()
                    .zip(&link_shard[i])
                    .filter(|(_, s)| **s == shard)
                    .map(|(l, _)| l);
                let delay = match c.delay {
                    Some(d) if !d.is_zero() || !self.told.borrow().contains(&c.host) => {
                        d.as_millis().to_string()
                    }
                    _ => String::new(),
                };
                // The record as the report keeps it, with the counts of
                // the links that do not come here: when none do, Redis
                // stores it as it is.
                let (urls, new) = (c.known + elsewhere[i].0, elsewhere[i].1);
                fields.push([
                    c.token.to_string(),
                    delay,
                    format!("={urls} {new}\n{}", c.record),
                ]);
                groups.push(Group::new(Some(&c.url), c.depth, c.redirects, here));
            }
            let mut args: Vec<&[u8]> = vec![wanted.as_bytes()];
            for ((&i, [token, delay, record]), group) in mine.iter().zip(&fields).zip(&groups) {
                args.extend([
                    batch[i].url.as_bytes(),
                    token.as_bytes(),
                    delay.as_bytes(),
                    record.as_bytes(),
                ]);
                group.extend_page_args(&mut args);
            }
            let reply = self.run(&self.complete, prefix, &args).await?;
            // The URLs claimed first, then what each completion came to.
            let mut replies = items(reply)?.into_iter();
            let leased = leased_list(&items(
                replies.next().ok_or_else(|| unexpected("complete"))?,
            )?)?;
            self.remember(&leased, shard);
            claimed.extend(leased);
            let replies: Vec<Frame> = replies.collect();
            if replies.len() != mine.len() && !replies.first().is_some_and(is_gone) {
                return Err(unexpected("complete"));
            }
            for (&i, item) in mine.iter().zip(replies) {
                let codes = codes_of(item)?;
                done[i] = Some(match codes.as_slice() {
                    [-2, ..] => return Err(self.gone()),
                    [-1, ..] => Completed::Lost,
                    // No link came to this shard: the counts are as sent.
                    [] if link_shard[i].iter().all(|s| *s != shard) => Completed::Done {
                        urls: batch[i].known + elsewhere[i].0,
                        new: elsewhere[i].1,
                        seen: away[i].iter().map(|a| a.unwrap_or(Seen::Before)).collect(),
                    },
                    [urls, new, codes @ ..] => {
                        let mut codes = codes.iter();
                        let mut seen = Vec::with_capacity(batch[i].links.len());
                        for (away, s) in away[i].iter().zip(&link_shard[i]) {
                            seen.push(if *s == shard {
                                seen_code(*codes.next().ok_or_else(|| unexpected("complete"))?)
                            } else {
                                away.unwrap_or(Seen::Before)
                            });
                        }
                        Completed::Done {
                            urls: (*urls).max(0) as usize,
                            new: (*new).max(0) as usize,
                            seen,
                        }
                    }
                    _ => return Err(unexpected("complete")),
                });
            }
        }
        let done = done
            .into_iter()
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| unexpected("complete"))?;
        for (c, done) in batch.iter().zip(&done) {
            if c.delay == Some(Duration::ZERO) && matches!(done, Completed::Done { .. }) {
                self.told.borrow_mut().insert(c.host.clone());
            }
        }
        Ok(done)
    }
}

/// What `offer_elsewhere` found: each page's shard, each link's, the
/// counts (num_urls, num_new_urls) of each page's links offered on other
/// shards, and what became of each of those links.
pub(super) struct Offered {
    pages: Vec<usize>,
    link_shard: Vec<Vec<usize>>,
    elsewhere: Vec<(usize, usize)>,
    away: Vec<Vec<Option<Seen>>>,
}

/// One page's links as `see` takes them: a header (the page, its
/// fingerprint, the links' depth and redirects, how many links), then five
/// arguments per link, borrowed from the links themselves.
pub(super) struct Group<'a> {
    from: &'a str,
    /// The fingerprint, depth, redirects and count, as text.
    header: [String; 4],
    links: Vec<&'a Link>,
}

impl<'a> Group<'a> {
    /// The links `links` of the page `from` (`None` for the roots).
    pub(super) fn new(
        from: Option<&'a str>,
        depth: u32,
        redirects: u32,
        links: impl Iterator<Item = &'a Link>,
    ) -> Group<'a> {
        // A sitemap's lease is '~' and its URL; the pages it lists come
        // from its URL.
        let from = from.map_or("", |f| f.strip_prefix('~').unwrap_or(f));
        let links: Vec<&Link> = links.collect();
        let fingerprint = if from.is_empty() {
            String::new()
        } else {
            format!("{:016x}", fnv1a(from.as_bytes()))
        };
        Group {
            from,
            header: [
                fingerprint,
                depth.to_string(),
                redirects.to_string(),
                links.len().to_string(),
            ],
            links,
        }
    }

    /// The group as `see_group` reads it: the header, then the links.
    pub(super) fn extend_args(&'a self, args: &mut Vec<&'a [u8]>) {
        args.push(self.from.as_bytes());
        args.extend(self.header.iter().map(String::as_bytes));
        self.extend_links(args);
    }

    /// The group as complete.lua reads it after its page's URL: the count
    /// of links, and only if there are any the rest of the header (the
    /// page is the URL completed) and the links.
    pub(super) fn extend_page_args(&'a self, args: &mut Vec<&'a [u8]>) {
        let [fingerprint, depth, redirects, count] = &self.header;
        args.push(count.as_bytes());
        if !self.links.is_empty() {
            args.extend([fingerprint, depth, redirects].map(String::as_bytes));
            self.extend_links(args);
        }
    }

    pub(super) fn extend_links(&'a self, args: &mut Vec<&'a [u8]>) {
        for link in &self.links {
            let flags: &[u8] = match (link.counts, link.robots) {
                _ if link.sitemap => b"s",
                (true, true) => b"cr",
                (true, false) => b"c",
                (false, true) => b"r",
                (false, false) => b"",
            };
            args.extend([
                link.url.as_bytes(),
                link.host.as_bytes(),
                link.variant.as_deref().unwrap_or("").as_bytes(),
                link.refused.unwrap_or("").as_bytes(),
                flags,
            ]);
        }
    }
}

/// The shard a link is offered on: its host's, given in turn by `place`
/// (the next of `given`, which placed the hosts of the links not refused,
/// in order). A link the rules refuse is never queued, so its host's line
/// does not matter: its shard is a hash of its host, the same in every
/// process, and it takes no turn in the placement of the hosts the crawl
/// fetches from.
pub(super) fn link_shard(
    link: &Link,
    given: &mut impl Iterator<Item = usize>,
    shards: usize,
) -> usize {
    match link.refused {
        Some(_) => (fnv1a(link.host.as_bytes()) % shards as u64) as usize,
        None => given.next().unwrap_or(0),
    }
}
