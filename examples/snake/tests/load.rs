//! `snake-load` at a small size: 100 bots connected at once, each of
//! which must receive every tick, in order, for two seconds at 20 ticks a
//! second, while they steer. (The numbers for 1,000 bots are in the
//! example's README; they come from a release build, not from a test.)

use std::process::Command;

#[test]
fn a_hundred_bots_each_receive_every_tick() {
    let out = Command::new(env!("CARGO_BIN_EXE_snake-load"))
        .args(["--players", "100", "--seconds", "2", "--rate", "20"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("players:              100 "), "{stdout}");
    assert!(stdout.contains(" 0 missed, 0 dropped"), "{stdout}");
}
