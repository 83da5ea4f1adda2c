//! The callback crawl of the demo site with the runtime's debug lints on:
//! the event loop's callbacks raise none.

use demo_site::testing::{run_with_lints, text};

#[test]
fn the_demo_crawl_raises_no_lint() {
    let (output, warnings) = run_with_lints(env!("CARGO_BIN_EXE_stage1-callbacks"), &[]).unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(warnings, Vec::<String>::new());
}
