//! Finding Links Without a Parser: a page's encoding, the scanner that finds its hrefs, and the threads that run it.

pub mod charset;
pub mod parsing;
pub mod scanner;
