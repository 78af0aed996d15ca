//! `QDataStream` decoding (big-endian; Qt 5 and Qt 6 builds alike) of what CopyQ sends. Hostile input never panics
//! and never makes it allocate more than a small multiple of the bytes actually received: every
//! declared length and count is checked against the bytes left before anything is reserved.

use thiserror::Error;

use super::MAX_DEPTH;
use super::value::{Dialect, Map, MapListType, Qt, Value, type_id, type_name};

/// Bytes from CopyQ that do not parse as the layout this client knows.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DecodeError {
    /// A length or count asks for more bytes than the message holds.
    #[error("message truncated: {needed} more bytes declared, {remaining} left")]
    Truncated { needed: u64, remaining: usize },
    /// A frame longer than the configured limit (checked before reading it).
    #[error("frame of {len} bytes exceeds the limit of {max}")]
    FrameTooLarge { len: u64, max: usize },
    /// A frame shorter than its 4-byte message code.
    #[error("frame of {0} bytes has no message code")]
    FrameTooShort(u32),
    #[error("bad frame magic number {0:#010x}")]
    BadMagic(u32),
    #[error("unsupported frame or call version {0}")]
    BadVersion(u32),
    #[error("values nested deeper than {MAX_DEPTH} levels")]
    TooDeep,
    /// A `QVariant` type this client does not decode.
    #[error("unsupported QVariant type id {0}")]
    UnknownType(u32),
    #[error("unsupported QVariant user type {0:?}")]
    UnknownUserType(String),
    #[error("QString with an odd byte length {0}")]
    OddStringLength(u32),
    /// Bytes left after the value: the layout is not the one expected.
    #[error("{0} unexpected bytes after the value")]
    TrailingBytes(usize),
}

/// Smallest encodings, to reject a declared count before allocating for it.
const MIN_VARIANT: usize = 5;
const MIN_STRING: usize = 4;
const MIN_MAP_ENTRY: usize = MIN_STRING + MIN_VARIANT;

/// A cursor over received bytes.
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    dialect: Dialect,
    /// The Qt whose user type id the bytes used first, if any user type was read.
    seen: Option<Qt>,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Self::in_dialect(bytes, Dialect::default())
    }

    pub(crate) fn in_dialect(bytes: &'a [u8], dialect: Dialect) -> Self {
        Self {
            bytes,
            dialect,
            seen: None,
        }
    }

    /// Which Qt wrote the user types read so far (`None` if there were none).
    pub(crate) fn seen_qt(&self) -> Option<Qt> {
        self.seen
    }

    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len()
    }

    /// Fail with [`DecodeError::TrailingBytes`] unless everything was read.
    pub(crate) fn finish(&self) -> Result<(), DecodeError> {
        match self.bytes.len() {
            0 => Ok(()),
            n => Err(DecodeError::TrailingBytes(n)),
        }
    }

    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if n > self.bytes.len() {
            return Err(DecodeError::Truncated {
                needed: n as u64,
                remaining: self.bytes.len(),
            });
        }
        let (head, tail) = self.bytes.split_at(n);
        self.bytes = tail;
        Ok(head)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    pub(crate) fn u32(&mut self) -> Result<u32, DecodeError> {
        self.array().map(u32::from_be_bytes)
    }

    pub(crate) fn i32(&mut self) -> Result<i32, DecodeError> {
        self.array().map(i32::from_be_bytes)
    }

    /// A count of elements each at least `min_size` bytes long, checked against what is left.
    fn count(&mut self, min_size: usize) -> Result<usize, DecodeError> {
        let n = self.u32()?;
        let needed = u64::from(n) * min_size as u64;
        if needed > self.bytes.len() as u64 {
            return Err(DecodeError::Truncated {
                needed,
                remaining: self.bytes.len(),
            });
        }
        Ok(n as usize)
    }

    /// `QByteArray`; `None` for null.
    pub(crate) fn bytes(&mut self) -> Result<Option<&'a [u8]>, DecodeError> {
        match self.u32()? {
            u32::MAX => Ok(None),
            n => self.take(n as usize).map(Some),
        }
    }

    /// `QString`; `None` for null. Unpaired surrogates become U+FFFD rather than failing the reply.
    pub(crate) fn string(&mut self) -> Result<Option<String>, DecodeError> {
        let n = match self.u32()? {
            u32::MAX => return Ok(None),
            n if n % 2 == 1 => return Err(DecodeError::OddStringLength(n)),
            n => n,
        };
        let raw = self.take(n as usize)?;
        let units: Vec<u16> = raw
            .chunks_exact(2)
            .map(|c| u16::from_be_bytes([c[0], c[1]]))
            .collect();
        Ok(Some(String::from_utf16_lossy(&units)))
    }

    fn map(&mut self, depth: usize) -> Result<Map, DecodeError> {
        let n = self.count(MIN_MAP_ENTRY)?;
        let mut map = Vec::with_capacity(n);
        for _ in 0..n {
            let key = self.string()?.unwrap_or_default();
            map.push((key, self.variant(depth + 1)?));
        }
        Ok(map)
    }

    /// One `QVariant` at nesting level `depth`.
    pub(crate) fn variant(&mut self, depth: usize) -> Result<Value, DecodeError> {
        if depth > MAX_DEPTH {
            return Err(DecodeError::TooDeep);
        }
        let id = self.u32()?;
        self.take(1)?; // Qt's is-null flag: the value that follows says all we need.
        Ok(match id {
            type_id::INVALID => Value::Invalid,
            type_id::BOOL => Value::Bool(self.take(1)?[0] != 0),
            type_id::INT => Value::Int(self.i32()?),
            type_id::UINT => Value::UInt(self.u32()?),
            type_id::LONG_LONG => Value::LongLong(i64::from_be_bytes(self.array()?)),
            type_id::ULONG_LONG => Value::ULongLong(u64::from_be_bytes(self.array()?)),
            type_id::DOUBLE => Value::Double(f64::from_be_bytes(self.array()?)),
            type_id::MAP => Value::Map(self.map(depth)?),
            type_id::LIST => {
                let n = self.count(MIN_VARIANT)?;
                let mut items = Vec::with_capacity(n);
                for _ in 0..n {
                    items.push(self.variant(depth + 1)?);
                }
                Value::List(items)
            }
            type_id::STRING => Value::String(self.string()?),
            type_id::STRING_LIST => {
                let n = self.count(MIN_STRING)?;
                let mut list = Vec::with_capacity(n);
                for _ in 0..n {
                    list.push(self.string()?.unwrap_or_default());
                }
                Value::StringList(list)
            }
            type_id::BYTE_ARRAY => Value::Bytes(self.bytes()?.map(<[u8]>::to_vec)),
            type_id::REGULAR_EXPRESSION => Value::Regex {
                pattern: self.string()?.unwrap_or_default(),
                options: self.u32()?,
            },
            // Unwrapped: the value inside is what the slot returned.
            type_id::VARIANT => self.variant(depth + 1)?,
            other => match Qt::of_user_type_id(other) {
                Some(qt) => {
                    self.seen.get_or_insert(qt);
                    self.user_type(depth)?
                }
                None => return Err(DecodeError::UnknownType(other)),
            },
        })
    }

    fn user_type(&mut self, depth: usize) -> Result<Value, DecodeError> {
        let raw = self.bytes()?.unwrap_or_default();
        let name = raw.strip_suffix(b"\0").unwrap_or(raw);
        let kind = match name {
            n if n == type_name::INT_VECTOR.as_bytes() || n == type_name::INT_LIST.as_bytes() => {
                let n = self.count(4)?;
                let mut v = Vec::with_capacity(n);
                for _ in 0..n {
                    v.push(self.i32()?);
                }
                return Ok(Value::IntVector(v));
            }
            n if n == type_name::MAP_VECTOR.as_bytes() => MapListType::QVector,
            n if n == type_name::VARIANT_MAP_LIST.as_bytes() => MapListType::VariantMapList,
            n if n == type_name::DATA_FILE.as_bytes() => return self.data_file(),
            other => {
                let shown = String::from_utf8_lossy(&other[..other.len().min(64)]);
                return Err(DecodeError::UnknownUserType(shown.into()));
            }
        };
        let n = self.count(MIN_STRING)?;
        let mut maps = Vec::with_capacity(n);
        for _ in 0..n {
            maps.push(self.map(depth + 1)?);
        }
        Ok(Value::MapList(kind, maps))
    }

    /// A `DataFile`'s path; from CopyQ 14.0 a has-key flag follows, and the tab's data encryption
    /// key if set. The key is skipped, never kept: the gateway reads contents through CopyQ.
    fn data_file(&mut self) -> Result<Value, DecodeError> {
        let path = self.string()?.unwrap_or_default();
        if self.dialect.data_file_key && self.take(1)?[0] != 0 {
            self.bytes()?;
        }
        Ok(Value::DataFile(path))
    }
}

/// Decode exactly one Qt 5 `QVariant` filling `bytes`.
pub fn decode_value(bytes: &[u8]) -> Result<Value, DecodeError> {
    decode_value_in(bytes, Dialect::default())
}

/// Decode exactly one `QVariant` filling `bytes`, written in `dialect`.
pub fn decode_value_in(bytes: &[u8], dialect: Dialect) -> Result<Value, DecodeError> {
    let mut r = Reader::in_dialect(bytes, dialect);
    let value = r.variant(0)?;
    r.finish()?;
    Ok(value)
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn lone_surrogates_decode_lossily() {
        let bytes = [0, 0, 0, 10, 0, 0, 0, 0, 2, 0xd8, 0x00];
        assert_eq!(decode_value(&bytes), Ok(Value::str("\u{fffd}")));
    }
}
