//! The worker pool of `--jobs` and `--output-dir`: files converted on
//! several threads, their results consumed in input order on the calling
//! thread. Each input has a bounded channel of its own, so a worker ahead
//! of the consumer waits instead of piling up what it made, and workers
//! take inputs in order, so the one the consumer waits for is always being
//! worked on (no deadlock however the channels fill).

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

/// Run `work(i, &inputs[i], sender)` for every input on `jobs` scoped
/// threads (at least one, at most one per input), and `consume` on the
/// calling thread with the receivers in input order; each channel holds at
/// most `capacity` messages. When `consume` returns, no worker starts
/// another input, and what is left in the channels goes to `leftover`:
/// `None` drops the receivers, so a busy worker's next send fails and it
/// stops there; `Some(f)` hands `f` every message still sent until the busy
/// workers finish (for messages that own something to clean up).
pub(super) fn in_order<I, T, R>(
    inputs: &[I],
    jobs: usize,
    capacity: usize,
    work: impl Fn(usize, &I, SyncSender<T>) + Sync,
    consume: impl FnOnce(&[Receiver<T>]) -> R,
    leftover: Option<&mut dyn FnMut(T)>,
) -> R
where
    I: Sync,
    T: Send,
{
    let (senders, receivers): (Vec<_>, Vec<_>) =
        inputs.iter().map(|_| sync_channel::<T>(capacity)).unzip();
    let senders = Mutex::new(senders.into_iter().map(Some).collect::<Vec<_>>());
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, inputs.len().max(1)) {
            scope.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(input) = inputs.get(i) else { break };
                    let tx = senders.lock().map(|mut s| s[i].take());
                    if let Ok(Some(tx)) = tx {
                        work(i, input, tx);
                    }
                }
            });
        }
        let r = consume(&receivers);
        stop.store(true, Ordering::Relaxed);
        // The inputs no worker took will never be sent on: their senders
        // go, so that draining their receivers ends.
        if let Ok(mut s) = senders.lock() {
            s.iter_mut().for_each(|tx| *tx = None);
        }
        match leftover {
            None => drop(receivers),
            Some(f) => {
                for rx in &receivers {
                    while let Ok(m) = rx.recv() {
                        f(m);
                    }
                }
            }
        }
        r
    })
}

#[cfg(test)]
mod tests {
    use super::in_order;

    #[test]
    fn results_come_in_input_order_whatever_the_threads() {
        let inputs: Vec<u64> = (0..64).collect();
        for jobs in [1, 2, 5, 100] {
            let got = in_order(
                &inputs,
                jobs,
                1,
                |i, n, tx| {
                    // Later inputs finish first.
                    std::thread::sleep(std::time::Duration::from_micros(64 - *n));
                    for k in 0..3 {
                        if tx.send((i, k)).is_err() {
                            return;
                        }
                    }
                },
                |rx| rx.iter().flat_map(|r| r.iter()).collect::<Vec<_>>(),
                None,
            );
            let want: Vec<_> = (0..64).flat_map(|i| (0..3).map(move |k| (i, k))).collect();
            assert_eq!(got, want, "jobs {jobs}");
        }
    }

    #[test]
    fn a_consumer_that_stops_early_stops_the_workers() {
        let inputs: Vec<u32> = (0..1000).collect();
        let started = AtomicUsize::new(0);
        let first = in_order(
            &inputs,
            2,
            1,
            |_, n, tx| {
                started.fetch_add(1, Ordering::Relaxed);
                let _ = tx.send(*n);
                let _ = tx.send(*n);
            },
            |rx| rx[0].recv().unwrap(),
            None,
        );
        assert_eq!(first, 0);
        assert!(started.load(Ordering::Relaxed) < 1000);
    }

    #[test]
    fn what_is_left_is_drained_when_asked() {
        let inputs: Vec<u32> = (0..50).collect();
        let mut left = Vec::new();
        let first = in_order(
            &inputs,
            3,
            1,
            |_, n, tx| {
                let _ = tx.send(*n);
            },
            |rx| rx[0].recv().unwrap(),
            Some(&mut |m| left.push(m)),
        );
        assert_eq!(first, 0);
        // Whatever a worker sent after the consumer stopped reached `left`,
        // each input at most once, and never the one consumed.
        let mut seen = left.clone();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), left.len());
        assert!(!left.contains(&0));
    }

    use std::sync::atomic::{AtomicUsize, Ordering};
}
