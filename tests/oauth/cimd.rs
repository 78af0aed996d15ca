//! Client-ID metadata documents against a real HTTPS server on loopback serving good and hostile
//! documents: the consent page names the verified host, redirect URIs match exactly, cache headers
//! are honoured, and wrong ids, huge or slow documents, redirects elsewhere and private addresses
//! are refused with a page. The gateway is told to trust the test server's certificate and, for
//! all but one case, to allow a loopback address.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::*;

#[derive(Clone, Default)]
struct Hits(Arc<std::sync::Mutex<HashMap<String, usize>>>);

impl Hits {
    fn of(&self, name: &str) -> usize {
        self.0
            .lock()
            .map(|m| m.get(name).copied().unwrap_or(0))
            .unwrap_or(0)
    }
}

#[derive(Clone)]
struct Docs {
    base: String,
    hits: Hits,
    slow: Arc<AtomicUsize>,
}

fn doc(client_id: &str) -> Value {
    json!({
        "client_id": client_id,
        "client_name": "Doc App",
        "redirect_uris": [REDIRECT],
        "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"],
    })
}

async fn serve_doc(State(d): State<Docs>, Path(name): Path<String>) -> Response {
    if let Ok(mut m) = d.hits.0.lock() {
        *m.entry(name.clone()).or_default() += 1;
    }
    let url = format!("{}/{name}", d.base);
    let json = |v: Value, cache: &'static str| {
        let mut h = HeaderMap::new();
        h.insert(header::CACHE_CONTROL, cache.parse().expect("header"));
        (h, axum::Json(v)).into_response()
    };
    match name.as_str() {
        "good" | "good-again" => json(doc(&url), "public, max-age=600"),
        "nostore" => json(doc(&url), "no-store"),
        "wrong-id" => json(
            doc("https://claude.ai/oauth/mcp-oauth-client-metadata"),
            "no-store",
        ),
        "huge" => {
            let mut v = doc(&url);
            v["padding"] = json!("x".repeat(20_000));
            json(v, "no-store")
        }
        "slow" => {
            d.slow.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_secs(30)).await;
            json(doc(&url), "no-store")
        }
        "elsewhere" => {
            // Same server, another host name: not the host that was asked.
            let other = d.base.replace("localhost", "127.0.0.1");
            (
                StatusCode::FOUND,
                [(header::LOCATION, format!("{other}/good"))],
            )
                .into_response()
        }
        "other-port" => {
            // The same host name on another port: another service.
            let port = d.base.rsplit(':').next().unwrap_or_default();
            let other = d.base.replace(port, "1");
            (
                StatusCode::FOUND,
                [(header::LOCATION, format!("{other}/good"))],
            )
                .into_response()
        }
        "portless" => {
            // As Claude Code's document: loopback callbacks without a port.
            let mut v = doc(&url);
            v["redirect_uris"] = json!(["http://localhost/callback", "http://127.0.0.1/callback"]);
            json(v, "no-store")
        }
        "moved" => (
            StatusCode::FOUND,
            [(header::LOCATION, "/moved-here".to_owned())],
        )
            .into_response(),
        "moved-here" => json(doc(&format!("{}/moved", d.base)), "no-store"),
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

/// An HTTPS server for `localhost` on a free port; (base URL, hits, the CA file, its temp dir).
async fn document_server() -> (String, Hits, std::path::PathBuf, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let generated = copyq_mcp::tls::generate(&["localhost".into()], dir.path()).expect("cert");
    let files = copyq_mcp::tls::TlsFiles {
        cert: generated.cert.clone(),
        key: generated.key.clone(),
    };
    let config = copyq_mcp::tls::load(&files).await.expect("tls config");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let base = format!("https://localhost:{port}");
    let hits = Hits::default();
    let docs = Docs {
        base: base.clone(),
        hits: hits.clone(),
        slow: Arc::new(AtomicUsize::new(0)),
    };
    let app = Router::new()
        .route("/{name}", axum::routing::get(serve_doc))
        .with_state(docs);
    listener.set_nonblocking(true).expect("nonblocking");
    let server = axum_server::from_tcp_rustls(listener, config).expect("server");
    tokio::spawn(server.serve(app.into_make_service()));
    (base, hits, generated.cert, dir)
}

async fn gateway_trusting(ca: &std::path::Path, allow_private: bool) -> Gateway {
    let ca = ca.display().to_string();
    oauth_gateway(move |s| {
        s.oauth.metadata_document_ca_file = ca;
        s.oauth.metadata_document_allow_private = allow_private;
    })
    .await
}

/// GET /authorize for `client_id`: (status, page, cookie).
async fn open(gw: &Gateway, client_id: &str) -> (u16, String, Option<String>) {
    let ch = challenge(VERIFIER);
    let (status, html, cookie, _) = authorize(gw, &auth_params(client_id, &ch)).await;
    (status, html, cookie)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_document_client_connects_named_by_its_host() {
    let (base, hits, ca, _dir) = document_server().await;
    let gw = gateway_trusting(&ca, true).await;
    let asm: Value = http()
        .get(format!(
            "{}/.well-known/oauth-authorization-server",
            gw.base
        ))
        .send()
        .await
        .expect("metadata")
        .json()
        .await
        .expect("json");
    assert_eq!(asm["client_id_metadata_document_supported"], true);
    assert!(
        asm["token_endpoint_auth_methods_supported"]
            .as_array()
            .is_some_and(|m| m.contains(&json!("none")))
    );
    let client_id = format!("{base}/good");
    let (status, html, cookie) = open(&gw, &client_id).await;
    assert_eq!(status, 200, "{html}");
    assert!(
        html.contains("<strong>localhost</strong> <span class=\"ok\">(verified: its identity document is served by localhost)</span>"),
        "{html}"
    );
    assert!(
        !html.contains("Doc App"),
        "the self-given name is not what is trusted"
    );
    let (status, location) = consent(
        &gw,
        &html,
        &cookie.expect("cookie"),
        PASS,
        "write",
        "approve",
    )
    .await;
    assert_eq!(status, 303);
    let code = query(&location.expect("redirect"))["code"].clone();
    let (status, tokens) = exchange(&gw, &client_id, &code, VERIFIER).await;
    assert_eq!(status, 200, "{tokens}");
    let access = tokens["access_token"].as_str().expect("access");
    assert_eq!(mcp_status(&gw, access).await, 200);
    // Cached for its max-age: the second consent page did not fetch it again.
    assert_eq!(open(&gw, &client_id).await.0, 200);
    assert_eq!(hits.of("good"), 1);
    // The owner sees it among the connected apps, by its URL.
    let store = Store::open(&gw.settings.data_dir()).expect("store");
    let client = store.client(&client_id).expect("store").expect("recorded");
    assert_eq!(
        (client.name.as_str(), client.auth_method.as_str()),
        ("localhost", "none")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_store_documents_are_fetched_each_time_and_redirects_must_match() {
    let (base, hits, ca, _dir) = document_server().await;
    let gw = gateway_trusting(&ca, true).await;
    let client_id = format!("{base}/nostore");
    assert_eq!(open(&gw, &client_id).await.0, 200);
    assert_eq!(open(&gw, &client_id).await.0, 200);
    assert_eq!(hits.of("nostore"), 2);
    // Exact redirect URI only: another path on the same origin is refused.
    let ch = challenge(VERIFIER);
    let mut params = auth_params(&client_id, &ch);
    params[2] = ("redirect_uri", "http://127.0.0.1:4567/callback/other");
    let (status, html, _, location) = authorize(&gw, &params).await;
    assert_eq!((status, location), (400, None));
    assert!(html.contains("is not one it registered"), "{html}");
    // A loopback callback registered without a port matches the port the app listens on.
    let (status, html, cookie) = open(&gw, &format!("{base}/portless")).await;
    assert_eq!(status, 200, "{html}");
    let (status, location) = consent(
        &gw,
        &html,
        &cookie.expect("cookie"),
        PASS,
        "read",
        "approve",
    )
    .await;
    assert_eq!(status, 303);
    assert!(
        location
            .expect("redirect")
            .starts_with("http://127.0.0.1:4567/callback?code=")
    );
    // A redirect on the same host is followed.
    assert_eq!(open(&gw, &format!("{base}/moved")).await.0, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_documents_are_refused_with_a_page() {
    let (base, _hits, ca, _dir) = document_server().await;
    let gw = gateway_trusting(&ca, true).await;
    for (name, says) in [
        ("wrong-id", "is not valid: its client_id is not its own URL"),
        ("huge", "could not be fetched: it is too large"),
        (
            "elsewhere",
            "could not be fetched: it redirects to another host",
        ),
        (
            "other-port",
            "could not be fetched: it redirects to another port",
        ),
        ("missing", "could not be fetched: it answered 404 Not Found"),
        ("slow", "could not be fetched: it took too long"),
    ] {
        let (status, html, _) = open(&gw, &format!("{base}/{name}")).await;
        assert_eq!(status, 400, "{name}");
        assert!(html.contains(says), "{name}: {html}");
    }
    // Not a document URL at all: plain http, or no path.
    for bad in [format!("{}/x", base.replace("https", "http")), base.clone()] {
        let (status, html, _) = open(&gw, &bad).await;
        assert_eq!(status, 400, "{bad}: {html}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_document_on_a_private_address_is_never_fetched() {
    let (base, hits, ca, _dir) = document_server().await;
    // The default: loopback and private addresses are refused, by name and as a literal.
    let gw = gateway_trusting(&ca, false).await;
    for client_id in [
        format!("{base}/good"),
        format!("{}/good", base.replace("localhost", "127.0.0.1")),
        "https://[::1]/good".to_owned(),
        "https://169.254.169.254/latest/meta-data".to_owned(),
    ] {
        let (status, html, _) = open(&gw, &client_id).await;
        assert_eq!(status, 400, "{client_id}");
        assert!(
            html.contains(
                "could not be fetched: cannot connect to a public address of its host over https"
            ) || html.contains("could not be fetched: its address is not public"),
            "{client_id}: {html}"
        );
    }
    assert_eq!(hits.of("good"), 0, "nothing reached the server");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn document_clients_are_registrations_recorded_only_once_approved() {
    let (base, _hits, ca, _dir) = document_server().await;
    // A registry of its own (kept for the whole test): the siblings share one.
    let data = tempfile::tempdir().expect("temp dir");
    let data_dir = data.path().display().to_string();
    let ca = ca.display().to_string();
    let gw = oauth_gateway(move |s| {
        s.data_dir = data_dir;
        s.oauth.metadata_document_ca_file = ca;
        s.oauth.metadata_document_allow_private = true;
        s.oauth.max_clients = 2;
        s.oauth.registrations_per_hour = 3;
    })
    .await;
    let store = Store::open(&gw.settings.data_dir()).expect("store");
    // Three new documents from one address: its whole registration budget, no place taken.
    let mut pages = Vec::new();
    for name in ["good", "nostore", "good-again"] {
        let (status, html, cookie) = open(&gw, &format!("{base}/{name}")).await;
        assert_eq!(status, 200, "{name}: {html}");
        pages.push((html, cookie.expect("cookie")));
    }
    assert_eq!(
        store.client_count().expect("store"),
        0,
        "nothing recorded unapproved"
    );
    // A fourth new one is refused like a fourth /register.
    let (status, html, _) = open(&gw, &format!("{base}/portless")).await;
    assert_eq!(status, 429);
    assert!(
        html.contains("Too many new apps were connected from your address"),
        "{html}"
    );
    // Approved, each takes its place; the registry then holds 2 and the third approval is refused.
    for (html, cookie) in &pages[..2] {
        assert_eq!(
            consent(&gw, html, cookie, PASS, "read", "approve").await.0,
            303
        );
    }
    assert_eq!(store.client_count().expect("store"), 2);
    let (html, cookie) = &pages[2];
    let res = post_consent(
        &gw,
        html,
        cookie,
        &[
            ("passphrase", PASS),
            ("role", "read"),
            ("action", "approve"),
        ],
    )
    .await;
    assert_eq!(res.status(), 503);
    assert!(
        res.text()
            .await
            .expect("page")
            .contains("maximum number of apps")
    );
    // One already recorded opens without drawing on the budget.
    assert_eq!(open(&gw, &format!("{base}/good")).await.0, 200);
}
