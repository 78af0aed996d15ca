//! CopyQ's local socket protocol: a native client, so a call costs ~0.1 ms
//! instead of a `copyq` process.
//!
//! - [`value`]: the `QVariant` subset ([`Value`]) and a slot [`Call`];
//! - [`encode`], [`decode`], [`frame`]: Qt 5 `QDataStream` bytes, frames and messages, hardened
//!   against hostile input (lengths checked before allocating, [`MAX_FRAME_LEN`], [`MAX_DEPTH`]);
//! - [`client`]: an async [`Client`] over a Unix socket (a named pipe on Windows: `transport`),
//!   pipelining calls with timeouts;
//! - [`slots`]: constructors for the server slots the gateway uses;
//! - [`path`]: where the socket is, computed the way the `copyq` client does;
//! - [`probe`]: whether the server speaks the layout this client knows;
//! - [`backend`]: the socket backend, the [`crate::backend::Backend`] operations over this client.
//!
//! The socket is CopyQ's internal, unauthenticated RPC: it changes between versions (detect with
//! [`probe::detect`], fall back to the CLI otherwise) and must never be reachable from a network.
//!
//! What CopyQ 6.4 does, as tests/gateway/socket_protocol.rs shows it:
//! - every slot taking a tab name **creates a missing tab**, reads included (`browserLength`,
//!   `browserItemData`, `createSelection`); an empty name means the first tab. Check `tabs()` first;
//! - item formats come back as the type they were stored with: `QByteArray` when written by the
//!   CLI (or as bytes here), `QString` when a client stored a `QString`;
//! - an unknown slot, wrong argument types or a garbled call get an empty reply that names no
//!   call ([`SocketError::Rejected`]); the connection stays usable. Too few arguments get the
//!   slot's default value, without running it. A garbled frame header makes it drop the
//!   connection;
//! - when exiting it sends "stop" and waits up to 10 s for clients to hang up; this client does so
//!   at once.

pub(crate) mod backend;
pub mod client;
mod conn;
pub(crate) mod decode;
pub(crate) mod dialect;
pub(crate) mod encode;
pub(crate) mod frame;
pub mod path;
pub mod probe;
pub mod slots;
#[doc(hidden)]
pub mod stand_in;
mod transport;
pub mod value;

#[cfg(test)]
mod reference_tests;

use std::path::PathBuf;
use std::time::Duration;

use thiserror::Error;

pub use client::{Client, Options};
pub use decode::DecodeError;
pub use encode::EncodeError;
pub use path::{SocketEnv, SocketPathError};
pub use probe::{Detected, Layout};
pub use value::{Call, Dialect, Map, MapListType, Qt, Value};

/// Largest frame accepted from the server (and sent to it): a bound on what one reply can make
/// the client allocate. CopyQ sends one reply per call, so this caps a single item or selection.
pub const MAX_FRAME_LEN: usize = 256 << 20;

/// Deepest nesting of lists and maps accepted either way; CopyQ's replies nest 3 levels at most.
pub const MAX_DEPTH: usize = 32;

/// Calls sent and not yet answered on one connection; beyond this a call fails at once.
pub const MAX_IN_FLIGHT: usize = 65_536;

/// A failed call or connection. Each variant says what the caller should do about it.
#[derive(Debug, Error)]
pub enum SocketError {
    /// No server listens there (or the path is not a socket): CopyQ is not running.
    #[error("cannot connect to CopyQ at {path}: {source}")]
    Connect {
        path: PathBuf,
        source: std::io::Error,
    },
    /// No answer in time. The connection stays open; a late reply is discarded.
    #[error("CopyQ did not answer within {0:?}")]
    Timeout(Duration),
    /// The server said it is exiting; the connection is closed. Reconnect after it restarts.
    #[error("CopyQ is exiting (it sent its stop message)")]
    Stopped,
    /// The server closed the connection (it exited or crashed). Reconnect after it restarts.
    #[error("CopyQ closed the connection")]
    Closed,
    /// [`Client::close`] was called.
    #[error("the connection to CopyQ was closed by this client")]
    Shutdown,
    /// Reading or writing the socket failed; the connection is closed.
    #[error("connection to CopyQ failed: {0}")]
    Io(String),
    /// The server sent a frame this client cannot read; the connection is closed.
    #[error("CopyQ sent a frame this client cannot read: {0}")]
    Protocol(DecodeError),
    /// The reply to this call could not be read (e.g. an unknown value type); others are fine.
    #[error("CopyQ's reply could not be read: {0}")]
    BadReply(DecodeError),
    /// The server could not run the call: unknown slot signature or wrong argument types. It does
    /// not say which call; the client charges the oldest one in flight, since the server runs
    /// calls one at a time in the order they arrive.
    #[error("CopyQ rejected the call (unknown slot signature or argument types)")]
    Rejected,
    /// The reply has a type the slot never returns in the known layout.
    #[error("unexpected reply to {signature}: {got}")]
    UnexpectedReply {
        signature: String,
        got: &'static str,
    },
    /// The call could not be encoded (too large, too deep).
    #[error("cannot send the call: {0}")]
    Encode(#[from] EncodeError),
    /// More than [`MAX_IN_FLIGHT`] calls are waiting for replies.
    #[error("too many calls waiting for CopyQ")]
    TooManyInFlight,
}

impl SocketError {
    /// Whether the connection is gone, so the caller should reconnect (or fall back).
    pub fn is_disconnect(&self) -> bool {
        matches!(
            self,
            Self::Connect { .. }
                | Self::Stopped
                | Self::Closed
                | Self::Shutdown
                | Self::Io(_)
                | Self::Protocol(_)
        )
    }
}
