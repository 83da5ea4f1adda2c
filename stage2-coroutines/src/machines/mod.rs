//! The fetcher as hand-written state machines: `connect`, `read`, `read_all`
//! and `fetch`, each an enum that implements [`Future`].
//!
//! A Python generator keeps its frame on the heap between steps: the locals,
//! and `f_lasti`, the instruction it stopped at. Our enums are that frame.
//! The variant says where the coroutine stopped (a resume point), and the
//! variant's fields are the locals that must survive until it resumes.
//! Each `poll` runs from one resume point to the next.
//!
//! `read_all` holds a `read` in one of its variants and polls it, and `fetch`
//! holds a `connect` and then a `read_all`: delegation written out by hand,
//! which is what `yield from` does for a generator and `.await` does for an
//! `async fn` (see [`crate::async_fetch`] for the same code written that way).
//!
//! All four follow one pattern: take the state out of `self` (leaving
//! `Done`), look at it, and put back the state to resume from. A machine
//! that returns `Pending` has put its state back; one that returns `Ready`
//! leaves `Done`, and polling it again is a bug that panics, as polling a
//! finished `async fn` does.

mod connect;
mod fetch;
mod read;
mod read_all;

pub use connect::Connect;
pub use fetch::Fetch;
pub use read::Read;
pub use read_all::ReadAll;

#[cfg(test)]
mod tests {
    use super::*;

    /// None of our machines borrows from itself, so they may move freely
    /// between polls: they are `Unpin`. The compiler's `async fn` machines
    /// are not (see `crate::async_fetch`).
    #[test]
    fn hand_written_machines_are_unpin() {
        fn unpin<T: Unpin>() {}
        unpin::<Connect>();
        unpin::<Read>();
        unpin::<ReadAll>();
        unpin::<Fetch>();
    }
}
