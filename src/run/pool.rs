//! The worker pool of `--jobs` and `--output-dir`: files converted on
//! several threads, their results consumed in input order on the calling
//! thread. Each input has a bounded channel of its own, so a worker ahead
//! of the consumer waits instead of piling up what it made, and workers
//! take inputs in order, so the one the consumer waits for is always being
//! worked on (no deadlock however the channels fill).
//!
//! A channel is made when a worker takes its input, not for every input
//! at the start: a bounded channel allocates its slots at once (about a
//! kilobyte), which for an archive of thousands of small files was several
//! megabytes held from the first file to the last (docs/performance.md,
//! "Channels made as files are taken").

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};

/// The receivers of the inputs, handed to the consumer in input order as
/// the workers take the inputs.
pub(super) struct Ordered<T> {
    /// Receivers in input order: a worker sends an input's receiver here
    /// while it holds the lock under which it took that input.
    handoff: Receiver<Receiver<T>>,
    /// The receiver last handed out, kept so that what is left in it can
    /// still be drained after the consumer returns.
    current: Option<Receiver<T>>,
}

impl<T> Ordered<T> {
    /// The next input's receiver (waiting until a worker takes that input);
    /// `None` when every input was handed out.
    pub(super) fn next(&mut self) -> Option<&Receiver<T>> {
        self.current = Some(self.handoff.recv().ok()?);
        self.current.as_ref()
    }
}

/// What the workers share: the next input to take, and where its receiver
/// goes (`None` once the consumer is done: nothing more is taken).
struct Taking<T> {
    next: usize,
    handoff: Option<Sender<Receiver<T>>>,
}

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
    consume: impl FnOnce(&mut Ordered<T>) -> R,
    leftover: Option<&mut dyn FnMut(T)>,
) -> R
where
    I: Sync,
    T: Send,
{
    let (handoff, handed) = channel();
    let taking = Mutex::new(Taking {
        next: 0,
        handoff: Some(handoff),
    });
    let stop = AtomicBool::new(false);
    // The next input and its sender, its receiver already on its way to
    // the consumer; `None` when there is nothing more to take.
    let take = || {
        let mut t = taking.lock().ok()?;
        let i = t.next;
        inputs.get(i)?;
        let (tx, rx) = sync_channel::<T>(capacity);
        t.handoff.as_ref()?.send(rx).ok()?;
        t.next += 1;
        if t.next == inputs.len() {
            // The last receiver is handed off: the consumer's `next` after
            // it ends instead of waiting.
            t.handoff = None;
        }
        Some((i, tx))
    };
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, inputs.len().max(1)) {
            scope.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    let Some((i, tx)) = take() else { break };
                    work(i, &inputs[i], tx);
                }
            });
        }
        let mut ordered = Ordered {
            handoff: handed,
            current: None,
        };
        let r = consume(&mut ordered);
        stop.store(true, Ordering::Relaxed);
        // No input is taken from now on; the receivers of those taken but
        // not consumed are in the hand-off.
        if let Ok(mut t) = taking.lock() {
            t.handoff = None;
        }
        match leftover {
            None => drop(ordered),
            Some(f) => {
                let Ordered { handoff, current } = ordered;
                for rx in current.into_iter().chain(handoff.iter()) {
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
                |rx| {
                    let mut got = Vec::new();
                    while let Some(r) = rx.next() {
                        got.extend(r.iter());
                    }
                    got
                },
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
            |rx| rx.next().unwrap().recv().unwrap(),
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
            |rx| rx.next().unwrap().recv().unwrap(),
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
