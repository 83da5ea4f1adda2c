//! What the two services agree on about Redis: the key names, the accept
//! script, and how a job id is made.

use redis_client::RedisUrl;
use sha2::{Digest, Sha256};

/// The stream entry's field that says the job came with an idempotency
/// key, whose record the store must set to expire once the job is stored.
pub const KEYED: &str = "keyed";

/// The consumer group every `store` process joins.
pub const GROUP: &str = "store";
/// How long Redis remembers an idempotency key after its job is stored:
/// a day of fast retries. Until the job is stored Redis keeps the key with
/// no expiry; after the day, the api asks PostgreSQL.
pub const KEY_TTL_SECONDS: u64 = 24 * 60 * 60;

/// The keys of one pipeline, all under the name in the broker URL.
#[derive(Clone, Debug)]
pub struct Keys {
    /// The stream: the article's Kafka topic.
    pub stream: String,
    /// A hash from job id to `queued` or `failed`, for `GET /jobs/ID`. A
    /// stored job's field is deleted once PostgreSQL holds the job, and the
    /// api asks the table about it.
    pub status: String,
    /// The dead-letter stream: each entry the store can never store (not a
    /// job, or a job PostgreSQL refuses), with the reason, so that what is
    /// acknowledged unstored is still kept and visible.
    pub dead: String,
    prefix: String,
}

impl Keys {
    pub fn new(url: &RedisUrl) -> Keys {
        let prefix = url.name.clone();
        Keys {
            stream: format!("{prefix}:stream"),
            status: format!("{prefix}:status"),
            dead: format!("{prefix}:dead"),
            prefix,
        }
    }

    /// Where the job of an idempotency key is remembered. The key decides
    /// the job id ([`job_id`]), so the record is named by the id: the store
    /// finds it from the job alone when it sets the record's expiry.
    pub fn idempotency(&self, id: impl std::fmt::Display) -> String {
        format!("{}:idempotency:{id}", self.prefix)
    }
}

/// The largest job id: ids are 53 bits, so that JavaScript clients read
/// them exactly.
pub const MAX_JOB_ID: u64 = (1 << 53) - 1;

// ANCHOR: job_id
/// A job's id. With an idempotency key it is derived from the key, so a
/// retry names the same job and the store's primary key catches any
/// duplicate; without one it is random. 53 bits, so that JavaScript clients
/// read it exactly.
pub fn job_id(idempotency_key: Option<&str>) -> Result<u64, String> {
    let mut bytes = [0u8; 8];
    match idempotency_key {
        Some(key) => {
            let digest = Sha256::digest(format!("job-id:{key}").as_bytes());
            bytes.copy_from_slice(&digest[..8]);
        }
        None => getrandom::getrandom(&mut bytes).map_err(|e| format!("no random id: {e}"))?,
    }
    // Never 0, which no client should have to special-case.
    Ok((u64::from_be_bytes(bytes) & MAX_JOB_ID).max(1))
}
// ANCHOR_END: job_id

// ANCHOR: accept_script
/// Appends a job, atomically with its idempotency key. Redis runs a script
/// without interleaving other clients' commands, so two retries racing
/// each other cannot both append, and a crash cannot leave the key without
/// the job or the job without the key.
///
/// KEYS: the stream, the status hash, and (optional) the key's record.
/// ARGV: the job id and the job's JSON.
/// Returns `{1, json}` for a new job, `{0, earlier_json}` for a retry, and
/// `{2, earlier_json}` for the key reused with a different job: a retry
/// must be the same request (payment APIs refuse such a reuse too), and
/// the job's JSON is its canonical form, so the same job compares equal
/// however its body was spaced. The record has no expiry: the store gives
/// it a day once the job is stored, and the api asks the table first.
pub const ACCEPT: &str = r#"
if KEYS[3] then
  local earlier = redis.call('GET', KEYS[3])
  if earlier then
    if earlier == ARGV[2] then return {0, earlier} end
    return {2, earlier}
  end
  redis.call('XADD', KEYS[1], '*', 'job', ARGV[2], 'keyed', '1')
  redis.call('SET', KEYS[3], ARGV[2])
else
  redis.call('XADD', KEYS[1], '*', 'job', ARGV[2])
end
redis.call('HSET', KEYS[2], ARGV[1], 'queued')
return {1, ARGV[2]}
"#;
// ANCHOR_END: accept_script

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_always_names_the_same_job() {
        let a = job_id(Some("order-17")).unwrap();
        assert_eq!(job_id(Some("order-17")), Ok(a));
        assert_ne!(job_id(Some("order-18")), Ok(a));
        assert!(a < 1 << 53);
        assert_ne!(job_id(None).unwrap(), job_id(None).unwrap());
    }
}
