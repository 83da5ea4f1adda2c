//! Keeping What You Fetched: the journal that resumes a crawl (`--state`), the WARC archive (`--warc`), and crawling again (`--recrawl`).

pub(crate) mod archive;
pub(crate) mod journal;
pub(crate) mod recrawl;
pub(crate) mod warc;
