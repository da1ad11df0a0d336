//! The worker pool of `--jobs` and `--output-dir`: files converted on
//! several threads, their results consumed in input order on the calling
//! thread. Each input has a bounded channel of its own, so a worker ahead
//! of the consumer waits instead of piling up what it made, and workers
//! take inputs in order, so the one the consumer waits for is always being
//! worked on (no deadlock however the channels fill).
//!
//! A bounded channel bounds one file, not the run: a small file's whole
//! output fits in its channel, so its worker finishes and takes the next.
//! Workers therefore take an input only within a window of the one being
//! consumed ([`window`]): with the consumer stalled (a slow pipe), an
//! archive of many small files holds a window of outputs, not all of them.
//!
//! A channel is made when a worker takes its input, not for every input
//! at the start: a bounded channel allocates its slots at once (about a
//! kilobyte), which for an archive of thousands of small files was several
//! megabytes held from the first file to the last (docs/performance.md,
//! "Channels made as files are taken").

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{
    Receiver, RecvError, Sender, SyncSender, TryRecvError, channel, sync_channel,
};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// How many inputs may be taken and not yet consumed, the one being
/// consumed included: enough for the workers to go on converting through
/// one of the consumer's naps ([`NAP`]; docs/performance.md, "A window of
/// files in flight", "Longer naps"), few enough that memory does not
/// follow the archive.
pub(super) fn window(jobs: usize) -> usize {
    16 * jobs.max(1)
}

/// The window when a file's worker makes only a few rows (`--to usage`
/// reduced by the workers), which the consumer keeps and does not write
/// until the run ends. 64 per job: a file's rows are a few hundred bytes
/// a session, so even this many in flight hold little, and on a tree of
/// small files four per job let the workers fill the window
/// while the consumer napped ([`recv`]), then wait for it: on two cores,
/// each such wait left a core idle and cost a wake across cores
/// (docs/performance.md, "A wider window for rows").
pub(super) fn window_for_rows(jobs: usize) -> usize {
    64 * jobs.max(1)
}

/// The receivers of the inputs, handed to the consumer in input order as
/// the workers take the inputs.
pub(super) struct Ordered<'a, T, I = super::Input> {
    /// Receivers in input order: a worker sends an input's receiver here
    /// while it holds the lock under which it took that input.
    handoff: Receiver<Receiver<T>>,
    /// The receiver last handed out, kept so that what is left in it can
    /// still be drained after the consumer returns.
    current: Option<Receiver<T>>,
    /// Where the consumer says it moved on, so that workers may take
    /// further.
    taking: &'a Gate<T, I>,
}

impl<T, I> Ordered<'_, T, I> {
    /// The next input's receiver (waiting until a worker takes that input);
    /// `None` when every input was handed out. Asking for it says that the
    /// consumer is done with the one before.
    pub(super) fn next(&mut self) -> Option<&Receiver<T>> {
        if self.current.take().is_some() {
            self.taking.moved_on();
        }
        self.current = Some(self.handoff.recv().ok()?);
        self.current.as_ref()
    }

    /// One more input for the workers ([`Source::Fed`]).
    #[cfg(feature = "walk")]
    pub(super) fn feed(&self, input: I) {
        if let Ok(mut t) = self.taking.taking.lock() {
            t.fed.push(input);
            if t.waiting == 0 {
                return;
            }
        }
        self.taking.moved.notify_all();
    }

    /// No more inputs come ([`Source::Fed`]): the workers stop when they
    /// have taken those fed, and [`Ordered::next`] ends after the last.
    #[cfg(feature = "walk")]
    pub(super) fn fed_all(&self) {
        if let Ok(mut t) = self.taking.taking.lock() {
            t.complete = true;
            if t.next == t.fed.len() {
                t.handoff = None;
            }
        }
        self.taking.moved.notify_all();
    }
}

/// Where the workers take their inputs: all known when the run starts, or
/// handed on by the consumer as it finds them ([`Ordered::feed`]), so that
/// the workers begin on a tree's first files while it is still walked
/// (docs/performance.md, "The walk beside the workers").
pub(super) enum Source<'a, I> {
    All(&'a [I]),
    /// Fed; `ahead` inputs may be taken ahead of the consumer while it
    /// still feeds (it consumes none meanwhile), the run's window after.
    #[cfg(feature = "walk")]
    Fed {
        ahead: usize,
    },
}

/// How long the consumer naps when the input it writes has nothing for it
/// yet, and how many times before it blocks on the channel instead. Each
/// wake takes a core from a worker for a moment and cools its caches, so
/// the consumer naps long enough to find several files done: on the real
/// Claude tree (files of about 0.2 ms) two workers finish about twenty in
/// 2 ms, which the window of 32 ([`window`]) holds; a window they fill
/// during a nap leaves a core idle (docs/performance.md, "Longer naps":
/// naps of 300 µs woke about 2,700 times a run).
const NAP: Duration = Duration::from_millis(2);
const NAPS: u32 = 2;

/// How the consumer waits for the next message of an input's channel
/// ([`Ordered::next`]). A consumer that writes faster than the workers
/// convert (`--to usage` over a tree of small files) would otherwise block
/// on nearly every input and be woken by its worker's send: two system
/// calls and two context switches an input, on cores the workers need.
/// Napping a few times first, it finds several inputs done at each wake:
/// `-j 2` over 4,570 transcripts went from about 6,900 waits to 1,400
/// (medians of 9, docs/performance.md, "The consumer naps"). An input that
/// stays silent longer (a slow or live one, or a large file) is waited for
/// on the channel, with no wake until it sends; and after such a wait the
/// next input is waited for at once, without naps, until one is found done
/// on arrival: on a tree of large files every nap was a wake for nothing,
/// taking a worker's core (docs/performance.md, "Naps only while they
/// pay").
pub(super) struct Waiter {
    naps: u32,
}

impl Waiter {
    pub(super) fn new() -> Waiter {
        Waiter { naps: NAPS }
    }

    /// The next message of `rx`.
    pub(super) fn recv<T>(&mut self, rx: &Receiver<T>) -> Result<T, RecvError> {
        match rx.try_recv() {
            Ok(m) => {
                // The workers are ahead: naps pay again.
                self.naps = NAPS;
                return Ok(m);
            }
            Err(TryRecvError::Disconnected) => return Err(RecvError),
            Err(TryRecvError::Empty) => {}
        }
        for _ in 0..self.naps {
            std::thread::sleep(NAP);
            match rx.try_recv() {
                Ok(m) => return Ok(m),
                Err(TryRecvError::Disconnected) => return Err(RecvError),
                Err(TryRecvError::Empty) => {}
            }
        }
        self.naps = 0;
        rx.recv()
    }
}

/// What the workers share: the next input to take, how many the consumer
/// is done with, and where a taken input's receiver goes (`None` once the
/// consumer is done: nothing more is taken).
struct Taking<T, I> {
    next: usize,
    consumed: usize,
    handoff: Option<Sender<Receiver<T>>>,
    /// Workers waiting for the window to move: the consumer wakes them
    /// only then (a wake with no one waiting is still a system call, one
    /// for each input; docs/performance.md, "Fewer wakes").
    waiting: usize,
    /// The inputs fed so far ([`Source::Fed`]).
    fed: Vec<I>,
    /// Every input is known: all were given, or the last was fed.
    complete: bool,
}

/// [`Taking`] under its lock, with the condition workers wait on when the
/// window is full.
struct Gate<T, I> {
    taking: Mutex<Taking<T, I>>,
    moved: Condvar,
}

impl<T, I> Gate<T, I> {
    fn moved_on(&self) {
        if let Ok(mut t) = self.taking.lock() {
            t.consumed += 1;
            if t.waiting == 0 {
                return;
            }
        }
        self.moved.notify_all();
    }

    /// Nothing more is taken; workers waiting for the window give up.
    fn close(&self) {
        if let Ok(mut t) = self.taking.lock() {
            t.handoff = None;
        }
        self.moved.notify_all();
    }
}

/// Closes the gate when dropped: while `consume` unwinds.
struct Closing<'g, T, I> {
    gate: &'g Gate<T, I>,
    stop: &'g AtomicBool,
}

impl<T, I> Drop for Closing<'_, T, I> {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.gate.close();
    }
}

/// Run `work(i, &inputs[i], sender)` for every input of `source` on
/// `jobs` scoped threads (at least one; with [`Source::All`], at most one
/// per input), and `consume` on the calling thread with the receivers in
/// input order; each channel holds at most `capacity` messages, and at most
/// `ahead` inputs are taken ahead of the consumer ([`window`],
/// [`window_for_rows`]). With [`Source::Fed`], `consume` feeds the inputs
/// ([`Ordered::feed`], [`Ordered::fed_all`]) while the workers already take
/// them. When `consume` returns, no worker starts another input, and what
/// is left in the channels goes to `leftover`: `None` drops the receivers,
/// so a busy worker's next send fails and it stops there; `Some(f)` hands
/// `f` every message still sent until the busy workers finish (for
/// messages that own something to clean up).
pub(super) fn in_order<I, T, R>(
    source: Source<'_, I>,
    jobs: usize,
    ahead: usize,
    capacity: usize,
    work: impl Fn(usize, &I, SyncSender<T>) + Sync,
    consume: impl FnOnce(&mut Ordered<'_, T, I>) -> R,
    leftover: Option<&mut dyn FnMut(T)>,
) -> R
where
    I: Sync + Send + Clone,
    T: Send,
{
    #[cfg_attr(not(feature = "walk"), allow(clippy::infallible_destructuring_match))]
    let (all, ahead_fed) = match source {
        Source::All(inputs) => (Some(inputs), ahead),
        #[cfg(feature = "walk")]
        Source::Fed { ahead } => (None, ahead),
    };
    let jobs = all.map_or(jobs, |inputs| jobs.min(inputs.len())).max(1);
    let (handoff, handed) = channel();
    let gate = Gate {
        taking: Mutex::new(Taking {
            next: 0,
            consumed: 0,
            handoff: Some(handoff),
            waiting: 0,
            fed: Vec::<I>::new(),
            complete: all.is_some(),
        }),
        moved: Condvar::new(),
    };
    let ahead = ahead.max(1);
    let stop = AtomicBool::new(false);
    // The next input and its sender, its receiver already on its way to
    // the consumer; `None` when there is nothing more to take.
    let take = || {
        let mut t = gate.taking.lock().ok()?;
        loop {
            let known = all.map_or(t.fed.len(), <[I]>::len);
            let window = if t.complete {
                ahead
            } else {
                ahead_fed.max(ahead)
            };
            let full = t.next >= t.consumed + window;
            if t.handoff.is_none() || (t.complete && t.next >= known) {
                return None;
            }
            if !full && t.next < known {
                break;
            }
            // The window is full, or the next input is not fed yet.
            t.waiting += 1;
            t = gate.moved.wait(t).ok()?;
            t.waiting -= 1;
        }
        let i = t.next;
        // A fed input is cloned out: the list it is in may grow.
        let fed = match all {
            Some(_) => None,
            None => Some(t.fed[i].clone()),
        };
        let (tx, rx) = sync_channel::<T>(capacity);
        t.handoff.as_ref()?.send(rx).ok()?;
        t.next += 1;
        if t.complete && t.next == all.map_or(t.fed.len(), <[I]>::len) {
            // The last receiver is handed off: the consumer's `next` after
            // it ends instead of waiting.
            t.handoff = None;
        }
        Some((i, fed, tx))
    };
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    let Some((i, fed, tx)) = take() else { break };
                    match (&fed, all) {
                        (Some(input), _) => work(i, input, tx),
                        (None, Some(inputs)) => work(i, &inputs[i], tx),
                        (None, None) => unreachable!("a fed input is taken with itself"),
                    }
                }
            });
        }
        let mut ordered = Ordered {
            handoff: handed,
            current: None,
            taking: &gate,
        };
        // Should `consume` panic, the workers waiting for the window or
        // for an input to be fed are let go, so that the scope can join
        // them and pass the panic on instead of waiting forever.
        let closing = Closing {
            gate: &gate,
            stop: &stop,
        };
        let r = consume(&mut ordered);
        std::mem::forget(closing);
        stop.store(true, Ordering::Relaxed);
        // No input is taken from now on (a worker waiting for the window
        // wakes and gives up); the receivers of those taken but not
        // consumed are in the hand-off.
        gate.close();
        match leftover {
            None => drop(ordered),
            Some(f) => {
                let Ordered {
                    handoff, current, ..
                } = ordered;
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
    use super::{NAP, NAPS, RecvError, Source, Waiter, in_order, sync_channel};

    #[test]
    fn results_come_in_input_order_whatever_the_threads() {
        let inputs: Vec<u64> = (0..64).collect();
        for jobs in [1, 2, 5, 100] {
            let got = in_order(
                Source::All(&inputs),
                jobs,
                super::window(jobs),
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

    #[cfg(feature = "walk")]
    /// Inputs fed by the consumer are taken while it still feeds: the
    /// consumer feeds the first, waits for the worker's answer to it (a
    /// pool that waited for the last input would never give one), then
    /// feeds the rest; the results come in input order, and none, or a
    /// few, are fed at all.
    #[test]
    fn fed_inputs_are_taken_as_they_come_in_order() {
        use std::sync::mpsc::channel;
        use std::time::Duration;
        for jobs in [1, 2, 5] {
            for n in [0u64, 1, 2, 64] {
                let (seen_tx, seen_rx) = channel::<u64>();
                let seen_tx = std::sync::Mutex::new(seen_tx);
                let got = in_order(
                    Source::Fed { ahead: 8 },
                    jobs,
                    super::window(jobs),
                    1,
                    |i, x: &u64, tx| {
                        let _ = seen_tx.lock().unwrap().send(*x);
                        std::thread::sleep(Duration::from_micros(64 - x % 64));
                        let _ = tx.send((i, *x));
                    },
                    |rx| {
                        if n > 0 {
                            rx.feed(100);
                            let first = seen_rx.recv_timeout(Duration::from_secs(30));
                            assert_eq!(
                                first,
                                Ok(100),
                                "the first input is taken before the rest are fed"
                            );
                        }
                        for x in 1..n {
                            rx.feed(100 + x);
                        }
                        rx.fed_all();
                        let mut got = Vec::new();
                        while let Some(r) = rx.next() {
                            got.extend(r.iter());
                        }
                        got
                    },
                    None,
                );
                let want: Vec<_> = (0..n).map(|i| (i as usize, 100 + i)).collect();
                assert_eq!(got, want, "{jobs} jobs, {n} inputs");
            }
        }
    }

    #[cfg(feature = "walk")]
    /// While the consumer feeds (and plays nothing), the workers take as
    /// far as the feeding window; after, no farther than the run's.
    #[test]
    fn the_feeding_window_holds_until_all_are_fed() {
        use std::time::Duration;
        let taken = AtomicUsize::new(0);
        let (ahead, feeding) = (4, 32);
        let sum = in_order(
            Source::Fed { ahead: feeding },
            2,
            ahead,
            4,
            |_, x: &u32, tx| {
                taken.fetch_add(1, Ordering::SeqCst);
                let _ = tx.send(*x);
            },
            |rx| {
                for x in 0..100 {
                    rx.feed(x);
                }
                // Time for the workers to take all they may.
                let deadline = std::time::Instant::now() + Duration::from_secs(30);
                while taken.load(Ordering::SeqCst) < feeding && std::time::Instant::now() < deadline
                {
                    std::thread::sleep(Duration::from_millis(1));
                }
                std::thread::sleep(Duration::from_millis(20));
                assert_eq!(taken.load(Ordering::SeqCst), feeding, "taken while feeding");
                rx.fed_all();
                // All fed: the run's window, from what is consumed (nothing).
                std::thread::sleep(Duration::from_millis(20));
                assert_eq!(taken.load(Ordering::SeqCst), feeding, "taken after");
                let mut sum = 0;
                while let Some(r) = rx.next() {
                    sum += r.recv().unwrap();
                }
                sum
            },
            None,
        );
        assert_eq!(sum, (0..100).sum::<u32>());
        assert_eq!(taken.load(Ordering::SeqCst), 100);
    }

    /// A consumer that panics while workers wait (for the window, or for
    /// an input not fed yet) passes its panic on: the workers are let go.
    #[test]
    fn a_consumer_that_panics_lets_the_workers_go() {
        let inputs: Vec<u32> = (0..100).collect();
        let r = std::panic::catch_unwind(|| {
            in_order(
                Source::All(&inputs),
                2,
                2,
                1,
                |_, n, tx| {
                    let _ = tx.send(*n);
                },
                |rx| {
                    rx.next();
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    panic!("consumer");
                },
                None,
            )
        });
        assert!(r.is_err());
        #[cfg(feature = "walk")]
        {
            let r = std::panic::catch_unwind(|| {
                in_order(
                    Source::Fed { ahead: 4 },
                    2,
                    2,
                    1,
                    |_, n: &u32, tx| {
                        let _ = tx.send(*n);
                    },
                    |rx| {
                        rx.feed(1);
                        std::thread::sleep(std::time::Duration::from_millis(20));
                        panic!("consumer");
                    },
                    None,
                )
            });
            assert!(r.is_err());
        }
    }

    #[test]
    fn a_consumer_that_stops_early_stops_the_workers() {
        let inputs: Vec<u32> = (0..1000).collect();
        let started = AtomicUsize::new(0);
        let first = in_order(
            Source::All(&inputs),
            2,
            super::window(2),
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
            Source::All(&inputs),
            3,
            super::window(3),
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

    #[test]
    fn workers_wait_for_a_consumer_that_lags() {
        // Small inputs whose whole output fits in a channel, and a slow
        // consumer: workers may not take more than the window ahead, and
        // with nothing else to wait for they take all of it.
        for jobs in [1, 2, 3] {
            for ahead in [super::window(jobs), super::window_for_rows(jobs)] {
                let inputs: Vec<u32> = (0..8 * ahead as u32).collect();
                let done = AtomicUsize::new(0);
                let most = AtomicUsize::new(0);
                let sum = in_order(
                    Source::All(&inputs),
                    jobs,
                    ahead,
                    4,
                    |i, n, tx| {
                        // The consumer counts an input done before asking
                        // for the next, so this is at least what the pool
                        // allows.
                        most.fetch_max(i + 1 - done.load(Ordering::SeqCst), Ordering::SeqCst);
                        let _ = tx.send(*n);
                    },
                    |rx| {
                        let mut sum = 0;
                        while let Some(r) = rx.next() {
                            sum += r.recv().unwrap();
                            std::thread::sleep(std::time::Duration::from_micros(200));
                            done.fetch_add(1, Ordering::SeqCst);
                        }
                        sum
                    },
                    None,
                );
                assert_eq!(sum, inputs.iter().sum::<u32>());
                let most = most.load(Ordering::SeqCst);
                assert!(
                    most <= ahead,
                    "{jobs} jobs took {most} inputs ahead, window {ahead}"
                );
                assert!(
                    most > ahead / 2,
                    "{jobs} jobs took only {most} inputs ahead, window {ahead}"
                );
            }
        }
    }

    use std::sync::atomic::{AtomicUsize, Ordering};

    /// The consumer's `recv` gives what was sent, in order, whether it came
    /// before, during or after the naps, then says when the sender is gone.
    #[test]
    fn recv_waits_through_the_naps_and_after() {
        let (tx, rx) = sync_channel(4);
        std::thread::scope(|s| {
            s.spawn(move || {
                tx.send(1).unwrap();
                std::thread::sleep(NAP / 2);
                tx.send(2).unwrap();
                // Past every nap: the consumer blocks on the channel.
                std::thread::sleep(NAP * (NAPS + 2));
                tx.send(3).unwrap();
            });
            let mut w = Waiter::new();
            assert_eq!(w.recv(&rx), Ok(1));
            assert_eq!(w.recv(&rx), Ok(2));
            assert_eq!(w.recv(&rx), Ok(3));
            assert_eq!(w.recv(&rx), Err(RecvError));
        });
    }

    /// After a message that came only past the naps, the next is waited
    /// for without them; one found at once brings them back.
    #[test]
    fn naps_stop_after_a_long_wait_and_come_back() {
        let (tx, rx) = sync_channel(4);
        let (go, started) = sync_channel(0);
        let (sent, was_sent) = sync_channel(0);
        std::thread::scope(|s| {
            s.spawn(move || {
                started.recv().unwrap();
                // Far past every nap, however slow the machine.
                std::thread::sleep(NAP * NAPS * 20);
                tx.send(1).unwrap();
                tx.send(2).unwrap();
                sent.send(()).unwrap();
            });
            let mut w = Waiter::new();
            assert_eq!(w.naps, NAPS);
            go.send(()).unwrap();
            assert_eq!(w.recv(&rx), Ok(1));
            assert_eq!(w.naps, 0);
            was_sent.recv().unwrap();
            assert_eq!(w.recv(&rx), Ok(2));
            assert_eq!(w.naps, NAPS);
        });
    }
}
