//! [`CallTable`]: the one structure that remembers tool calls by id.
//!
//! Readers (call id → tool name), the normalizer (open calls), the adapters
//! and the formats all need "the calls I have seen and not finished, by id":
//! bounded, because a stream may start calls it never completes; insertion
//! ordered, because calls still open when a session ends are closed in the
//! order they started; and O(1) by id, because a hostile stream can hold
//! thousands open at once and every event would otherwise scan them.

use std::collections::{HashMap, VecDeque};
use std::rc::Rc;

/// Calls one table remembers at once; past it the oldest is evicted. Real
/// agents keep a handful open; the bound is for streams that never close.
pub const MAX_OPEN_CALLS: usize = 4096;

/// Tool calls by id: bounded, insertion-ordered, O(1) lookup.
///
/// Removal leaves the id's slot in the order queue behind (a tombstone,
/// recognized because its sequence number no longer matches); the queue is
/// compacted when tombstones make up half of it, so memory stays within a
/// constant factor of the live calls.
#[derive(Debug)]
pub struct CallTable<V> {
    /// foldhash rather than SipHash: ids are short and every tool call is
    /// looked up several times (seeded per table all the same).
    map: HashMap<Rc<str>, (u64, V), foldhash::fast::RandomState>,
    order: VecDeque<(u64, Rc<str>)>,
    next: u64,
    cap: usize,
}

impl<V> Default for CallTable<V> {
    fn default() -> Self {
        CallTable::new(MAX_OPEN_CALLS)
    }
}

impl<V> CallTable<V> {
    /// An empty table that keeps at most `cap` calls (at least one).
    pub fn new(cap: usize) -> Self {
        CallTable {
            map: HashMap::default(),
            order: VecDeque::new(),
            next: 0,
            cap: cap.max(1),
        }
    }

    /// Remember `v` for `id`, as the newest call. An id already there is
    /// replaced and becomes the newest. Returns the oldest call when the
    /// table was full and had to let it go.
    pub fn insert(&mut self, id: &str, v: V) -> Option<(Rc<str>, V)> {
        let seq = self.next;
        self.next += 1;
        let key: Rc<str> = match self.map.get_key_value(id) {
            Some((k, _)) => Rc::clone(k),
            None => Rc::from(id),
        };
        self.order.push_back((seq, Rc::clone(&key)));
        let evicted = if self.map.insert(key, (seq, v)).is_none() && self.map.len() > self.cap {
            self.pop_oldest()
        } else {
            None
        };
        self.compact();
        evicted
    }

    /// The value remembered for `id`.
    pub fn get(&self, id: &str) -> Option<&V> {
        self.map.get(id).map(|(_, v)| v)
    }

    /// The value remembered for `id`, to change in place.
    pub fn get_mut(&mut self, id: &str) -> Option<&mut V> {
        self.map.get_mut(id).map(|(_, v)| v)
    }

    /// Whether `id` is in the table.
    pub fn contains(&self, id: &str) -> bool {
        self.map.contains_key(id)
    }

    /// Forget `id`, returning what was remembered.
    pub fn remove(&mut self, id: &str) -> Option<V> {
        let (_, v) = self.map.remove(id)?;
        // Keep the newest live call at the back, so `newest` is O(1); each
        // slot is popped once, so this is amortized O(1) too.
        while self
            .order
            .back()
            .is_some_and(|(seq, id)| self.map.get(id).is_none_or(|(s, _)| s != seq))
        {
            self.order.pop_back();
        }
        self.compact();
        Some(v)
    }

    /// The call remembered last.
    pub fn newest(&self) -> Option<(&str, &V)> {
        // The back of the queue is live: inserting pushes a live slot, and
        // removing pops the dead ones behind it.
        let (seq, id) = self.order.back()?;
        let (s, v) = self.map.get(id)?;
        (s == seq).then_some((&**id, v))
    }

    /// The number of calls remembered.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when no call is remembered.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Forget the oldest call, returning it.
    pub fn pop_oldest(&mut self) -> Option<(Rc<str>, V)> {
        while let Some((seq, id)) = self.order.pop_front() {
            if self.map.get(&id).is_some_and(|(s, _)| *s == seq) {
                let (_, v) = self.map.remove(&id).expect("just looked up");
                return Some((id, v));
            }
        }
        None
    }

    /// Forget every call, oldest first.
    pub fn drain(&mut self) -> impl Iterator<Item = (Rc<str>, V)> + '_ {
        std::iter::from_fn(|| self.pop_oldest())
    }

    /// The calls remembered, oldest first.
    #[cfg(test)]
    pub fn iter(&self) -> impl Iterator<Item = (&str, &V)> {
        self.order.iter().filter_map(|(seq, id)| {
            let (s, v) = self.map.get(id)?;
            (s == seq).then_some((&**id, v))
        })
    }

    /// Drop tombstones once they are half the queue (amortized O(1)).
    fn compact(&mut self) {
        if self.order.len() > 2 * self.map.len() + 16 {
            let map = &self.map;
            self.order
                .retain(|(seq, id)| map.get(id).is_some_and(|(s, _)| s == seq));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn oldest_goes_first_when_full() {
        let mut t = CallTable::new(2);
        assert!(t.insert("a", 1).is_none());
        assert!(t.insert("b", 2).is_none());
        let (id, v) = t.insert("c", 3).expect("full");
        assert_eq!((&*id, v), ("a", 1));
        assert_eq!(t.iter().collect::<Vec<_>>(), [("b", &2), ("c", &3)]);
    }

    #[test]
    fn reinserting_makes_a_call_the_newest() {
        let mut t = CallTable::new(2);
        t.insert("a", 1);
        t.insert("b", 2);
        assert!(t.insert("a", 10).is_none(), "replacing does not evict");
        let (id, _) = t.insert("c", 3).expect("full");
        assert_eq!(&*id, "b");
        assert_eq!(
            t.drain()
                .map(|(k, v)| (k.to_string(), v))
                .collect::<Vec<_>>(),
            [("a".to_owned(), 10), ("c".to_owned(), 3)]
        );
        assert!(t.is_empty());
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u8, u32),
        Remove(u8),
        PopOldest,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u8..12, any::<u32>()).prop_map(|(k, v)| Op::Insert(k, v)),
            (0u8..12).prop_map(Op::Remove),
            Just(Op::PopOldest),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// The table behaves as an ordered list of (id, value) with the
        /// same rules, and its queue stays within a constant of the live size.
        #[test]
        fn agrees_with_a_list(cap in 1usize..6, ops in prop::collection::vec(op(), 0..200)) {
            let mut t = CallTable::new(cap);
            let mut model: Vec<(String, u32)> = Vec::new();
            for op in ops {
                match op {
                    Op::Insert(k, v) => {
                        let id = k.to_string();
                        let was = model.iter().position(|(i, _)| *i == id);
                        if let Some(p) = was {
                            model.remove(p);
                        }
                        model.push((id.clone(), v));
                        let want = (was.is_none() && model.len() > cap).then(|| model.remove(0));
                        let got = t.insert(&id, v).map(|(i, v)| (i.to_string(), v));
                        prop_assert_eq!(got, want);
                    }
                    Op::Remove(k) => {
                        let id = k.to_string();
                        let want = model.iter().position(|(i, _)| *i == id).map(|p| model.remove(p).1);
                        prop_assert_eq!(t.remove(&id), want);
                    }
                    Op::PopOldest => {
                        let want = (!model.is_empty()).then(|| model.remove(0));
                        prop_assert_eq!(t.pop_oldest().map(|(i, v)| (i.to_string(), v)), want);
                    }
                }
                let got: Vec<(String, u32)> = t.iter().map(|(i, v)| (i.to_owned(), *v)).collect();
                prop_assert_eq!(&got, &model);
                prop_assert_eq!(t.len(), model.len());
                prop_assert_eq!(
                    t.newest().map(|(i, v)| (i.to_owned(), *v)),
                    model.last().cloned()
                );
                prop_assert!(t.order.len() <= 2 * t.map.len() + 17);
            }
        }
    }
}
