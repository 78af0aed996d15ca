//! Our bytes against those of tests/fixtures/protocol_probe.py (a copy of the team's reference probe), the Python client known to work
//! with CopyQ 6.4.0/Qt 5: each case is a Python expression over the probe's own encoders (run in
//! `python3`) next to the Rust that must produce the same bytes, and the reverse for replies.

use std::process::{Command, Stdio};

use super::MAX_FRAME_LEN;
use super::encode::encode_value;
use super::frame::{Message, decode_message, encode_call, split_frame};
use super::slots;
use super::value::{Call, Map, MapListType, Qt, Value};

/// The team's reference probe, kept in the repository so this check runs anywhere.
const PROBE_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
const TEXT: &str = "text/plain";
const V6: MapListType = MapListType::QVector;

fn item(text: &str, tags: &str, note: &str) -> Map {
    vec![
        (TEXT.into(), Value::bytes(text)),
        ("application/x-copyq-tags".into(), Value::bytes(tags)),
        ("application/x-copyq-item-notes".into(), Value::bytes(note)),
    ]
}

/// Evaluate Python expressions over protocol_probe.py; the bytes of each, in order.
fn python_bytes(exprs: &[&str]) -> Vec<Vec<u8>> {
    const PRELUDE: &str = r#"
import sys, json, struct
sys.path.insert(0, sys.argv[1])
import protocol_probe as p
class Sock:
    def __init__(self): self.out = b''
    def sendall(self, b): self.out += b
def call(sig, *args, cid=0):
    c = p.CopyQ.__new__(p.CopyQ); c.s = Sock(); c.buf = b''; c.next_id = cid
    c.send_call(sig, *args); return c.s.out
def framed(code, payload):
    c = p.CopyQ.__new__(p.CopyQ); c.s = Sock(); c._send(code, payload); return c.s.out
def reply(cid, variant): return framed(9, struct.pack('>i', cid) + variant)
print(json.dumps([eval(e).hex() for e in json.load(sys.stdin)]))
"#;
    let mut child = Command::new("python3")
        .args(["-c", PRELUDE, PROBE_DIR])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3");
    let input = serde_json::to_vec(exprs).expect("json");
    std::io::Write::write_all(&mut child.stdin.take().expect("stdin"), &input).expect("write");
    let out = child.wait_with_output().expect("python output");
    assert!(out.status.success(), "python failed");
    let hexes: Vec<String> = serde_json::from_slice(&out.stdout).expect("json list");
    assert_eq!(hexes.len(), exprs.len(), "one result per expression");
    hexes
        .iter()
        .map(|h| {
            (0..h.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&h[i..i + 2], 16).expect("hex"))
                .collect()
        })
        .collect()
}

fn frame(id: i32, call: Call) -> Vec<u8> {
    encode_call(id, &call).expect("frame")
}

fn variant(v: Value) -> Vec<u8> {
    let mut out = Vec::new();
    encode_value(&mut out, &v).expect("encodable");
    out
}

#[test]
#[cfg_attr(
    windows,
    ignore = "runs python3 and tests/fixtures/protocol_probe.py, which the Wine run has not"
)]
fn encoding_matches_the_python_probe_byte_for_byte() {
    let sample = item("Привет 🎉", "a,b", "note");
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("call('tabs()')", frame(0, slots::tabs())),
        (
            "call('browserLength(QString)', 'mcp/заметки 🎉', cid=7)",
            frame(7, slots::browser_length("mcp/заметки 🎉")),
        ),
        (
            "call('browserItemData(QString,int)', 't', -1, cid=2**31-1)",
            frame(i32::MAX, slots::browser_item_data("t", -1)),
        ),
        (
            "call('browserItemData(QString,int,QString)', 't', 3, 'text/plain', cid=1)",
            frame(1, slots::browser_item_format("t", 3, TEXT)),
        ),
        (
            "call('browserInsert(QString,int,QVector<QVariantMap>)', 'probe/tab', 0, p.qvector_map([{'text/plain': 'Привет 🎉'.encode(), 'application/x-copyq-tags': b'a,b', 'application/x-copyq-item-notes': b'note'}]), cid=3)",
            frame(3, slots::browser_insert(V6, "probe/tab", 0, vec![sample])),
        ),
        (
            "call('browserChange(QString,int,VariantMapList)', 'x', 2, p.qvector_map([{'k': 'str'}, {}], name='VariantMapList'), cid=4)",
            frame(
                4,
                slots::browser_change(
                    MapListType::VariantMapList,
                    "x",
                    2,
                    vec![vec![("k".into(), Value::str("str"))], vec![]],
                ),
            ),
        ),
        (
            "call('browserRemoveRows(QString,QVector<int>)', 'x', p.qvector_int([0, 5, -1]), cid=5)",
            frame(5, slots::browser_remove_rows(Qt::V5, "x", vec![0, 5, -1])),
        ),
        (
            "call('selectionSelect(int,QVariant,QString)', 9, p.Regex('PROBE', icase=True), 'text/plain', cid=6)",
            frame(
                6,
                slots::selection_select(9, Value::regex("PROBE", true), TEXT),
            ),
        ),
        (
            "call('selectionSelect(int,QVariant,QString)', 9, p.Regex('a.*b'), '')",
            frame(
                0,
                slots::selection_select(9, Value::regex("a.*b", false), ""),
            ),
        ),
        (
            "call('removeTab(QString)', '')",
            frame(0, slots::remove_tab("")),
        ),
        (
            "p.qvariant(True) + p.qvariant(False)",
            [variant(Value::Bool(true)), variant(Value::Bool(false))].concat(),
        ),
        (
            "p.qvariant(-5) + p.qvariant(2**31-1)",
            [variant(Value::Int(-5)), variant(Value::Int(i32::MAX))].concat(),
        ),
        (
            "p.qvariant('') + p.qvariant(b'') + p.qvariant(b'\\x00\\xff')",
            [
                variant(Value::str("")),
                variant(Value::bytes("")),
                variant(Value::bytes([0, 255])),
            ]
            .concat(),
        ),
        (
            "struct.pack('>IB', 10, 0) + p.qstring(None) + struct.pack('>IB', 12, 0) + p.qbytearray(None)",
            [variant(Value::String(None)), variant(Value::Bytes(None))].concat(),
        ),
        (
            "p.qvariant({'a': {'b': True, 'c': 'ж'}, '': 1})",
            variant(Value::Map(vec![
                (
                    "a".into(),
                    Value::Map(vec![
                        ("b".into(), Value::Bool(true)),
                        ("c".into(), Value::str("ж")),
                    ]),
                ),
                ("".into(), Value::Int(1)),
            ])),
        ),
        (
            "p.qvariant(p.qvector_int([]))",
            variant(Value::IntVector(vec![])),
        ),
    ];
    let exprs: Vec<&str> = cases.iter().map(|(e, _)| *e).collect();
    for ((expr, ours), theirs) in cases.iter().zip(python_bytes(&exprs)) {
        assert_eq!(ours, &theirs, "bytes differ for {expr}");
    }
}

#[test]
#[cfg_attr(
    windows,
    ignore = "runs python3 and tests/fixtures/protocol_probe.py, which the Wine run has not"
)]
fn decoding_reads_what_the_python_probe_writes() {
    let rows = Value::IntVector(vec![3, 1]);
    let maps = Value::MapList(V6, vec![vec![("x".into(), Value::bytes("y"))]]);
    let cases: Vec<(&str, Message)> = vec![
        (
            "reply(5, p.qvariant(p.qvector_int([3, 1])))",
            Message::Reply {
                id: 5,
                value: Ok(rows),
            },
        ),
        (
            "reply(-1, p.qvariant(p.qvector_map([{'x': b'y'}])))",
            Message::Reply {
                id: -1,
                value: Ok(maps),
            },
        ),
        (
            "reply(0, p.qvariant({'t': 'é', 'n': 2}))",
            Message::Reply {
                id: 0,
                value: Ok(Value::Map(vec![
                    ("t".into(), Value::str("é")),
                    ("n".into(), Value::Int(2)),
                ])),
            },
        ),
        ("framed(10, b'')", Message::Stop),
        ("framed(9, b'')", Message::Rejected),
    ];
    let exprs: Vec<&str> = cases.iter().map(|(e, _)| *e).collect();
    for ((expr, expected), bytes) in cases.iter().zip(python_bytes(&exprs)) {
        let split = split_frame(&bytes, MAX_FRAME_LEN).expect("a valid frame");
        let (message, used) = split.expect("a whole frame");
        assert_eq!(used, bytes.len(), "{expr}");
        assert_eq!(&decode_message(message), &Ok(expected.clone()), "{expr}");
    }
}
