//! cstream: a stream filter for coding-agent event streams.
//!
//! The pipeline, one module per stage:
//! [`input`] (framing: lines, joins, arrays, repairs) →
//! [`dialect`] (detect the agent, parse each record into [`dialect::Item`]s) →
//! [`transform`] (sessions, dedupe, usage increments, open calls) →
//! [`event`] (the normalized model) → [`output`] (one sink per format).
//!
//! [`run::convert`] takes a reader and a writer, so a proxy can embed the
//! converter and tests run in-process:
//!
//! ```
//! use cstream::{diag::Diag, output::Format, run::{convert, Config}};
//!
//! let line = br#"{"type":"assistant","message":{"content":[{"type":"text","text":"hi"}]},"session_id":"s1"}"#;
//! let cfg = Config { format: Format::Events, ..Config::default() };
//! let mut out = Vec::new();
//! convert(&cfg, &line[..], &mut out, &mut Diag::sink()).unwrap();
//! assert_eq!(
//!     String::from_utf8(out).unwrap(),
//!     "{\"type\":\"session_started\",\"sessionId\":\"s1\",\"dialect\":\"cursor\"}\n\
//!      {\"type\":\"text_delta\",\"sessionId\":\"s1\",\"text\":\"hi\"}\n"
//! );
//! ```

pub mod cli;
pub mod clobber;
pub mod diag;
pub mod dialect;
pub mod event;
pub mod input;
pub mod json;
pub mod output;
pub mod prefix;
pub mod run;
pub mod stats;
pub mod strings;
pub mod summary;
pub mod terminal;
pub mod time;
pub mod transform;
