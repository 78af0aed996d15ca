//! The consent page as a browser sends it, not as a test client would: the form's POST carries the
//! `Origin` a browser gives it (`null` under a privacy-preserving referrer policy, or the page's
//! own origin), refusals are pages a person can read, the page says what the person is agreeing
//! to, and the loopback name a client was given is the one it is told back. The flow in a real
//! headless Chromium is in tests/browser.rs.

use super::*;

/// POST the consent form of `html` like a browser: with `origin` (None: no header) and `host`
/// (None: the one reqwest sets). (status, content-type, Location, body).
async fn post_consent(
    gw: &Gateway,
    html: &str,
    cookie: &str,
    origin: Option<&str>,
    role: &str,
    pass: &str,
) -> (u16, String, Option<String>, String) {
    let form = [
        ("request_id", field(html, "request_id")),
        ("csrf", field(html, "csrf")),
        ("role", role.into()),
        ("passphrase", pass.into()),
        ("action", "approve".into()),
    ];
    let mut req = http()
        .post(format!("{}/authorize", gw.base))
        .header("cookie", cookie)
        .form(&form);
    if let Some(origin) = origin {
        req = req.header("origin", origin);
    }
    answer(req).await
}

async fn answer(req: reqwest::RequestBuilder) -> (u16, String, Option<String>, String) {
    let res = req.send().await.expect("answer");
    let header = |name: &str| {
        res.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(String::from)
    };
    let (ct, location) = (
        header("content-type").unwrap_or_default(),
        header("location"),
    );
    (
        res.status().as_u16(),
        ct,
        location,
        res.text().await.unwrap_or_default(),
    )
}

async fn consent_page(gw: &Gateway) -> (String, String) {
    let client_id = public_client(gw).await;
    let ch = challenge(VERIFIER);
    let (status, html, cookie, _) = authorize(gw, &auth_params(&client_id, &ch)).await;
    assert_eq!(status, 200, "{html}");
    (html, cookie.expect("csrf cookie"))
}

#[tokio::test]
async fn the_form_posted_with_origin_null_is_approved() {
    // The default config, as a person runs it: only the passphrase is set.
    let gw = oauth_gateway(|_| {}).await;
    let (html, cookie) = consent_page(&gw).await;
    let (status, _, location, body) =
        post_consent(&gw, &html, &cookie, Some("null"), "write", PASS).await;
    assert_eq!(status, 303, "{body}");
    let q = query(&location.expect("redirect to the app"));
    assert_eq!(
        (q["state"].as_str(), q.contains_key("code")),
        ("st4te", true)
    );
    // The page's own origin (what a browser sends under `same-origin`) is accepted too.
    let (html, cookie) = consent_page(&gw).await;
    let (status, ..) = post_consent(&gw, &html, &cookie, Some(&gw.base), "read", PASS).await;
    assert_eq!(status, 303);
    // The consent page no longer asks browsers to hide its origin from its own form.
    let res = http()
        .get(format!("{}/authorize", gw.base))
        .send()
        .await
        .expect("page");
    assert_eq!(res.headers()["referrer-policy"], "same-origin");
}

#[tokio::test]
async fn null_and_foreign_origins_are_refused_elsewhere() {
    let gw = oauth_gateway(|_| {}).await;
    // `null` is the consent form's alone: a sandboxed page elsewhere cannot use it on /token,
    // /register or /mcp.
    for path in ["/token", "/register", "/mcp", "/revoke"] {
        let (status, _, _, body) = answer(
            http()
                .post(format!("{}{path}", gw.base))
                .header("origin", "null")
                .body("x"),
        )
        .await;
        assert_eq!(
            (status, body.as_str()),
            (403, "Origin not allowed\n"),
            "{path}"
        );
    }
    // A foreign site posting the consent form gets a page that says what happened.
    let (html, cookie) = consent_page(&gw).await;
    let (status, ct, location, body) = post_consent(
        &gw,
        &html,
        &cookie,
        Some("https://evil.example"),
        "write",
        PASS,
    )
    .await;
    assert_eq!((status, location), (403, None));
    assert!(ct.starts_with("text/html"), "{ct}");
    assert!(
        body.contains("<title>Request from another site</title>")
            && body.contains("Open the connector link from the app again"),
        "{body}"
    );
    // And a CSRF cookie is still required with `Origin: null`.
    let (status, ct, _, body) =
        post_consent(&gw, &html, "other=1", Some("null"), "write", PASS).await;
    assert_eq!(status, 403);
    assert!(
        ct.starts_with("text/html") && body.contains("security cookie"),
        "{body}"
    );
}

#[tokio::test]
async fn a_wrong_passphrase_keeps_the_chosen_role() {
    let gw = oauth_gateway(|_| {}).await;
    let (html, cookie) = consent_page(&gw).await;
    let (status, ct, _, again) =
        post_consent(&gw, &html, &cookie, Some("null"), "write", "not it at all").await;
    assert_eq!(status, 401);
    assert!(ct.starts_with("text/html"), "{ct}");
    assert!(
        again.contains("name=\"role\" value=\"write\" checked")
            && !again.contains("value=\"read\" checked"),
        "{again}"
    );
    assert!(again.contains(r#"<p class="msg" role="alert">Wrong passphrase. Try again.</p>"#));
    // The same request can still be approved from the page that came back.
    let (status, ..) = post_consent(&gw, &again, &cookie, Some("null"), "write", PASS).await;
    assert_eq!(status, 303);
}

#[tokio::test]
async fn every_refusal_on_the_way_is_a_page() {
    let gw = oauth_gateway(|_| {}).await;
    let client_id = public_client(&gw).await;
    let ch = challenge(VERIFIER);
    let mut bad_redirect = auth_params(&client_id, &ch);
    bad_redirect[2] = ("redirect_uri", "http://127.0.0.1:9/elsewhere");
    let unknown = auth_params("nobody", &ch);
    let cases: [(&[(&str, &str)], &str); 3] = [
        (&bad_redirect, "is not one it registered"),
        (&unknown, "This app is not known to the gateway"),
        (&[], "The link names no app"),
    ];
    for (params, says) in cases {
        let (status, ct, location, body) =
            answer(http().get(format!("{}/authorize", gw.base)).query(params)).await;
        assert_eq!((status, location), (400, None), "{says}");
        assert!(ct.starts_with("text/html") && body.contains(says), "{body}");
    }
    // An expired (here: already answered) request.
    let (html, cookie) = consent_page(&gw).await;
    assert_eq!(
        post_consent(&gw, &html, &cookie, Some("null"), "read", PASS)
            .await
            .0,
        303
    );
    let (status, ct, _, body) = post_consent(&gw, &html, &cookie, Some("null"), "read", PASS).await;
    assert_eq!(status, 400);
    assert!(
        ct.starts_with("text/html") && body.contains("This request has expired"),
        "{body}"
    );
    // A form that cannot be read.
    let (status, ct, _, body) = answer(
        http()
            .post(format!("{}/authorize", gw.base))
            .header("content-type", "application/x-www-form-urlencoded")
            .body("nothing=here"),
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        ct.starts_with("text/html") && body.contains("could not be read"),
        "{body}"
    );
    // A Host the gateway does not serve (a rebound DNS name): a page on /authorize.
    let (status, ct, _, body) = answer(
        http()
            .get(format!("{}/authorize", gw.base))
            .header("host", "rebound.evil.example"),
    )
    .await;
    assert_eq!(status, 403);
    assert!(
        ct.starts_with("text/html") && body.contains("Unknown address"),
        "{body}"
    );
    // ... and one line elsewhere, on every route, not only /mcp.
    for path in [
        "/register",
        "/.well-known/oauth-authorization-server",
        "/healthz",
    ] {
        let (status, _, _, body) = answer(
            http()
                .get(format!("{}{path}", gw.base))
                .header("host", "rebound.evil.example"),
        )
        .await;
        assert_eq!(
            (status, body.as_str()),
            (403, "Host header is not allowed\n"),
            "{path}"
        );
    }
}

#[tokio::test]
async fn the_page_says_who_asks_what_each_role_sees_and_how_long() {
    let gw = oauth_gateway(|s| {
        s.oauth.access_token_ttl = std::time::Duration::from_secs(15 * 60);
        s.oauth.refresh_token_ttl = std::time::Duration::from_secs(7 * 86400);
    })
    .await;
    let (html, cookie) = consent_page(&gw).await;
    for says in [
        "<strong>Test &lt;b&gt;app&lt;/b&gt;</strong> <span class=\"warn\">(a name the app gave itself: not verified)</span>",
        "your browser goes back to <strong>127.0.0.1</strong> (an app on this computer):<br><code class=\"url\">http://127.0.0.1:4567/callback</code>",
        "<em>your clipboard history included</em>",
        "Changes nothing.",
        "may add, change, move and delete items in the tabs under <code>mcp/</code>. Your other tabs stay read-only.",
        "Access lasts 15 minutes at a time, and the app renews it while it uses it; after 7 days without use it ends.",
        "<code>copyq-mcp clients revoke</code>",
        "name=\"role\" value=\"read\" checked",
        "Secrets in your tabs outside <code>mcp/</code> (keys, tokens, card numbers) are masked before they leave this computer.",
        "Images cannot be masked: the app may see the screenshots and pictures in the tabs it reads, your clipboard history included (<code>[privacy] external_images</code>).",
    ] {
        assert!(html.contains(says), "missing {says:?} in {html}");
    }
    // Plain http on loopback: a Secure cookie would not be sent back.
    assert!(!cookie.contains("Secure"));
}

#[tokio::test]
async fn the_cookie_is_secure_behind_an_https_public_url() {
    let gw = oauth_gateway(|s| s.server.public_url = "https://copyq.example.com".into()).await;
    let client_id = public_client(&gw).await;
    let ch = challenge(VERIFIER);
    let res = http()
        .get(format!("{}/authorize", gw.base))
        .header("host", "copyq.example.com")
        .query(&auth_params(&client_id, &ch))
        .send()
        .await
        .expect("page");
    assert_eq!(
        res.status(),
        200,
        "the public URL's host is allowed without listing it"
    );
    let cookie = res.headers()["set-cookie"].to_str().expect("cookie");
    assert!(cookie.ends_with("; Secure"), "{cookie}");
}

#[tokio::test]
async fn invisible_characters_in_an_app_name_are_refused() {
    let gw = oauth_gateway(|_| {}).await;
    for name in ["Clau\u{202E}de", "Claude\u{200B}", "Cl\u{2066}aude"] {
        let (status, v) = register(
            &gw,
            json!({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none", "client_name": name}),
        )
        .await;
        assert_eq!(status, 400, "{name:?}");
        assert_eq!(v["error"], "invalid_client_metadata");
        let c = name
            .chars()
            .find(|c| !c.is_ascii())
            .expect("the hidden character");
        assert_eq!(
            v["error_description"],
            format!(
                "client_name holds an invisible or direction-changing character (U+{:04X})",
                u32::from(c)
            )
        );
    }
}

/// GET `path` with `host` as the Host header: (status, headers, body).
async fn get_as(gw: &Gateway, host: &str, path: &str) -> (u16, reqwest::header::HeaderMap, String) {
    let res = http()
        .get(format!("{}{path}", gw.base))
        .header("host", host)
        .send()
        .await
        .expect("answer");
    let (status, headers) = (res.status().as_u16(), res.headers().clone());
    (status, headers, res.text().await.unwrap_or_default())
}

#[tokio::test]
async fn every_loopback_name_is_its_own_resource() {
    let gw = oauth_gateway(|_| {}).await;
    let port = gw.base.rsplit(':').next().expect("port").to_owned();
    for name in ["localhost", "127.0.0.1", "[::1]"] {
        let base = format!("http://{name}:{port}");
        let host = format!("{name}:{port}");
        let (status, headers, _) = get_as(&gw, &host, "/mcp").await;
        assert_eq!(status, 401);
        assert_eq!(
            headers["www-authenticate"],
            format!(
                r#"Bearer resource_metadata="{base}/.well-known/oauth-protected-resource/mcp""#
            )
            .as_str()
        );
        let (_, _, body) = get_as(&gw, &host, "/.well-known/oauth-protected-resource/mcp").await;
        let pr: Value = serde_json::from_str(&body).expect("json");
        assert_eq!(pr["resource"], format!("{base}/mcp"));
        assert_eq!(pr["authorization_servers"], json!([base]));
        let (_, _, body) = get_as(&gw, &host, "/.well-known/oauth-authorization-server").await;
        let asm: Value = serde_json::from_str(&body).expect("json");
        assert_eq!(asm["issuer"], base);
        assert_eq!(asm["token_endpoint"], format!("{base}/token"));
    }
    // A name that is not loopback gets the bound address, never its own echo.
    let (_, _, body) = get_as(
        &gw,
        "localhost:1",
        "/.well-known/oauth-authorization-server",
    )
    .await;
    let asm: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(asm["issuer"], gw.base);
}

#[tokio::test]
async fn a_client_given_localhost_gets_a_token_for_localhost() {
    let gw = oauth_gateway(|_| {}).await;
    let port = gw.base.rsplit(':').next().expect("port").to_owned();
    let local = format!("http://localhost:{port}");
    let client_id = public_client(&gw).await;
    let ch = challenge(VERIFIER);
    let res = http()
        .get(format!("{local}/authorize"))
        .query(&auth_params(&client_id, &ch))
        .send()
        .await
        .expect("page");
    let cookie = res.headers()["set-cookie"]
        .to_str()
        .expect("cookie")
        .split(';')
        .next()
        .expect("cookie")
        .to_owned();
    let html = res.text().await.expect("page");
    let form = [
        ("request_id", field(&html, "request_id")),
        ("csrf", field(&html, "csrf")),
        ("role", "read".into()),
        ("passphrase", PASS.into()),
        ("action", "approve".into()),
    ];
    let res = http()
        .post(format!("{local}/authorize"))
        .header("cookie", cookie)
        .header("origin", &local)
        .form(&form)
        .send()
        .await
        .expect("consent");
    assert_eq!(res.status(), 303);
    let q = query(res.headers()["location"].to_str().expect("location"));
    assert_eq!(q["iss"], local, "iss names the issuer the client used");
    let res = http()
        .post(format!("{local}/token"))
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", &q["code"]),
            ("redirect_uri", REDIRECT),
            ("client_id", &client_id),
            ("code_verifier", VERIFIER),
            ("resource", &format!("{local}/mcp")),
        ])
        .send()
        .await
        .expect("token");
    assert_eq!(res.status(), 200);
    let access = res.json::<Value>().await.expect("json")["access_token"]
        .as_str()
        .expect("token")
        .to_owned();
    // Bound to http://localhost:PORT/mcp, and served under each loopback name.
    let res = http()
        .post(format!("{local}/mcp"))
        .bearer_auth(&access)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string())
        .send()
        .await
        .expect("mcp");
    assert_eq!(res.status(), 200);
    assert_eq!(mcp_status(&gw, &access).await, 200);
}

#[tokio::test]
async fn a_public_url_stays_authoritative_on_loopback() {
    let gw = oauth_gateway(|s| s.server.public_url = "https://copyq.example.com".into()).await;
    let port = gw.base.rsplit(':').next().expect("port").to_owned();
    let (_, headers, _) = get_as(&gw, &format!("localhost:{port}"), "/mcp").await;
    assert_eq!(
        headers["www-authenticate"],
        r#"Bearer resource_metadata="https://copyq.example.com/.well-known/oauth-protected-resource/mcp""#
    );
}

#[tokio::test]
async fn two_consent_pages_open_at_once_are_both_approvable() {
    // The same link opened twice (two tabs, or a client that opened it twice): the browser holds
    // both pages' cookies, and the first page still works.
    let gw = oauth_gateway(|_| {}).await;
    let client_id = public_client(&gw).await;
    let ch = challenge(VERIFIER);
    let (_, first, first_cookie, _) = authorize(&gw, &auth_params(&client_id, &ch)).await;
    let (_, second, second_cookie, _) = authorize(&gw, &auth_params(&client_id, &ch)).await;
    // As a browser keeps them: a cookie of the same name replaces the earlier one.
    let mut jar: Vec<(String, String)> = Vec::new();
    for c in [
        first_cookie.expect("cookie"),
        second_cookie.expect("cookie"),
    ] {
        let (name, value) = c.split_once('=').expect("name=value");
        jar.retain(|(n, _)| n != name);
        jar.push((name.to_owned(), value.to_owned()));
    }
    let jar = jar
        .iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join("; ");
    let (status, _, _, body) = post_consent(&gw, &first, &jar, Some("null"), "read", PASS).await;
    assert_eq!(status, 303, "{body}");
    let (status, ..) = post_consent(&gw, &second, &jar, Some("null"), "read", PASS).await;
    assert_eq!(status, 303);
}
