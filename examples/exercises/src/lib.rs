//! Course exercises. Each `exNN_*` module is one exercise: the file you
//! edit is src/exNN_*.rs, its tests are tests/check/exNN_*.rs, and a
//! reference solution is in solutions/exNN_*.rs. See README.md for the
//! table and the commands.
//!
//! | module | holds |
//! |---|---|
//! | `ex01_echo_callbacks` ... `ex18_h2_demux` | the exercises, one file each (README.md lists them) |
//! | `support` | helpers the exercises share, each a small finished example |
//!
//! The `solutions` feature compiles the solutions in place of the starters;
//! the runner's `verify` command uses it to check that every solution
//! passes and every starter still fails. The `wrong` feature compiles, in
//! their place, the solutions with the planted wrong answers of one round
//! (wrong/exNN_*.R.plant, each a solution with one change, made by
//! build.rs into one file of modules), which the tests must catch; the
//! `graded` feature, a student's files, for `grade` (build.rs again).

pub mod support;

#[cfg(not(any(feature = "wrong", feature = "graded")))]
#[cfg_attr(feature = "solutions", path = "../solutions/ex01_echo_callbacks.rs")]
pub mod ex01_echo_callbacks;
#[cfg(not(any(feature = "wrong", feature = "graded")))]
#[cfg_attr(feature = "solutions", path = "../solutions/ex02_retry_refused.rs")]
pub mod ex02_retry_refused;
#[cfg(not(any(feature = "wrong", feature = "graded")))]
#[cfg_attr(feature = "solutions", path = "../solutions/ex03_limit_fetchers.rs")]
pub mod ex03_limit_fetchers;
#[cfg(not(any(feature = "wrong", feature = "graded")))]
#[cfg_attr(feature = "solutions", path = "../solutions/ex04_state_machine.rs")]
pub mod ex04_state_machine;
#[cfg(not(any(feature = "wrong", feature = "graded")))]
#[cfg_attr(feature = "solutions", path = "../solutions/ex05_raw_waker.rs")]
pub mod ex05_raw_waker;
#[cfg(not(any(feature = "wrong", feature = "graded")))]
#[cfg_attr(feature = "solutions", path = "../solutions/ex06_callback_future.rs")]
pub mod ex06_callback_future;
#[cfg(not(any(feature = "wrong", feature = "graded")))]
#[cfg_attr(feature = "solutions", path = "../solutions/ex07_task_tracker.rs")]
pub mod ex07_task_tracker;
#[cfg(not(any(feature = "wrong", feature = "graded")))]
#[cfg_attr(feature = "solutions", path = "../solutions/ex08_task_group.rs")]
pub mod ex08_task_group;
#[cfg(not(any(feature = "wrong", feature = "graded")))]
#[cfg_attr(feature = "solutions", path = "../solutions/ex09_read_framing.rs")]
pub mod ex09_read_framing;
#[cfg(not(any(feature = "wrong", feature = "graded")))]
#[cfg_attr(feature = "solutions", path = "../solutions/ex10_select.rs")]
pub mod ex10_select;
#[cfg(not(any(feature = "wrong", feature = "graded")))]
#[cfg_attr(feature = "solutions", path = "../solutions/ex11_semaphore.rs")]
pub mod ex11_semaphore;
#[cfg(not(any(feature = "wrong", feature = "graded")))]
#[cfg_attr(feature = "solutions", path = "../solutions/ex12_host_limit.rs")]
pub mod ex12_host_limit;
#[cfg(not(any(feature = "wrong", feature = "graded")))]
#[cfg_attr(feature = "solutions", path = "../solutions/ex13_depth_limit.rs")]
pub mod ex13_depth_limit;
#[cfg(not(any(feature = "wrong", feature = "graded")))]
#[cfg_attr(feature = "solutions", path = "../solutions/ex14_robots_txt.rs")]
pub mod ex14_robots_txt;
#[cfg(not(any(feature = "wrong", feature = "graded")))]
#[cfg_attr(feature = "solutions", path = "../solutions/ex15_backoff.rs")]
pub mod ex15_backoff;
#[cfg(not(any(feature = "wrong", feature = "graded")))]
#[cfg_attr(feature = "solutions", path = "../solutions/ex16_graceful_shutdown.rs")]
pub mod ex16_graceful_shutdown;
#[cfg(not(any(feature = "wrong", feature = "graded")))]
#[cfg_attr(feature = "solutions", path = "../solutions/ex17_loop_channel.rs")]
pub mod ex17_loop_channel;
#[cfg(not(any(feature = "wrong", feature = "graded")))]
#[cfg_attr(feature = "solutions", path = "../solutions/ex18_h2_demux.rs")]
pub mod ex18_h2_demux;

#[cfg(all(feature = "wrong", feature = "graded"))]
compile_error!("the wrong and graded features each replace the exercises: one at a time");
#[cfg(all(feature = "wrong", not(feature = "graded")))]
include!(concat!(env!("OUT_DIR"), "/wrong.rs"));
#[cfg(all(feature = "graded", not(feature = "wrong")))]
include!(concat!(env!("OUT_DIR"), "/graded.rs"));
