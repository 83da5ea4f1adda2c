//! The snake server against clients from outside the project: Python's
//! `websockets` library, and a real browser, headless Chromium, driven
//! through the DevTools protocol. `.ci/test` installs both (websockets into
//! `.ci/venv`, Debian's `chromium` package); a missing one fails the test
//! and says how to get it.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use snake::game;
use snake::server::{Options, start_in_thread};

/// `.ci/venv`'s Python, where `.ci/test` installs `websockets`.
fn python() -> PathBuf {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.ci/venv/bin/python");
    assert!(
        venv.exists(),
        "{} is missing: run the tests with .ci/test, which installs websockets there",
        venv.display()
    );
    venv
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(name)
}

fn run_python(args: &[&str]) {
    let out = Command::new(python()).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn pythons_websockets_library_speaks_with_the_server() {
    let addr = start_in_thread(Options {
        tick: Duration::from_millis(20),
        ..Options::default()
    })
    .unwrap();
    let port = addr.port().to_string();
    run_python(&[script("ws_protocol.py").to_str().unwrap(), &port]);
}

/// Headless Chromium with a DevTools port and a profile of its own,
/// killed (with its children) when dropped.
struct Chromium {
    child: Child,
    profile: PathBuf,
}

impl Chromium {
    fn start() -> (Chromium, u16) {
        let profile = std::env::temp_dir().join(format!("snake-chromium-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&profile);
        let child = Command::new("chromium")
            .args(["--headless=new", "--disable-gpu", "--no-first-run", "--remote-debugging-port=0"])
            // Root (CI's containers) has no sandbox to drop into.
            .args(running_as_root().then_some("--no-sandbox"))
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot start chromium ({e}): install it with `apt-get install chromium` (.ci/test does)")
            });
        let chromium = Chromium { child, profile };
        // Chromium writes its DevTools port to this file once it listens.
        let port_file = chromium.profile.join("DevToolsActivePort");
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(port) = std::fs::read_to_string(&port_file)
                .ok()
                .and_then(|text| text.lines().next()?.parse().ok())
            {
                return (chromium, port);
            }
            assert!(
                Instant::now() < deadline,
                "chromium did not open its DevTools port in 60 s"
            );
            std::thread::sleep(Duration::from_millis(50)); // polling a file, with a deadline
        }
    }
}

impl Drop for Chromium {
    fn drop(&mut self) {
        // The whole process group: chromium's renderers and helpers too.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.child.id())])
            .status();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

fn running_as_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| out.stdout.trim_ascii() == b"0")
}

#[test]
fn a_real_browser_draws_the_game_and_steers_with_the_keys() {
    // A big field, so that the snake has room to turn before any wall;
    // the browser's connections on loops other than the game's.
    let addr = start_in_thread(Options {
        game: game::Config {
            width: 120,
            height: 90,
            ..game::Config::default()
        },
        loops: 3,
        ..Options::default()
    })
    .unwrap();
    let (_chromium, devtools) = Chromium::start();
    let page = format!("http://{addr}/?name=browser");
    run_python(&[
        script("browser.py").to_str().unwrap(),
        &devtools.to_string(),
        &page,
    ]);
}
