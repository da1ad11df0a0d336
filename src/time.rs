//! RFC 3339 dates both ways: input timestamps are read into epoch
//! milliseconds, and the documents' `created` is written from Unix seconds.
//! Both use the proleptic Gregorian calendar in UTC.

/// The wall clock, in epoch milliseconds: the one place cstream reads it.
/// A run reads it once, when it starts ([`crate::run::Config::pinned`]), for
/// the `created` of sessions that carry no time and for `--since 7d`; a
/// caller that pins the run's start (`Config::run_start`) makes the output
/// independent of it.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// [`now_ms`] in whole Unix seconds.
pub fn now_secs() -> i64 {
    now_ms().div_euclid(1000)
}

/// The times an event may carry, in epoch milliseconds: years 0000 to 9999,
/// what an RFC 3339 date (the documents' `created`) can write. Input
/// timestamps outside it are dropped with a warning when read.
pub const TS_RANGE_MS: std::ops::RangeInclusive<i64> = -62_167_219_200_000..=253_402_300_799_999;

/// Parse an RFC 3339 / ISO 8601 UTC-or-offset timestamp
/// (`2026-08-08T08:41:35.559Z`) into epoch milliseconds.
pub fn iso_ms(s: &str) -> Option<i64> {
    // Byte by byte, with no allocation: every dated record of every dialect
    // comes through here, and building the fraction's digits as a `String`
    // and parsing each field with `str::parse` cost about 1,100
    // instructions a call (docs/performance.md, "Dates read in place").
    let b = s.as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let (y, mo, d) = (digits(b, 0, 4)?, digits(b, 5, 2)?, digits(b, 8, 2)?);
    let (h, mi, sec) = (digits(b, 11, 2)?, digits(b, 14, 2)?, digits(b, 17, 2)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let mut i = 19;
    let mut ms = 0i64;
    if b.get(i) == Some(&b'.') {
        i += 1;
        // Milliseconds: the first three digits, padded; finer ones dropped.
        let mut taken = 0;
        while let Some(c) = b.get(i).filter(|c| c.is_ascii_digit()) {
            if taken < 3 {
                ms = ms * 10 + i64::from(c - b'0');
                taken += 1;
            }
            i += 1;
        }
        for _ in taken..3 {
            ms *= 10;
        }
    }
    let offset_min = match b.get(i) {
        None | Some(b'Z') | Some(b'z') => 0,
        Some(c @ (b'+' | b'-')) => {
            let hh = digits(b, i + 1, 2)?;
            let mm = if b.get(i + 3) == Some(&b':') {
                digits(b, i + 4, 2)?
            } else {
                digits(b, i + 3, 2).unwrap_or(0)
            };
            let o = hh * 60 + mm;
            if *c == b'-' { -o } else { o }
        }
        _ => return None,
    };
    let days = days_from_civil(y, mo, d);
    let secs = days * 86_400 + h * 3600 + mi * 60 + sec - offset_min * 60;
    Some(secs * 1000 + ms)
}

/// The number written by the `n` ASCII digits at `at`; `None` when the text
/// is shorter or one of them is not a digit.
fn digits(b: &[u8], at: usize, n: usize) -> Option<i64> {
    let mut v = 0i64;
    for &c in b.get(at..at + n)? {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + i64::from(c - b'0');
    }
    Some(v)
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Unix seconds as RFC 3339 in UTC (`2026-02-23T10:30:00Z`), clamped to
/// years 0000 to 9999, all that format can write. Timestamps are checked
/// when read and `--created` when parsed; the clamp keeps a clock gone wild
/// from writing an invalid date.
pub fn iso8601(secs: i64) -> String {
    let range = TS_RANGE_MS;
    let secs = secs.clamp(range.start() / 1000, range.end() / 1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    // Digit by digit, not `format!`: a usage row, an event, a document each
    // write one, and the formatting machinery cost ten times the date's
    // arithmetic (2,800 instructions a call, docs/performance.md, "Session
    // rows written straight"). The clamp keeps the year in 0..=9999.
    let mut b = *b"0000-00-00T00:00:00Z";
    let mut two = |at: usize, v: i64| {
        b[at] = b'0' + (v / 10) as u8;
        b[at + 1] = b'0' + (v % 10) as u8;
    };
    two(0, year / 100);
    two(2, year % 100);
    two(5, month);
    two(8, day);
    two(11, rem / 3600);
    two(14, rem % 3600 / 60);
    two(17, rem % 60);
    String::from_utf8(b.to_vec()).expect("ASCII digits")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_timestamps() {
        assert_eq!(iso_ms("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(iso_ms("2026-08-08T08:41:35.559Z"), Some(1_786_178_495_559));
        assert_eq!(
            iso_ms("2026-08-08T10:41:35.559+02:00"),
            Some(1_786_178_495_559)
        );
        assert_eq!(iso_ms("2026-08-08T08:41:35.5Z"), Some(1_786_178_495_500));
        assert_eq!(iso_ms("yesterday"), None);
        assert_eq!(iso_ms("2026-13-08T08:41:35Z"), None);
    }

    #[test]
    fn iso_dates() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso8601(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(iso8601(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(iso8601(1_770_823_841), "2026-02-11T15:30:41Z");
        assert_eq!(iso8601(-1), "1969-12-31T23:59:59Z");
        // The extremes are clamped to what RFC 3339 can write.
        assert_eq!(iso8601(i64::MAX), "9999-12-31T23:59:59Z");
        assert_eq!(iso8601(253_402_300_800), "9999-12-31T23:59:59Z");
        assert_eq!(iso8601(i64::MIN), "0000-01-01T00:00:00Z");
    }

    /// The reader as it was before it read in place (string building and
    /// `str::parse`): the new one must answer as it did for any text.
    fn iso_ms_reference(s: &str) -> Option<i64> {
        let b = s.as_bytes();
        if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
            return None;
        }
        let num = |r: std::ops::Range<usize>| -> Option<i64> {
            let t = s.get(r)?;
            if !t.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            t.parse().ok()
        };
        let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
        let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
        if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
            return None;
        }
        let mut i = 19;
        let mut ms = 0i64;
        if b.get(i) == Some(&b'.') {
            i += 1;
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            let frac = &s[start..i];
            let digits: String = frac.chars().chain("000".chars()).take(3).collect();
            ms = digits.parse().ok()?;
        }
        let offset_min = match b.get(i) {
            None | Some(b'Z') | Some(b'z') => 0,
            Some(c @ (b'+' | b'-')) => {
                let hh = num(i + 1..i + 3)?;
                let mm = if b.get(i + 3) == Some(&b':') {
                    num(i + 4..i + 6)?
                } else {
                    num(i + 3..i + 5).unwrap_or(0)
                };
                let o = hh * 60 + mm;
                if *c == b'-' { -o } else { o }
            }
            _ => return None,
        };
        let days = days_from_civil(y, mo, d);
        let secs = days * 86_400 + h * 3600 + mi * 60 + sec - offset_min * 60;
        Some(secs * 1000 + ms)
    }

    proptest::proptest! {
        /// Any text, and texts shaped like timestamps with each part
        /// perturbed, read as the reference reads them.
        #[test]
        fn iso_ms_reads_as_the_reference(
            s in proptest::prop_oneof![
                ".{0,40}",
                "[0-9]{4}[-x][0-9]{2}-[0-9]{2}[Tt x][0-9]{2}:[0-9]{2}:[0-9x]{2}.{0,8}",
                "[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])[Tt ]([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\\.[0-9]{0,9})?([Zz]|[+-][0-9x]{0,2}(:?[0-9x]{0,3})?|[xé ].{0,3})?",
            ]
        ) {
            proptest::prop_assert_eq!(iso_ms(&s), iso_ms_reference(&s), "{:?}", s);
        }

        /// Every second of the range reads back as itself: the date is
        /// written digit by digit, and `iso_ms` parses it on its own path.
        #[test]
        fn iso_dates_read_back(secs in (*TS_RANGE_MS.start() / 1000)..=(*TS_RANGE_MS.end() / 1000)) {
            let s = iso8601(secs);
            proptest::prop_assert_eq!(s.len(), 20);
            proptest::prop_assert_eq!(iso_ms(&s), Some(secs * 1000), "{}", s);
        }
    }
}
