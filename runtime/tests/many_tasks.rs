//! A hundred thousand tasks, each of which must run to the end.

use std::cell::Cell;
use std::rc::Rc;

use runtime::{Queue, Runtime, spawn};

#[test]
fn one_hundred_thousand_tasks_all_complete() {
    const N: usize = 100_000;
    let rt = Runtime::new().unwrap();
    let finished = Rc::new(Cell::new(0usize));
    let (sum, debug) = rt
        .block_on(async {
            // Each task parks once on the queue before finishing, so all of
            // them are alive at the same time.
            let gate: Queue<()> = Queue::new();
            let handles: Vec<_> = (0..N)
                .map(|i| {
                    let gate = gate.clone();
                    let finished = finished.clone();
                    spawn(async move {
                        gate.get().await;
                        finished.set(finished.get() + 1);
                        i
                    })
                })
                .collect();
            for _ in 0..N {
                gate.put_nowait(());
            }
            let mut sum = 0;
            for h in handles {
                sum += h.await.unwrap();
            }
            (sum, format!("{rt:?}"))
        })
        .unwrap();
    assert_eq!(finished.get(), N);
    assert_eq!(sum, (0..N).sum::<usize>());
    // Finished tasks leave the table.
    assert!(debug.contains("tasks: {}"), "{debug}");
}
