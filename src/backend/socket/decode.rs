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
        // Most strings CopyQ sends are ASCII (every row's format names, tab names): each unit is
        // then its low byte, taken as it is. A whole-tab read decodes one a row and more, and the
        // general path (UTF-16 a character at a time, through a buffer of units) cost ten times as
        // much.
        // Bytes, not characters, collected: a string grown a character at a time was a fifth of
        // a tree's instructions.
        if raw.chunks_exact(2).all(|c| c[0] == 0 && c[1] < 0x80) {
            let ascii: Vec<u8> = raw.chunks_exact(2).map(|c| c[1]).collect();
            // ASCII is UTF-8: the conversion cannot fail.
            return Ok(Some(String::from_utf8(ascii).unwrap_or_default()));
        }
        let units = raw
            .chunks_exact(2)
            .map(|c| u16::from_be_bytes([c[0], c[1]]));
        // Room for the common case (two-byte UTF-8 for a unit: Cyrillic, Greek, accents).
        let mut text = String::with_capacity(raw.len());
        text.extend(char::decode_utf16(units).map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER)));
        Ok(Some(text))
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
#[cfg(test)]
pub fn decode_value(bytes: &[u8]) -> Result<Value, DecodeError> {
    decode_value_in(bytes, Dialect::default())
}

/// Decode exactly one `QVariant` filling `bytes`, written in `dialect` (the client decodes
/// values inside messages; tests decode them alone).
#[cfg(test)]
pub fn decode_value_in(bytes: &[u8], dialect: Dialect) -> Result<Value, DecodeError> {
    let mut r = Reader::in_dialect(bytes, dialect);
    let value = r.variant(0)?;
    r.finish()?;
    Ok(value)
}

#[cfg(test)]
#[path = "decode_tests.rs"]
mod tests;
