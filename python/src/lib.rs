//! `cstream._cstream`: the extension module under the `cstream` Python
//! package. It turns Python arguments into a `cstream::Config` and a source,
//! runs the library with the GIL released, and hands back bytes, a report,
//! or (for `events()`) one dict per event line, built straight from the
//! NDJSON the library writes, so a dict is exactly `json.loads` of the
//! command line's `--to events` line.

use std::cell::RefCell;
use std::fs::File;
use std::io::{self, Cursor, Read, Write};
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::time::Duration;

use cstream::{CoalesceMode, Config, Dialect, Format, ReasoningField, ToolCallMode, Warning};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyString};

mod pyjson;

/// How much output is gathered before it crosses to Python (a write to a
/// file object, a batch of event lines): large enough that the per-call
/// cost vanishes, small enough to stay well inside a cache.
const CHUNK: usize = 64 * 1024;

/// Batches of event lines in flight between the converting thread and the
/// iterator: the bound that keeps `events()` at constant memory.
const BATCHES_IN_FLIGHT: usize = 4;

/// The options `convert()` and `events()` take besides the source, the
/// format and the dialect (`docs/python.md` describes each).
const OPTIONS: &[&str] = &[
    "dedupe",
    "keep_images",
    "redact",
    "redact_patterns",
    "since",
    "until",
    "truncate_shell",
    "coalesce",
    "tool_calls",
    "reasoning_field",
    "include_usage",
    "model",
    "id",
    "created",
    "compact",
    "thinking",
    "no_thinking",
    "shell_lines",
    "color",
];

/// A `since`/`until` value: epoch milliseconds, or `--since`'s syntax.
fn time_ms(v: &Bound<'_, PyAny>, key: &str) -> PyResult<i64> {
    if let Ok(ms) = v.extract::<i64>() {
        return Ok(ms);
    }
    let s: String = v
        .extract()
        .map_err(|_| PyTypeError::new_err(format!("{key}: an int (epoch ms) or a str")))?;
    cstream::parse_time(&s).map_err(|e| PyValueError::new_err(format!("{key}: {e}")))
}

fn choice<T: Copy>(v: &Bound<'_, PyAny>, key: &str, table: &[(&str, T)]) -> PyResult<T> {
    let s: String = v.extract()?;
    table
        .iter()
        .find(|(n, _)| *n == s)
        .map(|(_, t)| *t)
        .ok_or_else(|| {
            let names: Vec<&str> = table.iter().map(|(n, _)| *n).collect();
            PyValueError::new_err(format!("{key}: {s:?} is not one of {}", names.join(", ")))
        })
}

/// The configuration `to`, `from_`, `strict` and the keyword options ask for.
fn config(
    to: &str,
    from: &str,
    strict: bool,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Config> {
    let format = Format::from_name(to).ok_or_else(|| {
        let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
        PyValueError::new_err(format!("to: {to:?} is not one of {}", names.join(", ")))
    })?;
    let mut cfg = Config::new(format).strict(strict);
    if from != "auto" {
        let d = Dialect::from_name(from).ok_or_else(|| {
            let names: Vec<&str> = Dialect::ALL.iter().map(|d| d.name()).collect();
            PyValueError::new_err(format!(
                "from_: {from:?} is not auto or one of {}",
                names.join(", ")
            ))
        })?;
        cfg = cfg.from(d);
    }
    let Some(options) = options else {
        return Ok(cfg);
    };
    let (mut since, mut until) = (None, None);
    for (k, v) in options.iter() {
        let key: String = k.extract()?;
        // `None` is the default of every option.
        if v.is_none() {
            if !OPTIONS.contains(&key.as_str()) {
                return Err(unknown(&key));
            }
            continue;
        }
        cfg = match key.as_str() {
            "dedupe" => cfg.dedupe(v.extract()?),
            "keep_images" => cfg.keep_images(v.extract()?),
            "redact" => cfg.redact(v.extract()?),
            "redact_patterns" => cfg
                .redact_patterns(v.extract()?)
                .map_err(|e| PyValueError::new_err(format!("redact_patterns: {e}")))?,
            "since" => {
                since = Some(time_ms(&v, "since")?);
                cfg
            }
            "until" => {
                until = Some(time_ms(&v, "until")?);
                cfg
            }
            "truncate_shell" => cfg.truncate_shell(v.extract()?),
            "coalesce" => cfg.coalesce(choice(
                &v,
                "coalesce",
                &[
                    ("whole", CoalesceMode::Whole),
                    ("burst", CoalesceMode::Burst),
                ],
            )?),
            "tool_calls" => cfg.tool_calls(choice(
                &v,
                "tool_calls",
                &[
                    ("reasoning", ToolCallMode::Reasoning),
                    ("content", ToolCallMode::Content),
                    ("omit", ToolCallMode::Omit),
                    ("calls", ToolCallMode::Calls),
                ],
            )?),
            "reasoning_field" => cfg.reasoning_field(choice(
                &v,
                "reasoning_field",
                &[
                    ("reasoning_content", ReasoningField::ReasoningContent),
                    ("reasoning", ReasoningField::Reasoning),
                    ("none", ReasoningField::None),
                ],
            )?),
            "include_usage" => cfg.include_usage(v.extract()?),
            "model" => cfg.model(v.extract::<String>()?),
            "id" => cfg.id(v.extract::<String>()?),
            "created" => cfg.created(v.extract()?),
            "compact" => cfg.compact(v.extract()?),
            "thinking" => cfg.thinking(v.extract()?),
            "no_thinking" => cfg.no_thinking(v.extract()?),
            "shell_lines" => cfg.shell_lines(v.extract()?),
            "color" => cfg.color(v.extract()?),
            _ => return Err(unknown(&key)),
        };
    }
    if since.is_some() || until.is_some() {
        cfg = cfg.window(since, until);
    }
    Ok(cfg)
}

fn unknown(key: &str) -> PyErr {
    PyTypeError::new_err(format!(
        "unexpected keyword argument '{key}' (the options are: {})",
        OPTIONS.join(", ")
    ))
}

/// Where a conversion reads from.
enum Source {
    /// A path: read as the command line reads a file argument.
    Path(PathBuf),
    /// Bytes already in memory.
    Bytes(Vec<u8>),
    /// A binary file object, read under the GIL a chunk at a time; live
    /// when it is a pipe, a socket or a terminal.
    File(PyReader, String, bool),
}

fn source(src: &Bound<'_, PyAny>) -> PyResult<Source> {
    if let Ok(b) = src.cast::<PyBytes>() {
        return Ok(Source::Bytes(b.as_bytes().to_vec()));
    }
    if let Ok(b) = src.cast::<PyByteArray>() {
        return Ok(Source::Bytes(b.to_vec()));
    }
    if src.is_instance_of::<PyString>() || src.hasattr("__fspath__")? {
        return Ok(Source::Path(src.extract()?));
    }
    if src.hasattr("read")? {
        let name = src
            .getattr("name")
            .ok()
            .and_then(|n| n.extract::<String>().ok())
            .unwrap_or_else(|| "-".to_owned());
        // As the command line reads a file argument: a stream that is
        // still being written (a pipe from a running agent) is live, a
        // regular file, or an object with no descriptor, is read whole.
        let live = src
            .call_method0("fileno")
            .and_then(|fd| fd.extract::<i32>())
            .ok()
            .is_some_and(|fd| !is_regular_file(fd));
        return Ok(Source::File(
            PyReader {
                file: src.clone().unbind(),
                spare: Vec::new(),
                spare_pos: 0,
            },
            name,
            live,
        ));
    }
    Err(PyTypeError::new_err(
        "src: bytes, a path (str or os.PathLike) or a binary file object",
    ))
}

/// Whether the descriptor `fd` (borrowed, not closed) is a regular file.
fn is_regular_file(fd: i32) -> bool {
    #[cfg(unix)]
    {
        use std::os::fd::BorrowedFd;
        if fd < 0 {
            return false;
        }
        // SAFETY: the file object owns `fd` and outlives this call; the
        // clone is a new descriptor, closed when it drops.
        let fd = unsafe { BorrowedFd::borrow_raw(fd) };
        fd.try_clone_to_owned()
            .map(File::from)
            .and_then(|f| f.metadata())
            .is_ok_and(|m| m.is_file())
    }
    #[cfg(not(unix))]
    {
        let _ = fd;
        true
    }
}

/// A Python binary file object as a `Read`.
struct PyReader {
    file: Py<PyAny>,
    /// What `read(n)` returned beyond the `n` bytes asked for (a file
    /// object need not keep to it), given out by the next reads.
    spare: Vec<u8>,
    spare_pos: usize,
}

impl Read for PyReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.spare_pos < self.spare.len() {
            let rest = &self.spare[self.spare_pos..];
            let n = rest.len().min(buf.len());
            buf[..n].copy_from_slice(&rest[..n]);
            self.spare_pos += n;
            return Ok(n);
        }
        Python::attach(|py| {
            let chunk = self
                .file
                .call_method1(py, "read", (buf.len().clamp(1, CHUNK),))
                .map_err(io::Error::other)?;
            let chunk = chunk.bind(py);
            let Ok(bytes) = chunk.cast::<PyBytes>() else {
                return Err(io::Error::other(
                    "src.read() returned something other than bytes (open the file in binary mode)",
                ));
            };
            let bytes = bytes.as_bytes();
            let n = bytes.len().min(buf.len());
            buf[..n].copy_from_slice(&bytes[..n]);
            if n < bytes.len() {
                self.spare.clear();
                self.spare.extend_from_slice(&bytes[n..]);
                self.spare_pos = 0;
            }
            Ok(n)
        })
    }
}

/// A Python file object (anything with `write(bytes)`) as a `Write`.
struct PyWriter {
    file: Py<PyAny>,
    buf: Vec<u8>,
    /// The exception `write` raised, re-raised when the run is over.
    error: Option<PyErr>,
}

impl PyWriter {
    fn push(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        Python::attach(|py| {
            let bytes = PyBytes::new(py, &self.buf);
            match self.file.call_method1(py, "write", (bytes,)) {
                Ok(_) => {
                    self.buf.clear();
                    Ok(())
                }
                Err(e) => {
                    let msg = e.to_string();
                    self.error = Some(e);
                    Err(io::Error::other(msg))
                }
            }
        })
    }
}

impl Write for PyWriter {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(b);
        if self.buf.len() >= CHUNK {
            self.push()?;
        }
        Ok(b.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.push()
    }
}

/// Run one conversion of `src` to `out`, handing each warning to `warn`.
fn run<W: Write>(
    src: Source,
    out: W,
    cfg: &Config,
    warn: &mut dyn FnMut(Warning),
) -> io::Result<cstream::Report> {
    match src {
        Source::Path(p) => cstream::convert_file(&p, out, cfg, warn),
        Source::Bytes(b) => cstream::convert_named(Cursor::new(b), "-", false, out, cfg, warn),
        Source::File(r, name, live) => cstream::convert_named(r, &name, live, out, cfg, warn),
    }
}

/// What a run saw (`cstream.Report`).
#[pyclass(frozen, module = "cstream")]
struct Report {
    #[pyo3(get)]
    sessions: u64,
    #[pyo3(get)]
    failed_sessions: u64,
    #[pyo3(get)]
    incomplete_sessions: u64,
    #[pyo3(get)]
    bad_lines: u64,
    #[pyo3(get)]
    read_failed: bool,
    #[pyo3(get)]
    stopped: bool,
    /// The command line's exit status without `-e`.
    #[pyo3(get)]
    exit_code: u8,
    /// The command line's exit status with `-e` (a failed or cut-off
    /// session counts).
    #[pyo3(get)]
    exit_code_e: u8,
}

#[pymethods]
impl Report {
    fn __repr__(&self) -> String {
        format!(
            "Report(sessions={}, failed_sessions={}, incomplete_sessions={}, bad_lines={}, read_failed={}, exit_code={})",
            self.sessions,
            self.failed_sessions,
            self.incomplete_sessions,
            self.bad_lines,
            if self.read_failed { "True" } else { "False" },
            self.exit_code
        )
    }
}

impl From<&cstream::Report> for Report {
    fn from(r: &cstream::Report) -> Self {
        Report {
            sessions: r.sessions(),
            failed_sessions: r.failed_sessions(),
            incomplete_sessions: r.incomplete_sessions(),
            bad_lines: r.bad_lines(),
            read_failed: r.read_failed(),
            stopped: r.stopped(),
            exit_code: r.exit_code(false),
            exit_code_e: r.exit_code(true),
        }
    }
}

/// A warning as the Python side takes it: (file, line or None, message,
/// fatal).
type WarningTuple = (String, Option<u64>, String, bool);

fn tuple(w: Warning) -> WarningTuple {
    (w.file, w.line, w.message, w.fatal)
}

/// `_convert(src, out, to, from_, strict, options)`: returns (bytes or
/// None, Report, [warning tuples]).
#[pyfunction]
#[pyo3(signature = (src, out, to, from_, strict, options=None))]
fn _convert<'py>(
    py: Python<'py>,
    src: &Bound<'py, PyAny>,
    out: Option<&Bound<'py, PyAny>>,
    to: &str,
    from_: &str,
    strict: bool,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<(Option<Py<PyBytes>>, Report, Vec<WarningTuple>)> {
    let cfg = config(to, from_, strict, options)?;
    let src = source(src)?;
    let mut warnings = Vec::new();
    let mut collect = |w: Warning| warnings.push(tuple(w));
    match out {
        None => {
            let mut buf = Vec::new();
            let report = py
                .detach(|| run(src, &mut buf, &cfg, &mut collect))
                .map_err(|e| PyErr::new::<pyo3::exceptions::PyOSError, _>(e.to_string()))?;
            let bytes = PyBytes::new(py, &buf).unbind();
            Ok((Some(bytes), Report::from(&report), warnings))
        }
        Some(out) if out.is_instance_of::<PyString>() || out.hasattr("__fspath__")? => {
            let path: PathBuf = out.extract()?;
            let report = py.detach(|| -> io::Result<cstream::Report> {
                let mut f = io::BufWriter::with_capacity(CHUNK, File::create(&path)?);
                let report = run(src, &mut f, &cfg, &mut collect)?;
                f.flush()?;
                Ok(report)
            })?;
            Ok((None, Report::from(&report), warnings))
        }
        Some(out) => {
            let mut w = PyWriter {
                file: out.clone().unbind(),
                buf: Vec::with_capacity(CHUNK),
                error: None,
            };
            let r = py.detach(|| {
                let r = run(src, &mut w, &cfg, &mut collect);
                r.and_then(|rep| w.flush().map(|()| rep))
            });
            if let Some(e) = w.error.take() {
                return Err(e);
            }
            let report = r?;
            Ok((None, Report::from(&report), warnings))
        }
    }
}

/// What the converting thread of `events()` sends.
enum Msg {
    /// Whole `--to events` lines.
    Lines(Vec<u8>),
    Warning(Warning),
    /// Boxed: a report is large next to a batch of lines.
    Done(Box<io::Result<cstream::Report>>),
}

/// The converting thread's output: whole lines, in batches, into the channel.
struct LineSender {
    tx: SyncSender<Msg>,
    buf: Vec<u8>,
}

impl LineSender {
    /// Send what is complete (up to the last newline); keep the rest.
    fn send_lines(&mut self) -> io::Result<()> {
        let Some(end) = self.buf.iter().rposition(|&b| b == b'\n') else {
            return Ok(());
        };
        let rest = self.buf.split_off(end + 1);
        let lines = std::mem::replace(&mut self.buf, rest);
        self.buf.reserve(CHUNK);
        // A closed channel: the iterator was dropped, so stop converting.
        self.tx
            .send(Msg::Lines(lines))
            .map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))
    }
}

impl Write for LineSender {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(b);
        if self.buf.len() >= CHUNK {
            self.send_lines()?;
        }
        Ok(b.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// `cstream.events()`'s iterator: one dict per `--to events` line, read
/// lazily from a converting thread through a bounded channel.
#[pyclass(module = "cstream")]
struct Events {
    /// Behind a mutex only so the GIL can be released while waiting on it.
    rx: Option<Mutex<Receiver<Msg>>>,
    batch: String,
    pos: usize,
    strings: pyjson::Strings,
    /// Called with each warning tuple (`None`: warnings are dropped).
    warn: Option<Py<PyAny>>,
    /// Strict mode: the run stops at the first bad line, whose warning is
    /// raised once every event before it has been yielded.
    strict: bool,
    held: Vec<Warning>,
    report: Option<Py<Report>>,
}

#[pymethods]
impl Events {
    #[new]
    #[pyo3(signature = (src, from_, strict, warn, options=None))]
    fn new(
        src: &Bound<'_, PyAny>,
        from_: &str,
        strict: bool,
        warn: Option<Py<PyAny>>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let cfg = config("events", from_, strict, options)?;
        let src = source(src)?;
        let (tx, rx) = sync_channel(BATCHES_IN_FLIGHT);
        std::thread::Builder::new()
            .name("cstream-events".into())
            .spawn(move || {
                let mut out = LineSender {
                    tx: tx.clone(),
                    buf: Vec::with_capacity(CHUNK * 2),
                };
                let wtx = tx.clone();
                let mut warn = |w: Warning| {
                    let _ = wtx.send(Msg::Warning(w));
                };
                let r = run(src, &mut out, &cfg, &mut warn);
                let r = r.and_then(|rep| {
                    out.send_lines()?;
                    Ok(rep)
                });
                let _ = tx.send(Msg::Done(Box::new(r)));
            })
            .map_err(|e| PyErr::new::<pyo3::exceptions::PyOSError, _>(e.to_string()))?;
        Ok(Events {
            rx: Some(Mutex::new(rx)),
            batch: String::new(),
            pos: 0,
            strings: pyjson::Strings::default(),
            warn,
            strict,
            held: Vec::new(),
            report: None,
        })
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        loop {
            if self.pos < self.batch.len() {
                let rest = &self.batch[self.pos..];
                let n = rest.find('\n').unwrap_or(rest.len());
                let line = &rest[..n];
                self.pos += n + 1;
                // Moved in and out of a cell (a few words): the parser
                // shares it, and the iterator itself must stay `Sync`.
                let strings = RefCell::new(std::mem::take(&mut self.strings));
                let ev = pyjson::to_py(py, &strings, line);
                self.strings = strings.into_inner();
                let ev = ev.map_err(|e| PyValueError::new_err(format!("event line: {e}")))?;
                return Ok(Some(ev.unbind()));
            }
            let Some(rx) = &self.rx else {
                return Ok(None);
            };
            // Wait with the GIL released; look at signals (Ctrl-C) now and
            // then, as a blocking read in Python would.
            let msg = loop {
                match py.detach(|| {
                    let rx = rx.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                    rx.recv_timeout(Duration::from_millis(100))
                }) {
                    Ok(m) => break Some(m),
                    Err(RecvTimeoutError::Timeout) => py.check_signals()?,
                    Err(RecvTimeoutError::Disconnected) => break None,
                }
            };
            match msg {
                Some(Msg::Lines(lines)) => {
                    // The library writes UTF-8; checked once per batch, the
                    // JSON reader then need not check each string.
                    self.batch = String::from_utf8(lines)
                        .map_err(|e| PyValueError::new_err(format!("event lines: {e}")))?;
                    self.pos = 0;
                }
                Some(Msg::Warning(w)) if self.strict => self.held.push(w),
                Some(Msg::Warning(w)) => self.warn(py, w)?,
                Some(Msg::Done(r)) => {
                    self.rx = None;
                    let held = std::mem::take(&mut self.held);
                    for w in held {
                        self.warn(py, w)?;
                    }
                    let report = (*r)
                        .map_err(|e| PyErr::new::<pyo3::exceptions::PyOSError, _>(e.to_string()))?;
                    self.report = Some(Py::new(py, Report::from(&report))?);
                }
                None => {
                    self.rx = None;
                    return Err(PyErr::new::<pyo3::exceptions::PyRuntimeError, _>(
                        "the converting thread ended without a report",
                    ));
                }
            }
        }
    }

    /// What the run saw, once the iterator is exhausted (`None` before).
    #[getter]
    fn report(&self, py: Python<'_>) -> Option<Py<Report>> {
        self.report.as_ref().map(|r| r.clone_ref(py))
    }
}

impl Events {
    fn warn(&self, py: Python<'_>, w: Warning) -> PyResult<()> {
        if let Some(f) = &self.warn {
            f.call1(py, tuple(w))?;
        }
        Ok(())
    }
}

/// `schema(name)`: the JSON Schema of `events` or `documents`, as text.
#[pyfunction]
fn _schema(name: &str) -> PyResult<String> {
    let v = match name {
        "events" => cstream::schema::events(),
        "documents" => cstream::schema::documents(),
        _ => {
            return Err(PyValueError::new_err(format!(
                "schema: {name:?} is not events or documents"
            )));
        }
    };
    Ok(cstream::schema::pretty(&v))
}

#[pymodule]
fn _cstream(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_convert, m)?)?;
    m.add_function(wrap_pyfunction!(_schema, m)?)?;
    m.add_class::<Events>()?;
    m.add_class::<Report>()?;
    let formats: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
    m.add("FORMATS", formats)?;
    let dialects: Vec<&str> = Dialect::ALL.iter().map(|d| d.name()).collect();
    m.add("DIALECTS", dialects)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("SCHEMA_VERSION", cstream::event::SCHEMA_VERSION)?;
    Ok(())
}
