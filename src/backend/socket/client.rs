//! An async client for CopyQ's socket: one connection, many calls in flight, replies matched by
//! call id, every call bounded by a timeout, and a stopped or vanished server failing every call
//! at once instead of leaving it hanging.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use tokio::task::AbortHandle;
use tokio::time::{Instant, timeout_at};

use super::conn::{CloseReason, Reply, Shared, read_loop, write_loop};
use super::frame::encode_call_in;
use super::transport;
use super::value::{Call, Dialect, Value};
use super::{EncodeError, MAX_FRAME_LEN, SocketError};

/// How a [`Client`] behaves.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Bound on connecting, on one [`Client::call`], and on one whole [`Client::call_many`].
    pub timeout: Duration,
    /// Largest frame accepted from the server (see [`MAX_FRAME_LEN`]).
    pub max_frame_len: usize,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(5),
            max_frame_len: MAX_FRAME_LEN,
        }
    }
}

/// A connection to a CopyQ server. Calls take `&self`, so one client can be shared (in an `Arc`)
/// by concurrent tasks; their calls are pipelined on the one connection. Connecting is cheap
/// (~0.1 ms): when [`Client::is_closed`], make a new one. Dropping the client closes the socket.
pub struct Client {
    shared: Arc<Shared>,
    outgoing: mpsc::UnboundedSender<Vec<u8>>,
    options: Options,
    tasks: [AbortHandle; 2],
}

impl Client {
    /// Connect to the server's socket at `path` (see [`super::path`]). Needs a Tokio runtime.
    pub async fn connect(path: impl AsRef<Path>, options: Options) -> Result<Self, SocketError> {
        let path = path.as_ref();
        let connect_error = |source| SocketError::Connect {
            path: path.to_owned(),
            source,
        };
        let stream = tokio::time::timeout(options.timeout, transport::connect(path))
            .await
            .map_err(|_| connect_error(std::io::ErrorKind::TimedOut.into()))?
            .map_err(connect_error)?;
        let (read, write) = transport::split(stream);
        let shared = Arc::new(Shared::default());
        let (outgoing, queue) = mpsc::unbounded_channel();
        let reader = tokio::spawn(read_loop(read, shared.clone(), options.max_frame_len));
        let writer = tokio::spawn(write_loop(write, queue, shared.clone()));
        Ok(Self {
            shared,
            outgoing,
            options,
            tasks: [reader.abort_handle(), writer.abort_handle()],
        })
    }

    /// Whether the connection has ended (server stopped or gone, I/O error, [`Client::close`]):
    /// every call fails at once then, and the caller should reconnect.
    pub fn is_closed(&self) -> bool {
        self.shared.closed().is_some()
    }

    /// How many calls were sent and are not answered yet.
    pub fn in_flight(&self) -> usize {
        self.shared.in_flight()
    }

    /// Close the connection: calls waiting and later calls fail with [`SocketError::Shutdown`].
    pub fn close(&self) {
        self.shared.close(CloseReason::Shutdown);
        self.tasks[0].abort();
    }

    /// Call one slot and wait (at most [`Options::timeout`]) for its reply.
    pub async fn call(&self, call: &Call) -> Result<Value, SocketError> {
        let deadline = Instant::now() + self.options.timeout;
        let mut receivers = self.submit(std::slice::from_ref(call))?;
        match receivers.pop() {
            Some(rx) => self.wait(rx, deadline).await,
            None => Err(SocketError::Closed),
        }
    }

    /// Send all `calls` at once (coalesced into as few writes as possible) and wait for every
    /// reply: the server answers them back to back, saving a round trip per call. [`Options::timeout`] bounds the whole batch. Fails with
    /// the first failed call's error; the calls after it may still have run.
    pub async fn call_many(&self, calls: &[Call]) -> Result<Vec<Value>, SocketError> {
        self.send(calls)?.replies().await.into_iter().collect()
    }

    /// [`Self::call_many`] of `parts` one after another, sent at once (one round trip for all),
    /// each part answered on its own: a part's result is its first failed call's error or its
    /// values, so a failure in a later part does not hide that an earlier one was answered.
    /// `Err` when nothing could be sent.
    pub async fn call_parts(
        &self,
        parts: &[&[Call]],
    ) -> Result<Vec<Result<Vec<Value>, SocketError>>, SocketError> {
        let all: Vec<Call> = parts.iter().flat_map(|p| p.iter().cloned()).collect();
        let replies = self.send(&all)?.replies().await;
        Ok(by_part(replies, parts))
    }

    /// Send all `calls` at once, without waiting: once this returns they are on their way (in
    /// the order of every other call sent on this connection), and [`Sent::replies`] waits for
    /// their replies, [`Options::timeout`] from now. For a caller that must know its batch was
    /// sent before another's (`SocketBackend`'s lock on sending).
    pub fn send(&self, calls: &[Call]) -> Result<Sent<'_>, SocketError> {
        let deadline = Instant::now() + self.options.timeout;
        let receivers = self.submit(calls)?;
        Ok(Sent {
            client: self,
            receivers,
            deadline,
        })
    }

    /// Every reply to `receivers`, in their order. The last is awaited first: CopyQ answers a
    /// connection's calls in the order sent, so once it is in, so are the others, and the
    /// caller's task wakes once for the batch instead of once a reply (a tree's 220).
    async fn wait_all(
        &self,
        mut receivers: Vec<oneshot::Receiver<Reply>>,
        deadline: Instant,
    ) -> Vec<Result<Value, SocketError>> {
        let Some(last) = receivers.pop() else {
            return Vec::new();
        };
        let last = self.wait(last, deadline).await;
        let mut replies = Vec::with_capacity(receivers.len() + 1);
        for rx in receivers {
            replies.push(self.wait(rx, deadline).await);
        }
        replies.push(last);
        replies
    }

    /// How this server writes values, as far as known: its Qt is learned from the first reply
    /// holding a user type (Qt 5 until then), which is the user type id calls are sent with.
    pub fn dialect(&self) -> Dialect {
        self.shared.dialect()
    }

    /// Whether `DataFile` values carry CopyQ 14's has-key flag (see [`Dialect::data_file_key`]).
    pub fn set_data_file_key(&self, on: bool) {
        self.shared.set_data_file_key(on);
    }

    /// Encode outside the connection's lock; ids are filled in under it.
    fn submit(&self, calls: &[Call]) -> Result<Vec<oneshot::Receiver<Reply>>, SocketError> {
        let max = self.options.max_frame_len;
        let dialect = self.dialect();
        let mut frames = Vec::with_capacity(calls.len());
        for call in calls {
            let frame = encode_call_in(0, call, dialect)?;
            if frame.len() > max {
                return Err(EncodeError::TooLarge.into());
            }
            frames.push(frame);
        }
        self.shared.submit(frames, &self.outgoing)
    }

    async fn wait(
        &self,
        rx: oneshot::Receiver<Reply>,
        deadline: Instant,
    ) -> Result<Value, SocketError> {
        match timeout_at(deadline, rx).await {
            Ok(Ok(reply)) => reply,
            // The connection's tasks are gone without a word (runtime shutting down).
            Ok(Err(_)) => Err(self
                .shared
                .closed()
                .map_or(SocketError::Closed, |r| r.error())),
            Err(_) => Err(SocketError::Timeout(self.options.timeout)),
        }
    }
}

/// A batch [`Client::send`] sent, its replies to come.
pub struct Sent<'a> {
    client: &'a Client,
    receivers: Vec<oneshot::Receiver<Reply>>,
    deadline: Instant,
}

impl Sent<'_> {
    /// Every call's reply, in the order sent.
    pub async fn replies(self) -> Vec<Result<Value, SocketError>> {
        self.client.wait_all(self.receivers, self.deadline).await
    }
}

/// `replies` to `parts` sent as one batch, taken apart: each part takes exactly its replies
/// (collecting into a `Result` would stop at an error and leave the rest of the part to the
/// next), and is its first failed call's error or its values.
pub fn by_part(
    replies: Vec<Result<Value, SocketError>>,
    parts: &[&[Call]],
) -> Vec<Result<Vec<Value>, SocketError>> {
    let mut replies = replies.into_iter();
    parts
        .iter()
        .map(|part| {
            let part: Vec<_> = replies.by_ref().take(part.len()).collect();
            part.into_iter().collect()
        })
        .collect()
}

impl Drop for Client {
    fn drop(&mut self) {
        self.shared.close(CloseReason::Shutdown);
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("options", &self.options)
            .field("closed", &self.is_closed())
            .finish()
    }
}

#[cfg(test)]
#[path = "client_tests.rs"]
mod tests;
