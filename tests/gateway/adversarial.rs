//! Hostile input against the real gateway and a real CopyQ: malformed JSON-RPC bodies, abused
//! headers, tool arguments of every wrong type, and write paths that try to leave `mcp/`. The
//! gateway answers each with a 4xx, a 401 or a tool error, never a 5xx or a dropped connection,
//! keeps serving afterwards, and a refused write changes nothing in CopyQ.

use std::collections::BTreeMap;
use std::sync::Once;

use crate::support::*;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// This suite's own private CopyQ, started on first use.
fn copyq() -> &'static PrivateCopyq {
    static COPYQ: std::sync::OnceLock<PrivateCopyq> = std::sync::OnceLock::new();
    private_copyq(&COPYQ)
}

const JSON: &str = "application/json";
const ACCEPT: &str = "application/json, text/event-stream";

/// The tabs the tests aim at.
fn seed(cq: &PrivateCopyq) {
    cq.seed("mcp/workspace/adv-src", &items(&["keep me"]))
        .expect("seed");
    cq.seed("mcp/info", &items(&["info item"])).expect("seed");
    cq.seed("архив", &items(&["external item"])).expect("seed");
}

/// This suite's CopyQ, seeded once, for the tests that do not compare CopyQ before and after.
fn seeded() -> &'static PrivateCopyq {
    static SEED: Once = Once::new();
    let cq = copyq();
    SEED.call_once(|| seed(cq));
    cq
}

/// A CopyQ of the calling test's own, seeded: a test that checks that its calls changed nothing
/// in CopyQ compares a CopyQ nobody else uses.
fn own_seeded() -> PrivateCopyq {
    let cq = PrivateCopyq::start().expect("own CopyQ");
    seed(&cq);
    cq
}

/// A gateway to `cq` whose rate limit stays out of the way of these many quick calls.
async fn unlimited_to(cq: &PrivateCopyq) -> Gateway {
    gateway_with(cq, |s| {
        s.limits.requests_per_minute = 1_000_000;
        s.limits.burst = 100_000;
    })
    .await
}

/// [`unlimited_to`] the suite's CopyQ.
async fn unlimited() -> Gateway {
    unlimited_to(seeded()).await
}

/// One POST to /mcp with exactly these headers and body: (status, body). A transport error means
/// the gateway dropped the connection, which these tests treat as a crash.
async fn post(
    url: &str,
    headers: &[(&str, &str)],
    body: impl Into<reqwest::Body>,
) -> (u16, String) {
    let mut req = reqwest::Client::new().post(url).body(body);
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    let res = req
        .send()
        .await
        .unwrap_or_else(|e| panic!("the gateway dropped the connection: {e:?}"));
    let status = res.status().as_u16();
    (status, res.text().await.unwrap_or_default())
}

/// A request written byte for byte on a fresh TCP connection (for headers no HTTP library sends):
/// the status code of the answer.
async fn raw_http(base: &str, request: &[u8]) -> u16 {
    let addr = base.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    stream.write_all(request).await.expect("write");
    let mut answer = Vec::new();
    // The gateway may close as soon as it has answered a malformed request; what it sent counts.
    let _ = stream.read_to_end(&mut answer).await;
    let head = String::from_utf8_lossy(&answer);
    head.split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no HTTP answer: {head:?}"))
}

fn auth(token: &str) -> String {
    format!("Bearer {token}")
}

/// The gateway still answers a normal tool call.
async fn still_serves(gw: &Gateway) {
    let c = client(&gw.url, &gw.read).await;
    let got = ok(&c, "mcp_read", json!({"mode": "tree", "max_items": 0})).await;
    assert!(!got.starts_with("error|"), "{got}");
}

/// Bodies that are not one well-formed JSON-RPC request, by what is wrong with them.
#[rustfmt::skip] // a table: one case per line reads best
const BAD_BODIES: &[(&str, &str)] = &[
    ("empty", ""),
    ("not json", "{not json"),
    ("truncated", r#"{"jsonrpc":"2.0","id":1,"method":"tools/li"#),
    ("null", "null"),
    ("number", "5"),
    ("string", r#""tools/list""#),
    ("method is a number", r#"{"jsonrpc":"2.0","id":1,"method":5}"#),
    ("method is null", r#"{"jsonrpc":"2.0","id":1,"method":null}"#),
    ("method missing", r#"{"jsonrpc":"2.0","id":1}"#),
    ("method unknown", r#"{"jsonrpc":"2.0","id":1,"method":"clipboard/steal"}"#),
    ("method with NUL", r#"{"jsonrpc":"2.0","id":1,"method":"tools/list\u0000"}"#),
    ("params a string", r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"x"}"#),
    ("params an array", r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":["x"]}"#),
    ("params a number", r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":5}"#),
    ("id an object", r#"{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}"#),
    ("id an array", r#"{"jsonrpc":"2.0","id":[1],"method":"tools/list"}"#),
    ("id a float", r#"{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}"#),
    ("id a bool", r#"{"jsonrpc":"2.0","id":true,"method":"tools/list"}"#),
    ("id null", r#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#),
    ("id a huge number", r#"{"jsonrpc":"2.0","id":1e999,"method":"tools/list"}"#),
    ("jsonrpc missing", r#"{"id":1,"method":"tools/list"}"#),
    ("jsonrpc 1.0", r#"{"jsonrpc":"1.0","id":1,"method":"tools/list"}"#),
    ("jsonrpc a number", r#"{"jsonrpc":2,"id":1,"method":"tools/list"}"#),
    ("tool name a number", r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}"#),
    ("tool name missing", r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#),
    ("arguments a string", r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcp_read","arguments":"mode=tree"}}"#),
    ("arguments an array", r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcp_read","arguments":["tree"]}}"#),
    ("arguments a number", r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcp_read","arguments":5}}"#),
    ("empty batch", "[]"),
    ("batch of two", r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]"#),
    ("batch of junk", r#"[1,"x",null,{}]"#),
    ("duplicate keys", r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call"}"#),
];

/// Bad bodies too big or too binary to write out: huge batches, deep nesting, raw bytes.
fn generated_bodies() -> Vec<(&'static str, Vec<u8>)> {
    let list = |i: usize| format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/list"}}"#);
    let batch = format!("[{}]", (0..10_000).map(list).collect::<Vec<_>>().join(","));
    let deep_args = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"mcp_read","arguments":{{"mode":{}1{}}}}}}}"#,
        "{\"a\":".repeat(100_000),
        "}".repeat(100_000)
    );
    let mut invalid_utf8 = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcp_read","arguments":{"mode":"tree","scope":""#.to_vec();
    invalid_utf8.extend_from_slice(b"\xff\xfe\xc3\x28\"}}}");
    let utf16 = list(1).encode_utf16().flat_map(u16::to_le_bytes).collect();
    vec![
        ("batch of 10,000", batch.into_bytes()),
        (
            "100,000 levels of [",
            format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)).into_bytes(),
        ),
        (
            "100,000 levels of [, unclosed",
            "[".repeat(100_000).into_bytes(),
        ),
        (
            "100,000 levels of objects in arguments",
            deep_args.into_bytes(),
        ),
        (
            "NUL bytes between tokens",
            b"{\"jsonrpc\":\"2.0\",\0\"id\":1,\"method\":\"tools/list\"}\0".to_vec(),
        ),
        ("invalid UTF-8 in a string", invalid_utf8),
        ("UTF-16", utf16),
    ]
}

/// A refusal: a 4xx, or a 200 carrying a JSON-RPC error object and no result.
fn assert_refused(name: &str, status: u16, reply: &str) {
    let short: String = reply.chars().take(300).collect();
    if status == 200 {
        let v: Value =
            serde_json::from_str(reply).unwrap_or_else(|e| panic!("{name}: {e}: {short}"));
        assert!(v["error"]["code"].is_i64(), "{name}: {short}");
        assert!(v.get("result").is_none(), "{name}: {short}");
    } else {
        assert!((400..500).contains(&status), "{name}: {status} {short}");
    }
}

#[tokio::test]
async fn malformed_bodies_never_break_the_gateway() {
    let gw = unlimited().await;
    let bearer = auth(&gw.read);
    let headers = [
        ("authorization", bearer.as_str()),
        ("content-type", JSON),
        ("accept", ACCEPT),
    ];
    let fixed = BAD_BODIES.iter().map(|(n, b)| (*n, b.as_bytes().to_vec()));
    for (name, body) in fixed.chain(generated_bodies()) {
        let (status, reply) = post(&gw.url, &headers, body).await;
        assert_refused(name, status, &reply);
    }
    // Past the body limit: refused before it is parsed.
    let huge = "x".repeat(gw.settings.server.max_body_bytes + 1);
    assert_eq!(post(&gw.url, &headers, huge).await.0, 413);
    still_serves(&gw).await;
}

#[tokio::test]
async fn wrong_content_type_accept_or_method_is_refused() {
    let gw = unlimited().await;
    let bearer = auth(&gw.read);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    let cases: [(Option<&str>, Option<&str>, u16); 10] = [
        (Some("text/plain"), Some(ACCEPT), 415),
        (Some("application/x-www-form-urlencoded"), Some(ACCEPT), 415),
        (Some("multipart/form-data; boundary=x"), Some(ACCEPT), 415),
        (None, Some(ACCEPT), 415),
        (Some(JSON), None, 406),
        (Some(JSON), Some("text/html"), 406),
        (Some(JSON), Some(JSON), 406),
        (Some(JSON), Some("text/event-stream"), 406),
        (Some(JSON), Some("*/*"), 406),
        (Some(JSON), Some(ACCEPT), 200),
    ];
    for (content_type, accept, expected) in cases {
        let mut headers = vec![("authorization", bearer.as_str())];
        headers.extend(content_type.map(|v| ("content-type", v)));
        headers.extend(accept.map(|v| ("accept", v)));
        let (status, reply) = post(&gw.url, &headers, body.clone()).await;
        assert_eq!(status, expected, "{content_type:?} {accept:?}: {reply}");
        assert_eq!(reply.contains("\"result\""), expected == 200, "{reply}");
    }
    for method in ["GET", "PUT", "DELETE", "PATCH"] {
        let res = reqwest::Client::new()
            .request(method.parse().expect("method"), &gw.url)
            .header("authorization", &bearer)
            .header("accept", ACCEPT)
            .send()
            .await
            .expect("HTTP answers");
        assert_eq!(res.status().as_u16(), 405, "{method}");
    }
    still_serves(&gw).await;
}

#[tokio::test]
async fn header_abuse_never_gets_through() {
    let gw = unlimited().await;
    let valid = gw.read.clone();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    let split = |sep: &str| format!("Bearer {}{sep}{}", &valid[..20], &valid[20..]);
    let junk = |n: usize| {
        (0..n)
            .map(|i| auth(&format!("junk{i}")))
            .collect::<Vec<_>>()
    };
    let cases: Vec<(&str, Vec<String>, u16)> = vec![
        ("none", vec![], 401),
        ("64 KB token", vec![auth(&"a".repeat(64 * 1024))], 401),
        (
            "valid token + 64 KB",
            vec![format!("Bearer {valid}{}", "a".repeat(64 * 1024))],
            401,
        ),
        ("1 MB header", vec![auth(&"a".repeat(1024 * 1024))], 431),
        ("Bearer alone", vec!["Bearer".into()], 401),
        ("Bearer and a space", vec!["Bearer ".into()], 401),
        (
            "lowercase bearer, bad token",
            vec!["bearer junk".into()],
            401,
        ),
        ("tab after Bearer", vec![format!("Bearer\t{valid}")], 401),
        ("space inside the token", vec![split(" ")], 401),
        ("Basic", vec!["Basic dXNlcjpwYXNz".into()], 401),
        ("token without scheme", vec![valid.clone()], 401),
        ("50 bad headers", junk(50), 401),
        ("bad, then valid", vec![auth("junk"), auth(&valid)], 401),
        ("200 headers", junk(200), 431),
    ];
    let url = gw.url.clone();
    let send = |values: Vec<String>| {
        let (url, body) = (url.clone(), body.clone());
        async move {
            let mut headers = vec![
                ("content-type", JSON.to_owned()),
                ("accept", ACCEPT.to_owned()),
            ];
            headers.extend(values.into_iter().map(|v| ("authorization", v)));
            let h: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
            post(&url, &h, body).await
        }
    };
    for (name, values, expected) in cases {
        let (status, reply) = send(values).await;
        assert_eq!(status, expected, "{name}: {reply}");
        assert!(!reply.contains("\"result\""), "{name}: {reply}");
    }
    // Headers no HTTP library sends: line breaks and NUL inside the token, non-ASCII bytes.
    let host = gw.base.trim_start_matches("http://").to_owned();
    let raw = |auth_lines: &str| {
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: {JSON}\r\nAccept: {ACCEPT}\r\n{auth_lines}\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .into_bytes()
    };
    for (name, line, expected) in [
        ("folded onto two lines", split("\r\n "), 400),
        ("bare LF inside", split("\n"), 400),
        ("bare CR inside", split("\r"), 400),
        ("NUL inside", split("\0"), 400),
        ("non-ASCII", "Bearer \u{e9}t\u{e9}".to_owned(), 401),
        (
            "bad, then valid after a bare LF",
            format!("Bearer junk\nAuthorization: Bearer {valid}"),
            401,
        ),
        ("well formed", format!("Bearer {valid}"), 200),
    ] {
        let status = raw_http(&gw.base, &raw(&format!("Authorization: {line}"))).await;
        assert_eq!(status, expected, "{name}");
    }
    still_serves(&gw).await;
}

/// RFC 9110 (11.1, 11.6.2): the scheme is case-insensitive and may be followed by several spaces,
/// so these carry the valid token and are served, as real clients expect.
#[tokio::test]
async fn the_scheme_is_case_insensitive() {
    let gw = unlimited().await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    for value in [
        format!("bearer {}", gw.read),
        format!("BEARER {}", gw.read),
        format!("Bearer   {}", gw.read),
    ] {
        let headers = [
            ("authorization", value.as_str()),
            ("content-type", JSON),
            ("accept", ACCEPT),
        ];
        let (status, reply) = post(&gw.url, &headers, body.clone()).await;
        assert_eq!(status, 200, "{value}");
        assert!(
            reply.contains("\"mcp_read\"") && !reply.contains("\"mcp_write\""),
            "{reply}"
        );
    }
}

/// Two `Authorization` headers make a malformed request (RFC 9110 5.3: the field is not a list). The
/// gateway uses the first and ignores the rest, so a proxy or log that reads the last one sees a
/// different caller than the gateway serves.
#[tokio::test]
async fn several_authorization_headers_are_refused() {
    let gw = unlimited().await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    for (first, second) in [
        (auth(&gw.read), auth("junk")),
        (auth(&gw.read), auth(&gw.write)),
        (auth(&gw.read), auth(&gw.read)),
    ] {
        let headers = [
            ("authorization", first.as_str()),
            ("authorization", second.as_str()),
            ("content-type", JSON),
            ("accept", ACCEPT),
        ];
        let (status, reply) = post(&gw.url, &headers, body.clone()).await;
        assert!(matches!(status, 400 | 401), "{status}: {reply}");
    }
}

enum Kind {
    Str,
    Int,
    Bool,
    List,
}

/// Values of every JSON type that are not of kind `kind`.
fn wrong_values(kind: &Kind) -> Vec<Value> {
    match kind {
        Kind::Str => vec![
            json!(5),
            json!(1.5),
            json!(true),
            json!([]),
            json!(["tree"]),
            json!({}),
        ],
        Kind::Int => vec![
            json!("abc"),
            json!(""),
            json!("1.5"),
            json!("1e3"),
            json!("\u{663}"),
            json!(1.0),
            json!(1e300),
            json!(u64::MAX),
            json!(true),
            json!([1]),
            json!({"n": 1}),
        ],
        Kind::Bool => vec![
            json!(1),
            json!(0),
            json!("yes"),
            json!("1"),
            json!([]),
            json!({}),
        ],
        Kind::List => vec![
            json!(5),
            json!("tag"),
            json!("[1]"),
            json!([1]),
            json!([null]),
            json!({"a": "b"}),
            json!(true),
        ],
    }
}

fn type_message(param: &str, kind: &Kind) -> String {
    let what = match kind {
        Kind::Str => "a string",
        Kind::Int => "an integer",
        Kind::Bool => "true or false",
        Kind::List => "an array of strings",
    };
    format!("error|INVALID_PARAM|Parameter '{param}' must be {what}")
}

/// Each parameter of each tool, its kind, and arguments that make the call reach it.
#[rustfmt::skip] // a table: one case per line reads best
const TYPED: &[(&str, &str, Kind, &str)] = &[
    ("mcp_read", "mode", Kind::Str, "{}"),
    ("mcp_read", "scope", Kind::Str, r#"{"mode":"tree"}"#),
    ("mcp_read", "tab", Kind::Str, r#"{"mode":"list"}"#),
    ("mcp_read", "index", Kind::Int, r#"{"mode":"item","tab":"info"}"#),
    ("mcp_read", "query", Kind::Str, r#"{"mode":"search"}"#),
    ("mcp_read", "search_in", Kind::Str, r#"{"mode":"search","query":"x"}"#),
    ("mcp_read", "max_depth", Kind::Int, r#"{"mode":"tree"}"#),
    ("mcp_read", "max_items", Kind::Int, r#"{"mode":"list","tab":"info"}"#),
    ("mcp_read", "skip", Kind::Int, r#"{"mode":"list","tab":"info"}"#),
    ("mcp_read", "include_text", Kind::Bool, r#"{"mode":"tree"}"#),
    ("mcp_read", "include_tags", Kind::Bool, r#"{"mode":"tree"}"#),
    ("mcp_read", "include_note", Kind::Bool, r#"{"mode":"tree"}"#),
    ("mcp_write", "mode", Kind::Str, "{}"),
    ("mcp_write", "intent", Kind::Str, r#"{"mode":"add","tab":"workspace/adv-types","text":"x"}"#),
    ("mcp_write", "tab", Kind::Str, r#"{"mode":"add","text":"x"}"#),
    ("mcp_write", "text", Kind::Str, r#"{"mode":"add","tab":"workspace/adv-types"}"#),
    ("mcp_write", "tags", Kind::List, r#"{"mode":"add","tab":"workspace/adv-types","text":"x"}"#),
    ("mcp_write", "note", Kind::Str, r#"{"mode":"add","tab":"workspace/adv-types","text":"x"}"#),
    ("mcp_write", "index", Kind::Int, r#"{"mode":"delete","tab":"workspace/adv-types"}"#),
    ("mcp_write", "field", Kind::Str, r#"{"mode":"update","tab":"workspace/adv-types","index":0}"#),
    ("mcp_write", "edit_mode", Kind::Str, r#"{"mode":"update","tab":"workspace/adv-types","index":0,"field":"text","text":"y"}"#),
    ("mcp_write", "match", Kind::Str, r#"{"mode":"update","tab":"workspace/adv-types","index":0,"field":"text","edit_mode":"substitute","text":"y"}"#),
    ("mcp_write", "to_tab", Kind::Str, r#"{"mode":"move","tab":"workspace/adv-types","index":0}"#),
    ("mcp_write", "path", Kind::Str, r#"{"mode":"tab_create"}"#),
    ("mcp_validate", "tool", Kind::Str, r#"{"params":{"mode":"tree"}}"#),
];

/// Missing, out-of-range and unknown values: (tool, arguments, the exact error line).
#[rustfmt::skip] // a table: one case per line reads best
const REFUSED: &[(&str, &str, &str)] = &[
    ("mcp_read", r#"{"mode":null}"#, "error|MISSING_PARAM|Parameter 'mode' required"),
    ("mcp_read", r#"{"mode":"list","tab":null}"#, "error|MISSING_PARAM|Parameter 'tab' required for mode 'list'"),
    ("mcp_read", r#"{"mode":"tree","scope":"MCP"}"#, "error|INVALID_PARAM|Parameter 'scope' must be one of: mcp, all, external (got 'MCP')"),
    ("mcp_read", r#"{"mode":"search","query":"x","search_in":"body"}"#, "error|INVALID_PARAM|Parameter 'search_in' must be one of: text, note, tags, all (got 'body')"),
    ("mcp_read", r#"{"mode":"tree","max_depth":0}"#, "error|INVALID_PARAM|Parameter 'max_depth' must be between 1 and 10 (got 0)"),
    ("mcp_read", r#"{"mode":"tree","max_depth":"11"}"#, "error|INVALID_PARAM|Parameter 'max_depth' must be between 1 and 10 (got 11)"),
    ("mcp_read", r#"{"mode":"tree","max_items":-1}"#, "error|INVALID_PARAM|Parameter 'max_items' must be between 0 and 100 (got -1)"),
    ("mcp_read", r#"{"mode":"list","tab":"info","max_items":101}"#, "error|INVALID_PARAM|Parameter 'max_items' must be between 1 and 100 (got 101)"),
    ("mcp_read", r#"{"mode":"list","tab":"info","skip":-9223372036854775808}"#, "error|INVALID_PARAM|Parameter 'skip' must be >= 0 (got -9223372036854775808)"),
    ("mcp_read", r#"{"mode":"list\n"}"#, "error|INVALID_MODE|Invalid mode 'list ' (expected one of: tree, list, item, search)"),
    ("mcp_write", r#"{"mode":"add","tab":"workspace/adv-types","text":null}"#, "error|MISSING_PARAM|Parameter 'text' required for mode 'add'"),
    ("mcp_write", r#"{"mode":"add","tab":"workspace/adv-types","text":"x","intent":"run"}"#, "error|INVALID_PARAM|Parameter 'intent' must be one of: execute, preview (got 'run')"),
    ("mcp_write", r#"{"mode":"update","tab":"workspace/adv-types","index":0,"field":"body"}"#, "error|INVALID_PARAM|Parameter 'field' must be one of: text, tags, note (got 'body')"),
    ("mcp_write", r#"{"mode":"update","tab":"workspace/adv-types","index":0,"field":"text","text":"y","edit_mode":"delete"}"#, "error|INVALID_PARAM|Parameter 'edit_mode' must be one of: replace, append, prepend, substitute, remove (got 'delete')"),
    ("mcp_write", r#"{"mode":"add","tab":"workspace/adv-types","text":"x","tags":["a",""]}"#, "error|INVALID_PARAM|Tags must not be empty"),
    ("mcp_write", r#"{"mode":"add","tab":"workspace/adv-types","text":"x","tags":["a\u0000"]}"#, "error|INVALID_PARAM|Tags must not contain control characters"),
    ("mcp_write", r#"{"mode":"add","tab":"workspace/adv-\u202Eabc","text":"x"}"#, "error|INVALID_PARAM|Invalid tab path: it holds an invisible or direction-changing character (U+202E)"),
    ("mcp_write", r#"{"mode":"tab_create","path":"workspace/adv\u200Bx"}"#, "error|INVALID_PARAM|Invalid tab path: it holds an invisible or direction-changing character (U+200B)"),
    ("mcp_validate", r#"{"params":{}}"#, "error|MISSING_PARAM|Parameter 'tool' required"),
    ("mcp_validate", r#"{"tool":"delete","params":{}}"#, "error|INVALID_PARAM|Parameter 'tool' must be one of: read, write (got 'delete')"),
    ("mcp_validate", r#"{"tool":"read"}"#, "error|MISSING_PARAM|Parameter 'params' required"),
    ("mcp_validate", r#"{"tool":"read","params":null}"#, "error|MISSING_PARAM|Parameter 'params' required"),
];

/// (tool, arguments, exact error line): each parameter of each tool, with a wrong type, in a call
/// that reaches it.
fn wrong_type_calls() -> Vec<(&'static str, Value, String)> {
    let mut out = Vec::new();
    for (tool, param, kind, base) in TYPED {
        for value in wrong_values(kind) {
            let mut args: Value = serde_json::from_str(base).expect("spec");
            args[*param] = value;
            out.push((*tool, args, type_message(param, kind)));
        }
    }
    for (tool, args, expected) in REFUSED {
        let args = serde_json::from_str(args).expect("case");
        out.push((*tool, args, (*expected).to_owned()));
    }
    for params in [json!(5), json!("mode=tree"), json!([]), json!(true)] {
        out.push((
            "mcp_validate",
            json!({"tool": "read", "params": params}),
            "error|INVALID_PARAM|Parameter 'params' must be an object".to_owned(),
        ));
    }
    out
}

#[tokio::test]
async fn wrong_argument_types_are_tool_errors() {
    let cq = own_seeded();
    let gw = unlimited_to(&cq).await;
    let c = client(&gw.url, &gw.write).await;
    let before = copyq_tabs(&cq);
    let calls = wrong_type_calls();
    assert!(calls.len() > 150, "{}", calls.len());
    for (tool, args, expected) in &calls {
        assert_eq!(
            &err(&c, tool, args.clone()).await,
            expected,
            "{tool} {args}"
        );
        // mcp_validate reports the same failure for the same call, without failing itself.
        if *tool != "mcp_validate" {
            let which = if *tool == "mcp_read" { "read" } else { "write" };
            let got = ok(&c, "mcp_validate", json!({"tool": which, "params": args})).await;
            assert_eq!(got, format!("valid:false|errors:1\n{expected}"), "{args}");
        }
    }
    for (tool, known) in [
        ("mcp_read", "mode, scope,"),
        ("mcp_write", "mode, intent,"),
        ("mcp_validate", "tool, params"),
    ] {
        let got = err(
            &c,
            tool,
            json!({"mode": "tree", "tool": "read", "Mode\u{0}\n": 1}),
        )
        .await;
        assert!(
            got.starts_with(&format!(
                "error|INVALID_PARAM|Unknown parameter 'Mode\\0\\n' (known: {known}"
            )),
            "{got}"
        );
    }
    assert_eq!(copyq_tabs(&cq), before, "no failed call created a tab");
}

#[tokio::test]
async fn huge_arguments_are_tool_errors() {
    let cq = own_seeded();
    let gw = unlimited_to(&cq).await;
    let c = client(&gw.url, &gw.write).await;
    let huge = "\u{430}".repeat(1024 * 1024); // 2 MiB of Cyrillic а, under the body limit
    let cases = [
        (
            "mcp_read",
            json!({"mode": "search", "query": huge}),
            "error|INVALID_PARAM|Parameter 'query' longer than 1000 characters",
        ),
        (
            "mcp_read",
            json!({"mode": "list", "tab": huge}),
            "error|INVALID_PARAM|Tab path longer than 1024 characters",
        ),
        (
            "mcp_read",
            json!({"mode": "list", "scope": "external", "tab": huge}),
            "error|INVALID_PARAM|Tab path longer than 1024 characters",
        ),
        (
            "mcp_write",
            json!({"mode": "add", "tab": format!("workspace/{huge}"), "text": "x"}),
            "error|INVALID_PARAM|Tab path longer than 1024 characters",
        ),
        (
            "mcp_write",
            json!({"mode": "tab_create", "path": format!("workspace/{huge}")}),
            "error|INVALID_PARAM|Tab path longer than 1024 characters",
        ),
        (
            "mcp_write",
            json!({"mode": "add", "tab": "\u{456}nfo", "text": huge}),
            "error|PERMISSION_DENIED|Operation 'add' not allowed on '\u{456}nfo'",
        ),
    ];
    let before = copyq_tabs(&cq);
    for (tool, args, expected) in cases {
        assert_eq!(err(&c, tool, args).await, expected);
    }
    let got = err(&c, "mcp_read", json!({"mode": huge.clone()})).await;
    assert!(
        got.starts_with("error|INVALID_MODE|Invalid mode 'ааа"),
        "{}",
        &got[..80]
    );
    assert_eq!(copyq_tabs(&cq), before);
    still_serves(&gw).await;
}

/// Every tab in CopyQ and the text of every item in it, straight from CopyQ.
fn snapshot(cq: &PrivateCopyq) -> BTreeMap<String, Vec<String>> {
    let script = "var out = {}; tab().forEach(function (t) { tab(t); var a = []; \
                  for (var i = 0; i < size(); ++i) a.push(str(read(i))); out[t] = a; }); \
                  print(JSON.stringify(out))";
    let out = cq.eval(script, b"").expect("dump CopyQ");
    serde_json::from_str(&out).expect("json")
}

/// Paths that try to leave the writable area, and the code each is refused with.
const TRICKS: &[(&str, &str)] = &[
    ("../info", "INVALID_PARAM"),
    ("workspace/../../x", "INVALID_PARAM"),
    ("mcp/../архив", "INVALID_PARAM"),
    ("workspace/a\u{0}b", "INVALID_PARAM"),
    ("workspace/./adv-src", "INVALID_PARAM"),
    ("workspace//adv-src", "INVALID_PARAM"),
    ("/mcp/workspace/adv-src", "INVALID_PARAM"),
    ("workspace/adv-src/", "INVALID_PARAM"),
    (" workspace/adv-src", "INVALID_PARAM"),
    ("workspace/adv-src\n", "INVALID_PARAM"),
    ("workspace/adv-src\u{202e}\u{85}", "INVALID_PARAM"),
    ("", "INVALID_PARAM"),
    ("\u{456}nfo", "PERMISSION_DENIED"), // Cyrillic і
    ("w\u{43e}rkspace/adv-src", "PERMISSION_DENIED"), // Cyrillic о
    ("\u{437}a\u{43c}e\u{442}\u{43a}\u{438}", "PERMISSION_DENIED"), // заметки, Latin a and e
    ("\u{ff49}\u{ff4e}\u{ff46}\u{ff4f}", "PERMISSION_DENIED"), // full-width ｉｎｆｏ
    ("workspace\u{ff0f}adv-src", "PERMISSION_DENIED"), // full-width slash
    ("workspace\u{200d}/adv-src", "INVALID_PARAM"), // zero-width joiner
    ("\u{200f}info", "INVALID_PARAM"),   // right-to-left mark
    ("info\u{200b}", "INVALID_PARAM"),   // zero-width space
    ("Info", "PERMISSION_DENIED"),
    ("MCP/info", "PERMISSION_DENIED"),
    ("mcp/mcp/info", "PERMISSION_DENIED"),
    ("mcp", "PERMISSION_DENIED"),
    ("архив", "PERMISSION_DENIED"),
    ("info/sub", "PERMISSION_DENIED"),
    ("workspace\\..\\..\\архив", "PERMISSION_DENIED"),
    ("%2e%2e/info", "PERMISSION_DENIED"),
];

fn trick_writes(trick: &str) -> Vec<Value> {
    vec![
        json!({"mode": "add", "tab": trick, "text": "escaped"}),
        json!({"mode": "update", "tab": trick, "index": 0, "field": "text", "text": "escaped"}),
        json!({"mode": "delete", "tab": trick, "index": 0}),
        json!({"mode": "move", "tab": trick, "index": 0, "to_tab": "workspace/adv-src"}),
        json!({"mode": "move", "tab": "workspace/adv-src", "index": 0, "to_tab": trick}),
        json!({"mode": "tab_create", "path": trick}),
        json!({"mode": "tab_delete", "path": trick}),
    ]
}

#[tokio::test]
async fn path_tricks_are_refused_and_change_nothing() {
    let cq = &own_seeded();
    let gw = unlimited_to(cq).await;
    let c = client(&gw.url, &gw.write).await;
    let before = snapshot(cq);
    let tabs_before = copyq_tabs(cq);
    for (trick, code) in TRICKS {
        for args in trick_writes(trick) {
            for intent in ["execute", "preview"] {
                let mut a = args.clone();
                a["intent"] = json!(intent);
                let got = err(&c, "mcp_write", a.clone()).await;
                assert!(got.starts_with(&format!("error|{code}|")), "{a}: {got}");
                let v = ok(&c, "mcp_validate", json!({"tool": "write", "params": a})).await;
                assert_eq!(v, format!("valid:false|errors:1\n{got}"));
            }
        }
        // A read of a look-alike never reaches the real tab, and never creates one. (`архив` is
        // a real external tab: reading it with scope `all` is fine.)
        let scopes: &[&str] = if *trick == "архив" {
            &["mcp"]
        } else {
            &["mcp", "all"]
        };
        for scope in scopes {
            let got = err(
                &c,
                "mcp_read",
                json!({"mode": "list", "tab": trick, "scope": scope}),
            )
            .await;
            assert!(
                got.starts_with("error|TAB_NOT_FOUND|") || got.starts_with("error|INVALID_PARAM|"),
                "{trick:?}: {got}"
            );
        }
    }
    assert_eq!(
        err(&c, "mcp_read", json!({"mode": "list", "tab": "\u{456}nfo"})).await,
        "error|TAB_NOT_FOUND|Tab not found: \u{456}nfo"
    );
    assert!(
        ok(&c, "mcp_read", json!({"mode": "list", "tab": "info"}))
            .await
            .contains("\"info item\"")
    );
    assert_eq!(copyq_tabs(cq), tabs_before, "no tab created or removed");
    assert_eq!(snapshot(cq), before, "no item changed");
}
