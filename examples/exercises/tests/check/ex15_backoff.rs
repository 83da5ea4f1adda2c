use std::time::Duration;

use demo_site::DemoSite;
use exercises::ex15_backoff::{Backoff, Rng, get_with_retry};
use stage3_crawler::http::{Client, ClientConfig, FetchError};
use url::Url;

use crate::common::block_on;

const MS: Duration = Duration::from_millis(1);

fn backoff(max_tries: u32) -> Backoff {
    Backoff {
        base: MS,
        max: 8 * MS,
        max_tries,
    }
}

#[test]
fn the_ceiling_doubles_up_to_the_max() {
    let b = backoff(5);
    let ceilings: Vec<Duration> = (1..=6).map(|n| b.ceiling(n)).collect();
    assert_eq!(ceilings, [MS, 2 * MS, 4 * MS, 8 * MS, 8 * MS, 8 * MS]);
    assert_eq!(
        b.ceiling(1000),
        8 * MS,
        "a thousand failures must not overflow"
    );
    let huge = Backoff {
        base: Duration::from_secs(1),
        max: Duration::MAX,
        max_tries: 5,
    };
    assert_eq!(huge.ceiling(40), Duration::from_secs(1 << 39));
    assert_eq!(
        huge.ceiling(u32::MAX),
        Duration::MAX,
        "saturates instead of overflowing"
    );
}

#[test]
fn delays_are_full_jitter_draws_below_the_ceiling() {
    let b = backoff(5);
    let (mut rng, mut same_seed) = (Rng::new(42), Rng::new(42));
    for failures in 1..=20 {
        let delay = b.delay(failures, &mut rng);
        let expected = b.ceiling(failures).mul_f64(same_seed.next_f64());
        assert_eq!(
            delay, expected,
            "failure {failures}: one draw per delay, scaled to the ceiling"
        );
        assert!(delay < b.ceiling(failures));
    }
    let delays: Vec<Duration> = (0..10).map(|_| b.delay(4, &mut rng)).collect();
    assert!(
        delays.windows(2).any(|w| w[0] != w[1]),
        "jitter: ten draws cannot all be equal: {delays:?}"
    );
}

#[test]
fn a_flaky_path_succeeds_on_the_fourth_try() {
    let site = DemoSite::start_default().unwrap();
    let url = Url::parse(&site.url("/fault/flaky/3")).unwrap();
    let b = backoff(5);
    let retried = block_on("get_with_retry", async {
        let client = Client::new(ClientConfig::default());
        get_with_retry(&client, &url, &b, &mut Rng::new(7)).await
    });
    assert_eq!(
        retried
            .result
            .expect("the fourth try should succeed")
            .status,
        200
    );
    assert_eq!(retried.tries, 4);
    let mut rng = Rng::new(7);
    let expected: Vec<Duration> = (1..=3).map(|n| b.delay(n, &mut rng)).collect();
    assert_eq!(
        retried.waits, expected,
        "a wait before each retry, drawn in order"
    );
    assert_eq!(
        site.counters().per_path.get("/fault/flaky/3"),
        Some(&4),
        "requests the server saw"
    );
}

#[test]
fn giving_up_after_max_tries() {
    let site = DemoSite::start_default().unwrap();
    let url = Url::parse(&site.url("/fault/flaky/10")).unwrap();
    let retried = block_on("get_with_retry", async {
        let client = Client::new(ClientConfig::default());
        get_with_retry(&client, &url, &backoff(3), &mut Rng::new(7)).await
    });
    assert_eq!(retried.result.unwrap_err(), FetchError::Closed);
    assert_eq!((retried.tries, retried.waits.len()), (3, 2));
    assert_eq!(site.counters().per_path.get("/fault/flaky/10"), Some(&3));
}

#[test]
fn responses_and_hopeless_errors_are_not_retried() {
    let site = DemoSite::start_default().unwrap();
    let (missing, ftp) = (
        Url::parse(&site.url("/missing.html")).unwrap(),
        Url::parse(&site.url("/").replacen("http:", "ftp:", 1)).unwrap(),
    );
    let (a, b) = block_on("get_with_retry", async {
        let client = Client::new(ClientConfig::default());
        let mut rng = Rng::new(7);
        let a = get_with_retry(&client, &missing, &backoff(5), &mut rng).await;
        let b = get_with_retry(&client, &ftp, &backoff(5), &mut rng).await;
        (a, b)
    });
    assert_eq!(a.result.unwrap().status, 404);
    assert_eq!((a.tries, b.tries), (1, 1));
    assert!(matches!(b.result, Err(FetchError::Unsupported(_))));
}

/// Each wait is a timer on the runtime (`runtime::sleep`), not the
/// thread asleep: a thread that sleeps stops every other task with it,
/// and sets no timer. The runtime's recording lists the timers set.
#[test]
fn each_wait_is_a_timer_on_the_runtime() {
    let site = DemoSite::start_default().unwrap();
    let url = Url::parse(&site.url("/fault/flaky/3")).unwrap();
    let b = backoff(5);
    let rt = runtime::Runtime::new().unwrap();
    let recording = rt.record();
    let retried = rt
        .block_on(runtime::timeout(crate::common::GUARD, async {
            let client = Client::new(ClientConfig::default());
            get_with_retry(&client, &url, &b, &mut Rng::new(7)).await
        }))
        .unwrap()
        .expect("still not finished after the guard's time");
    assert_eq!(retried.tries, 4);
    // The client's own timers are seconds long; a wait is at most the
    // backoff's 8 ms. (A timer's `after` is measured from when the loop
    // set it, a hair after the sleep began, so it is not compared exactly.)
    let short: Vec<Duration> = recording
        .records()
        .into_iter()
        .filter_map(|record| match record.event {
            runtime::Event::TimerSet { after, .. } if after <= b.max => Some(after),
            _ => None,
        })
        .collect();
    assert_eq!(
        short.len(),
        retried.waits.len(),
        "one runtime timer per wait (waits {:?}, short timers set {short:?}): wait with \
         runtime::sleep, never std::thread::sleep",
        retried.waits
    );
}
