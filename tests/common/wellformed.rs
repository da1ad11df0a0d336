//! Is an output well formed for its format? One checker shared by the
//! property tests, the hostile-input tests and the fuzz target (which
//! includes this file by path), so all three hold cstream to the same rules:
//!
//! - `events`: every line is one JSON object whose first key is `type`;
//! - `text`: UTF-8, and nothing a terminal would interpret: no control
//!   character but `\n` and `\t`, no bidi embedding, override or isolate
//!   (with colour, only SGR sequences `ESC [ … m` may carry an ESC);
//!   zero-width joiners and other invisible but inert characters are text;
//! - `openai-sse`: `data: <JSON object>` records, each followed by a blank
//!   line, every stream ending with `data: [DONE]`;
//! - `documents-sse`: the same, with an optional `event: <name>` line
//!   before each data line;
//! - `anthropic-sse`, `openai-responses`: `event: <name>` then `data: <JSON object>` records,
//!   each followed by a blank line, the object's `type` first and equal to
//!   the event name; no `[DONE]`;
//! - `openai-json`, `documents`, `anthropic-json`, `openai-responses-json`:
//!   a sequence of JSON objects;
//! - `markdown`: nothing a terminal or a bidi-aware viewer would interpret
//!   (as `text` without colour), every code fence closed (block quotes
//!   apart: a fence opened in a quote ends with it), and the `<details>`
//!   lines cstream writes balanced outside code blocks.
//! - `html`: one page from `<!DOCTYPE html>` to `</html>`, nothing a
//!   terminal or a bidi-aware viewer would interpret, every tag one of the
//!   few cstream writes, with only its attributes (no event handler, no
//!   `src`, links only to anchors in the page), elements nested and closed,
//!   no `<script>`, and every `&` one of the five references cstream uses:
//!   text from the stream that escaped its escaping shows up as a tag or an
//!   entity this rule does not know.
//!
//! JSON is checked by the grammar with an explicit stack (any depth); the
//! file needs nothing but std, so the fuzz crate can include it.
#![allow(dead_code)]

/// Check `out`, written by `--to format` (`color`: the text format was
/// coloured). `Err` says what is wrong and where.
pub fn check(format: &str, color: bool, out: &[u8]) -> Result<(), String> {
    let s = std::str::from_utf8(out).map_err(|e| format!("output is not UTF-8: {e}"))?;
    match format {
        "events" => events(s),
        "text" => text(s, color),
        "openai-sse" => sse(s, false),
        "documents-sse" => sse(s, true),
        "anthropic-sse" | "openai-responses" => named_sse(s),
        "openai-json" | "documents" | "anthropic-json" | "openai-responses-json" => json_values(s),
        "rows" => lines(s, "{\"session\":"),
        "messages" => lines(s, "{\"id\":"),
        "atif" => lines(s, "{\"schema_version\":"),
        "otlp-json" => lines(s, "{\"resourceSpans\":"),
        "markdown" => markdown(s),
        "html" => html(s),
        "usage" => usage(s),
        other => Err(format!("unknown format {other:?}")),
    }
}

fn short(s: &str) -> String {
    const MAX: usize = 200;
    if s.len() <= MAX {
        return format!("{s:?}");
    }
    let mut cut = MAX;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{:?}… ({} bytes)", &s[..cut], s.len())
}

fn object(json: &str) -> Result<(), String> {
    if !json.starts_with('{') {
        return Err(format!("not a JSON object: {}", short(json)));
    }
    let end = value_end(json.as_bytes(), 0).map_err(|e| format!("{e}: {}", short(json)))?;
    if end != json.len() {
        return Err(format!("text after the JSON value: {}", short(json)));
    }
    Ok(())
}

/// Where the JSON value starting at `i` (after optional whitespace) ends.
///
/// A syntax check by the RFC 8259 grammar with an explicit stack, so any
/// depth is fine (a `serde_json::Value` stops at 128 levels, and cstream
/// copies payloads verbatim, however deep). `\u` escapes need four hex
/// digits; what they encode is not checked, as the grammar does not.
pub fn value_end(b: &[u8], mut i: usize) -> Result<usize, String> {
    let ws = |b: &[u8], mut i: usize| {
        while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
            i += 1;
        }
        i
    };
    let err = |what: &str, i: usize| Err(format!("invalid JSON at byte {i}: {what}"));
    let mut stack: Vec<u8> = Vec::new();
    'value: loop {
        i = ws(b, i);
        let Some(&c) = b.get(i) else {
            return err("expected a value", i);
        };
        match c {
            b'{' | b'[' => {
                let close = if c == b'{' { b'}' } else { b']' };
                i = ws(b, i + 1);
                if b.get(i) == Some(&close) {
                    i += 1;
                } else {
                    stack.push(c);
                    if c == b'{' {
                        i = key(b, i, ws)?;
                    }
                    continue 'value;
                }
            }
            b'"' => i = string(b, i)?,
            b'-' | b'0'..=b'9' => i = number(b, i)?,
            b't' | b'f' | b'n' => {
                let lit: &[u8] = match c {
                    b't' => b"true",
                    b'f' => b"false",
                    _ => b"null",
                };
                if !b[i..].starts_with(lit) {
                    return err("bad literal", i);
                }
                i += lit.len();
            }
            _ => return err("expected a value", i),
        }
        // After a value: close containers or move to the next member.
        loop {
            i = ws(b, i);
            let Some(&top) = stack.last() else {
                return Ok(i);
            };
            match (top, b.get(i)) {
                (_, Some(b',')) => {
                    i += 1;
                    if top == b'{' {
                        i = key(b, ws(b, i), ws)?;
                    }
                    continue 'value;
                }
                (b'{', Some(b'}')) | (b'[', Some(b']')) => {
                    stack.pop();
                    i += 1;
                }
                _ => return err("expected , or a closing bracket", i),
            }
        }
    }
}

/// A member name and its colon; returns where the value starts.
fn key(b: &[u8], i: usize, ws: impl Fn(&[u8], usize) -> usize) -> Result<usize, String> {
    if b.get(i) != Some(&b'"') {
        return Err(format!("invalid JSON at byte {i}: expected a member name"));
    }
    let i = ws(b, string(b, i)?);
    if b.get(i) != Some(&b':') {
        return Err(format!("invalid JSON at byte {i}: expected :"));
    }
    Ok(i + 1)
}

fn string(b: &[u8], mut i: usize) -> Result<usize, String> {
    i += 1;
    loop {
        match b.get(i) {
            None => return Err("unterminated string".into()),
            Some(b'"') => return Ok(i + 1),
            Some(b'\\') => match b.get(i + 1) {
                Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => i += 2,
                Some(b'u')
                    if b.len() >= i + 6 && b[i + 2..i + 6].iter().all(u8::is_ascii_hexdigit) =>
                {
                    i += 6
                }
                _ => return Err(format!("invalid JSON at byte {i}: bad escape")),
            },
            Some(&c) if c < 0x20 => {
                return Err(format!(
                    "invalid JSON at byte {i}: raw control character {c:#04x} in a string"
                ));
            }
            Some(_) => i += 1,
        }
    }
}

fn number(b: &[u8], mut i: usize) -> Result<usize, String> {
    let start = i;
    let digits = |b: &[u8], mut i: usize| {
        let s = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        (i, i - s)
    };
    if b[i] == b'-' {
        i += 1;
    }
    let (j, n) = digits(b, i);
    if n == 0 || (n > 1 && b[i] == b'0') {
        return Err(format!("invalid JSON at byte {start}: bad number"));
    }
    i = j;
    if b.get(i) == Some(&b'.') {
        let (j, n) = digits(b, i + 1);
        if n == 0 {
            return Err(format!("invalid JSON at byte {start}: bad fraction"));
        }
        i = j;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let (j, n) = digits(b, i);
        if n == 0 {
            return Err(format!("invalid JSON at byte {start}: bad exponent"));
        }
        i = j;
    }
    Ok(i)
}

fn events(s: &str) -> Result<(), String> {
    if !s.is_empty() && !s.ends_with('\n') {
        return Err("events output does not end with a newline".into());
    }
    for (i, line) in s.lines().enumerate() {
        if !line.starts_with("{\"type\":\"") {
            return Err(format!(
                "line {}: type is not first: {}",
                i + 1,
                short(line)
            ));
        }
        object(line).map_err(|e| format!("line {}: {e}", i + 1))?;
    }
    Ok(())
}

/// One compact JSON object per line, each beginning with `first` (its first
/// key). Lines are split at `\n` only: a string may hold U+2028.
fn lines(s: &str, first: &str) -> Result<(), String> {
    if !s.is_empty() && !s.ends_with('\n') {
        return Err("output does not end with a newline".into());
    }
    for (i, line) in s.split_terminator('\n').enumerate() {
        if !line.starts_with(first) {
            return Err(format!(
                "line {}: {first} is not first: {}",
                i + 1,
                short(line)
            ));
        }
        object(line).map_err(|e| format!("line {}: {e}", i + 1))?;
    }
    Ok(())
}

/// `usage` off a terminal: one JSON object a line, a session's row
/// (`agent` first) or a group's (`group` first).
fn usage(s: &str) -> Result<(), String> {
    if !s.is_empty() && !s.ends_with('\n') {
        return Err("usage output does not end with a newline".into());
    }
    for (i, line) in s.lines().enumerate() {
        if !line.starts_with("{\"agent\":") && !line.starts_with("{\"group\":") {
            return Err(format!("line {}: not a usage row: {}", i + 1, short(line)));
        }
        object(line).map_err(|e| format!("line {}: {e}", i + 1))?;
    }
    Ok(())
}

/// A character a terminal could act on, or that reorders what text says
/// (the rule of `cstream::terminal`, restated: this file needs only std).
fn unsafe_char(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn text(s: &str, color: bool) -> Result<(), String> {
    let mut rest = s;
    while let Some((i, c)) = rest.char_indices().find(|&(_, c)| unsafe_char(c)) {
        if color && c == '\u{1b}' {
            // An SGR sequence: ESC [ digits/semicolons/colons m.
            let seq = &rest[i + 1..];
            if let Some(body) = seq.strip_prefix('[') {
                let n = body
                    .bytes()
                    .take_while(|b| b.is_ascii_digit() || *b == b';' || *b == b':')
                    .count();
                if body[n..].starts_with('m') {
                    rest = &body[n + 1..];
                    continue;
                }
            }
        }
        return Err(format!(
            "text output has a raw {:?} at {}",
            c,
            short(&rest[i.saturating_sub(40)..])
        ));
    }
    Ok(())
}

fn sse(s: &str, named_events: bool) -> Result<(), String> {
    if s.is_empty() {
        return Ok(());
    }
    if s.contains('\r') {
        return Err("CR in SSE output".into());
    }
    if !s.ends_with("\n\n") {
        return Err(format!(
            "SSE output does not end with a blank line: {}",
            short(&s[s.len().saturating_sub(80)..])
        ));
    }
    let mut lines = s[..s.len() - 1].split('\n').peekable();
    let mut last_data = "";
    while let Some(mut line) = lines.next() {
        if named_events && let Some(name) = line.strip_prefix("event: ") {
            if name.is_empty() || !name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') {
                return Err(format!("bad event name: {}", short(line)));
            }
            line = lines.next().unwrap_or("");
        }
        let data = line
            .strip_prefix("data: ")
            .ok_or_else(|| format!("not a data line: {}", short(line)))?;
        if data != "[DONE]" {
            object(data)?;
        }
        last_data = data;
        if lines.next() != Some("") {
            return Err(format!(
                "record not followed by a blank line: {}",
                short(data)
            ));
        }
    }
    if last_data != "[DONE]" {
        return Err("the last SSE record is not [DONE]".into());
    }
    Ok(())
}

/// Records of exactly `event: <name>\ndata: {"type":"<name>",…}\n\n`: a
/// client that dispatches on the event name and one that reads only the
/// data see the same thing.
fn named_sse(s: &str) -> Result<(), String> {
    if s.contains('\r') {
        return Err("CR in SSE output".into());
    }
    let mut rest = s;
    while !rest.is_empty() {
        let end = rest
            .find("\n\n")
            .ok_or_else(|| format!("record not followed by a blank line: {}", short(rest)))?;
        let rec = &rest[..end];
        rest = &rest[end + 2..];
        let (head, data) = rec
            .split_once('\n')
            .ok_or_else(|| format!("a record is not two lines: {}", short(rec)))?;
        let name = head
            .strip_prefix("event: ")
            .ok_or_else(|| format!("not an event line: {}", short(head)))?;
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b == b'_' || b == b'.')
        {
            return Err(format!("bad event name: {}", short(head)));
        }
        let data = data
            .strip_prefix("data: ")
            .ok_or_else(|| format!("not a data line: {}", short(data)))?;
        if !data.starts_with(&format!("{{\"type\":\"{name}\"")) {
            return Err(format!(
                "the data's type is not first or not the event name {name:?}: {}",
                short(data)
            ));
        }
        object(data)?;
    }
    Ok(())
}

fn json_values(s: &str) -> Result<(), String> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut n = 0;
    loop {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == b.len() {
            break;
        }
        n += 1;
        if b[i] != b'{' {
            return Err(format!("value {n} is not an object: {}", short(&s[i..])));
        }
        i = value_end(b, i).map_err(|e| format!("value {n}: {e}"))?;
    }
    if !s.is_empty() && !s.ends_with('\n') {
        return Err("output does not end with a newline".into());
    }
    Ok(())
}

/// A line that opens or closes a CommonMark code fence: up to three spaces,
/// then three or more backticks or tildes. Returns the character, the run's
/// length and what follows it.
fn fence_of(line: &str) -> Option<(u8, usize, &str)> {
    let rest = line.trim_start_matches(' ');
    if line.len() - rest.len() > 3 {
        return None;
    }
    let ch = *rest.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let run = rest.bytes().take_while(|b| *b == ch).count();
    (run >= 3).then(|| (ch, run, &rest[run..]))
}

/// Fence state across lines: `Some((ch, len))` inside a code block.
fn fence_step(open: &mut Option<(u8, usize)>, line: &str) {
    match (*open, fence_of(line)) {
        (None, Some((ch, len, info))) if !(ch == b'`' && info.contains('`')) => {
            *open = Some((ch, len));
        }
        (Some((ch, len)), Some((c, run, rest)))
            if c == ch && run >= len && rest.trim().is_empty() =>
        {
            *open = None;
        }
        _ => {}
    }
}

fn markdown(s: &str) -> Result<(), String> {
    text(s, false)?;
    let mut fence: Option<(u8, usize)> = None;
    let mut quoted: Option<(u8, usize)> = None;
    let mut depth = 0usize;
    for (n, line) in s.lines().enumerate() {
        let n = n + 1;
        if let Some(q) = line.strip_prefix('>') {
            fence_step(&mut quoted, q.strip_prefix(' ').unwrap_or(q));
            continue;
        }
        // A quote ends at a line outside it, and its code block with it.
        quoted = None;
        let was_code = fence.is_some();
        fence_step(&mut fence, line);
        if was_code || fence.is_some() {
            continue;
        }
        match line {
            "<details>" => depth += 1,
            "</details>" if depth == 0 => {
                return Err(format!("line {n}: </details> without <details>"));
            }
            "</details>" => depth -= 1,
            _ => {}
        }
    }
    if let Some((ch, len)) = fence {
        return Err(format!(
            "a code fence of {len} x {:?} is never closed",
            char::from(ch)
        ));
    }
    if depth != 0 {
        return Err(format!("{depth} <details> never closed"));
    }
    Ok(())
}

/// The elements cstream's HTML uses, and which of them are void.
const HTML_ELEMENTS: &[&str] = &[
    "html",
    "head",
    "meta",
    "title",
    "style",
    "body",
    "main",
    "section",
    "header",
    "h1",
    "h2",
    "dl",
    "dt",
    "dd",
    "nav",
    "ol",
    "li",
    "a",
    "p",
    "b",
    "div",
    "details",
    "summary",
    "pre",
    "code",
    "span",
    "table",
    "tr",
    "th",
    "td", // the agent's Markdown:
    "h3",
    "h4",
    "h5",
    "h6",
    "strong",
    "em",
    "del",
    "sup",
    "sub",
    "blockquote",
    "ul",
    "hr",
    "br",
    "thead",
    "tbody",
];
const HTML_ATTRIBUTES: &[&str] = &[
    "lang",
    "charset",
    "name",
    "content",
    "http-equiv",
    "class",
    "id",
    "aria-label",
    "role",
    "href",
    "data-lang",
    "rel",
    "title",
    "start",
];

fn html(s: &str) -> Result<(), String> {
    if s.is_empty() {
        return Ok(());
    }
    text(s, false)?;
    let body = s
        .strip_prefix("<!DOCTYPE html>\n")
        .ok_or_else(|| format!("HTML does not start with its doctype: {}", short(s)))?;
    if !body.ends_with("</html>\n") {
        return Err(format!(
            "HTML does not end with </html>: {}",
            short(&s[s.len().saturating_sub(80)..])
        ));
    }
    let mut stack: Vec<&str> = Vec::new();
    let mut rest = body;
    let at = |rest: &str| short(&rest[..rest.len().min(120)]);
    while let Some(i) = rest.find(['<', '&']) {
        let tail = &rest[i..];
        if let Some(after) = tail.strip_prefix('&') {
            let ok = ["&amp;", "&lt;", "&gt;", "&quot;", "&#39;"]
                .iter()
                .any(|e| tail.starts_with(e));
            if !ok {
                return Err(format!(
                    "an & that is not one of cstream's references: {}",
                    at(tail)
                ));
            }
            rest = after;
            continue;
        }
        let end = tail
            .find('>')
            .ok_or_else(|| format!("a tag that never ends: {}", at(tail)))?;
        let tag = &tail[1..end];
        rest = &tail[end + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            match stack.pop() {
                Some(open) if open == name => {}
                open => {
                    return Err(format!("</{name}> closes {open:?}: {}", at(tail)));
                }
            }
            continue;
        }
        let (name, mut attrs) = tag.split_once(' ').unwrap_or((tag, ""));
        if !HTML_ELEMENTS.contains(&name) {
            return Err(format!("an element cstream does not write: {}", at(tail)));
        }
        while !attrs.is_empty() {
            let (attr, after) = attrs
                .split_once("=\"")
                .ok_or_else(|| format!("an attribute without a quoted value: {}", at(tail)))?;
            let (value, after) = after
                .split_once('"')
                .ok_or_else(|| format!("an unterminated attribute: {}", at(tail)))?;
            if !HTML_ATTRIBUTES.contains(&attr) {
                return Err(format!("an attribute cstream does not write: {}", at(tail)));
            }
            // A link out of the page only by a scheme that cannot run code
            // (the Markdown's links), and never with the opener exposed.
            if attr == "href" && !value.starts_with('#') {
                let end = value.find(['/', '?', '#']).unwrap_or(value.len());
                let scheme = value[..end]
                    .split_once(':')
                    .map(|(s, _)| s.to_ascii_lowercase());
                if !matches!(scheme.as_deref(), None | Some("http" | "https" | "mailto")) {
                    return Err(format!("a link with another scheme: {}", at(tail)));
                }
                if !tag.contains(" rel=\"noopener noreferrer\"") {
                    return Err(format!("a link out without rel=noopener: {}", at(tail)));
                }
            }
            if value.contains('<') {
                return Err(format!("a < in an attribute: {}", at(tail)));
            }
            attrs = after.strip_prefix(' ').unwrap_or(after);
        }
        if name == "style" {
            // Raw text: the page's own style, which never holds a tag.
            let close = rest
                .find("</style>")
                .ok_or_else(|| "<style> never closed".to_owned())?;
            if rest[..close].contains('<') {
                return Err(format!("a < in the style: {}", at(rest)));
            }
            rest = &rest[close + "</style>".len()..];
            continue;
        }
        if !matches!(name, "meta" | "hr" | "br") {
            stack.push(name);
        }
    }
    if !stack.is_empty() {
        return Err(format!("elements never closed: {stack:?}"));
    }
    Ok(())
}
