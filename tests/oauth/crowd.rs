//! Nobody can crowd the owner out: strangers on many addresses filling every consent place still
//! leave the owner's request (from the gateway's machine) open, and one address holds only a
//! small share of the registry in clients never approved. Addresses are made with
//! `X-Forwarded-For` through a trusted proxy (the test itself, on 127.0.0.1).

use super::abuse::{guess_from, open_from, proxied, register_from};
use super::*;

/// A gateway believing 127.0.0.1's `X-Forwarded-For`, with a registry of its own (these tests
/// register hundreds of apps; the siblings share one).
async fn crowded(dir: &tempfile::TempDir) -> Gateway {
    let data_dir = dir.path().display().to_string();
    proxied(|s| s.data_dir = data_dir).await
}

/// Strangers take every one of the 1,024 consent places: 256 apps (each may hold 4 requests),
/// opened from 64 addresses (each may hold 16).
async fn fill_every_place(gw: &Gateway, prefix: &str) {
    let mut apps = Vec::new();
    for a in 0..26 {
        for _ in 0..10 {
            let v: Value = register_from(gw, &format!("192.0.2.{a}"))
                .await
                .json()
                .await
                .expect("json");
            apps.push(v["client_id"].as_str().expect("client_id").to_owned());
        }
    }
    let mut opening = tokio::task::JoinSet::new();
    for a in 0..64 {
        let base = gw.base.clone();
        let mine = apps[a * 4..a * 4 + 4].to_vec();
        let from = format!("{prefix}.{a}");
        opening.spawn(async move {
            let mut opened = 0;
            for app in &mine {
                for _ in 0..4 {
                    opened += u32::from(open_at(&base, &from, app).await == 200);
                }
            }
            opened
        });
    }
    let opened: u32 = opening.join_all().await.iter().sum();
    assert_eq!(opened, 1024);
    // (with an app of its own: one app holds only 4 places, its own oldest going first)
    let (status, page, _) = open_from(gw, "198.51.100.77", &apps[256]).await;
    assert_eq!(status, 503, "one more stranger is refused: {page}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strangers_filling_every_consent_place_cannot_fail_the_owners_request() {
    let dir = tempfile::tempdir().expect("temp dir");
    let gw = crowded(&dir).await;
    let owner_app = public_client(&gw).await;
    fill_every_place(&gw, "203.0.113").await;
    // The owner, on the gateway's machine, still opens a consent page, and approves.
    let ch = challenge(VERIFIER);
    let (status, html, cookie, _) = authorize(&gw, &auth_params(&owner_app, &ch)).await;
    assert_eq!(status, 200, "{html}");
    let (status, _) = consent(
        &gw,
        &html,
        &cookie.expect("cookie"),
        PASS,
        "read",
        "approve",
    )
    .await;
    assert_eq!(status, 303);
}

/// GET /authorize at `base` from `from`: the status.
async fn open_at(base: &str, from: &str, client_id: &str) -> u16 {
    let ch = challenge(VERIFIER);
    http()
        .get(format!("{base}/authorize"))
        .header("x-forwarded-for", from)
        .query(&auth_params(client_id, &ch))
        .send()
        .await
        .expect("authorize")
        .status()
        .as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_address_the_owner_approved_from_stays_the_owners() {
    let dir = tempfile::tempdir().expect("temp dir");
    let gw = crowded(&dir).await;
    let app = public_client(&gw).await;
    let (_, html, cookie) = open_from(&gw, "198.51.100.20", &app).await;
    let (status, page) = guess_from(&gw, "198.51.100.20", &html, &cookie, PASS).await;
    assert_eq!(status, 303, "{page}");
    fill_every_place(&gw, "203.0.114").await;
    let (status, html, cookie) = open_from(&gw, "198.51.100.20", &app).await;
    assert_eq!(status, 200, "{html}");
    let (status, page) = guess_from(&gw, "198.51.100.20", &html, &cookie, PASS).await;
    assert_eq!(status, 303, "{page}");
}

#[tokio::test]
async fn one_address_holds_a_small_share_of_unapproved_clients() {
    // 40 places: one address may hold 2 unapproved (5%, at least 2). A registry of its own: the
    // siblings fill the shared one.
    let dir = tempfile::tempdir().expect("temp dir");
    let data_dir = dir.path().display().to_string();
    let gw = proxied(|s| {
        s.data_dir = data_dir;
        s.oauth.max_clients = 40;
    })
    .await;
    let first: Value = register_from(&gw, "203.0.113.5")
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(register_from(&gw, "203.0.113.5").await.status(), 201);
    let res = register_from(&gw, "203.0.113.5").await;
    assert_eq!(res.status(), 429);
    let v: Value = res.json().await.expect("json");
    assert_eq!(v["error"], "temporarily_unavailable");
    assert_eq!(
        v["error_description"],
        "this address holds too many clients not yet approved; approve or wait for them to expire (an hour)"
    );
    assert_eq!(
        register_from(&gw, "203.0.113.6").await.status(),
        201,
        "another address"
    );
    // Approved, a client no longer counts against its address.
    let client_id = first["client_id"].as_str().expect("client_id");
    code_for(&gw, client_id, "read").await;
    assert_eq!(register_from(&gw, "203.0.113.5").await.status(), 201);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rotating_forwarded_addresses_cannot_lift_the_hourly_ceiling_of_guesses() {
    let gw = proxied(|_| {}).await;
    let app = public_client(&gw).await;
    // A local process behind the trusted proxy names a new address for every guess.
    let mut statuses = Vec::new();
    for a in 0..21 {
        let from = format!("203.0.113.{a}");
        let (_, html, cookie) = open_from(&gw, &from, &app).await;
        let (status, page) = guess_from(&gw, &from, &html, &cookie, "wrong guess").await;
        statuses.push(status);
        if status == 429 {
            assert!(
                page.contains("The gateway has checked too many passphrases this hour."),
                "{page}"
            );
        }
    }
    assert_eq!(statuses[..20], [401; 20]);
    assert_eq!(statuses[20], 429, "the 21st hash of the hour");
    // The owner, on the gateway's machine, has a budget of its own.
    let ch = challenge(VERIFIER);
    let (status, html, cookie, _) = authorize(&gw, &auth_params(&app, &ch)).await;
    assert_eq!(status, 200, "{html}");
    let (status, _) = consent(
        &gw,
        &html,
        &cookie.expect("cookie"),
        PASS,
        "read",
        "approve",
    )
    .await;
    assert_eq!(status, 303);
}
