//! A client-ID metadata document the gateway cannot fetch, as the owner meets it: the consent
//! page and the log name the URL, the cause and what to do. And the fetch through the owner's
//! proxy (`HTTPS_PROXY`, `NO_PROXY`): a small CONNECT proxy on loopback in front of a document
//! server for a name that resolves nowhere. The gateway runs as the real binary, so the proxy
//! variables are read from its environment as an owner sets them; it is pointed at no CopyQ (the
//! consent page never reads the clipboard).

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::*;

const BIN: &str = env!("CARGO_BIN_EXE_copyq-mcp");
const PROXY_VARS: [&str; 8] = [
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "ALL_PROXY",
    "all_proxy",
    "NO_PROXY",
    "no_proxy",
];

/// A running `copyq-mcp serve`: its base URL, and its log once stopped.
struct Served {
    child: Spawned,
    base: String,
    _data: tempfile::TempDir,
}

impl Served {
    /// Start it with `env` (and no proxy variable but those in it), private documents allowed
    /// or not, trusting `ca`.
    fn start(env: &[(&str, &str)], ca: Option<&std::path::Path>, allow_private: bool) -> Self {
        use std::io::BufRead;
        let data = tempfile::tempdir().expect("tempdir");
        Store::open(data.path())
            .expect("store")
            .set_passphrase_hash(&passphrase::hash(PASS).expect("hash"))
            .expect("passphrase");
        let mut cmd = Command::new(BIN);
        cmd.args(["serve", "--bind", "127.0.0.1:0", "--data-dir"])
            .arg(data.path())
            .envs(support::edge::nowhere_env())
            .env(
                "COPYQ_MCP__OAUTH__METADATA_DOCUMENT_ALLOW_PRIVATE",
                allow_private.to_string(),
            )
            .env_remove("RUST_LOG");
        for var in PROXY_VARS {
            cmd.env_remove(var);
        }
        if let Some(ca) = ca {
            cmd.env("COPYQ_MCP__OAUTH__METADATA_DOCUMENT_CA_FILE", ca);
        }
        let mut child = cmd
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn serve");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.as_mut().expect("stdout"))
            .read_line(&mut line)
            .expect("listening line");
        let base = line
            .split_whitespace()
            .last()
            .and_then(|u| u.strip_suffix("/mcp"))
            .unwrap_or_else(|| panic!("no URL in {line:?}"))
            .to_owned();
        Self {
            child: Spawned(child),
            base,
            _data: data,
        }
    }

    /// GET /authorize for `client_id`: (status, page).
    async fn open(&self, client_id: &str) -> (u16, String) {
        let ch = challenge(VERIFIER);
        let res = http()
            .get(format!("{}/authorize", self.base))
            .query(&auth_params(client_id, &ch))
            .send()
            .await
            .expect("authorize");
        (res.status().as_u16(), res.text().await.unwrap_or_default())
    }

    /// Stop it and return its log.
    fn log(mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let mut log = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut log);
        }
        log
    }
}

/// The page's text with its markup's escapes undone (a URL's `/` and `'` are escaped).
fn text(html: &str) -> String {
    html.replace("&#x2F;", "/")
        .replace("&#39;", "'")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_document_is_named_with_its_cause_on_the_page_and_in_the_log() {
    let gw = Served::start(&[], None, true);
    let nowhere = "https://nonexistent.invalid/oauth/client";
    let (status, page) = gw.open(nowhere).await;
    let page = text(&page);
    assert_eq!(status, 400, "{page}");
    assert!(
        page.contains(
            "The client's metadata document could not be fetched: the name nonexistent.invalid \
             does not resolve here (DNS:"
        ),
        "{page}"
    );
    assert!(page.contains(&format!("(its URL: {nowhere})")), "{page}");
    assert!(
        page.contains("What the owner can do: if this machine reaches the internet only through a proxy, start the gateway with HTTPS_PROXY set"),
        "{page}"
    );
    assert!(!page.contains("tell its developers"), "{page}");
    let port = free_port();
    let closed = format!("https://127.0.0.1:{port}/client");
    let (status, page) = gw.open(&closed).await;
    let page = text(&page);
    assert_eq!(status, 400, "{page}");
    assert!(
        page.contains(&format!(
            "could not be fetched: 127.0.0.1:{port} refused the connection (nothing listens on \
             its https port) (its URL: {closed})"
        )),
        "{page}"
    );
    let log = gw.log();
    for (url, cause) in [
        (nowhere.to_owned(), "does not resolve here".to_owned()),
        (closed, format!("127.0.0.1:{port} refused the connection")),
    ] {
        assert!(
            log.lines()
                .any(|l| l.contains("client metadata document refused")
                    && l.contains(&format!("url={url}"))
                    && l.contains(&cause)
                    && l.contains("HTTPS_PROXY")),
            "no log line with {url} and {cause}:\n{log}"
        );
    }
}

/// A CONNECT proxy on loopback: tunnels to `docs.example:443` lead to `target`; any other host is
/// answered 502, as a proxy that cannot reach it. Every request line is kept.
async fn connect_proxy(target: u16) -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            let log = log.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && head.len() < 8192 {
                    if conn.read_exact(&mut byte).await.is_err() {
                        return;
                    }
                    head.push(byte[0]);
                }
                let head = String::from_utf8_lossy(&head).into_owned();
                let line = head.lines().next().unwrap_or_default().to_owned();
                if let Ok(mut l) = log.lock() {
                    l.push(line.clone());
                }
                if line != "CONNECT docs.example:443 HTTP/1.1" {
                    let _ = conn.write_all(b"HTTP/1.1 502 Bad Gateway\r\n\r\n").await;
                    return;
                }
                let Ok(mut up) = tokio::net::TcpStream::connect(("127.0.0.1", target)).await else {
                    return;
                };
                let _ = conn
                    .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    .await;
                let _ = tokio::io::copy_bidirectional(&mut conn, &mut up).await;
            });
        }
    });
    (port, seen)
}

/// An HTTPS server whose certificate names `docs.example`, serving that host's document at
/// `/good`: (port, CA file, its temp dir).
async fn docs_example() -> (u16, std::path::PathBuf, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let generated = copyq_mcp::tls::generate(&["docs.example".into()], dir.path()).expect("cert");
    let files = copyq_mcp::tls::TlsFiles {
        cert: generated.cert.clone(),
        key: generated.key.clone(),
    };
    let config = copyq_mcp::tls::load(&files).await.expect("tls config");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let doc = json!({
        "client_id": "https://docs.example/good",
        "client_name": "Proxied App",
        "redirect_uris": [REDIRECT],
        "token_endpoint_auth_method": "none",
    });
    let app = axum::Router::new().route(
        "/good",
        axum::routing::get(move || {
            let doc = doc.clone();
            async move { axum::Json(doc) }
        }),
    );
    listener.set_nonblocking(true).expect("nonblocking");
    let server = axum_server::from_tcp_rustls(listener, config).expect("server");
    tokio::spawn(server.serve(app.into_make_service()));
    (port, generated.cert, dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn documents_are_fetched_through_the_owners_proxy() {
    let (docs, ca, _dir) = docs_example().await;
    let (proxy_port, seen) = connect_proxy(docs).await;
    let proxy = format!("http://127.0.0.1:{proxy_port}");
    // Private addresses are not allowed: through the proxy the name is the proxy's to resolve.
    let gw = Served::start(&[("HTTPS_PROXY", &proxy)], Some(&ca), false);
    let (status, page) = gw.open("https://docs.example/good").await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("<strong>docs.example</strong>"), "{page}");
    // A host the proxy cannot reach: the page says the proxy would not tunnel to it.
    let (status, page) = gw.open("https://unknown.example/good").await;
    let page = text(&page);
    assert_eq!(status, 400, "{page}");
    assert!(
        page.contains(&format!(
            "could not be fetched: the proxy {proxy} would not open a tunnel to unknown.example:443"
        )),
        "{page}"
    );
    // What the gateway can still see is still checked: an IP literal, a localhost name.
    for local in ["https://127.0.0.1/good", "https://localhost/good"] {
        let (status, page) = gw.open(local).await;
        assert_eq!(status, 400, "{local}");
        assert!(
            page.contains("could not be fetched: its address is not public"),
            "{local}: {page}"
        );
    }
    drop(gw.log());
    assert_eq!(
        seen.lock().map(|s| s.clone()).unwrap_or_default(),
        [
            "CONNECT docs.example:443 HTTP/1.1",
            "CONNECT unknown.example:443 HTTP/1.1"
        ],
        "the proxy saw the two public names, and nothing local"
    );
    // NO_PROXY sends the host direct, where its name does not resolve.
    let direct = Served::start(
        &[("HTTPS_PROXY", &proxy), ("NO_PROXY", "docs.example")],
        Some(&ca),
        false,
    );
    let (status, page) = direct.open("https://docs.example/good").await;
    assert_eq!(status, 400);
    assert!(
        text(&page).contains("the name docs.example does not resolve here"),
        "{page}"
    );
    drop(direct.log());
    assert_eq!(seen.lock().map(|s| s.len()).unwrap_or_default(), 2);
}
