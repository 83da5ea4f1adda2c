//! What a player sees, and how it travels: each player gets the cells
//! around its snake (its *view*) and the scoreboard, as the changes since
//! its last frame, in a small binary message.
//!
//! Sending every player the whole field every tick cost 115 KB a player a
//! tick at 1,000 players (over 9 Mbit/s each), and encoding and writing it
//! was where the server's time went. A real-time game sends each player
//! what it can see, and only what changed: the Quake 3 network model's
//! delta snapshots, agar.io's viewport.
//!
//! The server keeps, for each player, the cells it last sent ([`Viewer`]);
//! the client keeps the same cells ([`Screen`]). A frame is either *full*
//! (every cell of the view: on join, and for a player that fell behind)
//! or a *delta* (the cells that differ from what the client has, after the
//! view moved). The connection is TCP, so every frame arrives, in order: a
//! delta against the last frame sent is a delta against what the client
//! has, with no acknowledgement needed. A player too slow to take its
//! frames gets its queued delta replaced by a full frame instead of a
//! growing queue.
//!
//! The wire format, big-endian, one WebSocket binary message a tick:
//!
//! ```text
//! u8   kind        1 = full, 2 = delta
//! u32  tick
//! u16  field width, u16 field height
//! u16  view x, u16 view y        the view's top-left cell on the field
//! u8   view width, u8 view height
//! u8   flags       bit 0: my snake is alive; bit 1: a scoreboard follows
//! u32  my score
//! u16  my head x, u16 my head y  (0xFFFF, 0xFFFF while dead)
//! u32  players in the game
//! [scoreboard] u8 n, then n times: u32 id, u8 color, u8 alive, u32 score,
//!              u8 name length, the name (UTF-8)
//! full:  view width x view height cells, row by row
//! delta: u16 n, then n times: u8 x, u8 y (in the view), u8 cell
//! ```
//!
//! A cell is one byte: 0 empty, 1 food, 2 + color a snake's body, 12 +
//! color a snake's head (colors 0 to 9). When the view moves, the cells
//! it keeps keep their values and the cells it gains start empty, on both
//! sides; the delta then names what is not empty.
//!
//! Binary rather than JSON: a delta is a few dozen cells, and three bytes
//! each keeps a frame small and cheap to build for ten thousand players;
//! the browser reads it with a `DataView` in a few lines.

use std::fmt;

/// An empty cell.
pub const EMPTY: u8 = 0;
/// A cell with food.
pub const FOOD: u8 = 1;
/// A snake's body of color `c` is `BODY + c`.
pub const BODY: u8 = 2;
/// A snake's head of color `c` is `HEAD + c`.
pub const HEAD: u8 = 12;
/// Snake colors: 0 to `COLORS - 1`.
pub const COLORS: u8 = 10;

/// A full frame.
pub const FULL: u8 = 1;
/// A delta frame.
pub const DELTA: u8 = 2;

const ALIVE_FLAG: u8 = 1;
const BOARD_FLAG: u8 = 2;
const NO_HEAD: u16 = 0xFFFF;
const HEADER: usize = 28;

/// Players on the scoreboard.
pub const BOARD_SIZE: usize = 10;

/// The field as one byte a cell, row by row: what the game paints once a
/// tick and every view is cut from.
#[derive(Clone, Debug, Default)]
pub struct Grid {
    /// Cells across.
    pub width: usize,
    /// Cells down.
    pub height: usize,
    /// `width * height` cells.
    pub cells: Vec<u8>,
}

impl Grid {
    /// An empty field.
    pub fn new(width: usize, height: usize) -> Grid {
        Grid {
            width,
            height,
            cells: vec![EMPTY; width * height],
        }
    }

    /// Sets the cell at `(x, y)`, if it is on the field.
    pub fn set(&mut self, (x, y): (i32, i32), cell: u8) {
        if x >= 0 && y >= 0 && (x as usize) < self.width && (y as usize) < self.height {
            self.cells[y as usize * self.width + x as usize] = cell;
        }
    }

    fn row(&self, x: usize, y: usize, len: usize) -> &[u8] {
        let start = y * self.width + x;
        &self.cells[start..start + len]
    }
}

/// One line of the scoreboard.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Score {
    /// The player.
    pub id: u32,
    /// Its color, 0 to 9.
    pub color: u8,
    /// Whether its snake is alive.
    pub alive: bool,
    /// Its points.
    pub score: u32,
    /// Its name.
    pub name: String,
}

/// The scoreboard, encoded once a tick for every frame that carries it.
#[derive(Clone, Debug, Default)]
pub struct Board {
    bytes: Vec<u8>,
    /// Changes whenever the encoded board does: a player is sent the
    /// board only when its version differs from the one it has.
    version: u64,
}

impl Board {
    /// This tick's board: the top of the table, best first. The version
    /// moves on only if the board changed since the last tick.
    pub fn update(&mut self, top: &[Score]) {
        let mut bytes = Vec::with_capacity(1 + top.len() * 32);
        bytes.push(top.len().min(BOARD_SIZE) as u8);
        for score in top.iter().take(BOARD_SIZE) {
            bytes.extend_from_slice(&score.id.to_be_bytes());
            bytes.push(score.color);
            bytes.push(u8::from(score.alive));
            bytes.extend_from_slice(&score.score.to_be_bytes());
            let name = cut(&score.name, 64);
            bytes.push(name.len() as u8);
            bytes.extend_from_slice(name.as_bytes());
        }
        if bytes != self.bytes {
            self.bytes = bytes;
            self.version += 1;
        }
    }
}

/// `name` cut to at most `max` bytes, at a character boundary.
fn cut(name: &str, max: usize) -> &str {
    let mut end = name.len().min(max);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    &name[..end]
}

/// What a frame says about its player besides the cells.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Me {
    /// Its snake's head, if alive.
    pub head: Option<(i32, i32)>,
    /// Its points.
    pub score: u32,
}

// ANCHOR: viewer
/// The server's side of one player's view: where it is, and the cells the
/// client has, as of the last frame sent.
#[derive(Clone, Debug)]
pub struct Viewer {
    x: usize,
    y: usize,
    width: usize,
    height: usize,
    /// What the client holds; empty until its first (full) frame.
    cells: Vec<u8>,
    board_version: u64,
}

impl Viewer {
    /// A view of `width` by `height` cells (at most 255 each, and cut to
    /// the field), that has sent nothing yet.
    pub fn new(width: usize, height: usize) -> Viewer {
        Viewer {
            x: 0,
            y: 0,
            width: width.min(255),
            height: height.min(255),
            cells: Vec::new(),
            board_version: 0,
        }
    }

    /// Forgets what the client has: the next frame is full. For a player
    /// whose last frame never left (it fell behind).
    pub fn reset(&mut self) {
        self.cells.clear();
    }

    /// Appends this tick's frame for this player (a WebSocket payload) to
    /// `out`: full if the client has nothing yet, else the changes. Moves
    /// the view to follow the player's head first.
    pub fn frame(
        &mut self,
        grid: &Grid,
        tick: u64,
        me: Me,
        players: usize,
        board: &Board,
        out: &mut Vec<u8>,
    ) {
        let (width, height) = (self.width.min(grid.width), self.height.min(grid.height));
        let full = self.cells.is_empty() || (width, height) != (self.width, self.height);
        let (old_x, old_y) = (self.x, self.y);
        self.follow(me.head, grid, width, height, full);
        let send_board = full || self.board_version != board.version;
        out.reserve(HEADER + if full { width * height } else { 64 });
        out.push(if full { FULL } else { DELTA });
        out.extend_from_slice(&(tick as u32).to_be_bytes());
        for n in [grid.width, grid.height, self.x, self.y] {
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        out.extend_from_slice(&[width as u8, height as u8]);
        let flags = if me.head.is_some() { ALIVE_FLAG } else { 0 }
            | if send_board { BOARD_FLAG } else { 0 };
        out.push(flags);
        out.extend_from_slice(&me.score.to_be_bytes());
        let (hx, hy) = me
            .head
            .map_or((NO_HEAD, NO_HEAD), |(x, y)| (x as u16, y as u16));
        out.extend_from_slice(&hx.to_be_bytes());
        out.extend_from_slice(&hy.to_be_bytes());
        out.extend_from_slice(&(players as u32).to_be_bytes());
        if send_board {
            out.extend_from_slice(&board.bytes);
            self.board_version = board.version;
        }
        if full {
            (self.width, self.height) = (width, height);
            self.cells.clear();
            for row in 0..height {
                self.cells
                    .extend_from_slice(grid.row(self.x, self.y + row, width));
            }
            out.extend_from_slice(&self.cells);
        } else {
            shift(
                &mut self.cells,
                width,
                height,
                self.x as isize - old_x as isize,
                self.y as isize - old_y as isize,
            );
            self.changes(grid, out);
        }
    }

    /// Appends the cells that differ from what the client has (which now
    /// learns them): a row at a time, and only the rows that differ.
    fn changes(&mut self, grid: &Grid, out: &mut Vec<u8>) {
        let count_at = out.len();
        out.extend_from_slice(&[0, 0]);
        let mut count: u16 = 0;
        for row in 0..self.height {
            let now = grid.row(self.x, self.y + row, self.width);
            let had = &mut self.cells[row * self.width..(row + 1) * self.width];
            if now == had {
                continue;
            }
            for (col, (had, &now)) in had.iter_mut().zip(now).enumerate() {
                if *had != now {
                    *had = now;
                    out.extend_from_slice(&[col as u8, row as u8, now]);
                    count += 1;
                }
            }
        }
        out[count_at..count_at + 2].copy_from_slice(&count.to_be_bytes());
    }
    // ANCHOR_END: viewer

    /// Moves the view so that the head stays well inside it: it moves only
    /// when the head comes within a quarter of the view of its edge, and
    /// then centers on the head (a camera's dead zone: most ticks the view
    /// stays put, and a delta is only what moved in it). A dead snake's
    /// view stays where it was; a new view starts centered.
    fn follow(
        &mut self,
        head: Option<(i32, i32)>,
        grid: &Grid,
        width: usize,
        height: usize,
        full: bool,
    ) {
        let Some((hx, hy)) = head else {
            self.x = self.x.min(grid.width - width);
            self.y = self.y.min(grid.height - height);
            return;
        };
        let axis = |origin: usize, head: i32, size: usize, field: usize| -> usize {
            let head = head.clamp(0, field as i32 - 1) as usize;
            let margin = size / 4;
            let inside = head >= origin + margin && head + margin < origin + size;
            let origin = if full || !inside {
                head.saturating_sub(size / 2)
            } else {
                origin
            };
            origin.min(field - size)
        };
        self.x = axis(self.x, hx, width, grid.width);
        self.y = axis(self.y, hy, height, grid.height);
    }
}

/// Moves the view's cells by `(dx, dy)`: a cell the view keeps keeps its
/// value, a cell it gains is empty. The client does the same, so both
/// sides agree before the delta.
pub fn shift(cells: &mut [u8], width: usize, height: usize, dx: isize, dy: isize) {
    if dx == 0 && dy == 0 {
        return;
    }
    let old = cells.to_vec();
    for row in 0..height as isize {
        for col in 0..width as isize {
            let (from_col, from_row) = (col + dx, row + dy);
            let inside =
                (0..width as isize).contains(&from_col) && (0..height as isize).contains(&from_row);
            cells[(row * width as isize + col) as usize] = if inside {
                old[(from_row * width as isize + from_col) as usize]
            } else {
                EMPTY
            };
        }
    }
}

/// A frame that does not follow the format, or a delta with no full
/// frame before it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameError(pub &'static str);

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad frame: {}", self.0)
    }
}

impl std::error::Error for FrameError {}

/// The client's side: what it has been told, frame after frame. The
/// browser does the same in JavaScript; the tests and the bots use this.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Screen {
    /// The tick of the last frame.
    pub tick: u64,
    /// The field's size.
    pub field: (usize, usize),
    /// The view's top-left cell on the field.
    pub origin: (usize, usize),
    /// The view's size.
    pub size: (usize, usize),
    /// The view's cells, row by row.
    pub cells: Vec<u8>,
    /// This player's head, if its snake is alive.
    pub head: Option<(i32, i32)>,
    /// This player's points.
    pub score: u32,
    /// Players in the game.
    pub players: u32,
    /// The scoreboard, best first.
    pub board: Vec<Score>,
    /// Whether any frame was applied yet.
    pub started: bool,
}

impl Screen {
    /// Applies one frame; returns whether it was full. A frame that does
    /// not follow the format changes nothing.
    pub fn apply(&mut self, frame: &[u8]) -> Result<bool, FrameError> {
        let mut next = self.clone();
        let full = next.apply_to(frame)?;
        *self = next;
        Ok(full)
    }

    fn apply_to(&mut self, frame: &[u8]) -> Result<bool, FrameError> {
        let mut r = Reader(frame);
        let kind = r.u8()?;
        if kind != FULL && kind != DELTA {
            return Err(FrameError("unknown kind"));
        }
        if kind == DELTA && !self.started {
            return Err(FrameError("a delta before any full frame"));
        }
        self.tick = u64::from(r.u32()?);
        self.field = (usize::from(r.u16()?), usize::from(r.u16()?));
        let origin = (usize::from(r.u16()?), usize::from(r.u16()?));
        let size = (usize::from(r.u8()?), usize::from(r.u8()?));
        let flags = r.u8()?;
        self.score = r.u32()?;
        let (hx, hy) = (r.u16()?, r.u16()?);
        self.head = (flags & ALIVE_FLAG != 0).then_some((i32::from(hx), i32::from(hy)));
        self.players = r.u32()?;
        if flags & BOARD_FLAG != 0 {
            let n = r.u8()?;
            self.board.clear();
            for _ in 0..n {
                let (id, color, alive, score) = (r.u32()?, r.u8()?, r.u8()? != 0, r.u32()?);
                let len = usize::from(r.u8()?);
                let name = String::from_utf8_lossy(r.take(len)?).into_owned();
                self.board.push(Score {
                    id,
                    color,
                    alive,
                    score,
                    name,
                });
            }
        }
        if kind == FULL {
            self.cells = r.take(size.0 * size.1)?.to_vec();
        } else {
            if size != self.size {
                return Err(FrameError("a delta that resizes the view"));
            }
            let dx = origin.0 as isize - self.origin.0 as isize;
            let dy = origin.1 as isize - self.origin.1 as isize;
            shift(&mut self.cells, size.0, size.1, dx, dy);
            for _ in 0..r.u16()? {
                let (x, y, cell) = (usize::from(r.u8()?), usize::from(r.u8()?), r.u8()?);
                if x >= size.0 || y >= size.1 {
                    return Err(FrameError("a change outside the view"));
                }
                self.cells[y * size.0 + x] = cell;
            }
        }
        if !r.0.is_empty() {
            return Err(FrameError("bytes after the cells"));
        }
        (self.origin, self.size, self.started) = (origin, size, true);
        Ok(kind == FULL)
    }

    /// The cell at `(x, y)` of the field, if the view holds it.
    pub fn cell(&self, (x, y): (i32, i32)) -> Option<u8> {
        let col = usize::try_from(x).ok()?.checked_sub(self.origin.0)?;
        let row = usize::try_from(y).ok()?.checked_sub(self.origin.1)?;
        (col < self.size.0 && row < self.size.1).then(|| self.cells[row * self.size.0 + col])
    }
}

/// The tick of a frame, read from its header alone: a bot takes every
/// frame, and decoding them all would measure the bots, not the server.
pub fn tick_of(frame: &[u8]) -> Option<u64> {
    match frame {
        [FULL | DELTA, a, b, c, d, ..] => Some(u64::from(u32::from_be_bytes([*a, *b, *c, *d]))),
        _ => None,
    }
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], FrameError> {
        if self.0.len() < n {
            return Err(FrameError("cut short"));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8, FrameError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, FrameError> {
        Ok(u16::from_be_bytes([self.u8()?, self.u8()?]))
    }
    fn u32(&mut self) -> Result<u32, FrameError> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `viewer`'s frame, on its own.
    fn frame_of(
        viewer: &mut Viewer,
        g: &Grid,
        tick: u64,
        me: Me,
        players: usize,
        b: &Board,
    ) -> Vec<u8> {
        let mut out = Vec::new();
        viewer.frame(g, tick, me, players, b, &mut out);
        out
    }

    /// A field with a few things on it, changed by `step`.
    fn grid(step: i32) -> Grid {
        let mut g = Grid::new(100, 80);
        g.set((10 + step, 10), HEAD + 3);
        g.set((9 + step, 10), BODY + 3);
        g.set((50, 40), FOOD);
        g.set((60 - step, 45), HEAD + 1);
        g
    }

    fn board(score: u32) -> Board {
        let mut b = Board::default();
        b.update(&[Score {
            id: 7,
            color: 3,
            alive: true,
            score,
            name: "ünïcode name".into(),
        }]);
        b
    }

    #[test]
    fn a_delta_brings_the_screen_to_the_view_the_full_frame_would_show() {
        let mut viewer = Viewer::new(40, 30);
        let mut screen = Screen::default();
        let mut b = board(0);
        // The head walks right, across the view's dead zone and beyond,
        // so the view moves and deltas must shift.
        for step in 0..60 {
            let g = grid(step);
            b.update(&[Score {
                id: 7,
                color: 3,
                alive: true,
                score: step as u32 / 10,
                name: "x".into(),
            }]);
            let me = Me {
                head: Some((10 + step, 10)),
                score: 1,
            };
            let frame = frame_of(&mut viewer, &g, step as u64, me, 2, &b);
            assert_eq!(screen.apply(&frame), Ok(step == 0), "step {step}");
            // The screen holds exactly the field's cells under the view.
            let (x0, y0) = screen.origin;
            let under: Vec<u8> = (0..screen.size.1)
                .flat_map(|row| g.row(x0, y0 + row, screen.size.0).to_vec())
                .collect();
            assert!(
                screen.cells == under,
                "step {step}: the screen differs from the field"
            );
            assert!(
                x0 + 10 <= (10 + step) as usize,
                "step {step}: the view follows the head"
            );
            assert_eq!(
                screen.board,
                vec![Score {
                    id: 7,
                    color: 3,
                    alive: true,
                    score: step as u32 / 10,
                    name: "x".into()
                }]
            );
            assert_eq!(screen.cell((10 + step, 10)), Some(HEAD + 3));
            if step > 0 {
                assert!(frame.len() < 60, "step {step}: {} bytes", frame.len());
            }
        }
    }

    #[test]
    fn the_view_stays_on_the_field_and_the_board_comes_when_it_changed() {
        let mut viewer = Viewer::new(40, 30);
        let g = grid(0);
        let b = board(5);
        let mut screen = Screen::default();
        screen
            .apply(&frame_of(
                &mut viewer,
                &g,
                1,
                Me {
                    head: Some((0, 79)),
                    score: 5,
                },
                1,
                &b,
            ))
            .unwrap();
        assert_eq!((screen.origin, screen.size), ((0, 50), (40, 30)));
        assert_eq!(screen.board[0].name, "ünïcode name");
        assert_eq!(screen.head, Some((0, 79)));
        let delta = frame_of(
            &mut viewer,
            &g,
            2,
            Me {
                head: None,
                score: 5,
            },
            1,
            &b,
        );
        screen.apply(&delta).unwrap();
        assert_eq!((screen.head, screen.board.len()), (None, 1));
        assert_eq!(
            delta[17] & BOARD_FLAG,
            0,
            "an unchanged board is not sent again"
        );
        // A field smaller than the view is seen whole.
        let mut small = Viewer::new(40, 30);
        let mut s = Screen::default();
        s.apply(&frame_of(
            &mut small,
            &Grid::new(20, 10),
            1,
            Me::default(),
            0,
            &b,
        ))
        .unwrap();
        assert_eq!((s.origin, s.size, s.cells.len()), ((0, 0), (20, 10), 200));
    }

    #[test]
    fn a_bad_frame_is_an_error_not_a_panic() {
        let mut viewer = Viewer::new(40, 30);
        let full = frame_of(&mut viewer, &grid(0), 1, Me::default(), 1, &board(0));
        let delta = frame_of(&mut viewer, &grid(1), 2, Me::default(), 1, &board(0));
        assert_eq!(
            Screen::default().apply(&delta),
            Err(FrameError("a delta before any full frame"))
        );
        for cut in 0..full.len() {
            assert!(
                Screen::default().apply(&full[..cut]).is_err(),
                "cut at {cut}"
            );
        }
        let mut s = Screen::default();
        s.apply(&full).unwrap();
        let mut wild = delta.clone();
        let n = wild.len();
        wild[n - 3] = 200;
        assert_eq!(
            s.clone().apply(&wild),
            Err(FrameError("a change outside the view"))
        );
        assert_eq!(tick_of(&delta), Some(2));
        assert_eq!(tick_of(b"{\"you\":1}"), None);
    }
}
