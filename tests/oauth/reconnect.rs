//! An afternoon of local reconnecting: an app on this machine registering again (as Codex with
//! `--oauth-client-registration dcr` does on every login, each time on a new callback port)
//! takes over its earlier registration that was never approved, uncounted, so it never meets the
//! per-address limit; a remote address repeating the same registration is counted as before,
//! and an approved client is never taken over.

use super::*;

/// A gateway with a registration limit of 2 an hour, believing `X-Forwarded-For` from
/// 127.0.0.1 (the test), with a registry of its own.
async fn strict(dir: &tempfile::TempDir) -> Gateway {
    let data_dir = dir.path().display().to_string();
    oauth_gateway(move |s| {
        s.server.trusted_proxies = vec!["127.0.0.1".into()];
        s.oauth.registrations_per_hour = 2;
        s.data_dir = data_dir;
    })
    .await
}

/// Register `name` with a loopback callback on `port`, from `from` (or this machine): (status,
/// client id).
async fn register_as(gw: &Gateway, from: Option<&str>, name: &str, port: u16) -> (u16, String) {
    let mut req = http().post(format!("{}/register", gw.base));
    if let Some(from) = from {
        req = req.header("x-forwarded-for", from);
    }
    let res = req
        .json(&json!({
            "client_name": name,
            "redirect_uris": [format!("http://127.0.0.1:{port}/callback")],
            "token_endpoint_auth_method": "none",
        }))
        .send()
        .await
        .expect("register");
    let status = res.status().as_u16();
    let v: Value = res.json().await.unwrap_or(Value::Null);
    (
        status,
        v["client_id"].as_str().unwrap_or_default().to_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_reconnects_reuse_their_registration_and_are_not_counted() {
    let dir = tempfile::tempdir().expect("temp dir");
    let gw = strict(&dir).await;
    let (status, first) = register_as(&gw, None, "Codex", 40000).await;
    assert_eq!(status, 201);
    // Forty reconnects on other ports: the same client, never refused.
    for port in 40001..40041 {
        let (status, id) = register_as(&gw, None, "Codex", port).await;
        assert_eq!((status, id.as_str()), (201, first.as_str()), "port {port}");
    }
    let store = Store::open(&gw.settings.data_dir()).expect("store");
    let waiting = store.unapproved_clients().expect("store");
    assert_eq!(waiting.len(), 1, "the registry did not grow");
    let kept: Vec<String> = (40033..=40040)
        .rev()
        .map(|p| format!("http://127.0.0.1:{p}/callback"))
        .collect();
    assert_eq!(
        waiting[0].redirect_uris, kept,
        "the latest callbacks, newest first"
    );
    // The latest port works for a consent request, and so does the one before (two copies of
    // an app connecting at once); one long gone does not.
    let ch = challenge(VERIFIER);
    for (port, status) in [(40040, 200), (40039, 200), (40001, 400)] {
        let uri = format!("http://127.0.0.1:{port}/callback");
        let mut params = auth_params(&first, &ch);
        params[2] = ("redirect_uri", &uri);
        assert_eq!(authorize(&gw, &params).await.0, status, "{uri}");
    }
    // Another app from this machine is a new registration, and counted: the second of two.
    let (status, other) = register_as(&gw, None, "Claude Code", 40100).await;
    assert_eq!(status, 201);
    assert_ne!(other, first);
    assert_eq!(register_as(&gw, None, "Inspector", 40101).await.0, 429);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remote_repeats_are_counted_and_approved_clients_are_kept() {
    let dir = tempfile::tempdir().expect("temp dir");
    let gw = strict(&dir).await;
    let from = Some("203.0.113.9");
    let (_, a) = register_as(&gw, from, "Codex", 40000).await;
    let (_, b) = register_as(&gw, from, "Codex", 40000).await;
    assert_ne!(a, b, "a remote repeat is a registration of its own");
    assert_eq!(register_as(&gw, from, "Codex", 40000).await.0, 429);
    // An approved client is not taken over by a local repeat of its registration.
    let approved = public_client(&gw).await;
    let code = code_for(&gw, &approved, "read").await;
    assert_eq!(exchange(&gw, &approved, &code, VERIFIER).await.0, 200);
    let res = http()
        .post(format!("{}/register", gw.base))
        .json(&json!({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none", "client_name": "Test <b>app</b>"}))
        .send()
        .await
        .expect("register");
    assert_eq!(res.status(), 201);
    let v: Value = res.json().await.expect("json");
    assert_ne!(v["client_id"].as_str(), Some(approved.as_str()));
}
