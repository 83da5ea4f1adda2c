//! Course exercises. Each `exNN_*` module is one exercise: the file you
//! edit is src/exNN_*.rs, its tests are tests/check/exNN_*.rs, and a
//! reference solution is in solutions/exNN_*.rs. See README.md for the
//! table and the commands.
//!
//! The `solutions` feature compiles the solutions in place of the starters;
//! the runner's `verify` command uses it to check that every solution
//! passes and every starter still fails. The `wrong` feature compiles, on
//! top of the solutions, the planted wrong answers of wrong/ (each a
//! solution with one change, made by build.rs), which the tests must
//! catch.

pub mod support;

#[cfg_attr(feature = "solutions", path = "../solutions/ex01_echo_callbacks.rs")]
pub mod ex01_echo_callbacks;
#[cfg_attr(feature = "solutions", path = "../solutions/ex02_retry_refused.rs")]
pub mod ex02_retry_refused;
#[cfg(not(feature = "wrong"))]
#[cfg_attr(feature = "solutions", path = "../solutions/ex03_limit_fetchers.rs")]
pub mod ex03_limit_fetchers;
#[cfg(feature = "wrong")]
pub mod ex03_limit_fetchers {
    include!(concat!(env!("OUT_DIR"), "/ex03_limit_fetchers.rs"));
}
#[cfg_attr(feature = "solutions", path = "../solutions/ex04_state_machine.rs")]
pub mod ex04_state_machine;
#[cfg_attr(feature = "solutions", path = "../solutions/ex05_raw_waker.rs")]
pub mod ex05_raw_waker;
#[cfg_attr(feature = "solutions", path = "../solutions/ex06_callback_future.rs")]
pub mod ex06_callback_future;
#[cfg_attr(feature = "solutions", path = "../solutions/ex07_task_tracker.rs")]
pub mod ex07_task_tracker;
#[cfg_attr(feature = "solutions", path = "../solutions/ex08_task_group.rs")]
pub mod ex08_task_group;
#[cfg_attr(feature = "solutions", path = "../solutions/ex09_read_framing.rs")]
pub mod ex09_read_framing;
#[cfg_attr(feature = "solutions", path = "../solutions/ex10_select.rs")]
pub mod ex10_select;
#[cfg(not(feature = "wrong"))]
#[cfg_attr(feature = "solutions", path = "../solutions/ex11_semaphore.rs")]
pub mod ex11_semaphore;
#[cfg(feature = "wrong")]
pub mod ex11_semaphore {
    include!(concat!(env!("OUT_DIR"), "/ex11_semaphore.rs"));
}
#[cfg(not(feature = "wrong"))]
#[cfg_attr(feature = "solutions", path = "../solutions/ex12_host_limit.rs")]
pub mod ex12_host_limit;
#[cfg(feature = "wrong")]
pub mod ex12_host_limit {
    include!(concat!(env!("OUT_DIR"), "/ex12_host_limit.rs"));
}
#[cfg_attr(feature = "solutions", path = "../solutions/ex13_depth_limit.rs")]
pub mod ex13_depth_limit;
#[cfg_attr(feature = "solutions", path = "../solutions/ex14_robots_txt.rs")]
pub mod ex14_robots_txt;
#[cfg(not(feature = "wrong"))]
#[cfg_attr(feature = "solutions", path = "../solutions/ex15_backoff.rs")]
pub mod ex15_backoff;
#[cfg(feature = "wrong")]
pub mod ex15_backoff {
    include!(concat!(env!("OUT_DIR"), "/ex15_backoff.rs"));
}
#[cfg_attr(feature = "solutions", path = "../solutions/ex16_graceful_shutdown.rs")]
pub mod ex16_graceful_shutdown;
