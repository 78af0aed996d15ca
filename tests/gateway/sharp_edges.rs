//! The owner's commands where they used to cut: a listing read by `head` (broken pipe), `token
//! issue` arguments that can never work, a certificate replaced by accident, an audit entry
//! restored twice, and the completions and manual page made from the same grammar as `--help`.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use copyq_mcp::store::{AuditEntry, Store, TokenInfo};

use crate::support::*;

const BIN: &str = env!("CARGO_BIN_EXE_copyq-mcp");

/// This suite's own private CopyQ, started on first use.
fn copyq() -> &'static PrivateCopyq {
    static COPYQ: std::sync::OnceLock<PrivateCopyq> = std::sync::OnceLock::new();
    private_copyq(&COPYQ)
}

/// Run the binary against `data` (and, with `copyq`, that CopyQ): (success, stdout, stderr).
fn run(
    args: &[&str],
    data: &std::path::Path,
    copyq: Option<&PrivateCopyq>,
) -> (bool, String, String) {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .arg("--data-dir")
        .arg(data)
        .env_remove("RUST_LOG");
    if let Some(c) = copyq {
        cmd.env("COPYQ_MCP__COPYQ__SESSION", c.session())
            .env("COPYQ_MCP__COPYQ__SETTINGS_PATH", c.settings_path())
            .env("COPYQ_MCP__COPYQ__COMMAND", c.cli_command());
    }
    let out = cmd.output().expect("run copyq-mcp");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `token list | head -1`: the listing is far larger than a pipe holds, and its reader goes away
/// after one line. The command ends quietly and successfully, with no panic message.
#[test]
fn a_listing_cut_short_by_its_reader_ends_quietly() {
    let data = tempfile::tempdir().expect("tempdir");
    let store = Store::open(data.path()).expect("store");
    for n in 0..3000 {
        store
            .record_token(&TokenInfo {
                jti: format!("id-{n:05}-padding-padding"),
                subject: format!("holder-{n}"),
                role: "read".into(),
                grant_id: None,
                created: 1_800_000_000,
                expires: None,
                revoked: false,
                tabs: None,
            })
            .expect("record");
    }
    drop(store);
    let mut child = Command::new(BIN)
        .args(["token", "list", "--data-dir"])
        .arg(data.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut first = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut first)
        .expect("first line");
    assert!(first.starts_with("ID "), "{first}");
    // The reader is dropped here, as `head` exits after its lines.
    let out = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        without_data_dir(&stderr),
        "",
        "nothing on stderr but the data dir: {stderr}"
    );
    assert!(out.status.success(), "{:?}", out.status);
}

/// `token issue` refuses what can never work, and records nothing for it.
#[test]
fn token_issue_refuses_what_can_never_work() {
    let data = tempfile::tempdir().expect("tempdir");
    let d = data.path();
    let issue = |extra: &[&str]| {
        let mut args = vec!["token", "issue", "--role", "read"];
        args.extend_from_slice(extra);
        run(&args, d, None)
    };
    for (extra, says) in [
        (
            &["--name", "x", "--ttl", "0"][..],
            "'0' is no lifetime: the token would be expired when issued",
        ),
        (&["--name", "x", "--ttl", "0s"][..], "is no lifetime"),
        (&["--name", ""][..], "a token needs a name"),
        (&["--name", "   "][..], "a token needs a name"),
        (
            &["--name", "x", "--tabs", "mcp/workspce/p1"][..],
            "--tabs mcp/workspce/p1: 'workspce' is not a managed root (clipboard.roots: info, заметки, workspace)",
        ),
    ] {
        let (ok, stdout, stderr) = issue(extra);
        assert!(!ok, "{extra:?} was accepted: {stdout}");
        assert!(stderr.contains(says), "{extra:?}: {stderr}");
        assert!(stdout.is_empty(), "{extra:?} printed a token: {stdout}");
    }
    let (ok, listing, _) = run(&["token", "list"], d, None);
    assert!(ok);
    assert_eq!(listing.lines().count(), 1, "nothing recorded: {listing}");
    // What does work still does, under a configured root and without a lifetime.
    let (ok, token, stderr) = issue(&["--name", "x", "--tabs", "mcp/workspace/p1"]);
    assert!(ok && token.trim().split('.').count() == 3, "{stderr}");
}

/// An external `--tabs` entry that CopyQ has no tab of is issued, with a warning naming it; an
/// existing one, and managed subtrees (agents make those), are not warned about.
#[test]
fn token_issue_warns_about_a_tab_copyq_does_not_have() {
    copyq().seed("Recipes", &items(&["soup"])).expect("seed");
    let data = tempfile::tempdir().expect("tempdir");
    let (ok, token, stderr) = run(
        &[
            "token",
            "issue",
            "--role",
            "read",
            "--name",
            "cook",
            "--tabs",
            "Recipes,Recipies,mcp/workspace/not-yet",
        ],
        data.path(),
        Some(copyq()),
    );
    assert!(ok, "{stderr}");
    assert!(!token.trim().is_empty());
    assert_eq!(
        without_data_dir(&stderr).trim(),
        "warning: CopyQ has no tab named 'Recipies' now; the token covers a tab of exactly that \
         name if one is made (a managed tab is written mcp/PATH)"
    );
}

/// `tls generate` does not replace a pair without `--force`; with it, it does.
#[test]
fn tls_generate_replaces_a_certificate_only_with_force() {
    let data = tempfile::tempdir().expect("tempdir");
    let out = data.path().join("tls");
    let out_s = out.display().to_string();
    let generate = |force: bool| {
        let mut args = vec!["tls", "generate", "--name", "desk.local", "--out", &out_s];
        if force {
            args.push("--force");
        }
        run(&args, data.path(), None)
    };
    let (ok, first, stderr) = generate(false);
    assert!(ok, "{stderr}");
    let cert = std::fs::read(out.join("cert.pem")).expect("cert");
    let (ok, _, stderr) = generate(false);
    assert!(!ok);
    assert!(
        stderr.contains("cert.pem") && stderr.contains("Add --force to replace it"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(out.join("cert.pem")).expect("cert"),
        cert,
        "kept"
    );
    let (ok, second, stderr) = generate(true);
    assert!(ok, "{stderr}");
    assert_ne!(std::fs::read(out.join("cert.pem")).expect("cert"), cert);
    let fingerprint = |s: &str| {
        s.lines()
            .find(|l| l.starts_with("SHA-256 fingerprint:"))
            .map(str::to_owned)
    };
    assert_ne!(fingerprint(&first), fingerprint(&second));
}

/// `audit restore` takes the `#N` that `audit` prints, and puts an entry back only once.
#[test]
fn audit_restore_takes_the_printed_number_once() {
    let tab = "mcp/workspace/sharp-restore";
    copyq().seed(tab, &items(&["kept"])).expect("seed");
    let data = tempfile::tempdir().expect("tempdir");
    let id = Store::open(data.path())
        .expect("store")
        .record_audit(&AuditEntry {
            id: 0,
            at: 0,
            subject: "agent".into(),
            role: "write".into(),
            mode: "delete".into(),
            tab: tab.into(),
            to_tab: None,
            index: Some(0),
            detail: "text_len:7".into(),
            previous: vec![(tab.into(), items(&["removed"]))],
            outcome: "done".into(),
            note: String::new(),
        })
        .expect("audit");
    let (ok, listing, _) = run(&["audit"], data.path(), None);
    assert!(ok);
    let printed = listing
        .split_whitespace()
        .find(|w| w.starts_with('#'))
        .expect("an entry number")
        .to_owned();
    assert_eq!(printed, format!("#{id}"));
    let (ok, _, stderr) = run(&["audit", "restore", &printed], data.path(), Some(copyq()));
    assert!(ok, "{stderr}");
    assert!(stderr.contains("restored 1 item(s)"), "{stderr}");
    assert_eq!(tab_texts(copyq(), tab), ["removed", "kept"]);
    let (ok, _, stderr) = run(&["audit", "restore", &printed], data.path(), Some(copyq()));
    assert!(!ok);
    assert!(
        stderr.contains(&format!("audit entry #{id} was already restored")),
        "{stderr}"
    );
    assert_eq!(tab_texts(copyq(), tab), ["removed", "kept"], "not twice");
}

/// Completions for bash, zsh and fish, and the manual pages, come from the command's grammar.
#[test]
fn completions_and_manual_pages() {
    let data = tempfile::tempdir().expect("tempdir");
    let d = data.path();
    for shell in ["bash", "zsh", "fish"] {
        let out = Command::new(BIN)
            .args(["completions", shell])
            .output()
            .expect("run");
        let script = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{shell}");
        assert!(
            script.contains("copyq-mcp") && script.contains("revoke"),
            "{shell}: {script}"
        );
        if shell == "bash" {
            let file = d.join("completion.bash");
            std::fs::write(&file, script.as_bytes()).expect("write");
            let syntax = Command::new("bash").arg("-n").arg(&file).status();
            assert!(syntax.expect("bash").success(), "bash -n");
        }
    }
    let out = Command::new(BIN).arg("man").output().expect("run");
    let page = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(page.contains(".TH copyq-mcp 1"), "{page}");
    let dir = d.join("man");
    let status = Command::new(BIN)
        .args(["man", "--dir"])
        .arg(&dir)
        .status()
        .expect("run");
    assert!(status.success());
    let issue = std::fs::read_to_string(dir.join("copyq-mcp-token-issue.1")).expect("page");
    assert!(issue.contains("\\-\\-ttl"), "{issue}");
    // Each positional argument's help gives an example.
    for args in [
        &["token", "revoke", "--help"][..],
        &["clients", "revoke", "--help"],
        &["audit", "restore", "--help"],
        &["completions", "--help"],
    ] {
        let out = Command::new(BIN).args(args).output().expect("run");
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(
            help.contains("Arguments:") && help.contains("e.g."),
            "{args:?}: {help}"
        );
    }
}

/// `stderr` without the line every state command starts with (`copyq-mcp: data dir ...`, checked
/// in tests/gateway/default_config.rs).
fn without_data_dir(stderr: &str) -> String {
    stderr
        .lines()
        .filter(|l| !l.starts_with("copyq-mcp: data dir "))
        .map(|l| format!("{l}\n"))
        .collect()
}
