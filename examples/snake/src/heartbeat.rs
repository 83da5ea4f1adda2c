//! Whether a player's client still reads: a ping now and then, and a pong
//! expected within a deadline.
//!
//! The game loop notices a client that stopped reading only once the
//! kernel's send buffer is full and frames wait in its outbox. Frames are
//! small deltas, so that takes hundreds of ticks: 30 to 45 seconds in which
//! a client that never reads holds a place in the game. A ping asks the
//! client to answer (a browser does so at once, by itself); a client that
//! has not answered within the deadline has not read the ping, and leaves
//! in seconds.
//!
//! This is only the bookkeeping, on instants it is handed, so that a test
//! can drive it through an hour in a microsecond. The player's task
//! (`server.rs`) sleeps until [`Heartbeat::next_at`] and asks
//! [`Heartbeat::due`] what to do then.

use std::time::{Duration, Instant};

/// One player's pings and the pongs it owes.
#[derive(Debug)]
pub struct Heartbeat {
    /// Time from a pong (or the start) to the next ping.
    every: Duration,
    /// Time a client has to answer a ping.
    within: Duration,
    /// When the next ping goes out, while none is owed.
    next_ping: Instant,
    /// The ping owed, by its payload, and when its answer is late.
    owed: Option<(u64, Instant)>,
    /// Pings sent so far: each one's payload, so that a late pong for an
    /// old ping does not count as the answer to a new one.
    sent: u64,
}

/// What [`Heartbeat::due`] asks of the player's task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Due {
    /// Send a ping with this payload.
    Ping(Vec<u8>),
    /// The client has not answered the last ping in time: drop it.
    Silent,
}

impl Heartbeat {
    /// A heartbeat that starts at `now`: its first ping goes out `every`
    /// later, and each must be answered `within`.
    pub fn new(now: Instant, every: Duration, within: Duration) -> Heartbeat {
        Heartbeat {
            every,
            within,
            next_ping: now + every,
            owed: None,
            sent: 0,
        }
    }

    /// When [`due`](Heartbeat::due) has something to say: the next ping,
    /// or the deadline of the one owed.
    pub fn next_at(&self) -> Instant {
        match self.owed {
            Some((_, late)) => late,
            None => self.next_ping,
        }
    }

    /// What to do at `now`: nothing before [`next_at`](Heartbeat::next_at).
    pub fn due(&mut self, now: Instant) -> Option<Due> {
        match self.owed {
            Some((_, late)) if now >= late => Some(Due::Silent),
            Some(_) => None,
            None if now >= self.next_ping => {
                self.sent += 1;
                self.owed = Some((self.sent, now + self.within));
                Some(Due::Ping(self.sent.to_be_bytes().to_vec()))
            }
            None => None,
        }
    }

    /// A pong came at `now` with `payload`. The answer to the ping owed
    /// settles it; any other pong (unasked, or for an older ping) is
    /// allowed by RFC 6455 and changes nothing.
    pub fn pong(&mut self, payload: &[u8], now: Instant) {
        if let Some((owed, _)) = self.owed
            && payload == owed.to_be_bytes()
        {
            self.owed = None;
            self.next_ping = now + self.every;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EVERY: Duration = Duration::from_secs(5);
    const WITHIN: Duration = Duration::from_secs(3);

    #[test]
    fn a_client_that_answers_is_pinged_again_and_never_dropped() {
        let t0 = Instant::now();
        let mut beat = Heartbeat::new(t0, EVERY, WITHIN);
        assert_eq!(beat.next_at(), t0 + EVERY);
        assert_eq!(beat.due(t0 + EVERY - Duration::from_millis(1)), None);
        let mut now = t0 + EVERY;
        for n in 1..=100u64 {
            assert_eq!(beat.due(now), Some(Due::Ping(n.to_be_bytes().to_vec())));
            assert_eq!(beat.next_at(), now + WITHIN);
            // Answered just before the deadline: it counts.
            now += WITHIN - Duration::from_millis(1);
            assert_eq!(beat.due(now), None);
            beat.pong(&n.to_be_bytes(), now);
            assert_eq!(beat.next_at(), now + EVERY);
            now += EVERY;
        }
    }

    #[test]
    fn a_client_that_does_not_answer_is_silent_at_the_deadline() {
        let t0 = Instant::now();
        let mut beat = Heartbeat::new(t0, EVERY, WITHIN);
        assert!(matches!(beat.due(t0 + EVERY), Some(Due::Ping(_))));
        assert_eq!(
            beat.due(t0 + EVERY + WITHIN - Duration::from_nanos(1)),
            None
        );
        assert_eq!(beat.due(t0 + EVERY + WITHIN), Some(Due::Silent));
        // Silent stays silent: the task may ask again before it closes.
        assert_eq!(beat.due(t0 + EVERY * 10), Some(Due::Silent));
    }

    #[test]
    fn a_wrong_or_unasked_pong_settles_nothing() {
        let t0 = Instant::now();
        let mut beat = Heartbeat::new(t0, EVERY, WITHIN);
        // Unasked: allowed, and the schedule stays.
        beat.pong(b"hello", t0);
        assert_eq!(beat.next_at(), t0 + EVERY);
        assert_eq!(
            beat.due(t0 + EVERY),
            Some(Due::Ping(1u64.to_be_bytes().to_vec()))
        );
        // The answer to another ping, or an empty one, does not count.
        beat.pong(&2u64.to_be_bytes(), t0 + EVERY);
        beat.pong(b"", t0 + EVERY);
        assert_eq!(beat.due(t0 + EVERY + WITHIN), Some(Due::Silent));
    }

    #[test]
    fn a_pong_for_an_old_ping_does_not_answer_the_new_one() {
        let t0 = Instant::now();
        let mut beat = Heartbeat::new(t0, EVERY, WITHIN);
        let first = t0 + EVERY;
        assert!(beat.due(first).is_some());
        beat.pong(&1u64.to_be_bytes(), first);
        let second = first + EVERY;
        assert_eq!(
            beat.due(second),
            Some(Due::Ping(2u64.to_be_bytes().to_vec()))
        );
        // The first ping's answer again (a client that repeats itself).
        beat.pong(&1u64.to_be_bytes(), second);
        assert_eq!(beat.due(second + WITHIN), Some(Due::Silent));
    }
}
