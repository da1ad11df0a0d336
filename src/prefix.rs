//! Constant-size memory of a growing text: its length and a running hash.
//!
//! Enough to answer "does this snapshot extend what was emitted so far, and
//! by what tail?" in time linear in the snapshot, without keeping the text
//! itself (docs/events.md#memory-per-call-and-per-text). Used for recap
//! dedupe, the authoritative result text and cumulative tool output.
//!
//! The hash consumes eight bytes per step (bytes that do not fill a word yet
//! wait in `pending`), so it costs a fraction of a byte-at-a-time hash on
//! the hot path, and feeding the same bytes in any chunks gives the same
//! state.

/// Two independent 64-bit lanes: 128 bits of state makes an accidental match
/// of a non-extending snapshot vanishingly unlikely.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Hash {
    a: u64,
    b: u64,
    /// Bytes of the current, unfinished word (little-endian).
    pending: u64,
    /// How many bytes `pending` holds (0..8).
    npending: u32,
}

const SEED_A: u64 = 0xcbf2_9ce4_8422_2325;
const SEED_B: u64 = 0x6c62_272e_07bb_0142;
const MUL_A: u64 = 0x517c_c1b7_2722_0a95;
const MUL_B: u64 = 0x9e37_79b9_7f4a_7c15;

impl Default for Hash {
    fn default() -> Self {
        Hash {
            a: SEED_A,
            b: SEED_B,
            pending: 0,
            npending: 0,
        }
    }
}

impl Hash {
    #[inline]
    fn word(&mut self, w: u64) {
        self.a = (self.a.rotate_left(5) ^ w).wrapping_mul(MUL_A);
        self.b = (self.b.rotate_left(23) ^ w.rotate_left(32)).wrapping_mul(MUL_B);
    }

    fn update(&mut self, mut bytes: &[u8]) {
        // Top up the unfinished word first: deltas are often a few bytes
        // (one token), so this is the common path, done in one load.
        if self.npending != 0 {
            let take = (8 - self.npending as usize).min(bytes.len());
            self.pending |= load(&bytes[..take]) << (8 * self.npending);
            self.npending += take as u32;
            bytes = &bytes[take..];
            if self.npending < 8 {
                return;
            }
            let w = self.pending;
            self.word(w);
            self.pending = 0;
            self.npending = 0;
        }
        let mut words = bytes.chunks_exact(8);
        for c in &mut words {
            self.word(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = words.remainder();
        self.pending = load(rest);
        self.npending = rest.len() as u32;
    }
}

/// Up to eight bytes as a little-endian word (the missing high bytes zero),
/// without a byte-at-a-time loop: two overlapping loads.
#[inline]
fn load(b: &[u8]) -> u64 {
    let n = b.len();
    debug_assert!(n <= 8);
    if n >= 4 {
        let lo = u64::from(u32::from_le_bytes(b[..4].try_into().expect("4 bytes")));
        let hi = u64::from(u32::from_le_bytes(b[n - 4..].try_into().expect("4 bytes")));
        // The two overlap on equal bytes, so OR joins them.
        lo | (hi << (8 * (n - 4)))
    } else if n > 0 {
        u64::from(b[0])
            | (u64::from(b[n / 2]) << (8 * (n / 2)))
            | (u64::from(b[n - 1]) << (8 * (n - 1)))
    } else {
        0
    }
}

/// What has been emitted, remembered as length + hash.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Prefix {
    len: usize,
    hash: Hash,
}

impl Prefix {
    /// Record that `s` was appended.
    pub fn push(&mut self, s: &str) {
        self.len += s.len();
        self.hash.update(s.as_bytes());
    }

    /// Forget everything.
    pub fn reset(&mut self) {
        *self = Prefix::default();
    }

    /// If `snapshot` starts with the remembered text, the part after it.
    pub fn tail_of<'s>(&self, snapshot: &'s str) -> Option<&'s str> {
        if snapshot.len() < self.len || !snapshot.is_char_boundary(self.len) {
            return None;
        }
        let mut h = Hash::default();
        h.update(&snapshot.as_bytes()[..self.len]);
        (h == self.hash).then(|| &snapshot[self.len..])
    }

    /// Remember exactly `s` (replacing what was remembered).
    pub fn set(&mut self, s: &str) {
        self.reset();
        self.push(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extends_and_tails() {
        let mut p = Prefix::default();
        assert_eq!(p.tail_of("abc"), Some("abc"));
        p.push("ab");
        p.push("c");
        assert_eq!(p.tail_of("abcdef"), Some("def"));
        assert_eq!(p.tail_of("abc"), Some(""));
        assert_eq!(p.tail_of("ab"), None);
        assert_eq!(p.tail_of("abX"), None);
        assert_eq!(p.tail_of("xbcdef"), None);
    }

    #[test]
    fn chunking_does_not_matter() {
        let text = "héllo wörld, a longer text that spans several words ✓✓";
        let mut whole = Prefix::default();
        whole.push(text);
        for step in 1..=17 {
            let mut p = Prefix::default();
            let mut i = 0;
            while i < text.len() {
                let mut j = (i + step).min(text.len());
                while !text.is_char_boundary(j) {
                    j += 1;
                }
                p.push(&text[i..j]);
                i = j;
            }
            assert_eq!(p, whole, "chunks of {step}");
        }
    }

    #[test]
    fn every_prefix_is_recognized_and_others_are_not() {
        let text = "The quick brown fox jumps over the lazy dog 0123456789";
        for cut in 0..=text.len() {
            let mut p = Prefix::default();
            p.push(&text[..cut]);
            assert_eq!(p.tail_of(text), Some(&text[cut..]), "cut {cut}");
            if cut > 0 {
                let mut other = text[..cut].to_owned();
                other.replace_range(cut - 1..cut, "#");
                other.push_str("tail");
                assert_eq!(p.tail_of(&other), None, "altered at {cut}");
            }
        }
    }

    #[test]
    fn words_load_like_bytes() {
        let bytes: Vec<u8> = (1..=8).collect();
        for n in 0..=8 {
            let mut want = 0u64;
            for (i, &b) in bytes[..n].iter().enumerate() {
                want |= u64::from(b) << (8 * i);
            }
            assert_eq!(load(&bytes[..n]), want, "{n} bytes");
        }
    }

    #[test]
    fn never_cuts_inside_a_character() {
        let mut p = Prefix::default();
        p.push("a");
        // Same first byte count but the snapshot's char boundary differs.
        assert_eq!(p.tail_of("é"), None);
    }
}
