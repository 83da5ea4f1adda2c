use std::sync::Arc;
use std::time::Duration;

use demo_site::DemoSite;
use exercises::ex07_task_tracker::Tracker;
use runtime::{Queue, TcpStream};

use crate::common::{GUARD, block_on, yield_now};

#[test]
fn the_report_names_what_each_task_waits_on() {
    let site = Arc::new(DemoSite::start_default().unwrap());
    let addr = site.addr();
    let (before, after) = block_on("the tracked tasks", async {
        let tracker = Tracker::new();
        let t = tracker.clone();
        let fetch = tracker.spawn("fetch /fault/hang", async move {
            let mut stream = TcpStream::connect(addr).await.unwrap();
            let request = format!("GET /fault/hang HTTP/1.1\r\nHost: {addr}\r\n\r\n");
            stream.write_all(request.as_bytes()).await.unwrap();
            let mut buf = [0u8; 1024];
            t.waiting_on("read response", stream.read(&mut buf)).await
        });
        let q: Queue<u32> = Queue::new();
        let (t, q2) = (tracker.clone(), q.clone());
        let worker = tracker.spawn("worker", async move {
            t.waiting_on("queue get", q2.get()).await
        });
        let t = tracker.clone();
        let sleeper = tracker.spawn("sleeper", async move {
            t.waiting_on("sleep 1h", runtime::sleep(Duration::from_secs(3600)))
                .await
        });
        let quick = tracker.spawn("quick", async { 42 });
        let untracked = tracker.spawn("untracked", std::future::pending::<()>());
        // The hanging fetch has sent its request (and gone on to read) once
        // the server has counted it.
        let waiting_site = Arc::clone(&site);
        let seen =
            runtime::spawn_blocking(move || waiting_site.wait_until(GUARD, |c| c.requests >= 1))
                .await
                .unwrap();
        assert!(seen, "the hanging fetch never sent its request");
        let late = tracker.spawn("late", async {});
        let before = tracker.report();
        fetch.cancel();
        worker.cancel();
        sleeper.cancel();
        untracked.cancel();
        late.cancel();
        assert_eq!(quick.await, Ok(42));
        (before, tracker.report())
    });
    assert_eq!(
        before,
        "task 1 fetch /fault/hang: waiting on read response\n\
         task 2 worker: waiting on queue get\n\
         task 3 sleeper: waiting on sleep 1h\n\
         task 4 quick: finished\n\
         task 5 untracked: waiting\n\
         task 6 late: scheduled\n"
    );
    assert_eq!(
        after,
        "task 1 fetch /fault/hang: cancelled\n\
         task 2 worker: cancelled\n\
         task 3 sleeper: cancelled\n\
         task 4 quick: finished\n\
         task 5 untracked: cancelled\n\
         task 6 late: cancelled\n"
    );
}

#[test]
fn the_innermost_label_wins_and_labels_do_not_stick() {
    let report = block_on("the tracked tasks", async {
        let tracker = Tracker::new();
        let q: Queue<u32> = Queue::new();
        let (t, q2) = (tracker.clone(), q.clone());
        let _nested = tracker.spawn("nested", async move {
            let inner = t.waiting_on("the inner queue get", q2.get());
            t.waiting_on("something outer", inner).await
        });
        let (t, q3) = (tracker.clone(), q.clone());
        let _moved_on = tracker.spawn("moved on", async move {
            t.waiting_on("first item", q3.get()).await;
            std::future::pending::<()>().await
        });
        yield_now().await; // both park in `get`
        q.put_nowait(1); // wakes "nested", the first in line
        q.put_nowait(2); // wakes "moved on"
        yield_now().await;
        yield_now().await;
        tracker.report()
    });
    assert_eq!(
        report,
        "task 1 nested: finished\n\
         task 2 moved on: waiting\n"
    );
    let report = block_on("the tracked tasks", async {
        let tracker = Tracker::new();
        let t = tracker.clone();
        let _nested = tracker.spawn("nested", async move {
            let inner = t.waiting_on("inner", std::future::pending::<()>());
            t.waiting_on("outer", inner).await
        });
        yield_now().await;
        tracker.report()
    });
    assert_eq!(report, "task 1 nested: waiting on inner\n");
}

#[test]
fn a_task_sees_itself_running() {
    let report = block_on("the tracked task", async {
        let tracker = Tracker::new();
        let t = tracker.clone();
        tracker
            .spawn("reporter", async move { t.report() })
            .await
            .unwrap()
    });
    assert_eq!(report, "task 1 reporter: running\n");
}

#[test]
fn tasks_are_numbered_by_the_runtime_not_by_the_tracker() {
    let (report, worker_id, quick_id) = block_on("the tracked tasks", async {
        // Two tasks the tracker never hears of take the first ids.
        let _untracked = [
            runtime::spawn(std::future::pending::<()>()),
            runtime::spawn(std::future::pending::<()>()),
        ];
        let tracker = Tracker::new();
        let q: Queue<u32> = Queue::new();
        let (t, q2) = (tracker.clone(), q.clone());
        let worker = tracker.spawn("worker", async move {
            t.waiting_on("queue get", q2.get()).await
        });
        let quick = tracker.spawn("quick", async { 42 });
        yield_now().await; // the worker parks, quick finishes
        (tracker.report(), worker.id(), quick.id())
    });
    assert_ne!(
        (worker_id, quick_id),
        (1, 2),
        "the test needs tracked tasks whose runtime ids are not 1 and 2"
    );
    assert_eq!(
        report,
        format!(
            "task {worker_id} worker: waiting on queue get\n\
             task {quick_id} quick: finished\n"
        ),
        "a task's number is the runtime's id for it (the one the trace log shows)"
    );
}
