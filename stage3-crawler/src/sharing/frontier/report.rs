//! The merged report: every record of the crawl, its sitemaps, and its status, read back from Redis.

use super::*;

impl Frontier {
    /// Every URL's record, statistic or skipped, as JSON, in no order.
    pub async fn records(&self) -> io::Result<Vec<String>> {
        let mut records = Vec::new();
        for prefix in self.shards().await?.iter() {
            let pairs = self.scan_hash(&format!("{prefix}report")).await?;
            records.extend(pairs.iter().map(|(url, value)| record_json(url, value)));
        }
        Ok(records)
    }

    /// What reading each sitemap came to (`--sitemaps`), over every shard,
    /// by URL: the sitemaps read, not those still queued.
    pub async fn sitemap_outcomes(&self) -> io::Result<Vec<(String, String)>> {
        let mut outcomes = Vec::new();
        for prefix in self.shards().await?.iter() {
            let pairs = self.scan_hash(&format!("{prefix}sitemaps")).await?;
            outcomes.extend(pairs.into_iter().filter(|(_, outcome)| !outcome.is_empty()));
        }
        outcomes.sort();
        outcomes.dedup();
        Ok(outcomes)
    }

    /// Every field of the hash `key` with its value, a thousand at a time
    /// (HSCAN: a field may come twice while the hash changes).
    pub(super) async fn scan_hash(&self, key: &str) -> io::Result<Vec<(String, String)>> {
        let mut pairs = Vec::new();
        let mut cursor = "0".to_string();
        loop {
            let reply = self
                .call(key, async |conn: &mut Connection| {
                    conn.command(&["HSCAN", key, &cursor, "COUNT", "1000"])
                        .await
                })
                .await?;
            let mut parts = items(reply)?.into_iter();
            let (Some(next), Some(page)) = (parts.next(), parts.next()) else {
                return Err(unexpected("HSCAN"));
            };
            let page = page.into_items().ok_or_else(|| unexpected("HSCAN"))?;
            for pair in page.chunks(2) {
                if let [field, value] = pair
                    && let (Some(field), Some(value)) = (field.as_str(), value.as_str())
                {
                    pairs.push((field.to_string(), value.to_string()));
                }
            }
            cursor = next
                .as_str()
                .ok_or_else(|| unexpected("HSCAN"))?
                .to_string();
            if cursor == "0" {
                return Ok(pairs);
            }
        }
    }

    /// The crawl's counters, summed over its shards.
    pub async fn status(&self) -> io::Result<Status> {
        let mut status = Status::default();
        for (shard, prefix) in self.shards().await?.iter().enumerate() {
            let keys = [
                format!("{prefix}pending"),
                format!("{prefix}expired"),
                format!("{prefix}meta"),
                format!("{prefix}unreadable"),
            ];
            let reply = self
                .call(&keys[0], async |conn: &mut Connection| {
                    let replies = conn
                        .pipeline(&[
                            vec!["GET", keys[0].as_str()],
                            vec!["GET", keys[1].as_str()],
                            vec!["HGET", keys[2].as_str(), "created"],
                            vec!["HGET", keys[2].as_str(), "finished"],
                            vec!["HGET", keys[2].as_str(), "workers"],
                            vec!["LLEN", keys[3].as_str()],
                        ])
                        .await?;
                    let numbers = replies
                        .into_iter()
                        .map(|r| r.map(|f| Frame::Integer(number(&f) as i64)))
                        .collect::<Result<Vec<_>, _>>()?;
                    Ok(Frame::Array(numbers))
                })
                .await?;
            let n: Vec<u64> = items(reply)?
                .iter()
                .map(|f| f.as_integer().unwrap_or(0).max(0) as u64)
                .collect();
            let at = |i: usize| n.get(i).copied().unwrap_or(0);
            status.pending += at(0);
            status.expired += at(1);
            status.unreadable += at(5);
            // The crawl's own facts live on its first shard.
            if shard == 0 {
                status.created_ms = at(2);
                status.finished_ms = at(3);
                status.workers = at(4);
            }
        }
        Ok(status)
    }
}

// ANCHOR: record_json
/// A URL's record as the report in Redis keeps it, as JSON: `=NUM_URLS
/// NUM_NEW_URLS` and the record the process sent, to which the URL (the
/// report's key) and the counts, which only Redis knew, are added back
/// (a process sends neither: see shared.rs's `frontier_record`); or
/// `-REASON` and the page that linked the URL, for a URL `see` refused.
/// Anything else is given back as it is, for the reader to call
/// unreadable.
pub(super) fn record_json(url: &str, value: &str) -> String {
    let (head, rest) = value.split_once('\n').unwrap_or((value, ""));
    if let Some(reason) = head.strip_prefix('-') {
        let from = (!rest.is_empty()).then_some(rest);
        return serde_json::json!({"url": url, "skipped": reason, "from": from}).to_string();
    }
    let counts = head.strip_prefix('=').and_then(|c| c.split_once(' '));
    let parsed = serde_json::from_str::<serde_json::Value>(rest);
    match (counts, parsed) {
        (Some((urls, new)), Ok(mut record)) => {
            if let (Ok(urls), Ok(new), Some(fields)) = (
                urls.parse::<u64>(),
                new.parse::<u64>(),
                record.as_object_mut(),
            ) {
                fields.entry("url").or_insert_with(|| url.into());
                fields.insert("num_urls".into(), urls.into());
                fields.insert("num_new_urls".into(), new.into());
            }
            record.to_string()
        }
        _ => value.to_string(),
    }
}
// ANCHOR_END: record_json
