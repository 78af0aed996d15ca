//! A stand-in for `copyq.exe`, for the Windows CI step (tests/windows.sh): no CopyQ for Windows
//! runs here, so the CLI backend's calls are answered by this program, built for the same target
//! and run under Wine by the Wine-run gateway (`copyq.command` pointing at it).
//!
//! It answers `copyq eval -- SCRIPT` the way the bundled script (src/backend/copyq.js) does, from
//! the request on stdin, for the ops a read and an add send: `ping`, `read`, `rows` and `insert`.
//! Any other op is answered `{"ok":false,"error":...}`. The tabs live in the JSON file named by
//! `COPYQ_STAND_IN_STATE` (`{"tabs":[{"name":..,"items":[{"text":..,"tags":..,"note":..}]}]}`,
//! created empty when missing), so each call sees what the last one wrote.
//!
//! What this proves is the gateway's side on Windows: that it finds and runs the program, feeds
//! it stdin and reads its reply. It proves nothing of CopyQ's own scripting on Windows.

use std::io::{Read, Write};
use std::process::ExitCode;

use serde_json::{Value, json};

fn main() -> ExitCode {
    match run() {
        Ok(reply) => {
            // The script's `print(JSON.stringify(reply))`: no newline after the last line.
            print!("{reply}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("copyq stand-in: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<Value, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) != Some("eval") {
        return Err(format!("only `eval -- SCRIPT` is answered, not {args:?}"));
    }
    let state_file =
        std::env::var_os("COPYQ_STAND_IN_STATE").ok_or("COPYQ_STAND_IN_STATE unset")?;
    let mut input = String::new();
    std::io::stdin()
        .read_to_string(&mut input)
        .map_err(|e| format!("stdin: {e}"))?;
    let req: Value = serde_json::from_str(&input).map_err(|e| format!("request: {e}"))?;
    let mut state: Value = match std::fs::read(&state_file) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| format!("state: {e}"))?,
        Err(_) => json!({"tabs": []}),
    };
    let mut reply = match req["op"].as_str().unwrap_or("") {
        "ping" => {
            json!({"tabs": tabs(&state).len(), "version": "CopyQ Clipboard Manager v17.0.0\nstand-in"})
        }
        "read" => read(&state, &req),
        "rows" => rows(&state, &req),
        "insert" => {
            let reply = insert(&mut state, &req)?;
            if reply.get("refusal").is_some() {
                return Ok(reply);
            }
            let bytes = serde_json::to_vec(&state).map_err(|e| e.to_string())?;
            std::fs::write(&state_file, bytes).map_err(|e| format!("state: {e}"))?;
            // As the script does, the moment the change is made.
            println!("made:change");
            std::io::stdout().flush().map_err(|e| e.to_string())?;
            reply
        }
        other => {
            return Ok(
                json!({"ok": false, "error": format!("Error: unknown op {other} (stand-in)")}),
            );
        }
    };
    reply["ok"] = json!(true);
    Ok(reply)
}

fn tabs(state: &Value) -> Vec<Value> {
    state["tabs"].as_array().cloned().unwrap_or_default()
}

fn names(state: &Value) -> Vec<String> {
    tabs(state)
        .iter()
        .filter_map(|t| t["name"].as_str().map(String::from))
        .collect()
}

fn items_of(state: &Value, name: &str) -> Vec<Value> {
    tabs(state)
        .into_iter()
        .find(|t| t["name"] == name)
        .and_then(|t| t["items"].as_array().cloned())
        .unwrap_or_default()
}

/// The first `n` UTF-16 units of `text`, never half a surrogate pair (the script's `cut`).
fn cut(text: &str, n: Option<u64>) -> String {
    let Some(n) = n else {
        return text.to_owned();
    };
    let mut units = 0;
    text.chars()
        .take_while(|c| {
            units += c.len_utf16() as u64;
            units <= n
        })
        .collect()
}

fn item(raw: &Value, preview: Option<u64>) -> Value {
    let text = raw["text"].as_str().unwrap_or("");
    json!({
        "text": cut(text, preview),
        "tags": raw["tags"].as_str().unwrap_or(""),
        "note": cut(raw["note"].as_str().unwrap_or(""), preview),
        "secret": false,
        "content": {"formats": [], "rich": null},
    })
}

fn read(state: &Value, req: &Value) -> Value {
    let all = names(state);
    let chosen: Vec<&String> = match req["names"].as_array() {
        Some(wanted) => all.iter().filter(|n| wanted.contains(&json!(n))).collect(),
        None => {
            let prefix = req["prefix"].as_str().unwrap_or("");
            let invert = req["invert"].as_bool().unwrap_or(false);
            all.iter()
                .filter(|n| n.starts_with(prefix) != invert)
                .collect()
        }
    };
    let skip = req["skip"].as_u64().unwrap_or(0) as usize;
    let limit = req["limit"].as_u64().map(|l| l as usize);
    let preview = req["preview"].as_u64();
    let pages: Vec<Value> = chosen
        .into_iter()
        .map(|name| {
            let items = items_of(state, name);
            let window: Vec<Value> = items
                .iter()
                .skip(if limit.is_some() { skip } else { 0 })
                .take(limit.unwrap_or(usize::MAX))
                .map(|i| item(i, preview))
                .collect();
            json!({"name": name, "total": items.len(), "items": window})
        })
        .collect();
    let max_items = req["limits"].as_bool().unwrap_or(false).then_some(200);
    json!({"tabs": pages, "max_items": max_items, "all_tabs": all})
}

fn rows(state: &Value, req: &Value) -> Value {
    let all = names(state);
    let pages: Vec<Value> = req["tabs"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter_map(|t| {
            let name = t["name"].as_str()?;
            all.iter().any(|n| n == name).then_some(())?;
            let items = items_of(state, name);
            let rows: Vec<Value> = t["rows"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .iter()
                .map(|r| {
                    let row = r.as_u64().unwrap_or(u64::MAX) as usize;
                    items.get(row).map_or(Value::Null, |i| item(i, None))
                })
                .collect();
            Some(json!({"name": name, "total": items.len(), "items": rows}))
        })
        .collect();
    json!({"tabs": pages})
}

fn insert(state: &mut Value, req: &Value) -> Result<Value, String> {
    let name = req["tab"].as_str().ok_or("insert without a tab")?;
    let limit = req["limit"].as_u64().unwrap_or(u64::MAX) as usize;
    let new = json!({
        "text": req["item"]["text"].as_str().unwrap_or(""),
        "tags": req["item"]["tags"].as_array().map_or(String::new(), |t| {
            t.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(",")
        }),
        "note": req["item"]["note"].as_str().unwrap_or(""),
    });
    if !state["tabs"].is_array() {
        state["tabs"] = json!([]);
    }
    let tabs = state["tabs"].as_array_mut().ok_or("state without tabs")?;
    let tab = match tabs.iter().position(|t| t["name"] == name) {
        Some(i) => &mut tabs[i],
        None => {
            tabs.push(json!({"name": name, "items": []}));
            let last = tabs.len() - 1;
            &mut tabs[last]
        }
    };
    if !tab["items"].is_array() {
        tab["items"] = json!([]);
    }
    let items = tab["items"].as_array_mut().ok_or("tab without items")?;
    if items.len() >= limit {
        return Ok(json!({"ok": false, "refusal": "tab_full", "extra": {"limit": limit}}));
    }
    items.insert(0, new);
    Ok(json!({"count": items.len(), "persisted": "unload"}))
}
