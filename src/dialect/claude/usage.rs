//! Claude Code repeats a message's `usage` on every line of that message
//! (one per content block, and again in `message_delta`): the latest snapshot
//! of each message counts, never the sum of the lines.

use crate::event::Usage;

/// Messages whose usage is still tracked individually.
const USAGE_RING: usize = 16;

/// Usage snapshots per message id, turned into a session running total.
#[derive(Default)]
pub(super) struct MessageUsage {
    /// Messages that left the ring, summed.
    settled: Usage,
    /// Recent messages: id, latest snapshot, whether `message_delta` gave it.
    ring: Vec<(String, Usage, bool)>,
}

impl MessageUsage {
    /// Record a snapshot of message `id`; the session total so far.
    pub(super) fn update(&mut self, id: &str, u: Usage, last: bool) -> Usage {
        match self.ring.iter_mut().find(|(i, _, _)| i == id) {
            Some((_, cur, fin)) => {
                *cur = max_usage(cur, &u);
                *fin |= last;
            }
            None => {
                if self.ring.len() >= USAGE_RING {
                    let (_, old, _) = self.ring.remove(0);
                    self.settled = self.settled.add(&old);
                }
                self.ring.push((id.to_owned(), u, last));
            }
        }
        self.ring
            .iter()
            .fold(self.settled, |acc, (_, u, _)| acc.add(u))
    }

    /// The total of every message so far.
    pub(super) fn total(&self) -> Usage {
        self.ring
            .iter()
            .fold(self.settled, |acc, (_, u, _)| acc.add(u))
    }

    /// The final usage of message `id`, when `message_delta` reported it.
    pub(super) fn final_of(&self, id: &str) -> Option<Usage> {
        self.ring
            .iter()
            .find(|(i, _, fin)| i == id && *fin)
            .map(|(_, u, _)| *u)
    }
}

/// Field-wise maximum.
pub(super) fn max_usage(a: &Usage, b: &Usage) -> Usage {
    let m = |x: Option<u64>, y: Option<u64>| match (x, y) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, y) => x.or(y),
    };
    Usage {
        input: a.input.max(b.input),
        output: a.output.max(b.output),
        cache_read: m(a.cache_read, b.cache_read),
        cache_write: m(a.cache_write, b.cache_write),
        cache_write_1h: m(a.cache_write_1h, b.cache_write_1h),
        ..Usage::default()
    }
}
