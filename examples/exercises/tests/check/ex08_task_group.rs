use std::cell::Cell;
use std::io::Read;
use std::net::TcpListener;
use std::rc::Rc;
use std::sync::mpsc;

use exercises::ex08_task_group::TaskGroup;
use runtime::{JoinError, Queue, TcpStream};

use crate::common::{GUARD, block_on, yield_now};

/// Sets its flag when dropped: proof that a task's future is gone.
struct Flag(Rc<Cell<bool>>);

impl Drop for Flag {
    fn drop(&mut self) {
        self.0.set(true);
    }
}

#[test]
fn dropping_the_group_cancels_its_tasks() {
    let dropped = block_on("the group", async move {
        let flags: Vec<Rc<Cell<bool>>> = (0..3).map(|_| Rc::new(Cell::new(false))).collect();
        let mut group = TaskGroup::new();
        for flag in &flags {
            let flag = Flag(Rc::clone(flag));
            group.spawn(async move {
                let _flag = flag;
                std::future::pending::<()>().await
            });
        }
        yield_now().await; // let them start and park
        drop(group);
        // Checked here, inside the runtime: when the runtime itself goes,
        // it drops every task left, group or no group.
        flags.iter().map(|f| f.get()).collect::<Vec<bool>>()
    });
    assert_eq!(
        dropped, [true; 3],
        "tasks whose futures were dropped with the group"
    );
}

#[test]
fn dropping_the_group_closes_its_sockets() {
    // A plain-thread server that reports when its client hangs up: the
    // proof has to come from the other end of the connection. (The demo
    // site does not count closed connections.)
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (accepted_tx, accepted) = mpsc::channel();
    let (closed_tx, closed) = mpsc::channel();
    std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        accepted_tx.send(()).unwrap();
        let mut buf = [0u8; 64];
        // Blocks until the client closes: then read returns 0.
        let eof = matches!(conn.read(&mut buf), Ok(0));
        closed_tx.send(eof).unwrap();
    });
    let dropped = Rc::new(Cell::new(false));
    let flag = Flag(Rc::clone(&dropped));
    let closed_cleanly = block_on("the group", async move {
        let mut group = TaskGroup::new();
        group.spawn(async move {
            let _flag = flag;
            let mut stream = TcpStream::connect(addr).await.unwrap();
            let mut buf = [0u8; 64];
            // The server never writes: this waits forever.
            let _ = stream.read(&mut buf).await;
        });
        runtime::spawn_blocking(move || accepted.recv_timeout(GUARD))
            .await
            .unwrap()
            .expect("the server never accepted the connection");
        drop(group);
        assert!(
            dropped.get(),
            "the task was still running after its group was dropped"
        );
        runtime::spawn_blocking(move || closed.recv_timeout(GUARD))
            .await
            .unwrap()
            .expect("the server never saw the connection close")
    });
    assert!(
        closed_cleanly,
        "the server's read should have returned end-of-stream"
    );
}

#[test]
fn a_join_all_that_is_dropped_cancels_what_it_waits_for() {
    // A timeout around `join_all` drops it midway: the tasks it waited
    // for must go with it, as they would with the group.
    let dropped = block_on("the group", async move {
        let flags: Vec<Rc<Cell<bool>>> = (0..3).map(|_| Rc::new(Cell::new(false))).collect();
        let mut group = TaskGroup::new();
        for flag in &flags {
            let flag = Flag(Rc::clone(flag));
            group.spawn(async move {
                let _flag = flag;
                std::future::pending::<()>().await
            });
        }
        // `join_all` waits for ever; the other side wins after one yield,
        // and `select` drops the loser.
        let joined = runtime::select(group.join_all(), yield_now()).await;
        assert!(matches!(joined, runtime::Either::Right(())));
        flags.iter().map(|f| f.get()).collect::<Vec<bool>>()
    });
    assert_eq!(
        dropped, [true; 3],
        "tasks whose futures were dropped with the join_all waiting for them"
    );
}

#[test]
fn cancel_all_then_join_all_reports_every_task_cancelled() {
    let results = block_on("the group", async {
        let q: Queue<u32> = Queue::new();
        let mut group = TaskGroup::new();
        for _ in 0..3 {
            let q = q.clone();
            group.spawn(async move { q.get().await });
        }
        yield_now().await;
        group.cancel_all();
        group.join_all().await
    });
    assert_eq!(
        results,
        [
            Err(JoinError::Cancelled),
            Err(JoinError::Cancelled),
            Err(JoinError::Cancelled)
        ]
    );
}

#[test]
fn join_all_returns_results_in_spawn_order() {
    let results = block_on("the group", async {
        let q: Queue<u32> = Queue::new();
        let mut group = TaskGroup::new();
        for i in 0..3 {
            let q = q.clone();
            group.spawn(async move { q.get().await * 10 + i });
        }
        assert_eq!(group.len(), 3);
        yield_now().await;
        for item in [1, 2, 3] {
            q.put_nowait(item);
        }
        group.join_all().await
    });
    assert_eq!(results, [Ok(10), Ok(21), Ok(32)]);
}
