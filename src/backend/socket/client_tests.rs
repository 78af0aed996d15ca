//! Unit tests of [`super::Client`] against a scripted fake server (the live tests against a real
//! CopyQ are in tests/gateway/socket_protocol.rs). Kept out of client.rs only for its length. The
//! fake server listens where CopyQ's does on each platform: a Unix socket, or on Windows a named
//! pipe (these tests run under Wine in tests/windows.sh).

use std::path::PathBuf;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::super::MAX_FRAME_LEN;
use super::super::encode::encode_value;
use super::super::frame::{code, decode_call_payload, encode_frame, split_frame};
use super::super::stand_in::{Listener, ServerStream};
use super::*;

/// Where a fake server named `name` listens: a socket file in `dir`, or on Windows a pipe named
/// after `dir` (pipes live in their own namespace, not in a directory).
fn server_path(dir: &tempfile::TempDir, name: &str) -> PathBuf {
    #[cfg(unix)]
    {
        dir.path().join(name)
    }
    #[cfg(windows)]
    {
        let leaf = dir.path().file_name().unwrap_or_default().to_string_lossy();
        PathBuf::from(format!(r"\\.\pipe\copyq-mcp-test-{leaf}-{name}"))
    }
}

/// What the fake server does with one call.
enum Act {
    Reply(Value),
    Reject,
    Stop,
    Hang,
    Raw(Vec<u8>),
}

fn reply_frame(id: i32, value: &Value) -> Vec<u8> {
    let mut payload = id.to_be_bytes().to_vec();
    encode_value(&mut payload, value).expect("encodable");
    encode_frame(code::FUNCTION_CALL_RETURN_VALUE, &payload).expect("frame")
}

/// Serve one connection: collect calls in batches of `batch` (to let a test reorder replies), and
/// answer each batch with `respond`. Returns the socket path and a handle yielding whether the
/// client closed its end.
async fn fake_server<F>(
    batch: usize,
    mut respond: F,
) -> (tempfile::TempDir, tokio::task::JoinHandle<bool>)
where
    F: FnMut(Vec<(i32, Call)>) -> Vec<(i32, Act)> + Send + 'static,
{
    let dir = tempfile::tempdir().expect("tempdir");
    let mut listener = Listener::bind(&server_path(&dir, "s")).expect("bind");
    let handle = tokio::spawn(async move {
        let mut sock = listener.accept().await.expect("accept");
        let mut buf = Vec::new();
        let mut calls = Vec::new();
        loop {
            while let Ok(Some((message, used))) = split_frame(&buf, MAX_FRAME_LEN) {
                calls.push(decode_call_payload(&message[4..]).expect("a valid call"));
                buf.drain(..used);
            }
            if calls.len() >= batch {
                for (id, act) in respond(std::mem::take(&mut calls)) {
                    let bytes = match act {
                        Act::Reply(v) => reply_frame(id, &v),
                        Act::Reject => encode_frame(9, &[]).expect("frame"),
                        Act::Stop => encode_frame(10, &[]).expect("frame"),
                        Act::Raw(bytes) => bytes,
                        Act::Hang => continue,
                    };
                    let _ = sock.write_all(&bytes).await;
                }
            }
            let mut chunk = [0u8; 4096];
            match sock.read(&mut chunk).await {
                Ok(0) | Err(_) => return true,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
    });
    (dir, handle)
}

fn options(ms: u64) -> Options {
    Options {
        timeout: Duration::from_millis(ms),
        ..Options::default()
    }
}

async fn connect(dir: &tempfile::TempDir, ms: u64) -> Client {
    Client::connect(server_path(dir, "s"), options(ms))
        .await
        .expect("connect")
}

fn echo_int(calls: Vec<(i32, Call)>) -> Vec<(i32, Act)> {
    let n = |c: &Call| c.args.first().and_then(Value::as_int).unwrap_or(-1);
    calls
        .into_iter()
        .map(|(id, c)| (id, Act::Reply(Value::Int(n(&c)))))
        .collect()
}

fn calls(n: i32) -> Vec<Call> {
    (0..n)
        .map(|i| Call::new("f(int)", vec![Value::Int(i)]))
        .collect()
}

#[tokio::test]
async fn pipelined_replies_are_matched_by_id_even_out_of_order() {
    let (dir, _server) = fake_server(5, |c| echo_int(c).into_iter().rev().collect()).await;
    let client = connect(&dir, 2000).await;
    let values = client.call_many(&calls(5)).await.expect("replies");
    assert_eq!(values, (0..5).map(Value::Int).collect::<Vec<_>>());
}

/// Parts sent in one round trip are answered each on its own: a server that answers the first
/// part's calls and then stops fails only the second part, and the first keeps its values.
#[tokio::test]
async fn a_later_part_failing_does_not_hide_an_earlier_parts_answers() {
    // Three calls answered, then the stop message.
    fn three_then_stop(c: Vec<(i32, Call)>) -> Vec<(i32, Act)> {
        let mut acts = echo_int(c[..3].to_vec());
        acts.push((c[3].0, Act::Stop));
        acts
    }
    let (dir, _server) = fake_server(5, three_then_stop).await;
    let client = connect(&dir, 30_000).await;
    let all = calls(5);
    let got = client
        .call_parts(&[&all[..3], &all[3..]])
        .await
        .expect("sent");
    assert_eq!(got.len(), 2);
    let first = got[0].as_ref().expect("the first part was answered");
    assert_eq!(first, &[Value::Int(0), Value::Int(1), Value::Int(2)]);
    assert!(matches!(got[1], Err(SocketError::Stopped)), "{:?}", got[1]);
    // With the parts as one batch, the stop is all a caller would learn.
    let (dir, _server) = fake_server(5, three_then_stop).await;
    let client = connect(&dir, 30_000).await;
    assert!(matches!(
        client.call_many(&all).await,
        Err(SocketError::Stopped)
    ));
}

/// A call failing inside a part fails that part only, and the next part still gets its own
/// replies (not the rest of the failed part's).
#[tokio::test]
async fn a_failed_call_fails_its_part_and_the_next_part_keeps_its_replies() {
    let (dir, _server) = fake_server(5, |c| {
        let mut acts = echo_int(c.clone());
        let mut bad = c[1].0.to_be_bytes().to_vec();
        bad.extend([0, 1, 0, 0, 0]); // a Qt 6 user type id: undecodable here
        acts[1] = (c[1].0, Act::Raw(encode_frame(9, &bad).expect("frame")));
        acts
    })
    .await;
    let client = connect(&dir, 2000).await;
    let all = calls(5);
    let got = client
        .call_parts(&[&all[..3], &all[3..]])
        .await
        .expect("sent");
    assert!(
        matches!(got[0], Err(SocketError::BadReply(_))),
        "{:?}",
        got[0]
    );
    assert_eq!(
        got[1].as_ref().expect("the second part was answered"),
        &[Value::Int(3), Value::Int(4)]
    );
    // One batch: the failed call's error, though every later call was answered.
    let (dir, _server) = fake_server(3, |c| {
        let mut acts = echo_int(c.clone());
        acts[0] = (c[0].0, Act::Reject);
        acts
    })
    .await;
    let client = connect(&dir, 2000).await;
    assert!(matches!(
        client.call_many(&calls(3)).await,
        Err(SocketError::Rejected)
    ));
}

#[tokio::test]
async fn concurrent_callers_share_one_connection() {
    let (dir, _server) = fake_server(1, echo_int).await;
    let client = Arc::new(connect(&dir, 2000).await);
    let tasks: Vec<_> = (0..20)
        .map(|i| {
            let client = client.clone();
            tokio::spawn(
                async move { client.call(&Call::new("f(int)", vec![Value::Int(i)])).await },
            )
        })
        .collect();
    for (i, task) in tasks.into_iter().enumerate() {
        let value = task.await.expect("task").expect("reply");
        assert_eq!(value, Value::Int(i as i32));
    }
}

#[tokio::test]
async fn stop_fails_waiting_and_later_calls_at_once_and_closes_the_socket() {
    let (dir, server) = fake_server(2, |c| vec![(c[0].0, Act::Stop)]).await;
    let client = connect(&dir, 30_000).await;
    let started = std::time::Instant::now();
    let err = client.call_many(&calls(2)).await.expect_err("stopped");
    assert!(matches!(err, SocketError::Stopped), "{err}");
    assert!(started.elapsed() < Duration::from_secs(1));
    assert!(client.is_closed());
    assert!(matches!(
        client.call(&calls(1)[0]).await,
        Err(SocketError::Stopped)
    ));
    let saw_close = tokio::time::timeout(Duration::from_secs(2), server).await;
    assert!(
        matches!(saw_close, Ok(Ok(true))),
        "client kept the socket open"
    );
}

#[tokio::test]
async fn server_going_away_fails_waiting_calls_at_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut listener = Listener::bind(&server_path(&dir, "s")).expect("bind");
    tokio::spawn(async move {
        let mut sock = listener.accept().await.expect("accept");
        let mut chunk = [0u8; 64];
        let _ = sock.read(&mut chunk).await;
    });
    let client = connect(&dir, 30_000).await;
    let started = std::time::Instant::now();
    let err = client.call(&calls(1)[0]).await.expect_err("closed");
    assert!(matches!(err, SocketError::Closed), "{err}");
    assert!(err.is_disconnect());
    assert!(started.elapsed() < Duration::from_secs(1));
}

#[tokio::test]
async fn a_silent_server_times_out_and_the_connection_stays_usable() {
    let mut first = true;
    let (dir, _server) = fake_server(1, move |c| {
        let hang = std::mem::take(&mut first);
        echo_int(c)
            .into_iter()
            .map(|(id, act)| (id, if hang { Act::Hang } else { act }))
            .collect()
    })
    .await;
    let client = connect(&dir, 100).await;
    let err = client.call(&calls(1)[0]).await.expect_err("timeout");
    assert!(matches!(err, SocketError::Timeout(_)), "{err}");
    assert!(!client.is_closed());
    assert_eq!(
        client.call(&calls(3)[2]).await.expect("reply"),
        Value::Int(2)
    );
}

#[tokio::test]
async fn a_rejection_is_charged_to_the_oldest_call() {
    let (dir, _server) = fake_server(3, |c| {
        let mut acts = echo_int(c);
        acts[1].1 = Act::Reject;
        acts
    })
    .await;
    let client = Arc::new(connect(&dir, 2000).await);
    let all = calls(3);
    let (a, b, c) = tokio::join!(
        client.call(&all[0]),
        client.call(&all[1]),
        client.call(&all[2])
    );
    assert_eq!(a.expect("first"), Value::Int(0));
    assert!(matches!(b, Err(SocketError::Rejected)));
    assert_eq!(c.expect("third"), Value::Int(2));
}

#[tokio::test]
async fn an_undecodable_value_fails_only_its_call() {
    let (dir, _server) = fake_server(2, |c| {
        let mut bad = c[0].0.to_be_bytes().to_vec();
        bad.extend([0, 1, 0, 0, 0]); // a Qt 6 user type id
        let bad = encode_frame(9, &bad).expect("frame");
        vec![(c[0].0, Act::Raw(bad)), (c[1].0, Act::Reply(Value::Int(7)))]
    })
    .await;
    let client = Arc::new(connect(&dir, 2000).await);
    let all = calls(2);
    let (a, b) = tokio::join!(client.call(&all[0]), client.call(&all[1]));
    assert!(matches!(a, Err(SocketError::BadReply(_))));
    assert_eq!(b.expect("second"), Value::Int(7));
}

#[tokio::test]
async fn a_lying_or_garbled_frame_closes_the_connection() {
    for raw in [
        vec![0x0c, 9, 7, 1, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xf0],
        b"HTTP/1.1 400 Bad Request\r\n\r\n".to_vec(),
    ] {
        let (dir, _server) = fake_server(1, move |c| vec![(c[0].0, Act::Raw(raw.clone()))]).await;
        let client = connect(&dir, 30_000).await;
        let err = client.call(&calls(1)[0]).await.expect_err("protocol");
        assert!(matches!(err, SocketError::Protocol(_)), "{err}");
        assert!(client.is_closed());
    }
}

#[tokio::test]
async fn close_and_missing_sockets() {
    let (dir, _server) = fake_server(1, echo_int).await;
    let client = connect(&dir, 2000).await;
    client.close();
    assert!(matches!(
        client.call(&calls(1)[0]).await,
        Err(SocketError::Shutdown)
    ));
    let missing = Client::connect(server_path(&dir, "none"), options(100)).await;
    assert!(matches!(missing, Err(SocketError::Connect { .. })));
}

/// The next whole frame from `sock`, buffering in `buf`.
async fn next_frame(sock: &mut ServerStream, buf: &mut Vec<u8>) -> Vec<u8> {
    loop {
        if let Ok(Some((message, used))) = split_frame(buf, MAX_FRAME_LEN) {
            let message = message.to_vec();
            buf.drain(..used);
            return message;
        }
        let mut chunk = [0u8; 4096];
        let n = sock.read(&mut chunk).await.expect("read");
        assert!(n > 0, "client hung up");
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// A Qt 6 server (CopyQ 15+) refuses user types sent with the Qt 5 id: once a reply shows the
/// server's id, the client sends that one, with Qt 6's type names.
#[tokio::test]
async fn the_user_type_id_is_learned_from_replies_and_sent() {
    use super::super::value::Qt;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut listener = Listener::bind(&server_path(&dir, "s")).expect("bind");
    let server = tokio::spawn(async move {
        let mut sock = listener.accept().await.expect("accept");
        let mut buf = Vec::new();
        let mut seen = Vec::new();
        for _ in 0..2 {
            let message = next_frame(&mut sock, &mut buf).await;
            let (id, call) = decode_call_payload(&message[4..]).expect("a valid call");
            seen.push((message, call));
            let mut payload = id.to_be_bytes().to_vec();
            let qt6 = super::super::value::Dialect {
                qt: Qt::V6,
                data_file_key: false,
            };
            super::super::encode::encode_value_in(&mut payload, &Value::IntVector(vec![]), qt6)
                .expect("encodable");
            let frame = encode_frame(code::FUNCTION_CALL_RETURN_VALUE, &payload).expect("frame");
            sock.write_all(&frame).await.expect("write");
        }
        seen
    });
    let client = connect(&dir, 2000).await;
    assert_eq!(client.dialect().qt, Qt::V5);
    let rows = Call::new("f(QList<int>)", vec![Value::IntVector(vec![1])]);
    assert_eq!(
        client.call(&rows).await.ok(),
        Some(Value::IntVector(vec![]))
    );
    assert_eq!(client.dialect().qt, Qt::V6);
    assert_eq!(
        client.call(&rows).await.ok(),
        Some(Value::IntVector(vec![]))
    );
    let seen = server.await.expect("server");
    let header = |qt: Qt| {
        let mut b = qt.user_type_id().to_be_bytes().to_vec();
        b.push(0);
        b.extend(
            u32::try_from(qt.int_list().len() + 1)
                .unwrap_or(0)
                .to_be_bytes(),
        );
        b.extend(qt.int_list().as_bytes());
        b
    };
    let contains = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).any(|w| w == needle);
    assert!(contains(&seen[0].0, &header(Qt::V5)), "first call: Qt 5 id");
    assert!(
        contains(&seen[1].0, &header(Qt::V6)),
        "after a Qt 6 reply: Qt 6 id"
    );
    assert!(!contains(&seen[1].0, &header(Qt::V5)));
}
