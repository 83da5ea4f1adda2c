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
    /// The exercises whose files it uses (`watch` watches them too).
    pub builds_on: &'static [&'static str],
    pub goal: &'static str,
    /// The first hint: which idea applies, and where to look.
    pub nudge: &'static str,
    /// The second, keyed to what a failing test shows: for each test,
    /// what its failure says about the code, and where to look.
    pub pointers: &'static [(&'static str, &'static str)],
    /// The third: the recipe.
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
            "beyond-one-core.md" => "Beyond One Core",
            "http2.md" => "HTTP/2: One Connection, Many Streams",
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
    Planted {
        number: "17",
        round: 1,
        trap: "the receiver lets go of the lock between finding nothing and leaving its waker",
        caught_by: &[
            "a_value_sent_from_another_thread_always_wakes_the_receiver",
            "two_senders_on_two_threads_lose_no_wake_and_no_value",
        ],
    },
    Planted {
        number: "18",
        round: 1,
        trap: "a frame wakes every waiting request, not only its own stream's",
        caught_by: &["a_frame_wakes_its_own_stream_and_no_other"],
    },
];

pub static EXERCISES: &[Exercise] = &[
    Exercise {
        number: "01",
        slug: "echo_callbacks",
        title: "Talk and listen at once, with callbacks",
        stars: 2,
        chapter: "callbacks.md",
        builds_on: &[],
        goal: "Send two megabytes through an echo peer from event-loop callbacks: keep writing after partial writes, and read the echo while you write, or both sides deadlock.",
        nudge: "mio's events are edge-triggered (Async, \"Events are edge-triggered\"): an event comes when a socket becomes ready, and none comes again until a call has said `WouldBlock`. So each callback must push both directions as far as they go, writing until the socket will take no more and then reading until it has nothing more, before it returns. In stage1-callbacks/src/fetcher.rs, `connected` does the first half and `read_response` the second; your one callback does both, on every event.",
        hint: "Keep `sent` in `Echo` and write `&data[sent..]` in a loop until it returns `WouldBlock`; then, in the same callback, go on to read until `WouldBlock`. Shut down the write half once, when `sent == data.len()` (a `shut` flag). Each callback must drain both directions, because mio reports changes, not levels: stop early and the next event may never come.",
        pointers: &[
            (
                "a_short_message_comes_back",
                "Even a message that fits in one write failed, so the basic sequence is broken. A hang means the peer never learned the end (the write half was never shut down) or your reads stopped before the peer closed; a `BrokenPipe` means a write came after the shutdown; a count of registered sockets above 0 means the socket was not unregistered when the echo ended.",
            ),
            (
                "two_megabytes_come_back_whole_and_in_order",
                "If the peer saw fewer bytes than were sent, a write that took only part of the buffer was not continued on a later callback from where it stopped. If the test hangs instead, a callback returned after a write's `WouldBlock` without reading, so the peer's echo filled its buffer and no side could move. If everything came back but out of order, each write did not start at the first byte not yet sent.",
            ),
            (
                "nothing_to_send_still_finishes",
                "With nothing to send, the write half must still be shut down, at once, or the peer waits for more and the test hangs. Look for a shutdown that only runs after a write succeeds, and for a write of zero bytes that is treated as an error.",
            ),
        ],
    },
    Exercise {
        number: "02",
        slug: "retry_refused",
        title: "Try again later, with a timer callback",
        stars: 2,
        chapter: "callbacks.md",
        builds_on: &[],
        goal: "Retry a refused connection after a delay with `EventLoop::call_later`, up to `max_tries` attempts, without ever blocking the loop.",
        nudge: "A retry is the same attempt made again later, and on the event loop \"later\" is a callback: the next attempt is started by a timer's closure, not by your code. Between attempts that closure is the only thing alive, so everything the next attempt needs (the address, the settings, the count, both callbacks) must be moved into it; the chapter's Stack ripping section says why. Whether to try again depends on the error's kind, and the count includes the first attempt.",
        hint: "In `attempt`'s error branch: if `e.kind() == ConnectionRefused && tries < retry.max_tries`, call `el.call_later(retry.delay, move |el| attempt(el, addr, retry, tries + 1, on_attempt, on_done))`; otherwise call `on_done`. The callbacks move into the timer's closure: between attempts, that closure is where the state lives.",
        pointers: &[
            (
                "a_port_that_always_refuses_is_tried_max_tries_times",
                "Compare the attempt numbers reported with `[1, 2, 3]`. Only `[1]` means a refusal still ends at once; a fourth attempt means the limit check is off by one; a wrong `tries` in `on_done` means the count passed along is not the current attempt's. A timer left pending or a second `on_done` call means both a retry and the final `on_done` happened for one attempt.",
            ),
            (
                "a_server_that_starts_listening_late_is_reached",
                "The server starts listening right after the first refusal, so the second attempt must connect and report `tries == 2`. A refused error here means no second attempt was made; a wrong count means the attempt number did not travel into the timer's closure as `tries + 1`.",
            ),
            (
                "one_try_means_one_attempt",
                "With `max_tries` of 1 there must be no retry at all. More than one attempt means the comparison between the attempt number (which starts at 1) and `max_tries` lets one extra through.",
            ),
            (
                "an_error_other_than_a_refusal_is_not_tried_again",
                "A connect to a multicast address fails with an error that is not a refusal, and it was tried again. The retry condition must look at the error's `kind()` and retry only `ConnectionRefused`.",
            ),
        ],
    },
    Exercise {
        number: "03",
        slug: "limit_fetchers",
        title: "At most N fetchers at a time",
        stars: 2,
        chapter: "callbacks.md",
        builds_on: &[],
        goal: "Cap how many callback fetches run at once: queue the rest first come first served, and start the next one when a slot is released.",
        nudge: "A job is a boxed `FnOnce`, and a closure can wait in a collection until someone calls it, as the event loop keeps its timers until they are due (`call_at` in runtime/src/event_loop.rs). When a job ends while others wait, its slot passes straight to the longest-waiting one, so the number running does not change; it goes down only when nobody waits.",
        hint: "Add `waiting: VecDeque<Job>` to `State`. In `submit`, push the boxed job when `running >= max`. In `Slot::release`, pop the front job and call it with a new `Slot` (the running count stays the same: the slot changes hands); only when nobody waits, decrement `running`. End every `borrow_mut()` before you call a job, because the job may call `submit` or `release`.",
        pointers: &[
            (
                "thirty_fetches_four_at_a_time",
                "A peak above 4 (or the server seeing more than 4 requests at once) means `submit` started a job while `max` were running. Jobs starting out of order mean the queue is taken from the wrong end. A hang means queued jobs were never started by `release`, and a final `running` or `waiting` that is not 0 means the count was not kept when a slot changed hands or was given back.",
            ),
            (
                "a_limit_of_one_runs_jobs_one_after_another",
                "With a limit of 1, two jobs ran at once or out of order. Check the comparison in `submit` (a job may start only while fewer than `max` run) and that `release` starts the next job instead of also leaving room for another.",
            ),
            (
                "a_crawl_whose_jobs_submit_jobs_finds_the_whole_site",
                "Here jobs submit more jobs from their callbacks. A hang or missing URLs means a job that was queued never ran: look at what `release` does when the queue is not empty. A peak other than 3 means the running count drifted as slots were handed over.",
            ),
            (
                "a_job_that_releases_or_submits_at_once_is_fine",
                "A panic that says \"already borrowed\" means a job was called while the limiter's `RefCell` was still borrowed, in `submit` or in `release`; end the borrow before the call. A wrong `(running, waiting)` pair means `waiting()` does not report the queue's length or the count was not kept.",
            ),
        ],
    },
    Exercise {
        number: "04",
        slug: "state_machine",
        title: "Write the state machine that async fn writes",
        stars: 2,
        chapter: "how-futures-work.md",
        builds_on: &[],
        goal: "Hand-write the enum and `Future::poll` for an `async fn` with three `.await`s (connect, send, receive), returning the same bytes.",
        nudge: "Two of the three `.await`s hide a loop: `write_all` is `poll_write` again and again until the whole request is taken, and `read_to_end` is `poll_read` until it returns 0 bytes. So a state may lead to itself with one field changed, and `poll` must keep going from state to state for as long as each step is ready, stopping only when a `poll_*` call returns `Pending` (How Rust Futures Work, the pattern after `connect.rs`). stage2-coroutines/src/machines/fetch.rs has a sending state of this kind.",
        hint: "Variants `Connecting { stream, request }`, `Sending { stream, request, sent }`, `Receiving { stream, response }`. In `poll`, loop: take the state with `mem::replace(&mut *self, Get::Done)`, match it, and either build the next state or, on `Pending`, put the state back and return. Use `TcpStream::start_connect`, `poll_connect`, `poll_write` and `poll_read` (a read of 0 bytes is the end).",
        pointers: &[
            (
                "fetches_a_page_like_the_async_fn",
                "An error \"Get is not written yet\" means the `Start` arm still returns it. A hang means `poll` returned `Pending` when no socket call had returned `Pending` with this `cx`, so nothing will wake the task. Different bytes mean part of the request was never written or part of the response was lost.",
            ),
            (
                "fetches_a_large_page_across_many_reads",
                "A short response means only some reads were kept: each chunk must be added to what was read before, and only a read of 0 bytes ends the response, not a read shorter than the buffer. A hang means a ready read was followed by `Pending` without polling the socket again.",
            ),
            (
                "a_refused_connect_is_the_error",
                "The refusal comes from `poll_connect` as `Ready(Err(..))`, and the machine must return that error as it is. A different kind means the error was replaced or wrapped; a hang means the failed connect was treated as still in progress.",
            ),
            (
                "nothing_happens_before_the_first_poll",
                "The server saw a connection from a `Get` that was created and dropped unpolled. The connect starts in `new` or when the value is built; it must wait for the first `poll`.",
            ),
            (
                "the_machine_is_unpin_and_polling_it_after_ready_panics",
                "A compile error about `Unpin` means a variant holds something that may point into itself, such as the future of an `async fn`; hold the socket and plain data only. Outside a runtime the first poll must return the connect's error as `Ready(Err(..))`, and a second poll must panic, so after any `Ready` the state left in `self` must be `Done`.",
            ),
            (
                "a_pending_read_resumes_where_it_stopped",
                "The test polls again after every `Pending`, woken or not. A panic \"Get polled after it returned its output\" means a `Pending` return left `Done` in `self` instead of the state it stopped in; a request sent twice or a response missing its start means the state put back was an earlier one or was rebuilt empty.",
            ),
        ],
    },
    Exercise {
        number: "05",
        slug: "raw_waker",
        title: "A Waker by hand, from a RawWakerVTable",
        stars: 2,
        chapter: "how-futures-work.md",
        builds_on: &[],
        goal: "Build a `Waker` from a data pointer and four `unsafe fn`s, with `// SAFETY:` comments, keeping the `Arc`'s count exact through clone, wake, wake_by_ref and drop.",
        nudge: "Think of the data pointer as an `Arc<Signal>` in disguise that owns exactly one strong count. Each vtable function either makes a new owner, gives its ownership up, or only looks, and the `Waker` method that calls it tells you which: `clone(&self)`, `wake(self)`, `wake_by_ref(&self)`, and `Drop`. Where a function gives the count up, ask what must happen before that, since its count may be the last one.",
        hint: "Data: `Arc::into_raw(signal).cast::<()>()`. clone: `Arc::increment_strong_count`, then a `RawWaker` with the same data and vtable. wake: `Arc::from_raw` takes the count over and the end of the function drops it; call `signal.wake()` in between. wake_by_ref: borrow with `&*data.cast::<Signal>()`. drop: `Arc::decrement_strong_count`. The vtable is a `static RawWakerVTable`.",
        pointers: &[
            (
                "every_operation_keeps_the_count_exact",
                "The assertion that failed names the function at fault. A count of 1 right after `waker` means the `Arc` was dropped instead of turned into the pointer; a count that does not rise after `clone` means the clone has no count of its own; a count that falls after `wake_by_ref` means it took the count instead of borrowing; a count that stays after `wake` or `drop` means those did not give theirs back.",
            ),
            (
                "many_clones_leak_nothing",
                "After a thousand clones, half woken and half dropped, the count did not return to 1, or the number of wakes is off. Check the wakers that were dropped without waking (the drop function) and those used up by `wake`: each must release exactly one count.",
            ),
            (
                "a_waker_wakes_from_another_thread",
                "A waker moved to another thread and woken there did not wake the signal once or did not give its count back. The functions must work on any thread, which `Signal` allows because it is `Send + Sync`; check that `wake` releases the count it owns.",
            ),
            (
                "will_wake_tells_signals_apart",
                "`will_wake` compares the data pointer and the vtable's address. A clone that is not `will_wake` of its original got a different pointer or a different vtable (use one `static` table, not a `const`, whose address may differ at each use); two signals that look alike mean the data pointer does not come from the signal.",
            ),
            (
                "a_wake_with_the_last_count_wakes_before_the_drop",
                "The log shows the signal dropped before it was woken. The waker held the only count, and `wake` gave it back before calling `Signal::wake`, which then ran on freed memory; the count must be released only after the wake.",
            ),
        ],
    },
    Exercise {
        number: "06",
        slug: "callback_future",
        title: "Turn a callback API into a future",
        stars: 2,
        chapter: "building-coroutines.md",
        builds_on: &[],
        goal: "Make a `sleep` future out of the event loop's `call_later` callback: pending until the timer fires, waking the latest waker, cancelling its timer when dropped.",
        nudge: "The timer's closure must be `'static` (see `call_later` in runtime/src/event_loop.rs), so it cannot reach into your `Sleep`; the callback side and the future side need a piece of state that both own, which is what the chapter's `Future` gives through `clone`. Then think of `Drop` as the `finally` of a future (Building Coroutines With Futures, Cancelling a task): it must undo what the first poll started, if that has not already finished.",
        hint: "Keep `Option<(TimerId, chapter_future::Future<()>)>`. First poll: make the chapter Future, `call_later(delay, move |_| { let _ = f.set_result(()); })`, and store the id. Every poll: `Pin::new(&mut f).poll(cx)`, which stores the latest waker. `Drop`: if `!f.is_done()`, `try_borrow_mut()` the loop and `cancel_timer(id)`.",
        pointers: &[
            (
                "a_sleep_sets_a_timer_and_waits_for_it",
                "A sleep that is ready at once, or no pending timer after the first poll, means `poll` does not yet set a timer and wait for it. Two pending timers after two polls mean each poll sets a new one: the first poll must leave a record that later polls find.",
            ),
            (
                "dropping_a_sleep_cancels_its_timer",
                "The timer was still pending after the `Sleep` was dropped. You need a `Drop` for `Sleep` that cancels the timer by the id that `call_later` returned, so that id must be kept in the `Sleep` when the timer is set.",
            ),
            (
                "the_timer_wakes_the_latest_waker_only",
                "The timer woke the waker of the first poll, or woke none. A waker captured in the timer's closure is fixed at the first poll; it must instead be kept where each later poll can replace it and the callback can find the current one. A final poll that is not `Ready` means the future cannot see that the timer has fired.",
            ),
            (
                "a_coroutine_sleeps_twice_on_the_bare_loop",
                "`run` polls the coroutine only when its waker is woken. If this test hangs, the timer's callback ran but woke nobody; if a timer is left pending at the end, a sleep that finished set a second timer or a dropped one did not cancel its own.",
            ),
        ],
    },
    Exercise {
        number: "07",
        slug: "task_tracker",
        title: "Which tasks are waiting, and on what",
        stars: 3,
        chapter: "building-coroutines.md",
        builds_on: &[],
        goal: "Spawn named tasks and label what they wait on, so that a report says `task 1 fetch /a: waiting on read response` for every task.",
        nudge: "A `Pending` travels outward: the innermost future returns it first, then each future around it, and your task wrapper sees it last, so the first to see it knows the most and the later ones must not overwrite what it wrote. The runtime finds the current runtime through a thread-local set around `block_on` (Building Coroutines With Futures, The executor loop); \"the task being polled\" works the same way around each poll. And a task that never returns `Ready` ends by being dropped (Cancelling a task), so a `Drop` on your wrapper is where `cancelled` comes from.",
        hint: "A `thread_local!` holding the id of the task being polled, and a wrapper future with the id (set right after `runtime::spawn` returns the handle, before the first poll), the shared table and `Pin<Box<F>>`. Around the inner poll: mark Running, set the thread-local, poll, restore it; Pending and still Running means Waiting with no label. `waiting_on` is a `poll_fn` that, when its future is pending and the entry is still Running, sets Waiting(label): the innermost gets there first. An unfinished wrapper that is dropped was cancelled.",
        pointers: &[
            (
                "the_report_names_what_each_task_waits_on",
                "Compare the report line by line. `waiting` where `waiting on LABEL` was expected means the label was not recorded against the task being polled, or the wrapper overwrote it after its inner poll returned `Pending`. A missing `scheduled` line means the entry is made at the first poll instead of at `spawn`; after the cancels, `cancelled` must come from the wrapper's `Drop`, and only for a task that had not finished.",
            ),
            (
                "the_innermost_label_wins_and_labels_do_not_stick",
                "Two cases. `waiting on first item` for a task now pending elsewhere means an old label survived a later poll: each poll must start from a clean state. `waiting on outer` instead of `inner` means an outer `waiting_on` replaced the label that the inner one had already set.",
            ),
            (
                "a_task_sees_itself_running",
                "A task that reads the report from inside its own poll must see itself as `running`, so the state must be set before the inner future is polled. A panic \"already borrowed\" means the wrapper held the table borrowed while it polled the inner future.",
            ),
            (
                "tasks_are_numbered_by_the_runtime_not_by_the_tracker",
                "The numbers in the report are not the runtime's task ids. Take the id from the `JoinHandle` that `runtime::spawn` returns, not from a counter of your own; the task is not polled before `spawn` returns, so the wrapper can learn it in time.",
            ),
        ],
    },
    Exercise {
        number: "08",
        slug: "task_group",
        title: "Cancel what you spawned",
        stars: 1,
        chapter: "building-coroutines.md",
        builds_on: &[],
        goal: "Tie tasks to a group's lifetime: dropping the group cancels them, and the server sees their sockets close.",
        nudge: "A `Drop` impl is Rust's `finally` (Building Coroutines With Futures, Cancelling a task, where the crawler's `Drop` takes its URL off the list): it runs however the group goes away, by `drop`, at the end of a scope, or inside a future that is itself dropped, which is why `join_all` takes the group by value. Read `cancel` for `Task` in runtime/src/task.rs to see what it does to a task that has already finished before you write a check for it.",
        hint: "`for handle in &self.handles { handle.cancel() }`, in `cancel_all` and in `impl<T> Drop for TaskGroup<T>`. Cancelling a finished task does nothing, so there is nothing to check. Cancelling drops the task's future, and with it the socket the future owns.",
        pointers: &[
            (
                "dropping_the_group_cancels_its_tasks",
                "The tasks' futures were still alive after the group was dropped. Dropping a `JoinHandle` only stops watching its task; the group needs a `Drop` that calls `cancel` on each handle.",
            ),
            (
                "dropping_the_group_closes_its_sockets",
                "The task still ran, or the server never saw its connection close, after the group was dropped. The socket belongs to the task's future and closes only when that future is dropped, which is what `cancel` does; check that the group's `Drop` cancels every task.",
            ),
            (
                "a_join_all_that_is_dropped_cancels_what_it_waits_for",
                "`join_all` was dropped midway and its tasks lived on. The group inside it is dropped with it, so its `Drop` should have cancelled them; if the other drop tests pass, `join_all` was changed to move the handles out of the group before waiting.",
            ),
            (
                "cancel_all_then_join_all_reports_every_task_cancelled",
                "A panic \"not yet implemented\" means `cancel_all` is still the starter's `todo!`. Results that are not all `Err(JoinError::Cancelled)` mean some handles were not cancelled.",
            ),
            (
                "join_all_returns_results_in_spawn_order",
                "This checks code you did not have to change. A failure means `spawn` or `join_all` was edited, or the group's `Drop`, which runs when `join_all` ends, does something to tasks that have finished (panics, or expects them to be running).",
            ),
        ],
    },
    Exercise {
        number: "09",
        slug: "read_framing",
        title: "Factor a response reader out of fill",
        stars: 2,
        chapter: "factoring-with-await.md",
        builds_on: &[],
        goal: "Read keep-alive HTTP/1.1 responses with `.await`: `read_head` and `read_body` built on one `fill`, leaving the next response's bytes in the buffer.",
        nudge: "`httparse` answers two questions in one call: is the head complete yet (`Status::Partial` or `Status::Complete`), and if it is, how many bytes of the buffer it used, which is where the body starts. The book's An HTTP Client on the Runtime, \"Where a response ends\", walks through the same reading, and stage3-crawler/src/http/response.rs is the crawler's own reader, with more framings than you need.",
        hint: "`read_head`: loop { parse `&self.buf` with `httparse::Response::parse`; `Complete(n)`: read the status and `Content-Length`, `self.buf.drain(..n)`, return; `Partial`: `if self.fill().await? == 0` it is `UnexpectedEof` }. A `Transfer-Encoding` header is `InvalidData`, \"chunked bodies are not supported\". `read_body(len)`: `fill` until `buf.len() >= len`, then `buf.drain(..len).collect()`.",
        pointers: &[
            (
                "three_responses_on_one_connection",
                "Three `get`s on one keep-alive connection did not all come back right. An error on the 404 or the empty page means `read_head` or `read_body` rejects a valid response (a status is not an error, and a body may be 0 bytes); a hang until the 30-second guard means a loop called `fill` before checking whether the buffer already held enough, and the server, waiting for the next request, sent nothing.",
            ),
            (
                "pipelined_responses_are_split_where_their_lengths_say",
                "Three responses arrived back to back, so one `fill` can hold the end of one and the start of the next. A body that differs, or a head that fails to parse, means a body took more or fewer bytes than its `Content-Length` or `read_head` did not parse from the front of the buffer; a hang means `read_head` waited on the socket while the next head was already in the buffer.",
            ),
            (
                "a_chunked_response_is_refused_by_name",
                "The server answered with `Transfer-Encoding: chunked` and no `Content-Length`. If `unwrap_err` found `Ok`, your head parser let the missing length pass (as 0, say); if the kind is `InvalidData` and the test still fails, the message must contain the word \"chunked\", so say which encoding the response used rather than only that the length is missing.",
            ),
            (
                "a_connection_that_closes_early_is_unexpected_eof",
                "`/fault/drop` closes before sending a byte, and `/fault/short-body` closes after 100 of its 500 body bytes; `fill` returning 0 is the only sign of it. A test that never ends means a loop kept calling `fill` after it returned 0; a wrong kind, or `Ok` where an error was expected, means the head loop or the body loop turns that 0 into something other than `io::ErrorKind::UnexpectedEof` (a short body, for example).",
            ),
            (
                "the_next_response_stays_in_the_buffer",
                "Both responses arrived in one read, and then the server closed. If the first body is not `first`, `read_body` took more than `len` bytes (the whole buffer, say); if the second response was lost with `UnexpectedEof`, either the first body swallowed it or `read_head` called `fill` before trying to parse what the buffer already held.",
            ),
        ],
    },
    Exercise {
        number: "10",
        slug: "select",
        title: "Race two futures",
        stars: 1,
        chapter: "factoring-with-await.md",
        builds_on: &[],
        goal: "Write `select(a, b)`: run two futures in one task and return the first output, dropping the loser.",
        nudge: "An `async fn` body never sees the `Context`: `std::future::poll_fn` makes a future out of a closure that gets the task's `Context` on every poll. A future must be pinned before you can call its `poll`, and How Rust Futures Work shows `std::pin::pin!` doing that on the current frame, which is also where the loser will be dropped.",
        hint: "`pin!` both, then `poll_fn(|cx| ...)`: poll `a`, and if it is ready return `Left`; poll `b`, and if it is ready return `Right`; else `Pending`. Both futures keep the same waker, so either can wake the task. Returning drops both pinned futures, which cancels the loser.",
        pointers: &[
            (
                "the_first_to_finish_wins_and_the_loser_is_dropped",
                "Only the right queue got an item, after a yield. A hang means `b` was not polled on every poll with that poll's `Context`, so its wakeup never reached the task (awaiting `a` first does this); \"the loser must be dropped\" means `a` outlived `select`: it should belong to `select`'s own frame and go when that returns, not be leaked, forgotten or stored elsewhere.",
            ),
            (
                "either_side_can_wake_the_task",
                "This time the left queue got the item after a yield. A hang means the wakeup from `a` was lost: `a` must be polled on every poll of `select`, with the `Context` of that poll, not one saved from an earlier poll or built around another waker.",
            ),
            (
                "when_both_are_ready_the_left_wins",
                "Both futures were ready at the first poll and `Right(2)` came back: your poll looks at `b` before `a`. The order of the checks is the rule here.",
            ),
            (
                "a_hanging_fetch_loses_to_the_other_side",
                "The left side is a fetch the server never answers; the right side finishes once the server has seen the request. A hang means `select` waits for `a` to finish before it ever polls `b`; \"the server never saw the request\" means `a` was not polled before the right side finished, so the request never went out.",
            ),
            (
                "a_loser_ready_at_the_same_poll_loses_nothing",
                "Both queues held an item, `a` won, and the right queue's item was gone: `b` was polled although `a` was already ready, and what it took off its queue was dropped with it. Look at when you poll `b` relative to when you check `a`'s result.",
            ),
        ],
    },
    Exercise {
        number: "11",
        slug: "semaphore",
        title: "A semaphore on the runtime",
        stars: 2,
        chapter: "coordinating-coroutines.md",
        builds_on: &[],
        goal: "Write an async semaphore: fair (first come first served), with no barging past a woken waiter, and safe when a woken waiter is cancelled.",
        nudge: "The queue's `Get` (Coordinating Coroutines, \"Stopping: join, then cancel\") keeps a waiter's place by an id, but differs in one way that matters here: a woken `Get` may find its item taken and join the line again, while a semaphore's `release` must decide at that moment who owns the permit. So besides \"free\" and \"in line\" the state needs a third place: permits handed to a waiter that has not run yet.",
        hint: "A `VecDeque<(id, Waker)>` of waiters and a list of ids that were granted a permit. `release`: if someone waits, move their id to granted and wake them; else `permits += 1`. `Acquire::poll`: on the first poll take a free permit only if nobody waits, else join the line; later polls look for their id among the granted. `Drop for Acquire`: leave the line, and if granted but never polled, `release()` again.",
        pointers: &[
            (
                "never_more_holders_than_permits",
                "Ten tasks shared three permits. A peak above 3 means `acquire` handed out a permit that was not free; a peak below 3, or a hang, means permits were lost on the way (a release that neither wakes a waiter nor adds to the free count); \"every permit is back\" failing means `release` counted a permit twice or never counted it back.",
            ),
            (
                "waiters_are_served_in_the_order_they_came",
                "Five tasks waited behind one held permit. If `waiting()` was not 5, either `Acquire` did not join the line on its first poll or `waiting` does not count the line; if the order is wrong, the line is not first in, first out (popped from the wrong end, or every waiter woken to race for the permit).",
            ),
            (
                "a_permit_handed_to_a_waiter_is_not_taken_by_another",
                "The permit was released while one task waited, and `try_acquire` got it before that task ran. Either `release` put the permit back among the free ones, or `try_acquire` ignored that a waiter is owed one: from the moment of the release, the permit is the waiter's.",
            ),
            (
                "a_cancelled_waiter_passes_its_permit_on",
                "The first waiter was handed the permit and cancelled before it ran. If the second waiter hangs, the permit was lost with the first; if `available` is not 1 at the end, the dropped `Acquire` gave back a permit it was never handed, or gave one back twice: look at what `Drop for Acquire` knows about its own state.",
            ),
            (
                "try_acquire_fails_when_none_is_free",
                "This test runs no runtime. A second `Some` means `try_acquire` does not take the permit it returns out of the free count; `available()` not 1 after the drop means a `Permit` dropped with nobody waiting does not go back to the free count.",
            ),
            (
                "a_waiter_cancelled_in_line_leaves_it",
                "A waiter was cancelled while still in line, never handed a permit. `waiting()` still counting it means `Drop for Acquire` leaves its entry in the line; a later waiter that hangs means `release` then handed the permit to that dead entry, where nobody will ever take it.",
            ),
            (
                "a_waiter_is_woken_through_its_latest_waker",
                "One `Acquire` was polled twice with different wakers, then the permit was released. Counts of (1, 0) mean the second poll left the first waker in place (or joined the line a second time); (0, 0) means `release` woke nobody; \"the waiter must get its permit\" means a poll after the wake does not recognise the permit handed to it and looks for a free one instead.",
            ),
        ],
    },
    Exercise {
        number: "12",
        slug: "host_limit",
        title: "A per-host concurrency limit",
        stars: 2,
        chapter: "good-citizen.md",
        builds_on: &["11"],
        goal: "Limit requests per host for stage 3's workers, with a semaphore per host (exercise 11) that is forgotten when the host goes idle.",
        nudge: "\"Idle\" is a question for the semaphore as well as for your map: a permit handed to a waiter that has not run yet is neither active nor waiting, but exercise 11's `available()` still sees it as out. And a host can go idle in two places: when a `HostPermit` is dropped, and when an `acquire` is dropped while it waits (Building Coroutines With Futures, \"Cancelling a task\"), which leaves no `HostPermit` behind.",
        hint: "A map from host key to `Host { semaphore, active }`. `acquire`: get or insert the host's semaphore, clone it, end the borrow, `semaphore.acquire().await`, then count it active. Keep the semaphore's `Permit` in an `Option` in `HostPermit`. In `Drop`: drop the permit first, then remove the host if `active == 0`, nobody waits and every permit is back. And an `acquire` cancelled while it waits can leave the host idle with no `HostPermit` to notice: a guard declared before the wait and disarmed after it does the same check when it is dropped armed.",
        pointers: &[
            (
                "two_hosts_two_requests_each_at_a_time",
                "Eight workers fetched 20 slow pages from each of two hosts with a limit of 2. A peak above 2 means one host's requests did not share one semaphore (a new one per `acquire`, or a host forgotten while busy); `hosts_tracked` not 0 means the last `HostPermit` did not forget its host, often because the check ran before the semaphore had its permit back (fields drop after your `Drop::drop` body); a panic \"already borrowed\" means a `RefCell` borrow of the limiter's state was alive across an `.await`.",
            ),
            (
                "a_limit_of_one_serialises_a_host",
                "Five workers, one host, a limit of 1. More than one request in flight means a second permit came from somewhere: a second semaphore for the same key, or an `acquire` that did not wait; `hosts_tracked` not 0 means the host was kept after its last permit came back.",
            ),
            (
                "host_keys_include_the_port",
                "This checks the given `host_key`, which the exercise does not ask you to change. If it fails, restore it from the starter: a key is the lower-case host and the port, the scheme's default when the URL names none.",
            ),
            (
                "a_host_whose_last_waiter_was_cancelled_is_forgotten",
                "The only waiter was handed the permit and cancelled before it took it, so no `HostPermit` was made and none was dropped. A check that runs only in `Drop for HostPermit` never sees this case: something alive in `acquire`'s frame during the wait has to notice, when that frame is dropped, that the host went idle.",
            ),
            (
                "a_permit_handed_to_a_waiter_still_holds_the_host",
                "Two permits were out at once with a limit of 1. When `held` was dropped its permit went to the waiting task, which had not run yet; your idle test saw no active permit and nobody in line, forgot the host, and the next `acquire` made a new semaphore with a fresh permit, so the test must also count permits the semaphore has handed over but not got back.",
            ),
        ],
    },
    Exercise {
        number: "13",
        slug: "depth_limit",
        title: "A depth limit that is exact under concurrency",
        stars: 2,
        chapter: "good-citizen.md",
        builds_on: &[],
        goal: "Crawl only URLs within `max_depth` links of the root, with each URL's true (shortest) depth, however the workers' fetches interleave.",
        nudge: "Being a Good Citizen, \"Depth, exactly\", gives the rule that makes depths exact: no URL of depth `d + 1` starts while one of depth `d` is unfinished. `crawl` already waits on `join` once, at the end; ask what changes if it waits once per level, where the links found during a level are kept until the level ends, and which URLs must be marked seen before anything can find them again.",
        hint: "Crawl one depth at a time: put every URL of depth d on the queue, `q.join().await`, then make the links found meanwhile (marked seen as they are found) the next depth. Workers record the depth being crawled, and at `max_depth` they collect no links.",
        pointers: &[
            (
                "depth_zero_is_the_root_alone",
                "With `max_depth` 0 only the root may be fetched, at depth 0. Extra URLs mean links found on the last allowed level still became work; a root at another depth means depths are not counted from the root.",
            ),
            (
                "depth_one_is_the_root_and_its_links",
                "The result differs from a breadth-first search to depth 1. Every demo page links back to `/`, so a root reported at depth 1 means it was not marked seen before its own page's links came back; missing URLs mean the root's links were dropped, and extra URLs mean the cut-off is one level too deep.",
            ),
            (
                "a_slow_short_path_does_not_lose_to_a_fast_long_one",
                "`/pages/b/` is slow, so its pages are reached sooner through a longer chain. Depths one too large (3 where 2 was expected) mean a URL of one level started before the previous level was done and the first path to reach it won; missing URLs are the same fault, with pages found too deep for their links to be followed.",
            ),
            (
                "a_deep_enough_limit_finds_the_whole_site",
                "With a limit of 100 the crawl must find every page, each at its shortest depth. Missing URLs mean the crawl stopped early (ending while a level still had links waiting, or dropping links found during a level); wrong depths point to the same overlap of levels as the slow-path test.",
            ),
        ],
    },
    Exercise {
        number: "14",
        slug: "robots_txt",
        title: "Honour robots.txt",
        stars: 2,
        chapter: "good-citizen.md",
        builds_on: &[],
        goal: "Parse robots.txt (groups, Allow and Disallow, `*` and `$`), decide URLs by the longest matching rule, and fetch it with the right reading of 4xx and 5xx.",
        nudge: "Build three small parts you can test apart: a line reader that knows which group each rule belongs to (a group is a run of `User-agent` lines and the rules after them), a matcher of one pattern against one path, and a choice among the rules that match. Being a Good Citizen's robots.txt section describes a matcher that finds the literal pieces between `*`s one after another, and what each status means; stage3-crawler/src/polite/robots_fetch.rs shows the crawler's reading of the statuses.",
        hint: "Line by line: drop `#...`, split at the first `:`, lower-case the key. User-agent lines collect agents; rules after them belong to those agents; a User-agent line after a rule starts a new group. Keep our rules and the `*` rules apart; use ours if a group named us. Match: strip a final `$`, split at `*`: the first piece is a prefix, the others are found in order. Pick with `max_by_key(|r| (r.pattern.len(), r.allow))`.",
        pointers: &[
            (
                "the_star_group_filters_the_demo_site_exactly",
                "The demo-site URLs you allow differ from the same rules applied by hand. Everything allowed means no `*` rules were collected; nothing allowed means the `other-bot` group's `Disallow: /` leaked into ours; a `/redirect/` page allowed means the trailing `# ...` comment stayed in the pattern; `/pages/a/` pages refused mean the first matching rule won instead of the longest.",
            ),
            (
                "a_group_that_names_us_replaces_the_star_group",
                "First `other-bot` (in either case) must get its own group, which disallows everything; a failure there means the agent comparison is case-sensitive or the `*` group was used although a group names us. In the second file, everything refused means the `*` group's `Disallow: /` was used, or the empty `Disallow:` became a rule that matches every path; `/charset/` or `/framing/` pages allowed mean only one of the two groups naming us counted, or a second `User-agent` line replaced the first instead of joining it.",
            ),
            (
                "wildcards_anchors_and_ties",
                "The failing line names one path. `/azz?` refused means the pattern was matched against the path without its query, or `$` was ignored; `/abc` or `/c/d` refused means a pattern was cut at its first `*` and used as a plain prefix; `/abcz`, `/az` or `/c/x/y/d/e` allowed means `*` or `$` was taken literally, or `*` could not match an empty run or one that holds `/`; `/b/x` refused is the tie rule.",
            ),
            (
                "fetching_follows_the_status",
                "The four fetches are a 404 (`/robots.txt`), a 200 text with no rules (`/notes.txt`), a 500, and a connection closed without an answer, and the results are compared with `==`, so they must be exactly `allow_all()`, `allow_all()`, `disallow_all()`, `disallow_all()`. A wrong first means a 4xx was parsed or refused, a wrong second means `parse` made a rule out of a line that is none, and a wrong third or fourth means a 5xx or an error fell through to allow.",
            ),
            (
                "allow_wins_a_tie_whichever_comes_first",
                "With patterns of equal length, the answer depended on which rule came last in the file: your choice among matching rules compares lengths only, so file order breaks the tie (`max_by_key` keeps the last of equal maxima). If only the `/p*` cases fail, you measured length without the `*`, but the RFC compares patterns as written; if the last check fails, Allow wins whatever its length.",
            ),
        ],
    },
    Exercise {
        number: "15",
        slug: "backoff",
        title: "Retry with exponential backoff and jitter",
        stars: 2,
        chapter: "coordinating-coroutines.md",
        builds_on: &[],
        goal: "Space retries out: a ceiling that doubles up to a maximum without overflow, a full-jitter draw below it, and a retrying GET that sleeps on the runtime.",
        nudge: "Count failures, not tries: the wait before try `n + 1` follows `n` failures, so the first wait uses `ceiling(1)`, which is `base`. `Duration` has the arithmetic the ceiling needs (`saturating_mul`, `min`), while a shift such as `1 << failures` breaks long before a thousand, and a ceiling that has reached `max` has no reason to keep looping; the sleep that leaves other tasks running is the runtime's (Factoring With .await, \"Cancellation and timeouts\").",
        hint: "`ceiling`: start at `base.min(max)` and double with `saturating_mul(2)` once per failure after the first, stopping at `max` (or at zero). `delay`: `self.ceiling(failures).mul_f64(rng.next_f64())`. `get_with_retry`: loop; on a retryable error with tries left, push `backoff.delay(tries, rng)` onto `waits` and `runtime::sleep(wait).await`.",
        pointers: &[
            (
                "the_ceiling_doubles_up_to_the_max",
                "The test expected 1, 2, 4, 8, 8, 8 ms for failures 1 to 6, and saturation for huge values. A list shifted by one step means the number of doublings is off by one (`ceiling(1)` is `base`, not doubled); a panic about overflow means unchecked `Duration` or integer arithmetic; a test that runs for minutes on `u32::MAX` means the loop keeps going after the ceiling stopped growing.",
            ),
            (
                "delays_are_full_jitter_draws_below_the_ceiling",
                "Each delay is compared with `ceiling(failures)` scaled by the next number from a second `Rng` with the same seed. A mismatch means `delay` is not exactly one draw times that ceiling (two draws per call, none, or another failure count); a delay not below the ceiling means the draw was added to the ceiling instead of scaling it.",
            ),
            (
                "a_flaky_path_succeeds_on_the_fourth_try",
                "`/fault/flaky/3` drops the first three requests and answers the fourth, with `max_tries` 5. An error result means the loop gave up early (it counted `max_tries` as retries, or did not retry `FetchError::Closed`); `waits` that differ mean the failure number passed to `delay` is off (the first wait uses 1) or `rng` was drawn outside `delay`; more than 4 requests means one was repeated.",
            ),
            (
                "giving_up_after_max_tries",
                "With `max_tries` 3 against a path that fails ten times, the result must be the last error, after 3 tries and 2 waits. Three waits mean you waited after the last try too; another number of tries means the comparison with `max_tries` is off by one.",
            ),
            (
                "responses_and_hopeless_errors_are_not_retried",
                "A 404 is a response, and an `ftp:` URL fails with `Unsupported`, which `is_retryable` rejects: each must take one try. More tries for the 404 mean a status was treated as a failure; more for the `ftp:` URL mean an error was retried without asking `is_retryable`.",
            ),
            (
                "each_wait_is_a_timer_on_the_runtime",
                "The runtime recorded the timers set during a retried fetch, and the number of short ones did not match the number of waits. None means the waits blocked the thread (`std::thread::sleep` sets no timer and stops every other task); more than the waits means extra sleeps, before the first try for example.",
            ),
        ],
    },
    Exercise {
        number: "16",
        slug: "graceful_shutdown",
        title: "Shut down gracefully on Ctrl-C",
        stars: 2,
        chapter: "coordinating-coroutines.md",
        builds_on: &[],
        goal: "On Ctrl-C, let fetches in progress finish, start no new ones, and report what was abandoned, with the queue's `join` still ending the crawl.",
        nudge: "`Shutdown` is a plain flag, and nothing can happen between reading it and acting on it unless you `.await` in between (Coordinating Coroutines: \"Nothing here needs a lock\"). So the work is choosing where to read it: where a URL would become new work, and where a worker, back from `get`, would start a fetch; fetches already running need nothing.",
        hint: "Two checks of `self.shutdown.is_triggered()`: in `work`, right after `get` (record the URL in `abandoned`, call `task_done`, `continue`; without the `task_done`, `join` waits forever), and at the top of `add_url` (queue nothing). Fetches already in progress need no code: they finish on their own.",
        pointers: &[
            (
                "without_a_shutdown_the_whole_site_is_crawled",
                "No shutdown was triggered, yet the report differs from a full crawl. A check fires when it should not (a condition the wrong way round), or the normal path changed: look for URLs missing from `fetched`, anything in `abandoned`, or `interrupted` set.",
            ),
            (
                "a_shutdown_after_the_root_abandons_everything_it_queued",
                "The shutdown came as the root finished, after its links were queued. A hang until the 30-second guard means an abandoned URL never got its `task_done`, so `join` still counts it; more than the root in `fetched` means a worker fetched a URL it took after the shutdown (a check placed before `get` misses workers already waiting in it); an `abandoned` set that differs means taken URLs were not recorded.",
            ),
            (
                "fetches_in_progress_finish_and_their_links_are_not_queued",
                "The shutdown came as the fifth fetch started. \"no fetch may start after the shutdown\" means a worker started a fetch without checking; \"every fetch that started finished\" means fetches in progress were cut off (workers cancelled, or `crawl` returned early); \"exactly what was queued\" means pages finishing after the shutdown still queued their links, or some URL was neither fetched nor abandoned.",
            ),
            (
                "a_shutdown_before_the_crawl_queues_nothing",
                "The shutdown was triggered before `crawl` began, so the report must be empty. A root in `abandoned` means it was still queued: the root enters the queue through the same door as every link, and that door must already be shut.",
            ),
            (
                "ctrl_c_triggers_the_shutdown",
                "The test raises SIGINT and waits for the task that `on_ctrl_c` returns. `on_ctrl_c` comes finished; if this fails, it was changed or other signal handling was added, so restore the starter's version.",
            ),
        ],
    },
    Exercise {
        number: "17",
        slug: "loop_channel",
        title: "A channel between loops",
        stars: 2,
        chapter: "beyond-one-core.md",
        builds_on: &[],
        goal: "Write the two halves of a channel from any thread to a task on one loop: `send`, which never waits, and `poll_recv`, which never misses a value sent while it was deciding to wait.",
        nudge: "It is the oneshot handoff of Finding Links (runtime/src/oneshot.rs), made long-lived, and its rule is the same: the receiver's look and the sender's push must not be able to interleave so that the sender finds no waker and the receiver finds no value. With one lock around the queue, the waker and the count of senders, that means doing the look and the store in one critical section, and the push and the take in another. Beyond One Core, \"How loops talk\", walks through it.",
        hint: "`send`: lock, `items.push_back(value)`, `waker.take()`, unlock, then wake what you took. `poll_recv`: lock; `pop_front` a value and return it; if `senders == 0` return `Ready(None)`; otherwise store `cx.waker().clone()` in `waker` before the lock goes, and return `Pending`. `Drop for Sender`: lock, `senders -= 1`; the last one takes the waker and wakes it after unlocking.",
        pointers: &[
            (
                "values_sent_on_one_thread_arrive_in_order",
                "On one thread: two sends, then polls. `Pending` where a value was expected means `send` did not push, or `poll_recv` did not pop from the front; values in the wrong order mean one side uses the back. The last assertion drops the only sender: `Pending` there means `poll_recv` does not check `senders == 0` after finding the queue empty, or `Drop` does not count the sender out.",
            ),
            (
                "a_value_sent_from_another_thread_always_wakes_the_receiver",
                "\"a lost wakeup\" names the order loom found: the receiver returned `Pending`, the sender pushed its value, and the waker was not there to take. Either the receiver stores its waker after letting go of the lock it looked under (a second `lock()` call), or `send` takes the waker before it pushes, or outside the lock. A value missing or twice means `send` and `poll_recv` disagree about the queue.",
            ),
            (
                "the_last_sender_dropped_on_another_thread_wakes_the_receiver",
                "The only sender was dropped on another thread while the receiver decided to wait. The receiver never learns the channel is over unless the last `drop` takes the waker and wakes it, under the same lock that `poll_recv` checks `senders` under.",
            ),
            (
                "two_senders_on_two_threads_lose_no_wake_and_no_value",
                "Two senders on two threads, each sending once. A lost wakeup here but not with one sender usually means a second send found the waker already taken and the receiver had not stored it again; a value lost means two pushes raced (a push outside the lock), and a count of senders that never reaches 0 means `clone` does not add to it.",
            ),
        ],
    },
    Exercise {
        number: "18",
        slug: "h2_demux",
        title: "Hand each frame to its stream",
        stars: 2,
        chapter: "http2.md",
        builds_on: &[],
        goal: "Write the meeting point of an HTTP/2 connection task and its requests: `deliver`, which keeps each frame for the stream it names and wakes that stream's request, and no other, and `poll_frame`, which takes a stream's frames in order.",
        nudge: "It is the reactor one level up: a slot per stream, as the reactor keeps a registration per socket, holding the frames not yet taken and the waker of the request that waits. `deliver` looks up one slot by the frame's stream id; it never needs to look at the others. HTTP/2: One Connection, Many Streams, \"The connection task is a reactor\", and the `Slot` in stage3-crawler/src/http/h2/connection.rs show the grown-up version.",
        hint: "`deliver`: borrow the map, `get_mut(&frame.stream)`; none means `return false`; otherwise `frames.push_back(frame)` and `waker.take()`; let the borrow go, wake what you took, return `true`. `poll_frame`: if `ended`, `Ready(None)`; borrow, find the slot (gone: `Ready(None)`); `pop_front` a frame, set `ended = frame.end`, and return it; none: store `cx.waker().clone()` in the slot and return `Pending`. `Drop`: remove the slot from the map.",
        pointers: &[
            (
                "a_frame_wakes_its_own_stream_and_no_other",
                "Two requests wait, on streams 1 and 3, with wakers that count. \"must wake stream 3's request once, and not stream 1's\" shows the counts: (1, 1) means `deliver` wakes every waiting request, or the wrong slot's waker; (0, 0) means the waker was not stored by `poll_frame` or not taken by `deliver`; 2 means a waker was woken twice. A frame that reached the wrong stream means `deliver` pushed into a slot other than `frame.stream`'s.",
            ),
            (
                "frames_that_come_before_the_first_poll_are_kept_in_order",
                "Three frames are delivered before the request polls at all. `Pending` at the first poll means `deliver` dropped a frame for a stream whose request was not waiting yet (it must keep it); the wrong order means one side uses the back of the queue; `Ready(Some)` after the third frame means the stream's end (`frame.end`) was not noted.",
            ),
            (
                "a_frame_for_a_stream_not_open_is_dropped",
                "`deliver` must say `false` for a stream never opened, and for one whose `Stream` was dropped. An open-stream count still 1 after the drop means `Drop for Stream` does not remove the slot; then frames for a request given up would pile up forever.",
            ),
            (
                "eight_requests_each_get_exactly_their_own_frames",
                "Eight tasks on the runtime, each reading one stream to its end, while a connection task delivers their frames interleaved. A hang until the guard means a request was never woken (a waker not stored, or stored after the look in a separate borrow that a frame slipped between); bodies mixed up mean frames went to the wrong slots.",
            ),
        ],
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

    /// Whether this is a class copy (`handout`): no solutions, and then
    /// no planted wrong answers and no solution in the book either, which
    /// the tests below check instead of what a maintainer's tree holds.
    fn class_copy() -> bool {
        let class_copy = !repo().join("examples/exercises/solutions").exists();
        if class_copy {
            assert!(
                !repo().join("examples/exercises/wrong").exists(),
                "a class copy has no solutions, and so no planted wrong answers either"
            );
        }
        class_copy
    }

    #[test]
    fn numbers_are_consecutive_and_files_exist() {
        for (i, e) in EXERCISES.iter().enumerate() {
            assert_eq!(e.number, format!("{:02}", i + 1));
            assert!((1..=3).contains(&e.stars), "{}", e.number);
            for path in [e.starter_path(), e.tests_path()] {
                assert!(repo().join(&path).is_file(), "missing {path}");
            }
            assert!(
                repo().join("book/src").join(e.chapter).is_file(),
                "{}",
                e.chapter
            );
            let header = format!("//! Exercise {} {}: ", e.number, e.difficulty());
            let mut paths = vec![e.starter_path()];
            if !class_copy() {
                paths.push(e.solution_path());
            }
            for path in paths {
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
            // Its file, or the solution, unless build.rs writes it (the
            // planted wrong answers, a student's file being graded).
            let declared = format!(
                "#[cfg(not(any(feature = \"wrong\", feature = \"graded\")))]\n\
                 #[cfg_attr(feature = \"solutions\", path = \"../solutions/{module}.rs\")]\n\
                 pub mod {module};"
            );
            assert!(
                lib.contains(&declared),
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
    fn every_test_has_its_pointer_and_every_pointer_its_test() {
        for e in EXERCISES {
            let tests = read(&e.tests_path());
            let mut names: Vec<&str> = tests
                .split("#[test]\n")
                .skip(1)
                .filter_map(|after| after.strip_prefix("fn ")?.split('(').next())
                .collect();
            let mut pointed: Vec<&str> = e.pointers.iter().map(|(name, _)| *name).collect();
            names.sort_unstable();
            pointed.sort_unstable();
            assert_eq!(
                pointed, names,
                "exercise {}: a pointer for each test",
                e.number
            );
            for (name, text) in e.pointers {
                assert!(!text.is_empty(), "exercise {}: {name}", e.number);
            }
        }
    }

    #[test]
    fn the_book_lists_every_exercise() {
        let appendix = read("book/src/appendix/exercises.md");
        let class_copy = class_copy();
        if class_copy {
            assert!(
                !appendix.contains("exercises/solutions/"),
                "a class copy's appendix shows no solution"
            );
        }
        for e in EXERCISES {
            let include = format!(
                "{{{{#include ../../../examples/exercises/solutions/{}.rs}}}}",
                e.module()
            );
            assert!(
                class_copy || appendix.contains(&include),
                "appendix: {include}"
            );
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
        if class_copy() {
            return; // checked there: no wrong/ with no solutions
        }
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
