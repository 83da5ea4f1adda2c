//! The server: one game loop task that owns the game, and one task per
//! connection. A connection is a web page (`GET /`), the numbers
//! (`GET /stats`), or a player (`GET /ws`, upgraded to a WebSocket).
//!
//! The game is behind no lock. A player's task talks to the game loop
//! through a channel (its commands go in the loop's inbox), and the loop
//! talks back through the player's own `Queue`, its outbox: every tick the
//! player's frame goes there, its view of the field as the changes since
//! its last frame (`view.rs`). A player whose last frame is still in its
//! outbox at the next tick is behind: the waiting frame is replaced by a
//! full one, so the outbox never grows; behind for too many ticks in a
//! row, the player is dropped. One slow client costs the others nothing.
//!
//! With `--loops N` the game keeps its loop and the players are spread
//! over N - 1 others ([`Loops`]): each accepted connection is handed to the
//! next, which serves it and builds its players' frames from each tick's
//! field (`hall`). With one loop (the default) the game's loop does all.
//!
//! Told to stop (Ctrl-C, in `main`), the server stops accepting, every
//! player is told it is going away (close code 1001), the game loop ends,
//! and the connections finish their close handshakes before `serve`
//! returns: the runtime ends with no task left behind.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::ops::ControlFlow;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use runtime::{
    Either, JoinHandle, Loops, Queue, RemoteJoin, Sleep, TaskBuilder, TcpListener, TcpStream, mpsc,
    oneshot, select, sleep, sleep_until, timeout,
};

use crate::game::{self, Command, Game, PlayerId};
use crate::heartbeat::{Due, Heartbeat};
use crate::stats::TickStats;
use crate::view::{self, Board, Grid, Me, Viewer};
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
    /// Event loops, each on a thread of its own: with more than one, the
    /// game loop keeps the first, and the players' connections are spread
    /// over the others, each of which builds and sends its own players'
    /// frames.
    pub loops: usize,
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
            loops: 1,
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

/// What a player's task sends the game loop, from any loop.
enum ToGame {
    /// A new player, whose seat waits on loop `hall` under `ticket`
    /// until the field of the tick it joins at says its number; the
    /// number also comes back on `id`.
    Join {
        name: String,
        hall: usize,
        ticket: u64,
        id: oneshot::Sender<PlayerId>,
    },
    Command(PlayerId, Command),
    Leave(PlayerId),
    /// The server is stopping: close every player, and end the loop.
    Stop,
}

/// What the game loop sends a loop of players (with `--loops`).
enum ToHall {
    /// The field after a tick.
    Tick(Arc<Field>),
    /// A connection accepted on the game's loop, for this loop to serve.
    Connection(std::net::TcpStream, SocketAddr),
    /// The server is stopping: close this loop's players, and say how
    /// many there were.
    Stop(oneshot::Sender<usize>),
}

/// Where the players of one loop are, as the game loop reaches them.
enum Hall {
    /// On the game loop's own loop: the single-loop server.
    Here(Rc<Server>),
    /// On another loop, through its mailbox.
    There(mpsc::Sender<ToHall>),
}

// ANCHOR: field
/// One tick's field, as a loop of players builds its players' frames from
/// it: the same for every loop, so it is made once and shared.
struct Field {
    tick: u64,
    /// Players in the game.
    players: usize,
    grid: Grid,
    board: Board,
    /// What each player's frame says about it.
    mes: HashMap<PlayerId, Me>,
    /// Who joined at this tick: the loop of its seat, its ticket there,
    /// and its number.
    joined: Vec<(usize, u64, PlayerId)>,
}
// ANCHOR_END: field

/// What a loop of players keeps for each of its players: where its frames
/// go, and what its client has seen.
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

/// What every loop of the server shares: the way to the game loop, and a
/// few numbers. The only state that crosses threads, and all of it
/// atomic or behind a lock taken once a tick.
struct Shared {
    options: Options,
    /// The game loop's inbox.
    to_game: mpsc::Sender<ToGame>,
    /// Players in the game, as the game loop counts them at each tick: a
    /// player dropped (too slow) frees its place then, though its
    /// connection may take `IO_TIMEOUT` more to close.
    playing: AtomicUsize,
    /// Connections admitted whose Join the game loop has not taken yet.
    /// Together with `playing`, what `--max-players` limits.
    joining: AtomicUsize,
    /// Set when `serve` is told to stop: no player may join after it.
    stopping: AtomicBool,
    /// Bytes of frames built since the game loop last looked, on every
    /// loop.
    sent: AtomicUsize,
    stats: Mutex<TickStats>,
}

/// The server on one loop: its players' seats and connections. With
/// `--loops 1` (the default) there is one, which also runs the game loop;
/// with more, the game loop's and one on each other loop, each serving the
/// players whose connections were handed to it.
pub struct Server {
    shared: Arc<Shared>,
    /// Which of the server's loops this is: 0 for the game's, 1 on for the
    /// players' loops of `--loops`.
    index: usize,
    /// The game loop's end of its inbox, until `serve` starts it.
    inbox: RefCell<Option<mpsc::Receiver<ToGame>>>,
    /// This loop's players.
    seats: RefCell<HashMap<PlayerId, Seat>>,
    /// Seats of players whose Join the game has not put in a field yet,
    /// by ticket.
    waiting: RefCell<HashMap<u64, Seat>>,
    next_ticket: Cell<u64>,
    /// This loop's connections (those that ended are forgotten as new
    /// ones come).
    connections: RefCell<Vec<JoinHandle<()>>>,
}

impl Server {
    /// A server with these settings.
    pub fn new(options: Options) -> Rc<Server> {
        let (to_game, inbox) = mpsc::channel();
        let shared = Arc::new(Shared {
            options,
            to_game,
            playing: AtomicUsize::new(0),
            joining: AtomicUsize::new(0),
            stopping: AtomicBool::new(false),
            sent: AtomicUsize::new(0),
            stats: Mutex::new(TickStats::default()),
        });
        let server = Server::on_this_loop(shared, 0);
        *server.inbox.borrow_mut() = Some(inbox);
        server
    }

    /// The server's part on the loop this is called on, its `index`th.
    fn on_this_loop(shared: Arc<Shared>, index: usize) -> Rc<Server> {
        Rc::new(Server {
            shared,
            index,
            inbox: RefCell::new(None),
            seats: RefCell::new(HashMap::new()),
            waiting: RefCell::new(HashMap::new()),
            next_ticket: Cell::new(0),
            connections: RefCell::new(Vec::new()),
        })
    }

    fn options(&self) -> &Options {
        &self.shared.options
    }

    /// The tick intervals and costs so far.
    pub fn stats(&self) -> TickStats {
        lock(&self.shared.stats).clone()
    }

    // ANCHOR: serve
    /// Runs the game loop and accepts connections, one task each, until
    /// `stop` completes. Then it stops accepting, has the game loop close
    /// every player, and waits (at most [`GRACE`]) for the connections to
    /// end. With `--loops N` the players are spread over N - 1 more loops,
    /// each accepted connection handed to the next in turn.
    pub async fn serve(self: Rc<Self>, listener: TcpListener, stop: impl Future) -> Stopped {
        let Some(inbox) = self.inbox.borrow_mut().take() else {
            log::error!("serve was called twice");
            return Stopped::default();
        };
        let (halls, loops) = match self.start_halls() {
            Ok(started) => started,
            Err(e) => {
                log::error!("cannot start the players' loops: {e}");
                return Stopped::default();
            }
        };
        let game = TaskBuilder::new()
            .name("game-loop")
            .spawn(Rc::clone(&self).game_loop(inbox, Rc::clone(&halls)));
        select(self.accept(listener, &halls), stop).await;
        // The listener is closed now: new clients are refused by the
        // kernel. Joins already in the inbox come before the stop, so
        // every player who joined is closed by the game loop.
        self.shared.stopping.store(true, Ordering::SeqCst);
        let _ = self.shared.to_game.send(ToGame::Stop);
        let players_closed = game.await.unwrap_or(0);
        let mut cut_off = self.wait_for_connections().await;
        if let Some((loops, ends)) = loops {
            for end in ends {
                cut_off += end.await.unwrap_or(0);
            }
            // Their tasks are over: the threads end as soon as they see it.
            let _ = runtime::spawn_blocking(move || loops.join()).await;
        }
        Stopped {
            players_closed,
            cut_off,
        }
    }

    /// Where the players go: this loop, or `loops - 1` others, each
    /// running [`hall`] (and how each of those ends: its cut-off count).
    #[allow(clippy::type_complexity)]
    fn start_halls(
        self: &Rc<Self>,
    ) -> io::Result<(Rc<Vec<Hall>>, Option<(Loops, Vec<RemoteJoin<usize>>)>)> {
        let others = self.options().loops.saturating_sub(1);
        if others == 0 {
            return Ok((Rc::new(vec![Hall::Here(Rc::clone(self))]), None));
        }
        let loops = Loops::start(others)?;
        let mut halls = Vec::new();
        let mut ends = Vec::new();
        for handle in loops.handles() {
            let (mail, mailbox) = mpsc::channel();
            let shared = Arc::clone(&self.shared);
            let index = handle.index() + 1;
            ends.push(handle.spawn_with(move || hall(shared, index, mailbox)));
            halls.push(Hall::There(mail));
        }
        Ok((Rc::new(halls), Some((loops, ends))))
    }

    /// Accepts connections forever, each served by the next hall in turn.
    async fn accept(self: &Rc<Self>, mut listener: TcpListener, halls: &[Hall]) {
        let mut next = 0;
        loop {
            match listener.accept().await {
                Ok((stream, peer)) => {
                    let _ = stream.set_nodelay(true);
                    match &halls[next % halls.len()] {
                        Hall::Here(server) => server.serve_connection(stream, peer),
                        Hall::There(mail) => match stream.into_std() {
                            Ok(stream) => {
                                let _ = mail.send(ToHall::Connection(stream, peer));
                            }
                            Err(e) => log::warn!("{peer}: cannot hand the connection over: {e}"),
                        },
                    }
                    next += 1;
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

    /// Serves one connection on this loop, as a task of its own.
    fn serve_connection(self: &Rc<Self>, stream: TcpStream, peer: SocketAddr) {
        let mut connections = self.connections.borrow_mut();
        connections.retain(|c| !c.is_finished());
        connections.push(
            TaskBuilder::new()
                .name(format!("conn-{peer}"))
                .spawn(Rc::clone(self).connection(stream, peer)),
        );
    }

    /// Waits at most [`GRACE`] for this loop's connections to end, then
    /// cancels those left; returns how many it cancelled.
    async fn wait_for_connections(&self) -> usize {
        let connections = std::mem::take(&mut *self.connections.borrow_mut());
        let mut connections = connections;
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
        left.len()
    }

    // ANCHOR: game_loop
    /// Ticks the game at a fixed rate until told to stop. Each tick starts
    /// at a deadline, not a pause after the last one: a slow tick shortens
    /// the next sleep, so the rate holds over minutes. Returns how many
    /// players it closed when it stopped.
    async fn game_loop(
        self: Rc<Self>,
        mut inbox: mpsc::Receiver<ToGame>,
        halls: Rc<Vec<Hall>>,
    ) -> usize {
        let options = self.options();
        let mut game = Game::new(options.game.clone(), options.seed);
        let (mut grid, mut board) = (Grid::default(), Board::default());
        let mut deadline = runtime::now() + options.tick;
        loop {
            // A late tick still waits a moment (TURN), so that the event
            // loop looks at the sockets between two ticks: the players'
            // tasks write a frame only as their sockets take it, and a
            // burst of ticks with no look between them would fill every
            // outbox and drop every player as too slow.
            sleep_until(deadline.max(runtime::now() + TURN)).await;
            let started = runtime::now();
            let mut joined = Vec::new();
            if self
                .take_inbox(&mut game, &mut inbox, &mut joined)
                .is_break()
            {
                return stop_halls(&halls).await;
            }
            game.tick();
            game.paint(&mut grid);
            board.update(&game.top(view::BOARD_SIZE));
            let field = Field {
                tick: game.tick_number(),
                players: game.len(),
                grid: grid.clone(),
                board: board.clone(),
                mes: game.everyone().collect(),
                joined,
            };
            self.shared.playing.store(game.len(), Ordering::SeqCst);
            broadcast_to(&halls, field);
            let cost = runtime::now().saturating_duration_since(started);
            let sent = self.shared.sent.swap(0, Ordering::Relaxed);
            lock(&self.shared.stats).record(started, cost, sent, game.len());
            deadline += options.tick;
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
                deadline = now + options.tick;
            }
        }
    }
    // ANCHOR_END: game_loop

    /// Applies what the players sent since the last tick; breaks at a
    /// stop.
    fn take_inbox(
        &self,
        game: &mut Game,
        inbox: &mut mpsc::Receiver<ToGame>,
        joined: &mut Vec<(usize, u64, PlayerId)>,
    ) -> ControlFlow<()> {
        while let Some(message) = inbox.try_recv() {
            match message {
                ToGame::Join {
                    name,
                    hall,
                    ticket,
                    id,
                } => {
                    let player = game.join(&name);
                    self.shared.joining.fetch_sub(1, Ordering::SeqCst);
                    // Its seat is taken when this tick's field comes: its
                    // first frame is of the tick it joined at.
                    joined.push((hall, ticket, player));
                    id.send(player);
                }
                ToGame::Command(player, command) => game.command(player, command),
                ToGame::Leave(player) => game.leave(player),
                ToGame::Stop => return ControlFlow::Break(()),
            }
        }
        ControlFlow::Continue(())
    }

    // ANCHOR: broadcast
    /// Puts each of this loop's players' frames for this tick in its
    /// outbox: the changes in its view since its last frame. A player
    /// whose last frame is still there is behind: that frame is dropped
    /// and this one is full, so the client catches up in one frame and the
    /// outbox never holds more than one. Behind for `max_behind` ticks in a
    /// row, the client has stopped reading: it is told to close, and its
    /// player leaves the game. Nobody waits for anybody. Returns the bytes
    /// of the frames.
    fn broadcast(&self, field: &Field) -> usize {
        let max_behind = self.options().max_behind;
        let (mut sent, mut payload) = (0, Vec::new());
        let mut seats = self.seats.borrow_mut();
        for &(hall, ticket, player) in &field.joined {
            if hall == self.index
                && let Some(seat) = self.waiting.borrow_mut().remove(&ticket)
            {
                seats.insert(player, seat);
            }
        }
        seats.retain(|&player, seat| {
            if seat.outbox.get_nowait().is_some() {
                seat.behind += 1;
                seat.viewer.reset();
            } else {
                seat.behind = 0;
            }
            let me = match field.mes.get(&player) {
                Some(&me) if seat.behind < max_behind => me,
                _ => {
                    log::info!("player {player}: dropped, {} ticks behind", seat.behind);
                    seat.outbox.put_nowait(Out::Close(
                        websocket::CLOSE_POLICY,
                        "too slow: stopped reading",
                    ));
                    let _ = self.shared.to_game.send(ToGame::Leave(player));
                    return false;
                }
            };
            payload.clear();
            seat.viewer.frame(
                &field.grid,
                field.tick,
                me,
                field.players,
                &field.board,
                &mut payload,
            );
            let mut frame = Vec::with_capacity(payload.len() + 4);
            websocket::encode_frame(Opcode::Binary, &payload, &mut frame);
            sent += payload.len();
            seat.outbox.put_nowait(Out::Frame(frame));
            true
        });
        self.shared.sent.fetch_add(sent, Ordering::Relaxed);
        sent
    }
    // ANCHOR_END: broadcast

    /// Tells every player of this loop the server is going away; returns
    /// how many there were. A frame still in an outbox is dropped: a game
    /// that has ended has nothing worth sending, and a player behind learns
    /// at once.
    fn close_all(&self) -> usize {
        let seats = std::mem::take(&mut *self.seats.borrow_mut());
        let waiting = std::mem::take(&mut *self.waiting.borrow_mut());
        for seat in seats.values().chain(waiting.values()) {
            while seat.outbox.get_nowait().is_some() {}
            seat.outbox
                .put_nowait(Out::Close(websocket::CLOSE_GOING_AWAY, SHUTTING_DOWN));
        }
        seats.len() + waiting.len()
    }

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
                let playing = self.shared.playing.load(Ordering::SeqCst);
                let stats = self.stats().to_json(playing);
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
        let shared = Arc::clone(&self.shared);
        let options = &shared.options;
        let refusal = if shared.stopping.load(Ordering::SeqCst) {
            Some("the server is shutting down\n")
        } else if shared.playing.load(Ordering::SeqCst) + shared.joining.load(Ordering::SeqCst)
            >= options.max_players
        {
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
        if let Err(e) = socket2::SockRef::from(&stream).set_send_buffer_size(SEND_BUFFER) {
            log::debug!("{peer}: cannot size the send buffer: {e}");
        }
        // The seat waits under a ticket until the field of the tick the
        // player joins at names it: its first frame is of that tick.
        let outbox = Queue::new();
        let ticket = self.next_ticket.get();
        self.next_ticket.set(ticket + 1);
        let (width, height) = options.view;
        self.waiting.borrow_mut().insert(
            ticket,
            Seat {
                outbox: outbox.clone(),
                viewer: Viewer::new(width, height),
                behind: 0,
            },
        );
        let (id_tx, id_rx) = oneshot::channel();
        shared.joining.fetch_add(1, Ordering::SeqCst);
        let join = ToGame::Join {
            name: request.query_param("name").unwrap_or_default(),
            hall: self.index,
            ticket,
            id: id_tx,
        };
        // A stop that came meanwhile (the write may have waited) closes
        // this player here, as does a game loop that stopped before it
        // took the Join: either way the game loop no longer answers.
        let sent = !shared.stopping.load(Ordering::SeqCst) && shared.to_game.send(join).is_ok();
        if !sent {
            shared.joining.fetch_sub(1, Ordering::SeqCst);
        }
        let joined = if sent { id_rx.await.ok() } else { None };
        let Some(player) = joined.filter(|_| !shared.stopping.load(Ordering::SeqCst)) else {
            self.waiting.borrow_mut().remove(&ticket);
            let bye = websocket::close_frame(websocket::CLOSE_GOING_AWAY, SHUTTING_DOWN);
            let _ = write(&mut stream, &bye).await;
            return;
        };
        log::info!("{peer}: player {player} joined");
        // The view's size, as the frames will have it: cut to the field.
        let (width, height) = (
            width.min(255).min(options.game.width),
            height.min(255).min(options.game.height),
        );
        let hello =
            websocket::text_frame(&format!("{{\"you\":{player},\"view\":[{width},{height}]}}"));
        let heartbeat = Heartbeat::new(runtime::now(), options.ping_every, options.pong_within);
        let ended = play(
            &mut stream,
            player,
            &shared.to_game,
            &outbox,
            heartbeat,
            early,
            hello,
        )
        .await;
        let _ = shared.to_game.send(ToGame::Leave(player));
        self.waiting.borrow_mut().remove(&ticket);
        self.seats.borrow_mut().remove(&player);
        log::info!("{peer}: {ended}");
    }
}

/// Sends a tick's field to every hall: this loop's players get their
/// frames at once; another loop's, as soon as it takes the field from its
/// mailbox. One allocation a tick, shared by all.
fn broadcast_to(halls: &[Hall], field: Field) {
    let field = Arc::new(field);
    for hall in halls {
        match hall {
            Hall::Here(server) => {
                server.broadcast(&field);
            }
            Hall::There(mail) => {
                let _ = mail.send(ToHall::Tick(Arc::clone(&field)));
            }
        }
    }
}

/// Has every hall close its players; returns how many there were.
async fn stop_halls(halls: &[Hall]) -> usize {
    let mut closed = 0;
    for hall in halls {
        match hall {
            Hall::Here(server) => closed += server.close_all(),
            Hall::There(mail) => {
                let (tx, rx) = oneshot::channel();
                if mail.send(ToHall::Stop(tx)).is_ok() {
                    closed += rx.await.unwrap_or(0);
                }
            }
        }
    }
    closed
}

// ANCHOR: hall
/// A loop of players (with `--loops`): serves the connections the game's
/// loop hands it, and builds its players' frames from each tick's field,
/// until told to stop; then waits for its connections, as `serve` does,
/// and returns how many it cut off.
async fn hall(shared: Arc<Shared>, index: usize, mut mailbox: mpsc::Receiver<ToHall>) -> usize {
    let server = Server::on_this_loop(shared, index);
    let mut mail = Vec::new();
    while mailbox.recv_many(&mut mail).await > 0 {
        // Only the newest field matters: a loop that fell behind skips to
        // it, and each player's next frame holds every change since its
        // last.
        let newest = mail.iter().rposition(|m| matches!(m, ToHall::Tick(_)));
        for (i, message) in mail.drain(..).enumerate() {
            match message {
                ToHall::Tick(field) if Some(i) == newest => {
                    server.broadcast(&field);
                }
                ToHall::Tick(_) => {}
                ToHall::Connection(stream, peer) => match TcpStream::from_std(stream) {
                    Ok(stream) => server.serve_connection(stream, peer),
                    Err(e) => log::warn!("{peer}: cannot take the connection: {e}"),
                },
                ToHall::Stop(closed) => {
                    closed.send(server.close_all());
                    return server.wait_for_connections().await;
                }
            }
        }
    }
    server.wait_for_connections().await
}
// ANCHOR_END: hall

/// A poisoned lock only means a thread panicked while holding it; the
/// numbers inside are still whole.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Connections the kernel keeps waiting for `accept` before it drops new
/// ones (the client then tries again a second later). The standard
/// library's 128 is too few for a game that thousands of players join at
/// once; the kernel cuts it to `net.core.somaxconn` (4096 on Linux today).
const BACKLOG: i32 = 4096;

/// A listener on `addr` with a backlog of [`BACKLOG`].
pub fn listen(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = socket2::Socket::new(
        socket2::Domain::for_address(addr),
        socket2::Type::STREAM,
        None,
    )?;
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    socket.listen(BACKLOG)?;
    TcpListener::from_std(socket.into())
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
            let bound = listen(any_port).and_then(|l| Ok((l.local_addr()?, l)));
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
    inbox: &mpsc::Sender<ToGame>,
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
                            let _ = inbox.send(ToGame::Command(player, command));
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
                    let _ = inbox.send(ToGame::Leave(player));
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
