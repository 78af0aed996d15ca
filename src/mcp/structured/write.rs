//! `mcp_write`'s and `mcp_validate`'s replies as JSON, field for field.

use serde_json::{Map, Value, json};

use super::fields::header;

/// `ok|mode:..|...` as its fields (`result: "ok"`); a `preview|mode:..` block as its header's
/// fields and `lines`, each line's own fields in order (`will_delete:` and the like with an
/// empty value, as the text writes them).
pub fn reply(text: &str) -> Value {
    let mut lines = text.lines();
    let mut out = Map::new();
    header(lines.next().unwrap_or(""), &mut out);
    let rest: Vec<Value> = lines
        .map(|line| {
            let mut fields = Map::new();
            header(line, &mut fields);
            Value::Object(fields)
        })
        .collect();
    if !rest.is_empty() {
        out.insert("lines".into(), Value::Array(rest));
    }
    Value::Object(out)
}

/// `valid:..|warnings:N` or `valid:false|errors:N`, then `warning|CODE|message` or
/// `error|CODE|message` lines (as `problems`) and `estimated_tokens:N`.
pub fn validation(text: &str) -> Value {
    let mut out = Map::new();
    let mut problems = Vec::new();
    for line in text.lines() {
        match line.split_once('|') {
            Some((kind @ ("warning" | "error"), rest)) => {
                let (code, message) = rest.split_once('|').unwrap_or((rest, ""));
                problems.push(json!({"kind": kind, "code": code, "message": message}));
            }
            _ => header(line, &mut out),
        }
    }
    out.insert("problems".into(), Value::Array(problems));
    Value::Object(out)
}
