//! JSON text pruned with its structure intact. A JSON result is laid out one record per line
//! before it is pruned, so that the line-level engine keeps or removes whole records and never
//! half of one: the elements of a top-level array; or, in an object, the elements of its largest
//! array member (the other members stay on the first and last lines, around it); or, failing
//! both, the members of the object. The layout is the same JSON value (only whitespace differs):
//! with nothing removed it parses to what the upstream sent. Owns the layout only; pruning is
//! the shared pipeline's.

use serde_json::{Map, Value};

/// `text` laid out one record per line, or `None` when it is not JSON with at least two records.
pub fn record_lines(text: &str) -> Option<String> {
    let trimmed = text.trim();
    if !(trimmed.starts_with('[') || trimmed.starts_with('{')) {
        return None;
    }
    let value: Value = serde_json::from_str(trimmed).ok()?;
    match &value {
        Value::Array(items) if items.len() >= 2 => Some(wrap("[", items.iter(), "]")),
        Value::Object(map) => match largest_array(map) {
            Some(key) => Some(around_array(map, key)),
            None if map.len() >= 2 => Some(members(map)),
            None => None,
        },
        _ => None,
    }
}

/// The key of the object's largest array member with at least two elements.
fn largest_array(map: &Map<String, Value>) -> Option<&str> {
    map.iter()
        .filter(|(_, v)| v.as_array().is_some_and(|a| a.len() >= 2))
        .max_by_key(|(_, v)| crate::budget::json_len(v))
        .map(|(k, _)| k.as_str())
}

/// `open`, then one compact item a line (commas after all but the last), then `close`.
fn wrap<'a>(open: &str, items: impl Iterator<Item = &'a Value>, close: &str) -> String {
    let lines: Vec<String> = items.map(compact).collect();
    format!("{open}\n{}\n{close}", lines.join(",\n"))
}

fn compact(v: &Value) -> String {
    serde_json::to_string(v).expect("JSON values serialize")
}

fn member(k: &str, v: &Value) -> String {
    format!("{}:{}", compact(&Value::String(k.to_string())), compact(v))
}

/// An object whose array member `key` holds the records: members before it on the first line,
/// members after it on the last.
fn around_array(map: &Map<String, Value>, key: &str) -> String {
    let at = map.keys().position(|k| k == key).expect("key of the map");
    let before: Vec<String> = map.iter().take(at).map(|(k, v)| member(k, v)).collect();
    let after: Vec<String> = map.iter().skip(at + 1).map(|(k, v)| member(k, v)).collect();
    let mut open = String::from("{");
    for m in &before {
        open.push_str(m);
        open.push(',');
    }
    open.push_str(&compact(&Value::String(key.to_string())));
    open.push_str(":[");
    let mut close = String::from("]");
    for m in &after {
        close.push(',');
        close.push_str(m);
    }
    close.push('}');
    let items = map[key].as_array().expect("an array member");
    wrap(&open, items.iter(), &close)
}

/// An object one member a line.
fn members(map: &Map<String, Value>) -> String {
    let lines: Vec<String> = map.iter().map(|(k, v)| member(k, v)).collect();
    format!("{{\n{}\n}}", lines.join(",\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_layout_is_the_same_value() {
        for text in [
            r#"[{"id":1,"t":"a"},{"id":2,"t":"b"},3]"#,
            r#"{"total":2,"items":[{"id":1},{"id":2}],"next":null}"#,
            r#"{"items":[1,2,3]}"#,
            r#"{"a":1,"b":{"c":[1]}}"#,
        ] {
            let laid = record_lines(text).expect("records");
            let a: Value = serde_json::from_str(text).unwrap();
            let b: Value = serde_json::from_str(&laid).unwrap();
            assert_eq!(a, b, "{laid}");
        }
    }

    #[test]
    fn one_record_a_line() {
        let laid = record_lines(r#"{"total":2,"items":[{"id":1},{"id":2}]}"#).unwrap();
        assert_eq!(
            laid,
            "{\"total\":2,\"items\":[\n{\"id\":1},\n{\"id\":2}\n]}"
        );
        assert_eq!(record_lines("plain text"), None);
        assert_eq!(record_lines("[1]"), None);
    }
}
