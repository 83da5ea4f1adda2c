//! The crawl of the demo site with the runtime's debug lints on: a correct
//! program raises none (no lost waker, no busy self-wake, no task left
//! behind), in both styles of fetcher.

use demo_site::testing::{run_with_lints, text};

#[test]
fn the_demo_crawl_raises_no_lint() {
    for style in ["state-machine", "async"] {
        let (output, warnings) =
            run_with_lints(env!("CARGO_BIN_EXE_stage2-coroutines"), &["--style", style]).unwrap();
        assert!(output.status.success(), "{style}: {}", text(&output.stderr));
        assert_eq!(warnings, Vec::<String>::new(), "{style}");
    }
}
