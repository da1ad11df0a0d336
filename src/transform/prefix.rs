//! Constant-size memory of a growing text: its length and a running hash.
//!
//! Enough to answer "does this snapshot extend what was emitted so far, and
//! by what tail?" in time linear in the snapshot, without keeping the text
//! itself (SPEC §4: "a length and a running hash suffice"). Used for recap
//! dedupe, the authoritative result text and cumulative tool output.

/// Two independent 64-bit FNV-style lanes: 128 bits of state makes an
/// accidental match of a non-extending snapshot vanishingly unlikely.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Hash(u64, u64);

const OFFSET_A: u64 = 0xcbf2_9ce4_8422_2325;
const PRIME_A: u64 = 0x0000_0100_0000_01b3;
const OFFSET_B: u64 = 0x6c62_272e_07bb_0142;
const PRIME_B: u64 = 0x9e37_79b9_7f4a_7c15;

impl Default for Hash {
    fn default() -> Self {
        Hash(OFFSET_A, OFFSET_B)
    }
}

impl Hash {
    fn update(&mut self, bytes: &[u8]) {
        let (mut a, mut b) = (self.0, self.1);
        for &x in bytes {
            a = (a ^ x as u64).wrapping_mul(PRIME_A);
            b = (b ^ x as u64).wrapping_mul(PRIME_B).rotate_left(23);
        }
        *self = Hash(a, b);
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

    /// Bytes remembered.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when nothing was pushed since the last reset.
    pub fn is_empty(&self) -> bool {
        self.len == 0
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
        let mut a = Prefix::default();
        a.push("héllo wörld");
        let mut b = Prefix::default();
        for c in ["h", "é", "llo ", "", "wö", "rld"] {
            b.push(c);
        }
        assert_eq!(a, b);
    }

    #[test]
    fn never_cuts_inside_a_character() {
        let mut p = Prefix::default();
        p.push("a");
        // Same first byte count but the snapshot's char boundary differs.
        assert_eq!(p.tail_of("é"), None);
    }
}
