//! Which socket layout a server speaks, found out by asking it, on every new connection.
//!
//! No slot reports CopyQ's version (the CLI's `version()` runs in the client process), so the
//! probe checks behaviour, in four calls without side effects (about 1 ms in all):
//!
//! 1. `tabs()` must come back as a `QStringList`: frames, calls and `QVariant`s line up.
//! 2. `selectionGetRows(int)` with a selection id that does not exist must come back as a row list,
//!    a user type: its id (1024 from Qt 5 builds, 65536 from Qt 6 ones) is the one to send, since
//!    CopyQ 15+ refuses 1024 and 9.0 refuses 65536. The client learns it from that reply.
//! 3. `browserInsert(...)` is sent with **no arguments** under the 6.x signature: if the slot exists
//!    the server answers with its default value without running it (Qt refuses to invoke a slot
//!    with too few arguments, and CopyQ logs "Bad scriptable proxy slot call"); if not, the reply
//!    is empty. Then the same with `VariantMapList` (CopyQ >= 7.1).
//! 4. The same no-argument probe of `playSound(QString,float)`, added in 14.0 together with the
//!    has-key flag in `DataFile` values.

use super::SocketError;
use super::client::Client;
use super::slots;
use super::value::{Call, MapListType, Qt, Value};

/// The layout a server was found to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// The name of the list-of-maps type in `browserInsert`/`browserChange` signatures.
    pub map_list: MapListType,
    /// The Qt it was built with: user type id and the row list's name in signatures.
    pub qt: Qt,
    /// CopyQ 14.0 or later (`DataFile` values carry a has-key flag).
    pub since_14: bool,
}

impl Layout {
    /// A short description for logs and /healthz: `Qt 6, CopyQ >= 14`.
    pub fn describe(&self) -> String {
        let qt = match self.qt {
            Qt::V5 => "Qt 5",
            Qt::V6 => "Qt 6",
        };
        let copyq = match (self.since_14, self.map_list) {
            (true, _) => ">= 14.0",
            (false, MapListType::VariantMapList) => "7.1 - 13.x",
            (false, MapListType::QVector) => "< 7.1",
        };
        format!("{qt}, CopyQ {copyq}")
    }
}

/// What [`detect`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Detected {
    /// Known streams and slots: use the socket with this layout.
    Known(Layout),
    /// Something else: the caller should use the CLI. The text says what did not match.
    Unknown(String),
}

/// Ask the server behind `client` which layout it speaks. Errors are connection failures
/// (not running, stopped, timeout); a server that answers in an unknown way is `Ok(Unknown)`.
pub async fn detect(client: &Client) -> Result<Detected, SocketError> {
    let tabs = slots::tabs();
    match answer(client, &tabs).await? {
        Some(Value::StringList(_)) => {}
        other => return Ok(unknown(&tabs, other)),
    }
    let rows = slots::selection_get_rows(-1);
    match answer(client, &rows).await? {
        Some(Value::IntVector(_)) => {}
        other => return Ok(unknown(&rows, other)),
    }
    // Learned by the client from the reply just read.
    let qt = client.dialect().qt;
    let mut map_list = None;
    for kind in [MapListType::VariantMapList, MapListType::QVector] {
        let insert = slots::browser_insert(kind, "", 0, vec![]);
        if answer(client, &Call::new(insert.signature, vec![]))
            .await?
            .is_some()
        {
            map_list = Some(kind);
            break;
        }
    }
    let Some(map_list) = map_list else {
        return Ok(Detected::Unknown(
            "no browserInsert slot with a known signature".into(),
        ));
    };
    let since_14 = answer(client, &Call::new("playSound(QString,float)", vec![]))
        .await?
        .is_some();
    client.set_data_file_key(since_14);
    Ok(Detected::Known(Layout {
        map_list,
        qt,
        since_14,
    }))
}

/// The reply, `None` for a rejection or an unreadable value; connection failures pass through.
async fn answer(client: &Client, call: &Call) -> Result<Option<Value>, SocketError> {
    match client.call(call).await {
        Ok(value) => Ok(Some(value)),
        Err(SocketError::Rejected | SocketError::BadReply(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

fn unknown(call: &Call, got: Option<Value>) -> Detected {
    let got = got
        .as_ref()
        .map_or("a rejection or unreadable value", Value::kind);
    Detected::Unknown(format!("{} answered with {got}", call.signature))
}
