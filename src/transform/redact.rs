//! `--redact` (docs/redact.md): replace secrets with `[REDACTED:<kind>]`.
//!
//! A sink adapter between the normalizer and the output format, so it
//! applies to every format and every text-bearing field: prompts, text and
//! thinking, tool arguments, live and final tool output, patches, results,
//! errors and unknown records. Built-in patterns are high-precision (a
//! provider's fixed prefix plus a long token); `--redact-pattern REGEX`
//! adds the user's own (kind `custom`).
//!
//! Streams: a secret split across two deltas of one stream (text, thinking,
//! or one call's stdout/stderr) is still caught. When a delta ends in what
//! could be the start of a built-in secret (a run of token characters that
//! begins like one, or an unclosed PEM header), that tail — at most
//! [`WINDOW`] bytes — is held and put in front of the stream's next delta.
//! It is released at the latest when any other event comes (the block
//! ended), when the input goes idle, and when the session or run ends, so
//! output is never held longer than that. User patterns are matched within
//! each field (and across deltas only when a held tail happens to cover
//! them).

use std::borrow::Cow;
use std::cell::{Cell, OnceCell};
use std::io;
use std::rc::Rc;
use std::sync::{LazyLock, OnceLock};

use memchr::memmem;
use regex::Regex;

use crate::event::{Adapter, Event, Json, Kind, OutStream, Text};
use crate::event::{Session, Sink};

/// The most bytes of one stream held back to join a secret split across
/// deltas: a PEM private key (an RSA-4096 key is about 3.3 KB) fits.
pub const WINDOW: usize = 4096;

/// Built-in kinds, in the order `--stats` reports them.
///
/// A PEM body is matched by its own characters (base64, line breaks, also
/// JSON-escaped ones, and the `Proc-Type:`/`DEK-Info:` header lines), not
/// by a counted `.{1,N}`: the regex crate unrolls a counted repetition into
/// N copies, and `{1,8192}` made every run spend ~150 ms and 30 MiB
/// compiling this one pattern. Code that merely names both markers (a PEM
/// parser's source) has other characters between them and is left alone.
///
/// Word boundaries are ASCII ones, `(?-u:\b)`: every secret here is ASCII,
/// so the Unicode word tables a plain `\b` brings in buy nothing. The ASCII
/// boundary also matches after a non-ASCII letter (`ésk-ant-…`), which only
/// widens what is caught.
pub const KINDS: &[(&str, &str)] = &[
    (
        "pem_private_key",
        r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----[A-Za-z0-9+/=\s\\:,.\-]+?-----END [A-Z0-9 ]{0,40}PRIVATE KEY-----",
    ),
    ("anthropic_key", r"(?-u:\b)sk-ant-[A-Za-z0-9_\-]{20,}"),
    (
        "openai_key",
        r"(?-u:\b)sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
    ),
    ("google_api_key", r"(?-u:\b)AIza[0-9A-Za-z_\-]{35}"),
    (
        "aws_access_key_id",
        r"(?-u:\b)(?:AKIA|ASIA)[0-9A-Z]{16}(?-u:\b)",
    ),
    (
        "github_token",
        r"(?-u:\b)(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
    ),
    ("slack_token", r"(?-u:\b)xox[abprs]-[A-Za-z0-9\-]{10,}"),
    (
        "jwt",
        r"(?-u:\b)eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
    ),
];

/// How each built-in secret begins: a tail of a delta that is a prefix of
/// one of these (or starts with one) may be a secret cut in two.
const STARTS: &[&str] = &[
    "sk-",
    "AIza",
    "AKIA",
    "ASIA",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "xoxa-",
    "xoxb-",
    "xoxp-",
    "xoxr-",
    "xoxs-",
    "eyJ",
];
/// A literal that every match of a built-in kind contains, and the kinds
/// (bits by index in [`KINDS`]) that cannot match a text without it.
///
/// One scan for all of them ([`candidates`]) tells which patterns can
/// match at all; on most text none can, and then no regex
/// runs and nothing is allocated. The patterns still run on the whole
/// text when their literal is found, so what is matched is the same as
/// running every pattern. tests/it/redact_fast.rs checks each kind's
/// literal against its pattern.
pub const LITERALS: &[(&str, u32)] = &[
    ("-----BEGIN ", 1 << 0),
    // `sk-ant-` (anthropic) and `sk-…` (openai) both begin so.
    ("sk-", 1 << 1 | 1 << 2),
    ("AIza", 1 << 3),
    ("AKIA", 1 << 4),
    ("ASIA", 1 << 4),
    ("ghp_", 1 << 5),
    ("gho_", 1 << 5),
    ("ghu_", 1 << 5),
    ("ghs_", 1 << 5),
    ("ghr_", 1 << 5),
    ("github_pat_", 1 << 5),
    ("xoxa-", 1 << 6),
    ("xoxb-", 1 << 6),
    ("xoxp-", 1 << 6),
    ("xoxr-", 1 << 6),
    ("xoxs-", 1 << 6),
    ("eyJ", 1 << 7),
    // In a JSON string literal, `\u` may spell any of the characters
    // above: a literal that has one spelling such a character
    // (`spells_literal_byte`) is unescaped and searched whole.
    ("\\u", ESCAPE),
];
/// Which [`LITERALS`] occur in `s` (the union of their bits).
///
/// Every literal holds one of five bytes at a known place: `-` (`sk-`,
/// `-----BEGIN `, `xox?-`), `_` (`gh?_`, `github_pat_`), `\` (`\u`), `A`
/// (`AIza`, `AKIA`, `ASIA`) or `J` (`eyJ`). `ESC` says whether `\u` is
/// looked for: only a JSON string literal's escapes may hide a literal
/// ([`Redactor::may_redact_text`]); every other text is searched as it is,
/// and its `\u` (in a raw JSON value too: that is redacted as text) means
/// nothing, so it is not searched for. A text long enough for it is
/// searched by a packed (SIMD) searcher for the literals themselves
/// ([`packed_candidates`]); a shorter one by two vectorized byte searches
/// for those five bytes, each hit checked for the literals around it
/// ([`byte_candidates`]). A general Aho-Corasick automaton over the same
/// literals ran byte by byte (callgrind: 40 % more instructions for all
/// of `--to events --redact`): their first bytes, `s` and `e`, are too
/// common for its prefilter. `literal_scan_agrees_with_a_plain_search` and
/// `packed_scan_agrees_with_the_byte_scan` check both against [`LITERALS`].
fn candidates<const ESC: bool>(b: &[u8]) -> u32 {
    match &*PACKED {
        Some(p) if b.len() >= p.minimum_len() => packed_candidates::<ESC>(p, b),
        _ => byte_candidates::<ESC>(b),
    }
}

/// A packed (SIMD) searcher over [`LITERALS`] but `\u`: it looks for all
/// of them at once by their first three bytes (Teddy, from aho-corasick,
/// the crate the regex crate runs on), so a `-`, `_` or `A` that begins
/// none of them costs nothing, where each restarted the byte searches of
/// [`byte_candidates`]. `None` where the CPU has no such search (then
/// the byte searches run).
static PACKED: LazyLock<Option<aho_corasick::packed::Searcher>> = LazyLock::new(|| {
    aho_corasick::packed::Config::new()
        .match_kind(aho_corasick::packed::MatchKind::LeftmostFirst)
        .builder()
        .extend(PACKED_LITERALS.iter().map(|(l, _)| l))
        .build()
});

/// [`LITERALS`] without `\u` (found by its own search: a two-byte
/// pattern would make the packed searcher look at two bytes only).
const PACKED_LITERALS: &[(&str, u32)] = match LITERALS.split_last() {
    Some(((_, ESCAPE), rest)) => rest,
    _ => panic!("`\\u` must be the last of LITERALS"),
};

/// [`candidates`] by the packed searcher. It reports matches that do not
/// overlap; each search resumes one byte after the last match's start,
/// so a literal that begins inside another (`sk-----BEGIN `) is found.
/// Two literals never match at the same place (none begins another).
fn packed_candidates<const ESC: bool>(p: &aho_corasick::packed::Searcher, b: &[u8]) -> u32 {
    let mut m = 0;
    let mut from = 0;
    while let Some(hit) = p.find_in(b, aho_corasick::Span::from(from..b.len())) {
        m |= PACKED_LITERALS[hit.pattern().as_usize()].1;
        from = hit.start() + 1;
    }
    // A finder built once: `memmem::find` builds one per call, which cost
    // more than the search on a short delta.
    static ESCAPE_U: LazyLock<memmem::Finder<'static>> =
        LazyLock::new(|| memmem::Finder::new(b"\\u"));
    if ESC && ESCAPE_U.find(b).is_some() {
        m |= ESCAPE;
    }
    m
}

/// [`candidates`] by byte searches, for texts shorter than the packed
/// searcher takes (most deltas of streamed text).
fn byte_candidates<const ESC: bool>(b: &[u8]) -> u32 {
    // Most short deltas hold none of the five bytes: one test of every
    // byte that does not stop early (vector compares) says so, where the
    // two searches cost their setup on each delta.
    if !has_literal_byte::<ESC>(b) {
        return 0;
    }
    let at = |i: usize, lit: &[u8]| b.get(i..i + lit.len()) == Some(lit);
    let mut m = 0;
    for p in memchr::memchr3_iter(b'-', b'_', b'\\', b) {
        match b[p] {
            b'-' => {
                if p >= 2 && at(p - 2, b"sk-") {
                    m |= 1 << 1 | 1 << 2;
                }
                if at(p, b"-----BEGIN ") {
                    m |= 1 << 0;
                }
                if p >= 4 && at(p - 4, b"xox") && b"abprs".contains(&b[p - 1]) {
                    m |= 1 << 6;
                }
            }
            b'_' => {
                if p >= 3 && at(p - 3, b"gh") && b"pousr".contains(&b[p - 1])
                    || p >= 6 && at(p - 6, b"github_pat_")
                {
                    m |= 1 << 5;
                }
            }
            _ => {
                if b.get(p + 1) == Some(&b'u') {
                    m |= ESCAPE;
                }
            }
        }
    }
    if !ESC {
        m &= !ESCAPE;
    }
    for p in memchr::memchr2_iter(b'A', b'J', b) {
        if b[p] == b'A' {
            if at(p, b"AIza") {
                m |= 1 << 3;
            }
            if at(p, b"AKIA") || at(p, b"ASIA") {
                m |= 1 << 4;
            }
        } else if p >= 2 && at(p - 2, b"eyJ") {
            m |= 1 << 7;
        }
    }
    m
}

/// Whether `b` holds a byte every literal holds one of (`-`, `_`, `A`,
/// `J`, and `\` when `ESC`), by blocks of 16 bytes compared at once, the
/// last block padded with zeros (no literal's byte) in a copy: a streamed
/// delta is a few bytes (median 5 on the bench mix), and testing them one
/// at a time, as a plain fold over the slice did, cost more than the
/// vector compare of a whole block. `block_test_agrees_with_a_byte_walk`
/// checks it at every length around the block's.
fn has_literal_byte<const ESC: bool>(b: &[u8]) -> bool {
    has_byte(b, |c| {
        (c == b'-') | (c == b'_') | (c == b'A') | (c == b'J') | (ESC & (c == b'\\'))
    })
}

/// Whether a delta may hold a literal or end in the beginning of a secret
/// ([`held_tail`]): a delta without any of these bytes is passed on with
/// no further look. The literals' bytes as in [`has_literal_byte`]; a
/// held token run is at least [`MIN_HELD`] (3) bytes and begins with the
/// first three of one of [`STARTS`] (`sk-`, `AIz`, `AKI`, `ASI`, `gh?`,
/// `git`, `xox`, `eyJ`), so it holds `-`, `A`, `g`, `x` or `J`; and every
/// piece of a PEM header begins with `-`.
fn may_begin_or_hold(b: &[u8]) -> bool {
    has_byte(b, |c| {
        (c == b'-') | (c == b'_') | (c == b'A') | (c == b'J') | (c == b'g') | (c == b'x')
    })
}

/// Whether `hit` holds for a byte of `b`, by blocks of 16 bytes compared
/// at once (vector compares, no early exit), the last block padded with
/// zeros in a copy (`hit(0)` is false for every caller).
#[inline(always)]
fn has_byte(b: &[u8], hit: impl Fn(u8) -> bool + Copy) -> bool {
    let block = |c: &[u8; 16]| c.iter().fold(false, |a, &c| a | hit(c));
    let mut blocks = b.chunks_exact(16);
    let mut any = false;
    for c in &mut blocks {
        any |= block(c.try_into().expect("16 bytes"));
    }
    let rest = blocks.remainder();
    let mut last = [0u8; 16];
    last[..rest.len()].copy_from_slice(rest);
    any | block(&last)
}

/// Whether a `\u` escape in the JSON string literal `lit` may spell a
/// character of one of the [`LITERALS`] (which hold only ASCII letters,
/// digits, `-`, `_` and spaces): only then may the characters hold a
/// literal the escaped text does not show. Shell output is full of
/// `\u001b` (terminal colours), which spell none; before, each such
/// output was unescaped and searched a second time.
fn spells_literal_byte(lit: &[u8]) -> bool {
    memmem::find_iter(lit, b"\\u").any(|p| {
        let hex = |i: usize| lit.get(p + i).and_then(|&b| (b as char).to_digit(16));
        match (hex(2), hex(3), hex(4), hex(5)) {
            (Some(0), Some(0), Some(h), Some(l)) => {
                let b = (h * 16 + l) as u8;
                b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b' ')
            }
            // Not an escape of an ASCII character (or not an escape at
            // all: a malformed one is left to the unescaping).
            (Some(_), Some(_), Some(_), Some(_)) => false,
            _ => true,
        }
    })
}

/// The bit of `pem_private_key` (`-----BEGIN `).
const PEM: u32 = 1 << 0;
/// The bit of [`LITERALS`]' `\u`: not a kind.
const ESCAPE: u32 = 1 << 31;
/// Every built-in kind's bit.
const ALL_KINDS: u32 = (1 << KINDS.len()) - 1;

/// The shortest tail held: a secret cut within its first two characters
/// is not joined (docs/redact.md).
pub const MIN_HELD: usize = 3;
const PEM_BEGIN: &str = "-----BEGIN ";

fn is_token_byte(b: u8) -> bool {
    TOKEN_BYTE[b as usize]
}

/// [`is_token_byte`] by table: the held-tail check walks back over the
/// last run of these in every delta.
static TOKEN_BYTE: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.');
        b += 1;
    }
    t
};

/// Built-in pattern `i` of [`KINDS`], compiled the first time any
/// redactor of the process needs it: a pattern runs only on a text that
/// holds its literal, which most inputs never do for most kinds, and
/// compiling all eight up front was 5.3 M instructions (half an
/// instruction per byte of the 10 MiB bench mix). Compiled once per
/// process: `--output-dir` and `--jobs` build a pipeline per file, and
/// compiling the built-ins each time cost ~0.5 ms a file.
fn built_in(i: usize) -> &'static Regex {
    static BUILT_IN: [OnceLock<Regex>; KINDS.len()] = [const { OnceLock::new() }; KINDS.len()];
    BUILT_IN[i].get_or_init(|| Regex::new(KINDS[i].1).expect("built-in pattern is valid"))
}

/// Matches secrets in text.
pub struct Redactor {
    /// The built-in patterns, each a clone of [`built_in`]'s taken when
    /// first needed (a clone shares the compiled program but has its own
    /// scratch space, so redactors on several threads do not contend).
    built_in: [OnceCell<Regex>; KINDS.len()],
    /// The user's patterns (kind `custom`), compiled up front so that a
    /// bad one is reported before any input is read.
    user: Vec<Regex>,
    /// Matches per kind: the built-ins in [`KINDS`] order, then `user`.
    counts: Rc<Vec<Cell<u64>>>,
}

impl Redactor {
    /// The built-in patterns plus `user` (each a regex; kind `custom`).
    pub fn new(user: &[String]) -> Result<Self, regex::Error> {
        let user = user
            .iter()
            .map(|re| Regex::new(re))
            .collect::<Result<Vec<_>, _>>()?;
        let counts = Rc::new(
            (0..KINDS.len() + user.len())
                .map(|_| Cell::new(0))
                .collect(),
        );
        Ok(Redactor {
            built_in: [const { OnceCell::new() }; KINDS.len()],
            user,
            counts,
        })
    }

    /// Counts per kind, shared with the caller, for `--stats`.
    pub fn counter(&self) -> RedactCounts {
        RedactCounts {
            kinds: KINDS
                .iter()
                .map(|(k, _)| *k)
                .chain(self.user.iter().map(|_| "custom"))
                .collect(),
            counts: Rc::clone(&self.counts),
        }
    }

    /// Pattern `i`: a built-in (by index in [`KINDS`]) or, past them, a
    /// user's; with the kind it reports.
    fn pattern(&self, i: usize) -> (&'static str, &Regex) {
        match KINDS.get(i) {
            Some((kind, _)) => (kind, self.built_in[i].get_or_init(|| built_in(i).clone())),
            None => ("custom", &self.user[i - KINDS.len()]),
        }
    }

    /// Which built-in kinds can match `s` (bits by index in [`KINDS`]).
    fn candidates(&self, s: &str) -> u32 {
        candidates::<false>(s.as_bytes())
    }

    /// Whether [`Self::redact`] may change `s`: false only when it surely
    /// will not.
    fn may_redact(&self, s: &str) -> bool {
        self.may_redact_kinds(self.candidates(s))
    }

    /// [`Self::may_redact`] of a text whose [`Self::candidates`] are `kinds`.
    fn may_redact_kinds(&self, kinds: u32) -> bool {
        !self.user.is_empty() || kinds & ALL_KINDS != 0
    }

    /// Whether [`Self::redact`] may change `t`'s characters. A JSON string
    /// literal is searched as it is, not unescaped first (tool output is
    /// most of the bytes, and unescaping it allocates): the literals hold
    /// only letters, digits, `-`, `_` and spaces, which an escape other
    /// than `\u` never spells, so one found in the characters is in the
    /// literal too.
    fn may_redact_text(&self, t: &Text<'_>) -> bool {
        match t {
            Text::Plain(s) => self.may_redact(s),
            Text::Json(lit) => {
                let kinds = candidates::<true>(lit.as_bytes());
                self.may_redact_kinds(kinds)
                    || kinds & ESCAPE != 0 && spells_literal_byte(lit.as_bytes())
            }
        }
    }

    /// `s` with every secret replaced, or `None` when it has none.
    pub fn redact(&self, s: &str) -> Option<String> {
        let kinds = self.candidates(s);
        if !self.may_redact_kinds(kinds) {
            return None;
        }
        let mut out: Option<String> = None;
        for i in 0..KINDS.len() + self.user.len() {
            // A built-in whose literal is not in `s` cannot match it, nor
            // the text after earlier replacements: a marker
            // (`[REDACTED:…]`) adds none of the literals, and the brackets
            // around it cannot be part of one.
            if i < KINDS.len() && kinds & (1 << i) == 0 {
                continue;
            }
            let (kind, re) = self.pattern(i);
            let cur = out.as_deref().unwrap_or(s);
            if !re.is_match(cur) {
                continue;
            }
            let mut n = 0;
            let marker = format!("[REDACTED:{kind}]");
            let r = re
                .replace_all(cur, |_: &regex::Captures<'_>| {
                    n += 1;
                    marker.clone()
                })
                .into_owned();
            // An empty match (a user pattern like `x*`) replaces nothing real.
            if r != cur {
                self.counts[i].set(self.counts[i].get() + n);
                out = Some(r);
            }
        }
        out
    }

    /// A JSON value with the secrets in its text replaced; still valid
    /// JSON (a user pattern whose match spans JSON syntax is applied to
    /// the value's strings instead).
    fn redact_json<'a>(&self, j: &Json<'a>) -> Option<Json<'static>> {
        let r = self.redact(j.get())?;
        if serde_json::from_str::<serde::de::IgnoredAny>(&r).is_ok() {
            return Some(Json::assembled(r));
        }
        let mut v: serde_json::Value = serde_json::from_str(j.get()).ok()?;
        self.redact_value(&mut v);
        Some(Json::assembled(v.to_string()))
    }

    fn redact_value(&self, v: &mut serde_json::Value) {
        match v {
            serde_json::Value::String(s) => {
                if let Some(r) = self.redact(s) {
                    *s = r;
                }
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(|x| self.redact_value(x)),
            serde_json::Value::Object(o) => o.values_mut().for_each(|x| self.redact_value(x)),
            _ => {}
        }
    }

    fn str<'a>(&self, s: &mut Cow<'a, str>) -> bool {
        match self.redact(s) {
            Some(r) => {
                *s = Cow::Owned(r);
                true
            }
            None => false,
        }
    }

    fn opt(&self, s: &mut Option<Cow<'_, str>>) -> bool {
        s.as_mut().is_some_and(|s| self.str(s))
    }

    fn json(&self, j: &mut Json<'_>) -> bool {
        match self.redact_json(j) {
            Some(r) => {
                *j = r;
                true
            }
            None => false,
        }
    }

    /// A tool output: redacted as characters, the JSON literal searched
    /// first without unescaping it.
    fn output(&self, o: &mut Option<Text<'_>>) -> bool {
        if let Some(t) = o
            && self.may_redact_text(t)
            && let Some(r) = self.redact(&t.as_str())
        {
            *o = Some(Text::Plain(Cow::Owned(r)));
            return true;
        }
        false
    }

    /// Redact every text-bearing field of `k` in place; true if any changed.
    fn kind(&self, k: &mut Kind<'_>) -> bool {
        walk_kind!(self, k, mut)
    }

    /// Whether [`Self::kind`] may change `k`: false only when it surely
    /// will not. Most events hold no secret and are then passed on as they
    /// are, not copied (a copy of an owned tool output is a copy of all of
    /// it). The same walk as `kind`, with read-only field checks.
    fn kind_may(&self, k: &Kind<'_>) -> bool {
        walk_kind!(&May(self), k)
    }
}

/// The fields [`Redactor::kind`] redacts, walked once for both uses: `v`
/// is the redactor itself (fields borrowed `mut`, each redacted in place)
/// or [`May`] (fields borrowed shared, each only checked). Each field
/// method answers whether the field changed (or may change); every field
/// is visited (`|`, not `||`), as redaction must reach all of them.
macro_rules! walk_kind {
    ($v:expr, $k:expr $(, $m:ident)?) => {{
        let v = $v;
        match $k {
            Kind::UserMessage { text }
            | Kind::ThinkingDelta { text }
            | Kind::TextDelta { text }
            | Kind::ShellOutputDelta { text, .. }
            | Kind::AssistantMessage { text }
            | Kind::Thinking { text, .. }
            | Kind::UserEvent { text, .. } => v.str(text),
            Kind::Summary { text, .. } => v.opt(text),
            Kind::ToolCallStarted(t) => walk_start!(v, t $(, $m)?),
            Kind::ToolCallProgress { partial, .. } => v.json(partial),
            Kind::ToolCallCompleted(t) => walk_end!(v, t $(, $m)?),
            Kind::ToolCall(b) => {
                let (s, e) = & $($m)? **b;
                walk_start!(v, s $(, $m)?) | walk_end!(v, e $(, $m)?)
            }
            Kind::Result(r) => v.opt(& $($m)? r.text) | v.opt(& $($m)? r.error),
            Kind::Error {
                message, source, ..
            } => v.str(message) | v.opt(source),
            Kind::Unknown { raw } => v.json(raw),
            Kind::SessionStarted(_)
            | Kind::ThinkingCompleted { .. }
            | Kind::UsageDelta(_)
            | Kind::TurnEnded { .. } => false,
        }
    }};
}
use walk_kind;

/// A tool call's start in [`walk_kind`].
macro_rules! walk_start {
    ($v:expr, $t:expr $(, $m:ident)?) => {{
        let (v, t) = ($v, $t);
        let mut hit = v.json(& $($m)? t.args);
        for f in [
            & $($m)? t.command,
            & $($m)? t.cwd,
            & $($m)? t.path,
            & $($m)? t.pattern,
            & $($m)? t.url,
            & $($m)? t.query,
            & $($m)? t.description,
        ] {
            hit |= v.opt(f);
        }
        if let Some(d) = & $($m)? t.details {
            for f in [
                & $($m)? d.old_string,
                & $($m)? d.new_string,
                & $($m)? d.file_content,
                & $($m)? d.plan,
                & $($m)? d.title,
                & $($m)? d.overview,
            ] {
                hit |= v.opt(f);
            }
        }
        hit
    }};
}
use walk_start;

/// A tool call's completion in [`walk_kind`].
macro_rules! walk_end {
    ($v:expr, $t:expr $(, $m:ident)?) => {{
        let (v, t) = ($v, $t);
        let mut hit = false;
        if let Some(r) = & $($m)? t.result {
            hit |= v.json(r);
        }
        hit |= v.output(& $($m)? t.output);
        hit |= v.opt(& $($m)? t.patch);
        hit |= v.opt(& $($m)? t.error);
        if let Some(s) = & $($m)? t.start {
            hit |= walk_start!(v, s $(, $m)?);
        }
        hit
    }};
}
use walk_end;

/// The read-only side of [`walk_kind`]: whether redacting a field may
/// change it. Debug builds check each "no" against the redaction itself
/// ([`Redact::plain`]).
struct May<'r>(&'r Redactor);

impl May<'_> {
    fn str(&self, s: &str) -> bool {
        self.0.may_redact(s)
    }

    fn opt(&self, s: &Option<Cow<'_, str>>) -> bool {
        s.as_deref().is_some_and(|s| self.0.may_redact(s))
    }

    fn json(&self, j: &Json<'_>) -> bool {
        self.0.may_redact(j.get())
    }

    fn output(&self, o: &Option<Text<'_>>) -> bool {
        o.as_ref().is_some_and(|t| self.0.may_redact_text(t))
    }
}

/// Where in `s` a possible secret's unfinished beginning starts (`None`:
/// nothing to hold). Bounded by [`WINDOW`].
pub fn held_from(s: &str) -> Option<usize> {
    held_tail(s, true)
}

/// [`held_from`], told whether `s` may hold a PEM header at all: a delta's
/// literal scan ([`candidates`]) has already looked for one, and this
/// check's own search of the window was a quarter of a redacting run's
/// cost over `--to events`.
fn held_tail(s: &str, may_pem: bool) -> Option<usize> {
    // Runs on every delta: a finder built once, and searching bytes (the
    // window's first byte need not begin a character).
    static BEGIN: LazyLock<memmem::FinderRev<'static>> =
        LazyLock::new(|| memmem::FinderRev::new(PEM_BEGIN));
    // A text ending in a byte no token run nor piece of a PEM header
    // ends in (every such piece ends in a token byte) holds nothing back
    // but an unclosed PEM header: most deltas end so, or in a word.
    match s.as_bytes().last() {
        None => return None,
        Some(&b) if !may_pem && !is_token_byte(b) => return None,
        _ => {}
    }
    let min = s.len().saturating_sub(WINDOW);
    // An unclosed PEM header.
    if may_pem
        && let Some(b) = BEGIN.rfind(&s.as_bytes()[min..]).map(|b| b + min)
        && !s[b..]
            .find("-----END ")
            .is_some_and(|e| s[b + e..].contains("PRIVATE KEY-----"))
    {
        return Some(b);
    }
    // A PEM header itself cut in two ("-----BEG") after a space or line break.
    let pem = pem_piece_at(s.as_bytes());
    let bytes = s.as_bytes();
    // The walk back over the last token run, by iterator (no bounds
    // check per byte): it runs on every delta that ends in a word.
    let i = s.len()
        - bytes[min..]
            .iter()
            .rev()
            .take_while(|&&b| is_token_byte(b))
            .count();
    // The run must begin at a word boundary, as the patterns do.
    // A run shorter than [`MIN_HELD`] is not held: a delta ending in a
    // word's first letter is common, a secret cut there is not.
    if s.len() - i < MIN_HELD || (i > 0 && is_token_byte(bytes[i - 1])) {
        return pem;
    }
    let token = begins_like_secret(&bytes[i..]).then_some(i);
    match (token, pem) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Where `s` ends in the first `k` bytes of [`PEM_BEGIN`] (`0 < k <
/// PEM_BEGIN.len()`) after a space, a line break or the start, the
/// longest such piece first; `None` when it does not.
///
/// Every proper prefix of the header is `-` repeated (one to five), or
/// `-----` and a prefix of `BEGIN`: the text's last byte says which one
/// piece it can end in, so each delta compares at most a few bytes (a
/// loop over the header's lengths was most of this check's cost).
/// `pem_piece_is_found_as_by_every_length` holds it to that loop.
fn pem_piece_at(s: &[u8]) -> Option<usize> {
    // The piece a text ending in `last` can end in, by its length; the
    // dashes alone may be any of one to five long (the longest is tried
    // first, as a text ending in `-----` ends in `-` too).
    let k = match *s.last()? {
        b'B' => 6,
        b'E' => 7,
        b'G' => 8,
        b'I' => 9,
        b'N' => 10,
        b'-' => {
            let dashes = s.iter().rev().take(5).take_while(|&&b| b == b'-').count();
            // A run of dashes is a piece only if it starts after white
            // space or at the start; a shorter piece of the same run then
            // starts after a dash, which is never white space.
            let at = s.len() - dashes;
            return (at == 0 || s[at - 1].is_ascii_whitespace()).then_some(at);
        }
        _ => return None,
    };
    let at = s.len().checked_sub(k)?;
    (s[at..] == PEM_BEGIN.as_bytes()[..k] && (at == 0 || s[at - 1].is_ascii_whitespace()))
        .then_some(at)
}

/// Whether the run of token characters `run` (not empty) begins like a
/// built-in secret: it starts with one of [`STARTS`] or is the beginning
/// of one. Its first byte picks the few entries that can apply (the
/// check runs on every delta; a loop over all sixteen cost most of it).
fn begins_like_secret(run: &[u8]) -> bool {
    starts_beginning_with(run[0]).iter().any(|p| {
        let n = run.len().min(p.len());
        run[..n] == p.as_bytes()[..n]
    })
}

/// The [`STARTS`] entries that begin with `b`
/// (`starts_by_first_byte_are_all_of_them` checks the grouping).
fn starts_beginning_with(b: u8) -> &'static [&'static str] {
    match b {
        b's' => &STARTS[0..1],
        b'A' => &STARTS[1..4],
        b'g' => &STARTS[4..10],
        b'x' => &STARTS[10..15],
        b'e' => &STARTS[15..16],
        _ => &[],
    }
}

/// `--stats` counts per kind.
#[derive(Clone)]
pub struct RedactCounts {
    kinds: Vec<&'static str>,
    counts: Rc<Vec<Cell<u64>>>,
}

impl RedactCounts {
    /// `(kind, count)` for kinds that matched, a kind's user patterns summed.
    pub fn nonzero(&self) -> Vec<(&'static str, u64)> {
        let mut out: Vec<(&'static str, u64)> = Vec::new();
        for (k, c) in self.kinds.iter().zip(self.counts.iter()) {
            if c.get() == 0 {
                continue;
            }
            match out.iter_mut().find(|(n, _)| n == k) {
                Some(e) => e.1 += c.get(),
                None => out.push((k, c.get())),
            }
        }
        out
    }
}

/// Which stream a held tail belongs to.
#[derive(PartialEq, Eq)]
enum Stream {
    Text,
    Thinking,
    Shell(String, OutStream),
}

struct Held {
    session: Session,
    stream: Stream,
    ts: Option<i64>,
    text: String,
}

/// Redacts events, then hands them on to `inner`.
pub struct Redact<'s> {
    inner: Box<dyn Sink + 's>,
    r: Redactor,
    held: Option<Held>,
}

impl<'s> Redact<'s> {
    pub fn new(inner: Box<dyn Sink + 's>, r: Redactor) -> Self {
        Redact {
            inner,
            r,
            held: None,
        }
    }

    fn delta_event(stream: &Stream, ts: Option<i64>, text: String) -> Event<'static> {
        let text = Cow::Owned(text);
        let kind = match stream {
            Stream::Text => Kind::TextDelta { text },
            Stream::Thinking => Kind::ThinkingDelta { text },
            Stream::Shell(id, out) => Kind::ShellOutputDelta {
                call_id: Cow::Owned(id.clone()),
                stream: *out,
                text,
            },
        };
        Event::at(ts, kind)
    }

    /// Write the held tail (redacted) as a delta of its stream.
    #[inline]
    fn release(&mut self) -> io::Result<()> {
        // Runs before every event: most often nothing is held, and that
        // test is all there is to do (taking the empty `Option` moved it).
        if self.held.is_none() {
            return Ok(());
        }
        self.release_held()
    }

    #[inline(never)]
    fn release_held(&mut self) -> io::Result<()> {
        if let Some(h) = self.held.take() {
            let text = self.r.redact(&h.text).unwrap_or(h.text);
            self.inner
                .event(&h.session, &Self::delta_event(&h.stream, h.ts, text))?;
        }
        Ok(())
    }

    fn delta(&mut self, s: &Session, ev: &Event<'_>, text: &str) -> io::Result<()> {
        let same = self
            .held
            .as_ref()
            .is_some_and(|h| h.stream.carries(ev) && h.session == *s);
        if !same {
            self.release()?;
            // Most deltas are a word or two with none of the bytes a
            // secret's literal or beginning needs: passed on at once.
            if self.r.user.is_empty() && !may_begin_or_hold(text.as_bytes()) {
                debug_assert!(
                    held_from(text).is_none() && self.r.candidates(text) == 0,
                    "may_begin_or_hold missed: {text:?}"
                );
                return self.inner.event(s, ev);
            }
            // One literal scan of the delta answers both questions: may a
            // secret begin at its end, and may it hold one.
            let kinds = self.r.candidates(text);
            if held_tail(text, kinds & PEM != 0).is_none() {
                // Nothing held on either side: the event as it came.
                if !self.r.may_redact_kinds(kinds) {
                    debug_assert!(
                        !self.r.kind(&mut ev.kind.clone()),
                        "a delta's literal scan missed a secret: {:?}",
                        ev.kind
                    );
                    return self.inner.event(s, ev);
                }
                return self.plain(s, ev);
            }
        }
        let stream = stream_of(ev).expect("a delta");
        let whole = match self.held.take() {
            Some(h) => h.text + text,
            None => text.to_owned(),
        };
        let cut = held_from(&whole).unwrap_or(whole.len());
        let now = &whole[..cut];
        let out = (!now.is_empty()).then(|| self.r.redact(now).unwrap_or_else(|| now.to_owned()));
        if cut < whole.len() {
            self.held = Some(Held {
                session: s.clone(),
                stream: stream_of(ev).expect("a delta"),
                ts: ev.ts,
                text: whole[cut..].to_owned(),
            });
        }
        match out {
            Some(t) => self.inner.event(s, &Self::delta_event(&stream, ev.ts, t)),
            None => Ok(()),
        }
    }

    fn plain(&mut self, s: &Session, ev: &Event<'_>) -> io::Result<()> {
        if !self.r.kind_may(&ev.kind) {
            debug_assert!(
                !self.r.kind(&mut ev.kind.clone()),
                "kind_may missed a field kind redacts: {:?}",
                ev.kind
            );
            return self.inner.event(s, ev);
        }
        let mut kind = ev.kind.clone();
        if self.r.kind(&mut kind) {
            self.inner.event(s, &Event::at(ev.ts, kind))
        } else {
            self.inner.event(s, ev)
        }
    }
}

impl Stream {
    /// Whether `ev` is a delta of this stream (without building its
    /// [`Stream`], which copies a shell call's id).
    fn carries(&self, ev: &Event<'_>) -> bool {
        match (self, &ev.kind) {
            (Stream::Text, Kind::TextDelta { .. }) => true,
            (Stream::Thinking, Kind::ThinkingDelta { .. }) => true,
            (
                Stream::Shell(id, out),
                Kind::ShellOutputDelta {
                    call_id, stream, ..
                },
            ) => id == call_id && out == stream,
            _ => false,
        }
    }
}

fn stream_of(ev: &Event<'_>) -> Option<Stream> {
    match &ev.kind {
        Kind::TextDelta { .. } => Some(Stream::Text),
        Kind::ThinkingDelta { .. } => Some(Stream::Thinking),
        Kind::ShellOutputDelta {
            call_id, stream, ..
        } => Some(Stream::Shell(call_id.to_string(), *stream)),
        _ => None,
    }
}

impl Adapter for Redact<'_> {
    fn inner(&mut self) -> &mut dyn Sink {
        &mut *self.inner
    }

    fn inner_ref(&self) -> &dyn Sink {
        &*self.inner
    }

    fn event(&mut self, s: &Session, ev: &Event<'_>) -> io::Result<()> {
        let text = match &ev.kind {
            Kind::TextDelta { text } | Kind::ThinkingDelta { text } => text,
            Kind::ShellOutputDelta { text, .. } => text,
            _ => {
                self.release()?;
                return self.plain(s, ev);
            }
        };
        self.delta(s, ev, text)
    }

    fn end(&mut self, s: &Session) -> io::Result<()> {
        self.release()?;
        self.inner.end(s)
    }

    fn idle(&mut self) -> io::Result<()> {
        // Held text never waits for input that may not come.
        self.release()?;
        self.inner.idle()
    }

    fn finish(&mut self) -> io::Result<()> {
        self.release()?;
        self.inner.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex_syntax::hir::literal::Extractor;

    /// Skipping a kind whose literal is absent is sound only if every match
    /// of the kind holds one: each prefix the regex parser derives for the
    /// pattern (every match begins with one of them) contains a literal
    /// given for the kind.
    #[test]
    fn every_match_of_a_kind_holds_one_of_its_literals() {
        for (i, (kind, re)) in KINDS.iter().enumerate() {
            let hir = regex_syntax::parse(re).expect("valid");
            let seq = Extractor::new().extract(&hir);
            let prefixes = seq
                .literals()
                .unwrap_or_else(|| panic!("{kind}: no finite set of prefixes"));
            assert!(!prefixes.is_empty(), "{kind}");
            for p in prefixes {
                let p = p.as_bytes();
                assert!(
                    LITERALS.iter().any(|(lit, bits)| bits & (1 << i) != 0
                        && p.windows(lit.len()).any(|w| w == lit.as_bytes())),
                    "{kind}: a match may begin {:?}, which has none of its literals",
                    String::from_utf8_lossy(p)
                );
            }
        }
    }

    /// The hand-made scan finds exactly the [`LITERALS`] a plain search
    /// finds, wherever they sit (start, end, overlapping each other).
    #[test]
    fn literal_scan_agrees_with_a_plain_search() {
        use proptest::prelude::*;
        let plain = |s: &[u8]| {
            LITERALS
                .iter()
                .filter(|(l, _)| s.windows(l.len()).any(|w| w == l.as_bytes()))
                .fold(0, |m, (_, bits)| m | bits)
        };
        // Pieces of literals and their neighbours, joined at random.
        let piece = prop::sample::select(vec![
            "sk",
            "-",
            "k-",
            "s",
            "-----BEGIN ",
            "----",
            "BEGIN ",
            "xox",
            "a",
            "b",
            "p",
            "x",
            "gh",
            "o",
            "u",
            "_",
            "github",
            "github_pat",
            "pat_",
            "\\",
            "\\u",
            "A",
            "AI",
            "za",
            "KIA",
            "SIA",
            "ey",
            "J",
            "eyJ",
            " ",
            "é",
            "z",
        ]);
        proptest!(|(parts in prop::collection::vec(piece, 0..12))| {
            let s = parts.concat();
            prop_assert_eq!(candidates::<true>(s.as_bytes()), plain(s.as_bytes()), "{:?}", s);
            prop_assert_eq!(candidates::<false>(s.as_bytes()), plain(s.as_bytes()) & !ESCAPE, "{:?}", s);
        });
        for l in LITERALS {
            for s in [l.0.to_owned(), format!("x{}y", l.0)] {
                assert_eq!(
                    candidates::<true>(s.as_bytes()),
                    plain(s.as_bytes()),
                    "{s:?}"
                );
            }
        }
    }

    /// The held-tail check as it was written before it became a byte
    /// match: a loop over every length of a PEM header's piece and one over
    /// all of [`STARTS`] (the specification the faster one is held to).
    fn held_tail_by_loops(s: &str) -> Option<usize> {
        let min = s.len().saturating_sub(WINDOW);
        if let Some(b) = s.as_bytes()[min..]
            .windows(PEM_BEGIN.len())
            .rposition(|w| w == PEM_BEGIN.as_bytes())
            .map(|b| b + min)
            && !s[b..]
                .find("-----END ")
                .is_some_and(|e| s[b + e..].contains("PRIVATE KEY-----"))
        {
            return Some(b);
        }
        let mut pem = None;
        for k in (1..PEM_BEGIN.len()).rev() {
            let at = s.len().saturating_sub(k);
            if s.len() >= k
                && s.is_char_boundary(at)
                && PEM_BEGIN.starts_with(&s[at..])
                && (at == 0 || s.as_bytes()[at - 1].is_ascii_whitespace())
            {
                pem = Some(at);
                break;
            }
        }
        let bytes = s.as_bytes();
        let mut i = s.len();
        while i > min && is_token_byte(bytes[i - 1]) {
            i -= 1;
        }
        if s.len() - i < MIN_HELD || (i > 0 && is_token_byte(bytes[i - 1])) {
            return pem;
        }
        let run = &s[i..];
        let token = STARTS
            .iter()
            .any(|p| run.starts_with(p) || p.starts_with(run))
            .then_some(i);
        match (token, pem) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Pieces of secrets, their literals and their neighbours, to join at
    /// random: texts that end (or are cut) in every way a secret can begin.
    const PIECES: &[&str] = &[
        "sk",
        "-",
        "k-",
        "s",
        "sk-",
        "-----BEGIN ",
        "-----BEGIN",
        "----",
        "-----",
        "--",
        "BEGIN ",
        "BEG",
        "B",
        "E",
        "N",
        "I",
        "G",
        "xox",
        "xoxb",
        "xoxb-",
        "a",
        "b",
        "p",
        "x",
        "gh",
        "ghp",
        "ghp_",
        "o",
        "u",
        "_",
        "github",
        "github_pat",
        "github_pat_",
        "pat_",
        "\\",
        "\\u",
        "A",
        "AI",
        "AIza",
        "za",
        "AKIA",
        "KIA",
        "SIA",
        "ASI",
        "ey",
        "eyJ",
        "J",
        " ",
        "\n",
        "\t",
        ".",
        "é",
        "z",
        "task-list",
        "snake_case",
        "Abc",
        "eye",
        "0123456789",
    ];

    /// The byte match of the held-tail check says what the loops said, on
    /// texts ending in every piece of a secret's beginning.
    #[test]
    fn held_tail_is_what_the_loops_said() {
        use proptest::prelude::*;
        let piece = prop::sample::select(PIECES.to_vec());
        proptest!(ProptestConfig::with_cases(2000), |(parts in prop::collection::vec(piece, 0..10))| {
            let s = parts.concat();
            prop_assert_eq!(held_from(&s), held_tail_by_loops(&s), "{:?}", s);
            // Told there is no PEM header: only the header's pieces and
            // the token runs count, as before.
            if !s.contains(PEM_BEGIN) {
                prop_assert_eq!(held_tail(&s, false), held_tail_by_loops(&s), "{:?}", s);
            }
        });
        for s in [
            "",
            "-",
            " -",
            "x-",
            "\n-----",
            "------",
            " -----B",
            "a-----BEGIN",
            "-----BEGIN",
        ] {
            assert_eq!(held_from(s), held_tail_by_loops(s), "{s:?}");
        }
    }

    #[test]
    fn starts_by_first_byte_are_all_of_them() {
        for b in 0..=255u8 {
            let all: Vec<&str> = STARTS
                .iter()
                .copied()
                .filter(|p| p.as_bytes()[0] == b)
                .collect();
            assert_eq!(starts_beginning_with(b), all.as_slice(), "{}", b as char);
        }
    }

    /// The packed searcher finds the literals the byte searches find, and
    /// both what a plain search finds, on texts long enough for it.
    #[test]
    fn packed_scan_agrees_with_the_byte_scan() {
        use proptest::prelude::*;
        let Some(p) = &*PACKED else {
            // Without the CPU's vector search every text takes the byte
            // searches, which `literal_scan_agrees_with_a_plain_search` checks.
            return;
        };
        let plain = |s: &[u8]| {
            LITERALS
                .iter()
                .filter(|(l, _)| s.windows(l.len()).any(|w| w == l.as_bytes()))
                .fold(0, |m, (_, bits)| m | bits)
        };
        let piece = prop::sample::select(PIECES.to_vec());
        proptest!(ProptestConfig::with_cases(2000), |(parts in prop::collection::vec(piece, 0..40))| {
            let s = parts.concat();
            let b = s.as_bytes();
            prop_assert_eq!(byte_candidates::<true>(b), plain(b), "{:?}", s);
            prop_assert_eq!(byte_candidates::<false>(b), plain(b) & !ESCAPE, "{:?}", s);
            if b.len() >= p.minimum_len() {
                prop_assert_eq!(packed_candidates::<true>(p, b), plain(b), "{:?}", s);
                prop_assert_eq!(packed_candidates::<false>(p, b), plain(b) & !ESCAPE, "{:?}", s);
            }
        });
        assert_eq!(
            PACKED_LITERALS,
            LITERALS
                .iter()
                .filter(|(l, _)| *l != "\\u")
                .copied()
                .collect::<Vec<_>>()
                .as_slice()
        );
    }

    /// Collects the text deltas a [`Redact`] hands on.
    struct Deltas(Rc<std::cell::RefCell<String>>);

    impl Sink for Deltas {
        fn event(&mut self, _: &Session, ev: &Event<'_>) -> io::Result<()> {
            match &ev.kind {
                Kind::TextDelta { text } => self.0.borrow_mut().push_str(text),
                other => panic!("not a text delta: {other:?}"),
            }
            Ok(())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// Redaction finds what the patterns alone find: random texts with
    /// secrets spliced in at random places, whole and cut into deltas at
    /// random points, give what every built-in regex, run over the whole
    /// text in order without any of the literal scans, gives.
    #[test]
    fn redaction_finds_what_the_regexes_alone_find() {
        use proptest::prelude::*;
        const SECRETS: &[&str] = &[
            "sk-proj-FAKEfake0123456789abcdefABCDEF",
            "sk-ant-api03-FAKEfake0123456789abcdefghij",
            "sk-FAKE_fake-0123456789abcdef",
            "AIzaSyFAKEfake0123456789abcdefghijklm12",
            "AKIAIOSFODNN7EXAMPLE",
            "ASIAIOSFODNN7EXAMPLE",
            "ghp_FAKEfake0123456789abcdefghijklmnopqr",
            "github_pat_FAKEfake0123456789_abcdefghij",
            "xoxb-1234567890-FAKEfakeFAKE",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.FAKEsignature0123",
            "-----BEGIN PRIVATE KEY-----\nMIIEFAKEfakeFAKEfake\n-----END PRIVATE KEY-----",
            "-----BEGIN RSA PRIVATE KEY-----\\nMIIE+/=FAKE\\n-----END RSA PRIVATE KEY-----",
        ];
        let regexes: Vec<(&str, Regex)> = KINDS
            .iter()
            .map(|(k, re)| (*k, Regex::new(re).unwrap()))
            .collect();
        let by_regexes = |text: &str| {
            let mut cur = text.to_owned();
            for (kind, re) in &regexes {
                let marker = format!("[REDACTED:{kind}]");
                cur = re.replace_all(&cur, regex::NoExpand(&marker)).into_owned();
            }
            cur
        };
        let r = Redactor::new(&[]).unwrap();
        let word = prop::sample::select(PIECES.to_vec());
        let part = prop_oneof![
            4 => word.prop_map(str::to_owned),
            1 => prop::sample::select(SECRETS.to_vec()).prop_map(str::to_owned),
        ];
        let sep = prop::sample::select(vec![" ", "\n", " (", "\t", ": "]);
        proptest!(ProptestConfig::with_cases(500), |(
            parts in prop::collection::vec((part, sep), 0..16),
            cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..6),
        )| {
            let text: String = parts.iter().flat_map(|(p, s)| [p.as_str(), s]).collect();
            let want = by_regexes(&text);
            // Whole: the literal scans only skip patterns that cannot match.
            prop_assert_eq!(r.redact(&text).unwrap_or_else(|| text.clone()), want.clone());
            // Cut: not within a match's first two characters (a cut there
            // is not joined, docs/redact.md), nor within a PEM header that
            // does not follow white space (a piece of one is held only
            // after white space, as `held_tail` says).
            let spans: Vec<(usize, usize)> = regexes
                .iter()
                .flat_map(|(_, re)| re.find_iter(&text))
                .map(|m| {
                    let s = m.start();
                    let free = s == 0 || text.as_bytes()[s - 1].is_ascii_whitespace();
                    let pem = m.as_str().starts_with(PEM_BEGIN);
                    (s, s + if pem && !free { PEM_BEGIN.len() } else { MIN_HELD })
                })
                .collect();
            let mut points: Vec<usize> = cuts
                .iter()
                .map(|i| i.index(text.len() + 1))
                .filter(|&p| text.is_char_boundary(p))
                .filter(|&p| !spans.iter().any(|&(s, e)| s < p && p < e))
                .collect();
            points.sort_unstable();
            points.dedup();
            let out = Rc::new(std::cell::RefCell::new(String::new()));
            let mut redact = Redact::new(Box::new(Deltas(Rc::clone(&out))), Redactor::new(&[]).unwrap());
            let session = Session { id: "s".to_owned(), ordinal: 1, dedupe: true };
            let mut last = 0;
            for p in points.into_iter().chain([text.len()]) {
                if p > last {
                    let ev = Event::at(None, Kind::TextDelta { text: Cow::Borrowed(&text[last..p]) });
                    Sink::event(&mut redact, &session, &ev).unwrap();
                }
                last = p;
            }
            Sink::finish(&mut redact).unwrap();
            prop_assert_eq!(&*out.borrow(), &want, "{:?}", text);
        });
    }

    /// The block test says what a walk over the bytes says, at every
    /// length around the 16-byte block and with the byte at every place
    /// (first and last of a block, in the zero-padded last one), among
    /// ASCII and non-ASCII neighbours.
    #[test]
    fn block_test_agrees_with_a_byte_walk() {
        let literal = |c: u8, esc: bool| b"-_AJ".contains(&c) || esc && c == b'\\';
        let delta = |c: u8| b"-_AJgx".contains(&c);
        for filler in ["z", "\u{e9}", "\u{1f600}", " "] {
            for len in 0..=50 {
                let base: Vec<u8> = filler.bytes().cycle().take(len).collect();
                for at in 0..len {
                    for c in [b'-', b'_', b'A', b'J', b'\\', b'g', b'x', b's', 0x80, 0xff] {
                        let mut b = base.clone();
                        b[at] = c;
                        let walk = |f: &dyn Fn(u8) -> bool| b.iter().any(|&c| f(c));
                        assert_eq!(
                            has_literal_byte::<true>(&b),
                            walk(&|c| literal(c, true)),
                            "{b:?}"
                        );
                        assert_eq!(
                            has_literal_byte::<false>(&b),
                            walk(&|c| literal(c, false)),
                            "{b:?}"
                        );
                        assert_eq!(may_begin_or_hold(&b), walk(&delta), "{b:?}");
                    }
                }
                assert!(!has_literal_byte::<true>(&base) && !may_begin_or_hold(&base));
            }
        }
    }

    /// A delta the first test passes on at once can neither hold a
    /// literal nor end in a secret's beginning (the reason given at
    /// [`may_begin_or_hold`]), on texts made of every piece of one.
    #[test]
    fn a_delta_passed_on_at_once_holds_nothing() {
        use proptest::prelude::*;
        let piece = prop::sample::select(PIECES.to_vec());
        proptest!(ProptestConfig::with_cases(3000), |(parts in prop::collection::vec(piece, 0..10))| {
            let s = parts.concat();
            if !may_begin_or_hold(s.as_bytes()) {
                prop_assert_eq!(held_from(&s), None, "{:?}", s);
                prop_assert_eq!(candidates::<true>(s.as_bytes()) & !ESCAPE, 0, "{:?}", s);
            }
        });
        // Each beginning of a secret that is held, alone: caught.
        for p in STARTS {
            for n in MIN_HELD..=p.len() {
                assert!(may_begin_or_hold(&p.as_bytes()[..n]), "{p}");
            }
        }
    }

    /// Secrets straddling the 16-byte blocks of the first test, cut into
    /// deltas on either side of a block's end, among non-ASCII text: the
    /// same as the regexes over the whole text.
    #[test]
    fn a_secret_across_a_block_and_a_delta() {
        let secrets = [
            "sk-ant-api03-FAKEfake0123456789abcdefghij",
            "ghp_FAKEfake0123456789abcdefghijklmnopqr",
            "xoxb-1234567890-FAKEfakeFAKE",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.FAKEsignature0123",
        ];
        let session = Session {
            id: "s".to_owned(),
            ordinal: 1,
            dedupe: true,
        };
        for secret in secrets {
            for lead in ["", "\u{e9}", "ab \u{e9}t\u{e9} "] {
                for pad in 0..=20 {
                    let text = format!("{lead}{} {secret} \u{1f600}", "w".repeat(pad));
                    let want = Redactor::new(&[]).unwrap().redact(&text).unwrap();
                    assert!(!want.contains(secret));
                    for cut in 12..=24 {
                        let cuts = [cut, cut + 16, cut + 3];
                        let out = Rc::new(std::cell::RefCell::new(String::new()));
                        let mut redact = Redact::new(
                            Box::new(Deltas(Rc::clone(&out))),
                            Redactor::new(&[]).unwrap(),
                        );
                        let mut last = 0;
                        for p in cuts.into_iter().chain([text.len()]) {
                            // Not within a secret's first characters (a cut
                            // there is not joined, docs/redact.md).
                            let start = text.find(secret).unwrap();
                            let early = start < p && p < start + MIN_HELD;
                            if p > last && p <= text.len() && text.is_char_boundary(p) && !early {
                                let ev = Event::at(
                                    None,
                                    Kind::TextDelta {
                                        text: Cow::Borrowed(&text[last..p]),
                                    },
                                );
                                Sink::event(&mut redact, &session, &ev).unwrap();
                                last = p;
                            }
                        }
                        Sink::finish(&mut redact).unwrap();
                        assert_eq!(*out.borrow(), want, "{text:?} cut at {cuts:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn text_without_a_literal_is_not_searched_further() {
        let r = Redactor::new(&[]).unwrap();
        assert_eq!(r.candidates("plain words, a list, eyes"), 0);
        // A literal inside a word is a candidate the pattern then rejects.
        assert_eq!(r.candidates("a task-list"), 0b110);
        assert_eq!(r.redact("a task-list"), None);
        assert!(!r.may_redact("plain words"));
        assert_eq!(r.candidates("disk-----BEGIN "), 0b111);
        assert_eq!(candidates::<true>(b"\\u0073k-"), ESCAPE);
        // Outside a JSON string literal a `\u` is two characters.
        assert_eq!(r.candidates("\\u0073k-"), 0);
        // A literal's `\u` makes it searched as characters only when the
        // escape may spell a character of a literal.
        let lit = |s: &'static str| Text::Json(Cow::Borrowed(s));
        assert!(!r.may_redact_text(&lit("\"\\u001b[31mFAILED\\u001b[0m\"")));
        assert!(!r.may_redact_text(&lit("\"caf\\u00e9 \\u2014 ok\"")));
        assert!(r.may_redact_text(&lit("\"\\u0073k-ant-0123456789abcdefghij\"")));
        assert!(r.may_redact_text(&lit("\"\\u002D\"")));
        assert!(r.may_redact_text(&lit("\"\\u00\"")));
        // Spelled by the escape: the secret is found in the characters.
        assert_eq!(
            r.redact(&lit("\"\\u0073k-ant-0123456789abcdefghij\"").as_str()),
            Some("[REDACTED:anthropic_key]".to_owned())
        );
        // With a pattern of the user's own, every text is searched.
        let u = Redactor::new(&["secret".to_owned()]).unwrap();
        assert!(u.may_redact("plain words"));
    }
}
