//! `QDataStream` encoding (big-endian) of the values CopyQ's RPC uses, in a server's [`Dialect`].

use thiserror::Error;

use super::MAX_DEPTH;
use super::value::{Dialect, Map, MapListType, Value, type_id};

/// A value that cannot be put on the wire. Never caused by CopyQ: by what the caller asked to send.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum EncodeError {
    /// A string, byte array or list longer than a `u32` length can say (or the frame limit).
    #[error("value too large to send to CopyQ")]
    TooLarge,
    /// Containers nested deeper than [`MAX_DEPTH`].
    #[error("value nested deeper than {MAX_DEPTH} levels")]
    TooDeep,
}

/// A `u32` length; `0xFFFFFFFF` is reserved for "null".
pub(crate) fn put_len(out: &mut Vec<u8>, len: usize) -> Result<(), EncodeError> {
    out.extend_from_slice(&wire_len(len)?.to_be_bytes());
    Ok(())
}

/// `len` as a length on the wire: a `u32` that is not `u32::MAX` (which means a null array).
pub(crate) fn wire_len(len: usize) -> Result<u32, EncodeError> {
    u32::try_from(len)
        .ok()
        .filter(|&n| n != u32::MAX)
        .ok_or(EncodeError::TooLarge)
}

pub(crate) fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_be_bytes());
}

pub(crate) fn put_i32(out: &mut Vec<u8>, v: i32) {
    out.extend_from_slice(&v.to_be_bytes());
}

/// `QByteArray`: length + bytes, or `0xFFFFFFFF` for null.
pub(crate) fn put_bytes(out: &mut Vec<u8>, b: Option<&[u8]>) -> Result<(), EncodeError> {
    match b {
        None => put_u32(out, u32::MAX),
        Some(b) => {
            put_len(out, b.len())?;
            out.extend_from_slice(b);
        }
    }
    Ok(())
}

/// `QString`: byte length + UTF-16BE, or `0xFFFFFFFF` for null.
pub(crate) fn put_string(out: &mut Vec<u8>, s: Option<&str>) -> Result<(), EncodeError> {
    let Some(s) = s else {
        put_u32(out, u32::MAX);
        return Ok(());
    };
    let units = s.encode_utf16().count();
    put_len(out, units.checked_mul(2).ok_or(EncodeError::TooLarge)?)?;
    out.reserve(units * 2);
    for unit in s.encode_utf16() {
        out.extend_from_slice(&unit.to_be_bytes());
    }
    Ok(())
}

/// `QDataStream << const char *`: the length counts a trailing NUL, which is written too.
fn put_cstr(out: &mut Vec<u8>, s: &str) -> Result<(), EncodeError> {
    put_len(out, s.len() + 1)?;
    out.extend_from_slice(s.as_bytes());
    out.push(0);
    Ok(())
}

/// Encode `value` as a Qt 5 `QVariant`: type id, null flag (always 0, as Qt writes for a set
/// value), the user type's name if any, then the value.
#[cfg(test)]
pub fn encode_value(out: &mut Vec<u8>, value: &Value) -> Result<(), EncodeError> {
    encode_value_in(out, value, Dialect::default())
}

/// A `QVariant` in `dialect`: type id, null flag (always 0, as Qt writes for a set value), the
/// user type's name if any, then the value; user types get the dialect's Qt's id and names.
pub fn encode_value_in(
    out: &mut Vec<u8>,
    value: &Value,
    dialect: Dialect,
) -> Result<(), EncodeError> {
    Writer { out, dialect }.variant(value, 0)
}

fn put_header(out: &mut Vec<u8>, id: u32) {
    put_u32(out, id);
    out.push(0);
}

struct Writer<'a> {
    out: &'a mut Vec<u8>,
    dialect: Dialect,
}

impl Writer<'_> {
    fn map(&mut self, map: &Map, depth: usize) -> Result<(), EncodeError> {
        put_len(self.out, map.len())?;
        for (key, value) in map {
            put_string(self.out, Some(key))?;
            self.variant(value, depth + 1)?;
        }
        Ok(())
    }

    fn user_header(&mut self, name: &str) -> Result<(), EncodeError> {
        put_header(self.out, self.dialect.qt.user_type_id());
        put_cstr(self.out, name)
    }

    fn variant(&mut self, value: &Value, depth: usize) -> Result<(), EncodeError> {
        if depth > MAX_DEPTH {
            return Err(EncodeError::TooDeep);
        }
        match value {
            Value::Invalid => put_header(self.out, type_id::INVALID),
            Value::Bool(b) => self.fixed(type_id::BOOL, &[u8::from(*b)]),
            Value::Int(i) => self.fixed(type_id::INT, &i.to_be_bytes()),
            Value::UInt(u) => self.fixed(type_id::UINT, &u.to_be_bytes()),
            Value::LongLong(i) => self.fixed(type_id::LONG_LONG, &i.to_be_bytes()),
            Value::ULongLong(u) => self.fixed(type_id::ULONG_LONG, &u.to_be_bytes()),
            Value::Double(d) => self.fixed(type_id::DOUBLE, &d.to_be_bytes()),
            Value::Map(map) => {
                put_header(self.out, type_id::MAP);
                self.map(map, depth)?;
            }
            Value::List(items) => self.list(items, depth)?,
            Value::String(s) => {
                put_header(self.out, type_id::STRING);
                put_string(self.out, s.as_deref())?;
            }
            Value::StringList(list) => self.string_list(list)?,
            Value::Bytes(b) => {
                put_header(self.out, type_id::BYTE_ARRAY);
                put_bytes(self.out, b.as_deref())?;
            }
            Value::Regex { pattern, options } => {
                put_header(self.out, type_id::REGULAR_EXPRESSION);
                put_string(self.out, Some(pattern))?;
                put_u32(self.out, *options);
            }
            Value::IntVector(v) => self.int_vector(v)?,
            Value::MapList(kind, maps) => self.map_list(*kind, maps, depth)?,
            Value::DataFile(path) => self.data_file(path)?,
        }
        Ok(())
    }

    /// A number or a bool: the header, then its big-endian bytes.
    fn fixed(&mut self, id: u32, bytes: &[u8]) {
        put_header(self.out, id);
        self.out.extend_from_slice(bytes);
    }

    fn list(&mut self, items: &[Value], depth: usize) -> Result<(), EncodeError> {
        put_header(self.out, type_id::LIST);
        put_len(self.out, items.len())?;
        for item in items {
            self.variant(item, depth + 1)?;
        }
        Ok(())
    }

    fn string_list(&mut self, list: &[String]) -> Result<(), EncodeError> {
        put_header(self.out, type_id::STRING_LIST);
        put_len(self.out, list.len())?;
        for s in list {
            put_string(self.out, Some(s))?;
        }
        Ok(())
    }

    /// A row list: the user type `QVector<int>` (Qt 5) or `QList<int>` (Qt 6).
    fn int_vector(&mut self, v: &[i32]) -> Result<(), EncodeError> {
        self.user_header(self.dialect.qt.int_list())?;
        put_len(self.out, v.len())?;
        for i in v {
            put_i32(self.out, *i);
        }
        Ok(())
    }

    /// CopyQ's user type `DataFile`: the path of an item format kept in its own file.
    fn data_file(&mut self, path: &str) -> Result<(), EncodeError> {
        self.user_header(super::value::type_name::DATA_FILE)?;
        put_string(self.out, Some(path))?;
        if self.dialect.data_file_key {
            self.out.push(0); // no encryption key
        }
        Ok(())
    }

    fn map_list(
        &mut self,
        kind: MapListType,
        maps: &[Map],
        depth: usize,
    ) -> Result<(), EncodeError> {
        self.user_header(kind.type_name())?;
        put_len(self.out, maps.len())?;
        for map in maps {
            self.map(map, depth + 1)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(v: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        encode_value(&mut out, v).expect("encodable");
        out
    }

    #[test]
    fn scalars_match_qdatastream() {
        assert_eq!(
            enc(&Value::Int(-2)),
            [0, 0, 0, 2, 0, 0xff, 0xff, 0xff, 0xfe]
        );
        assert_eq!(enc(&Value::Bool(true)), [0, 0, 0, 1, 0, 1]);
        assert_eq!(enc(&Value::Invalid), [0, 0, 0, 0, 0]);
        assert_eq!(
            enc(&Value::String(None)),
            [0, 0, 0, 10, 0, 0xff, 0xff, 0xff, 0xff]
        );
    }

    #[test]
    fn strings_are_utf16_big_endian_with_byte_length() {
        // U+1F389 is a surrogate pair: 4 bytes.
        assert_eq!(
            enc(&Value::str("é🎉")),
            [
                0, 0, 0, 10, 0, 0, 0, 0, 6, 0x00, 0xe9, 0xd8, 0x3c, 0xdf, 0x89
            ]
        );
    }

    #[test]
    fn user_types_carry_their_nul_terminated_name() {
        let bytes = enc(&Value::IntVector(vec![7]));
        assert_eq!(&bytes[..9], [0, 0, 4, 0, 0, 0, 0, 0, 13]);
        assert_eq!(&bytes[9..22], b"QVector<int>\0");
        assert_eq!(&bytes[22..], [0, 0, 0, 1, 0, 0, 0, 7]);
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        let mut v = Value::Int(0);
        for _ in 0..=MAX_DEPTH + 1 {
            v = Value::List(vec![v]);
        }
        let mut out = Vec::new();
        assert_eq!(encode_value(&mut out, &v), Err(EncodeError::TooDeep));
    }
}
