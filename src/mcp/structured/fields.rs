//! Splitting the reference's pipe-separated lines back into named fields. Values that hold
//! clipboard text (previews, notes, tab names) may contain `|` themselves, so a `|` starts a new
//! field only where a key the format defines follows it; otherwise it stays in the value.

use serde_json::{Map, Value};

use crate::mcp::format::Show;

/// Every key the replies of the three tools put before a `:`.
const KEYS: &[&str] = &[
    "mode",
    "tab",
    "full_path",
    "scope",
    "total",
    "showing",
    "index",
    "version",
    "query",
    "results",
    "text_len",
    "tags",
    "note",
    "field",
    "edit_mode",
    "from",
    "to",
    "new_index",
    "path",
    "status",
    "items_removed",
    "tabs_removed",
    "valid",
    "warnings",
    "errors",
    "estimated_tokens",
    "items_count",
    "text",
    "before",
    "after",
    "will_add",
    "will_delete",
    "will_move",
    "will_create",
    "already_exists",
];

/// Keys whose values are counts or indices: numbers in the JSON, as the text writes them.
const NUMBERS: &[&str] = &[
    "total",
    "index",
    "results",
    "text_len",
    "new_index",
    "items_removed",
    "tabs_removed",
    "warnings",
    "errors",
    "estimated_tokens",
    "items_count",
];

/// Whether `segment` opens a field: `key:` with a key of [`KEYS`].
fn opens_field(segment: &str) -> bool {
    segment
        .split_once(':')
        .is_some_and(|(key, _)| KEYS.contains(&key))
}

/// A value as JSON: counts as numbers, `true`/`false` and Python's `True`/`False` as booleans
/// where the text writes them so, the rest as the text's string.
fn value(key: &str, raw: &str) -> Value {
    // `tags` is a list in listings and a count in `ok|mode:add`.
    if (NUMBERS.contains(&key) || key == "tags")
        && let Ok(n) = raw.parse::<i64>()
    {
        return Value::from(n);
    }
    if matches!(key, "text" | "before" | "after" | "note")
        && let Some(inner) = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"'))
    {
        return Value::String(inner.to_owned());
    }
    match raw {
        "true" | "True" if key != "tab" => Value::Bool(true),
        "false" | "False" if key != "tab" => Value::Bool(false),
        _ => Value::String(raw.to_owned()),
    }
}

/// The `key:value` fields of one line into `out`; a leading word without `:` (`ok`, `preview`)
/// becomes `result` (`tab_create` has a `status` field of its own), a value-less word later on (`external`) becomes `true`.
pub fn header(line: &str, out: &mut Map<String, Value>) {
    let mut segments: Vec<String> = Vec::new();
    for (i, seg) in line.split('|').enumerate() {
        match segments.last_mut() {
            Some(last) if i > 0 && !opens_field(seg) && !bare_word(seg) => {
                last.push('|');
                last.push_str(seg);
            }
            _ => segments.push(seg.to_owned()),
        }
    }
    for (i, seg) in segments.iter().enumerate() {
        match seg.split_once(':') {
            Some((key, raw)) if opens_field(seg) => {
                out.insert(key.to_owned(), value(key, raw));
            }
            _ if i == 0 => {
                out.insert("result".into(), Value::String(seg.clone()));
            }
            _ => {
                out.insert(seg.clone(), Value::Bool(true));
            }
        }
    }
}

/// A flag the format writes alone between pipes.
fn bare_word(seg: &str) -> bool {
    matches!(seg, "external" | "+note")
}

/// The fields of a listing row after its index: `|"preview"|[tags]|+note` or `|note:preview`,
/// as `show` says they were written. A preview is cut at the first `"|[` (or `"|note:`,
/// `"|+note`) after it: the one place where a preview holding that very sequence would be split
/// elsewhere than the text meant.
pub fn row(mut rest: &str, show: Show, out: &mut Map<String, Value>) {
    // What an item holds beyond plain text comes first, and its description holds no `|`.
    if let Some(body) = rest.strip_prefix("|content:") {
        let end = body.find('|').unwrap_or(body.len());
        out.insert("content".into(), Value::String(body[..end].to_owned()));
        rest = &body[end..];
    }
    if show.text
        && let Some(body) = rest.strip_prefix("|\"")
    {
        let ends = ["\"|[", "\"|note:", "\"|+note"];
        let cut = if show.tags {
            body.find(ends[0])
        } else {
            ends.iter().filter_map(|e| body.find(e)).min()
        };
        let cut = cut.unwrap_or_else(|| body.len().saturating_sub(1));
        out.insert("text".into(), Value::String(body[..cut].to_owned()));
        rest = body.get(cut + 1..).unwrap_or("");
    }
    if show.tags
        && let Some(body) = rest.strip_prefix("|[")
    {
        let cut = ["]|note:", "]|+note"]
            .iter()
            .filter_map(|e| body.find(e))
            .min()
            .unwrap_or_else(|| body.len().saturating_sub(1));
        out.insert("tags".into(), tags(&body[..cut]));
        rest = body.get(cut + 1..).unwrap_or("");
    }
    note(rest, out);
}

/// `|+note` or `|note:preview` at the end of a row.
fn note(rest: &str, out: &mut Map<String, Value>) {
    if rest == "|+note" {
        out.insert("has_note".into(), Value::Bool(true));
    } else if let Some(n) = rest.strip_prefix("|note:") {
        out.insert("has_note".into(), Value::Bool(true));
        out.insert("note".into(), Value::String(n.to_owned()));
    }
}

/// `a,b` (the inside of `[a,b]`) as a list; `[]` is empty.
pub fn tags(inner: &str) -> Value {
    if inner.is_empty() {
        return Value::Array(Vec::new());
    }
    inner.split(',').map(|t| Value::String(t.into())).collect()
}
