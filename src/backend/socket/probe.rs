//! Whether a server speaks the socket layout this client knows, found out by asking it.
//!
//! No slot reports CopyQ's version (the CLI's `version()` runs in the client process), so the
//! probe checks behaviour, in three calls without side effects (about 1 ms in all):
//!
//! 1. `tabs()` must come back as a `QStringList`: frames, calls and `QVariant`s line up.
//! 2. `selectionGetRows(int)` with a selection id that does not exist must come back as the Qt 5
//!    user type `QVector<int>` (id 1024). A Qt 6 build sends id 65536 and `QList<int>`.
//! 3. `browserInsert(...)` is sent with **no arguments** under the 6.x signature: if the slot exists
//!    the server answers with its default value without running it (Qt refuses to invoke a slot
//!    with too few arguments, and CopyQ logs "Bad scriptable proxy slot call"); if not, the reply
//!    is empty. Then the same with `VariantMapList` (CopyQ >= 7.1, known from source only).

use super::client::Client;
use super::slots;
use super::value::{Call, MapListType, Value};
use super::{DecodeError, SocketError};

/// The layout a server was found to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// The name of the list-of-maps type in `browserInsert`/`browserChange` signatures.
    pub map_list: MapListType,
}

/// What [`detect`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Detected {
    /// Qt 5 streams and known slots: use the socket with this layout.
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
    match client.call(&rows).await {
        Ok(Value::IntVector(_)) => {}
        Err(SocketError::BadReply(DecodeError::UnknownType(id))) if id >= 65536 => {
            return Ok(Detected::Unknown(format!(
                "user type id {id} in replies: a Qt 6 build of CopyQ"
            )));
        }
        Ok(other) => return Ok(unknown(&rows, Some(other))),
        Err(SocketError::Rejected | SocketError::BadReply(_)) => return Ok(unknown(&rows, None)),
        Err(e) => return Err(e),
    }
    for map_list in [MapListType::QVector, MapListType::VariantMapList] {
        let insert = slots::browser_insert(map_list, "", 0, vec![]);
        if answer(client, &Call::new(insert.signature, vec![]))
            .await?
            .is_some()
        {
            return Ok(Detected::Known(Layout { map_list }));
        }
    }
    Ok(Detected::Unknown(
        "no browserInsert slot with a known signature".into(),
    ))
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
