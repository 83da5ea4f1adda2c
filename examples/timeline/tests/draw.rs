//! The renderer end to end: a run recorded in this process, written as a
//! Chrome trace, told as a story and drawn as an SVG that a real renderer
//! (rsvg-convert, from Debian's librsvg2-bin, which `.ci/test` installs)
//! turns into a non-empty image.

use std::process::Command;
use std::time::Duration;

use runtime::{Clock, Runtime, TaskBuilder, sleep};

/// Records two named tasks that sleep on a paused clock, and writes the
/// trace to a file.
fn recorded_trace(dir: &std::path::Path) -> std::path::PathBuf {
    let rt = Runtime::with_clock(Clock::paused()).unwrap();
    let recording = rt.record();
    rt.block_on(async {
        let a = TaskBuilder::new()
            .name("napper-1")
            .spawn(sleep(Duration::from_millis(5)));
        let b = TaskBuilder::new()
            .name("napper-2")
            .spawn(sleep(Duration::from_millis(3)));
        a.await.unwrap();
        b.await.unwrap();
    })
    .unwrap();
    let path = dir.join("trace.json");
    let file = std::fs::File::create(&path).unwrap();
    recording.write_chrome_trace(file).unwrap();
    path
}

#[test]
fn a_recorded_run_is_told_and_drawn() {
    let dir = std::env::temp_dir().join(format!("timeline-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = recorded_trace(&dir);
    let svg = dir.join("run.svg");
    let out = Command::new(env!("CARGO_BIN_EXE_timeline"))
        .arg(&trace)
        .args(["--story", "--title", "two nappers", "--svg"])
        .arg(&svg)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "main ×1: spawned by outside; woken by napper-N; polls returned Pending, Ready\n\
         napper-N ×2: spawned by main; woken by a timer; polls returned Pending, Ready\n\
         warnings: 0\n"
    );
    let drawing = std::fs::read_to_string(&svg).unwrap();
    for lane in [
        "event loop",
        "main",
        "task 1 (napper-1)",
        "task 2 (napper-2)",
    ] {
        assert!(
            drawing.contains(&format!(">{lane}</text>")),
            "no lane {lane}"
        );
    }
    // An arrow per wake: each napper's first (its spawn's), each napper's
    // timer, and napper-1 waking main (napper-2 finished while main still
    // waited for napper-1, so its result was there to take).
    assert_eq!(
        drawing
            .matches("marker-end=\"url(#head)\"><title>woken by")
            .count(),
        5
    );

    let png = dir.join("run.png");
    let rendered = Command::new("rsvg-convert")
        .arg(&svg)
        .arg("-o")
        .arg(&png)
        .status()
        .expect("rsvg-convert (Debian's librsvg2-bin; .ci/test installs it)");
    assert!(rendered.success());
    assert!(std::fs::metadata(&png).unwrap().len() > 1000);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_file_that_is_not_a_trace_is_a_clear_error() {
    let dir = std::env::temp_dir().join(format!("timeline-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.json");
    std::fs::write(&bad, "{\"hello\": 1}").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_timeline"))
        .arg(&bad)
        .arg("--story")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "timeline: {}: not a Chrome trace: no \"traceEvents\" array\n",
            bad.display()
        )
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
