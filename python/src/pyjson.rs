//! JSON text straight into Python objects, for `events()`: no intermediate
//! tree, and the strings every event repeats built once.
//!
//! Every event has a `type` and a `sessionId`, and the keys come from a
//! small fixed set, so a dict built naively spends much of its time making
//! the same Python strings again. Keys are kept in a table for the life of
//! the iterator; the values of a few keys that repeat from one event to the
//! next (the session id, the event type, the tool name) are kept as the
//! last one seen per key.

use std::cell::RefCell;
use std::collections::HashMap;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyString};
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// The keys whose last value is kept (their values repeat event to event).
const REPEATED: [&str; 5] = ["type", "sessionId", "toolName", "dialect", "source"];

/// More distinct keys than this and the table stops growing: the events
/// schema has a few dozen, but a tool's own arguments and results are
/// free-form and must not fill memory.
const MAX_KEYS: usize = 4096;

/// The strings kept across lines.
#[derive(Default)]
pub struct Strings {
    keys: HashMap<Box<str>, Py<PyString>>,
    last: [Option<(Box<str>, Py<PyString>)>; REPEATED.len()],
}

impl Strings {
    fn key<'py>(&mut self, py: Python<'py>, k: &str) -> Bound<'py, PyString> {
        if let Some(s) = self.keys.get(k) {
            return s.bind(py).clone();
        }
        let s = PyString::intern(py, k);
        if self.keys.len() < MAX_KEYS {
            self.keys.insert(k.into(), s.clone().unbind());
        }
        s
    }

    fn value<'py>(&mut self, py: Python<'py>, slot: usize, v: &str) -> Bound<'py, PyString> {
        if let Some((text, s)) = &self.last[slot]
            && **text == *v
        {
            return s.bind(py).clone();
        }
        let s = PyString::new(py, v);
        self.last[slot] = Some((v.into(), s.clone().unbind()));
        s
    }
}

/// Parse one JSON text (known to be valid UTF-8) into a Python object.
pub fn to_py<'py>(
    py: Python<'py>,
    strings: &RefCell<Strings>,
    text: &str,
) -> Result<Bound<'py, PyAny>, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let v = Seed {
        py,
        strings,
        slot: None,
    }
    .deserialize(&mut de)?;
    de.end()?;
    Ok(v)
}

#[derive(Clone, Copy)]
struct Seed<'a, 'py> {
    py: Python<'py>,
    strings: &'a RefCell<Strings>,
    /// The kept-value slot of the key this value belongs to.
    slot: Option<usize>,
}

impl<'de, 'py> DeserializeSeed<'de> for Seed<'_, 'py> {
    type Value = Bound<'py, PyAny>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

fn py_err<E: serde::de::Error>(e: PyErr) -> E {
    E::custom(e.to_string())
}

impl<'de, 'py> Visitor<'de> for Seed<'_, 'py> {
    type Value = Bound<'py, PyAny>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(PyBool::new(self.py, v).to_owned().into_any())
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(v.into_pyobject(self.py)
            .unwrap_or_else(|e| match e {})
            .into_any())
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(v.into_pyobject(self.py)
            .unwrap_or_else(|e| match e {})
            .into_any())
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(v.into_pyobject(self.py)
            .unwrap_or_else(|e| match e {})
            .into_any())
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(match self.slot {
            Some(slot) => self.strings.borrow_mut().value(self.py, slot, v),
            None => PyString::new(self.py, v),
        }
        .into_any())
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(self.py.None().into_bound(self.py))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let list = PyList::empty(self.py);
        let item = Seed { slot: None, ..self };
        while let Some(v) = seq.next_element_seed(item)? {
            list.append(v).map_err(py_err)?;
        }
        Ok(list.into_any())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let dict = PyDict::new(self.py);
        while let Some(k) = map.next_key::<Key>()? {
            let key = self.strings.borrow_mut().key(self.py, &k.0);
            let slot = REPEATED.iter().position(|r| **r == *k.0);
            let v = map.next_value_seed(Seed { slot, ..self })?;
            dict.set_item(key, v).map_err(py_err)?;
        }
        Ok(dict.into_any())
    }
}

/// A map key, borrowed from the text when it has no escapes.
struct Key<'de>(std::borrow::Cow<'de, str>);

impl<'de> serde::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(std::borrow::Cow::Borrowed(v)))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(std::borrow::Cow::Owned(v.to_owned())))
            }
        }
        d.deserialize_str(V)
    }
}
