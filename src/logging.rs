//! Log output: a `tracing` layer that writes every event as seed 000's line shape,
//! `{ts, level, event, request_id?, data?}` in JSON, or a readable text line. Owns formatting and the
//! destination (stdout for `serve`; stderr for `stdio`, where stdout carries only protocol messages,
//! and for `run`, where stdout is the agent's; or `run --log-file`).
//! It never decides what is logged: that is [`crate::events`].

use crate::config::LogFormat;
use crate::sync::Unpoisoned;
use serde_json::{Map, Value};
use std::io::Write;
use std::sync::Mutex;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::{Layer, filter::LevelFilter, layer::Context, prelude::*};

/// Where log lines go.
#[derive(Clone, Debug)]
pub enum Sink {
    /// Standard output (`serve`).
    Stdout,
    /// Standard error (`stdio`, whose stdout is the protocol, and `run`, whose stdout is the
    /// agent's).
    Stderr,
    /// A file, appended to (`run --log-file`).
    File(std::sync::Arc<std::fs::File>),
}

impl Sink {
    /// Writes one line; a closed pipe or full disk must not take the process down, so write
    /// errors are ignored.
    pub fn write_line(&self, line: &str) {
        let _ = match self {
            Sink::Stdout => writeln!(std::io::stdout().lock(), "{line}"),
            Sink::Stderr => writeln!(std::io::stderr().lock(), "{line}"),
            Sink::File(f) => (&**f).write_all(format!("{line}\n").as_bytes()),
        };
    }

    /// Appends to `path` (created when missing).
    pub fn file(path: &std::path::Path) -> std::io::Result<Sink> {
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(Sink::File(std::sync::Arc::new(f)))
    }
}

/// The sink [`init`] installed, for lines written outside `tracing` (the runner relays the
/// server's own log lines through it).
static INSTALLED: std::sync::OnceLock<Sink> = std::sync::OnceLock::new();

/// Writes a ready-made log line where this process's log lines go (stderr before [`init`]).
pub fn write_line(line: &str) {
    INSTALLED.get().unwrap_or(&Sink::Stderr).write_line(line);
}

/// The `tracing` layer that writes seed 000's log lines.
struct SeedLayer {
    /// JSON or text.
    format: LogFormat,
    /// Where lines go (stdout, stderr).
    sink: Sink,
    /// Held while a line is written, so lines from two threads never interleave.
    lock: Mutex<()>,
}

/// The fields of one event, sorted into the line's parts.
#[derive(Default)]
struct Fields {
    /// The `event` field: the line's name (the event's target when absent).
    event: Option<String>,
    /// The `request_id` field.
    request_id: Option<String>,
    /// Every other field, for the line's `data`.
    data: Map<String, Value>,
}

impl Fields {
    fn put(&mut self, field: &Field, value: Value) {
        match field.name() {
            "event" => {
                self.event = value
                    .as_str()
                    .map(str::to_string)
                    .or_else(|| Some(value.to_string()))
            }
            "request_id" => {
                self.request_id = value
                    .as_str()
                    .map(str::to_string)
                    .or_else(|| Some(value.to_string()))
            }
            name => {
                // `field_errors` and other structured payloads are passed as JSON text.
                let value = match &value {
                    Value::String(s) if s.starts_with(['[', '{']) => {
                        serde_json::from_str(s).unwrap_or(value)
                    }
                    _ => value,
                };
                self.data.insert(name.to_string(), value);
            }
        }
    }
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.put(field, Value::String(format!("{value:?}")));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.put(field, Value::String(value.to_string()));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.put(field, Value::from(value));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.put(field, Value::from(value));
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.put(field, Value::from(value));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.put(field, Value::from(value));
    }
}

/// The lower-case name used in log lines and accepted by `--log-level`.
pub(crate) fn level_name(level: &Level) -> &'static str {
    match *level {
        Level::ERROR => "error",
        Level::WARN => "warn",
        Level::INFO => "info",
        _ => "debug",
    }
}

impl<S: Subscriber> Layer<S> for SeedLayer {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let name = fields
            .event
            .take()
            .unwrap_or_else(|| event.metadata().target().to_string());
        let ts = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let level = level_name(event.metadata().level());
        let line = match self.format {
            LogFormat::Json => {
                let mut obj = Map::new();
                obj.insert("ts".into(), Value::String(ts));
                obj.insert("level".into(), Value::String(level.into()));
                obj.insert("event".into(), Value::String(name));
                if let Some(id) = fields.request_id {
                    obj.insert("request_id".into(), Value::String(id));
                }
                if !fields.data.is_empty() {
                    obj.insert("data".into(), Value::Object(fields.data));
                }
                Value::Object(obj).to_string()
            }
            LogFormat::Text => {
                let mut s = format!("{ts} {:5} {name}", level.to_uppercase());
                if let Some(id) = fields.request_id {
                    s.push_str(&format!(" request_id={id}"));
                }
                for (k, v) in fields.data {
                    match v {
                        Value::String(v) => s.push_str(&format!(" {k}={v:?}")),
                        v => s.push_str(&format!(" {k}={v}")),
                    }
                }
                s
            }
        };
        let _guard = self.lock.locked();
        self.sink.write_line(&line);
    }
}

/// Installs the global subscriber. Call once, before anything logs.
pub fn init(format: LogFormat, level: Level, sink: Sink) {
    // Only this crate's events: dependencies' internals are not part of the event table.
    let ours = tracing_subscriber::filter::filter_fn(|m| m.target().starts_with("mcp_pruner"));
    let _ = INSTALLED.set(sink.clone());
    let layer = SeedLayer {
        format,
        sink,
        lock: Mutex::new(()),
    }
    .with_filter(LevelFilter::from_level(level))
    .with_filter(ours);
    let _ = tracing_subscriber::registry().with(layer).try_init();
}
