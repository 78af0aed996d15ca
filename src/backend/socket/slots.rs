//! The server slots the gateway calls, as [`Call`] constructors, and checks of their replies.
//! Signatures are those of CopyQ 6.4 (`ScriptableProxy`); verified live in tests/gateway/socket_protocol.rs.
//!
//! Beware: every slot that takes a tab name (`browser*`, `createSelection`) **creates** the tab
//! when it is missing (CopyQ before 17.0), and an empty name means the first tab. Check [`tabs`]
//! before reading (or in the same batch, removing what it made: `SocketBackend::read_guessed`).

use super::SocketError;
use super::value::{Call, Map, MapListType, Qt, Value};

/// `tabs()` -> `QStringList` of every tab, in tab order.
pub fn tabs() -> Call {
    Call::new("tabs()", vec![])
}

/// `browserLength(QString)` -> `int` rows in the tab.
pub fn browser_length(tab: &str) -> Call {
    Call::new("browserLength(QString)", vec![Value::str(tab)])
}

/// `browserItemData(QString,int)` -> `QVariantMap` of all formats (`{}` past the end).
pub fn browser_item_data(tab: &str, row: i32) -> Call {
    Call::new(
        "browserItemData(QString,int)",
        vec![Value::str(tab), Value::Int(row)],
    )
}

/// `browserItemData(QString,int,QString)` -> `QByteArray` of one format.
pub fn browser_item_format(tab: &str, row: i32, mime: &str) -> Call {
    Call::new(
        "browserItemData(QString,int,QString)",
        vec![Value::str(tab), Value::Int(row), Value::str(mime)],
    )
}

fn map_list_signature(slot: &str, kind: MapListType) -> String {
    format!("{slot}(QString,int,{})", kind.type_name())
}

/// `browserInsert(QString,int,QVector<QVariantMap>)` -> `QString`: null on success, else the error
/// (`Invalid tab`, `Tab is full ...`). Each item is inserted at `row` in turn, so they end up in
/// reverse order. **Evicts silently**: to make room under `maxitems` it first drops bottom rows.
pub fn browser_insert(kind: MapListType, tab: &str, row: i32, items: Vec<Map>) -> Call {
    Call::new(
        map_list_signature("browserInsert", kind),
        vec![
            Value::str(tab),
            Value::Int(row),
            Value::MapList(kind, items),
        ],
    )
}

/// `browserChange(QString,int,QVector<QVariantMap>)` -> `QString` error or null: merges each map
/// into the item at `row`, `row + 1`, ...; an [`Value::Invalid`] value removes that format.
pub fn browser_change(kind: MapListType, tab: &str, row: i32, items: Vec<Map>) -> Call {
    Call::new(
        map_list_signature("browserChange", kind),
        vec![
            Value::str(tab),
            Value::Int(row),
            Value::MapList(kind, items),
        ],
    )
}

/// `browserRemoveRows(QString,QVector<int>)` (`QList<int>` on Qt 6: the old name still
/// dispatches there but is deprecated) -> `QString` error or null. Rows out of range are skipped
/// silently.
pub fn browser_remove_rows(qt: Qt, tab: &str, rows: Vec<i32>) -> Call {
    Call::new(
        format!("browserRemoveRows(QString,{})", qt.int_list()),
        vec![Value::str(tab), Value::IntVector(rows)],
    )
}

/// `removeTab(QString)` -> `QString`: null on success, else the error text.
pub fn remove_tab(tab: &str) -> Call {
    Call::new("removeTab(QString)", vec![Value::str(tab)])
}

/// `unloadTabs(QStringList)` -> `QStringList` of the tabs unloaded (saved and dropped from memory).
pub fn unload_tabs(tabs: &[&str]) -> Call {
    let names = tabs.iter().map(|t| t.to_string()).collect();
    Call::new("unloadTabs(QStringList)", vec![Value::StringList(names)])
}

/// `config(QVariantList)` with one option name -> `QVariantMap` `{name: value}` (a `QStringList`
/// of the unknown names instead, if any). Costly for CopyQ (it builds its settings dialog).
pub fn config(option: &str) -> Call {
    Call::new(
        "config(QVariantList)",
        vec![Value::List(vec![Value::str(option)])],
    )
}

/// `createSelection(QString)` -> `int` selection id (empty selection of the tab).
pub fn create_selection(tab: &str) -> Call {
    Call::new("createSelection(QString)", vec![Value::str(tab)])
}

/// `selectionSelect(int,QVariant,QString)` -> void: add rows whose `mime` format (text, when
/// empty) matches `re` (a [`Value::regex`]). Repeated selects give the union.
pub fn selection_select(id: i32, re: Value, mime: &str) -> Call {
    Call::new(
        "selectionSelect(int,QVariant,QString)",
        vec![Value::Int(id), re, Value::str(mime)],
    )
}

/// `selectionSelectAll(int)` -> void.
pub fn selection_select_all(id: i32) -> Call {
    Call::new("selectionSelectAll(int)", vec![Value::Int(id)])
}

/// `selectionGetRows(int)` -> `QVector<int>` of the selected rows, in selection order.
pub fn selection_get_rows(id: i32) -> Call {
    Call::new("selectionGetRows(int)", vec![Value::Int(id)])
}

/// `selectionGetItemsData(int)` -> `QVariantList` of `QVariantMap`, one per selected row.
pub fn selection_get_items_data(id: i32) -> Call {
    Call::new("selectionGetItemsData(int)", vec![Value::Int(id)])
}

/// `destroySelection(int)` -> void.
pub fn destroy_selection(id: i32) -> Call {
    Call::new("destroySelection(int)", vec![Value::Int(id)])
}

fn unexpected(call: &Call, got: &Value) -> SocketError {
    SocketError::UnexpectedReply {
        signature: call.signature.to_string(),
        got: got.kind(),
    }
}

/// The `int` a slot such as `browserLength` returns.
pub fn expect_int(call: &Call, reply: Value) -> Result<i32, SocketError> {
    reply.as_int().ok_or_else(|| unexpected(call, &reply))
}

/// The `QStringList` that `tabs()` returns.
pub fn expect_string_list(call: &Call, reply: Value) -> Result<Vec<String>, SocketError> {
    match reply {
        Value::StringList(list) => Ok(list),
        other => Err(unexpected(call, &other)),
    }
}

/// The `QVariantMap` of an item.
pub fn expect_map(call: &Call, reply: Value) -> Result<Map, SocketError> {
    match reply {
        Value::Map(map) => Ok(map),
        other => Err(unexpected(call, &other)),
    }
}

/// A `QString` error reply: `Ok(None)` for null ("no error"), `Ok(Some(text))` for an error.
pub fn expect_error_text(call: &Call, reply: Value) -> Result<Option<String>, SocketError> {
    match reply {
        Value::String(s) => Ok(s.filter(|s| !s.is_empty())),
        other => Err(unexpected(call, &other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_follow_the_map_list_name() {
        let v6 = browser_insert(MapListType::QVector, "t", 0, vec![]);
        assert_eq!(
            v6.signature,
            "browserInsert(QString,int,QVector<QVariantMap>)"
        );
        let v71 = browser_change(MapListType::VariantMapList, "t", 0, vec![]);
        assert_eq!(v71.signature, "browserChange(QString,int,VariantMapList)");
        assert_eq!(
            browser_remove_rows(Qt::V5, "t", vec![]).signature,
            "browserRemoveRows(QString,QVector<int>)"
        );
        assert_eq!(
            browser_remove_rows(Qt::V6, "t", vec![]).signature,
            "browserRemoveRows(QString,QList<int>)"
        );
    }

    #[test]
    fn replies_are_checked() {
        let call = tabs();
        assert!(expect_string_list(&call, Value::StringList(vec![])).is_ok());
        let err = expect_int(&call, Value::str("x")).expect_err("not an int");
        assert_eq!(err.to_string(), "unexpected reply to tabs(): QString");
        let rm = remove_tab("t");
        assert_eq!(expect_error_text(&rm, Value::String(None)).ok(), Some(None));
        assert_eq!(
            expect_error_text(&rm, Value::str("Tab not found")).ok(),
            Some(Some("Tab not found".into()))
        );
    }
}
