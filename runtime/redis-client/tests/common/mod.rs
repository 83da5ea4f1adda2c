//! What the client's tests share.

use std::sync::mpsc;
use std::time::Duration;

use runtime::run_until_complete;

/// Runs `test` on a runtime in a thread: a hang becomes a failure after a
/// minute instead of a stuck test run.
pub fn bounded<T: Send + 'static>(test: impl AsyncFnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let out = run_until_complete(test()).expect("the runtime runs");
        let _ = tx.send(out);
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("the test finishes within a minute")
}
