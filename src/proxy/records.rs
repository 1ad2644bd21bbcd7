//! JSON text pruned with its structure intact. A JSON result is laid out one record per line
//! before it is pruned, so that the line-level engine keeps or removes whole records and never
//! half of one: the elements of a top-level array; or, in an object, the elements of its largest
//! array member (the other members stay on the first and last lines, around it); or, failing
//! both, the members of the object. The layout is the same JSON value (only whitespace differs):
//! with nothing removed it parses to what the upstream sent. The one exception is an object whose
//! weight is one multi-line string ([`Layout::Member`]). Owns the layout only; pruning is the
//! shared pipeline's.

use serde_json::{Map, Value};

/// How a JSON text is shown for line-level pruning.
#[derive(Debug, PartialEq)]
pub enum Layout {
    /// The same JSON value, one record a line.
    Records(String),
    /// An object whose weight is one multi-line string member (see [`layout`]): the rest of the
    /// object and the member's key (`head`, two lines), shown above the string's own lines
    /// (`body`), which alone are pruned and stored.
    Member {
        /// `{…the other members…}` and `"key":`, each on its line.
        head: String,
        /// The string, unescaped.
        body: String,
    },
}

/// `text` laid out for line-level pruning, or `None` when it is better left as it came (not JSON,
/// fewer than two records, or a one-line string holding its weight). Records go one a line: the
/// elements of a top-level array; else, in an object, those of its largest array member; else its
/// members. An object whose weight is one string member is shown by that string's own lines.
pub fn layout(text: &str) -> Option<Layout> {
    let trimmed = text.trim();
    if !(trimmed.starts_with('[') || trimmed.starts_with('{')) {
        return None;
    }
    let value: Value = serde_json::from_str(trimmed).ok()?;
    match value {
        Value::Array(items) if items.len() >= 2 => {
            Some(Layout::Records(wrap("[", items.iter(), "]")))
        }
        Value::Object(map) => {
            if let Some(key) = dominant_string(&map, text.len()) {
                return string_lines(map, &key);
            }
            match largest_array(&map) {
                Some(key) => Some(Layout::Records(around_array(&map, key))),
                None if map.len() >= 2 => Some(Layout::Records(members(&map))),
                None => None,
            }
        }
        _ => None,
    }
}

/// The key of the string member holding more than half of the object's `bytes` (a command's
/// output wrapped as `{"path":…,"output":"…"}`). An array member or an object member that heavy
/// keeps the record layout.
fn dominant_string(map: &Map<String, Value>, bytes: usize) -> Option<String> {
    map.iter()
        .find(|(_, v)| v.as_str().is_some_and(|s| s.len() * 2 > bytes))
        .map(|(k, _)| k.clone())
}

/// The object shown by its string member `key`'s own lines: the object without it on the first
/// line, the member's key and a colon on the second, then the string, one of its lines a line,
/// unescaped. Kept in JSON, that member would be one line, kept or removed whole, so its lines
/// could never be pruned to a question. This layout is no longer JSON (a JSON string holds no raw
/// line break): the model reads the key and the text under it. `None` when the string is one
/// line: then the text is cut as it came.
fn string_lines(mut map: Map<String, Value>, key: &str) -> Option<Layout> {
    // `shift_remove`: the other members keep their order (`remove` would swap the last in).
    let Some(Value::String(body)) = map.shift_remove(key) else {
        return None;
    };
    if !body.trim_end_matches('\n').contains('\n') {
        return None;
    }
    let label = compact(&Value::String(key.to_string()));
    let head = format!("{}\n{label}:\n", compact(&Value::Object(map)));
    Some(Layout::Member { head, body })
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
            let Some(Layout::Records(laid)) = layout(text) else {
                panic!("records of {text}")
            };
            let a: Value = serde_json::from_str(text).unwrap();
            let b: Value = serde_json::from_str(&laid).unwrap();
            assert_eq!(a, b, "{laid}");
        }
    }

    #[test]
    fn a_string_that_holds_the_weight_is_shown_by_its_own_lines() {
        let output: String = (1..=40).map(|i| format!("step {i} \"ok\"\n")).collect();
        let text = serde_json::json!(
            {"command": "make", "output": output, "exit_code": 2, "cwd": "/w", "ms": 9}
        )
        .to_string();
        let Some(Layout::Member { head, body }) = layout(&text) else {
            panic!("a dominant string in {text}")
        };
        // The other members keep their order.
        assert_eq!(
            head,
            "{\"command\":\"make\",\"exit_code\":2,\"cwd\":\"/w\",\"ms\":9}\n\"output\":\n"
        );
        assert_eq!(body, output);
        // One line (base64, a long word), a light string, or no object: nothing to lay out.
        let one_line = serde_json::json!({"blob": "y".repeat(500), "n": 1}).to_string();
        assert_eq!(layout(&one_line), None);
        let light = serde_json::json!({"a": "x\ny", "b": "zz", "c": "ww"}).to_string();
        assert!(matches!(layout(&light), Some(Layout::Records(_))));
        assert_eq!(layout("not json"), None);
    }

    #[test]
    fn only_a_string_member_holding_most_of_an_object_dominates() {
        let x = "x".repeat(500);
        let map = |t: &str| match serde_json::from_str(t).unwrap() {
            Value::Object(m) => m,
            _ => unreachable!(),
        };
        let t = format!(r#"{{"path":"a","output":"{x}"}}"#);
        assert_eq!(
            dominant_string(&map(&t), t.len()).as_deref(),
            Some("output")
        );
        // A big array member, or strings that share the weight: the records stay.
        let t = format!(r#"{{"total":2,"items":["{x}","y"]}}"#);
        assert_eq!(dominant_string(&map(&t), t.len()), None);
        let t = format!(r#"{{"a":"{x}","b":"{x}"}}"#);
        assert_eq!(dominant_string(&map(&t), t.len()), None);
        // One big record in an array keeps the array's layout.
        let t = format!(r#"[{{"id":1,"body":"{x}\\ny"}},{{"id":2}}]"#);
        assert!(matches!(layout(&t), Some(Layout::Records(r)) if r.starts_with("[\n{\"id\":1")));
    }

    #[test]
    fn one_record_a_line() {
        let Some(Layout::Records(laid)) = layout(r#"{"total":2,"items":[{"id":1},{"id":2}]}"#)
        else {
            panic!("records")
        };
        assert_eq!(
            laid,
            "{\"total\":2,\"items\":[\n{\"id\":1},\n{\"id\":2}\n]}"
        );
        assert_eq!(layout("plain text"), None);
        assert_eq!(layout("[1]"), None);
    }
}
