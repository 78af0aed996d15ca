//! The values that cross CopyQ's socket: the subset of Qt's `QVariant` its RPC slots use, the
//! [`Dialect`] a server writes them in (Qt 5 or Qt 6 builds, CopyQ before or from 14.0), and an RPC
//! call (a slot signature plus arguments).

use std::borrow::Cow;

/// A `QVariantMap` in wire order. Qt 5 writes maps in descending key order, Qt 6 in ascending: the
/// order does not matter to CopyQ, nor here (look keys up, never rely on positions), but keeping it
/// makes encoding exact and byte-comparable.
pub type Map = Vec<(String, Value)>;

/// Qt 5 `QMetaType` ids, as written in front of every `QVariant`.
pub mod type_id {
    pub const INVALID: u32 = 0;
    pub const BOOL: u32 = 1;
    pub const INT: u32 = 2;
    pub const UINT: u32 = 3;
    pub const LONG_LONG: u32 = 4;
    pub const ULONG_LONG: u32 = 5;
    pub const DOUBLE: u32 = 6;
    pub const MAP: u32 = 8;
    pub const LIST: u32 = 9;
    pub const STRING: u32 = 10;
    pub const STRING_LIST: u32 = 11;
    pub const BYTE_ARRAY: u32 = 12;
    /// A `QVariant` inside the `QVariant`: what a slot declared to return `QVariant` sends.
    pub const VARIANT: u32 = 41;
    pub const REGULAR_EXPRESSION: u32 = 44;
    /// `QMetaType::User` in a Qt 5 stream: the type's name follows.
    pub const USER: u32 = 1024;
    /// `QMetaType::User` in a Qt 6 stream.
    pub const USER_QT6: u32 = 65536;
}

pub use super::dialect::{Dialect, Qt};

/// Registered names of the user types CopyQ passes.
pub mod type_name {
    /// A row list on Qt 5 builds.
    pub const INT_VECTOR: &str = "QVector<int>";
    /// The same on Qt 6 builds (where `QVector` is an alias of `QList`).
    pub const INT_LIST: &str = "QList<int>";
    pub const MAP_VECTOR: &str = "QVector<QVariantMap>";
    /// CopyQ 7.1 wraps `QVector<QVariantMap>` in this type (same layout).
    pub const VARIANT_MAP_LIST: &str = "VariantMapList";
    /// CopyQ 8.0+: an item format kept in a file (over `item_data_threshold` bytes), sent as its path.
    pub const DATA_FILE: &str = "DataFile";
}

/// `QRegularExpression::CaseInsensitiveOption`.
pub const REGEX_CASE_INSENSITIVE: u32 = 1;

/// Which registered name a list of maps travels under: it is part of the slot signature too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapListType {
    /// `QVector<QVariantMap>`: CopyQ up to 7.0.
    QVector,
    /// `VariantMapList`: CopyQ 7.1 and later.
    VariantMapList,
}

impl MapListType {
    pub fn type_name(self) -> &'static str {
        match self {
            Self::QVector => type_name::MAP_VECTOR,
            Self::VariantMapList => type_name::VARIANT_MAP_LIST,
        }
    }
}

/// One `QVariant`. `None` in `String` and `Bytes` is Qt's null string / null byte array (length
/// `0xFFFFFFFF`), which CopyQ uses to mean "no error" in several replies.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// An invalid variant: what a `void` slot returns; in `browserChange` it removes a format.
    Invalid,
    Bool(bool),
    Int(i32),
    UInt(u32),
    LongLong(i64),
    ULongLong(u64),
    Double(f64),
    Map(Map),
    List(Vec<Value>),
    String(Option<String>),
    /// A `QStringList`; a null string inside it reads as empty.
    StringList(Vec<String>),
    Bytes(Option<Vec<u8>>),
    Regex {
        pattern: String,
        options: u32,
    },
    /// User type `QVector<int>`.
    IntVector(Vec<i32>),
    /// User type `QVector<QVariantMap>` or `VariantMapList`.
    MapList(MapListType, Vec<Map>),
    /// User type `DataFile`: an item format CopyQ keeps in this file. Its content is read with
    /// `browserItemData(QString,int,QString)`. An encryption key sent with it is dropped unread.
    DataFile(String),
}

impl Value {
    /// A non-null `QString`.
    pub fn str(s: impl Into<String>) -> Self {
        Self::String(Some(s.into()))
    }

    /// A non-null `QByteArray`.
    pub fn bytes(b: impl Into<Vec<u8>>) -> Self {
        Self::Bytes(Some(b.into()))
    }

    /// A `QRegularExpression`, optionally case-insensitive.
    pub fn regex(pattern: impl Into<String>, case_insensitive: bool) -> Self {
        let options = if case_insensitive {
            REGEX_CASE_INSENSITIVE
        } else {
            0
        };
        Self::Regex {
            pattern: pattern.into(),
            options,
        }
    }

    pub fn as_int(&self) -> Option<i32> {
        match self {
            Self::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// The string, when this is a non-null `QString`.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::String(Some(s)) => Some(s),
            _ => None,
        }
    }

    pub fn as_map(&self) -> Option<&Map> {
        match self {
            Self::Map(m) => Some(m),
            _ => None,
        }
    }

    /// Text of an item format: CopyQ hands formats back as `QByteArray` (UTF-8) or `QString`,
    /// depending on how they were stored.
    pub fn to_text(&self) -> Option<String> {
        match self {
            Self::String(s) => Some(s.clone().unwrap_or_default()),
            Self::Bytes(b) => {
                Some(String::from_utf8_lossy(b.as_deref().unwrap_or_default()).into())
            }
            _ => None,
        }
    }

    /// [`Value::to_text`] by value: a string, or bytes holding valid UTF-8, is moved, not copied.
    pub fn into_text(self) -> Option<String> {
        match self {
            Self::String(s) => Some(s.unwrap_or_default()),
            Self::Bytes(b) => {
                let b = b.unwrap_or_default();
                Some(
                    String::from_utf8(b)
                        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
                )
            }
            _ => None,
        }
    }

    /// Whether this is an invalid variant or a null string/byte array: "nothing", as CopyQ's
    /// `QString` error replies say "no error".
    pub fn is_null(&self) -> bool {
        matches!(self, Self::Invalid | Self::String(None) | Self::Bytes(None))
    }

    /// A short name of the variant's type, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Invalid => "invalid",
            Self::Bool(_) => "bool",
            Self::Int(_) => "int",
            Self::UInt(_) => "uint",
            Self::LongLong(_) => "qlonglong",
            Self::ULongLong(_) => "qulonglong",
            Self::Double(_) => "double",
            Self::Map(_) => "QVariantMap",
            Self::List(_) => "QVariantList",
            Self::String(_) => "QString",
            Self::StringList(_) => "QStringList",
            Self::Bytes(_) => "QByteArray",
            Self::Regex { .. } => "QRegularExpression",
            Self::IntVector(_) => "QVector<int>",
            Self::MapList(t, _) => t.type_name(),
            Self::DataFile(_) => type_name::DATA_FILE,
        }
    }
}

/// The value of `key` in `map`, if present.
pub fn map_get<'a>(map: &'a Map, key: &str) -> Option<&'a Value> {
    map.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// One call of a server slot, e.g. `browserLength(QString)` with one `QString` argument. The
/// signature is Qt's normalized form (no spaces, no `const &`); CopyQ rejects one it does not know.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// Borrowed for the fixed signatures (a tree makes a call an item: no string each).
    pub signature: Cow<'static, str>,
    pub args: Vec<Value>,
}

impl Call {
    pub fn new(signature: impl Into<Cow<'static, str>>, args: Vec<Value>) -> Self {
        Self {
            signature: signature.into(),
            args,
        }
    }
}

#[cfg(test)]
pub(crate) mod strategy {
    //! Arbitrary values for property tests.
    use super::*;
    use proptest::prelude::*;

    fn arb_map(inner: impl Strategy<Value = Value> + Clone) -> impl Strategy<Value = Map> {
        prop::collection::vec((".{0,6}", inner), 0..4)
    }

    pub fn arb_dialect() -> impl Strategy<Value = Dialect> {
        (any::<bool>(), any::<bool>()).prop_map(|(qt6, data_file_key)| Dialect {
            qt: if qt6 { Qt::V6 } else { Qt::V5 },
            data_file_key,
        })
    }

    pub fn arb_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Invalid),
            any::<bool>().prop_map(Value::Bool),
            any::<i32>().prop_map(Value::Int),
            any::<u32>().prop_map(Value::UInt),
            any::<i64>().prop_map(Value::LongLong),
            any::<u64>().prop_map(Value::ULongLong),
            any::<f64>()
                .prop_filter("NaN is not equal to itself", |d| !d.is_nan())
                .prop_map(Value::Double),
            proptest::option::of(".{0,12}").prop_map(Value::String),
            prop::collection::vec(".{0,6}", 0..4).prop_map(Value::StringList),
            proptest::option::of(prop::collection::vec(any::<u8>(), 0..16)).prop_map(Value::Bytes),
            (".{0,8}", any::<u32>())
                .prop_map(|(pattern, options)| Value::Regex { pattern, options }),
            prop::collection::vec(any::<i32>(), 0..6).prop_map(Value::IntVector),
            "/.{0,12}".prop_map(Value::DataFile),
        ];
        leaf.prop_recursive(4, 48, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::List),
                arb_map(inner.clone()).prop_map(Value::Map),
                (
                    prop_oneof![
                        Just(MapListType::QVector),
                        Just(MapListType::VariantMapList)
                    ],
                    prop::collection::vec(arb_map(inner), 0..3)
                )
                    .prop_map(|(t, maps)| Value::MapList(t, maps)),
            ]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn item_formats_read_as_text_whatever_their_type() {
        assert_eq!(Value::bytes("héllo").to_text().as_deref(), Some("héllo"));
        assert_eq!(Value::str("héllo").to_text().as_deref(), Some("héllo"));
        assert_eq!(Value::Bytes(None).to_text().as_deref(), Some(""));
        assert_eq!(Value::Int(1).to_text(), None);
    }

    #[test]
    fn null_means_no_error() {
        assert!(Value::String(None).is_null());
        assert!(Value::Invalid.is_null());
        assert!(!Value::str("").is_null());
    }

    #[test]
    fn map_lookup_and_regex_options() {
        let m: Map = vec![("a".into(), Value::Int(1))];
        assert_eq!(map_get(&m, "a"), Some(&Value::Int(1)));
        assert_eq!(map_get(&m, "b"), None);
        assert_eq!(
            Value::regex("x", true),
            Value::Regex {
                pattern: "x".into(),
                options: REGEX_CASE_INSENSITIVE
            }
        );
        assert_eq!(
            Value::MapList(MapListType::VariantMapList, vec![]).kind(),
            "VariantMapList"
        );
    }
}
