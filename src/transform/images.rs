//! Base64 images inside records (a Claude `image` block, a Codex
//! `input_image` data URL, a Gemini `inlineData` part) are elided before
//! any format writes them: the payload becomes a placeholder that says its
//! kind and decoded size, `[image: image/png, 48.2 KiB]`. `--keep-images`
//! leaves them (this adapter is then not in the pipeline).
//!
//! A sink adapter, so every format gets the same events. Only the payloads
//! that keep the source's shape (`args`, `result`, `partial`, `raw`), a
//! prompt's text and a call's output and error are looked at, and only
//! when they hold the word `base64` or `inlineData` at all, so the common
//! event costs one substring search.

use std::borrow::Cow;
use std::io;
use std::sync::LazyLock;

use memchr::memmem;
use serde_json::Value;

use crate::event::{Adapter, Event, Json, Kind, Session, Sink, Text, ToolEnd, ToolStart};

/// A data URL's marker, and the marker of an `inlineData` part.
static BASE64: LazyLock<memmem::Finder<'static>> = LazyLock::new(|| memmem::Finder::new("base64"));
static INLINE: LazyLock<memmem::Finder<'static>> =
    LazyLock::new(|| memmem::Finder::new("inlineData"));

/// Elides base64 images, then hands events on to `inner`.
pub struct Images<'s> {
    inner: Box<dyn Sink + 's>,
}

impl<'s> Images<'s> {
    pub fn new(inner: Box<dyn Sink + 's>) -> Self {
        Images { inner }
    }
}

use crate::strings::image_placeholder as placeholder;

fn may_hold(s: &str) -> bool {
    BASE64.find(s.as_bytes()).is_some() || INLINE.find(s.as_bytes()).is_some()
}

/// Could the characters of `o` hold a data URL? A literal (shell output
/// as it came) is looked at as it is, not unescaped: its escapes other than
/// `\u` stand for characters that are not in "base64" and would cut the
/// word, so the characters have the word only if the literal has it or a
/// `\u` escape spells one of its letters. Shell output is full of `\u001b`
/// (terminal colours), which spell none: unescaping all of it to look
/// cost more than converting the rest of the stream.
fn output_may_hold(o: &Text<'_>) -> bool {
    match o {
        Text::Plain(s) => BASE64.find(s.as_bytes()).is_some(),
        Text::Json(lit) => {
            let b = lit.as_bytes();
            BASE64.find(b).is_some()
                || memmem::find_iter(b, b"\\u").any(|i| spells_base64_letter(&b[i + 2..]))
        }
    }
}

/// Whether the four hex digits at the start of `hex` (after a `\u`) are a
/// letter of "base64". Anything else starting there (fewer than four
/// bytes, a `\\u` that is an escaped backslash before a `u`) answers
/// yes or no as its digits happen to read: a yes only costs a closer look.
fn spells_base64_letter(hex: &[u8]) -> bool {
    let Some(h) = hex.get(..4) else {
        return false;
    };
    let Ok(h) = std::str::from_utf8(h) else {
        return false;
    };
    u32::from_str_radix(h, 16).is_ok_and(|c| b"base64".iter().any(|&l| u32::from(l) == c))
}

/// Replace every `data:<type>;base64,<payload>` in `s`.
fn elide_data_urls(s: &str) -> Option<String> {
    BASE64.find(s.as_bytes())?;
    let mut out = String::new();
    let mut rest = s;
    let mut changed = false;
    while let Some(i) = rest.find("data:") {
        let after = &rest[i + 5..];
        let Some(semi) = after.find(";base64,") else {
            break;
        };
        let media = &after[..semi];
        if media.len() > 100 || media.contains(|c: char| c.is_whitespace() || c == '"') {
            out.push_str(&rest[..i + 5]);
            rest = after;
            continue;
        }
        let payload_at = semi + ";base64,".len();
        let n = after[payload_at..]
            .bytes()
            .take_while(|b| {
                b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'-' | b'_')
            })
            .count();
        out.push_str(&rest[..i]);
        out.push_str(&placeholder(media, &after[payload_at..payload_at + n]));
        rest = &after[payload_at + n..];
        changed = true;
    }
    out.push_str(rest);
    changed.then_some(out)
}

/// Elide the images in a JSON value: `{type:"base64", media_type, data}`
/// (Anthropic), `{mimeType, data}` inside `inlineData` (Gemini), and data
/// URLs in any string (OpenAI's `image_url`). True when one was found.
fn elide_value(v: &mut Value) -> bool {
    match v {
        Value::String(s) => match elide_data_urls(s) {
            Some(r) => {
                *s = r;
                true
            }
            None => false,
        },
        Value::Array(a) => a.iter_mut().fold(false, |hit, x| elide_value(x) | hit),
        Value::Object(o) => {
            let media = ["media_type", "mimeType", "mime_type"]
                .iter()
                .find_map(|k| o.get(*k).and_then(Value::as_str))
                .map(str::to_owned);
            let base64_source = o.get("type").and_then(Value::as_str) == Some("base64");
            let mut hit = false;
            if let Some(media) = media.filter(|_| base64_source || o.contains_key("data"))
                && let Some(Value::String(d)) = o.get_mut("data")
                && d.len() > 64
                && !d.starts_with('[')
            {
                *d = placeholder(&media, d);
                hit = true;
            }
            o.values_mut().fold(hit, |hit, x| elide_value(x) | hit)
        }
        _ => false,
    }
}

fn json(j: &mut Json<'_>) -> bool {
    if !may_hold(j.get()) {
        return false;
    }
    let Ok(mut v) = serde_json::from_str::<Value>(j.get()) else {
        return false;
    };
    if !elide_value(&mut v) {
        return false;
    }
    *j = Json::assembled(v.to_string());
    true
}

fn text(s: &mut Cow<'_, str>) -> bool {
    match elide_data_urls(s) {
        Some(r) => {
            *s = Cow::Owned(r);
            true
        }
        None => false,
    }
}

fn start(t: &mut ToolStart<'_>) -> bool {
    json(&mut t.args)
}

fn end(t: &mut ToolEnd<'_>) -> bool {
    let mut hit = t.result.as_mut().is_some_and(json);
    if let Some(o) = &t.output
        && output_may_hold(o)
        && let Some(r) = elide_data_urls(&o.as_str())
    {
        t.output = Some(Text::Plain(Cow::Owned(r)));
        hit = true;
    }
    if let Some(e) = &mut t.error {
        hit |= text(e);
    }
    if let Some(s) = &mut t.start {
        hit |= start(s);
    }
    hit
}

/// Elide the images of `k` in place; true if any was.
fn kind(k: &mut Kind<'_>) -> bool {
    match k {
        Kind::UserMessage { text: t } | Kind::UserEvent { text: t, .. } => text(t),
        Kind::ToolCallStarted(t) => start(t),
        Kind::ToolCallProgress { partial, .. } => json(partial),
        Kind::ToolCallCompleted(t) => end(t),
        Kind::ToolCall(b) => {
            let (s, e) = &mut **b;
            start(s) | end(e)
        }
        Kind::Unknown { raw } => json(raw),
        _ => false,
    }
}

/// Whether [`kind`] could change anything in `k`: the same searches it
/// starts with, made before the event is copied for it. Most events hold no
/// image, and copying a tool call's completion (its result, its output)
/// only to find none cost more than converting it.
fn may_change(k: &Kind<'_>) -> bool {
    let text = |s: &str| BASE64.find(s.as_bytes()).is_some();
    let start = |t: &ToolStart<'_>| may_hold(t.args.get());
    let end = |t: &ToolEnd<'_>| {
        t.result.as_ref().is_some_and(|r| may_hold(r.get()))
            || t.output.as_ref().is_some_and(output_may_hold)
            || t.error.as_deref().is_some_and(text)
            || t.start.as_deref().is_some_and(start)
    };
    match k {
        Kind::UserMessage { text: t } | Kind::UserEvent { text: t, .. } => text(t),
        Kind::ToolCallStarted(t) => start(t),
        Kind::ToolCallProgress { partial, .. } => may_hold(partial.get()),
        Kind::ToolCallCompleted(t) => end(t),
        Kind::ToolCall(b) => start(&b.0) || end(&b.1),
        Kind::Unknown { raw } => may_hold(raw.get()),
        _ => false,
    }
}

impl Adapter for Images<'_> {
    fn inner(&mut self) -> &mut dyn Sink {
        &mut *self.inner
    }

    fn inner_ref(&self) -> &dyn Sink {
        &*self.inner
    }

    fn event(&mut self, s: &Session, ev: &Event<'_>) -> io::Result<()> {
        if !may_change(&ev.kind) {
            return self.inner.event(s, ev);
        }
        let mut k = ev.kind.clone();
        if kind(&mut k) {
            self.inner.event(s, &Event::at(ev.ts, k))
        } else {
            self.inner.event(s, ev)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_say_kind_and_decoded_size() {
        let b64 = "A".repeat(65_800);
        assert_eq!(
            placeholder("image/png", &b64),
            "[image: image/png, 48.2 KiB]"
        );
        assert_eq!(
            placeholder("image/jpeg", "QUJD"),
            "[image: image/jpeg, 3 B]"
        );
        assert_eq!(
            elide_data_urls("see data:image/png;base64,iVBORw0KGgo= and more").as_deref(),
            Some("see [image: image/png, 8 B] and more")
        );
        assert_eq!(elide_data_urls("no images, only base64 talk"), None);
        let mut v: Value = serde_json::from_str(&format!(
            r#"[{{"type":"image","source":{{"type":"base64","media_type":"image/gif","data":"{b64}"}}}},
               {{"inlineData":{{"mimeType":"image/webp","data":"{b64}"}}}},
               {{"type":"input_image","image_url":"data:image/png;base64,{b64}"}}]"#
        ))
        .unwrap();
        assert!(elide_value(&mut v));
        let s = v.to_string();
        assert!(!s.contains(&b64[..100]), "{s}");
        assert_eq!(s.matches("48.2 KiB]").count(), 3, "{s}");
    }

    /// `may_change` says yes to every event `kind` changes (one per field
    /// it looks at, and a kept start inside a completion), and no to the
    /// same events without the image.
    #[test]
    fn may_change_before_every_change() {
        let url = "see data:image/png;base64,iVBORw0KGgo= here";
        let args = |img: bool| {
            let s = if img { url } else { "see no image here" };
            Json::assembled(serde_json::json!({ "prompt": s }).to_string())
        };
        let start = |img| ToolStart::new(Cow::Borrowed("c"), Cow::Borrowed("t"), args(img));
        let end = |field: usize, img: bool| {
            let mut t = ToolEnd::new(Cow::Borrowed("c"), Cow::Borrowed("t"), true);
            let s = if img { url } else { "nothing" };
            match field {
                0 => t.result = Some(args(img)),
                1 => t.output = Some(Text::Plain(Cow::Borrowed(s))),
                2 => t.output = Some(Text::Json(Cow::Owned(serde_json::to_string(s).unwrap()))),
                3 => t.error = Some(Cow::Borrowed(s)),
                _ => t.start = Some(Box::new(start(img))),
            }
            t
        };
        let kinds = |img: bool| {
            let s = if img { url } else { "plain words" };
            let mut v = vec![
                Kind::UserMessage {
                    text: Cow::Borrowed(s),
                },
                Kind::UserEvent {
                    what: crate::event::UserEventKind::Command,
                    text: Cow::Borrowed(s),
                },
                Kind::ToolCallStarted(Box::new(start(img))),
                Kind::ToolCallProgress {
                    call_id: Cow::Borrowed("c"),
                    partial: args(img),
                },
                Kind::Unknown { raw: args(img) },
            ];
            for field in 0..5 {
                v.push(Kind::ToolCallCompleted(Box::new(end(field, img))));
                v.push(Kind::ToolCall(Box::new((start(false), end(field, img)))));
            }
            v.push(Kind::ToolCall(Box::new((start(img), end(0, false)))));
            v
        };
        for (with, without) in kinds(true).into_iter().zip(kinds(false)) {
            assert!(kind(&mut with.clone()), "{with:?}");
            assert!(may_change(&with), "{with:?}");
            assert!(!kind(&mut without.clone()), "{without:?}");
            assert!(!may_change(&without), "{without:?}");
        }
    }

    #[test]
    fn shell_output_literals_are_looked_at_without_unescaping() {
        let elided = |lit: &str| {
            let mut t = ToolEnd::new(Cow::Borrowed("c"), Cow::Borrowed("shell"), true);
            t.output = Some(Text::literal(lit));
            end(&mut t).then(|| t.output.unwrap().as_str().into_owned())
        };
        // The word spelt in the literal, across escapes, or by a `\u` escape.
        let want = Some("a\n[image: image/png, 8 B]\n".to_owned());
        assert_eq!(elided(r#""a\ndata:image/png;base64,iVBORw0KGgo=\n""#), want);
        assert_eq!(
            elided(r#""a\ndata:image\/png;\u0062ase64,iVBORw0KGgo=\n""#),
            want
        );
        // Escapes that are not `\u` cannot make the word: nothing to elide.
        assert_eq!(elided(r#""base\n64 data:image/png;bas\te64,AAAA""#), None);
        assert!(!output_may_hold(&Text::literal(r#""base\n64 \t""#)));
        assert!(output_may_hold(&Text::literal(r#""\u0062ase64""#)));
        // Every letter of the word, in either case of hex digit; colour
        // escapes and other characters are not looked at closer.
        for l in ["0062", "0061", "0073", "0065", "0036", "0034", "0042"] {
            let lit = format!(r#""\u001b[1m \u{l}""#);
            let want = l != "0042";
            assert_eq!(
                output_may_hold(&Text::Json(Cow::Owned(lit.clone()))),
                want,
                "{lit}"
            );
            let upper = lit.to_uppercase().replace("\\U", "\\u");
            assert_eq!(
                output_may_hold(&Text::Json(Cow::Owned(upper))),
                want,
                "{lit}"
            );
        }
        assert!(!output_may_hold(&Text::literal(
            r#""\u001b[31mred\u001b[0m \u00e9""#
        )));
        // Spelt by an escape: elided as before.
        assert_eq!(
            elided(r#""\u001b[0mdata:image/png;bas\u0065\u00364,iVBORw0KGgo=""#),
            Some("\u{1b}[0m[image: image/png, 8 B]".to_owned())
        );
    }
}
