//! What the game loop measures about itself: how regular its ticks are,
//! what a tick costs, and what it sends.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Tick intervals kept for the percentiles: the last minute at 10 ticks
/// a second.
const KEPT: usize = 600;

/// The game loop's numbers.
#[derive(Clone, Debug, Default)]
pub struct TickStats {
    /// Ticks so far.
    pub ticks: u64,
    first: Option<Instant>,
    last: Option<Instant>,
    /// The last [`KEPT`] intervals between two tick starts.
    intervals: VecDeque<Duration>,
    /// The last [`KEPT`] ticks' own time: the game and the broadcast.
    costs: VecDeque<Duration>,
    /// Bytes of every frame sent so far (the payloads: a frame's
    /// WebSocket header adds 2 to 4).
    pub bytes_sent: u64,
    /// Frames sent so far: one a player a tick.
    pub frames_sent: u64,
    /// Players at the last tick.
    pub players: usize,
}

impl TickStats {
    /// Records a tick that started at `started`, took `cost`, and sent
    /// `players` frames of `bytes` in all.
    pub fn record(&mut self, started: Instant, cost: Duration, bytes: usize, players: usize) {
        if let Some(last) = self.last {
            push_bounded(&mut self.intervals, started.saturating_duration_since(last));
        }
        push_bounded(&mut self.costs, cost);
        self.first.get_or_insert(started);
        self.last = Some(started);
        self.ticks += 1;
        self.bytes_sent += bytes as u64;
        self.frames_sent += players as u64;
        self.players = players;
    }

    /// Ticks per second from the first tick to the last, over the whole
    /// run: the rate that must not drift.
    pub fn rate(&self) -> f64 {
        match (self.first, self.last) {
            (Some(first), Some(last)) if self.ticks > 1 => {
                (self.ticks - 1) as f64
                    / last
                        .saturating_duration_since(first)
                        .as_secs_f64()
                        .max(1e-9)
            }
            _ => 0.0,
        }
    }

    /// The `p`th percentile (0 to 100) of the recent tick intervals.
    pub fn interval(&self, p: f64) -> Duration {
        percentile(&self.intervals, p)
    }

    /// The `p`th percentile of the recent ticks' own time.
    pub fn cost(&self, p: f64) -> Duration {
        percentile(&self.costs, p)
    }

    /// The numbers as JSON, for `GET /stats`; `connected` counts the
    /// players' connections, some of which may not have joined yet.
    pub fn to_json(&self, connected: usize) -> String {
        let ms = |d: Duration| (d.as_secs_f64() * 1e6).round() / 1e3;
        serde_json::json!({
            "ticks": self.ticks,
            "rate": (self.rate() * 1000.0).round() / 1000.0,
            "interval_ms": {"p50": ms(self.interval(50.0)), "p99": ms(self.interval(99.0)), "max": ms(self.interval(100.0))},
            "tick_cost_ms": {"p50": ms(self.cost(50.0)), "p99": ms(self.cost(99.0)), "max": ms(self.cost(100.0))},
            "bytes_sent": self.bytes_sent,
            "frames_sent": self.frames_sent,
            "players": self.players,
            "connected": connected,
        })
        .to_string()
    }
}

fn push_bounded(values: &mut VecDeque<Duration>, value: Duration) {
    if values.len() == KEPT {
        values.pop_front();
    }
    values.push_back(value);
}

fn percentile(values: &VecDeque<Duration>, p: f64) -> Duration {
    if values.is_empty() {
        return Duration::ZERO;
    }
    let mut sorted: Vec<Duration> = values.iter().copied().collect();
    sorted.sort();
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_and_percentiles() {
        let mut stats = TickStats::default();
        let t0 = Instant::now();
        for (i, gap) in [0u64, 100, 100, 100, 150, 50, 100]
            .iter()
            .scan(0, |t, g| {
                *t += g;
                Some(*t)
            })
            .enumerate()
        {
            stats.record(
                t0 + Duration::from_millis(gap),
                Duration::from_millis(i as u64),
                10,
                1,
            );
        }
        assert_eq!(stats.ticks, 7);
        assert!((stats.rate() - 10.0).abs() < 1e-9, "{}", stats.rate());
        assert_eq!(stats.interval(50.0), Duration::from_millis(100));
        assert_eq!(stats.interval(100.0), Duration::from_millis(150));
        assert_eq!(stats.interval(0.0), Duration::from_millis(50));
        assert_eq!(stats.cost(100.0), Duration::from_millis(6));
        assert_eq!((stats.bytes_sent, stats.frames_sent), (70, 7));
    }
}
