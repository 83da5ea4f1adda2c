use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;

use demo_site::DemoSite;
use exercises::ex10_select::{Either, select};
use runtime::Queue;
use stage3_crawler::http::{Client, ClientConfig};
use url::Url;

use crate::common::{GUARD, block_on, yield_now};

/// A future that sets its flag when it is dropped.
async fn flagged<T>(flag: Rc<Cell<bool>>, future: impl Future<Output = T>) -> T {
    struct Flag(Rc<Cell<bool>>);
    impl Drop for Flag {
        fn drop(&mut self) {
            self.0.set(true);
        }
    }
    let _flag = Flag(flag);
    future.await
}

#[test]
fn the_first_to_finish_wins_and_the_loser_is_dropped() {
    let (result, loser_dropped) = block_on("select", async {
        let (left, right): (Queue<&str>, Queue<u32>) = (Queue::new(), Queue::new());
        let dropped = Rc::new(Cell::new(false));
        let r = right.clone();
        runtime::spawn(async move {
            yield_now().await;
            r.put_nowait(7);
        });
        let result = select(flagged(Rc::clone(&dropped), left.get()), right.get()).await;
        (result, dropped.get())
    });
    assert_eq!(result, Either::Right(7));
    assert!(
        loser_dropped,
        "the loser must be dropped by the time select returns"
    );
}

#[test]
fn either_side_can_wake_the_task() {
    let result = block_on("select", async {
        let (left, right): (Queue<&str>, Queue<u32>) = (Queue::new(), Queue::new());
        let l = left.clone();
        runtime::spawn(async move {
            yield_now().await;
            l.put_nowait("left");
        });
        select(left.get(), right.get()).await
    });
    assert_eq!(result, Either::Left("left"));
}

#[test]
fn when_both_are_ready_the_left_wins() {
    let result = block_on("select", select(async { 1 }, async { 2 }));
    assert_eq!(result, Either::<i32, i32>::Left(1));
}

#[test]
fn a_hanging_fetch_loses_to_the_other_side() {
    let site = Arc::new(DemoSite::start_default().unwrap());
    let url = Url::parse(&site.url("/fault/hang")).unwrap();
    let watcher = Arc::clone(&site);
    let result = block_on("select", async {
        let client = Client::new(ClientConfig::default());
        // The other side finishes once the server has the request, which
        // it will never answer.
        let request_seen = runtime::spawn_blocking(move || {
            watcher.wait_until(GUARD, |c| c.per_path.contains_key("/fault/hang"))
        });
        match select(client.get(&url), request_seen).await {
            Either::Left(response) => panic!("/fault/hang answered: {response:?}"),
            Either::Right(seen) => seen.unwrap(),
        }
    });
    assert!(result, "the server never saw the request");
    assert_eq!(site.counters().per_path.get("/fault/hang"), Some(&1));
}

#[test]
fn a_loser_ready_at_the_same_poll_loses_nothing() {
    let (result, still_queued) = block_on("select", async {
        let (left, right): (Queue<&str>, Queue<u32>) = (Queue::new(), Queue::new());
        left.put_nowait("left");
        right.put_nowait(7);
        // Both could finish at the first poll: `a` wins, so `b` must not
        // have taken its item.
        let result = select(left.get(), right.get()).await;
        (result, right.get_nowait())
    });
    assert_eq!(result, Either::Left("left"));
    assert_eq!(
        still_queued,
        Some(7),
        "the loser took the item off its queue, and it was thrown away with it"
    );
}
