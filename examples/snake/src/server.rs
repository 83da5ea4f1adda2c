//! The server: one game loop task that owns the game, and one task per
//! connection. A connection is a web page (`GET /`), the numbers
//! (`GET /stats`), or a player (`GET /ws`, upgraded to a WebSocket).
//!
//! Nothing is shared behind a lock. A player's task talks to the game loop
//! through the runtime's `Queue` (its commands go in the loop's inbox), and
//! the loop talks back through the player's own `Queue`, its outbox: every
//! tick it puts there that player's frame, its view of the field as the
//! changes since its last frame (`view.rs`). A player whose last frame is
//! still in its outbox at the next tick is behind: the waiting frame is
//! replaced by a full one, so the outbox never grows; behind for too many
//! ticks in a row, the player is dropped. One slow client costs the others
//! nothing.
//!
//! Told to stop (Ctrl-C, in `main`), the server stops accepting, the game
//! loop tells every player it is going away (close code 1001) and ends,
//! and the connections finish their close handshakes before `serve`
//! returns: the runtime ends with no task left behind.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::ops::ControlFlow;
use std::rc::Rc;
use std::time::Duration;

use runtime::{
    Either, JoinHandle, Queue, Sleep, TaskBuilder, TcpListener, TcpStream, oneshot, select, sleep,
    sleep_until, timeout,
};

use crate::game::{self, Command, Game, PlayerId};
use crate::heartbeat::{Due, Heartbeat};
use crate::stats::TickStats;
use crate::view::{self, Board, Grid, Viewer};
use crate::websocket::{self, Decoder, Message, Opcode, ProtocolError};

/// The page, served as it is.
const INDEX: &str = include_str!("../static/index.html");

/// The longest request head we read: a browser's is well under this.
const MAX_HEAD: usize = 8 * 1024;

/// How long a client may take to send its request head, or to take one
/// frame we write: a peer that stalls costs a timeout, never a task forever.
const IO_TIMEOUT: Duration = Duration::from_secs(10);

/// How far behind its schedule the game loop may fall and still catch up.
const CATCH_UP: Duration = Duration::from_secs(1);

/// The least a late tick waits after the last one: long enough for the
/// event loop to wait on its sockets once (mio waits whole milliseconds).
const TURN: Duration = Duration::from_millis(1);

/// How long a client may take to answer our close frame with its own.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

/// How long `serve`, once stopped, waits for the connections to end
/// before it cancels them: longer than a close handshake may take. A
/// connection that has not sent its request by then (a browser opens
/// spare ones) is cut off.
const GRACE: Duration = Duration::from_secs(3);

/// The kernel's buffer for a player's frames (Linux doubles it), set so
/// that it does not grow to its default 4 MB: a client that stops reading
/// is found behind once this much waits (a few hundred ticks of deltas),
/// and ten thousand players do not hold gigabytes of the kernel's memory.
const SEND_BUFFER: usize = 16 * 1024;

/// Commands a player may send the game loop between two of its frames.
/// The game keeps two turns a tick (and a respawn): more are dropped here,
/// before they reach the inbox, so that a client sending commands as fast
/// as loopback takes them can neither grow the inbox without end nor make
/// a tick take seconds to read it.
const COMMANDS_PER_TICK: usize = 4;

/// The biggest frame and message a player may send. Commands are a word.
const MAX_FRAME: usize = 4 * 1024;
const MAX_MESSAGE: usize = 16 * 1024;

/// The settings.
#[derive(Clone, Debug)]
pub struct Options {
    /// Time between two ticks.
    pub tick: Duration,
    /// Players at most; the next one is turned away.
    pub max_players: usize,
    /// Ticks in a row a player may be behind (its last frame still in its
    /// outbox) before it is dropped as too slow.
    pub max_behind: usize,
    /// Time from a player's pong (or its joining) to the next ping.
    pub ping_every: Duration,
    /// Time a player has to answer a ping before it is dropped: a client
    /// that stopped reading frees its place this soon, where waiting for
    /// its send buffer to fill takes half a minute.
    pub pong_within: Duration,
    /// The cells a player sees around its snake, across and down.
    pub view: (usize, usize),
    /// The field and its food.
    pub game: game::Config,
    /// The seed of the game's randomness.
    pub seed: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            tick: Duration::from_millis(100),
            max_players: 10_000,
            max_behind: 32,
            ping_every: Duration::from_secs(5),
            pong_within: Duration::from_secs(5),
            view: (40, 30),
            game: game::Config::default(),
            seed: 1,
        }
    }
}

/// What the game loop sends a player's task.
#[derive(Clone, Debug)]
enum Out {
    /// A WebSocket frame: this player's view of one tick.
    Frame(Vec<u8>),
    /// Close the connection with this code and reason.
    Close(u16, &'static str),
}

/// What a player's task sends the game loop.
enum ToGame {
    Join {
        name: String,
        outbox: Queue<Out>,
        id: oneshot::Sender<PlayerId>,
    },
    Command(PlayerId, Command),
    Leave(PlayerId),
    /// The server is stopping: close every player, and end the loop.
    Stop,
}

/// What the game loop keeps for each player: where its frames go, and
/// what its client has seen.
struct Seat {
    outbox: Queue<Out>,
    viewer: Viewer,
    /// Ticks in a row this player was behind.
    behind: usize,
}

/// The reason in the close frame every player gets when the server stops.
const SHUTTING_DOWN: &str = "the server is shutting down";

/// What `serve` did once it was told to stop.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stopped {
    /// Players told the server is going away (close code 1001).
    pub players_closed: usize,
    /// Connections still open after the grace period, cut off.
    pub cut_off: usize,
}

/// The server's shared state: only queues and counters, on one thread.
pub struct Server {
    options: Options,
    inbox: Queue<ToGame>,
    /// Players in the game, as the game loop counts them: a player the
    /// game dropped (too slow) frees its place at once, though its
    /// connection may take `IO_TIMEOUT` more to close.
    playing: Cell<usize>,
    /// Connections admitted whose Join the game loop has not taken yet.
    /// Together with `playing`, what `--max-players` limits.
    joining: Cell<usize>,
    /// Set when `serve` is told to stop: no player may join after it.
    stopping: Cell<bool>,
    stats: RefCell<TickStats>,
}

impl Server {
    /// A server with these settings.
    pub fn new(options: Options) -> Rc<Server> {
        Rc::new(Server {
            options,
            inbox: Queue::new(),
            playing: Cell::new(0),
            joining: Cell::new(0),
            stopping: Cell::new(false),
            stats: RefCell::new(TickStats::default()),
        })
    }

    /// The tick intervals and costs so far.
    pub fn stats(&self) -> TickStats {
        self.stats.borrow().clone()
    }

    // ANCHOR: serve
    /// Runs the game loop and accepts connections, one task each, until
    /// `stop` completes. Then it stops accepting, has the game loop close
    /// every player, and waits (at most [`GRACE`]) for the connections to
    /// end.
    pub async fn serve(self: Rc<Self>, listener: TcpListener, stop: impl Future) -> Stopped {
        let game = TaskBuilder::new()
            .name("game-loop")
            .spawn(Rc::clone(&self).game_loop());
        let mut connections = Vec::new();
        select(self.accept(listener, &mut connections), stop).await;
        // The listener is closed now: new clients are refused by the
        // kernel. Joins already in the inbox come before the stop, so
        // every player who joined is closed by the game loop.
        self.stopping.set(true);
        self.inbox.put_nowait(ToGame::Stop);
        let players_closed = game.await.unwrap_or(0);
        let _ = timeout(GRACE, async {
            for connection in &mut connections {
                let _ = connection.await;
            }
        })
        .await;
        let left: Vec<_> = connections.iter().filter(|c| !c.is_finished()).collect();
        for connection in &left {
            connection.cancel();
        }
        Stopped {
            players_closed,
            cut_off: left.len(),
        }
    }

    /// Accepts connections, a task each, forever; keeps their handles in
    /// `connections` (those that ended are forgotten as new ones come).
    async fn accept(
        self: &Rc<Self>,
        mut listener: TcpListener,
        connections: &mut Vec<JoinHandle<()>>,
    ) {
        loop {
            match listener.accept().await {
                Ok((stream, peer)) => {
                    let _ = stream.set_nodelay(true);
                    connections.retain(|c| !c.is_finished());
                    connections.push(
                        TaskBuilder::new()
                            .name(format!("conn-{peer}"))
                            .spawn(Rc::clone(self).connection(stream, peer)),
                    );
                }
                Err(e) => {
                    // "Too many open files" leaves the connection queued:
                    // retrying at once would spin.
                    log::warn!("accept failed: {e}");
                    sleep(Duration::from_millis(100)).await;
                }
            }
        }
    }
    // ANCHOR_END: serve

    // ANCHOR: game_loop
    /// Ticks the game at a fixed rate until told to stop. Each tick starts
    /// at a deadline, not a pause after the last one: a slow tick shortens
    /// the next sleep, so the rate holds over minutes. Returns how many
    /// players it closed when it stopped.
    async fn game_loop(self: Rc<Self>) -> usize {
        let mut game = Game::new(self.options.game.clone(), self.options.seed);
        let mut seats: HashMap<PlayerId, Seat> = HashMap::new();
        let (mut grid, mut board) = (Grid::default(), Board::default());
        let mut deadline = runtime::now() + self.options.tick;
        loop {
            // A late tick still waits a moment (TURN), so that the event
            // loop looks at the sockets between two ticks: the players'
            // tasks write a frame only as their sockets take it, and a
            // burst of ticks with no look between them would fill every
            // outbox and drop every player as too slow.
            sleep_until(deadline.max(runtime::now() + TURN)).await;
            let started = runtime::now();
            if self.take_inbox(&mut game, &mut seats).is_break() {
                return close_all(seats);
            }
            game.tick();
            game.paint(&mut grid);
            board.update(&game.top(view::BOARD_SIZE));
            let sent = self.broadcast(&grid, &board, &mut game, &mut seats);
            let cost = runtime::now().saturating_duration_since(started);
            self.stats
                .borrow_mut()
                .record(started, cost, sent, seats.len());
            deadline += self.options.tick;
            // A late tick is made up by shorter sleeps after it: the rate
            // holds on average. Hopelessly late (the machine was suspended,
            // say), the schedule starts again from now instead of ticking
            // a burst to catch up.
            let now = runtime::now();
            if now > deadline + CATCH_UP {
                log::warn!(
                    "the game loop fell behind by {:?}: skipping ahead",
                    now - deadline
                );
                deadline = now + self.options.tick;
            }
        }
    }
    // ANCHOR_END: game_loop

    /// Applies what the players sent since the last tick; breaks at a
    /// stop.
    fn take_inbox(&self, game: &mut Game, seats: &mut HashMap<PlayerId, Seat>) -> ControlFlow<()> {
        while let Some(message) = self.inbox.get_nowait() {
            match message {
                ToGame::Join { name, outbox, id } => {
                    let player = game.join(&name);
                    let (width, height) = self.options.view;
                    let viewer = Viewer::new(width, height);
                    seats.insert(
                        player,
                        Seat {
                            outbox,
                            viewer,
                            behind: 0,
                        },
                    );
                    self.joining.set(self.joining.get().saturating_sub(1));
                    id.send(player);
                }
                ToGame::Command(player, command) => game.command(player, command),
                ToGame::Leave(player) => {
                    game.leave(player);
                    seats.remove(&player);
                }
                ToGame::Stop => return ControlFlow::Break(()),
            }
        }
        self.playing.set(seats.len());
        ControlFlow::Continue(())
    }

    // ANCHOR: broadcast
    /// Puts each player's frame for this tick in its outbox: the changes
    /// in its view since its last frame. A player whose last frame is
    /// still there is behind: that frame is dropped and this one is full,
    /// so the client catches up in one frame and the outbox never holds
    /// more than one. Behind for `max_behind` ticks in a row, the client
    /// has stopped reading: it is told to close, and its player leaves the
    /// game. Nobody waits for anybody. Returns the bytes of the frames.
    fn broadcast(
        &self,
        grid: &Grid,
        board: &Board,
        game: &mut Game,
        seats: &mut HashMap<PlayerId, Seat>,
    ) -> usize {
        let (tick, players) = (game.tick_number(), seats.len());
        let (mut sent, mut payload) = (0, Vec::new());
        seats.retain(|&player, seat| {
            if seat.outbox.get_nowait().is_some() {
                seat.behind += 1;
                seat.viewer.reset();
            } else {
                seat.behind = 0;
            }
            let me = match game.me(player) {
                Some(me) if seat.behind < self.options.max_behind => me,
                _ => {
                    log::info!("player {player}: dropped, {} ticks behind", seat.behind);
                    seat.outbox.put_nowait(Out::Close(
                        websocket::CLOSE_POLICY,
                        "too slow: stopped reading",
                    ));
                    game.leave(player);
                    return false;
                }
            };
            payload.clear();
            seat.viewer
                .frame(grid, tick, me, players, board, &mut payload);
            let mut frame = Vec::with_capacity(payload.len() + 4);
            websocket::encode_frame(Opcode::Binary, &payload, &mut frame);
            sent += payload.len();
            seat.outbox.put_nowait(Out::Frame(frame));
            true
        });
        self.playing.set(seats.len());
        sent
    }
    // ANCHOR_END: broadcast

    /// One TCP connection: read its request, and serve it.
    async fn connection(self: Rc<Self>, mut stream: TcpStream, peer: SocketAddr) {
        let mut buf = Vec::new();
        let request = match timeout(IO_TIMEOUT, read_head(&mut stream, &mut buf)).await {
            Ok(Ok(Some(request))) => request,
            Ok(Ok(None)) => return,
            Ok(Err(HeadError::Refused(status, why))) => {
                // Said, then closed: a client sees why, not a reset.
                log::debug!("{peer}: {status}: {why}");
                let reply = response(status, "text/plain", format!("{why}\n").as_bytes());
                let _ = timeout(IO_TIMEOUT, stream.write_all(&reply)).await;
                return linger(&mut stream).await;
            }
            Ok(Err(HeadError::Io(e))) => return log::debug!("{peer}: {e}"),
            Err(_) => return log::debug!("{peer}: no request in {IO_TIMEOUT:?}"),
        };
        let reply = match (request.method.as_str(), request.path.as_str()) {
            ("GET", "/" | "/index.html") => {
                response(200, "text/html; charset=utf-8", INDEX.as_bytes())
            }
            ("GET", "/stats") => {
                let stats = self.stats().to_json(self.playing.get());
                response(200, "application/json", stats.as_bytes())
            }
            ("GET", "/ws") => return self.player(stream, peer, &request, buf).await,
            ("GET", _) => response(404, "text/plain", b"not found\n"),
            _ => response(405, "text/plain", b"GET only\n"),
        };
        let _ = timeout(IO_TIMEOUT, stream.write_all(&reply)).await;
    }

    /// A player: the WebSocket handshake, then the game until either side
    /// closes. `early` holds bytes the client sent after its request head.
    async fn player(
        self: Rc<Self>,
        mut stream: TcpStream,
        peer: SocketAddr,
        request: &Request,
        early: Vec<u8>,
    ) {
        let accepted = match websocket::handshake(&request.headers) {
            Ok(accepted) => accepted,
            Err(e) => {
                log::info!("{peer}: refused the WebSocket handshake: {e}");
                let reply = response(e.status(), "text/plain", format!("{e}\n").as_bytes());
                let _ = timeout(IO_TIMEOUT, stream.write_all(&reply)).await;
                return;
            }
        };
        let refusal = if self.stopping.get() {
            Some("the server is shutting down\n")
        } else if self.playing.get() + self.joining.get() >= self.options.max_players {
            Some("the game is full\n")
        } else {
            None
        };
        if let Some(why) = refusal {
            let reply = response(503, "text/plain", why.as_bytes());
            let _ = timeout(IO_TIMEOUT, stream.write_all(&reply)).await;
            return;
        }
        if write(&mut stream, &accepted).await.is_err() {
            return;
        }
        // The write may have waited: a stop that came meanwhile closes
        // this player here, as the game loop no longer reads its inbox.
        if self.stopping.get() {
            let bye = websocket::close_frame(websocket::CLOSE_GOING_AWAY, SHUTTING_DOWN);
            let _ = write(&mut stream, &bye).await;
            return;
        }
        if let Err(e) = socket2::SockRef::from(&stream).set_send_buffer_size(SEND_BUFFER) {
            log::debug!("{peer}: cannot size the send buffer: {e}");
        }
        // From here to the Join, nothing waits: the Join is in the inbox
        // before any stop can be.
        self.joining.set(self.joining.get() + 1);
        let outbox = Queue::new();
        let (id_tx, id_rx) = oneshot::channel();
        self.inbox.put_nowait(ToGame::Join {
            name: request.query_param("name").unwrap_or_default(),
            outbox: outbox.clone(),
            id: id_tx,
        });
        let ended = match id_rx.await {
            Ok(player) => {
                log::info!("{peer}: player {player} joined");
                // The view's size, as the frames will have it: cut to the field.
                let (width, height) = self.options.view;
                let (width, height) = (
                    width.min(255).min(self.options.game.width),
                    height.min(255).min(self.options.game.height),
                );
                let hello = websocket::text_frame(&format!(
                    "{{\"you\":{player},\"view\":[{width},{height}]}}"
                ));
                let heartbeat = Heartbeat::new(
                    runtime::now(),
                    self.options.ping_every,
                    self.options.pong_within,
                );
                let (inbox, outbox) = (&self.inbox, &outbox);
                let ended = play(&mut stream, player, inbox, outbox, heartbeat, early, hello).await;
                self.inbox.put_nowait(ToGame::Leave(player));
                ended
            }
            Err(_) => Ended::Server("the game loop is gone"),
        };
        log::info!("{peer}: {ended}");
    }
}

/// Tells every player the server is going away; returns how many there
/// were. A frame still in an outbox is dropped: a game that has ended has
/// nothing worth sending, and a player behind learns at once.
fn close_all(seats: HashMap<PlayerId, Seat>) -> usize {
    for seat in seats.values() {
        while seat.outbox.get_nowait().is_some() {}
        seat.outbox
            .put_nowait(Out::Close(websocket::CLOSE_GOING_AWAY, SHUTTING_DOWN));
    }
    seats.len()
}

/// Starts a server on a free port of 127.0.0.1, in a thread of its own
/// with its own runtime, and returns its address: for tests, and for
/// programs that run the game beside other work. It runs until the
/// process ends.
pub fn start_in_thread(options: Options) -> io::Result<SocketAddr> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("snake-server".into())
        .spawn(move || {
            let any_port = SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, 0));
            let bound = TcpListener::bind(any_port).and_then(|l| Ok((l.local_addr()?, l)));
            let listener = match bound {
                Ok((addr, listener)) => {
                    let _ = tx.send(Ok(addr));
                    listener
                }
                Err(e) => return drop(tx.send(Err(e))),
            };
            let never = std::future::pending::<()>();
            if let Err(e) = runtime::run_until_complete(Server::new(options).serve(listener, never))
            {
                log::error!("the snake server stopped: {e}");
            }
        })?;
    rx.recv()
        .map_err(|_| io::Error::other("the server's thread ended before it listened"))?
}

/// How a player's connection ended, for the log.
enum Ended {
    /// The client closed, with this code.
    Closed(Option<u16>),
    /// The client broke the protocol: we closed with this code.
    Protocol(ProtocolError),
    /// The server closed it (too slow, shutting down).
    Server(&'static str),
    /// The connection failed or timed out.
    Io(io::Error),
}

impl std::fmt::Display for Ended {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ended::Closed(Some(code)) => write!(f, "closed by the client ({code})"),
            Ended::Closed(None) => write!(f, "closed by the client"),
            Ended::Protocol(e) => write!(f, "closed for a protocol error: {e}"),
            Ended::Server(why) => write!(f, "closed by the server: {why}"),
            Ended::Io(e) => write!(f, "connection lost: {e}"),
        }
    }
}

// ANCHOR: play
/// A player's connection: commands in, frames out, on one socket. The task
/// waits for whichever comes first: bytes from the client, a frame in its
/// outbox, or its heartbeat's next moment (a ping to send, or a pong that
/// is late). A read that loses the race is dropped, which loses nothing (a
/// readiness-based read takes bytes only when it completes).
async fn play(
    stream: &mut TcpStream,
    player: PlayerId,
    inbox: &Queue<ToGame>,
    outbox: &Queue<Out>,
    mut heartbeat: Heartbeat,
    early: Vec<u8>,
    hello: Vec<u8>,
) -> Ended {
    let mut decoder = Decoder::new(MAX_FRAME, MAX_MESSAGE);
    decoder.push(&early);
    if let Err(e) = write(stream, &hello).await {
        return Ended::Io(e);
    }
    let mut buf = vec![0u8; 4096];
    // One timer for the heartbeat, made again only when its moment moves.
    let mut alarm = sleep_until(heartbeat.next_at());
    let mut allowance = COMMANDS_PER_TICK;
    loop {
        // Whatever whole messages the bytes so far hold.
        loop {
            match decoder.next_message() {
                Ok(Some(message)) => match message {
                    Message::Text(text) => match game::parse_command(&text) {
                        Some(command) if allowance > 0 => {
                            allowance -= 1;
                            inbox.put_nowait(ToGame::Command(player, command));
                        }
                        Some(_) => {} // more than a tick can use
                        None => log::debug!("player {player}: unknown command {text:?}"),
                    },
                    Message::Binary(_) => log::debug!("player {player}: ignored a binary message"),
                    Message::Ping(payload) => {
                        if let Err(e) = write(stream, &websocket::pong_frame(&payload)).await {
                            return Ended::Io(e);
                        }
                    }
                    Message::Pong(payload) => {
                        heartbeat.pong(&payload, runtime::now());
                        alarm = sleep_until(heartbeat.next_at());
                    }
                    Message::Close(close) => {
                        // Answer with the same code, then the TCP close.
                        let code = close.as_ref().map(|(code, _)| *code);
                        let _ = write(
                            stream,
                            &websocket::close_frame(code.unwrap_or(websocket::CLOSE_NORMAL), ""),
                        )
                        .await;
                        return Ended::Closed(code);
                    }
                },
                Ok(None) => break,
                Err(e) => {
                    if write(stream, &websocket::close_frame(e.code, e.reason))
                        .await
                        .is_ok()
                    {
                        drain(stream, &mut buf).await;
                    }
                    return Ended::Protocol(e);
                }
            }
        }
        match next_event(stream, &mut buf, outbox, &mut alarm).await {
            Event::Read(Ok(0)) => return Ended::Closed(None),
            Event::Read(Ok(n)) => decoder.push(&buf[..n]),
            Event::Read(Err(e)) => return Ended::Io(e),
            Event::Out(Out::Frame(frame)) => {
                allowance = COMMANDS_PER_TICK;
                if let Err(e) = write(stream, &frame).await {
                    return Ended::Io(e);
                }
            }
            Event::Out(Out::Close(code, why)) => {
                return close(stream, &mut decoder, &mut buf, code, why).await;
            }
            Event::Alarm => match heartbeat.due(runtime::now()) {
                Some(Due::Ping(payload)) => {
                    let ping = websocket::ping_frame(&payload);
                    if let Err(e) = write(stream, &ping).await {
                        return Ended::Io(e);
                    }
                    alarm = sleep_until(heartbeat.next_at());
                }
                Some(Due::Silent) => {
                    // Its place is free from the next tick on, however
                    // long the close below takes with a client not reading.
                    inbox.put_nowait(ToGame::Leave(player));
                    let why = "too slow: no answer to a ping";
                    return close(stream, &mut decoder, &mut buf, websocket::CLOSE_POLICY, why)
                        .await;
                }
                // Woken early (a timer fires at the millisecond): again.
                None => alarm = sleep_until(heartbeat.next_at()),
            },
        }
    }
}
// ANCHOR_END: play

/// What a player's task waits for: whichever comes first.
enum Event {
    /// Bytes from the client (a read's result).
    Read(io::Result<usize>),
    /// Something the game loop put in the outbox.
    Out(Out),
    /// The heartbeat's moment came.
    Alarm,
}

/// Waits for the first of a read, the outbox and the alarm.
async fn next_event(
    stream: &mut TcpStream,
    buf: &mut [u8],
    outbox: &Queue<Out>,
    alarm: &mut Sleep,
) -> Event {
    match select(select(stream.read(buf), outbox.get()), alarm).await {
        Either::Left(Either::Left(read)) => Event::Read(read),
        Either::Left(Either::Right(out)) => Event::Out(out),
        Either::Right(()) => Event::Alarm,
    }
}

/// Closes the connection from our side: our close frame with `code` and
/// `why`, then the client's answer (see [`await_close`]).
async fn close(
    stream: &mut TcpStream,
    decoder: &mut Decoder,
    buf: &mut [u8],
    code: u16,
    why: &'static str,
) -> Ended {
    if write(stream, &websocket::close_frame(code, why))
        .await
        .is_ok()
    {
        await_close(stream, decoder, buf).await;
    }
    Ended::Server(why)
}

/// After our close frame: reads until the client's close frame answers it,
/// the connection ends, or [`CLOSE_WAIT`] passes. Then the caller drops
/// the socket, and the server closes TCP first, as RFC 6455 (7.1.1) asks.
/// Closing at once could leave the client's last bytes unread, and a
/// kernel resets a connection closed with unread bytes: the browser would
/// see 1006 (abnormal closure) instead of our code.
async fn await_close(stream: &mut TcpStream, decoder: &mut Decoder, buf: &mut [u8]) {
    let answered = async {
        loop {
            loop {
                match decoder.next_message() {
                    Ok(Some(Message::Close(_))) | Err(_) => return,
                    Ok(Some(_)) => {}
                    Ok(None) => break,
                }
            }
            match stream.read(buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => decoder.push(&buf[..n]),
            }
        }
    };
    let _ = timeout(CLOSE_WAIT, answered).await;
}

/// After our close frame for a protocol error, when what the client sends
/// can no longer be read as frames: says we are done (a FIN), then reads
/// and drops what the client still sends until it closes too, or
/// [`CLOSE_WAIT`] passes. Dropped at once with the client's bytes unread,
/// the socket would be reset, and a client still writing would see
/// ECONNRESET instead of our close frame (RFC 6455 7.1.1: close TCP
/// cleanly).
async fn drain(stream: &mut TcpStream, buf: &mut [u8]) {
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let drained = async {
        loop {
            match stream.read(buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    };
    let _ = timeout(CLOSE_WAIT, drained).await;
}

/// Writes all of `bytes`, or fails after [`IO_TIMEOUT`]: a client that
/// stopped reading cannot hold its task forever.
async fn write(stream: &mut TcpStream, bytes: &[u8]) -> io::Result<()> {
    match timeout(IO_TIMEOUT, stream.write_all(bytes)).await {
        Ok(result) => result,
        Err(_) => Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "the client stopped reading",
        )),
    }
}

/// A request head, as much of it as we use.
struct Request {
    method: String,
    path: String,
    query: String,
    headers: Vec<(String, Vec<u8>)>,
}

impl Request {
    /// The first value of `name` in the query string, percent-decoded.
    fn query_param(&self, name: &str) -> Option<String> {
        self.query.split('&').find_map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (key == name).then(|| percent_decode(value))
        })
    }
}

/// Closes our side and reads what the client is still sending, for a
/// moment: closing a socket with unread input makes the kernel reset the
/// connection, and the reset can destroy the answer before the client has
/// read it (a client still sending a 100 KB head would never see its 431).
async fn linger(stream: &mut TcpStream) {
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let mut sink = [0u8; 4096];
    let _ = timeout(Duration::from_secs(1), async {
        while let Ok(n) = stream.read(&mut sink).await
            && n > 0
        {}
    })
    .await;
}

/// Why a request head could not be read.
enum HeadError {
    /// The connection failed or closed mid-request.
    Io(io::Error),
    /// The head is not one we serve: answered with this status and why.
    Refused(u16, String),
}

impl From<io::Error> for HeadError {
    fn from(e: io::Error) -> HeadError {
        HeadError::Io(e)
    }
}

/// The most header lines a request may have; with [`MAX_HEAD`], what a
/// browser's upgrade request needs many times over.
const MAX_HEADERS: usize = 32;

/// Reads up to the end of the request head, with the head reader every
/// server of ours shares (`runtime/http-head`). Bytes after it (a client
/// may send its first frame at once) are left in `buf`. `None` if the
/// client closed before sending anything. A head over [`MAX_HEAD`] bytes
/// or [`MAX_HEADERS`] lines is refused with 431, another version than
/// HTTP/1.x with 505, one that is not HTTP with 400.
async fn read_head(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
) -> Result<Option<Request>, HeadError> {
    let mut reader = http_head::HeadReader::new(http_head::Limits {
        max_head: MAX_HEAD,
        max_headers: MAX_HEADERS,
    });
    let mut chunk = [0u8; 2048];
    loop {
        match reader.next(buf) {
            Ok(Some(head)) => {
                buf.drain(..head.len);
                return Ok(Some(request_of(head)));
            }
            Ok(None) => {}
            Err(refusal) => return Err(HeadError::Refused(refusal.status, refusal.reason)),
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return if buf.is_empty() {
                Ok(None)
            } else {
                Err(HeadError::Io(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "closed mid-request",
                )))
            };
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// The request the server routes, from its head.
fn request_of(head: http_head::Head) -> Request {
    let (path, query) = head.target.split_once('?').unwrap_or((&head.target, ""));
    Request {
        method: head.method,
        path: path.to_string(),
        query: query.to_string(),
        headers: head.headers,
    }
}

/// `%41` and `+` in a query value, as browsers write them. Bytes that do
/// not make UTF-8 are replaced.
fn percent_decode(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A whole HTTP response that closes the connection after it.
fn response(status: u16, content_type: &str, body: &[u8]) -> Vec<u8> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        426 => "Upgrade Required",
        503 => "Service Unavailable",
        status => http_head::phrase(status),
    };
    let mut out = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Cache-Control: no-store\r\nConnection: close\r\n",
        body.len()
    );
    if status == 426 {
        out.push_str("Sec-WebSocket-Version: 13\r\n");
    }
    out.push_str("\r\n");
    let mut out = out.into_bytes();
    out.extend_from_slice(body);
    out
}
