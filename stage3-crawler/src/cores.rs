//! Beyond One Core: one crawl on several event loops, its hosts shared
//! out among them (`--loops N`). The program runs it (`program::spread`).

pub(crate) mod shards;
