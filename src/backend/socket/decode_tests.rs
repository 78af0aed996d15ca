//! Unit and property tests of [`super`]: every dialect, hostile bytes, and the exact bytes CopyQ
//! 9.0, 10.0 and 17.0 were seen to send. Kept out of decode.rs only for its length.

use super::super::encode::{encode_value, encode_value_in};
use super::super::value::strategy::{arb_dialect, arb_value};
use super::*;
use proptest::prelude::*;

fn enc(v: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    encode_value(&mut out, v).expect("encodable");
    out
}

proptest! {
    #[test]
    fn encode_then_decode_round_trips(v in arb_value()) {
        let bytes = enc(&v);
        prop_assert_eq!(decode_value(&bytes), Ok(v));
    }

    #[test]
    fn round_trips_in_every_dialect(v in arb_value(), dialect in arb_dialect()) {
        let mut bytes = Vec::new();
        encode_value_in(&mut bytes, &v, dialect).expect("encodable");
        prop_assert_eq!(decode_value_in(&bytes, dialect), Ok(v));
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256),
                                   dialect in arb_dialect()) {
        let _ = decode_value_in(&bytes, dialect);
    }

    #[test]
    fn mutated_qt6_encodings_never_panic(v in arb_value(), at in any::<usize>(), byte in any::<u8>()) {
        let dialect = Dialect { qt: Qt::V6, data_file_key: true };
        let mut bytes = Vec::new();
        encode_value_in(&mut bytes, &v, dialect).expect("encodable");
        if !bytes.is_empty() {
            let i = at % bytes.len();
            bytes[i] = byte;
        }
        let _ = decode_value_in(&bytes, dialect);
        bytes.truncate(at % (bytes.len() + 1));
        let _ = decode_value_in(&bytes, dialect);
    }

    #[test]
    fn mutated_encodings_never_panic(v in arb_value(), at in any::<usize>(), byte in any::<u8>()) {
        let mut bytes = enc(&v);
        if !bytes.is_empty() {
            let i = at % bytes.len();
            bytes[i] = byte;
        }
        let _ = decode_value(&bytes);
        bytes.truncate(at % (bytes.len() + 1));
        let _ = decode_value(&bytes);
    }
}

#[test]
fn huge_declared_counts_are_rejected_before_allocating() {
    for id in [
        type_id::LIST,
        type_id::MAP,
        type_id::STRING_LIST,
        type_id::BYTE_ARRAY,
    ] {
        let mut bytes = id.to_be_bytes().to_vec();
        bytes.extend([0, 0xff, 0xff, 0xff, 0xfe]);
        assert!(matches!(
            decode_value(&bytes),
            Err(DecodeError::Truncated { .. })
        ));
    }
    let mut user = type_id::USER.to_be_bytes().to_vec();
    user.push(0);
    user.extend(13u32.to_be_bytes());
    user.extend(b"QVector<int>\0");
    user.extend(0x4000_0000u32.to_be_bytes());
    assert!(matches!(
        decode_value(&user),
        Err(DecodeError::Truncated { .. })
    ));
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let mut bytes = Vec::new();
    for _ in 0..100_000 {
        bytes.extend(type_id::LIST.to_be_bytes());
        bytes.extend([0, 0, 0, 0, 1]);
    }
    assert_eq!(decode_value(&bytes), Err(DecodeError::TooDeep));
}

/// A user type's header: id, null flag, name with its NUL.
fn user(id: u32, name: &str) -> Vec<u8> {
    let mut b = id.to_be_bytes().to_vec();
    b.push(0);
    b.extend(u32::try_from(name.len() + 1).expect("short").to_be_bytes());
    b.extend(name.as_bytes());
    b.push(0);
    b
}

fn qstring(s: &str) -> Vec<u8> {
    let units: Vec<u8> = s.encode_utf16().flat_map(u16::to_be_bytes).collect();
    let mut b = u32::try_from(units.len())
        .expect("short")
        .to_be_bytes()
        .to_vec();
    b.extend(units);
    b
}

/// `selectionGetRows(-1)`'s reply as CopyQ 9.0 (Qt 5) and 10.0/17.0 (Qt 6) send it.
#[test]
fn row_lists_of_both_qts_decode_and_tell_the_qt() {
    for (id, name, qt) in [
        (0x400, "QVector<int>", Qt::V5),
        (0x1_0000, "QList<int>", Qt::V6),
    ] {
        let mut bytes = user(id, name);
        bytes.extend([0, 0, 0, 2, 0, 0, 0, 7, 0xff, 0xff, 0xff, 0xff]);
        let mut r = Reader::new(&bytes);
        assert_eq!(r.variant(0), Ok(Value::IntVector(vec![7, -1])));
        assert_eq!(r.seen_qt(), Some(qt));
        assert_eq!(r.finish(), Ok(()));
    }
    let mut out = Vec::new();
    let qt6 = Dialect {
        qt: Qt::V6,
        data_file_key: false,
    };
    encode_value_in(&mut out, &Value::IntVector(vec![]), qt6).expect("encodable");
    let mut expected = user(0x1_0000, "QList<int>");
    expected.extend([0, 0, 0, 0]);
    assert_eq!(out, expected);
}

/// An item whose text is kept in a file, next to a small format, in a map: before 14.0 the
/// path alone; from 14.0 a has-key flag and, for an encrypted tab, a key that is skipped.
#[test]
fn data_files_decode_in_both_layouts_inside_maps() {
    let path = "/tmp/x/copyq-s/items/ab/cd";
    let tail = |bytes: &mut Vec<u8>| {
        bytes.extend(qstring("text/x-small"));
        bytes.extend([0, 0, 0, 12, 0, 0, 0, 0, 1, b'a']);
    };
    let expected = Value::Map(vec![
        ("text/plain".into(), Value::DataFile(path.into())),
        ("text/x-small".into(), Value::bytes("a")),
    ]);
    let head = |id| {
        let mut b = vec![0, 0, 0, 8, 0, 0, 0, 0, 2];
        b.extend(qstring("text/plain"));
        b.extend(user(id, "DataFile"));
        b.extend(qstring(path));
        b
    };
    let mut old = head(0x400);
    tail(&mut old);
    assert_eq!(decode_value(&old), Ok(expected.clone()));
    let since_14 = Dialect {
        qt: Qt::V6,
        data_file_key: true,
    };
    let mut no_key = head(0x1_0000);
    no_key.push(0);
    tail(&mut no_key);
    assert_eq!(decode_value_in(&no_key, since_14), Ok(expected.clone()));
    let mut with_key = head(0x1_0000);
    with_key.push(1);
    with_key.extend([0, 0, 0, 3, 0xde, 0xad, 0xbf]);
    tail(&mut with_key);
    assert_eq!(decode_value_in(&with_key, since_14), Ok(expected));
    // Read in the wrong layout, the bytes do not line up: an error, never a wrong item.
    assert!(decode_value(&with_key).is_err());
}

#[test]
fn unknown_types_and_trailing_bytes_are_errors() {
    assert_eq!(
        decode_value(&[0, 2, 0, 0, 0]),
        Err(DecodeError::UnknownType(0x2_0000))
    );
    assert_eq!(
        decode_value(&[0, 0, 0, 0, 0, 9]),
        Err(DecodeError::TrailingBytes(1))
    );
    assert_eq!(
        decode_value(&[0, 0, 0, 10, 0, 0, 0, 0, 3, 0, 0x41, 0]),
        Err(DecodeError::OddStringLength(3))
    );
}

#[test]
fn a_variant_in_a_variant_is_unwrapped() {
    let mut bytes = vec![0, 0, 0, 41, 0];
    bytes.extend(enc(&Value::Int(200)));
    assert_eq!(decode_value(&bytes), Ok(Value::Int(200)));
    let nested: Vec<u8> = [0, 0, 0, 41, 0].repeat(MAX_DEPTH + 1);
    assert_eq!(decode_value(&nested), Err(DecodeError::TooDeep));
}

proptest! {
    /// A `QString` of any UTF-16 units, lone surrogates among them, decodes as Rust's lossy UTF-16
    /// conversion makes it, ASCII or not (the ASCII shortcut included).
    #[test]
    fn strings_decode_as_lossy_utf16(
        units in prop_oneof![
            prop::collection::vec(0u16..0x80, 0..40),
            prop::collection::vec(0u16..0x100, 0..40),
            // Low bytes ASCII, high bytes anything: not ASCII unless every high byte is 0.
            prop::collection::vec((0u8..3, 0u8..0x80).prop_map(|(h, l)| u16::from_be_bytes([h, l])), 1..40),
            prop::collection::vec(any::<u16>(), 0..40),
        ]
    ) {
        let mut bytes = u32::try_from(units.len() * 2).expect("short").to_be_bytes().to_vec();
        bytes.extend(units.iter().flat_map(|u| u.to_be_bytes()));
        let mut r = Reader::new(&bytes);
        prop_assert_eq!(r.string(), Ok(Some(String::from_utf16_lossy(&units))));
        prop_assert_eq!(r.finish(), Ok(()));
    }
}

#[test]
fn strings_ascii_or_not_decode_whole() {
    for s in [
        "",
        "text/plain",
        "application/x-copyq-item-notes",
        "mcp/заметки",
        "a\u{7f}\u{80}é😀",
    ] {
        let bytes = qstring(s);
        let mut r = Reader::new(&bytes);
        assert_eq!(r.string(), Ok(Some(s.to_owned())), "{s}");
        assert_eq!(r.finish(), Ok(()));
    }
}

#[test]
fn lone_surrogates_decode_lossily() {
    let bytes = [0, 0, 0, 10, 0, 0, 0, 0, 2, 0xd8, 0x00];
    assert_eq!(decode_value(&bytes), Ok(Value::str("\u{fffd}")));
}
