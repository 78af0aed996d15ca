//! One connection's moving parts: the table of calls waiting for replies, the reader task that
//! answers them, and the writer task that alone writes to the socket (so a cancelled caller can
//! never leave half a frame on the wire).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Notify, mpsc, oneshot};

use super::decode::DecodeError;
use super::frame::{HEADER_LEN, Message, decode_message_in, parse_header, set_call_id};
use super::value::{Dialect, Qt, Value};
use super::{MAX_IN_FLIGHT, SocketError};

pub(crate) type Reply = Result<Value, SocketError>;

/// Why a connection ended; every call waiting then, or made later, fails with it.
#[derive(Debug, Clone)]
pub(crate) enum CloseReason {
    Stopped,
    Eof,
    Shutdown,
    Io(String),
    Protocol(DecodeError),
}

impl CloseReason {
    /// An I/O failure; a peer that went away (broken pipe, reset) is an ordinary end of stream.
    fn io(e: &std::io::Error) -> Self {
        use std::io::ErrorKind::{BrokenPipe, ConnectionReset, UnexpectedEof};
        match e.kind() {
            BrokenPipe | ConnectionReset | UnexpectedEof => Self::Eof,
            _ => Self::Io(e.to_string()),
        }
    }

    pub(crate) fn error(&self) -> SocketError {
        match self {
            Self::Stopped => SocketError::Stopped,
            Self::Eof => SocketError::Closed,
            Self::Shutdown => SocketError::Shutdown,
            Self::Io(e) => SocketError::Io(e.clone()),
            Self::Protocol(e) => SocketError::Protocol(e.clone()),
        }
    }
}

#[derive(Default)]
struct State {
    /// Calls in the order they were written, which is the order the server answers them in.
    pending: VecDeque<(i32, oneshot::Sender<Reply>)>,
    next_id: i32,
    closed: Option<CloseReason>,
    /// How this server writes values; its Qt is learned from its replies.
    dialect: Dialect,
}

/// What the client and its two tasks share.
#[derive(Default)]
pub(crate) struct Shared {
    state: Mutex<State>,
    /// Wakes the writer so it drops its half of the socket once the connection is closed.
    closing: Notify,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn closed(&self) -> Option<CloseReason> {
        self.lock().closed.clone()
    }

    pub(crate) fn dialect(&self) -> Dialect {
        self.lock().dialect
    }

    pub(crate) fn in_flight(&self) -> usize {
        self.lock().pending.len()
    }

    pub(crate) fn set_data_file_key(&self, on: bool) {
        self.lock().dialect.data_file_key = on;
    }

    /// A reply used `qt`'s user type id: send that id from now on.
    fn learn_qt(&self, qt: Qt) {
        let mut state = self.lock();
        if state.dialect.qt != qt {
            tracing::debug!(?qt, "CopyQ's replies use this Qt's user type id");
            state.dialect.qt = qt;
        }
    }

    /// Give each call frame its call id, note it as waiting and queue it, all under one lock so
    /// frames reach the socket in id order. Returns one receiver per frame.
    pub(crate) fn submit(
        &self,
        frames: Vec<Vec<u8>>,
        outgoing: &mpsc::UnboundedSender<Vec<u8>>,
    ) -> Result<Vec<oneshot::Receiver<Reply>>, SocketError> {
        let mut state = self.lock();
        if let Some(reason) = &state.closed {
            return Err(reason.error());
        }
        if state.pending.len() + frames.len() > MAX_IN_FLIGHT {
            return Err(SocketError::TooManyInFlight);
        }
        let mut receivers = Vec::with_capacity(frames.len());
        for mut frame in frames {
            // Ids stay non-negative; wrapping back to 0 after 2^31 calls is harmless.
            let id = state.next_id;
            state.next_id = id.checked_add(1).unwrap_or(0);
            set_call_id(&mut frame, id);
            if outgoing.send(frame).is_err() {
                // The writer is gone: only when the connection is closed.
                return Err(state
                    .closed
                    .as_ref()
                    .map_or(SocketError::Closed, CloseReason::error));
            }
            let (tx, rx) = oneshot::channel();
            state.pending.push_back((id, tx));
            receivers.push(rx);
        }
        Ok(receivers)
    }

    /// End the connection: fail everything waiting, refuse later calls, wake the writer.
    pub(crate) fn close(&self, reason: CloseReason) {
        let drained = {
            let mut state = self.lock();
            if state.closed.is_some() {
                return;
            }
            state.closed = Some(reason.clone());
            std::mem::take(&mut state.pending)
        };
        for (_, tx) in drained {
            let _ = tx.send(Err(reason.error()));
        }
        self.closing.notify_one();
    }

    fn dispatch(&self, message: Message) -> Result<(), CloseReason> {
        let (entry, reply) = match message {
            Message::Reply { id, value } => {
                let mut state = self.lock();
                let Some(at) = state.pending.iter().position(|(p, _)| *p == id) else {
                    tracing::debug!(id, "reply to a call not waiting (late or unknown)");
                    return Ok(());
                };
                (
                    state.pending.remove(at),
                    value.map_err(SocketError::BadReply),
                )
            }
            Message::Rejected => (self.lock().pending.pop_front(), Err(SocketError::Rejected)),
            Message::Stop => return Err(CloseReason::Stopped),
            Message::Other { code } => {
                tracing::debug!(code, "ignoring a message this client does not use");
                return Ok(());
            }
        };
        if let Some((_, tx)) = entry {
            // The caller may have given up (timeout): nobody to tell then.
            let _ = tx.send(reply);
        }
        Ok(())
    }
}

/// Read frames until the server stops, the socket ends or a frame cannot be read.
pub(crate) async fn read_loop<R: AsyncRead + Unpin>(read: R, shared: Arc<Shared>, max_len: usize) {
    let mut read = BufReader::with_capacity(64 << 10, read);
    let reason = loop {
        match read_message(&mut read, max_len).await {
            Ok(bytes) => match decode_message_in(&bytes, shared.dialect()) {
                Ok((message, qt)) => {
                    if let Some(qt) = qt {
                        shared.learn_qt(qt);
                    }
                    if let Err(reason) = shared.dispatch(message) {
                        break reason;
                    }
                }
                Err(e) => break CloseReason::Protocol(e),
            },
            Err(reason) => break reason,
        }
    };
    shared.close(reason);
}

/// What a message's buffer starts with, and the least it grows by: a header that lies about the
/// length costs no more than this until bytes arrive.
const FIRST_RESERVE: usize = 64 << 10;

/// One message (code + payload). The buffer grows only as bytes arrive, doubling but never past
/// the announced length: a whole tab's 5 MB reply is held in 5 MB, not the 8 MB a doubling
/// `read_to_end` ends with (large buffers are `mremap`ped, so a step costs no copy and no second
/// buffer), and a header that lies about the length costs nothing.
async fn read_message<R: AsyncRead + Unpin>(
    read: &mut R,
    max_len: usize,
) -> Result<Vec<u8>, CloseReason> {
    let mut header = [0u8; HEADER_LEN];
    read.read_exact(&mut header)
        .await
        .map_err(|e| CloseReason::io(&e))?;
    let len = parse_header(&header, max_len).map_err(CloseReason::Protocol)?;
    let mut message = Vec::with_capacity(len.min(FIRST_RESERVE));
    let mut rest = read.take(len as u64);
    while message.len() < len {
        if message.len() == message.capacity() {
            let step = message.len().max(FIRST_RESERVE).min(len - message.len());
            message.reserve_exact(step);
        }
        // Reads into the spare capacity only (never past `len`: `take`).
        let got = rest
            .read_buf(&mut message)
            .await
            .map_err(|e| CloseReason::io(&e))?;
        if got == 0 {
            return Err(CloseReason::Eof);
        }
    }
    Ok(message)
}

/// Write queued frames, coalescing what is already queued into one write, until the connection
/// closes or the client is dropped. Dropping `write` then shuts the socket down.
pub(crate) async fn write_loop<W: AsyncWrite + Unpin>(
    mut write: W,
    mut outgoing: mpsc::UnboundedReceiver<Vec<u8>>,
    shared: Arc<Shared>,
) {
    loop {
        let mut buf = tokio::select! {
            () = shared.closing.notified() => break,
            next = outgoing.recv() => match next {
                Some(buf) => buf,
                None => break,
            },
        };
        while buf.len() < (1 << 20) {
            match outgoing.try_recv() {
                Ok(more) => buf.extend(more),
                Err(_) => break,
            }
        }
        let written = async {
            write.write_all(&buf).await?;
            write.flush().await
        };
        if let Err(e) = written.await {
            shared.close(CloseReason::io(&e));
            break;
        }
    }
    let _ = write.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::super::frame::encode_frame;
    use super::*;

    /// `payload` framed, written to one end of a pipe in small pieces; `read_message` on the other.
    async fn read_back(frame: Vec<u8>, cut: usize) -> Result<Vec<u8>, CloseReason> {
        let (mut client, mut server) = tokio::io::duplex(4096);
        let writer = tokio::spawn(async move {
            let _ = server.write_all(&frame[..cut.min(frame.len())]).await;
        });
        let got = read_message(&mut client, super::super::MAX_FRAME_LEN).await;
        let _ = writer.await;
        got
    }

    #[tokio::test]
    async fn a_message_is_held_in_exactly_its_length() {
        for size in [0, 1, 4_000, 100_000, 5_000_001] {
            let payload: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
            let frame = encode_frame(9, &payload).expect("frame");
            let message = read_back(frame, usize::MAX).await.expect("whole");
            assert_eq!(message.len(), size + 4, "{size}");
            assert_eq!(&message[4..], &payload[..], "{size}");
            assert_eq!(
                message.capacity(),
                message.len(),
                "{size}: no room left over"
            );
        }
    }

    #[tokio::test]
    async fn a_header_that_lies_about_the_length_costs_nothing_and_ends_the_connection() {
        let mut frame = encode_frame(9, &vec![7u8; 100 << 20]).expect("frame");
        frame.truncate(HEADER_LEN + 10);
        let (mut client, mut server) = tokio::io::duplex(4096);
        server.write_all(&frame).await.expect("write");
        drop(server);
        let got = read_message(&mut client, super::super::MAX_FRAME_LEN).await;
        assert!(matches!(got, Err(CloseReason::Eof)), "{got:?}");
        // Cut short after a few steps of growth: the same.
        let frame = encode_frame(9, &vec![7u8; 100 << 20]).expect("frame");
        let got = read_back(frame, 1 << 20).await;
        assert!(matches!(got, Err(CloseReason::Eof)), "{got:?}");
    }
}
