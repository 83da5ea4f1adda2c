//! The game: a field, snakes, food, and one tick of the rules. No I/O and
//! no clock: the game loop task calls [`Game::tick`] at a fixed rate, and
//! the tests call it directly.
//!
//! The rules are the classic multiplayer snake's. Every tick each living
//! snake moves one cell. A head on food grows the snake by one (its tail
//! stays this tick) and scores a point. A head that leaves the field, or
//! lands on any snake's body, dies; two heads in one cell both die, and so
//! do two heads that swap cells. A tail that moves away this tick frees its
//! cell: following another snake closely is safe. A dead snake's body
//! turns to food (up to twice the usual amount of food on the field), and
//! its player may respawn.
//!
//! What a player sees of it is painted from [`Game::paint`], [`Game::me`]
//! and [`Game::top`], and sent as `view.rs` says.

use std::collections::{BTreeMap, HashSet, VecDeque};

use crate::view::{self, Grid, Me, Score};

/// A player, for as long as it is connected.
pub type PlayerId = u64;

/// A cell: x from the left, y from the top.
type Cell = (i32, i32);

/// The field and its food.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Cells across.
    pub width: usize,
    /// Cells down.
    pub height: usize,
    /// Food on the field: this many plus one per player.
    pub food: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            width: 40,
            height: 30,
            food: 3,
        }
    }
}

/// A way to go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Towards y = 0.
    Up,
    /// Away from y = 0.
    Down,
    /// Towards x = 0.
    Left,
    /// Away from x = 0.
    Right,
}

impl Direction {
    fn step(self) -> Cell {
        match self {
            Direction::Up => (0, -1),
            Direction::Down => (0, 1),
            Direction::Left => (-1, 0),
            Direction::Right => (1, 0),
        }
    }

    fn opposite(self) -> Direction {
        match self {
            Direction::Up => Direction::Down,
            Direction::Down => Direction::Up,
            Direction::Left => Direction::Right,
            Direction::Right => Direction::Left,
        }
    }
}

/// What a player can ask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// Turn (takes effect at a coming tick).
    Turn(Direction),
    /// A new snake, if this one is dead.
    Respawn,
}

/// A client's text message as a command: `up`, `down`, `left`, `right`
/// or `respawn`.
pub fn parse_command(text: &str) -> Option<Command> {
    Some(match text {
        "up" => Command::Turn(Direction::Up),
        "down" => Command::Turn(Direction::Down),
        "left" => Command::Turn(Direction::Left),
        "right" => Command::Turn(Direction::Right),
        "respawn" => Command::Respawn,
        _ => return None,
    })
}

/// Turns queued at most: two quick key presses (up, then left) both count,
/// on two ticks; a burst of key presses does not pile up.
const MAX_TURNS: usize = 2;

/// A snake's length when it starts.
const START_LENGTH: usize = 3;

/// Why a snake died, for the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Death {
    /// It left the field.
    Wall,
    /// Its head met a body, its own or another's.
    Body,
    /// Its head met another head.
    Head,
}

/// One player.
#[derive(Clone, Debug)]
struct Player {
    name: String,
    color: usize,
    score: u64,
    /// Head first; empty while dead.
    body: VecDeque<Cell>,
    heading: Direction,
    turns: VecDeque<Direction>,
}

impl Player {
    fn alive(&self) -> bool {
        !self.body.is_empty()
    }

    fn player_color(&self) -> u8 {
        self.color as u8 % view::COLORS
    }
}

/// What happened in one tick.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TickEvents {
    /// Who died, and how.
    pub deaths: Vec<(PlayerId, Death)>,
    /// Who ate.
    pub ate: Vec<PlayerId>,
}

/// The whole game, owned by the game loop task.
pub struct Game {
    config: Config,
    tick: u64,
    next_id: PlayerId,
    /// By id, so that the state lists them in a stable order.
    players: BTreeMap<PlayerId, Player>,
    food: HashSet<Cell>,
    /// The cells snakes occupy, built when a spawn or the food needs it
    /// and kept until something moves or leaves: a thousand players who
    /// join in one tick build it once, not a thousand times.
    taken: Option<HashSet<Cell>>,
    rng: Rng,
}

impl Game {
    /// An empty field; `seed` makes the food and the starting places
    /// reproducible.
    pub fn new(config: Config, seed: u64) -> Game {
        let mut game = Game {
            config,
            tick: 0,
            next_id: 1,
            players: BTreeMap::new(),
            food: HashSet::new(),
            taken: None,
            rng: Rng(seed | 1),
        };
        game.top_up_food();
        game
    }

    /// A new player, with a snake on the field. The name is cut to 16
    /// characters, without control characters; an empty one becomes
    /// "player N".
    pub fn join(&mut self, name: &str) -> PlayerId {
        let id = self.next_id;
        self.next_id += 1;
        let clean: String = name.chars().filter(|c| !c.is_control()).collect();
        let clean: String = clean.trim().chars().take(16).collect();
        let name = if clean.is_empty() {
            format!("player {id}")
        } else {
            clean
        };
        let player = Player {
            name,
            color: (id as usize - 1) % 10,
            score: 0,
            body: VecDeque::new(),
            heading: Direction::Right,
            turns: VecDeque::new(),
        };
        self.players.insert(id, player);
        self.spawn(id);
        self.top_up_food();
        id
    }

    /// A player who left: the snake goes with it.
    pub fn leave(&mut self, id: PlayerId) {
        self.players.remove(&id);
        self.taken = None;
    }

    /// Players on the field, dead or alive.
    pub fn len(&self) -> usize {
        self.players.len()
    }

    /// Whether nobody plays.
    pub fn is_empty(&self) -> bool {
        self.players.is_empty()
    }

    /// A player's command, applied at the next tick. A turn back onto the
    /// snake's own neck is ignored, as are turns past [`MAX_TURNS`].
    pub fn command(&mut self, id: PlayerId, command: Command) {
        let Some(player) = self.players.get_mut(&id) else {
            return;
        };
        match command {
            Command::Turn(direction) => {
                let last = player.turns.back().copied().unwrap_or(player.heading);
                if player.turns.len() < MAX_TURNS
                    && direction != last
                    && direction != last.opposite()
                {
                    player.turns.push_back(direction);
                }
            }
            Command::Respawn if !player.alive() => self.spawn(id),
            Command::Respawn => {}
        }
    }

    // ANCHOR: tick
    /// One step of the game: every snake moves, then collisions are judged
    /// on the new positions, then food is eaten and replaced.
    pub fn tick(&mut self) -> TickEvents {
        self.tick += 1;
        self.taken = None;
        let mut events = TickEvents::default();
        // 1. Every living snake's new head; a snake that eats keeps its tail.
        let mut heads: Vec<(PlayerId, Cell)> = Vec::new();
        for (&id, player) in self.players.iter_mut() {
            if !player.alive() {
                continue;
            }
            if let Some(turn) = player.turns.pop_front() {
                player.heading = turn;
            }
            let (x, y) = player.body[0];
            let (dx, dy) = player.heading.step();
            let head = (x + dx, y + dy);
            player.body.push_front(head);
            if self.food.remove(&head) {
                player.score += 1;
                events.ate.push(id);
            } else {
                player.body.pop_back();
            }
            heads.push((id, head));
        }
        // 2. Collisions, against where everything is now.
        let mut bodies: HashSet<Cell> = HashSet::new();
        let mut head_count: BTreeMap<Cell, usize> = BTreeMap::new();
        for player in self.players.values().filter(|p| p.alive()) {
            bodies.extend(player.body.iter().skip(1));
            *head_count.entry(player.body[0]).or_default() += 1;
        }
        for &(id, head) in &heads {
            let death = if !self.in_field(head) {
                Some(Death::Wall)
            } else if bodies.contains(&head) {
                Some(Death::Body)
            } else if head_count[&head] > 1 {
                Some(Death::Head)
            } else {
                None
            };
            if let Some(death) = death {
                events.deaths.push((id, death));
            }
        }
        // 3. The dead leave food where they lay (on the field only), up to
        //    twice the usual amount: food must not pile up for ever, or
        //    every tick's state would keep growing.
        let most_food = 2 * (self.config.food + self.players.len());
        for &(id, _) in &events.deaths {
            let body: Vec<Cell> = match self.players.get_mut(&id) {
                Some(player) => {
                    player.turns.clear();
                    player.body.drain(..).skip(1).collect()
                }
                None => continue,
            };
            let room = most_food.saturating_sub(self.food.len());
            let on_field: Vec<Cell> = body
                .into_iter()
                .filter(|&c| self.in_field(c))
                .take(room)
                .collect();
            self.food.extend(on_field);
        }
        self.top_up_food();
        events
    }
    // ANCHOR_END: tick

    /// The tick the game is at.
    pub fn tick_number(&self) -> u64 {
        self.tick
    }

    /// The field as every view is cut from it: food, then the snakes on
    /// it (a head drawn over any body part that shares its cell).
    pub fn paint(&self, grid: &mut Grid) {
        let (w, h) = (self.config.width, self.config.height);
        if (grid.width, grid.height) != (w, h) {
            *grid = Grid::new(w, h);
        }
        grid.cells.fill(view::EMPTY);
        for &cell in &self.food {
            grid.set(cell, view::FOOD);
        }
        for player in self.players.values() {
            for &cell in player.body.iter().skip(1) {
                grid.set(cell, view::BODY + player.player_color());
            }
        }
        for player in self.players.values() {
            if let Some(&head) = player.body.front() {
                grid.set(head, view::HEAD + player.player_color());
            }
        }
    }

    /// What a player's frame says about it; `None` for a player not in
    /// the game.
    pub fn me(&self, id: PlayerId) -> Option<Me> {
        let player = self.players.get(&id)?;
        Some(Me {
            head: player.body.front().copied(),
            score: player.score.min(u64::from(u32::MAX)) as u32,
        })
    }

    /// What every player's frame says about it.
    pub fn everyone(&self) -> impl Iterator<Item = (PlayerId, Me)> + '_ {
        self.players
            .keys()
            .filter_map(|&id| Some((id, self.me(id)?)))
    }

    /// The best `n` players, best first (a tie goes to who came first).
    pub fn top(&self, n: usize) -> Vec<Score> {
        let mut best: Vec<(&PlayerId, &Player)> = self.players.iter().collect();
        best.sort_by_key(|(id, p)| (std::cmp::Reverse(p.score), **id));
        best.into_iter()
            .take(n)
            .map(|(&id, p)| Score {
                id: id as u32,
                color: p.player_color(),
                alive: p.alive(),
                score: p.score.min(u64::from(u32::MAX)) as u32,
                name: p.name.clone(),
            })
            .collect()
    }

    fn in_field(&self, (x, y): Cell) -> bool {
        x >= 0 && y >= 0 && (x as usize) < self.config.width && (y as usize) < self.config.height
    }

    /// Every cell a living snake covers: the kept set, or a new one.
    /// Give it back with `self.taken = Some(..)` while it is still true.
    fn occupied(&mut self) -> HashSet<Cell> {
        self.taken.take().unwrap_or_else(|| {
            self.players
                .values()
                .flat_map(|p| p.body.iter().copied())
                .collect()
        })
    }

    /// Puts `id`'s new snake on a free stretch of the field, heading away
    /// from the nearest wall, so that it does not die on its first ticks.
    /// On a field with no room it stays dead (its player can try again).
    fn spawn(&mut self, id: PlayerId) {
        let mut taken = self.occupied();
        let (w, h) = (self.config.width as i32, self.config.height as i32);
        for _ in 0..200 {
            let x = self.rng.below(w as u64) as i32;
            let y = self.rng.below(h as u64) as i32;
            // Away from the nearest wall: the longest way across.
            let heading = [
                (x, Direction::Right),
                (w - 1 - x, Direction::Left),
                (y, Direction::Down),
                (h - 1 - y, Direction::Up),
            ]
            .into_iter()
            .min_by_key(|&(room, _)| room)
            .map_or(Direction::Right, |(_, d)| d);
            let (dx, dy) = heading.step();
            // Head first, the tail behind it, and room ahead to react.
            let body: VecDeque<Cell> = (0..START_LENGTH as i32)
                .map(|i| (x - dx * i, y - dy * i))
                .collect();
            let ahead = (1..=START_LENGTH as i32).map(|i| (x + dx * i, y + dy * i));
            let mut cells = body.iter().copied().chain(ahead);
            if cells.all(|c| self.in_field(c) && !taken.contains(&c) && !self.food.contains(&c)) {
                if let Some(player) = self.players.get_mut(&id) {
                    // A snake spawns dead or new: it had no body to remove.
                    taken.extend(body.iter().copied());
                    player.body = body;
                    player.heading = heading;
                    player.turns.clear();
                }
                break;
            }
        }
        self.taken = Some(taken);
    }

    /// Food up to `food` plus one per player, on free cells. A field too
    /// full to find one in a bounded number of tries has less food.
    fn top_up_food(&mut self) {
        let want = self.config.food + self.players.len();
        let taken = self.occupied();
        let (w, h) = (self.config.width as u64, self.config.height as u64);
        let mut tries = 0;
        while self.food.len() < want && tries < 100 * want {
            tries += 1;
            let cell = (self.rng.below(w) as i32, self.rng.below(h) as i32);
            if !taken.contains(&cell) {
                self.food.insert(cell);
            }
        }
        self.taken = Some(taken);
    }
}

/// xorshift64*: small, fast and reproducible, which is all a game needs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number below `n` (which is not 0).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A game with snakes placed by hand: `snakes` are bodies, head first,
    /// with their headings; no food unless given.
    fn game(snakes: &[(&[Cell], Direction)], food: &[Cell]) -> (Game, Vec<PlayerId>) {
        let mut g = Game::new(
            Config {
                width: 10,
                height: 10,
                food: 0,
            },
            7,
        );
        g.food.clear();
        let mut ids = Vec::new();
        for (i, (body, heading)) in snakes.iter().enumerate() {
            let id = i as PlayerId + 1;
            g.players.insert(
                id,
                Player {
                    name: format!("p{id}"),
                    color: i,
                    score: 0,
                    body: body.iter().copied().collect(),
                    heading: *heading,
                    turns: VecDeque::new(),
                },
            );
            ids.push(id);
        }
        g.next_id = ids.len() as PlayerId + 1;
        g.config.food = 0;
        g.food.extend(food);
        (g, ids)
    }

    fn body(g: &Game, id: PlayerId) -> Vec<Cell> {
        g.players[&id].body.iter().copied().collect()
    }

    #[test]
    fn a_snake_moves_eats_and_grows() {
        // food: 0 + 1 per player keeps one piece on the field.
        let (mut g, ids) = game(&[(&[(2, 2), (1, 2), (0, 2)], Direction::Right)], &[(3, 2)]);
        let events = g.tick();
        assert_eq!(events.ate, vec![ids[0]]);
        assert_eq!(body(&g, ids[0]), vec![(3, 2), (2, 2), (1, 2), (0, 2)]);
        assert_eq!(g.players[&ids[0]].score, 1);
        assert_eq!(g.food.len(), 1, "the food was replaced");
        assert!(!g.food.contains(&(3, 2)));
    }

    #[test]
    fn walls_bodies_and_heads_kill() {
        let (mut g, ids) = game(&[(&[(9, 0), (8, 0), (7, 0)], Direction::Right)], &[]);
        assert_eq!(g.tick().deaths, vec![(ids[0], Death::Wall)]);
        assert!(!g.players[&ids[0]].alive());

        // Into its own body: a loop of five.
        let (mut g, ids) = game(
            &[(&[(2, 2), (2, 3), (3, 3), (3, 2), (3, 1)], Direction::Right)],
            &[],
        );
        assert_eq!(g.tick().deaths, vec![(ids[0], Death::Body)]);

        // Into the middle of another snake.
        let (mut g, ids) = game(
            &[
                (&[(1, 5), (0, 5)], Direction::Right),
                (&[(2, 6), (2, 5), (2, 4), (2, 3)], Direction::Down),
            ],
            &[],
        );
        assert_eq!(g.tick().deaths, vec![(ids[0], Death::Body)]);

        // Two heads into one cell, and two heads that swap: all die.
        let (mut g, _) = game(
            &[
                (&[(1, 1), (0, 1)], Direction::Right),
                (&[(3, 1), (4, 1)], Direction::Left),
            ],
            &[],
        );
        assert_eq!(g.tick().deaths.len(), 2);
        let (mut g, _) = game(
            &[
                (&[(1, 1), (0, 1)], Direction::Right),
                (&[(2, 1), (3, 1)], Direction::Left),
            ],
            &[],
        );
        assert_eq!(g.tick().deaths.len(), 2, "a swap is a collision");
    }

    #[test]
    fn a_tail_that_moves_away_frees_its_cell() {
        // The first snake's head goes where the second's tail is leaving.
        let (mut g, _) = game(
            &[
                (&[(1, 3), (0, 3)], Direction::Right),
                (&[(2, 2), (2, 3)], Direction::Up),
            ],
            &[],
        );
        assert!(g.tick().deaths.is_empty());
    }

    #[test]
    fn the_dead_turn_to_food_and_respawn() {
        let (mut g, ids) = game(&[(&[(9, 5), (8, 5), (7, 5)], Direction::Right)], &[]);
        g.tick();
        assert!(g.food.contains(&(8, 5)) && g.food.contains(&(9, 5)));
        g.command(ids[0], Command::Turn(Direction::Up));
        g.command(ids[0], Command::Respawn);
        assert_eq!(g.players[&ids[0]].body.len(), START_LENGTH);
        assert!(g.players[&ids[0]].turns.is_empty());
        g.leave(ids[0]);
        assert!(g.is_empty());
    }

    #[test]
    fn food_from_the_dead_is_capped() {
        // One player: at most 2 x (0 + 1) pieces of food.
        let long: Vec<Cell> = (0..8).map(|x| (9 - x, 5)).collect();
        let (mut g, _) = game(&[(&long, Direction::Right)], &[]);
        g.tick();
        assert_eq!(g.food.len(), 2);
    }

    #[test]
    fn turns_queue_up_to_two_and_never_reverse() {
        let (mut g, ids) = game(&[(&[(5, 5), (4, 5), (3, 5)], Direction::Right)], &[]);
        g.command(ids[0], Command::Turn(Direction::Left)); // back onto its neck
        g.command(ids[0], Command::Turn(Direction::Up));
        g.command(ids[0], Command::Turn(Direction::Left));
        g.command(ids[0], Command::Turn(Direction::Down)); // a third: ignored
        g.tick();
        assert_eq!(body(&g, ids[0])[0], (5, 4));
        g.tick();
        assert_eq!(body(&g, ids[0])[0], (4, 4));
        g.tick();
        assert_eq!(body(&g, ids[0])[0], (3, 4));
    }

    #[test]
    fn names_commands_and_the_state() {
        let mut g = Game::new(Config::default(), 3);
        let a = g.join("  al\u{7}ice with a very long name  ");
        let b = g.join("\n");
        assert_eq!(g.players[&a].name, "alice with a ver");
        assert_eq!(g.players[&b].name, format!("player {b}"));
        assert_eq!(parse_command("up"), Some(Command::Turn(Direction::Up)));
        assert_eq!(parse_command("respawn"), Some(Command::Respawn));
        assert_eq!(parse_command("Up"), None);
        let mut grid = Grid::default();
        g.paint(&mut grid);
        assert_eq!((grid.width, grid.height), (40, 30));
        let count = |v: u8| grid.cells.iter().filter(|&&c| c == v).count();
        assert_eq!(count(view::FOOD), 3 + 2);
        let me = g.me(a).unwrap();
        let head = me.head.unwrap();
        assert_eq!(
            grid.cells[head.1 as usize * 40 + head.0 as usize],
            view::HEAD
        );
        assert_eq!(
            count(view::BODY) + count(view::BODY + 1),
            2 * (START_LENGTH - 1)
        );
        let top = g.top(10);
        assert_eq!(top.len(), 2);
        assert_eq!((top[0].id as u64, top[0].alive, top[0].score), (a, true, 0));
        assert_eq!(top[1].name, format!("player {b}"));
        assert_eq!(g.me(99), None);
    }

    #[test]
    fn a_thousand_players_keep_the_rules() {
        let mut g = Game::new(
            Config {
                width: 400,
                height: 300,
                food: 10,
            },
            11,
        );
        let ids: Vec<PlayerId> = (0..1000).map(|i| g.join(&format!("bot {i}"))).collect();
        let mut rng = Rng(5);
        let turns = [
            Direction::Up,
            Direction::Down,
            Direction::Left,
            Direction::Right,
        ];
        for _ in 0..20 {
            for &id in &ids {
                let command = match rng.below(10) {
                    0 => Command::Respawn,
                    n => Command::Turn(turns[n as usize % 4]),
                };
                g.command(id, command);
            }
            // The kept set of taken cells is exactly the snakes' cells.
            let fresh: HashSet<Cell> = g
                .players
                .values()
                .flat_map(|p| p.body.iter().copied())
                .collect();
            assert_eq!(g.taken.as_ref(), Some(&fresh));
            g.tick();
            let mut seen = HashSet::new();
            for player in g.players.values() {
                for &cell in &player.body {
                    assert!(g.in_field(cell), "{cell:?}");
                    assert!(seen.insert(cell), "two snakes share {cell:?}");
                }
            }
        }
        assert_eq!(g.len(), 1000);
    }
}
