//! [`AutoBackend`] against a fake CopyQ socket whose layout can be switched between one the client
//! knows and one it does not, and a fake `copyq` CLI. Kept out of auto.rs only for its length.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixListener;

use super::*;
use crate::backend::socket::encode::encode_value;
use crate::backend::socket::frame::{code, decode_call_payload, encode_frame, split_frame};
use crate::backend::socket::{MAX_FRAME_LEN, Value};
use crate::backend::{CliConfig, SocketConfig};

/// The reply of a server speaking CopyQ 9's layout (`known`) or an unknown one.
fn reply(known: bool, signature: &str, argc: usize) -> Option<Value> {
    match (known, signature, argc) {
        (false, "tabs()", _) => Some(Value::Int(0)),
        (true, "tabs()", _) => Some(Value::StringList(vec!["a".into()])),
        (true, "selectionGetRows(int)", _) => Some(Value::IntVector(vec![])),
        (true, "browserInsert(QString,int,VariantMapList)", 0) => Some(Value::String(None)),
        _ => None,
    }
}

/// Accept connections until the test ends; `known` says which layout each call gets.
async fn fake_copyq(known: Arc<AtomicBool>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let listener = UnixListener::bind(dir.path().join("s")).expect("bind");
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let known = known.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                loop {
                    while let Ok(Some((message, used))) = split_frame(&buf, MAX_FRAME_LEN) {
                        let (id, call) = decode_call_payload(&message[4..]).expect("a call");
                        buf.drain(..used);
                        let payload = match reply(
                            known.load(Ordering::SeqCst),
                            &call.signature,
                            call.args.len(),
                        ) {
                            Some(v) => {
                                let mut p = id.to_be_bytes().to_vec();
                                encode_value(&mut p, &v).expect("encodable");
                                p
                            }
                            None => Vec::new(),
                        };
                        let frame = encode_frame(code::FUNCTION_CALL_RETURN_VALUE, &payload);
                        let _ = sock.write_all(&frame.expect("frame")).await;
                    }
                    let mut chunk = [0u8; 4096];
                    match sock.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
            });
        }
    });
    dir
}

/// A `copyq` that answers the script's ping as CopyQ 99 would.
fn fake_cli(dir: &std::path::Path) -> CliBackend {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("copyq");
    let script = "#!/bin/sh\ncat >/dev/null\nprintf '%s' '{\"ok\":true,\"tabs\":1,\"version\":\"CopyQ Clipboard Manager v99.0.0\\nQt: 6.11\"}'\n";
    std::fs::write(&path, script).expect("write");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    CliBackend::new(CliConfig {
        command: path,
        session: None,
        settings_path: None,
        timeout: Duration::from_secs(5),
        max_concurrent: 1,
    })
}

#[tokio::test]
async fn an_unknown_layout_is_served_by_the_cli_until_the_socket_can_serve() {
    let known = Arc::new(AtomicBool::new(false));
    let dir = fake_copyq(known.clone()).await;
    let auto = AutoBackend::new(
        SocketBackend::new(SocketConfig {
            path: dir.path().join("s"),
            timeout: Duration::from_secs(2),
        }),
        fake_cli(dir.path()),
    );
    let cli = Health {
        up: true,
        backend: "cli",
        copyq_version: Some("99.0.0".into()),
        protocol: None,
        tried: None,
    };
    assert_eq!(auto.health().await, cli);
    assert!(auto.ping().await.is_ok(), "served by the CLI");
    // CopyQ restarted (or upgraded) into a layout the socket client knows: the next connection
    // detects it, and the socket serves again.
    known.store(true, Ordering::SeqCst);
    let socket = Health {
        up: true,
        backend: "socket",
        copyq_version: None,
        protocol: Some("Qt 5, CopyQ 7.1 - 13.x".into()),
        tried: None,
    };
    assert_eq!(auto.health().await, socket);
    assert_eq!(auto.route().await.ok(), Some(Route::Socket));
    assert_eq!(auto.current(), "socket");
}

#[tokio::test]
async fn copyq_not_running_is_unavailable_not_a_fallback() {
    let dir = tempfile::tempdir().expect("tempdir");
    let auto = AutoBackend::new(
        SocketBackend::new(SocketConfig {
            path: dir.path().join("none"),
            timeout: Duration::from_secs(1),
        }),
        fake_cli(dir.path()),
    );
    assert!(matches!(auto.ping().await, Err(BackendError::Unavailable)));
    assert_eq!(auto.health().await, Health::down("socket"));
}
