//! The snake server against real clients on loopback (`common`'s, on
//! blocking std sockets): the page, the game ticking, bad input closed
//! with the right codes while the game goes on, a client that stops
//! reading or answers no ping dropped without slowing anyone else, and
//! Ctrl-C.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use snake::game;
use snake::server::{Options, start_in_thread};
use snake::view;

mod common;
use common::{Client, KEY, connect, hello, hello_of_size};

/// Fast ticks, so that tests are quick; the players on three loops
/// besides the game's, so that every test that uses this crosses threads
/// (the tests that set their own options run on one loop).
fn options() -> Options {
    Options {
        tick: Duration::from_millis(20),
        loops: 4,
        ..Options::default()
    }
}

/// Sends a request and reads the response head and body to the end.
fn http_get(addr: SocketAddr, target: &str) -> (u16, String) {
    let mut stream = connect(addr);
    write!(stream, "GET {target} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    let status = text[9..12].parse().unwrap();
    let body = text.split_once("\r\n\r\n").unwrap().1.to_string();
    (status, body)
}

#[test]
fn the_page_and_the_stats_are_served() {
    let addr = start_in_thread(options()).unwrap();
    let (status, body) = http_get(addr, "/");
    assert_eq!(status, 200);
    assert!(body.contains("<canvas"), "{body}");
    let (status, _) = http_get(addr, "/nowhere");
    assert_eq!(status, 404);
    let (status, body) = http_get(addr, "/stats");
    assert_eq!(status, 200);
    let stats: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert!(stats["ticks"].is_u64());
}

#[test]
fn a_player_joins_sees_every_tick_and_steers() {
    // A big field: the snake starts heading away from the nearest wall,
    // with room for the whole test.
    let addr = start_in_thread(Options {
        game: game::Config {
            width: 100,
            height: 100,
            ..game::Config::default()
        },
        ..options()
    })
    .unwrap();
    let mut alice = Client::open(addr, "alice");
    let me = hello(&mut alice);
    // The first frame is full: the view around the new snake, 40 by 30
    // cells of the 100 by 100 field, and the scoreboard with alice on it.
    let (first, full) = alice.tick();
    assert!(full);
    assert_eq!((first.field, first.size), ((100, 100), (40, 30)));
    assert_eq!(first.board[0].name, "alice");
    assert_eq!(u64::from(first.board[0].id), me);
    let mut head = first.head.expect("alive");
    let color = first.cell(head).unwrap() - view::HEAD;
    let body = first
        .cells
        .iter()
        .filter(|&&c| c == view::BODY + color)
        .count();
    assert_eq!(body, 2, "a new snake is three cells long");
    // Every tick, in order, one cell at a time, as deltas.
    let first_tick = first.tick;
    for tick in first_tick + 1..first_tick + 6 {
        let (screen, full) = alice.tick();
        assert!(!full);
        assert_eq!(screen.tick, tick);
        let next = screen
            .head
            .expect("the field is big enough to live this long");
        assert_eq!(screen.cell(next), Some(view::HEAD + color));
        assert_eq!(
            (next.0 - head.0).abs() + (next.1 - head.1).abs(),
            1,
            "{head:?} -> {next:?}"
        );
        head = next;
    }
    // A turn at a right angle to its heading shows within a few ticks
    // (it applies at the next one).
    let neck = head;
    let head = alice.tick().0.head.expect("alive");
    let (command, want) = if head.0 == neck.0 {
        ("left", (-1, 0))
    } else {
        ("up", (0, -1))
    };
    alice.text(command);
    let mut last = head;
    let turned = (0..5).any(|_| {
        let now = alice.tick().0.head.expect("alive");
        let step = (now.0 - last.0, now.1 - last.1);
        last = now;
        step == want
    });
    assert!(turned, "the snake did not turn {command}");
}

#[test]
fn a_late_joiner_sees_the_same_field_as_one_who_was_there_from_the_start() {
    // The default field is the view's size: both see all of it.
    let addr = start_in_thread(options()).unwrap();
    let mut early = Client::open(addr, "early");
    hello(&mut early);
    for _ in 0..20 {
        early.tick();
    }
    let mut late = Client::open(addr, "late");
    hello(&mut late);
    assert!(late.tick().1, "a newcomer's first frame is full");
    // Twenty ticks on, the early one has built its field from one full
    // frame and forty deltas, the late one from one and twenty: the same
    // cells, the same scores.
    for _ in 0..20 {
        late.tick();
    }
    while early.screen.tick < late.screen.tick {
        early.tick();
    }
    while late.screen.tick < early.screen.tick {
        late.tick();
    }
    let (a, b) = (&early.screen, &late.screen);
    assert_eq!((a.origin, a.size), ((0, 0), (40, 30)));
    assert_eq!(
        (a.tick, a.origin, a.size, a.players),
        (b.tick, b.origin, b.size, b.players)
    );
    assert!(
        a.cells == b.cells,
        "the two screens differ at tick {}",
        a.tick
    );
    assert_eq!(a.board, b.board);
    assert_eq!(a.players, 2);
}

#[test]
fn bad_input_closes_that_connection_with_the_right_code_and_the_game_goes_on() {
    let addr = start_in_thread(options()).unwrap();
    let mut watcher = Client::open(addr, "watcher");
    hello(&mut watcher);

    // A frame that claims 2^63 bytes breaks the protocol (the top bit of
    // a 64-bit length must be 0): 1002, at once, without waiting for the
    // bytes. One that claims 2^40 is only too big: 1009.
    for (claim, code) in [(1u64 << 63, 1002), (1 << 40, 1009)] {
        let mut huge = Client::open(addr, "huge");
        hello(&mut huge);
        let mut frame = vec![0x81, 0x80 | 127];
        frame.extend_from_slice(&claim.to_be_bytes());
        frame.extend_from_slice(&[1, 2, 3, 4]);
        huge.stream.write_all(&frame).unwrap();
        assert_eq!(huge.close_code(), code);
        assert!(huge.at_eof());
    }

    // An unmasked client frame: 1002.
    let mut bare = Client::open(addr, "bare");
    hello(&mut bare);
    bare.send(0x1, b"up", false);
    assert_eq!(bare.close_code(), 1002);

    // Invalid UTF-8 in a text frame: 1007.
    let mut garbled = Client::open(addr, "garbled");
    hello(&mut garbled);
    garbled.send(0x1, &[0xff, 0xfe], true);
    assert_eq!(garbled.close_code(), 1007);

    // A handshake without its key: 400, and no WebSocket.
    let mut keyless = Client::raw(addr);
    keyless.send_head(
        "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Version: 13\r\n\r\n",
    );
    assert!(keyless.read_head().starts_with("HTTP/1.1 400"));

    // A ping is answered; a close is answered with the same code.
    watcher.send(0x9, b"are you there", true);
    loop {
        let (opcode, payload) = watcher.frame();
        match opcode {
            0xA => {
                assert_eq!(payload, b"are you there");
                break;
            }
            0x2 => {
                watcher.screen.apply(&payload).unwrap();
            }
            _ => {}
        }
    }
    // And the watcher kept getting every tick throughout.
    let a = watcher.tick().0.tick;
    let b = watcher.tick().0.tick;
    assert_eq!(b, a + 1);
    watcher.send(0x8, &1000u16.to_be_bytes(), true);
    assert_eq!(watcher.close_code(), 1000);
    assert!(watcher.at_eof());
}

#[test]
fn a_client_still_writing_after_a_protocol_error_gets_the_close_frame_not_a_reset() {
    let addr = start_in_thread(options()).unwrap();
    let mut client = Client::open(addr, "writer");
    hello(&mut client);
    // A message over the limit (1009), and more of it after: the client
    // is still writing when the server gives up on it.
    let mut frame = vec![0x82, 0x80 | 127];
    frame.extend_from_slice(&(1u64 << 40).to_be_bytes());
    frame.extend_from_slice(&[1, 2, 3, 4]);
    client.stream.write_all(&frame).unwrap();
    let mut writer = client.stream.try_clone().unwrap();
    let more = std::thread::spawn(move || {
        let chunk = [0u8; 16 * 1024];
        for _ in 0..16 {
            if writer.write_all(&chunk).is_err() {
                return false;
            }
        }
        writer.shutdown(std::net::Shutdown::Write).is_ok()
    });
    assert_eq!(client.close_code(), 1009);
    assert!(client.at_eof(), "the connection was reset");
    assert!(
        more.join().unwrap(),
        "the server stopped taking the client's bytes"
    );
}

#[test]
fn a_client_that_stops_reading_is_dropped_and_nobody_else_waits() {
    // A view as big as a frame allows (255 by 255 cells: 65 KB a full
    // frame), and a sleeper whose socket takes 4 KiB: its first frame is
    // more than the kernel will hold for it (the server's send buffer is
    // 32 KiB), the next ticks find it behind, and their frames are full
    // again.
    let addr = start_in_thread(Options {
        tick: Duration::from_millis(50),
        max_behind: 8,
        view: (255, 255),
        // The reader and the sleeper fill the game.
        max_players: 2,
        game: game::Config {
            width: 400,
            height: 300,
            food: 20_000,
        },
        ..Options::default()
    })
    .unwrap();
    let mut reader = Client::open(addr, "reader");
    hello_of_size(&mut reader, (255, 255));
    let mut sleeper = Client::open_small(addr, "sleeper");
    hello_of_size(&mut sleeper, (255, 255));
    // The sleeper reads nothing from now on. The reader reads on, and
    // misses no tick: first to the tick where the sleeper is in the game
    // (the reader may still hold ticks from before it joined), then to
    // the tick after it was dropped.
    let mut last = reader.tick().0.tick;
    for (want, why) in [
        (2, "the sleeper never joined"),
        (1, "the sleeper was never dropped"),
    ] {
        for _ in 0..2000 {
            if reader.screen.players == want {
                break;
            }
            let (screen, full) = reader.tick();
            assert_eq!(
                (screen.tick, full),
                (last + 1, false),
                "the reader fell behind"
            );
            last = screen.tick;
        }
        assert_eq!(reader.screen.players, want, "{why}");
    }
    // Its place is free at once (issue 42): its connection is still stuck
    // writing to a client that reads nothing, but a newcomer may play.
    let mut newcomer = Client::open(addr, "newcomer");
    hello_of_size(&mut newcomer, (255, 255));
    // Its connection ends with a close frame saying why (1008), after the
    // frames the kernel still held.
    sleeper
        .stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    assert_eq!(sleeper.close_code(), 1008);
}

#[test]
fn a_player_that_answers_no_ping_in_time_is_dropped_and_its_place_freed() {
    // Pings every 100 ms, two seconds to answer: the reader, which answers
    // each as it reads its frames, has time to spare on a busy machine.
    let addr = start_in_thread(Options {
        tick: Duration::from_millis(50),
        ping_every: Duration::from_millis(100),
        pong_within: Duration::from_secs(2),
        // The reader and the mute player fill the game.
        max_players: 2,
        ..Options::default()
    })
    .unwrap();
    let mut reader = Client::open(addr, "reader");
    hello(&mut reader);
    let mut mute = Client::open(addr, "mute");
    hello(&mut mute);
    // The mute player's socket takes every frame (they are small), so
    // the game never finds it behind: only its silence can drop it. The
    // reader watches it come, then go.
    for (want, why) in [
        (2, "the mute player never joined"),
        (1, "the mute player was never dropped"),
    ] {
        for _ in 0..1000 {
            if reader.screen.players == want {
                break;
            }
            reader.tick();
        }
        assert_eq!(reader.screen.players, want, "{why}");
    }
    // Its place is free: a newcomer plays.
    let mut newcomer = Client::open(addr, "newcomer");
    hello(&mut newcomer);
    // What the mute player was sent: ticks, one ping (it owed an answer
    // from then on), then the close frame saying why, and the end.
    let mut pings = 0;
    let (code, reason) = loop {
        match mute.frame_as_is() {
            (0x9, _) => pings += 1,
            (0x8, payload) => {
                break (
                    u16::from_be_bytes([payload[0], payload[1]]),
                    String::from_utf8(payload[2..].to_vec()).unwrap(),
                );
            }
            _ => {}
        }
    };
    assert_eq!(
        (pings, code, reason.as_str()),
        (1, 1008, "too slow: no answer to a ping")
    );
    assert!(mute.at_eof());
}

/// The `snake` binary on a free port, with `args`; its first line names
/// the port.
fn start_binary(
    args: &[&str],
) -> (
    std::process::Child,
    SocketAddr,
    std::io::BufReader<std::process::ChildStdout>,
) {
    use std::io::BufRead;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_snake"))
        .args(["--port", "0", "--rate", "50"])
        .args(args)
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let addr = line
        .split("http://")
        .nth(1)
        .unwrap()
        .split('/')
        .next()
        .unwrap();
    (child, addr.parse().unwrap(), out)
}

#[test]
fn ctrl_c_tells_every_player_the_server_is_going_away_and_exits_cleanly() {
    ctrl_c_on(&[]);
}

#[test]
fn ctrl_c_reaches_every_player_on_every_loop() {
    // Three players and an idle connection on three loops, one each.
    ctrl_c_on(&["--loops", "4"]);
}

fn ctrl_c_on(args: &[&str]) {
    let (mut server, addr, mut out) = start_binary(args);
    let mut alice = Client::open(addr, "alice");
    let mut bob = Client::open(addr, "bob");
    let mut mute = Client::open(addr, "mute");
    for client in [&mut alice, &mut bob, &mut mute] {
        hello(client);
        client.tick();
    }
    // A connection that never sends its request.
    let idle = connect(addr);
    let status = std::process::Command::new("kill")
        .args(["-INT", &server.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    // Alice and Bob get 1001 with the reason, answer it, and the server
    // closes TCP after the handshake.
    for client in [&mut alice, &mut bob] {
        let (opcode, payload) = loop {
            let (opcode, payload) = client.frame();
            if opcode != 0x1 {
                break (opcode, payload);
            }
        };
        assert_eq!(opcode, 0x8);
        assert_eq!(u16::from_be_bytes([payload[0], payload[1]]), 1001);
        assert_eq!(&payload[2..], b"the server is shutting down");
        client.send(0x8, &1001u16.to_be_bytes(), true);
        assert!(client.at_eof());
    }
    // The mute player never answers: it costs the close wait, not a hang.
    // The idle connection is cut off at the end of the grace period.
    let mut text = String::new();
    std::io::Read::read_to_string(&mut out, &mut text).unwrap();
    assert!(server.wait().unwrap().success());
    assert_eq!(
        text,
        "snake: shutting down: telling every player, then stopping\n\
         snake: stopped; 3 players told the server is going away, 1 connection cut off\n"
    );
    assert_eq!(mute.close_code(), 1001);
    assert!(mute.at_eof());
    drop(idle);
    // Nobody listens any more.
    assert!(TcpStream::connect(addr).is_err());
}

/// Sends `head` (and reads until the server closes): the status line.
fn status_of(addr: SocketAddr, head: &[u8]) -> String {
    let mut stream = connect(addr);
    // The server may answer before it has read everything: a failed write
    // is the server closing, not a failure of the test.
    let _ = stream.write_all(head);
    let mut text = Vec::new();
    let _ = stream.read_to_end(&mut text);
    let text = String::from_utf8_lossy(&text).into_owned();
    text.lines().next().unwrap_or_default().to_string()
}

/// A handshake the RFC forbids, and heads too large to serve, get their
/// status before the connection closes (issue 42), never a bare reset.
#[test]
fn bad_handshakes_and_huge_heads_are_answered_then_closed() {
    let addr = start_in_thread(options()).unwrap();
    let twice = format!(
        "GET /ws?name=a HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    );
    assert_eq!(
        status_of(addr, twice.as_bytes()),
        "HTTP/1.1 400 Bad Request"
    );
    let big = format!(
        "GET / HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n",
        "a".repeat(100_000)
    );
    assert_eq!(
        status_of(addr, big.as_bytes()),
        "HTTP/1.1 431 Request Header Fields Too Large"
    );
    let many: String = (0..100).map(|n| format!("X-{n}: {n}\r\n")).collect();
    let many = format!("GET / HTTP/1.1\r\nHost: x\r\n{many}\r\n");
    assert_eq!(
        status_of(addr, many.as_bytes()),
        "HTTP/1.1 431 Request Header Fields Too Large"
    );
    // And the game goes on.
    assert_eq!(http_get(addr, "/stats").0, 200);
}
