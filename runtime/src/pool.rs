//! A pool of connections, for a server whose many tasks each need to send
//! a request to one service now and then: the Redis client's and the
//! PostgreSQL client's.
//!
//! A task borrows a whole connection for its request, so that answers
//! never mix. The pool caps how many connections exist; a task beyond the
//! cap waits in the runtime's [`Queue`] of permits, the chapter's joinable
//! queue used as a semaphore. A borrowed connection goes back only when
//! its borrower says its answer was read to the end
//! ([`Pooled::release`]): dropped any other way (an error, a task
//! cancelled mid-request whose answer may still come), it is closed, so no
//! later borrower reads another's answer.

use std::cell::RefCell;
use std::fmt;
use std::future::Future;
use std::ops::{Deref, DerefMut};

use crate::queue::Queue;

/// Up to `size` connections of type `C`, opened as needed.
pub struct Pool<C> {
    idle: RefCell<Vec<C>>,
    permits: Queue<()>,
}

impl<C> Pool<C> {
    /// A pool of at most `size` connections (one, if `size` is 0).
    pub fn new(size: usize) -> Pool<C> {
        let permits = Queue::new();
        for _ in 0..size.max(1) {
            permits.put_nowait(());
        }
        Pool {
            idle: RefCell::new(Vec::new()),
            permits,
        }
    }

    /// A connection: an idle one, or one that `open` makes. Waits while
    /// `size` are borrowed. If `open` fails, its error is returned and the
    /// place is free again.
    pub async fn get<E, F>(&self, open: impl FnOnce() -> F) -> Result<Pooled<'_, C>, E>
    where
        F: Future<Output = Result<C, E>>,
    {
        self.permits.get().await;
        // From here the permit is the guard's: a `get` cancelled while
        // `open` runs gives it back too.
        let mut pooled = Pooled {
            pool: self,
            conn: None,
        };
        let idle = self.idle.borrow_mut().pop();
        pooled.conn = Some(match idle {
            Some(conn) => conn,
            None => open().await?,
        });
        Ok(pooled)
    }

    /// Connections open and not borrowed.
    pub fn idle(&self) -> usize {
        self.idle.borrow().len()
    }
}

impl<C> fmt::Debug for Pool<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pool")
            .field("idle", &self.idle.borrow().len())
            .field("free", &self.permits.qsize())
            .finish()
    }
}

/// A borrowed connection.
pub struct Pooled<'a, C> {
    pool: &'a Pool<C>,
    /// Always there but while `get` opens it, and once `release` took it.
    conn: Option<C>,
}

impl<C> Pooled<'_, C> {
    /// Gives the connection back for the next task. Only a borrower that
    /// read its answer to the end may do this; dropping the guard instead
    /// closes the connection.
    pub fn release(mut self) {
        if let Some(conn) = self.conn.take() {
            self.pool.idle.borrow_mut().push(conn);
        }
    }
}

impl<C> Deref for Pooled<'_, C> {
    type Target = C;

    fn deref(&self) -> &C {
        // A guard a caller holds always has its connection: `get` hands
        // it out filled, and `release` consumes it.
        self.conn.as_ref().unwrap_or_else(|| unreachable!())
    }
}

impl<C> DerefMut for Pooled<'_, C> {
    fn deref_mut(&mut self) -> &mut C {
        self.conn.as_mut().unwrap_or_else(|| unreachable!())
    }
}

impl<C> Drop for Pooled<'_, C> {
    fn drop(&mut self) {
        // `release` took the connection already, or it closes here; the
        // place is free either way.
        self.pool.permits.put_nowait(());
    }
}

impl<C> fmt::Debug for Pooled<'_, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pooled").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::rc::Rc;

    use super::*;
    use crate::{Runtime, spawn, yield_now};

    /// A connection that counts how many are open.
    struct Conn(u32, Rc<Cell<u32>>);

    impl Drop for Conn {
        fn drop(&mut self) {
            self.1.set(self.1.get() - 1);
        }
    }

    fn opener(
        opened: &Rc<Cell<u32>>,
        open: &Rc<Cell<u32>>,
    ) -> impl FnOnce() -> std::future::Ready<Result<Conn, String>> + use<> {
        let (opened, open) = (opened.clone(), open.clone());
        move || {
            opened.set(opened.get() + 1);
            open.set(open.get() + 1);
            std::future::ready(Ok(Conn(opened.get(), open)))
        }
    }

    #[test]
    fn a_released_connection_is_reused_and_a_dropped_one_closed() {
        Runtime::new()
            .unwrap()
            .block_on(async {
                let (opened, open) = (Rc::new(Cell::new(0)), Rc::new(Cell::new(0)));
                let pool = Pool::new(2);
                let first = pool.get(opener(&opened, &open)).await.unwrap();
                assert_eq!(first.0, 1);
                first.release();
                let again = pool.get(opener(&opened, &open)).await.unwrap();
                assert_eq!((again.0, opened.get()), (1, 1), "the idle one, reused");
                drop(again); // its answer was not read: closed
                assert_eq!((open.get(), pool.idle()), (0, 0));
                let fresh = pool.get(opener(&opened, &open)).await.unwrap();
                assert_eq!(fresh.0, 2, "a new one, in its place");
            })
            .unwrap();
    }

    #[test]
    fn a_borrower_past_the_cap_waits_for_a_place() {
        Runtime::new()
            .unwrap()
            .block_on(async {
                let (opened, open) = (Rc::new(Cell::new(0)), Rc::new(Cell::new(0)));
                let pool = Rc::new(Pool::new(1));
                let held = pool.get(opener(&opened, &open)).await.unwrap();
                let got = Rc::new(Cell::new(false));
                let waiter = spawn({
                    let (pool, got, opener) = (pool.clone(), got.clone(), opener(&opened, &open));
                    async move {
                        let conn = pool.get(opener).await.unwrap();
                        got.set(true);
                        conn.release();
                    }
                });
                yield_now().await;
                assert!(!got.get(), "one place, and it is taken");
                held.release();
                waiter.await.unwrap();
                assert!(got.get());
                assert_eq!((opened.get(), open.get(), pool.idle()), (1, 1, 1));
            })
            .unwrap();
    }

    #[test]
    fn a_connection_that_cannot_be_opened_frees_its_place() {
        Runtime::new()
            .unwrap()
            .block_on(async {
                let pool: Pool<Conn> = Pool::new(1);
                let failed = pool
                    .get(|| std::future::ready(Err::<Conn, _>("refused")))
                    .await;
                assert_eq!(failed.err(), Some("refused"));
                let (opened, open) = (Rc::new(Cell::new(0)), Rc::new(Cell::new(0)));
                // Were the place lost, this would wait for ever.
                let conn = pool.get(opener(&opened, &open)).await.unwrap();
                assert_eq!(conn.0, 1);
            })
            .unwrap();
    }
}
