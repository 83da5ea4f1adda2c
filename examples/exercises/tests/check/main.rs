//! The tests that decide whether an exercise is solved: one module per
//! exercise, in tests/check/. Run them through the runner, which says what
//! passed and what is still failing:
//!
//! ```text
//! cargo run -p exercises -- check 01
//! ```
//!
//! or directly: `cargo test -p exercises --features check --test check ex01_`.

mod common;

mod ex01_echo_callbacks;
mod ex02_retry_refused;
mod ex03_limit_fetchers;
mod ex04_state_machine;
mod ex05_raw_waker;
mod ex06_callback_future;
mod ex07_task_tracker;
mod ex08_task_group;
mod ex09_read_framing;
mod ex10_select;
mod ex11_semaphore;
mod ex12_host_limit;
mod ex13_depth_limit;
mod ex14_robots_txt;
mod ex15_backoff;
mod ex16_graceful_shutdown;
mod ex17_loop_channel;
mod ex18_h2_demux;
