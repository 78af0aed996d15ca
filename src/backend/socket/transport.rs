//! The byte stream to CopyQ's server, per platform: a Unix socket on Unix, a named pipe on Windows
//! (both are what Qt's `QLocalSocket` uses there). The protocol client above it is the same.

use std::io;
use std::path::Path;

/// One connection's stream, split into halves by [`split`].
#[cfg(unix)]
pub(crate) type Stream = tokio::net::UnixStream;

/// One connection's stream, split into halves by [`split`].
#[cfg(windows)]
pub(crate) type Stream = tokio::net::windows::named_pipe::NamedPipeClient;

/// Connect to the server at `path` (a socket file; on Windows a `\\.\pipe\...` name). When no
/// socket is there, the other spelling of a session with capitals (CopyQ before 14 lower-cased
/// it: [`super::path::case_twin`]) is tried, and its error kept only if the socket is there.
#[cfg(unix)]
pub(crate) async fn connect(path: &Path) -> io::Result<Stream> {
    match tokio::net::UnixStream::connect(path).await {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let Some(twin) = super::path::case_twin(path) else {
                return Err(e);
            };
            match tokio::net::UnixStream::connect(&twin).await {
                Err(t) if t.kind() == io::ErrorKind::NotFound => Err(e),
                other => other,
            }
        }
        other => other,
    }
}

/// Connect to the pipe `path`. A pipe whose instances are all taken answers "busy" rather than
/// queueing the client as a socket's backlog would: wait a little and try again (the caller's
/// timeout bounds the whole connect).
#[cfg(windows)]
pub(crate) async fn connect(path: &Path) -> io::Result<Stream> {
    // winerror.h: ERROR_PIPE_BUSY.
    const PIPE_BUSY: i32 = 231;
    loop {
        match tokio::net::windows::named_pipe::ClientOptions::new().open(path) {
            Err(e) if e.raw_os_error() == Some(PIPE_BUSY) => {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
            other => return other,
        }
    }
}

/// The read and write halves, owned, for the connection's two tasks.
#[cfg(unix)]
pub(crate) fn split(
    stream: Stream,
) -> (
    impl tokio::io::AsyncRead + Send + Unpin + 'static,
    impl tokio::io::AsyncWrite + Send + Unpin + 'static,
) {
    stream.into_split()
}

/// The read and write halves, owned, for the connection's two tasks (a pipe client has no owned
/// split of its own; tokio's generic one locks per operation, which the one reader and one
/// writer never contend for long).
#[cfg(windows)]
pub(crate) fn split(
    stream: Stream,
) -> (
    impl tokio::io::AsyncRead + Send + Unpin + 'static,
    impl tokio::io::AsyncWrite + Send + Unpin + 'static,
) {
    tokio::io::split(stream)
}
