//! Keeping What You Fetched: the journal that resumes a crawl (`--state`) and the WARC archive (`--warc`).

pub(crate) mod archive;
pub(crate) mod journal;
pub(crate) mod warc;
