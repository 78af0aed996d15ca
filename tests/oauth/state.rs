//! The state database under load from elsewhere: while another process (a `copyq-mcp` owner
//! command, a backup) holds its write lock, requests are still answered, since the bearer check
//! only reads (off the async workers) and a grant's last use is written later, in a batch, on a
//! connection of its own. And a database file replaced or removed under the running gateway is
//! noticed: every state read and change is refused until a restart, rather than served from the
//! old, unlinked file where revocations written to the new one would go unseen.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_are_answered_while_another_process_holds_the_write_lock() {
    // A database of its own: the lock must not stall the sibling tests that share one.
    let dir = tempfile::tempdir().expect("temp dir");
    let gw = oauth_gateway(|s| s.data_dir = dir.path().display().to_string()).await;
    let client_id = public_client(&gw).await;
    let code = code_for(&gw, &client_id, "read").await;
    let (_, tokens) = exchange(&gw, &client_id, &code, VERIFIER).await;
    let access = tokens["access_token"].as_str().expect("access").to_owned();
    assert_eq!(mcp_status(&gw, &access).await, 200);
    // Another process takes the write lock and keeps it for 8 s.
    let db = gw.settings.data_dir().join("copyq-mcp.db");
    let (locked_tx, locked_rx) = std::sync::mpsc::channel();
    let holder = std::thread::spawn(move || {
        let conn = rusqlite::Connection::open(db).expect("db");
        conn.execute_batch("BEGIN IMMEDIATE").expect("write lock");
        locked_tx.send(()).expect("signal");
        std::thread::sleep(Duration::from_secs(8));
        conn.execute_batch("COMMIT").expect("release");
    });
    locked_rx.recv().expect("locked");
    // Sixteen authenticated requests, all answered while the lock is still held (each would wait
    // out the 5 s busy timeout on a write, one after another, behind the store's one connection).
    let started = std::time::Instant::now();
    let mut calls = tokio::task::JoinSet::new();
    for _ in 0..16 {
        let (url, access) = (gw.url.clone(), access.clone());
        calls.spawn(async move {
            raw_post(
                &url,
                Some(&access),
                json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
            )
            .await
            .0
        });
    }
    let statuses = calls.join_all().await;
    let answered_in = started.elapsed();
    assert_eq!(statuses, vec![200; 16]);
    assert!(
        !holder.is_finished(),
        "answered only after the lock was released ({answered_in:?})"
    );
    holder.join().expect("holder");
}

#[tokio::test]
async fn a_replaced_database_is_noticed_and_nothing_is_served_from_the_old_one() {
    let dir = tempfile::tempdir().expect("temp dir");
    let gw = oauth_gateway(|s| s.data_dir = dir.path().display().to_string()).await;
    let client_id = public_client(&gw).await;
    let code = code_for(&gw, &client_id, "read").await;
    let (_, tokens) = exchange(&gw, &client_id, &code, VERIFIER).await;
    let access = tokens["access_token"].as_str().expect("access").to_owned();
    assert_eq!(mcp_status(&gw, &access).await, 200);
    // The owner deletes the database; a `copyq-mcp` command then makes a new one.
    for name in ["copyq-mcp.db", "copyq-mcp.db-wal", "copyq-mcp.db-shm"] {
        let _ = std::fs::remove_file(dir.path().join(name));
    }
    drop(Store::open(dir.path()).expect("a new database"));
    assert_eq!(mcp_status(&gw, &access).await, 503, "the old file's grant");
    let (status, v) = register(
        &gw,
        json!({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"}),
    )
    .await;
    assert_eq!(status, 503, "{v}");
    assert_eq!(v["error"], "temporarily_unavailable");
}
