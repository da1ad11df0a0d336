//! A counting global allocator for the memory tests: it keeps the live heap
//! bytes and their peak, so a test can measure the peak a conversion adds.
//! The counters are global, so a memory test runs alone: it holds
//! `exclusive()` from its first line (building its input allocates too) to
//! its last, and the other tests of this binary wait without allocating.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

#[global_allocator]
static A: Counting = Counting;

pub struct Counting;

static ALONE: Mutex<()> = Mutex::new(());

/// Held for the whole of a memory test. A test that failed (a panic while
/// holding it) does not stop the others from measuring.
pub fn exclusive() -> MutexGuard<'static, ()> {
    ALONE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            let now = LIVE.fetch_add(l.size(), Ordering::Relaxed) + l.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new_size: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, l, new_size) };
        if !q.is_null() {
            if new_size >= l.size() {
                let grow = new_size - l.size();
                let now = LIVE.fetch_add(grow, Ordering::Relaxed) + grow;
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                LIVE.fetch_sub(l.size() - new_size, Ordering::Relaxed);
            }
        }
        q
    }
}

/// The peak of live heap bytes while `f` runs, above what was live before
/// it, and what `f` returned. Needs `Counting` as the global allocator.
pub fn peak_during<T>(f: impl FnOnce() -> T) -> (usize, T) {
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let r = f();
    (PEAK.load(Ordering::Relaxed) - before, r)
}
