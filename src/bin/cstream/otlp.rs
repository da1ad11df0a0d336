//! `--otlp-endpoint URL`: each line `--to otlp-json` writes (one session's
//! `ExportTraceServiceRequest`) is also POSTed to an OTLP/HTTP receiver, JSON
//! encoded (docs/formats.md#otlp-json).
//!
//! The output is written first, whatever the receiver does: [`Tee`] passes
//! every byte to standard output or `-o FILE` and flushes a line before it
//! sends it, so a receiver that is down or refuses loses nothing. A failed
//! send is retried with backoff (connection errors, 429 and 5xx answers);
//! any other answer refuses that session and is not retried. Once a session
//! has used up its tries, the receiver is taken as down and the sessions
//! after it are written but not sent, so a run does not wait on a dead
//! receiver for each one. The run then ends with an error naming how many
//! sessions were not sent, and exit status 4.

use std::io::{self, Read, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Sends per session, the first included.
pub const TRIES: u32 = 5;
/// The wait before the second try; doubled before each next one.
const FIRST_BACKOFF: Duration = Duration::from_millis(200);

/// What the sends came to.
#[derive(Debug, Default)]
pub struct Sent {
    /// Sessions the receiver accepted.
    pub accepted: u64,
    /// Sessions not sent or not accepted.
    pub failed: u64,
    /// Why the last one failed.
    pub last_error: Option<String>,
    /// A session used up its tries: later ones are not sent.
    pub down: bool,
}

/// Sends request lines to one OTLP/HTTP traces URL.
pub struct Poster {
    url: String,
    agent: ureq::Agent,
    sent: Arc<Mutex<Sent>>,
}

/// The traces URL for `--otlp-endpoint`: as given, or with the signal's
/// path `/v1/traces` added when it names only the receiver (no path), as
/// OTLP exporters do with a base endpoint. Only `http://` is supported.
pub fn traces_url(given: &str) -> Result<String, String> {
    let Some(rest) = given.strip_prefix("http://") else {
        return Err(if given.starts_with("https://") {
            format!(
                "{given}: https is not supported (this build sends plain HTTP only); use an http:// receiver, such as a local collector"
            )
        } else {
            format!("{given}: not an http:// URL")
        });
    };
    let host_end = rest.find('/').unwrap_or(rest.len());
    if host_end == 0 {
        return Err(format!("{given}: no host"));
    }
    let path = &rest[host_end..];
    if path.is_empty() || path == "/" {
        Ok(format!("http://{}/v1/traces", &rest[..host_end]))
    } else {
        Ok(given.to_owned())
    }
}

impl Poster {
    /// A poster for `url` (checked by [`traces_url`]).
    pub fn new(url: String) -> Poster {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(Duration::from_secs(5)))
            .timeout_global(Some(Duration::from_secs(30)))
            .build()
            .into();
        Poster {
            url,
            agent,
            sent: Arc::default(),
        }
    }

    /// Where the results of the sends are kept.
    pub fn sent(&self) -> Arc<Mutex<Sent>> {
        self.sent.clone()
    }

    /// The URL sent to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Send one request (a line without its newline).
    fn post(&self, body: &[u8]) {
        let mut sent = self.sent.lock().unwrap_or_else(|e| e.into_inner());
        if sent.down {
            sent.failed += 1;
            return;
        }
        let mut wait = FIRST_BACKOFF;
        for attempt in 1..=TRIES {
            match self.try_once(body) {
                Ok(()) => {
                    sent.accepted += 1;
                    return;
                }
                Err((msg, retry)) => {
                    if !retry {
                        sent.failed += 1;
                        sent.last_error = Some(msg);
                        return;
                    }
                    if attempt == TRIES {
                        sent.failed += 1;
                        sent.last_error = Some(format!("{msg} ({TRIES} tries)"));
                        sent.down = true;
                        return;
                    }
                }
            }
            std::thread::sleep(wait);
            wait *= 2;
        }
    }

    /// One send: `Err((why, worth retrying))`.
    fn try_once(&self, body: &[u8]) -> Result<(), (String, bool)> {
        let resp = self
            .agent
            .post(&self.url)
            .header("Content-Type", "application/json")
            .send(body);
        let mut resp = match resp {
            Ok(r) => r,
            Err(e) => return Err((format!("{e}"), true)),
        };
        let status = resp.status().as_u16();
        let mut text = String::new();
        let _ = resp
            .body_mut()
            .as_reader()
            .take(4096)
            .read_to_string(&mut text);
        if (200..300).contains(&status) {
            // OTLP's partial success: the receiver took the request but
            // rejected some of its spans.
            if let Some(n) = rejected_spans(&text) {
                return Err((
                    format!("the receiver rejected {n} spans: {}", text.trim()),
                    false,
                ));
            }
            return Ok(());
        }
        let retry = status == 429 || (500..600).contains(&status);
        let text = text.trim();
        let short: String = text.chars().take(200).collect();
        Err((
            format!("HTTP {status} {short}").trim_end().to_owned(),
            retry,
        ))
    }
}

/// `partialSuccess.rejectedSpans` of an OTLP/JSON response, when not zero.
fn rejected_spans(body: &str) -> Option<u64> {
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    let n = &v.get("partialSuccess")?.get("rejectedSpans")?;
    let n = match n {
        serde_json::Value::String(s) => s.parse().ok()?,
        other => other.as_u64()?,
    };
    (n > 0).then_some(n)
}

/// A writer that passes everything on to `inner` and sends each complete
/// line to the receiver once it is written and flushed there.
pub struct Tee<W: Write> {
    inner: W,
    line: Vec<u8>,
    poster: Poster,
}

impl<W: Write> Tee<W> {
    pub fn new(inner: W, poster: Poster) -> Tee<W> {
        Tee {
            inner,
            line: Vec::new(),
            poster,
        }
    }
}

impl<W: Write> Write for Tee<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner.write_all(buf)?;
        let mut rest = buf;
        while let Some(i) = memchr::memchr(b'\n', rest) {
            self.line.extend_from_slice(&rest[..i]);
            rest = &rest[i + 1..];
            // On disk or on the pipe before anything is sent.
            self.inner.flush()?;
            if !self.line.is_empty() {
                self.poster.post(&self.line);
            }
            self.line.clear();
        }
        self.line.extend_from_slice(rest);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_endpoint_gets_the_traces_path() {
        assert_eq!(
            traces_url("http://127.0.0.1:4318").unwrap(),
            "http://127.0.0.1:4318/v1/traces"
        );
        assert_eq!(
            traces_url("http://127.0.0.1:4318/").unwrap(),
            "http://127.0.0.1:4318/v1/traces"
        );
        assert_eq!(
            traces_url("http://h:6006/v1/traces").unwrap(),
            "http://h:6006/v1/traces"
        );
        assert!(
            traces_url("https://h/v1/traces")
                .unwrap_err()
                .contains("https")
        );
        assert!(traces_url("h:4318").is_err());
        assert!(traces_url("http:///x").is_err());
    }

    #[test]
    fn partial_success_names_the_rejected_spans() {
        assert_eq!(
            rejected_spans(r#"{"partialSuccess":{"rejectedSpans":"3"}}"#),
            Some(3)
        );
        assert_eq!(rejected_spans(r#"{"partialSuccess":{}}"#), None);
        assert_eq!(rejected_spans(r#"{}"#), None);
        assert_eq!(rejected_spans(""), None);
    }
}
