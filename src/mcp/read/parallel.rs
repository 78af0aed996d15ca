//! A read's items masked on several threads when there are many: the first search after start
//! masks a whole history (10,000 items and more) with rules that have seen nothing yet, and one
//! thread doing it holds the reply up by tens of milliseconds. Small reads stay on the caller's
//! thread, where a thread's start would cost more than it saves.

use std::num::NonZeroUsize;
use std::sync::{Mutex, PoisonError};

/// Fewer items to mask than this, and one thread does them all (a list's page is 20 to 100).
pub const SHARED_FROM: usize = 1_000;
/// Items a thread takes at a time: small enough that a block of expensive ones (a tab full of
/// secrets) does not leave the others idle, large enough that taking one is rare.
const BLOCK: usize = 32;
/// Threads at most, the caller's among them.
const MOST: usize = 8;

/// `work` on each of `jobs`, on up to [`MOST`] threads (those the machine has) when there are at
/// least [`SHARED_FROM`], else on this thread alone. The caller's thread works too, and the call
/// returns when every job is done; a thread the system refuses to start leaves its share to the
/// others.
pub fn for_each<J: Send>(jobs: &mut [J], work: impl Fn(&mut J) + Sync) {
    let threads = if jobs.len() < SHARED_FROM {
        1
    } else {
        std::thread::available_parallelism()
            .map_or(1, NonZeroUsize::get)
            .min(MOST)
            .min(jobs.len() / (SHARED_FROM / 2))
    };
    if threads <= 1 {
        jobs.iter_mut().for_each(work);
        return;
    }
    let blocks = Mutex::new(jobs.chunks_mut(BLOCK));
    let next = || blocks.lock().unwrap_or_else(PoisonError::into_inner).next();
    let drain = || {
        while let Some(block) = next() {
            block.iter_mut().for_each(&work);
        }
    };
    std::thread::scope(|s| {
        for _ in 1..threads {
            // A thread not started is no error: the others take its blocks.
            let _ = std::thread::Builder::new()
                .name("copyq-mcp-mask".into())
                .spawn_scoped(s, drain);
        }
        drain();
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_job_is_done_once_whatever_the_threads() {
        for n in [0, 5, SHARED_FROM, 10_007] {
            let mut jobs: Vec<(usize, u32, Option<std::thread::ThreadId>)> =
                (0..n).map(|i| (i, 0, None)).collect();
            for_each(&mut jobs, |j| {
                j.1 += 1;
                j.2 = Some(std::thread::current().id());
            });
            assert!(jobs.iter().enumerate().all(|(i, j)| j.0 == i && j.1 == 1));
            let here = std::thread::current().id();
            let elsewhere = jobs.iter().filter(|j| j.2 != Some(here)).count();
            if n < SHARED_FROM {
                assert_eq!(elsewhere, 0, "{n}");
            }
        }
    }
}
