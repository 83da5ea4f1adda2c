//! Being a Good Citizen: the rules a polite crawler obeys, and the queues that hand a URL out only in its turn.

pub(crate) mod depth;
pub(crate) mod host;
pub mod politeness;
pub mod robots;
pub(crate) mod robots_fetch;
pub(crate) mod rules;
pub mod sitemap;
pub(crate) mod sitemaps;
pub mod slow_down;
pub mod traps;
pub(crate) mod turns;
