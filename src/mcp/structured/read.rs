//! `mcp_read`'s replies as JSON: the same fields the text holds, under the names the text gives
//! them, items as objects in a list. Built from the text itself, so the JSON can show nothing
//! the text (already masked by the read path) does not.

use serde_json::{Map, Value, json};

use super::fields::{header, row, tags};
use crate::mcp::format::Show;
use crate::mcp::read::ReadQuery;

/// The reply of a read `query` that succeeded with `text`.
pub fn reply(query: &ReadQuery, text: &str) -> Value {
    match query {
        ReadQuery::Tree { show, .. } => tree(text, *show),
        ReadQuery::List { show, .. } => list(text, *show),
        ReadQuery::Item { show, .. } => item(text, *show),
        ReadQuery::Search { show, .. } => search(text, *show),
    }
}

/// `tab [total]` (`[external]` after it) lines, each followed by its `i:|fields` rows.
fn tree(text: &str, show: Show) -> Value {
    let mut tabs: Vec<Map<String, Value>> = Vec::new();
    for line in text.lines() {
        if let Some((index, rest)) = tree_row(line)
            && let Some(tab) = tabs.last_mut()
        {
            let mut it = Map::new();
            it.insert("index".into(), Value::from(index));
            row(rest, show, &mut it);
            if let Some(Value::Array(items)) = tab.get_mut("items") {
                items.push(Value::Object(it));
            }
        } else {
            tabs.push(tree_tab(line));
        }
    }
    json!({"mode": "tree", "tabs": tabs})
}

/// `0:|...`: an item row of the tree (a tab line ends in `[total]` instead).
fn tree_row(line: &str) -> Option<(u64, &str)> {
    let (index, rest) = line.split_once(':')?;
    let index = index.parse().ok()?;
    (rest.is_empty() || rest.starts_with('|')).then_some((index, rest))
}

fn tree_tab(line: &str) -> Map<String, Value> {
    let (line, external) = match line.strip_suffix(" [external]") {
        Some(l) => (l, true),
        None => (line, false),
    };
    let (name, total) = line
        .rsplit_once(" [")
        .and_then(|(n, t)| Some((n, t.strip_suffix(']')?.parse::<u64>().ok()?)))
        .unwrap_or((line, 0));
    let mut tab = Map::new();
    tab.insert("tab".into(), Value::String(name.to_owned()));
    tab.insert("external".into(), Value::Bool(external));
    tab.insert("total".into(), Value::from(total));
    tab.insert("items".into(), Value::Array(Vec::new()));
    tab
}

/// The header's fields, then `items`: `index|fields|v:version` rows.
fn list(text: &str, show: Show) -> Value {
    let mut lines = text.lines();
    let mut out = Map::new();
    header(lines.next().unwrap_or(""), &mut out);
    let items: Vec<Value> = lines
        .map(|line| {
            let mut it = Map::new();
            let digits = line
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(line.len());
            it.insert("index".into(), json!(line[..digits].parse::<u64>().ok()));
            let mut rest = &line[digits..];
            if show.version
                && let Some((before, v)) = rest.rsplit_once("|v:")
            {
                it.insert("version".into(), Value::String(v.to_owned()));
                rest = before;
            }
            row(rest, show, &mut it);
            Value::Object(it)
        })
        .collect();
    out.insert("items".into(), Value::Array(items));
    Value::Object(out)
}

/// The header's fields, then `text:` (whole, over as many lines as it has), `tags:[..]` and
/// `note:` (whole) or `+note`.
fn item(text: &str, show: Show) -> Value {
    let (first, mut body) = text.split_once('\n').unwrap_or((text, ""));
    let mut out = Map::new();
    header(first, &mut out);
    // `content:` and `image:` lines (an item holding more than plain text) come before the
    // text, one line each.
    for key in ["content", "image"] {
        if let Some(rest) = body.strip_prefix(key).and_then(|b| b.strip_prefix(':')) {
            let (line, after) = rest.split_once('\n').unwrap_or((rest, ""));
            out.insert(key.into(), Value::String(line.to_owned()));
            body = after;
        }
    }
    if let Some(b) = body
        .strip_suffix("\n+note")
        .or((body == "+note").then_some(""))
    {
        out.insert("has_note".into(), Value::Bool(true));
        body = b;
    }
    let (mut shown, mut note) = (body, None);
    if show.note {
        // The note is last and may hold anything: it starts at the first `note:` line after
        // the text and tags.
        let at = note_start(body, show);
        note = Some(body[at..].strip_prefix("note:").unwrap_or(""));
        shown = body[..at].strip_suffix('\n').unwrap_or(&body[..at]);
    }
    let (text_part, tag_part) = match show.tags {
        true => match shown.rfind("tags:[") {
            Some(at) => (&shown[..at], Some(&shown[at..])),
            None => (shown, None),
        },
        false => (shown, None),
    };
    if show.text {
        let t = text_part.strip_suffix('\n').unwrap_or(text_part);
        out.insert("text".into(), json!(t.strip_prefix("text:").unwrap_or(t)));
    }
    if let Some(t) = tag_part {
        let inner = t.trim_start_matches("tags:[").trim_end_matches(']');
        out.insert("tags".into(), tags(inner));
    }
    if let Some(n) = note {
        out.insert("has_note".into(), Value::Bool(!n.is_empty()));
        out.insert("note".into(), Value::String(n.to_owned()));
    }
    Value::Object(out)
}

/// Where the `note:` line starts: after the `tags:[...]` line when tags are shown (a tag holds
/// no line break), else at the last `note:` line (the text is then the one that may hold it).
fn note_start(body: &str, show: Show) -> usize {
    let after_tags = show
        .tags
        .then(|| {
            let t = body
                .find("\ntags:[")
                .map(|i| i + 1)
                .or_else(|| body.starts_with("tags:[").then_some(0))?;
            body[t..].find('\n').map(|n| t + n + 1)
        })
        .flatten();
    after_tags
        .or_else(|| body.rfind("\nnote:").map(|i| i + 1))
        .unwrap_or(if body.starts_with("note:") {
            0
        } else {
            body.len()
        })
}

/// The header's fields, then `results`: `tab[index]|fields|match:a,b|external` rows.
fn search(text: &str, show: Show) -> Value {
    let mut lines = text.lines();
    let mut out = Map::new();
    header(lines.next().unwrap_or(""), &mut out);
    let hits: Vec<Value> = lines.map(|line| search_row(line, show)).collect();
    out.insert("items".into(), Value::Array(hits));
    Value::Object(out)
}

fn search_row(line: &str, show: Show) -> Value {
    let mut it = Map::new();
    let (line, external) = match line.strip_suffix("|external") {
        Some(l) => (l, true),
        None => (line, false),
    };
    let (line, matched) = line.rsplit_once("|match:").unwrap_or((line, ""));
    let (tab, index, rest) = search_head(line);
    it.insert("tab".into(), Value::String(tab.to_owned()));
    it.insert("index".into(), json!(index));
    row(rest, show, &mut it);
    it.insert("match".into(), tags(matched));
    it.insert("external".into(), Value::Bool(external));
    Value::Object(it)
}

/// `tab[index]` and the fields after it: the first `[digits]` followed by `|` or the end.
fn search_head(line: &str) -> (&str, Option<u64>, &str) {
    let mut from = 0;
    while let Some(open) = line[from..].find('[').map(|i| from + i) {
        let after = &line[open + 1..];
        if let Some(close) = after.find(']')
            && let Ok(index) = after[..close].parse::<u64>()
        {
            let rest = &after[close + 1..];
            if rest.is_empty() || rest.starts_with('|') {
                return (&line[..open], Some(index), rest);
            }
        }
        from = open + 1;
    }
    (line, None, "")
}
