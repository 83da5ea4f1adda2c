//! Leases and grants: URLs claimed for this process's workers, renewed while they are fetched, and given back.

use super::*;

impl Frontier {
    /// Takes up to `n` URLs under a lease.
    pub async fn claim(&self, n: usize) -> io::Result<Claim> {
        let mut work = Vec::new();
        let claimed = self.claim_into(n, &mut work).await;
        if claimed.is_err() {
            self.give_back(&work).await;
        }
        claimed
    }

    pub(super) async fn claim_into(&self, n: usize, work: &mut Vec<Leased>) -> io::Result<Claim> {
        let shards = self.shards().await?;
        let only = if shards.len() == 1 { "1" } else { "0" };
        let start = self.next_claim.get();
        self.next_claim.set(start.wrapping_add(1));
        let mut wait: Option<Duration> = None;
        let mut empty = 0;
        for k in 0..shards.len() {
            let shard = (start + k) % shards.len();
            let prefix = &shards[shard];
            let wanted = (n - work.len()).to_string();
            let reply = self
                .run(&self.claim, prefix, &[wanted.as_bytes(), only.as_bytes()])
                .await?;
            let mut items = items(reply)?.into_iter();
            let kind = items.next();
            match kind.as_ref().and_then(Frame::as_str) {
                Some("finished") => empty += 1,
                Some("gone") => return Err(self.gone()),
                Some("wait") => {
                    let ms = items.next().and_then(|f| f.as_integer()).unwrap_or(1);
                    let ms = Duration::from_millis(ms.max(1) as u64);
                    wait = Some(wait.map_or(ms, |w| w.min(ms)));
                }
                Some("work") => {
                    let leased = leased_list(&items.collect::<Vec<_>>())?;
                    self.remember(&leased, shard);
                    work.extend(leased);
                }
                _ => return Err(unexpected("claim")),
            }
            if work.len() >= n {
                break;
            }
        }
        if !work.is_empty() {
            return Ok(Claim::Work(std::mem::take(work)));
        }
        if empty == shards.len() {
            if shards.len() == 1 || self.finished().await? {
                return Ok(Claim::Finished);
            }
            // Links on their way to an empty shard: ask again soon.
            return Ok(Claim::Wait(Duration::from_millis(5)));
        }
        Ok(Claim::Wait(wait.unwrap_or(Duration::from_millis(1))))
    }

    // ANCHOR: finished
    /// Whether the crawl is over, on a cluster: no shard has a URL pending.
    /// The shards are read one after another, not at one instant, so a
    /// page completed on one shard after its links were queued on another
    /// already read could slip between the readings. Read twice: if no
    /// shard queued anything between its two readings (its `queued` count
    /// is the same), every shard held its `pending` at zero over a common
    /// moment, and then nothing was left anywhere. A page's links are
    /// queued before the page completes, so while work remains some
    /// shard's `pending` is above zero at every moment.
    pub(super) async fn finished(&self) -> io::Result<bool> {
        let Some(first) = self.counts().await? else {
            return Ok(false);
        };
        let Some(second) = self.counts().await? else {
            return Ok(false);
        };
        if first != second {
            return Ok(false);
        }
        let home = self.home.clone();
        if self.run(&self.finish, &home, &[]).await?.as_integer() == Some(-2) {
            return Err(self.gone());
        }
        Ok(true)
    }

    /// Each shard's `queued` count, if the crawl is ready and no shard has
    /// a URL pending. Each shard's two counts are read at one moment (a
    /// script), as the argument above needs.
    pub(super) async fn counts(&self) -> io::Result<Option<Vec<u64>>> {
        let ready_key = self.key("meta");
        let ready = self
            .call(&ready_key, async |conn: &mut Connection| {
                conn.command(&["HGET", &ready_key, "ready"]).await
            })
            .await?;
        if ready.as_str().is_none() {
            return Ok(None);
        }
        let mut queued = Vec::new();
        for prefix in self.shards().await?.iter() {
            let reply = self.run(&self.counts, prefix, &[]).await?;
            let n: Vec<i64> = items(reply)?.iter().filter_map(Frame::as_integer).collect();
            match n.as_slice() {
                [-2] => return Err(self.gone()),
                [pending, q] if *pending <= 0 => queued.push((*q).max(0) as u64),
                [_, _] => return Ok(None),
                _ => return Err(unexpected("counts")),
            }
        }
        Ok(Some(queued))
    }
    // ANCHOR_END: finished

    /// Notes the shard of the hosts of URLs a shard leased to us: a
    /// claim says where a host lives, with no need to ask.
    pub(super) fn remember(&self, leased: &[Leased], shard: usize) {
        let mut placed = self.placed.borrow_mut();
        for l in leased {
            placed.entry(l.host.clone()).or_insert(shard);
        }
    }

    /// Gives back URLs leased to us that no worker will fetch, as best it
    /// can: if that fails too, their leases run out.
    pub(super) async fn give_back(&self, leased: &[Leased]) {
        let held: Vec<Held> = leased.iter().map(Leased::held).collect();
        if let Err(e) = self.release(&held).await {
            log::warn!(
                "could not give back {} leased URLs ({e}): their leases will run out",
                held.len()
            );
        }
    }

    /// Extends the leases on `held`. Returns how many were still ours.
    pub async fn renew(&self, held: &[Held]) -> io::Result<usize> {
        Ok(self
            .renew_each(held)
            .await?
            .into_iter()
            .filter(|&ours| ours)
            .count())
    }

    /// Extends the leases on `held`: whether each was still ours.
    pub(super) async fn renew_each(&self, held: &[Held]) -> io::Result<Vec<bool>> {
        let mut ours = vec![false; held.len()];
        for (which, reply) in self.per_shard(&self.renew, held).await? {
            let flags = items(reply)?;
            if flags.is_empty() {
                return Err(self.gone());
            }
            for (i, flag) in which.into_iter().zip(flags) {
                ours[i] = flag.as_integer() == Some(1);
            }
        }
        Ok(ours)
    }

    /// Gives the leases on `held` back to the queue at once.
    pub async fn release(&self, held: &[Held]) -> io::Result<usize> {
        let mut n = 0;
        for (_, reply) in self.per_shard(&self.release, held).await? {
            n += reply.as_integer().unwrap_or(0).max(0) as usize;
        }
        Ok(n)
    }

    /// Runs `script` on each shard with the leases of `held` that live
    /// there, as pairs of URL and token: which of `held` went to each call,
    /// and its reply.
    pub(super) async fn per_shard(
        &self,
        script: &Script,
        held: &[Held],
    ) -> io::Result<Vec<(Vec<usize>, Frame)>> {
        let mut replies = Vec::new();
        if held.is_empty() {
            return Ok(replies);
        }
        let shards = self.shards().await?;
        let hosts: Vec<&str> = held.iter().map(|h| h.host.as_str()).collect();
        let placed = self.place(&hosts).await?;
        let tokens: Vec<String> = held.iter().map(|h| h.token.to_string()).collect();
        for (shard, prefix) in shards.iter().enumerate() {
            let which: Vec<usize> = (0..held.len()).filter(|&i| placed[i] == shard).collect();
            if which.is_empty() {
                continue;
            }
            let mut args: Vec<&[u8]> = Vec::with_capacity(which.len() * 2);
            for &i in &which {
                args.push(held[i].url.as_bytes());
                args.push(tokens[i].as_bytes());
            }
            let reply = self.run(script, prefix, &args).await?;
            replies.push((which, reply));
        }
        Ok(replies)
    }
}
