//! The OAuth endpoints under attack, each case with the weakness it closes: raced passphrase
//! guesses, a stranger locking the owner out or evicting their consent page, registrations that
//! fill the registry, and the rate-limit bucket a refresh used to reset. Clients at different
//! addresses are made with `X-Forwarded-For` through a trusted proxy (the test itself, on
//! 127.0.0.1), which also proves `server.trusted_proxies`.

use super::*;

/// A gateway that believes `X-Forwarded-For` from 127.0.0.1.
pub(super) async fn proxied(tweak: impl FnOnce(&mut copyq_mcp::config::Settings)) -> Gateway {
    oauth_gateway(|s| {
        s.server.trusted_proxies = vec!["127.0.0.1".into()];
        tweak(s);
    })
    .await
}

/// GET /authorize from `from` for `client_id`: (status, page, cookie).
pub(super) async fn open_from(gw: &Gateway, from: &str, client_id: &str) -> (u16, String, String) {
    let ch = challenge(VERIFIER);
    let res = http()
        .get(format!("{}/authorize", gw.base))
        .header("x-forwarded-for", from)
        .query(&auth_params(client_id, &ch))
        .send()
        .await
        .expect("authorize");
    let status = res.status().as_u16();
    let cookie = res
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|c| c.split(';').next())
        .unwrap_or_default()
        .to_owned();
    (status, res.text().await.unwrap_or_default(), cookie)
}

/// POST the form of `html` from `from`: (status, page).
pub(super) async fn guess_from(
    gw: &Gateway,
    from: &str,
    html: &str,
    cookie: &str,
    pass: &str,
) -> (u16, String) {
    guess_at(&gw.base, from, html, cookie, pass).await
}

async fn guess_at(base: &str, from: &str, html: &str, cookie: &str, pass: &str) -> (u16, String) {
    let form = [
        ("request_id", field(html, "request_id")),
        ("csrf", field(html, "csrf")),
        ("role", "read".into()),
        ("passphrase", pass.into()),
        ("action", "approve".into()),
    ];
    let res = http()
        .post(format!("{base}/authorize"))
        .header("x-forwarded-for", from)
        .header("origin", "null")
        .header("cookie", cookie)
        .form(&form)
        .send()
        .await
        .expect("consent");
    (res.status().as_u16(), res.text().await.unwrap_or_default())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn parallel_guesses_are_counted_before_they_are_hashed() {
    let gw = proxied(|_| {}).await;
    let client_id = public_client(&gw).await;
    let (_, html, cookie) = open_from(&gw, "203.0.113.7", &client_id).await;
    let mut guesses = tokio::task::JoinSet::new();
    for i in 0..32 {
        let (base, html, cookie) = (gw.base.clone(), html.clone(), cookie.clone());
        guesses.spawn(async move {
            guess_at(
                &base,
                "203.0.113.7",
                &html,
                &cookie,
                &format!("wrong guess {i}"),
            )
            .await
        });
    }
    let answers = guesses.join_all().await;
    // Only the tries that took a slot were hashed; every other one was refused first.
    let hashed = answers
        .iter()
        .filter(|(_, page)| page.contains("Wrong passphrase.") || page.contains("was cancelled"))
        .count();
    assert!(hashed <= 5, "{hashed} of 32 parallel guesses were checked");
    for (status, page) in &answers {
        assert!(matches!(*status, 401 | 429 | 400), "{status}: {page}");
    }
}

#[tokio::test]
async fn a_stranger_cannot_lock_the_owner_out() {
    let gw = proxied(|_| {}).await;
    let owner_app = public_client(&gw).await;
    let (_, owner_page, owner_cookie) = open_from(&gw, "198.51.100.20", &owner_app).await;
    // A stranger guesses until refused, on requests of their own.
    let junk = public_client(&gw).await;
    let mut refused = false;
    for _ in 0..4 {
        let (_, html, cookie) = open_from(&gw, "203.0.113.66", &junk).await;
        for _ in 0..5 {
            let (status, _) = guess_from(&gw, "203.0.113.66", &html, &cookie, "guess guess").await;
            refused |= status == 429;
        }
    }
    assert!(refused, "the stranger's address is slowed down");
    // The owner, elsewhere, approves at once.
    let (status, page) = guess_from(&gw, "198.51.100.20", &owner_page, &owner_cookie, PASS).await;
    assert_eq!(status, 303, "{page}");
}

#[tokio::test]
async fn a_stranger_cannot_evict_the_owners_consent_page() {
    let gw = proxied(|_| {}).await;
    let owner_app = public_client(&gw).await;
    let (_, owner_page, owner_cookie) = open_from(&gw, "198.51.100.20", &owner_app).await;
    // 300 consent requests from 15 addresses (the per-address limit stops each at 20).
    let junk = public_client(&gw).await;
    let mut opened = 0;
    for a in 0..15 {
        for _ in 0..20 {
            if open_from(&gw, &format!("203.0.113.{a}"), &junk).await.0 == 200 {
                opened += 1;
            }
        }
    }
    assert_eq!(opened, 300);
    let (status, page) = guess_from(&gw, "198.51.100.20", &owner_page, &owner_cookie, PASS).await;
    assert_eq!(status, 303, "{page}");
}

#[tokio::test]
async fn one_address_cannot_open_requests_without_end() {
    let gw = proxied(|_| {}).await;
    let app = public_client(&gw).await;
    let mut statuses = Vec::new();
    for _ in 0..21 {
        statuses.push(open_from(&gw, "203.0.113.99", &app).await.0);
    }
    assert_eq!(statuses[..20], [200; 20]);
    assert_eq!(statuses[20], 429);
    // Another address is not affected.
    assert_eq!(open_from(&gw, "203.0.113.100", &app).await.0, 200);
}

#[tokio::test]
async fn a_client_holds_few_open_requests_and_its_oldest_goes_first() {
    let gw = proxied(|_| {}).await;
    let app = public_client(&gw).await;
    let (_, first, first_cookie) = open_from(&gw, "198.51.100.1", &app).await;
    for _ in 0..4 {
        assert_eq!(open_from(&gw, "198.51.100.1", &app).await.0, 200);
    }
    let (status, page) = guess_from(&gw, "198.51.100.1", &first, &first_cookie, PASS).await;
    assert_eq!(status, 400, "the fifth request replaced the first: {page}");
    assert!(page.contains("This request has expired"));
}

pub(super) async fn register_from(gw: &Gateway, from: &str) -> reqwest::Response {
    http()
        .post(format!("{}/register", gw.base))
        .header("x-forwarded-for", from)
        .json(&json!({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none", "client_name": "junk"}))
        .send()
        .await
        .expect("register")
}

#[tokio::test]
async fn registration_is_limited_per_address() {
    let gw = proxied(|_| {}).await;
    for _ in 0..10 {
        assert_eq!(register_from(&gw, "203.0.113.5").await.status(), 201);
    }
    let res = register_from(&gw, "203.0.113.5").await;
    assert_eq!(res.status(), 429);
    assert_eq!(res.headers()["retry-after"], "120");
    let v: Value = res.json().await.expect("json");
    assert_eq!(v["error"], "temporarily_unavailable");
    assert_eq!(register_from(&gw, "203.0.113.6").await.status(), 201);
}

#[tokio::test]
async fn clients_never_approved_are_forgotten_and_cannot_fill_the_registry() {
    // A registry of its own: the sibling tests share one (the edge gateways' data dir).
    let dir = tempfile::tempdir().expect("temp dir");
    let gw = proxied(|s| {
        s.oauth.max_clients = 3;
        s.data_dir = dir.path().display().to_string();
    })
    .await;
    let approved = public_client(&gw).await;
    let code = code_for(&gw, &approved, "read").await;
    assert_eq!(exchange(&gw, &approved, &code, VERIFIER).await.0, 200);
    for a in 0..2 {
        assert_eq!(
            register_from(&gw, &format!("203.0.113.{a}")).await.status(),
            201
        );
    }
    // Full: a real app cannot register...
    let v: Value = register_from(&gw, "198.51.100.3")
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(v["error"], "invalid_client_metadata");
    // ...until the junk is an hour old, when it is forgotten and the app gets in.
    let db = rusqlite::Connection::open(gw.settings.data_dir().join("copyq-mcp.db")).expect("db");
    db.execute(
        "UPDATE clients SET created = created - 3601 WHERE client_id != ?1",
        [&approved],
    )
    .expect("age the junk");
    assert_eq!(register_from(&gw, "198.51.100.3").await.status(), 201);
    let store = Store::open(&gw.settings.data_dir()).expect("store");
    assert!(
        store.client(&approved).expect("store").is_some(),
        "the approved client stays"
    );
    assert_eq!(store.unapproved_clients().expect("store").len(), 1);
}

#[tokio::test]
async fn a_refresh_does_not_refill_the_rate_limit() {
    let gw = proxied(|s| {
        s.limits.burst = 2;
        s.limits.requests_per_minute = 1;
    })
    .await;
    let client_id = public_client(&gw).await;
    let code = code_for(&gw, &client_id, "read").await;
    let (_, first) = exchange(&gw, &client_id, &code, VERIFIER).await;
    let access = first["access_token"].as_str().expect("access");
    assert_eq!(mcp_status(&gw, access).await, 200);
    assert_eq!(mcp_status(&gw, access).await, 200);
    assert_eq!(mcp_status(&gw, access).await, 429);
    let (status, renewed, _) = token(
        &gw,
        &[
            ("grant_type", "refresh_token"),
            (
                "refresh_token",
                first["refresh_token"].as_str().expect("refresh"),
            ),
            ("client_id", &client_id),
        ],
    )
    .await;
    assert_eq!(status, 200);
    let renewed = renewed["access_token"].as_str().expect("access");
    assert_ne!(renewed, access);
    assert_eq!(
        mcp_status(&gw, renewed).await,
        429,
        "the grant's bucket, not the token's"
    );
}
