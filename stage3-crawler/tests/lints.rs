//! Stage 3's crawls of the demo site with the runtime's debug lints on: a
//! correct program raises none (no lost waker, no busy self-wake, no task
//! left behind), with robots.txt and per-host limits as users run it, and
//! with a crawl delay, whose per-host timer tasks must all be gone at the
//! end.

use demo_site::testing::{run_with_lints, text};

#[test]
fn the_demo_crawl_raises_no_lint() {
    let (output, warnings) = run_with_lints(
        env!("CARGO_BIN_EXE_stage3-crawler"),
        &["-q", "--progress", "never"],
    )
    .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(warnings, Vec::<String>::new());
}

#[test]
fn a_polite_crawl_with_a_delay_raises_no_lint() {
    let args = [
        "-q",
        "--progress",
        "never",
        "--per-host",
        "2",
        "--delay",
        "1ms",
        "--max-tasks",
        "4",
    ];
    let (output, warnings) = run_with_lints(env!("CARGO_BIN_EXE_stage3-crawler"), &args).unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(warnings, Vec::<String>::new());
}
