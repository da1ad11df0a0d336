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

/// `[image: image/png, 48.2 KiB]` for the base64 payload `b64`
/// (its decoded size; a type that is not an image says `attachment`).
pub fn image_placeholder(media_type: &str, b64: &str) -> String {
    let body = b64.trim_end_matches('=');
    let bytes = body.len() * 3 / 4;
    let kind = if media_type.is_empty() {
        "unknown type"
    } else {
        media_type
    };
    let size = if bytes < 1024 {
        format!("{bytes} B")
    } else if bytes < 1024 * 1024 {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
    };
    let what = if media_type.starts_with("image/") || media_type.is_empty() {
        "image"
    } else {
        "attachment"
    };
    format!("[{what}: {kind}, {size}]")
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
