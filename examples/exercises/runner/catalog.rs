//! The exercises: one entry each, the single source of what the runner
//! prints. README.md and the book's appendix say the same things in prose;
//! the tests at the bottom check that they list the same exercises.

/// One exercise.
pub struct Exercise {
    /// "01" to "16".
    pub number: &'static str,
    /// The module name without the `exNN_` prefix.
    pub slug: &'static str,
    pub title: &'static str,
    /// 1 to 3 stars.
    pub stars: u8,
    /// The book chapter it belongs to (a file in book/src/).
    pub chapter: &'static str,
    pub goal: &'static str,
    /// The first hint: which idea applies, and where to look.
    pub nudge: &'static str,
    /// The second: the recipe.
    pub hint: &'static str,
}

impl Exercise {
    /// `ex04_state_machine`: the module, the file stem and the test prefix.
    pub fn module(&self) -> String {
        format!("ex{}_{}", self.number, self.slug)
    }

    /// The file the learner edits, from the repository root.
    pub fn starter_path(&self) -> String {
        format!("examples/exercises/src/{}.rs", self.module())
    }

    pub fn solution_path(&self) -> String {
        format!("examples/exercises/solutions/{}.rs", self.module())
    }

    pub fn tests_path(&self) -> String {
        format!("examples/exercises/tests/check/{}.rs", self.module())
    }

    /// "★★".
    pub fn difficulty(&self) -> String {
        "★".repeat(usize::from(self.stars))
    }

    /// The chapter's title, as the book's SUMMARY.md gives it.
    pub fn chapter_title(&self) -> &'static str {
        match self.chapter {
            "callbacks.md" => "Programming With Callbacks",
            "how-futures-work.md" => "How Rust Futures Work",
            "building-coroutines.md" => "Building Coroutines With Futures",
            "factoring-with-await.md" => "Factoring With .await",
            "coordinating-coroutines.md" => "Coordinating Coroutines",
            "good-citizen.md" => "Being a Good Citizen",
            other => other,
        }
    }

    /// The heading of its entry in the book's appendix.
    pub fn heading(&self) -> String {
        format!("Exercise {}: {}", self.number, self.title)
    }

    /// The id mdBook gives that heading: lower case, spaces to dashes,
    /// punctuation dropped.
    pub fn anchor(&self) -> String {
        self.heading()
            .chars()
            .filter_map(|c| match c {
                c if c.is_alphanumeric() || c == '-' => Some(c.to_ascii_lowercase()),
                c if c.is_whitespace() => Some('-'),
                _ => None,
            })
            .collect()
    }
}

/// Finds an exercise by number: "4", "04" and "ex04" all work.
pub fn find(number: &str) -> Option<&'static Exercise> {
    let digits = number.trim_start_matches("ex");
    let n: u32 = digits.parse().ok()?;
    EXERCISES
        .iter()
        .find(|e| e.number.parse::<u32>().ok() == Some(n))
}

/// A planted wrong answer: wrong/exNN_*.R.plant, one change to that
/// exercise's solution, which the `wrong` feature compiles in its place
/// in round R, with the trap it falls into and the tests that must fail on
/// it. `verify` checks that they do: a test that cannot fail on the
/// mistake its hint warns about proves nothing. An exercise has one plant
/// a round: its second most tempting mistake is round 2.
pub struct Planted {
    pub number: &'static str,
    pub round: u32,
    pub trap: &'static str,
    pub caught_by: &'static [&'static str],
}

pub static PLANTED: &[Planted] = &[
    Planted {
        number: "01",
        round: 1,
        trap: "a write that would block ends the callback before the echo is read",
        caught_by: &["two_megabytes_come_back_whole_and_in_order"],
    },
    Planted {
        number: "02",
        round: 1,
        trap: "every failed connect is tried again, not just a refused one",
        caught_by: &["an_error_other_than_a_refusal_is_not_tried_again"],
    },
    Planted {
        number: "03",
        round: 1,
        trap: "the next job is called with the state still borrowed",
        caught_by: &["a_job_that_releases_or_submits_at_once_is_fine"],
    },
    Planted {
        number: "04",
        round: 1,
        trap: "a Pending read returns without putting the state back",
        caught_by: &["a_pending_read_resumes_where_it_stopped"],
    },
    Planted {
        number: "05",
        round: 1,
        trap: "wake gives its count back before it wakes the signal",
        caught_by: &["a_wake_with_the_last_count_wakes_before_the_drop"],
    },
    Planted {
        number: "06",
        round: 1,
        trap: "the timer wakes the waker of the first poll, not the latest",
        caught_by: &["the_timer_wakes_the_latest_waker_only"],
    },
    Planted {
        number: "07",
        round: 1,
        trap: "the tracker numbers its tasks itself instead of by the runtime's id",
        caught_by: &["tasks_are_numbered_by_the_runtime_not_by_the_tracker"],
    },
    Planted {
        number: "08",
        round: 1,
        trap: "the group's drop only drops its handles, as if that cancelled their tasks",
        caught_by: &[
            "dropping_the_group_cancels_its_tasks",
            "dropping_the_group_closes_its_sockets",
        ],
    },
    Planted {
        number: "09",
        round: 1,
        trap: "the body takes the whole buffer, and the start of the next response with it",
        caught_by: &["the_next_response_stays_in_the_buffer"],
    },
    Planted {
        number: "10",
        round: 1,
        trap: "the loser is polled even when the winner is already ready, and its output is thrown away",
        caught_by: &["a_loser_ready_at_the_same_poll_loses_nothing"],
    },
    Planted {
        number: "11",
        round: 1,
        trap: "a waiter dropped while still in line stays in it",
        caught_by: &["a_waiter_cancelled_in_line_leaves_it"],
    },
    Planted {
        number: "12",
        round: 1,
        trap: "a host whose last waiter was cancelled is never forgotten",
        caught_by: &["a_host_whose_last_waiter_was_cancelled_is_forgotten"],
    },
    Planted {
        number: "12",
        round: 2,
        trap: "a host is forgotten while a permit handed to a waiter is still on its way, and a new semaphore hands out a second one",
        caught_by: &["a_permit_handed_to_a_waiter_still_holds_the_host"],
    },
    Planted {
        number: "13",
        round: 1,
        trap: "the root goes on the queue without being marked seen, so its link to itself brings it back one depth deeper",
        caught_by: &["depth_one_is_the_root_and_its_links"],
    },
    Planted {
        number: "14",
        round: 1,
        trap: "a tie between Allow and Disallow goes to whichever comes last in the file",
        caught_by: &["allow_wins_a_tie_whichever_comes_first"],
    },
    Planted {
        number: "15",
        round: 1,
        trap: "the wait blocks the thread",
        caught_by: &["each_wait_is_a_timer_on_the_runtime"],
    },
    Planted {
        number: "16",
        round: 1,
        trap: "a URL abandoned after the shutdown is never marked done, so `join` waits for it forever",
        caught_by: &["a_shutdown_after_the_root_abandons_everything_it_queued"],
    },
];

pub static EXERCISES: &[Exercise] = &[
    Exercise {
        number: "01",
        slug: "echo_callbacks",
        title: "Talk and listen at once, with callbacks",
        stars: 2,
        chapter: "callbacks.md",
        goal: "Send two megabytes through an echo peer from event-loop callbacks: keep writing after partial writes, and read the echo while you write, or both sides deadlock.",
        nudge: "mio says when a socket becomes ready, not that it still is: a callback must go on until a call says `WouldBlock`, and in both directions, since your writes and the peer's echo must both keep moving. Re-read how Programming With Callbacks handles readiness.",
        hint: "Keep `sent` in `Echo` and write `&data[sent..]` in a loop until it returns `WouldBlock`; then, in the same callback, go on to read until `WouldBlock`. Shut down the write half once, when `sent == data.len()` (a `shut` flag). Each callback must drain both directions, because mio reports changes, not levels: stop early and the next event may never come.",
    },
    Exercise {
        number: "02",
        slug: "retry_refused",
        title: "Try again later, with a timer callback",
        stars: 2,
        chapter: "callbacks.md",
        goal: "Retry a refused connection after a delay with `EventLoop::call_later`, up to `max_tries` attempts, without ever blocking the loop.",
        nudge: "A refused connect is an error like any other, and the retry is a timer callback (`EventLoop::call_later` in runtime/src/event_loop.rs). Ask yourself where the attempt's state lives while the timer waits.",
        hint: "In `attempt`'s error branch: if `e.kind() == ConnectionRefused && tries < retry.max_tries`, call `el.call_later(retry.delay, move |el| attempt(el, addr, retry, tries + 1, on_attempt, on_done))`; otherwise call `on_done`. The callbacks move into the timer's closure: between attempts, that closure is where the state lives.",
    },
    Exercise {
        number: "03",
        slug: "limit_fetchers",
        title: "At most N fetchers at a time",
        stars: 2,
        chapter: "callbacks.md",
        goal: "Cap how many callback fetches run at once: queue the rest first come first served, and start the next one when a slot is released.",
        nudge: "When a fetch ends and someone waits, its slot is handed over rather than given back and taken again. Decide where the waiting jobs live, and who starts the next one.",
        hint: "Add `waiting: VecDeque<Job>` to `State`. In `submit`, push the boxed job when `running >= max`. In `Slot::release`, pop the front job and call it with a new `Slot` (the running count stays the same: the slot changes hands); only when nobody waits, decrement `running`. End every `borrow_mut()` before you call a job, because the job may call `submit` or `release`.",
    },
    Exercise {
        number: "04",
        slug: "state_machine",
        title: "Write the state machine that async fn writes",
        stars: 2,
        chapter: "how-futures-work.md",
        goal: "Hand-write the enum and `Future::poll` for an `async fn` with three `.await`s (connect, send, receive), returning the same bytes.",
        nudge: "An `async fn` is a state machine with one state per `.await`. Write down what each state must own (the stream, what is left to send, what was read) before writing `poll`; How Rust Futures Work builds a smaller one the same way.",
        hint: "Variants `Connecting { stream, request }`, `Sending { stream, request, sent }`, `Receiving { stream, response }`. In `poll`, loop: take the state with `mem::replace(&mut *self, Get::Done)`, match it, and either build the next state or, on `Pending`, put the state back and return. Use `TcpStream::start_connect`, `poll_connect`, `poll_write` and `poll_read` (a read of 0 bytes is the end).",
    },
    Exercise {
        number: "05",
        slug: "raw_waker",
        title: "A Waker by hand, from a RawWakerVTable",
        stars: 2,
        chapter: "how-futures-work.md",
        goal: "Build a `Waker` from a data pointer and four `unsafe fn`s, with `// SAFETY:` comments, keeping the `Arc`'s count exact through clone, wake, wake_by_ref and drop.",
        nudge: "A `RawWaker` is a data pointer and a table of four functions, and an `Arc` can become such a pointer and back (`Arc::into_raw`, `Arc::from_raw`). For each function, ask whether it creates a reference, consumes one, or only borrows.",
        hint: "Data: `Arc::into_raw(signal).cast::<()>()`. clone: `Arc::increment_strong_count`, then a `RawWaker` with the same data and vtable. wake: `Arc::from_raw` takes the count over and the end of the function drops it; call `signal.wake()` in between. wake_by_ref: borrow with `&*data.cast::<Signal>()`. drop: `Arc::decrement_strong_count`. The vtable is a `static RawWakerVTable`.",
    },
    Exercise {
        number: "06",
        slug: "callback_future",
        title: "Turn a callback API into a future",
        stars: 2,
        chapter: "building-coroutines.md",
        goal: "Make a `sleep` future out of the event loop's `call_later` callback: pending until the timer fires, waking the latest waker, cancelling its timer when dropped.",
        nudge: "stage2-coroutines/src/chapter_future.rs already keeps a waker and a result, and a timer callback can set that result. Remember that `poll` may come again with a new waker, and that a dropped sleep must not leave its timer behind.",
        hint: "Keep `Option<(TimerId, chapter_future::Future<()>)>`. First poll: make the chapter Future, `call_later(delay, move |_| { let _ = f.set_result(()); })`, and store the id. Every poll: `Pin::new(&mut f).poll(cx)`, which stores the latest waker. `Drop`: if `!f.is_done()`, `try_borrow_mut()` the loop and `cancel_timer(id)`.",
    },
    Exercise {
        number: "07",
        slug: "task_tracker",
        title: "Which tasks are waiting, and on what",
        stars: 3,
        chapter: "building-coroutines.md",
        goal: "Spawn named tasks and label what they wait on, so that a report says `task 1 fetch /a: waiting on read response` for every task.",
        nudge: "The executor polls one task at a time, so which task is being polled now is a fact a thread-local can keep. Wrap each spawned future in one of your own that knows its task and updates a shared table around each poll.",
        hint: "A `thread_local!` holding the id of the task being polled, and a wrapper future with the id (set right after `runtime::spawn` returns the handle, before the first poll), the shared table and `Pin<Box<F>>`. Around the inner poll: mark Running, set the thread-local, poll, restore it; Pending and still Running means Waiting with no label. `waiting_on` is a `poll_fn` that, when its future is pending and the entry is still Running, sets Waiting(label): the innermost gets there first. An unfinished wrapper that is dropped was cancelled.",
    },
    Exercise {
        number: "08",
        slug: "task_group",
        title: "Cancel what you spawned",
        stars: 1,
        chapter: "building-coroutines.md",
        goal: "Tie tasks to a group's lifetime: dropping the group cancels them, and the server sees their sockets close.",
        nudge: "Cancelling a task in our runtime drops its future (Building Coroutines With Futures, Cancelling a task). What owns the handles, and when is it dropped?",
        hint: "`for handle in &self.handles { handle.cancel() }`, in `cancel_all` and in `impl<T> Drop for TaskGroup<T>`. Cancelling a finished task does nothing, so there is nothing to check. Cancelling drops the task's future, and with it the socket the future owns.",
    },
    Exercise {
        number: "09",
        slug: "read_framing",
        title: "Factor a response reader out of fill",
        stars: 2,
        chapter: "factoring-with-await.md",
        goal: "Read keep-alive HTTP/1.1 responses with `.await`: `read_head` and `read_body` built on one `fill`, leaving the next response's bytes in the buffer.",
        nudge: "One buffer, one `fill` that reads more into it, and parsers that take only the bytes that are theirs: a response may arrive with the start of the next one. Stage 3's connection (stage3-crawler/src/http/conn.rs, `fill`) keeps the same kind of buffer.",
        hint: "`read_head`: loop { parse `&self.buf` with `httparse::Response::parse`; `Complete(n)`: read the status and `Content-Length`, `self.buf.drain(..n)`, return; `Partial`: `if self.fill().await? == 0` it is `UnexpectedEof` }. A `Transfer-Encoding` header is `InvalidData`, \"chunked bodies are not supported\". `read_body(len)`: `fill` until `buf.len() >= len`, then `buf.drain(..len).collect()`.",
    },
    Exercise {
        number: "10",
        slug: "select",
        title: "Race two futures",
        stars: 1,
        chapter: "factoring-with-await.md",
        goal: "Write `select(a, b)`: run two futures in one task and return the first output, dropping the loser.",
        nudge: "Running two futures in one task means one `poll` that polls both, with the same `Context`, so either can wake the task. `std::future::poll_fn` and `std::pin::pin!` are all you need.",
        hint: "`pin!` both, then `poll_fn(|cx| ...)`: poll `a`, and if it is ready return `Left`; poll `b`, and if it is ready return `Right`; else `Pending`. Both futures keep the same waker, so either can wake the task. Returning drops both pinned futures, which cancels the loser.",
    },
    Exercise {
        number: "11",
        slug: "semaphore",
        title: "A semaphore on the runtime",
        stars: 2,
        chapter: "coordinating-coroutines.md",
        goal: "Write an async semaphore: fair (first come first served), with no barging past a woken waiter, and safe when a woken waiter is cancelled.",
        nudge: "A permit released while someone waits belongs to that waiter, even before it runs. Then list every way a waiter can end: it takes its permit, it is dropped while still in line, or it is dropped after being handed one.",
        hint: "A `VecDeque<(id, Waker)>` of waiters and a list of ids that were granted a permit. `release`: if someone waits, move their id to granted and wake them; else `permits += 1`. `Acquire::poll`: on the first poll take a free permit only if nobody waits, else join the line; later polls look for their id among the granted. `Drop for Acquire`: leave the line, and if granted but never polled, `release()` again.",
    },
    Exercise {
        number: "12",
        slug: "host_limit",
        title: "A per-host concurrency limit",
        stars: 2,
        chapter: "good-citizen.md",
        goal: "Limit requests per host for stage 3's workers, with a semaphore per host (exercise 11) that is forgotten when the host goes idle.",
        nudge: "Exercise 11's semaphore does the waiting; what is left is a map from host to semaphore, and knowing when a host has nobody active or waiting. Never hold a `RefCell` borrow across an `.await`.",
        hint: "A map from host key to `Host { semaphore, active }`. `acquire`: get or insert the host's semaphore, clone it, end the borrow, `semaphore.acquire().await`, then count it active. Keep the semaphore's `Permit` in an `Option` in `HostPermit`. In `Drop`: drop the permit first, then remove the host if `active == 0`, nobody waits and every permit is back. And an `acquire` cancelled while it waits can leave the host idle with no `HostPermit` to notice: a guard declared before the wait and disarmed after it does the same check when it is dropped armed.",
    },
    Exercise {
        number: "13",
        slug: "depth_limit",
        title: "A depth limit that is exact under concurrency",
        stars: 2,
        chapter: "good-citizen.md",
        goal: "Crawl only URLs within `max_depth` links of the root, with each URL's true (shortest) depth, however the workers' fetches interleave.",
        nudge: "With many workers, the first path to reach a URL is not always the shortest. The queue's `join` (Coordinating Coroutines) tells you when a whole level is done.",
        hint: "Crawl one depth at a time: put every URL of depth d on the queue, `q.join().await`, then make the links found meanwhile (marked seen as they are found) the next depth. Workers record the depth being crawled, and at `max_depth` they collect no links.",
    },
    Exercise {
        number: "14",
        slug: "robots_txt",
        title: "Honour robots.txt",
        stars: 2,
        chapter: "good-citizen.md",
        goal: "Parse robots.txt (groups, Allow and Disallow, `*` and `$`), decide URLs by the longest matching rule, and fetch it with the right reading of 4xx and 5xx.",
        nudge: "Read RFC 9309's sections 2.2 (groups and rules) and 2.3.1 (what each status means) before the parser: which group applies to us, the longest match wins, and Allow wins a tie.",
        hint: "Line by line: drop `#...`, split at the first `:`, lower-case the key. User-agent lines collect agents; rules after them belong to those agents; a User-agent line after a rule starts a new group. Keep our rules and the `*` rules apart; use ours if a group named us. Match: strip a final `$`, split at `*`: the first piece is a prefix, the others are found in order. Pick with `max_by_key(|r| (r.pattern.len(), r.allow))`.",
    },
    Exercise {
        number: "15",
        slug: "backoff",
        title: "Retry with exponential backoff and jitter",
        stars: 2,
        chapter: "coordinating-coroutines.md",
        goal: "Space retries out: a ceiling that doubles up to a maximum without overflow, a full-jitter draw below it, and a retrying GET that sleeps on the runtime.",
        nudge: "Exponential backoff with full jitter: a ceiling that doubles, a delay drawn below it. Durations can overflow (look for a saturating multiply), and the sleep must be the runtime's, never the thread's.",
        hint: "`ceiling`: start at `base.min(max)` and double with `saturating_mul(2)` once per failure after the first, stopping at `max` (or at zero). `delay`: `self.ceiling(failures).mul_f64(rng.next_f64())`. `get_with_retry`: loop; on a retryable error with tries left, push `backoff.delay(tries, rng)` onto `waits` and `runtime::sleep(wait).await`.",
    },
    Exercise {
        number: "16",
        slug: "graceful_shutdown",
        title: "Shut down gracefully on Ctrl-C",
        stars: 2,
        chapter: "coordinating-coroutines.md",
        goal: "On Ctrl-C, let fetches in progress finish, start no new ones, and report what was abandoned, with the queue's `join` still ending the crawl.",
        nudge: "Every URL put on the queue needs its `task_done`, fetched or not, or `join` never returns. Find where a worker takes URLs and where new URLs enter, and decide what each does once shutdown has begun.",
        hint: "Two checks of `self.shutdown.is_triggered()`: in `work`, right after `get` (record the URL in `abandoned`, call `task_done`, `continue`; without the `task_done`, `join` waits forever), and at the top of `add_url` (queue nothing). Fetches already in progress need no code: they finish on their own.",
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    fn repo() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    fn read(path: &str) -> String {
        std::fs::read_to_string(repo().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn numbers_are_consecutive_and_files_exist() {
        for (i, e) in EXERCISES.iter().enumerate() {
            assert_eq!(e.number, format!("{:02}", i + 1));
            assert!((1..=3).contains(&e.stars), "{}", e.number);
            for path in [e.starter_path(), e.solution_path(), e.tests_path()] {
                assert!(repo().join(&path).is_file(), "missing {path}");
            }
            assert!(
                repo().join("book/src").join(e.chapter).is_file(),
                "{}",
                e.chapter
            );
            let header = format!("//! Exercise {} {}: ", e.number, e.difficulty());
            for path in [e.starter_path(), e.solution_path()] {
                assert!(
                    read(&path).starts_with(&header),
                    "{path} should start with {header:?}"
                );
            }
        }
    }

    #[test]
    fn the_lib_and_the_test_harness_list_every_exercise() {
        let lib = read("examples/exercises/src/lib.rs");
        let harness = read("examples/exercises/tests/check/main.rs");
        for e in EXERCISES {
            let module = e.module();
            // A module with a planted wrong answer says "solutions, but
            // not wrong"; the rest just "solutions".
            let plain = format!(
                "#[cfg_attr(feature = \"solutions\", path = \"../solutions/{module}.rs\")]\npub mod {module};"
            );
            let planted = format!("#[cfg(not(feature = \"wrong\"))]\n{plain}");
            assert!(
                lib.contains(&plain) || lib.contains(&planted),
                "src/lib.rs must declare {module} with its solution path"
            );
            assert!(
                harness.contains(&format!("mod {module};")),
                "tests/check/main.rs: {module}"
            );
        }
    }

    #[test]
    fn titles_make_plain_anchors() {
        assert_eq!(
            find("1").map(Exercise::anchor).as_deref(),
            Some("exercise-01-talk-and-listen-at-once-with-callbacks")
        );
        for e in EXERCISES {
            assert!(
                e.title
                    .chars()
                    .all(|c| c.is_alphanumeric() || " ,-.".contains(c)),
                "keep titles to letters, digits, spaces and , - . so that mdBook and book/check-listings agree on the anchor: {}",
                e.title
            );
        }
    }

    #[test]
    fn find_accepts_every_spelling() {
        assert_eq!(find("4").map(|e| e.slug), Some("state_machine"));
        assert_eq!(find("04").map(|e| e.slug), Some("state_machine"));
        assert_eq!(find("ex04").map(|e| e.slug), Some("state_machine"));
        assert!(find("99").is_none());
        assert!(find("four").is_none());
    }

    #[test]
    fn the_readme_table_matches() {
        let readme = read("examples/exercises/README.md");
        for e in EXERCISES {
            let row = format!(
                "| {} | {} | {} | [{}](../../book/src/{}) | [`src/{}.rs`](src/{}.rs) | `cargo run -p exercises -- check {}` |",
                e.number,
                e.title,
                e.difficulty(),
                e.chapter_title(),
                e.chapter,
                e.module(),
                e.module(),
                e.number
            );
            assert!(readme.contains(&row), "README.md is missing the row\n{row}");
        }
    }

    #[test]
    fn every_exercise_has_two_hints_that_differ() {
        for e in EXERCISES {
            assert!(!e.nudge.is_empty() && !e.hint.is_empty(), "{}", e.number);
            assert_ne!(e.nudge, e.hint, "{}", e.number);
            assert!(
                !e.hint.starts_with(e.nudge),
                "{}: the second repeats the first",
                e.number
            );
        }
    }

    #[test]
    fn the_book_lists_every_exercise() {
        let appendix = read("book/src/appendix/exercises.md");
        for e in EXERCISES {
            let include = format!(
                "{{{{#include ../../../examples/exercises/solutions/{}.rs}}}}",
                e.module()
            );
            assert!(appendix.contains(&include), "appendix: {include}");
            assert!(
                appendix.contains(&format!("## {} {{#{}}}\n", e.heading(), e.anchor())),
                "appendix: ## {} {{#{}}} (the id keeps the translated book's links)",
                e.heading(),
                e.anchor()
            );
            assert!(
                appendix.contains(e.goal),
                "appendix: the goal of {}",
                e.number
            );
            assert!(
                appendix.contains(e.nudge),
                "appendix: the nudge of {}",
                e.number
            );
            assert!(
                appendix.contains(e.hint),
                "appendix: the hint of {}",
                e.number
            );
            let chapter = read(&format!("book/src/{}", e.chapter));
            assert!(
                chapter.contains(&format!("(appendix/exercises.md#{})", e.anchor())),
                "book/src/{}'s Exercises section must link exercise {}",
                e.chapter,
                e.number
            );
        }
    }

    #[test]
    fn every_planted_wrong_answer_is_compiled_and_its_tests_exist() {
        let lib = read("examples/exercises/src/lib.rs");
        assert!(
            lib.contains("include!(concat!(env!(\"OUT_DIR\"), \"/wrong.rs\"));"),
            "src/lib.rs must include build.rs's wrong.rs under the wrong feature"
        );
        let mut files = Vec::new();
        for planted in PLANTED {
            let e = find(planted.number).expect("a planted answer names an exercise");
            let file = format!("{}.{}.plant", e.module(), planted.round);
            read(&format!("examples/exercises/wrong/{file}"));
            assert!(!files.contains(&file), "two plants of {file} in PLANTED");
            files.push(file);
            let tests = read(&e.tests_path());
            for test in planted.caught_by {
                assert!(tests.contains(&format!("fn {test}()")), "{test}");
            }
        }
        // And no plant that verify never builds.
        let dir = repo().join("examples/exercises/wrong");
        for entry in std::fs::read_dir(&dir).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            assert!(files.contains(&name), "wrong/{name} is not in PLANTED");
        }
        // Every exercise has its most tempting mistake planted.
        for e in EXERCISES {
            assert!(
                PLANTED.iter().any(|p| p.number == e.number && p.round == 1),
                "exercise {} has no planted wrong answer",
                e.number
            );
        }
    }
}
