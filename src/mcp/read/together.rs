//! Whole-scope reads made once for every search waiting together. A search reads every item of
//! its scope from CopyQ, whose one thread does nothing else meanwhile (14 ms for a 10,000-item tab
//! on 6.4, 70 ms with a tab of 100 screenshots beside it): under many clients, searches queue
//! behind each other and each makes the same read.
//! Here a search that finds a read of the same tabs already waiting to begin joins it; the first
//! to arrive waits for the read in progress (one at a time), and the read then begins, after
//! every search that joined it arrived. So each search still gets what CopyQ held at a moment
//! between its call and its reply, as when it read alone: nothing is kept once read, and nothing
//! read before a search arrived is handed to it. Matching, masking and the reply stay each
//! search's own.
//!
//! A joined read is driven by whichever of its searches polls it: one whose client goes away
//! leaves it to the others (tokio's `OnceCell` starts it again in the next waiter, which reads
//! afresh, still after every joiner arrived).

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::{OnceCell, OwnedSemaphorePermit, Semaphore};

use crate::backend::{BackendError, ReadRequest, Snapshot};

/// The reads waiting to begin, by what they ask, and the one read in progress.
#[derive(Default)]
pub(crate) struct Together {
    waiting: Mutex<Vec<(ReadRequest, Arc<Read>)>>,
    /// Held by the read in progress: the next one begins when it is done.
    reading: tokio::sync::Mutex<()>,
}

/// One read, and what it got: an error is each joiner's too ([`BackendError::again`]).
#[derive(Default)]
struct Read {
    got: OnceCell<Result<Arc<Snapshot>, BackendError>>,
}

/// Counts only: requests name the caller's tabs.
impl std::fmt::Debug for Together {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let waiting = self
            .waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len();
        write!(f, "Together({waiting} reads waiting)")
    }
}

impl Together {
    /// What `read` got for `request`, made in a read that began after this call, shared with
    /// every call for the same request that joined it.
    pub(crate) async fn read<F, Fut>(
        &self,
        request: &ReadRequest,
        read: F,
    ) -> Result<Arc<Snapshot>, BackendError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Snapshot, BackendError>>,
    {
        let joined = {
            let mut waiting = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
            // A read every joiner of which went away before it began is dropped.
            waiting.retain(|(_, r)| Arc::strong_count(r) > 1);
            match waiting.iter().find(|(r, _)| r == request) {
                Some((_, read)) => Arc::clone(read),
                None => {
                    let read = Arc::new(Read::default());
                    waiting.push((request.clone(), Arc::clone(&read)));
                    read
                }
            }
        };
        let got = joined
            .got
            .get_or_init(|| async {
                let _reading = self.reading.lock().await;
                // Begun: a search arriving from now on waits for the next read.
                self.waiting
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .retain(|(_, r)| !Arc::ptr_eq(r, &joined));
                read().await.map(Arc::new)
            })
            .await;
        match got {
            Ok(snapshot) => Ok(Arc::clone(snapshot)),
            Err(e) => Err(e.again()),
        }
    }
}

/// The pages of `shared` for one search, once it has one of `turns` (whole scopes held at once):
/// copied out of the shared read, the last search to take them gets them without a copy.
pub(crate) async fn with_turn(
    shared: Arc<Snapshot>,
    turns: &Arc<Semaphore>,
) -> (Snapshot, Option<OwnedSemaphorePermit>) {
    // The semaphore is never closed; were it, the search would go on without a turn.
    let turn = Arc::clone(turns).acquire_owned().await.ok();
    (Arc::unwrap_or_clone(shared), turn)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;
    use crate::backend::{Item, TabPage, TabSelector};

    fn request(tab: &str) -> ReadRequest {
        ReadRequest {
            tabs: TabSelector::Names {
                names: vec![tab.to_owned()],
            },
            skip: 0,
            limit: None,
            preview: None,
        }
    }

    /// A tab `mcp/a` holding one item, `text`.
    fn snapshot(text: &str) -> Snapshot {
        Snapshot {
            pages: vec![TabPage {
                name: "mcp/a".into(),
                total: 1,
                items: vec![Item::new(text, &[], "")],
            }],
            all_tabs: vec!["mcp/a".into()],
        }
    }

    /// A stand-in CopyQ: each read counted, answered with the count so far (or, `failing`,
    /// refused) once `open` allows.
    struct Reads {
        made: AtomicUsize,
        open: Semaphore,
        failing: bool,
    }

    impl Default for Reads {
        fn default() -> Reads {
            Reads {
                made: AtomicUsize::new(0),
                open: Semaphore::new(0),
                failing: false,
            }
        }
    }

    impl Reads {
        async fn read(&self) -> Result<Snapshot, BackendError> {
            let n = self.made.fetch_add(1, Ordering::SeqCst) + 1;
            let held = self.open.acquire().await;
            drop(held);
            if self.failing {
                return Err(BackendError::Unavailable);
            }
            Ok(snapshot(&format!("read {n}")))
        }

        /// Until `n` reads have begun.
        async fn begun(&self, n: usize) {
            while self.made.load(Ordering::SeqCst) < n {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
    }

    /// A search of `tab` through `together`, its read made by `reads`: the text it got.
    fn search(
        together: &Arc<Together>,
        reads: &Arc<Reads>,
        tab: &'static str,
    ) -> tokio::task::JoinHandle<String> {
        let (together, reads) = (together.clone(), reads.clone());
        tokio::spawn(async move {
            let got = together.read(&request(tab), || reads.read()).await;
            text(&got)
        })
    }

    /// A search of `mcp/a` whose read (read 1) has begun and is held, with what it goes through.
    async fn one_in_progress(
        reads: Reads,
    ) -> (Arc<Together>, Arc<Reads>, tokio::task::JoinHandle<String>) {
        let (together, reads) = (Arc::new(Together::default()), Arc::new(reads));
        let first = search(&together, &reads, "mcp/a");
        reads.begun(1).await;
        (together, reads, first)
    }

    fn text(got: &Result<Arc<Snapshot>, BackendError>) -> String {
        match got {
            Ok(s) => s.pages[0].items[0].text.clone(),
            Err(e) => e.to_string(),
        }
    }

    /// Searches arriving while a read is in progress share the next one, which begins after all
    /// of them arrived; the one read in progress is never handed to a search that arrived during
    /// it (it may predate that search's call). A search of other tabs reads on its own.
    #[tokio::test]
    async fn searches_waiting_together_share_one_read_begun_after_them() {
        let (together, reads, first) = one_in_progress(Reads::default()).await;
        // Read 1 is in progress (held): ten more searches arrive, and one of another tab.
        let later: Vec<_> = (0..10)
            .map(|_| search(&together, &reads, "mcp/a"))
            .collect();
        let other = search(&together, &reads, "mcp/b");
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(
            reads.made.load(Ordering::SeqCst),
            1,
            "a read began beside another"
        );
        reads.open.add_permits(1_000);
        assert_eq!(first.await.expect("first"), "read 1");
        let mut got = Vec::new();
        for s in later {
            got.push(s.await.expect("a later search"));
        }
        let other = other.await.expect("the other tab's search");
        // The ten shared one read (2 or 3, after the first, as the other tab's came before or
        // after them); the other tab's had its own.
        assert!(got.iter().all(|g| *g == got[0]), "{got:?}");
        assert_ne!(got[0], "read 1");
        assert_ne!(other, got[0]);
        assert_eq!(reads.made.load(Ordering::SeqCst), 3);
    }

    /// A search whose client went away while its read waited leaves the read to the others
    /// that joined it, which still get it (one read, begun after them).
    #[tokio::test]
    async fn a_search_gone_leaves_its_read_to_the_others() {
        let (together, reads, first) = one_in_progress(Reads::default()).await;
        // Two join the next read; whichever drives it goes away before it begins.
        let (a, b) = (
            search(&together, &reads, "mcp/a"),
            search(&together, &reads, "mcp/a"),
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
        a.abort();
        reads.open.add_permits(1_000);
        assert_eq!(first.await.expect("first"), "read 1");
        let got = tokio::time::timeout(Duration::from_secs(5), b)
            .await
            .expect("the other search was left waiting")
            .expect("b");
        assert_eq!(got, "read 2");
        assert_eq!(reads.made.load(Ordering::SeqCst), 2);
    }

    /// A read whose searches all went away before it began is not kept waiting for ever: the next
    /// search drops it.
    #[tokio::test]
    async fn a_read_nobody_waits_for_is_dropped() {
        let (together, reads, first) = one_in_progress(Reads::default()).await;
        let gone = search(&together, &reads, "mcp/b");
        tokio::time::sleep(Duration::from_millis(50)).await;
        gone.abort();
        let _ = gone.await;
        assert_eq!(format!("{together:?}"), "Together(1 reads waiting)");
        let next = search(&together, &reads, "mcp/c");
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(format!("{together:?}"), "Together(1 reads waiting)");
        reads.open.add_permits(1_000);
        assert_eq!(first.await.expect("first"), "read 1");
        assert_eq!(next.await.expect("next"), "read 2");
        assert_eq!(format!("{together:?}"), "Together(0 reads waiting)");
    }

    /// A failed read fails every search that shared it, each with the error.
    #[tokio::test]
    async fn a_failed_read_is_every_joiners_error() {
        let failing = Reads {
            failing: true,
            ..Reads::default()
        };
        let (together, reads, first) = one_in_progress(failing).await;
        let joined: Vec<_> = (0..3).map(|_| search(&together, &reads, "mcp/a")).collect();
        tokio::time::sleep(Duration::from_millis(50)).await;
        reads.open.add_permits(1_000);
        let unavailable = BackendError::Unavailable.to_string();
        assert_eq!(first.await.expect("first"), unavailable);
        for s in joined {
            assert_eq!(s.await.expect("joined"), unavailable);
        }
        assert_eq!(reads.made.load(Ordering::SeqCst), 2);
    }

    /// The pages come out after a turn is taken: with none free, the search waits.
    #[tokio::test]
    async fn the_pages_come_with_a_turn() {
        let turns = Arc::new(Semaphore::new(1));
        let taken = Arc::clone(&turns).acquire_owned().await.expect("a turn");
        let pages = with_turn(Arc::new(snapshot("one")), &turns);
        tokio::pin!(pages);
        let waited = tokio::time::timeout(Duration::from_millis(100), &mut pages).await;
        assert!(waited.is_err(), "pages without a turn");
        drop(taken);
        let (got, turn) = pages.await;
        assert_eq!(got.pages[0].items[0].text, "one");
        assert!(turn.is_some());
    }
}
