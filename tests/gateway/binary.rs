//! The `copyq-mcp` binary as a user runs it: `token issue`, `serve` with flags and environment
//! overrides, logs that never carry tokens or clipboard content, graceful SIGTERM, config errors.

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::*;
use serde_json::json;

/// This suite's own private CopyQ, started on first use.
fn copyq() -> &'static PrivateCopyq {
    static COPYQ: std::sync::OnceLock<PrivateCopyq> = std::sync::OnceLock::new();
    private_copyq(&COPYQ)
}

const BIN: &str = env!("CARGO_BIN_EXE_copyq-mcp");

fn token(data_dir: &std::path::Path, role: &str, name: &str) -> String {
    let out = Command::new(BIN)
        .args([
            "token",
            "issue",
            "--role",
            role,
            "--name",
            name,
            "--ttl",
            "1h",
            "--data-dir",
        ])
        .arg(data_dir)
        .env_remove("RUST_LOG")
        .output()
        .expect("run token issue");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).expect("utf-8");
    assert_eq!(stdout.lines().count(), 1, "the token alone: {stdout:?}");
    stdout.trim().to_owned()
}

fn serve(copyq: &PrivateCopyq, data_dir: &std::path::Path) -> (Spawned, String) {
    spawn_serve(copyq, data_dir, &[("RUST_LOG", "trace")], Stdio::piped())
}

fn terminate(mut child: Spawned) -> (bool, String) {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Ok(Some(status)) = child.try_wait() {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut stderr);
    }
    (status.is_some_and(|s| s.success()), stderr)
}

/// A test that fails between starting a gateway and stopping it leaves none running: CI runs
/// ended with `copyq-mcp serve` processes of failed tests still listening.
#[test]
fn a_failed_test_leaves_no_gateway_running() {
    let data = tempfile::tempdir().expect("tempdir");
    let (pid_tx, pid_rx) = std::sync::mpsc::channel();
    let dir = data.path().to_owned();
    let failed = std::thread::spawn(move || {
        let (child, _url) = serve(copyq(), &dir);
        pid_tx.send(child.id()).expect("send");
        panic!("a test failing while its gateway runs");
    })
    .join();
    assert!(failed.is_err());
    let pid = pid_rx.recv().expect("the gateway's pid");
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "copyq-mcp serve (pid {pid}) outlived its test"
    );
}

#[tokio::test]
async fn serve_issue_call_and_stop() {
    let secret = "Секретный текст из буфера 4242";
    copyq()
        .seed("mcp/workspace/binary", &items(&[secret]))
        .expect("seed");
    let data = tempfile::tempdir().expect("tempdir");
    let read = token(data.path(), "read", "cli-read");
    let write = token(data.path(), "write", "cli-write");
    let key = data.path().join("signing.key");
    assert_eq!(
        std::fs::metadata(&key)
            .expect("key file")
            .permissions()
            .mode()
            & 0o777,
        0o600
    );
    let (child, url) = serve(copyq(), data.path());

    let c = client(&url, &read).await;
    let got = ok(
        &c,
        "mcp_read",
        json!({"mode": "list", "tab": "workspace/binary"}),
    )
    .await;
    assert!(got.contains(secret), "{got}");
    let w = client(&url, &write).await;
    let names: Vec<String> = w
        .list_all_tools()
        .await
        .expect("list")
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(names, ["mcp_read", "mcp_write", "mcp_validate"]);
    let (status, _, _) = raw_post(
        &url,
        Some("forged.token.value"),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    )
    .await;
    assert_eq!(status, 401);
    drop((c, w));

    let (clean_exit, logs) = terminate(child);
    assert!(
        clean_exit,
        "SIGTERM stops the gateway cleanly; logs:\n{logs}"
    );
    assert!(
        logs.contains("mcp_read"),
        "the trace log was captured: {logs}"
    );
    for needle in [read.as_str(), write.as_str(), "forged.token.value", secret] {
        assert!(!logs.contains(needle), "log leaks {needle:?}");
    }
    let key_text = std::fs::read_to_string(&key).expect("key");
    assert!(!logs.contains(key_text.trim()), "log leaks the signing key");
}

#[test]
fn token_issue_rejects_bad_arguments() {
    let data = tempfile::tempdir().expect("tempdir");
    let out = Command::new(BIN)
        .args([
            "token",
            "issue",
            "--role",
            "admin",
            "--name",
            "x",
            "--data-dir",
        ])
        .arg(data.path())
        .output()
        .expect("run");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("role must be 'read' or 'write'"));
    let out = Command::new(BIN)
        .args([
            "token",
            "issue",
            "--role",
            "read",
            "--name",
            "x",
            "--ttl",
            "soon",
            "--data-dir",
        ])
        .arg(data.path())
        .output()
        .expect("run");
    assert!(!out.status.success());
}

fn start_error(args: &[&str], env: &[(&str, &str)]) -> String {
    let data = tempfile::tempdir().expect("tempdir");
    let mut cmd = Command::new(BIN);
    cmd.args(["serve", "--bind", "127.0.0.1:0", "--data-dir"])
        .arg(data.path())
        .args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.stdout(Stdio::null()).output().expect("run");
    assert!(
        !out.status.success(),
        "start-up should fail for {args:?} {env:?}"
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn bad_configuration_names_the_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("user.toml");
    std::fs::write(&file, "[server]\nallowed_host = [\"x\"]\n").expect("write");
    let path = file.display().to_string();
    let e = start_error(&["--config", &path], &[]);
    assert!(e.contains("allowed_host"), "{e}");
    let e = start_error(&[], &[("COPYQ_MCP__COPYQ__TIMEOUT_MS", "0")]);
    assert!(e.contains("copyq.timeout_ms"), "{e}");
    let e = start_error(&[], &[("COPYQ_MCP__SERVER__MAX_BODY_BYTES", "lots")]);
    assert!(e.contains("max_body_bytes"), "{e}");
    let e = start_error(&["--config", "/nonexistent/copyq-mcp.toml"], &[]);
    assert!(e.contains("not found"), "{e}");
}

fn run(args: &[&str], data: &std::path::Path, stdin: &str) -> (bool, String, String) {
    use std::io::Write;
    let mut child = Command::new(BIN)
        .args(args)
        .arg("--data-dir")
        .arg(data)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    if let Some(mut i) = child.stdin.take() {
        let _ = i.write_all(stdin.as_bytes());
    }
    let out = child.wait_with_output().expect("wait");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test]
async fn owner_commands_revoke_on_the_next_request() {
    let data = tempfile::tempdir().expect("tempdir");
    let d = data.path();
    let (ok_, _, err) = run(&["passphrase", "set"], d, "short\n");
    assert!(!ok_ && err.contains("at least 8 characters"), "{err}");
    let (ok_, _, err) = run(&["passphrase", "set"], d, "a long enough passphrase\n");
    assert!(ok_, "{err}");
    let store = copyq_mcp::store::Store::open(d).expect("store");
    let phc = store.passphrase_hash().expect("read").expect("set");
    assert!(phc.starts_with("$argon2id$") && !phc.contains("a long enough passphrase"));
    assert!(copyq_mcp::oauth::passphrase::verify(
        "a long enough passphrase",
        &phc
    ));

    let laptop = token(d, "write", "laptop");
    let script = token(d, "read", "script");
    let (ok_, listing, _) = run(&["token", "list"], d, "");
    assert!(
        ok_ && listing.contains("laptop")
            && listing.contains("script")
            && listing.contains("active"),
        "{listing}"
    );
    assert!(
        !listing.contains(&laptop),
        "the list never shows tokens themselves"
    );

    let (child, url) = serve(copyq(), d);
    let tools_list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    assert_eq!(
        raw_post(&url, Some(&laptop), tools_list.clone()).await.0,
        200
    );
    let (ok_, _, err) = run(&["token", "revoke", "laptop"], d, "");
    assert!(ok_, "{err}");
    assert_eq!(
        raw_post(&url, Some(&laptop), tools_list.clone()).await.0,
        401,
        "revoked by name"
    );
    assert_eq!(
        raw_post(&url, Some(&script), tools_list.clone()).await.0,
        200,
        "others unaffected"
    );
    let (ok_, listing, _) = run(&["token", "list"], d, "");
    assert!(
        ok_ && listing
            .lines()
            .any(|l| l.contains("laptop") && l.ends_with(" revoked  all tabs")),
        "{listing}"
    );
    let (ok_, _, err) = run(&["token", "revoke", "nobody"], d, "");
    assert!(!ok_ && err.contains("no active token"), "{err}");

    let (ok_, listing, _) = run(&["clients", "list"], d, "");
    assert!(ok_ && listing.starts_with("CLIENT"), "{listing}");
    let (ok_, _, err) = run(&["clients", "revoke", "nobody"], d, "");
    assert!(!ok_ && err.contains("no connected app"), "{err}");
    let _ = terminate(child);
}

/// `token issue --tabs` makes a token that covers those tabs only, `token list` says which, and
/// a list the command cannot read is refused before any token exists.
#[tokio::test]
async fn tokens_issued_for_some_tabs_see_only_those() {
    let data = tempfile::tempdir().expect("tempdir");
    let d = data.path();
    let issue = |extra: &[&str]| {
        let mut args = vec!["token", "issue", "--role", "read", "--name", "agent"];
        args.extend_from_slice(extra);
        run(&args, d, "")
    };
    let (ok_, managed, err) = issue(&["--tabs", "managed"]);
    assert!(ok_, "{err}");
    let (ok_, _, err) = issue(&["--tabs", "mcp/workspace/p,Notes", "--tab", "a,b"]);
    assert!(ok_, "{err}");
    let (ok_, _, err) = issue(&["--tabs", "mcp/../x"]);
    assert!(!ok_ && err.contains("Invalid tab path 'mcp/../x'"), "{err}");
    let (ok_, _, err) = issue(&["--tabs", "all,Notes"]);
    assert!(
        !ok_ && err.contains("'all' cannot be combined with other tabs"),
        "{err}"
    );
    let (_, listing, _) = run(&["token", "list"], d, "");
    let tabs: Vec<&str> = listing
        .lines()
        .skip(1)
        .map(|l| l.split_once(" active   ").map_or("?", |(_, t)| t))
        .collect();
    assert_eq!(
        listing
            .lines()
            .next()
            .map(|h| h.ends_with(" STATUS   TABS")),
        Some(true),
        "{listing}"
    );
    assert_eq!(tabs.len(), 2, "{listing}");
    assert!(
        tabs.contains(&"managed tabs (mcp/)") && tabs.contains(&"mcp/workspace/p, Notes, a,b"),
        "{listing}"
    );

    let (child, url) = serve(copyq(), d);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "mcp_read",
        "arguments": {"mode": "tree", "scope": "external", "max_items": 0}}});
    let (status, _, reply) = raw_post(&url, Some(managed.trim()), body).await;
    assert_eq!(status, 200, "{reply}");
    assert!(
        reply.contains(r#""text":"""#) && !reply.contains("[external]"),
        "no external tab: {reply}"
    );
    let _ = terminate(child);
}

/// The state files are private while the very first run is still going, whatever the umask of
/// whoever started it (this test's is the usual 022): the dir 0700, the database with its WAL and
/// SHM (which hold removed clipboard text and secret hashes) and the signing key 0600.
#[test]
fn state_files_are_private_from_the_first_run() {
    use std::os::unix::fs::PermissionsExt;
    let parent = tempfile::tempdir().expect("tempdir");
    let data = parent.path().join("fresh/state");
    let (child, _url) = serve(copyq(), &data);
    let mode = |name: &str| {
        std::fs::metadata(data.join(name))
            .map(|m| m.permissions().mode() & 0o777)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
    };
    let mut seen = vec![(String::from("."), mode("."))];
    for name in [
        "copyq-mcp.db",
        "copyq-mcp.db-wal",
        "copyq-mcp.db-shm",
        "signing.key",
    ] {
        seen.push((name.to_owned(), mode(name)));
    }
    let (stopped, logs) = terminate(child);
    assert!(stopped, "{logs}");
    assert_eq!(
        seen,
        [
            (".".to_owned(), 0o700),
            ("copyq-mcp.db".to_owned(), 0o600),
            ("copyq-mcp.db-wal".to_owned(), 0o600),
            ("copyq-mcp.db-shm".to_owned(), 0o600),
            ("signing.key".to_owned(), 0o600),
        ]
    );
}

/// Values a client controls reach the log escaped to one bounded line, and a URI's query (where
/// a client may put `?access_token=`) never does, even at `RUST_LOG=trace`.
#[tokio::test]
async fn clients_cannot_forge_or_flood_log_lines() {
    let data = tempfile::tempdir().expect("tempdir");
    let read = token(data.path(), "read", "cli-read");
    let (child, url) = serve(copyq(), data.path());
    let http = reqwest::Client::new();
    let res = http
        .get(format!("{url}?access_token={read}"))
        .send()
        .await
        .expect("get");
    assert_eq!(res.status(), 401, "a token in the query is not accepted");
    let huge = "M".repeat(1 << 20);
    for (tool, mode) in [
        ("mcp_read", "tree\nFAKE LOG LINE at level ERROR"),
        ("mcp_read\nFAKE TOOL LINE", "tree"),
        ("mcp_read", huge.as_str()),
    ] {
        let (status, _, _) = raw_post(
            &url,
            Some(&read),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": tool, "arguments": {"mode": mode}}}),
        )
        .await;
        assert_eq!(status, 200);
    }
    let path_attack = format!("{}/x%0AFAKE%20PATH%20LINE", url.trim_end_matches("/mcp"));
    let _ = http.get(path_attack).send().await.expect("get");
    let (clean_exit, logs) = terminate(child);
    assert!(clean_exit, "{logs}");
    assert!(
        logs.contains("mcp_read"),
        "the trace log was captured: {logs}"
    );
    assert!(
        !logs.contains(&read),
        "the token in the query reached the log"
    );
    for line in logs.lines() {
        assert!(!line.starts_with("FAKE"), "forged line: {line}");
        assert!(line.len() < 2048, "a line of {} bytes", line.len());
    }
    assert!(
        logs.contains(r"tree\nFAKE LOG LINE"),
        "the mode is logged, escaped"
    );
}

/// Losing the state database does not bring a revoked token back: a database made anew has a new
/// epoch, and tokens are valid only in the epoch they were issued in.
#[tokio::test]
async fn a_lost_database_does_not_unrevoke_tokens() {
    let data = tempfile::tempdir().expect("tempdir");
    let d = data.path();
    let revoked = token(d, "write", "laptop");
    let (ok_, _, err) = run(&["token", "revoke", "laptop"], d, "");
    assert!(ok_, "{err}");
    let kept = token(d, "read", "script");
    let tools_list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let (child, url) = serve(copyq(), d);
    assert_eq!(
        raw_post(&url, Some(&revoked), tools_list.clone()).await.0,
        401
    );
    assert_eq!(raw_post(&url, Some(&kept), tools_list.clone()).await.0, 200);
    let _ = terminate(child);
    for f in ["copyq-mcp.db", "copyq-mcp.db-wal", "copyq-mcp.db-shm"] {
        let _ = std::fs::remove_file(d.join(f));
    }
    assert!(
        d.join("signing.key").exists(),
        "the key outlives the database"
    );
    let (child, url) = serve(copyq(), d);
    assert_eq!(
        raw_post(&url, Some(&revoked), tools_list.clone()).await.0,
        401,
        "the revocation was lost with the database, the token still does not work"
    );
    assert_eq!(
        raw_post(&url, Some(&kept), tools_list.clone()).await.0,
        401,
        "nor does any token of the lost database"
    );
    let fresh = token(d, "read", "script");
    assert_eq!(raw_post(&url, Some(&fresh), tools_list).await.0, 200);
    let _ = terminate(child);
}

/// Registered apps never approved are listed as such, and `clients purge` removes them (and only
/// them).
#[test]
fn the_owner_lists_and_purges_apps_never_approved() {
    let data = tempfile::tempdir().expect("tempdir");
    let d = data.path();
    let store = copyq_mcp::store::Store::open(d).expect("store");
    let new = |name: &str| copyq_mcp::store::NewClient {
        name: name.into(),
        redirect_uris: vec!["http://127.0.0.1:9/cb".into()],
        auth_method: "none".into(),
        secret: None,
    };
    let junk = store.register_client(&new("junk app")).expect("register");
    let kept = store
        .register_client(&new("approved app"))
        .expect("register");
    store.create_grant(&kept, "read").expect("grant");
    drop(store);
    let (ok_, listing, err) = run(&["clients", "list"], d, "");
    assert!(ok_, "{err}");
    let line = |id: &str| {
        listing
            .lines()
            .find(|l| l.starts_with(id))
            .map(str::to_owned)
    };
    assert!(
        line(&junk).is_some_and(|l| l.contains("junk app") && l.contains("never approved")),
        "{listing}"
    );
    assert!(
        line(&kept)
            .is_some_and(|l| l.contains("approved app") && l.ends_with(" active   all tabs")),
        "{listing}"
    );
    let (ok_, _, err) = run(&["clients", "purge"], d, "");
    assert!(
        ok_ && err.contains("removed 1 client(s) that were never approved"),
        "{err}"
    );
    let (_, listing, _) = run(&["clients", "list"], d, "");
    assert!(
        !listing.contains(&junk) && listing.contains(&kept),
        "{listing}"
    );
}

/// `copyq-mcp demo` is configured like `serve` (`--config`, the environment, `--data-dir`), sets
/// the consent passphrase it is given (or a printed one-time one) and says how to connect an
/// OAuth client.
#[tokio::test]
async fn the_demo_takes_configuration_and_shows_oauth() {
    use std::io::BufRead;
    let data = tempfile::tempdir().expect("tempdir");
    let config = data.path().join("demo.toml");
    std::fs::write(&config, "[oauth]\nrefresh_token_ttl = \"7d\"\n").expect("config");
    let mut child = Spawned(
        Command::new(BIN)
            .args(["demo", "--bind", "127.0.0.1:0", "--config"])
            .arg(&config)
            .arg("--data-dir")
            .arg(data.path().join("state"))
            .args(["--passphrase", "a demo passphrase"])
            .env("COPYQ_MCP__OAUTH__ACCESS_TOKEN_TTL", "5m")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("demo"),
    );
    let mut out = String::new();
    let mut lines = std::io::BufReader::new(child.stdout.take().expect("stdout")).lines();
    for line in lines.by_ref() {
        let line = line.expect("line");
        out.push_str(&line);
        out.push('\n');
        if line.starts_with("Ctrl-C") {
            break;
        }
    }
    let url = out
        .lines()
        .find_map(|l| l.strip_prefix("copyq-mcp demo listening on "))
        .expect("listening line")
        .to_owned();
    assert!(
        out.contains(&format!(
            "OAuth: give an MCP client the URL {url} with no token"
        )) && out.contains("(the one you gave)")
            && out.contains(&format!(
                "codex mcp add copyq-demo --url {url} --oauth-client-registration dcr"
            )),
        "{out}"
    );
    let store =
        copyq_mcp::store::Store::open(&data.path().join("state")).expect("state in --data-dir");
    // Claude Code is given a client registered for the run (its default path, a metadata
    // document on claude.ai, fails offline), whose callback is the port it is told to use.
    let add = out
        .lines()
        .find(|l| l.trim_start().starts_with("claude mcp add"))
        .expect("a claude mcp add line");
    let words: Vec<&str> = add.split_whitespace().collect();
    let after = |flag: &str| {
        words
            .iter()
            .position(|w| *w == flag)
            .and_then(|i| words.get(i + 1))
            .copied()
            .unwrap_or_else(|| panic!("{flag} in {add}"))
    };
    assert_eq!(words.last().copied(), Some(url.as_str()), "{add}");
    let client = store
        .client(after("--client-id"))
        .expect("store")
        .expect("the printed client is registered");
    assert_eq!(
        client.redirect_uris,
        [format!(
            "http://localhost:{}/callback",
            after("--callback-port")
        )]
    );
    let phc = store.passphrase_hash().expect("read").expect("set");
    assert!(copyq_mcp::oauth::passphrase::verify(
        "a demo passphrase",
        &phc
    ));
    // The file and the environment both reached the demo: the consent page says so.
    let base = url.trim_end_matches("/mcp");
    let reg: serde_json::Value = reqwest::Client::new()
        .post(format!("{base}/register"))
        .json(&json!({"redirect_uris": ["http://127.0.0.1:9/cb"], "token_endpoint_auth_method": "none"}))
        .send()
        .await
        .expect("register")
        .json()
        .await
        .expect("json");
    let page = reqwest::Client::new()
        .get(format!("{base}/authorize"))
        .query(&[
            ("response_type", "code"),
            ("client_id", reg["client_id"].as_str().expect("id")),
            (
                "code_challenge",
                "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
            ),
            ("code_challenge_method", "S256"),
        ])
        .send()
        .await
        .expect("page")
        .text()
        .await
        .expect("html");
    assert!(
        page.contains("Access lasts 5 minutes at a time")
            && page.contains("after 7 days without use"),
        "{page}"
    );
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let _ = child.wait();
}

/// The allocator the binary runs with on Linux (issue 22 item 6): jemalloc with the settings
/// `.cargo/config.toml` bakes in, read back from jemalloc's own report of its options (printed
/// at exit when asked through its environment). Without them the pages a search of a whole
/// history freed would stay resident for 10 s (jemalloc's default) or for good (glibc's arenas).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn the_allocator_gives_freed_memory_back() {
    let out = Command::new(BIN)
        .arg("--version")
        .env("_RJEM_MALLOC_CONF", "stats_print:true")
        .output()
        .expect("run copyq-mcp --version");
    assert!(out.status.success());
    let report = String::from_utf8_lossy(&out.stderr);
    for option in [
        "opt.background_thread: true",
        "opt.narenas: 1\n",
        "opt.dirty_decay_ms: 250 ",
        "opt.muzzy_decay_ms: 0 ",
    ] {
        assert!(
            report.contains(option),
            "jemalloc's options lack {option:?}:\n{}",
            report
                .lines()
                .filter(|l| l.contains("opt."))
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}
