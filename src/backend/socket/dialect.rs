//! The bytes that differ between CopyQ builds talking the same protocol: which Qt wrote them (user
//! type id, type names) and how a `DataFile` is laid out. Found per connection by [`super::probe`].

use super::value::{type_id, type_name};

/// Which Qt a server was built with: it decides the user type id and some type names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Qt {
    /// Qt 5 (CopyQ up to 14): user types are id 1024, row lists `QVector<int>`.
    #[default]
    V5,
    /// Qt 6: user types are id 65536, row lists `QList<int>`.
    V6,
}

impl Qt {
    /// The `QMetaType::User` id this Qt writes, and accepts, in front of a user type.
    pub fn user_type_id(self) -> u32 {
        match self {
            Self::V5 => type_id::USER,
            Self::V6 => type_id::USER_QT6,
        }
    }

    /// The Qt whose user type id is `id`, if any.
    pub fn of_user_type_id(id: u32) -> Option<Self> {
        match id {
            type_id::USER => Some(Self::V5),
            type_id::USER_QT6 => Some(Self::V6),
            _ => None,
        }
    }

    /// The name of a row list, in values and in slot signatures.
    pub fn int_list(self) -> &'static str {
        match self {
            Self::V5 => type_name::INT_VECTOR,
            Self::V6 => type_name::INT_LIST,
        }
    }
}

/// How one server writes the values whose bytes differ between CopyQ builds; found per connection
/// (see [`super::probe`]). Decoding accepts both user type ids whatever `qt` says; encoding uses
/// `qt`'s, since CopyQ 15+ refuses the Qt 5 id.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Dialect {
    pub qt: Qt,
    /// CopyQ 14.0+ writes a `DataFile` as path, `bool` has-key and, if set, the tab's data
    /// encryption key (a `QByteArray`); before 14.0 as the path alone.
    pub data_file_key: bool,
}
