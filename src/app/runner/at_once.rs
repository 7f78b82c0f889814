//! The same blocking work on many servers at once, on a bounded number of threads: what the
//! runs that cannot use the fleet's event loop do on a group (the timed operations over
//! `--mgmt`, at each step of their schedule; `--mgmt`'s calls). At most
//! [`MAX_WORKERS`] threads run at once, each taking the next server when it is done with one,
//! so a group of ten thousand servers costs [`MAX_WORKERS`] threads, not ten thousand, and a
//! slow or dead server holds back nobody else unless [`MAX_WORKERS`] of them are slow at once.

use std::sync::Mutex;
use std::thread;

/// At most this many threads work at once.
pub const MAX_WORKERS: usize = 256;

/// Runs `work` on every item, at most [`MAX_WORKERS`] at a time; each result in the items'
/// order, `None` for one whose work panicked. One item is worked on the calling thread; where
/// no thread can be started (a process limit), the calling thread works through them all.
pub fn each<T: Send, R: Send>(
    items: &mut [T],
    work: impl Fn(&mut T) -> R + Sync,
) -> Vec<Option<R>> {
    each_within(items, MAX_WORKERS, work)
}

/// [`each`] for work that can fail: an item whose work panicked gets an error too (a bug in
/// rcon), so every caller words one kind of failure.
pub fn try_each<T: Send, R: Send>(
    items: &mut [T],
    work: impl Fn(&mut T) -> anyhow::Result<R> + Sync,
) -> Vec<anyhow::Result<R>> {
    each(items, work)
        .into_iter()
        .map(|r| {
            r.unwrap_or_else(|| Err(anyhow::anyhow!("its worker thread failed (a bug in rcon)")))
        })
        .collect()
}

/// [`each`] on at most `cap` threads (at least one).
pub fn each_within<T: Send, R: Send>(
    items: &mut [T],
    cap: usize,
    work: impl Fn(&mut T) -> R + Sync,
) -> Vec<Option<R>> {
    if let [only] = items {
        return vec![Some(work(only))];
    }
    let count = items.len();
    let next = Mutex::new(items.iter_mut().enumerate());
    let done: Mutex<Vec<(usize, R)>> = Mutex::new(Vec::with_capacity(count));
    let worker = || {
        loop {
            // The lock is held only to take the next item, never while working on it.
            let item = next.lock().unwrap_or_else(|e| e.into_inner()).next();
            let Some((i, item)) = item else { return };
            let result = work(item);
            done.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((i, result));
        }
    };
    thread::scope(|scope| {
        let mut started = Vec::new();
        for n in 0..count.min(cap.max(1)) {
            match thread::Builder::new()
                .name(format!("server-{n}"))
                .spawn_scoped(scope, worker)
            {
                Ok(handle) => started.push(handle),
                Err(_) => break,
            }
        }
        if started.is_empty() {
            worker();
        }
        // A worker that panicked leaves its item without a result; the others go on.
        for handle in started {
            let _ = handle.join();
        }
    });
    let mut results: Vec<Option<R>> = (0..count).map(|_| None).collect();
    for (i, result) in done.into_inner().unwrap_or_else(|e| e.into_inner()) {
        results[i] = Some(result);
    }
    results
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[test]
    fn every_item_once_results_in_order() {
        let mut items: Vec<u64> = (0..1000).collect();
        let results = each(&mut items, |n| {
            *n += 1;
            *n * 2
        });
        assert_eq!(items, (1..=1000).collect::<Vec<_>>());
        let want: Vec<Option<u64>> = (1..=1000).map(|n| Some(n * 2)).collect();
        assert_eq!(results, want);
    }

    #[test]
    fn never_more_than_the_cap_at_once() {
        let (now, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let mut items = vec![(); MAX_WORKERS * 2];
        each(&mut items, |_| {
            let here = now.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(here, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(20));
            now.fetch_sub(1, Ordering::SeqCst);
        });
        let most = most.load(Ordering::SeqCst);
        assert!(most <= MAX_WORKERS, "{most} at once");
        assert!(most > 1, "the items were worked on one at a time");
    }

    #[test]
    fn a_panic_leaves_only_its_own_item_without_a_result() {
        let mut items: Vec<u32> = (0..8).collect();
        let results = each(&mut items, |n| {
            assert!(*n != 3, "test panic");
            *n
        });
        assert_eq!(results[3], None);
        assert_eq!(results.iter().filter(|r| r.is_some()).count(), 7);
    }
}
