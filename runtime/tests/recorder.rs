//! The recorder: the events of a run, in order, and the debug lints, each
//! triggered by a deliberately buggy future, and silent for a correct one.
//! Timer and lint tests run on a paused clock, so they hold on any machine.

use std::cell::Cell;
use std::future::poll_fn;
use std::rc::Rc;
use std::task::Poll;
use std::time::Duration;

use runtime::{
    Actor, Clock, Event, Lints, Record, Runtime, TaskBuilder, WarningKind, sleep, spawn,
    spawn_blocking, yield_now,
};

/// The events without their times, and with spawn locations cut to the
/// file, for exact comparison.
fn kinds(records: &[Record]) -> Vec<String> {
    records
        .iter()
        .map(|r| match &r.event {
            Event::Spawn { task, name, by, .. } => format!("spawn {task} {name:?} by {by:?}"),
            Event::PollStart { task } => format!("poll {task}"),
            Event::PollEnd { task, outcome } => format!("end {task} {outcome:?}"),
            Event::Wake { task, by } => format!("wake {task} by {by:?}"),
            Event::TimerSet { timer, after, by } => {
                format!("timer {timer} set {after:?} by {by:?}")
            }
            Event::TimerStart { timer } => format!("timer {timer} fires"),
            Event::TimerEnd { timer } => format!("timer {timer} done"),
            Event::WaitStart { .. } => "wait".into(),
            Event::WaitEnd { .. } => "waited".into(),
            other => format!("{other:?}"),
        })
        .collect()
}

#[test]
fn a_sleeping_task_is_recorded_step_by_step() {
    let rt = Runtime::with_clock(Clock::paused()).unwrap();
    let recording = rt.record();
    let answer = rt
        .block_on(async {
            let napper = TaskBuilder::new().name("napper").spawn(async {
                sleep(Duration::from_millis(10)).await;
                42
            });
            napper.await.unwrap()
        })
        .unwrap();
    assert_eq!(answer, 42);
    let records = recording.records();
    assert_eq!(
        kinds(&records),
        [
            "spawn 0 Some(\"main\") by Outside",
            "poll 0",
            "spawn 1 Some(\"napper\") by Task(0)",
            "wake 1 by Task(0)",
            "end 0 Pending",
            "poll 1",
            "timer 0 set 10ms by Task(1)",
            "end 1 Pending",
            "wait",
            "waited",
            "timer 0 fires",
            "wake 1 by Timer(0)",
            "timer 0 done",
            "poll 1",
            "wake 0 by Task(1)",
            "end 1 Ready",
            // main is ready: the loop looks at I/O without waiting.
            "wait",
            "waited",
            "poll 0",
            "end 0 Ready",
        ]
    );
    // The paused clock jumped to the timer: the second poll is 10 ms in.
    let second_poll = records
        .iter()
        .filter(|r| r.event == Event::PollStart { task: 1 })
        .nth(1)
        .unwrap();
    assert_eq!(second_poll.at, Duration::from_millis(10));
    assert_eq!(recording.warnings(), []);
}

#[test]
fn a_wake_from_another_thread_is_attributed_to_it() {
    let rt = Runtime::new().unwrap();
    let recording = rt.record();
    // The thread must finish after main has gone to sleep on it: left to
    // itself, on a busy machine it can finish before main's first poll of
    // the handle, which then is ready with no wake at all. So it waits for
    // a go from a task that runs only once main is pending.
    let (go, wait_for_go) = std::sync::mpsc::channel();
    let out = rt
        .block_on(async move {
            let seven = spawn_blocking(move || wait_for_go.recv().map(|()| 7));
            spawn(async move { go.send(()).unwrap() });
            seven.await.unwrap().unwrap()
        })
        .unwrap();
    assert_eq!(out, 7);
    let wakes: Vec<_> = recording
        .records()
        .into_iter()
        .filter_map(|r| match r.event {
            Event::Wake { task: 0, by } => Some(by),
            _ => None,
        })
        .collect();
    assert_eq!(wakes, [Actor::Thread]);
    assert!(recording.records().iter().any(|r| r.event == Event::Poke));
    assert_eq!(recording.warnings(), []);
}

#[test]
fn a_slow_poll_is_named_with_its_task() {
    let clock = Clock::paused();
    let rt = Runtime::with_clock(clock.clone()).unwrap();
    let recording = rt.record();
    let blocking = clock.clone();
    rt.block_on(async move {
        let line = line!() + 1;
        let blocker = TaskBuilder::new().name("blocker").spawn(async move {
            // A blocking call: 25 ms pass inside one poll.
            blocking.advance(Duration::from_millis(25));
        });
        blocker.await.unwrap();
        // A poll of exactly the threshold is not slow.
        spawn(async move { clock.advance(Duration::from_millis(10)) })
            .await
            .unwrap();
        line
    })
    .map(|line| {
        let warnings = recording.warnings();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert_eq!(
            warnings[0].kind,
            WarningKind::SlowPoll(Duration::from_millis(25))
        );
        assert_eq!(warnings[0].task, Some(1));
        assert_eq!(
            warnings[0].who,
            format!("task 1 (blocker, spawned at {}:{line})", file!())
        );
        assert_eq!(
            warnings[0].to_string(),
            format!(
                "slow poll: task 1 (blocker, spawned at {}:{line}) kept the loop for 25ms: \
                 a blocking call in async code?",
                file!()
            )
        );
    })
    .unwrap();
}

#[test]
fn a_pending_poll_that_drops_its_waker_is_a_lost_waker() {
    let rt = Runtime::new().unwrap();
    let recording = rt.record();
    rt.block_on(async {
        // The classic hang: Pending, and the waker thrown away.
        spawn(poll_fn(|_cx| Poll::<()>::Pending));
        // A correct one keeps its waker, so it is not reported.
        let keeper = Rc::new(Cell::new(None));
        let kept = keeper.clone();
        spawn(poll_fn(move |cx| {
            kept.set(Some(cx.waker().clone()));
            Poll::<()>::Pending
        }));
        yield_now().await;
        yield_now().await;
        drop(keeper.take());
    })
    .unwrap();
    let kinds: Vec<_> = recording
        .warnings()
        .into_iter()
        .map(|w| (w.kind, w.task))
        .collect();
    assert_eq!(kinds, [(WarningKind::LostWaker, Some(1))]);
    drop(rt);
    // Both are still pending when the runtime goes.
    let kinds: Vec<_> = recording
        .warnings()
        .into_iter()
        .map(|w| (w.kind, w.task))
        .collect();
    assert_eq!(
        kinds,
        [
            (WarningKind::LostWaker, Some(1)),
            (WarningKind::LeftBehind, Some(1)),
            (WarningKind::LeftBehind, Some(2)),
        ]
    );
}

#[test]
fn a_task_that_keeps_waking_itself_is_busy() {
    let rt = Runtime::new().unwrap();
    let recording = rt.record_with(Lints {
        busy_self_wakes: 10,
        ..Lints::default()
    });
    rt.block_on(async {
        // Spins 25 times: warned once, at the tenth.
        spawn(async {
            for _ in 0..25 {
                yield_now().await;
            }
        })
        .await
        .unwrap();
        // Yields 9 times in a row, then waits on a timer, then 9 again:
        // never 10 in a row.
        spawn(async {
            for _ in 0..2 {
                for _ in 0..9 {
                    yield_now().await;
                }
                sleep(Duration::from_millis(1)).await;
            }
        })
        .await
        .unwrap();
    })
    .unwrap();
    let warnings = recording.warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0].kind, WarningKind::BusySelfWake(10));
    assert_eq!(warnings[0].task, Some(1));
}

#[test]
fn polls_pair_up_and_every_wake_arrow_lands_on_a_poll() {
    let rt = Runtime::with_clock(Clock::paused()).unwrap();
    let recording = rt.record();
    rt.block_on(async {
        let a = spawn(sleep(Duration::from_millis(5)));
        let b = spawn(async {
            yield_now().await;
            sleep(Duration::from_millis(3)).await;
        });
        a.await.unwrap();
        b.await.unwrap();
    })
    .unwrap();
    let mut json = Vec::new();
    recording.write_chrome_trace(&mut json).unwrap();
    let trace: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    let count = |ph: &str, name: &str| {
        events
            .iter()
            .filter(|e| e["ph"] == ph && e["name"] == name)
            .count()
    };
    let polls = recording
        .records()
        .iter()
        .filter(|r| matches!(r.event, Event::PollEnd { .. }))
        .count();
    assert_eq!(count("X", "poll"), polls);
    // A flow start and a flow end for every wake; a spawn is a mark.
    assert_eq!(count("s", "wake"), count("f", "wake"));
    assert_eq!(count("i", "spawn task 1"), 1);
    let wakes = recording
        .records()
        .iter()
        .filter(|r| matches!(r.event, Event::Wake { .. }))
        .count();
    assert_eq!(count("s", "wake"), wakes);
    // Tracks: the loop, main and the two tasks, each named.
    let mut names: Vec<_> = events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .map(|e| e["args"]["name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    assert_eq!(names, ["event loop", "main", "task 1", "task 2"]);
    let outcome_of_last_poll = events
        .iter()
        .rev()
        .find(|e| e["ph"] == "X" && e["name"] == "poll" && e["tid"] == 1)
        .map(|e| e["args"]["outcome"].clone());
    assert_eq!(outcome_of_last_poll, Some("Ready".into()));
}
