//! `--to messages`: one JSON row per session in the chat-template shape that
//! dataset tools and trainers read (docs/formats.md#messages):
//! `{"id", "agent", "model", "messages": [...], "tools": [...]}`.
//!
//! A row is one value, so the session is held until it ends: its messages
//! (text, thinking, tool calls and results, as owned strings) and the
//! argument shapes of its tools. Memory is one session, not the run.
//!
//! Every row has the same types in the same places, because a columnar
//! reader (Arrow, under `datasets`) needs one schema across rows: `content`
//! is always a string, `arguments` always a JSON string, a tool's
//! `parameters` always an object schema.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};

use std::borrow::Cow;
use std::fmt;

use serde::Serialize;
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::{OutputOptions, Session, Sink};
use crate::event::{Event, Kind, Text, ToolEnd, ToolStart};
use serde_json::value::RawValue;

/// Writes one row per session, at the session's end.
pub struct MessagesSink<W: Write> {
    w: W,
    model_override: Option<String>,
    s: Option<Row>,
}

/// One session being collected.
#[derive(Default)]
struct Row {
    id: String,
    agent: Option<String>,
    model: Option<String>,
    msgs: Vec<Msg>,
    /// The last step may take more assistant content: no tool result and
    /// no prompt came since it began.
    open: bool,
    /// Each call's step (index in `msgs`), to put its result after it.
    call_step: HashMap<String, usize>,
    /// Live output of running calls, for a completion that does not repeat it.
    live: HashMap<String, String>,
    /// Per tool name: how many calls, and per argument the JSON types seen
    /// and in how many calls it appeared.
    tools: BTreeMap<String, ToolShape>,
}

enum Msg {
    User(String),
    Step(Step),
}

/// One assistant message and the tool messages answering its calls.
#[derive(Default)]
struct Step {
    content: String,
    reasoning: String,
    calls: Vec<Call>,
    results: Vec<Message>,
}

/// One message as written. Fields a role does not have are left out.
#[derive(Serialize)]
struct Message {
    role: &'static str,
    /// Always a string (empty when an assistant message only calls tools).
    content: Content,
    #[serde(skip_serializing_if = "String::is_empty", serialize_with = "fast_str")]
    reasoning_content: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<Call>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
}

impl Message {
    fn new(role: &'static str, content: impl Into<Content>) -> Self {
        Message {
            role,
            content: content.into(),
            reasoning_content: String::new(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            name: None,
        }
    }
}

/// A tool call in the OpenAI shape.
#[derive(Serialize)]
struct Call {
    id: String,
    #[serde(rename = "type")]
    kind: &'static str,
    function: Function,
}

#[derive(Serialize)]
struct Function {
    name: String,
    /// The arguments as JSON text.
    #[serde(serialize_with = "fast_str")]
    arguments: String,
}

#[derive(Serialize)]
struct OutRow<'a> {
    id: &'a str,
    agent: Option<&'a str>,
    model: Option<&'a str>,
    messages: Vec<Message>,
    tools: Vec<Tool>,
}

#[derive(Serialize)]
struct Tool {
    #[serde(rename = "type")]
    kind: &'static str,
    function: ToolFunction,
}

#[derive(Serialize)]
struct ToolFunction {
    name: String,
    parameters: Parameters,
}

#[derive(Serialize)]
struct Parameters {
    #[serde(rename = "type")]
    kind: &'static str,
    properties: BTreeMap<String, Property>,
    required: Vec<String>,
}

#[derive(Serialize)]
struct Property {
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
}

#[derive(Default)]
struct ToolShape {
    calls: u64,
    /// Argument name → (types seen, calls that had it).
    args: BTreeMap<String, (Vec<&'static str>, u64)>,
}

impl<W: Write> MessagesSink<W> {
    pub fn new(w: W, opts: &OutputOptions) -> Self {
        MessagesSink {
            w,
            model_override: opts.ident.model.clone(),
            s: None,
        }
    }
}

impl Row {
    /// The step assistant content goes to: the open one, else a new one.
    fn step(&mut self) -> &mut Step {
        if !self.open || !matches!(self.msgs.last(), Some(Msg::Step(_))) {
            self.msgs.push(Msg::Step(Step::default()));
            self.open = true;
        }
        match self.msgs.last_mut() {
            Some(Msg::Step(s)) => s,
            _ => unreachable!("a step was pushed above"),
        }
    }

    fn call(&mut self, t: &ToolStart<'_>) {
        let name = function_name(&t.tool_name, t.mcp_server.as_deref(), t.mcp_tool.as_deref());
        let args = t.args.get();
        self.shape(&name, Some(args));
        let call = Call {
            id: t.call_id.to_string(),
            kind: "function",
            function: Function {
                name,
                arguments: args.to_owned(),
            },
        };
        self.step().calls.push(call);
        let at = self.msgs.len() - 1;
        self.call_step.insert(t.call_id.to_string(), at);
    }

    /// Record the argument shapes of one call of `name`.
    fn shape(&mut self, name: &str, args: Option<&str>) {
        let shape = match self.tools.get_mut(name) {
            Some(s) => s,
            None => self.tools.entry(name.to_owned()).or_default(),
        };
        shape.calls += 1;
        let Some(Ok(ArgTypes(Some(m)))) = args.map(serde_json::from_str::<ArgTypes>) else {
            return;
        };
        for (k, t) in m {
            let (types, n) = match shape.args.get_mut(&*k) {
                Some(e) => e,
                None => shape.args.entry(k.into_owned()).or_default(),
            };
            if !types.contains(&t) {
                types.push(t);
            }
            *n += 1;
        }
    }

    fn completed(&mut self, e: &ToolEnd<'_>) {
        let at = match self.call_step.remove(&*e.call_id) {
            Some(at) => at,
            None => {
                // A result whose call is not in the input (a capture cut
                // before it): the call is written with the name the result
                // gives and arguments unknown (`null`), so that every tool
                // message still answers a call before it.
                let name = function_name(&e.tool_name, None, None);
                self.shape(&name, None);
                let call = Call {
                    id: e.call_id.to_string(),
                    kind: "function",
                    function: Function {
                        name,
                        arguments: "null".to_owned(),
                    },
                };
                self.step().calls.push(call);
                self.msgs.len() - 1
            }
        };
        let live = self.live.remove(&*e.call_id);
        let content = tool_content(e, live);
        let name = match &self.msgs[at] {
            Msg::Step(s) => s
                .calls
                .iter()
                .find(|c| c.id == *e.call_id)
                .map(|c| c.function.name.clone()),
            Msg::User(_) => None,
        }
        .unwrap_or_else(|| e.tool_name.to_string());
        if let Msg::Step(s) = &mut self.msgs[at] {
            let mut m = Message::new("tool", content);
            m.tool_call_id = Some(e.call_id.to_string());
            m.name = Some(name);
            s.results.push(m);
        }
        // The model answers a result in a new message.
        self.open = false;
    }

    fn write<W: Write>(self, w: &mut W) -> io::Result<()> {
        let mut messages = Vec::new();
        for m in self.msgs {
            match m {
                Msg::User(text) => messages.push(Message::new("user", text)),
                Msg::Step(s) => {
                    if s.content.is_empty() && s.reasoning.is_empty() && s.calls.is_empty() {
                        continue;
                    }
                    let mut a = Message::new("assistant", s.content);
                    a.reasoning_content = s.reasoning;
                    a.tool_calls = s.calls;
                    messages.push(a);
                    messages.extend(s.results);
                }
            }
        }
        let tools = self
            .tools
            .into_iter()
            .map(|(name, shape)| {
                let mut properties = BTreeMap::new();
                let mut required = Vec::new();
                for (arg, (types, n)) in shape.args {
                    if n == shape.calls {
                        required.push(arg.clone());
                    }
                    let kind = one_type(&types);
                    properties.insert(arg, Property { kind });
                }
                Tool {
                    kind: "function",
                    function: ToolFunction {
                        name,
                        parameters: Parameters {
                            kind: "object",
                            properties,
                            required,
                        },
                    },
                }
            })
            .collect();
        let row = OutRow {
            id: &self.id,
            agent: self.agent.as_deref(),
            model: self.model.as_deref(),
            messages,
            tools,
        };
        serde_json::to_writer(&mut *w, &row).map_err(io::Error::other)?;
        w.write_all(b"\n")
    }
}

/// The function name a call is written with: the normalized tool name,
/// and for an MCP tool `mcp__<server>__<tool>` so that its tools stay apart.
pub(crate) fn function_name(tool: &str, server: Option<&str>, mcp_tool: Option<&str>) -> String {
    match (tool, server, mcp_tool) {
        ("mcp", Some(s), Some(t)) => format!("mcp__{s}__{t}"),
        ("mcp", None, Some(t)) => format!("mcp__{t}"),
        _ => tool.to_owned(),
    }
}

/// The top-level arguments of a call and the JSON type of each, read
/// without building the values (`None`: not an object). A key given twice
/// is one argument with its last value's type, as in a parsed object.
struct ArgTypes<'a>(Option<Vec<(Cow<'a, str>, &'static str)>>);

impl<'de> Deserialize<'de> for ArgTypes<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Args;
        impl<'de> Visitor<'de> for Args {
            type Value = ArgTypes<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                let mut out: Vec<(Cow<'de, str>, &'static str)> = Vec::new();
                while let Some(Key(k)) = m.next_key()? {
                    let JsonType(t) = m.next_value()?;
                    match out.iter_mut().find(|(o, _)| *o == k) {
                        Some(e) => e.1 = t,
                        None => out.push((k, t)),
                    }
                }
                Ok(ArgTypes(Some(out)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Self::Value, A::Error> {
                while s.next_element::<IgnoredAny>()?.is_some() {}
                Ok(ArgTypes(None))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(ArgTypes(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(ArgTypes(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(ArgTypes(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(ArgTypes(None))
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(ArgTypes(None))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(ArgTypes(None))
            }
        }
        d.deserialize_any(Args)
    }
}

/// An object key, borrowed from the input when it has no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct K;
        impl<'de> Visitor<'de> for K {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(s.to_owned())))
            }
        }
        d.deserialize_str(K)
    }
}

/// A value's JSON Schema type, its contents skipped: an integer is a
/// number written without fraction or exponent that fits 64 bits, as
/// serde_json's `Number::is_i64`/`is_u64` say of a parsed value.
struct JsonType(&'static str);

impl<'de> Deserialize<'de> for JsonType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct T;
        impl<'de> Visitor<'de> for T {
            type Value = JsonType;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_unit<E>(self) -> Result<JsonType, E> {
                Ok(JsonType("null"))
            }
            fn visit_bool<E>(self, _: bool) -> Result<JsonType, E> {
                Ok(JsonType("boolean"))
            }
            fn visit_i64<E>(self, _: i64) -> Result<JsonType, E> {
                Ok(JsonType("integer"))
            }
            fn visit_u64<E>(self, _: u64) -> Result<JsonType, E> {
                Ok(JsonType("integer"))
            }
            fn visit_f64<E>(self, _: f64) -> Result<JsonType, E> {
                Ok(JsonType("number"))
            }
            fn visit_str<E>(self, _: &str) -> Result<JsonType, E> {
                Ok(JsonType("string"))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<JsonType, A::Error> {
                while s.next_element::<IgnoredAny>()?.is_some() {}
                Ok(JsonType("array"))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<JsonType, A::Error> {
                while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(JsonType("object"))
            }
        }
        d.deserialize_any(T)
    }
}

/// One JSON Schema type for the types an argument was seen with: `null`
/// beside another type says only that it was sometimes left empty, and an
/// integer is a number; types that still differ give none (any value), as
/// a list here would make `type` a string in one row and a list in another.
fn one_type(types: &[&'static str]) -> Option<&'static str> {
    let mut t: Vec<&str> = types.iter().copied().filter(|t| *t != "null").collect();
    if t.contains(&"number") {
        t.retain(|t| *t != "integer");
    }
    match t.as_slice() {
        [] => Some("null"),
        [one] => Some(one),
        _ => None,
    }
}

/// What a tool message says: the call's output (its live output when the
/// completion does not repeat it), else its result payload (a string as its
/// characters, anything else as JSON text), then its error when it failed.
/// A tool message's text: its characters, or the source's JSON string
/// literal of them when serde_json would write those characters as exactly
/// that literal ([`canonical_literal`]): a tool output, most of a
/// session's bytes, is then copied instead of unescaped and escaped again,
/// and the row is byte for byte the same.
pub(crate) enum Content {
    Chars(String),
    Literal(Box<RawValue>),
}

impl From<String> for Content {
    fn from(s: String) -> Self {
        Content::Chars(s)
    }
}

impl Serialize for Content {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Content::Chars(c) => fast_str(c, s),
            Content::Literal(l) => l.serialize(s),
        }
    }
}

/// serde_json's name for a raw value being serialized: a struct of this
/// name whose one field (of the same name) is a string is written as that
/// string, as it is (how `RawValue` serializes itself; the name is not
/// exported). `fast_str_writes_what_serde_json_writes` fails if a
/// serde_json release changes it.
const RAW_TOKEN: &str = "$serde_json::private::RawValue";

/// JSON text written as it is by serde_json's serializer (see [`RAW_TOKEN`]).
struct Raw<'a>(&'a str);

impl Serialize for Raw<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct(RAW_TOKEN, 1)?;
        st.serialize_field(RAW_TOKEN, self.0)?;
        st.end()
    }
}

thread_local! {
    /// The escaped text of the string [`fast_str`] is writing.
    static ESCAPED: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Serialize the string `v` as serde_json does, byte for byte, but escaped
/// by the crate's escaper ([`super::escape`]), which tests 16 bytes at
/// a time where serde_json looks up every byte: the text of
/// atif and messages (answers, reasoning, tool output, arguments) was
/// most of their cost. For `#[serde(serialize_with)]`.
pub(crate) fn fast_str<S: serde::Serializer>(v: &str, s: S) -> Result<S::Ok, S::Error> {
    ESCAPED.with_borrow_mut(|buf| {
        buf.clear();
        super::escape::push_str(buf, v);
        // The escaper copies runs of `v` cut at ASCII bytes and adds ASCII
        // escapes: the text is UTF-8 (checked, not assumed).
        let lit = std::str::from_utf8(buf).map_err(serde::ser::Error::custom)?;
        let out = Raw(lit).serialize(s);
        if buf.capacity() > 1 << 20 {
            // A huge output's buffer is not kept for the rest of the run.
            *buf = Vec::new();
        }
        out
    })
}

/// [`fast_str`] of an optional field (`None` is `null`).
pub(crate) fn fast_opt_str<S: serde::Serializer>(
    v: &Option<&str>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => fast_str(v, s),
        None => s.serialize_none(),
    }
}

/// Whether serde_json writes the characters of the JSON string literal
/// `lit` (quotes included, valid) as `lit` itself: its escapes are only
/// those serde_json writes (`\"`, `\\`, `\n`, `\r`, `\t`, `\b`, `\f`,
/// and `\u00xx` in lower-case hex for the other control characters).
/// Anything else (`\/`, `\u00e9`, `\u001B`) is not.
pub(crate) fn canonical_literal(lit: &str) -> bool {
    let b = lit.as_bytes();
    let mut i = 0;
    while let Some(p) = memchr::memchr(b'\\', &b[i..]) {
        let at = i + p;
        match b.get(at + 1) {
            Some(b'"' | b'\\' | b'n' | b'r' | b't' | b'b' | b'f') => i = at + 2,
            Some(b'u') => {
                let Some(&[b'0', b'0', h, l]) = b.get(at + 2..at + 6) else {
                    return false;
                };
                let hex = |c: u8| match c {
                    b'0'..=b'9' => Some(c - b'0'),
                    b'a'..=b'f' => Some(c - b'a' + 10),
                    _ => None,
                };
                match (hex(h), hex(l)) {
                    (Some(h @ 0..=1), Some(l)) => {
                        if matches!(h * 16 + l, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d) {
                            return false;
                        }
                    }
                    _ => return false,
                }
                i = at + 6;
            }
            _ => return false,
        }
    }
    true
}

pub(crate) fn tool_content(e: &ToolEnd<'_>, live: Option<String>) -> Content {
    if let (Some(Text::Json(lit)), None) = (&e.output, &e.error)
        && lit.len() > 2
        && canonical_literal(lit)
        && let Ok(raw) = RawValue::from_string(lit.clone().into_owned())
    {
        return Content::Literal(raw);
    }
    let mut out = match (&e.output, live) {
        (Some(o), _) => o.as_str().into_owned(),
        (None, Some(l)) => l,
        (None, None) => match e.result.as_ref().map(|r| r.get()) {
            None | Some("null") => String::new(),
            // Only a string literal is read: parsing any other payload
            // into a value just to see its type cost most of this format's
            // time on tool-heavy sessions.
            Some(r) if r.trim_start().starts_with('"') => {
                serde_json::from_str::<String>(r).unwrap_or_else(|_| r.to_owned())
            }
            Some(r) => r.to_owned(),
        },
    };
    if let Some(err) = e.error.as_deref()
        && !out.contains(err)
    {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(err);
    }
    if out.is_empty() && e.outcome_unknown {
        // Not an empty output: the source did not record one.
        out.push_str("(outcome not recorded)");
    }
    Content::Chars(out)
}

impl<W: Write> Sink for MessagesSink<W> {
    fn begin(&mut self, s: &Session) -> io::Result<()> {
        self.s = Some(Row {
            id: s.id.clone(),
            ..Row::default()
        });
        Ok(())
    }

    fn event(&mut self, s: &Session, ev: &Event<'_>) -> io::Result<()> {
        let row = self.s.get_or_insert_with(|| Row {
            id: s.id.clone(),
            ..Row::default()
        });
        match &ev.kind {
            Kind::SessionStarted(st) => {
                row.agent = Some(st.dialect.to_string());
                row.model = self
                    .model_override
                    .clone()
                    .or_else(|| st.model.as_deref().map(str::to_owned));
            }
            Kind::UserMessage { text } => {
                row.msgs.push(Msg::User(text.to_string()));
                row.open = false;
            }
            Kind::TextDelta { text } | Kind::AssistantMessage { text } => {
                row.step().content.push_str(text)
            }
            Kind::ThinkingDelta { text } | Kind::Thinking { text, .. } => {
                row.step().reasoning.push_str(text)
            }
            Kind::ToolCallStarted(t) => row.call(t),
            Kind::ShellOutputDelta { call_id, text, .. } => row
                .live
                .entry(call_id.to_string())
                .or_default()
                .push_str(text),
            Kind::ToolCallCompleted(e) => row.completed(e),
            Kind::ToolCall(b) => {
                row.call(&b.0);
                row.completed(&b.1);
            }
            // Not part of the conversation the model saw as messages:
            // usage, results, errors, interface commands and notes, unknown
            // records (counted and reported by the run, as for every format).
            _ => {}
        }
        Ok(())
    }

    fn end(&mut self, _s: &Session) -> io::Result<()> {
        if let Some(row) = self.s.take() {
            row.write(&mut self.w)?;
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }

    fn finish(&mut self) -> io::Result<()> {
        if let Some(row) = self.s.take() {
            row.write(&mut self.w)?;
        }
        self.w.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// What a parsed value says of the same arguments (the way they were
    /// read before `ArgTypes`).
    fn by_value(args: &str) -> Option<Vec<(String, &'static str)>> {
        let Ok(Value::Object(m)) = serde_json::from_str::<Value>(args) else {
            return None;
        };
        let mut v: Vec<(String, &'static str)> = m
            .into_iter()
            .map(|(k, v)| {
                let t = match v {
                    Value::Null => "null",
                    Value::Bool(_) => "boolean",
                    Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
                    Value::Number(_) => "number",
                    Value::String(_) => "string",
                    Value::Array(_) => "array",
                    Value::Object(_) => "object",
                };
                (k, t)
            })
            .collect();
        v.sort();
        Some(v)
    }

    #[test]
    fn argument_types_as_a_parsed_value_gives_them() {
        for args in [
            r#"{"command":"ls","timeout":5,"ratio":0.5,"big":123456789012345678901234,"neg":-3}"#,
            r#"{"a":null,"b":true,"c":[1,{"x":2}],"d":{"e":[]},"f":"\"q\""}"#,
            r#"{"k\u00e9y":1,"dup":1,"dup":"now a string"}"#,
            r#"{"e":1e3,"z":-0,"m":18446744073709551615,"n":-9223372036854775808}"#,
            r#"{}"#,
            r#"[1,2]"#,
            r#""text""#,
            r#"null"#,
            r#"{"unclosed":"#,
            r#"{"a":1} trailing"#,
        ] {
            let ours = match serde_json::from_str::<ArgTypes>(args) {
                Ok(ArgTypes(Some(v))) => {
                    let mut v: Vec<(String, &'static str)> =
                        v.into_iter().map(|(k, t)| (k.into_owned(), t)).collect();
                    v.sort();
                    Some(v)
                }
                _ => None,
            };
            assert_eq!(ours, by_value(args), "{args}");
        }
    }

    /// `fast_str` writes what serde_json writes for the same string, in a
    /// document and alone; were serde_json to stop writing [`RAW_TOKEN`]'s
    /// field as it is, this would fail.
    #[test]
    fn fast_str_writes_what_serde_json_writes() {
        use proptest::prelude::*;
        #[derive(Serialize)]
        struct Fast<'a> {
            #[serde(serialize_with = "fast_str")]
            a: &'a str,
            #[serde(serialize_with = "fast_opt_str")]
            b: Option<&'a str>,
            #[serde(serialize_with = "fast_opt_str")]
            c: Option<&'a str>,
        }
        #[derive(Serialize)]
        struct Plain<'a> {
            a: &'a str,
            b: Option<&'a str>,
            c: Option<&'a str>,
        }
        let piece = prop::sample::select(vec![
            "a",
            "text ",
            "\"",
            "\\",
            "\n",
            "\n",
            "\t",
            "\r",
            "\u{1}",
            "\u{8}",
            "\u{c}",
            "\u{1f}",
            "\u{7f}",
            "é",
            "🚀",
            "0123456789abcdef",
        ]);
        proptest!(|(parts in prop::collection::vec(piece, 0..40))| {
            let s = parts.concat();
            let fast = serde_json::to_string(&Fast { a: &s, b: Some(&s), c: None }).unwrap();
            let plain = serde_json::to_string(&Plain { a: &s, b: Some(&s), c: None }).unwrap();
            prop_assert_eq!(fast, plain);
            let content = serde_json::to_string(&Content::Chars(s.clone())).unwrap();
            prop_assert_eq!(content, serde_json::to_string(&s).unwrap());
        });
    }

    /// `canonical_literal` says yes exactly when serde_json writes the
    /// literal's characters back as the same literal: a copied literal is
    /// then the same bytes as the characters escaped.
    #[test]
    fn a_canonical_literal_is_what_serde_json_writes() {
        use proptest::prelude::*;
        let check = |lit: &str| {
            let Ok(chars) = serde_json::from_str::<String>(lit) else {
                return;
            };
            let again = serde_json::to_string(&chars).unwrap();
            assert_eq!(canonical_literal(lit), again == lit, "{lit}");
        };
        for lit in [
            r#""plain""#,
            r#""a\nb\t\"q\" \\ \r\b\f""#,
            r#""\u001b[31mred\u001b[0m \u0000 \u001f \u007f""#,
            r#""\u001B""#,
            r#""\u000a""#,
            r#""\u0041""#,
            r#""caf\u00e9 café \/ \ud83d\ude80 🚀""#,
            "\"\u{7f}\"",
        ] {
            check(lit);
        }
        // Escapes of every kind, joined at random.
        let piece = prop::sample::select(vec![
            "a",
            " ",
            "é",
            "\\n",
            "\\t",
            "\\\"",
            "\\\\",
            "\\/",
            "\\b",
            "\\f",
            "\\r",
            "\\u001b",
            "\\u001B",
            "\\u0008",
            "\\u000a",
            "\\u0020",
            "\\u00e9",
            "\\u0041",
            "\\ud83d\\ude80",
            "\\u007f",
            "\u{7f}",
        ]);
        proptest!(|(parts in prop::collection::vec(piece, 0..8))| {
            check(&format!("\"{}\"", parts.concat()));
        });
    }
}
