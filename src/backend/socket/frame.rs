//! Frames and messages: `u32 magic | u32 version | u32 len | i32 code | payload`, the call payload
//! the client sends (code 8) and the messages the server sends back (9 reply, 10 stop, ...).

use super::decode::{DecodeError, Reader};
use super::encode::{EncodeError, encode_value_in, put_bytes, put_i32, put_len, put_u32, wire_len};
use super::value::{Call, Dialect, Qt, Value};

pub const FRAME_MAGIC: u32 = 0x0C09_0701;
pub const FRAME_VERSION: u32 = 1;
pub const CALL_MAGIC: u32 = 0x5874_6908;
pub const CALL_VERSION: u32 = 2;
/// Bytes before a frame's message code: magic, version, length.
pub const HEADER_LEN: usize = 12;

/// Message codes (CopyQ's `CommandStatus`).
pub mod code {
    pub const FUNCTION_CALL: i32 = 8;
    pub const FUNCTION_CALL_RETURN_VALUE: i32 = 9;
    pub const STOP: i32 = 10;
    // 11 (input dialog finished) and 12 (data) are not used by this client: `Message::Other`.
}

/// The length of the message (code + payload) announced by a frame header, checked against
/// `max_len` before a single byte of the message is read.
pub fn parse_header(header: &[u8; HEADER_LEN], max_len: usize) -> Result<usize, DecodeError> {
    let mut r = Reader::new(header);
    let magic = r.u32()?;
    if magic != FRAME_MAGIC {
        return Err(DecodeError::BadMagic(magic));
    }
    let version = r.u32()?;
    if version != FRAME_VERSION {
        return Err(DecodeError::BadVersion(version));
    }
    let len = r.u32()?;
    if len < 4 {
        return Err(DecodeError::FrameTooShort(len));
    }
    if len as usize > max_len {
        return Err(DecodeError::FrameTooLarge {
            len: u64::from(len),
            max: max_len,
        });
    }
    Ok(len as usize)
}

/// A whole frame carrying `code` and `payload`.
pub fn encode_frame(code: i32, payload: &[u8]) -> Result<Vec<u8>, EncodeError> {
    frame_of(code, payload.len(), |out| {
        out.extend_from_slice(payload);
        Ok(())
    })
}

/// A whole frame carrying `code` and the payload `put` writes, in one buffer (room for `payload`
/// bytes made first): the header, then the payload, then the header's length (of the code and the
/// payload).
fn frame_of(
    code: i32,
    payload: usize,
    put: impl FnOnce(&mut Vec<u8>) -> Result<(), EncodeError>,
) -> Result<Vec<u8>, EncodeError> {
    let mut out = Vec::with_capacity(HEADER_LEN.saturating_add(4).saturating_add(payload));
    put_u32(&mut out, FRAME_MAGIC);
    put_u32(&mut out, FRAME_VERSION);
    put_u32(&mut out, 0);
    put_i32(&mut out, code);
    put(&mut out)?;
    let len = wire_len(out.len() - HEADER_LEN)?;
    out[HEADER_LEN - 4..HEADER_LEN].copy_from_slice(&len.to_be_bytes());
    Ok(out)
}

/// The payload of a call, arguments in `dialect`, appended to `out`: `u32 magic | u32 version |
/// i32 id | QByteArray signature | u32 argc | argc x QVariant` (the tail is Qt's
/// `QVector<QVariant>`).
fn put_call_payload(
    out: &mut Vec<u8>,
    id: i32,
    call: &Call,
    dialect: Dialect,
) -> Result<(), EncodeError> {
    put_u32(out, CALL_MAGIC);
    put_u32(out, CALL_VERSION);
    put_i32(out, id);
    put_bytes(out, Some(call.signature.as_bytes()))?;
    put_len(out, call.args.len())?;
    for arg in &call.args {
        encode_value_in(out, arg, dialect)?;
    }
    Ok(())
}

/// A whole frame calling `call` with call id `id`, Qt 5 user types.
#[cfg(test)]
pub fn encode_call(id: i32, call: &Call) -> Result<Vec<u8>, EncodeError> {
    encode_call_in(id, call, Dialect::default())
}

/// A whole frame calling `call` in `dialect`. Always message code 8: servers from 14.0 also take
/// 14 (a priority call), older ones drop it.
/// Written in one buffer, its length set last: a tree of 10 tabs encodes a call an item, and a
/// payload of its own, grown from empty, then copied, was a seventh of the tree's work.
pub fn encode_call_in(id: i32, call: &Call, dialect: Dialect) -> Result<Vec<u8>, EncodeError> {
    // Room for a call with a tab name and a row or two, the most a read makes.
    const ROOM: usize = 244;
    frame_of(code::FUNCTION_CALL, ROOM, |out| {
        put_call_payload(out, id, call, dialect)
    })
}

/// Where the call id sits in a frame from [`encode_call_in`]: after the frame header, the message
/// code, and the call's magic and version.
const CALL_ID_AT: usize = HEADER_LEN + 12;

/// Set the call id of a frame made by [`encode_call_in`] (encoded before its id was known).
pub(crate) fn set_call_id(frame: &mut [u8], id: i32) {
    if let Some(slot) = frame.get_mut(CALL_ID_AT..CALL_ID_AT + 4) {
        slot.copy_from_slice(&id.to_be_bytes());
    }
}

/// What the server said in one frame.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// The result of call `id`; an `Err` when only the value failed to parse.
    Reply {
        id: i32,
        value: Result<Value, DecodeError>,
    },
    /// A reply with an empty payload: the server could not run a call (unknown slot signature,
    /// wrong argument types, unreadable call) and says so without saying which call.
    Rejected,
    /// The server is exiting; it waits (up to 10 s) for clients to disconnect.
    Stop,
    /// Anything else (input dialog results, action data): not used by this client.
    Other { code: i32 },
}

/// Decode the message (code + payload) of one frame from a Qt 5 server before CopyQ 14.
#[cfg(test)]
pub fn decode_message(message: &[u8]) -> Result<Message, DecodeError> {
    decode_message_in(message, Dialect::default()).map(|(m, _)| m)
}

/// Decode one frame's message written in `dialect`, and say which Qt's user type id it used, if
/// it held a user type: the id the server takes in calls.
pub fn decode_message_in(
    message: &[u8],
    dialect: Dialect,
) -> Result<(Message, Option<Qt>), DecodeError> {
    let mut r = Reader::in_dialect(message, dialect);
    let code = r.i32()?;
    let message = match code {
        code::FUNCTION_CALL_RETURN_VALUE if r.remaining() == 0 => Message::Rejected,
        code::FUNCTION_CALL_RETURN_VALUE => {
            let id = r.i32()?;
            let value = r.variant(0).and_then(|v| r.finish().map(|()| v));
            Message::Reply { id, value }
        }
        code::STOP => Message::Stop,
        code => Message::Other { code },
    };
    Ok((message, r.seen_qt()))
}

/// Decode a call payload, the way the server does: for tests and test doubles.
pub fn decode_call_payload(payload: &[u8]) -> Result<(i32, Call), DecodeError> {
    let mut r = Reader::new(payload);
    let magic = r.u32()?;
    if magic != CALL_MAGIC {
        return Err(DecodeError::BadMagic(magic));
    }
    let version = r.u32()?;
    if version != CALL_VERSION {
        return Err(DecodeError::BadVersion(version));
    }
    let id = r.i32()?;
    let signature = String::from_utf8_lossy(r.bytes()?.unwrap_or_default()).into_owned();
    let argc = r.u32()?;
    let mut args = Vec::new();
    for _ in 0..argc {
        args.push(r.variant(0)?);
    }
    r.finish()?;
    Ok((
        id,
        Call {
            signature: signature.into(),
            args,
        },
    ))
}

/// Split one complete frame off the front of `buf`: `Ok(None)` until enough bytes are there (the
/// test doubles' server side; the client reads a header, then the message it announces).
pub fn split_frame(buf: &[u8], max_len: usize) -> Result<Option<(&[u8], usize)>, DecodeError> {
    let Some(header) = buf.first_chunk::<HEADER_LEN>() else {
        return Ok(None);
    };
    let len = parse_header(header, max_len)?;
    Ok(buf
        .get(HEADER_LEN..HEADER_LEN + len)
        .map(|message| (message, HEADER_LEN + len)))
}

#[cfg(test)]
mod tests {
    use super::super::MAX_FRAME_LEN;
    use super::super::value::strategy::arb_value;
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn calls_round_trip(id in any::<i32>(), sig in "[a-zA-Z(),<>]{1,30}",
                            args in prop::collection::vec(arb_value(), 0..4)) {
            let call = Call::new(sig, args);
            let frame = encode_call(id, &call).expect("encodable");
            let (message, used) = split_frame(&frame, MAX_FRAME_LEN).expect("valid").expect("whole");
            prop_assert_eq!(used, frame.len());
            prop_assert_eq!(&message[..4], &code::FUNCTION_CALL.to_be_bytes());
            prop_assert_eq!(decode_call_payload(&message[4..]), Ok((id, call)));
        }

        #[test]
        fn arbitrary_frames_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..128)) {
            if let Ok(Some((message, _))) = split_frame(&bytes, 64) {
                let _ = decode_message(message);
            }
            let _ = decode_message(&bytes);
            let _ = decode_call_payload(&bytes);
        }
    }

    #[test]
    fn oversized_and_malformed_headers_are_rejected_from_the_header_alone() {
        let mut header = encode_frame(9, &[]).expect("frame");
        header[8..12].copy_from_slice(&u32::MAX.to_be_bytes());
        assert_eq!(
            split_frame(&header, MAX_FRAME_LEN),
            Err(DecodeError::FrameTooLarge {
                len: u64::from(u32::MAX),
                max: MAX_FRAME_LEN
            })
        );
        header[8..12].copy_from_slice(&2u32.to_be_bytes());
        assert_eq!(split_frame(&header, 64), Err(DecodeError::FrameTooShort(2)));
        header[0] = 0;
        assert!(matches!(
            split_frame(&header, 64),
            Err(DecodeError::BadMagic(_))
        ));
        assert_eq!(split_frame(&header[..11], 64), Ok(None));
    }

    #[test]
    fn call_ids_are_set_in_place() {
        let call = Call::new("tabs()", vec![]);
        let mut frame = encode_call(0, &call).expect("frame");
        set_call_id(&mut frame, 0x0102_0304);
        assert_eq!(frame, encode_call(0x0102_0304, &call).expect("frame"));
    }

    #[test]
    fn server_messages() {
        let frame = |code: i32, payload: &[u8]| encode_frame(code, payload).expect("frame");
        let decode = |f: Vec<u8>| decode_message(&f[HEADER_LEN..]);
        assert_eq!(decode(frame(9, &[])), Ok(Message::Rejected));
        assert_eq!(decode(frame(10, &[])), Ok(Message::Stop));
        assert_eq!(decode(frame(12, b"xyz")), Ok(Message::Other { code: 12 }));
        let reply = [0, 0, 0, 7, 0, 0, 0, 2, 0, 0, 0, 0, 5];
        assert_eq!(
            decode(frame(9, &reply)),
            Ok(Message::Reply {
                id: 7,
                value: Ok(Value::Int(5))
            })
        );
        let unknown = [0, 0, 0, 7, 0, 0, 0, 99, 0];
        assert_eq!(
            decode(frame(9, &unknown)),
            Ok(Message::Reply {
                id: 7,
                value: Err(DecodeError::UnknownType(99))
            })
        );
    }
}
