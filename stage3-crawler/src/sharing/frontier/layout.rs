//! The key layout: a crawl created on its shards, a host placed on one, and the crawl cleared.

use super::*;

impl Frontier {
    /// Creates the crawl with `identity` and queues `roots` (who may follow
    /// `redirects` redirects), unless it exists. Returns `None` if it was
    /// created, or the identity of the crawl that was there. A crawl whose
    /// creator died before its roots were queued on their shards is
    /// finished by whoever creates it again with the same identity.
    pub async fn create(
        &self,
        identity: &str,
        settings: &Settings,
        roots: &[Link],
        redirects: u32,
    ) -> io::Result<Option<String>> {
        let numbers = numbers(settings);
        // --max-pages is one count for the whole crawl, and --max-depth
        // one order of levels: one shard.
        let shards = if settings.max_pages.is_some() || settings.max_depth.is_some() {
            Vec::new()
        } else {
            self.choose_shards().await?
        };
        let shards = shards.join(" ");
        let mut args: Vec<&[u8]> = vec![identity.as_bytes()];
        args.extend(numbers.iter().map(|(_, n)| n.as_bytes()));
        args.push(shards.as_bytes());
        let group = Group::new(None, 0, redirects, roots.iter());
        if shards.is_empty() {
            group.extend_args(&mut args);
        }
        let home = self.home.clone();
        let reply = self.run(&self.init, &home, &args).await?;
        let mut items = items(reply)?.into_iter();
        let existing = match (
            items.next().and_then(|f| f.as_integer()),
            items.next(),
            items.next().and_then(|f| f.as_integer()),
        ) {
            (Some(1), ..) => None,
            (Some(0), Some(existing), Some(ready)) => {
                let existing = existing.as_str().map(str::to_string);
                if ready == 1 || existing.as_deref() != Some(identity) {
                    return Ok(existing);
                }
                existing
            }
            _ => return Err(unexpected("init")),
        };
        // Ours, and its roots not queued yet: a cluster's other shards get
        // the crawl's numbers, and the roots go to their hosts' shards.
        let layout = self.shards().await?;
        if layout.len() == 1 {
            // init.lua queued the roots, and the crawl is ready.
            return Ok(existing);
        }
        for prefix in layout.iter().skip(1) {
            let key = format!("{prefix}meta");
            let mut command: Vec<&str> = vec!["HSET", &key, "identity", identity];
            for (name, value) in &numbers {
                command.extend([*name, value.as_str()]);
            }
            self.call(&key, async |conn: &mut Connection| {
                conn.command(&command).await
            })
            .await?;
        }
        let hosts: Vec<&str> = roots.iter().map(|r| r.host.as_str()).collect();
        let placed = self.place(&hosts).await?;
        for (shard, prefix) in layout.iter().enumerate() {
            let here: Vec<&Link> = roots
                .iter()
                .zip(&placed)
                .filter(|(_, s)| **s == shard)
                .map(|(r, _)| r)
                .collect();
            if here.is_empty() {
                continue;
            }
            let group = Group::new(None, 0, redirects, here.into_iter());
            let mut args = Vec::new();
            group.extend_args(&mut args);
            let reply = self.run(&self.see, prefix, &args).await?;
            if gone_reply(&reply) {
                return Err(self.gone());
            }
        }
        let key = self.key("meta");
        self.call(&key, async |conn: &mut Connection| {
            conn.command(&["HSET", &key, "ready", "1"]).await
        })
        .await?;
        Ok(existing)
    }

    /// On a cluster, a hash tag for each master but the first shard's, so
    /// that the crawl has a shard on every master: `NAME/N` for the
    /// smallest `N` whose slot that master serves. None on one Redis.
    pub(super) async fn choose_shards(&self) -> io::Result<Vec<String>> {
        let io = |e: Error| io::Error::other(format!("{}: {e}", self.url));
        if !self.nodes.is_cluster().await.map_err(io)? {
            return Ok(Vec::new());
        }
        let mut masters = Vec::new();
        for pool in self.nodes.masters().await.map_err(io)? {
            masters.push((pool.url().host.clone(), pool.url().port));
        }
        let home = self.nodes.master_of(key_slot(self.home.as_bytes()));
        let home = home.await.map_err(io)?;
        let mut wanted: Vec<_> = masters
            .into_iter()
            .filter(|(host, port)| {
                home.is_none_or(|h| h.ip().to_string() != *host || h.port() != *port)
            })
            .collect();
        let mut tags = Vec::new();
        for n in 1..=100_000u32 {
            if wanted.is_empty() {
                break;
            }
            let tag = format!("{}/{n}", self.url.name);
            let Some(at) = self
                .nodes
                .master_of(key_slot(tag.as_bytes()))
                .await
                .map_err(io)?
            else {
                continue;
            };
            if let Some(i) = wanted
                .iter()
                .position(|(host, port)| at.ip().to_string() == *host && at.port() == *port)
            {
                wanted.swap_remove(i);
                tags.push(n.to_string());
            }
        }
        Ok(tags)
    }

    /// The prefixes of the crawl's shards, the first shard's first.
    pub(super) async fn shards(&self) -> io::Result<Rc<[String]>> {
        if let Some(shards) = self.shards.borrow().clone() {
            return Ok(shards);
        }
        let key = self.key("meta");
        let reply = self
            .call(&key, async |conn: &mut Connection| {
                conn.command(&["HGET", &key, "shards"]).await
            })
            .await?;
        let mut shards = vec![self.home.clone()];
        if let Some(list) = reply.as_str() {
            for tag in list.split_whitespace() {
                shards.push(format!("stage3:{{{}/{tag}}}:", self.url.name));
            }
        }
        let shards: Rc<[String]> = shards.into();
        // Only a crawl that exists says how many shards it has.
        if reply.as_str().is_some() {
            *self.shards.borrow_mut() = Some(shards.clone());
        }
        Ok(shards)
    }

    /// The shard of each of `hosts`.
    pub(super) async fn place(&self, hosts: &[&str]) -> io::Result<Vec<usize>> {
        let shards = self.shards().await?.len();
        if shards <= 1 {
            return Ok(vec![0; hosts.len()]);
        }
        let mut missing: Vec<&str> = hosts
            .iter()
            .copied()
            .filter(|h| !self.placed.borrow().contains_key(*h))
            .collect();
        missing.sort_unstable();
        missing.dedup();
        if !missing.is_empty() {
            let n = shards.to_string();
            let mut args: Vec<&[u8]> = vec![n.as_bytes()];
            args.extend(missing.iter().map(|h| h.as_bytes()));
            let home = self.home.clone();
            let reply = items(self.run(&self.assign, &home, &args).await?)?;
            if matches!(reply.as_slice(), [Frame::Integer(-2)]) {
                return Err(self.gone());
            }
            if reply.len() != missing.len() {
                return Err(unexpected("assign"));
            }
            let mut placed = self.placed.borrow_mut();
            for (host, shard) in missing.iter().zip(reply) {
                let shard = shard
                    .as_integer()
                    .and_then(|s| usize::try_from(s).ok())
                    .filter(|s| *s < shards)
                    .ok_or_else(|| unexpected("assign"))?;
                placed.insert(host.to_string(), shard);
            }
        }
        let placed = self.placed.borrow();
        Ok(hosts
            .iter()
            .map(|h| placed.get(*h).copied().unwrap_or(0))
            .collect())
    }

    /// Deletes every key of the crawl, on every shard. Returns how many
    /// there were.
    ///
    /// Processes may still be running the crawl, and a scan is not one
    /// step: a script that ran behind the scan's cursor would leave its
    /// keys. So every shard's `meta` goes first; from then on every script
    /// finds the crawl gone and writes nothing, and the second scan takes
    /// the rest.
    pub async fn clear(&self) -> io::Result<usize> {
        // Every shard's prefix, `stage3:{NAME}:` and `stage3:{NAME/N}:`
        // (a name has no `/`): found on every master even when the first
        // shard's `meta`, which lists them, is gone.
        let name = glob_escape(&self.url.name);
        let prefixes = [
            format!("stage3:{{{name}}}:"),
            format!("stage3:{{{name}/*}}:"),
        ];
        let mut deleted = 0;
        for prefix in &prefixes {
            deleted += self.unlink_matching(&format!("{prefix}meta")).await?;
        }
        for prefix in &prefixes {
            deleted += self.unlink_matching(&format!("{prefix}*")).await?;
        }
        *self.shards.borrow_mut() = None;
        self.placed.borrow_mut().clear();
        self.told.borrow_mut().clear();
        Ok(deleted)
    }

    /// Deletes the keys that match `pattern` on every master. Returns how
    /// many there were.
    async fn unlink_matching(&self, pattern: &str) -> io::Result<usize> {
        let io = |e: Error| io::Error::other(format!("{}: {e}", self.url));
        let masters = self.nodes.masters().await.map_err(io)?;
        let mut deleted = 0;
        for pool in masters {
            let mut cursor = "0".to_string();
            loop {
                let mut conn = pool.get().await.map_err(io)?;
                let reply = conn
                    .command(&["SCAN", &cursor, "MATCH", pattern, "COUNT", "1000"])
                    .await
                    .map_err(io)?;
                let mut parts = items(reply)?.into_iter();
                let (Some(next), Some(keys)) = (parts.next(), parts.next()) else {
                    return Err(unexpected("SCAN"));
                };
                let keys: Vec<Frame> = keys.into_items().ok_or_else(|| unexpected("SCAN"))?;
                // One UNLINK per slot: a cluster refuses keys of two.
                let mut by_slot: HashMap<u16, Vec<&[u8]>> = HashMap::new();
                for key in keys.iter().filter_map(Frame::as_bytes) {
                    by_slot.entry(key_slot(key)).or_default().push(key);
                }
                for keys in by_slot.into_values() {
                    let mut command: Vec<&[u8]> = vec![b"UNLINK"];
                    command.extend(keys);
                    let reply = conn.command(&command).await.map_err(io)?;
                    deleted += reply.as_integer().unwrap_or(0).max(0) as usize;
                }
                conn.release();
                cursor = next.as_str().ok_or_else(|| unexpected("SCAN"))?.to_string();
                if cursor == "0" {
                    break;
                }
            }
        }
        Ok(deleted)
    }
}
