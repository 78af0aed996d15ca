//! The crowd soak: a normal client and the owner beside three attackers, through the real binary,
//! for `COPYQ_MCP_SOAK_SECS` (20 s in the suite; 60 s for the figures in the README). The
//! attackers, all on loopback addresses 127.0.0.x: h2c connections that make one request and sit
//! idle (reconnecting whenever they are closed), new metadata-document clients at /authorize, and
//! consent requests from 64 addresses. Every call of the normal client succeeds, the owner's
//! approval succeeds, no document client is recorded, and the gateway's RSS stays under
//! [`RSS_BOUND_KIB`]. Figures go to target/soak-crowd.json.

use std::net::{IpAddr, SocketAddr};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::extract::Path;
use base64::Engine;
use bytes::Bytes;
use http_body_util::Empty;
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{Outcome, call, issue_token, kill, rss_kib};
use crate::support::*;

const PASS: &str = "correct horse battery staple";
const REDIRECT: &str = "http://127.0.0.1:4567/callback";
const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
/// The gateway's resident memory at most, attackers and all (measured: see the README).
const RSS_BOUND_KIB: u64 = 160 * 1024;
/// h2 idle holders: 12 addresses, 48 connections each (576 of the 1,024 places).
const HOLDER_ADDRESSES: u8 = 12;
const HOLDERS_PER_ADDRESS: usize = 48;

fn client_from(source: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(source.parse::<IpAddr>().ok())
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
}

fn auth_query(client_id: &str) -> Vec<(&'static str, String)> {
    let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(Sha256::digest(VERIFIER.as_bytes()));
    vec![
        ("response_type", "code".into()),
        ("client_id", client_id.into()),
        ("redirect_uri", REDIRECT.into()),
        ("code_challenge", challenge),
        ("code_challenge_method", "S256".into()),
    ]
}

/// An HTTPS server for `localhost` answering every path with a valid document; (base, CA file).
async fn document_server() -> (String, std::path::PathBuf, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let generated = copyq_mcp::tls::generate(&["localhost".into()], dir.path()).expect("cert");
    let files = copyq_mcp::tls::TlsFiles {
        cert: generated.cert.clone(),
        key: generated.key.clone(),
    };
    let config = copyq_mcp::tls::load(&files).await.expect("tls config");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let base = format!(
        "https://localhost:{}",
        listener.local_addr().expect("addr").port()
    );
    let me = base.clone();
    let app = axum::Router::new().route(
        "/{name}",
        axum::routing::get(move |Path(name): Path<String>| {
            let id = format!("{me}/{name}");
            async move { axum::Json(json!({"client_id": id, "redirect_uris": [REDIRECT]})) }
        }),
    );
    listener.set_nonblocking(true).expect("nonblocking");
    let server = axum_server::from_tcp_rustls(listener, config).expect("server");
    tokio::spawn(server.serve(app.into_make_service()));
    (base, generated.cert, dir)
}

/// One h2c connection at a time from `source`: a request, then idle until the server closes it;
/// then again, until `deadline`. How many connections it made.
async fn h2_holder(gateway: SocketAddr, source: IpAddr, base: String, deadline: Instant) -> u64 {
    let mut made = 0;
    while Instant::now() < deadline {
        let socket = tokio::net::TcpSocket::new_v4().expect("socket");
        let _ = socket.bind(SocketAddr::new(source, 0));
        let Ok(tcp) = socket.connect(gateway).await else {
            tokio::time::sleep(Duration::from_millis(200)).await;
            continue;
        };
        let Ok((mut send, conn)) =
            hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tcp)).await
        else {
            continue;
        };
        made += 1;
        let mut conn = tokio::spawn(conn);
        let req = hyper::Request::get(format!("{base}/healthz")).body(Empty::<Bytes>::new());
        if let Ok(req) = req {
            let _ = send.send_request(req).await;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        let _ = tokio::time::timeout(left, &mut conn).await;
        conn.abort();
    }
    made
}

/// New metadata-document clients from `source`, one every 20 ms: (consent pages, refusals).
async fn document_flood(
    base: String,
    docs: String,
    source: String,
    deadline: Instant,
) -> (u64, u64) {
    let http = client_from(&source);
    let (mut pages, mut refused, mut n) = (0, 0, 0);
    while Instant::now() < deadline {
        n += 1;
        let id = format!("{docs}/junk-{source}-{n}");
        let status = http
            .get(format!("{base}/authorize"))
            .query(&auth_query(&id))
            .send()
            .await
            .map(|r| r.status().as_u16())
            .unwrap_or(0);
        if status == 200 {
            pages += 1;
        } else {
            refused += 1;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    (pages, refused)
}

/// Consent requests from `source` for 4 apps it registers, one every 20 ms: (opened, refused).
async fn consent_flood(base: String, source: String, deadline: Instant) -> (u64, u64) {
    let http = client_from(&source);
    let mut apps = Vec::new();
    for _ in 0..4 {
        let v: Value = http
            .post(format!("{base}/register"))
            .json(&json!({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"}))
            .send()
            .await
            .expect("register")
            .json()
            .await
            .expect("json");
        apps.push(v["client_id"].as_str().unwrap_or_default().to_owned());
    }
    let (mut opened, mut refused, mut n) = (0, 0, 0);
    while Instant::now() < deadline {
        n += 1;
        let status = http
            .get(format!("{base}/authorize"))
            .query(&auth_query(&apps[n % 4]))
            .send()
            .await
            .map(|r| r.status().as_u16())
            .unwrap_or(0);
        if status == 200 {
            opened += 1;
        } else {
            refused += 1;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    (opened, refused)
}

/// The owner connects an app from 127.0.0.1: the consent page, the approval, the token.
async fn owner_connects(base: &str) -> (u16, u16, u16) {
    let http = client_from("127.0.0.1");
    let v: Value = http
        .post(format!("{base}/register"))
        .json(&json!({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none", "client_name": "Owner's app"}))
        .send()
        .await
        .expect("register")
        .json()
        .await
        .expect("json");
    let app = v["client_id"].as_str().unwrap_or_default().to_owned();
    let res = http
        .get(format!("{base}/authorize"))
        .query(&auth_query(&app))
        .send()
        .await
        .expect("authorize");
    let page_status = res.status().as_u16();
    let cookie = res
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|c| c.split(';').next())
        .unwrap_or_default()
        .to_owned();
    let html = res.text().await.unwrap_or_default();
    let field = |name: &str| {
        let marker = format!("name=\"{name}\" value=\"");
        html.split_once(&marker)
            .and_then(|(_, rest)| rest.split('"').next())
            .unwrap_or_default()
            .to_owned()
    };
    let form = [
        ("request_id", field("request_id")),
        ("csrf", field("csrf")),
        ("role", "read".into()),
        ("passphrase", PASS.into()),
        ("action", "approve".into()),
    ];
    let res = http
        .post(format!("{base}/authorize"))
        .header("cookie", cookie)
        .form(&form)
        .send()
        .await
        .expect("approve");
    let approved = res.status().as_u16();
    let code = res
        .headers()
        .get("location")
        .and_then(|l| l.to_str().ok())
        .and_then(|l| url::Url::parse(l).ok())
        .and_then(|u| {
            u.query_pairs()
                .find(|(k, _)| k == "code")
                .map(|(_, v)| v.into_owned())
        })
        .unwrap_or_default();
    let token = http
        .post(format!("{base}/token"))
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", REDIRECT),
            ("client_id", app.as_str()),
            ("code_verifier", VERIFIER),
        ])
        .send()
        .await
        .map(|r| r.status().as_u16())
        .unwrap_or(0);
    (page_status, approved, token)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_owner_and_a_normal_client_beside_three_attackers() {
    let secs: u64 = std::env::var("COPYQ_MCP_SOAK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20)
        .clamp(12, 600);
    let copyq = PrivateCopyq::start().expect("CopyQ");
    copyq
        .seed("mcp/workspace/soak", &items(&["seed"]))
        .expect("seed");
    let data = tempfile::tempdir().expect("data");
    let token = issue_token(data.path());
    copyq_mcp::store::Store::open(data.path())
        .expect("store")
        .set_passphrase_hash(&copyq_mcp::oauth::passphrase::hash(PASS).expect("hash"))
        .expect("passphrase");
    let (docs, ca, _docs_dir) = document_server().await;
    let ca = ca.display().to_string();
    let env = [
        ("COPYQ_MCP__OAUTH__METADATA_DOCUMENT_ALLOW_PRIVATE", "true"),
        ("COPYQ_MCP__OAUTH__METADATA_DOCUMENT_CA_FILE", ca.as_str()),
    ];
    let (gateway, url) = spawn_serve(&copyq, data.path(), &env, Stdio::null());
    let base = url.trim_end_matches("/mcp").to_owned();
    let addr: SocketAddr = base.trim_start_matches("http://").parse().expect("addr");
    tokio::time::sleep(Duration::from_secs(1)).await;
    let idle_kib = rss_kib(gateway.id());
    let deadline = Instant::now() + Duration::from_secs(secs);

    let mut holders = tokio::task::JoinSet::new();
    for a in 0..HOLDER_ADDRESSES {
        for _ in 0..HOLDERS_PER_ADDRESS {
            let source = IpAddr::from([127, 0, 1, a + 1]);
            holders.spawn(h2_holder(addr, source, base.clone(), deadline));
        }
    }
    let mut floods = tokio::task::JoinSet::new();
    for a in 0..8 {
        let source = format!("127.0.2.{}", a + 1);
        floods.spawn(document_flood(base.clone(), docs.clone(), source, deadline));
    }
    let mut consents = tokio::task::JoinSet::new();
    for a in 0..64 {
        let source = format!("127.0.3.{}", a + 1);
        consents.spawn(consent_flood(base.clone(), source, deadline));
    }
    // RSS, sampled every half second.
    let peak = Arc::new(AtomicU64::new(idle_kib));
    let (sampler_peak, pid) = (peak.clone(), gateway.id());
    let sampler = tokio::spawn(async move {
        while Instant::now() < deadline {
            sampler_peak.fetch_max(rss_kib(pid), Ordering::Relaxed);
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    });
    // The normal client, from 127.0.0.1; the owner connects an app half-way.
    let normal = {
        let (url, token) = (url.clone(), token.clone());
        tokio::spawn(async move {
            let http = client_from("127.0.0.1");
            let mut outcomes = Vec::new();
            while Instant::now() < deadline {
                let args = json!({"mode": "list", "tab": "workspace/soak", "max_items": 5});
                outcomes.push(call(&http, &url, &token, "mcp_read", args).await.0);
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            outcomes
        })
    };
    tokio::time::sleep(Duration::from_secs(secs / 2)).await;
    let owner = owner_connects(&base).await;

    let outcomes = normal.await.expect("normal client");
    let connections: Vec<u64> = holders.join_all().await;
    let documents: Vec<(u64, u64)> = floods.join_all().await;
    let consent: Vec<(u64, u64)> = consents.join_all().await;
    let _ = sampler.await;
    let peak_kib = peak.load(Ordering::Relaxed);
    let store = copyq_mcp::store::Store::open(data.path()).expect("store");
    let recorded_documents = store
        .unapproved_clients()
        .expect("store")
        .iter()
        .filter(|c| c.client_id.starts_with("https://"))
        .count();
    let sum = |v: &[(u64, u64)]| v.iter().fold((0, 0), |(a, b), (c, d)| (a + c, b + d));
    let figures = json!({
        "seconds": secs,
        "normal_calls": outcomes.len(),
        "normal_failures": outcomes.iter().filter(|o| **o != Outcome::Ok).count(),
        "owner": {"consent_page": owner.0, "approval": owner.1, "token": owner.2},
        "h2_holders": connections.len(),
        "h2_connections_made": connections.iter().sum::<u64>(),
        "document_flood": {"pages": sum(&documents).0, "refused": sum(&documents).1},
        "document_clients_recorded": recorded_documents,
        "consent_flood": {"opened": sum(&consent).0, "refused": sum(&consent).1},
        "rss_kib": {"idle": idle_kib, "peak": peak_kib},
    });
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/soak-crowd.json");
    let _ = std::fs::write(&out, format!("{figures:#}\n"));
    eprintln!("crowd soak: {figures}");
    kill(gateway);

    assert!(outcomes.len() > 10, "{figures}");
    assert!(outcomes.iter().all(|o| *o == Outcome::Ok), "{figures}");
    assert_eq!(owner, (200, 303, 200), "{figures}");
    assert_eq!(recorded_documents, 0, "{figures}");
    assert!(
        sum(&documents).1 > 0,
        "the document flood met its limit: {figures}"
    );
    assert!(
        connections.iter().sum::<u64>() > connections.len() as u64,
        "idle h2 connections were closed and made again: {figures}"
    );
    assert!(peak_kib < RSS_BOUND_KIB, "{figures}");
}
