//! What the two services agree on about PostgreSQL: the table of stored
//! jobs, the store's insert, and the api's lookup. The table is the
//! pipeline's memory for good: Redis forgets a stored job's status at once
//! and its idempotency key a day later, and from then on the api asks
//! here.

/// The table, made if it is missing. Both services run this as they
/// start, and PostgreSQL's `CREATE TABLE IF NOT EXISTS` is not safe against
/// itself: two at once on a database without the table both create it,
/// and the second fails on the catalog's unique index of type names. So
/// one statement takes a lock for its transaction first (an advisory lock,
/// on a number that is this table's), and the second waits, then finds the
/// table there.
pub const SCHEMA: &str = "DO $$ BEGIN
    PERFORM pg_advisory_xact_lock(7002318543115246173);
    CREATE TABLE IF NOT EXISTS jobs (
        id bigint PRIMARY KEY,
        doc jsonb NOT NULL,
        stored_at timestamptz NOT NULL DEFAULT clock_timestamp()
    );
END $$";

// ANCHOR: insert
/// The idempotent insert: the job id is the primary key, and a second
/// insert of the same job does nothing.
pub const INSERT: &str =
    "INSERT INTO jobs (id, doc) VALUES ($1, $2::jsonb) ON CONFLICT (id) DO NOTHING";
// ANCHOR_END: insert

/// The stored jobs among an array of ids (`{1,2,3}`), with their ids: the
/// api asks for many requests at once (see `lookup.rs`).
pub const FIND_ANY: &str = "SELECT id::text, doc::text FROM jobs WHERE id = ANY($1::bigint[])";

/// A stored job by id, as JSON text (`jsonb` prints its own spacing and
/// key order, so the caller parses it rather than comparing text).
pub const FIND: &str = "SELECT doc::text FROM jobs WHERE id = $1";

/// The job in a row of [`FIND`].
pub fn job_of(row: &[Option<String>]) -> Result<crate::Job, String> {
    let doc = row.first().and_then(Option::as_deref).unwrap_or_default();
    serde_json::from_str(doc).map_err(|e| format!("the table holds a row that is not a job: {e}"))
}
