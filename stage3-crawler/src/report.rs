//! The report: the text report and JSON Lines, their counts, and the lines sorted in bounded memory.

pub(crate) mod external_sort;
pub mod reporting;
