//! Small string helpers shared by several stages (a leaf module: it
//! depends on nothing in the crate, so any stage may use it).

/// The largest index ≤ `max` that is a char boundary of `s`.
pub fn floor_char_boundary(s: &str, max: usize) -> usize {
    if s.len() <= max {
        return s.len();
    }
    let mut i = max;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_fall_on_char_boundaries() {
        assert_eq!(floor_char_boundary("abc", 10), 3);
        assert_eq!(floor_char_boundary("aé", 2), 1);
        assert_eq!(floor_char_boundary("aé", 3), 3);
        assert_eq!(floor_char_boundary("", 0), 0);
    }
}
