//! `copyq-mcp doctor` against a real private CopyQ: a healthy setup, CopyQ down, a wrong session,
//! an unreachable metadata host and an inconsistent public URL, each as the report's lines, its
//! JSON and its exit status.

use std::process::Command;

use crate::support::*;
use serde_json::Value;

fn copyq() -> &'static PrivateCopyq {
    static COPYQ: std::sync::OnceLock<PrivateCopyq> = std::sync::OnceLock::new();
    private_copyq(&COPYQ)
}

const BIN: &str = env!("CARGO_BIN_EXE_copyq-mcp");
/// `.invalid` never resolves (RFC 6761): the metadata check fails the same way everywhere.
const UNREACHABLE_DOC: &str = "https://cimd.invalid/oauth/client-metadata";

/// `copyq-mcp doctor ARGS` on `data` against the private CopyQ, with `env` on top; (exit ok,
/// stdout).
fn doctor(data: &std::path::Path, env: &[(&str, &str)], args: &[&str]) -> (bool, String) {
    let c = copyq();
    let xdg = data.join("xdg");
    let out = Command::new(BIN)
        .arg("doctor")
        .args(args)
        .args(["--metadata-url", UNREACHABLE_DOC, "--data-dir"])
        .arg(data)
        .env("XDG_CONFIG_HOME", &xdg)
        .env("COPYQ_MCP__COPYQ__SESSION", c.session())
        .env("COPYQ_MCP__COPYQ__SETTINGS_PATH", c.settings_path())
        .env("COPYQ_MCP__COPYQ__COMMAND", c.cli_command())
        .envs(env.iter().copied())
        .output()
        .expect("run doctor");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// The report's line for `check` (the first), or a panic showing the report.
fn line<'a>(report: &'a str, status: &str, check: &str) -> &'a str {
    report
        .lines()
        .find(|l| {
            let mut words = l.split_whitespace();
            words.next() == Some(status) && words.next() == Some(check)
        })
        .unwrap_or_else(|| panic!("no '{status} {check}' line in:\n{report}"))
}

fn issue(data: &std::path::Path) {
    let out = Command::new(BIN)
        .args([
            "token",
            "issue",
            "--role",
            "read",
            "--name",
            "d",
            "--data-dir",
        ])
        .arg(data)
        .env("XDG_CONFIG_HOME", data.join("xdg"))
        .output()
        .expect("token issue");
    assert!(out.status.success());
}

#[test]
fn a_healthy_setup_passes() {
    let data = tempfile::tempdir().expect("tempdir");
    issue(data.path());
    let (ok, report) = doctor(data.path(), &[], &[]);
    assert!(ok, "{report}");
    let socket =
        copyq_mcp::backend::socket::path::socket_path(copyq().settings_path(), copyq().session())
            .expect("socket path");
    let target = line(&report, "ok", "copyq-target");
    assert!(
        target.contains(&format!("socket {}", socket.display())),
        "{target}"
    );
    assert!(
        target.contains(&format!("session {}", copyq().session())),
        "{target}"
    );
    assert!(
        line(&report, "ok", "copyq").contains("answers through the socket, protocol Qt"),
        "{report}"
    );
    assert!(
        line(&report, "ok", "copyq").contains(", CopyQ "),
        "{report}"
    );
    assert!(
        line(&report, "ok", "tokens").contains("1 active, 0 expired, 0 revoked"),
        "{report}"
    );
    assert!(line(&report, "ok", "data-dir").contains(&data.path().display().to_string()));
    assert!(line(&report, "warn", "passphrase").contains("copyq-mcp passphrase set"));
    assert!(report.ends_with("0 problem(s), 2 warning(s)\n"), "{report}");

    let (ok, json) = doctor(data.path(), &[], &["--json"]);
    assert!(ok);
    let json: Value = serde_json::from_str(&json).expect("JSON report");
    assert_eq!(json["ok"], true);
    assert_eq!(json["problems"], 0);
    assert!(
        json["checks"]
            .as_array()
            .expect("checks")
            .iter()
            .any(|c| c["check"] == "copyq" && c["status"] == "ok")
    );
}

#[test]
fn an_unreachable_metadata_host_is_a_warning_with_its_cause() {
    let data = tempfile::tempdir().expect("tempdir");
    let (_, report) = doctor(data.path(), &[], &[]);
    let l = line(&report, "warn", "metadata-docs");
    assert!(
        l.starts_with(&format!(
            "warn     metadata-docs {UNREACHABLE_DOC} cannot be fetched from here: DNS: cannot resolve cimd.invalid: "
        )),
        "{l}"
    );
    assert!(
        l.contains("; fix: connectors that identify by such a document"),
        "{l}"
    );
}

#[test]
fn copyq_down_is_a_problem() {
    let data = tempfile::tempdir().expect("tempdir");
    let empty = tempfile::tempdir().expect("tempdir");
    let empty_path = empty.path().display().to_string();
    let (ok, report) = doctor(
        data.path(),
        &[("COPYQ_MCP__COPYQ__SETTINGS_PATH", &empty_path)],
        &[],
    );
    assert!(!ok, "{report}");
    let socket = copyq_mcp::backend::socket::path::socket_path(empty.path(), copyq().session())
        .expect("socket path");
    let l = line(&report, "problem", "copyq");
    assert!(
        l.contains(&format!(
            "CopyQ does not answer at socket {}; fix: start CopyQ",
            socket.display()
        )),
        "{l}"
    );
}

#[test]
fn a_wrong_session_names_the_one_that_answers() {
    let data = tempfile::tempdir().expect("tempdir");
    let (ok, report) = doctor(data.path(), &[("COPYQ_MCP__COPYQ__SESSION", "nosuch")], &[]);
    assert!(!ok, "{report}");
    let l = line(&report, "problem", "copyq");
    let session = copyq().session();
    assert!(l.contains("CopyQ does not answer at socket "), "{l}");
    assert!(
        l.contains(&format!(
            "CopyQ answers under another session here (session {session} at "
        )),
        "{l}"
    );
    assert!(
        l.contains(&format!(
            "set copyq.session = \"{session}\" in the config file"
        )),
        "{l}"
    );
}

#[test]
fn an_inconsistent_public_url_is_a_problem() {
    let data = tempfile::tempdir().expect("tempdir");
    let (ok, report) = doctor(
        data.path(),
        &[("COPYQ_MCP__SERVER__PUBLIC_URL", "http://copyq.example.com")],
        &[],
    );
    assert!(!ok, "{report}");
    assert_eq!(
        line(&report, "problem", "public-url"),
        "problem  public-url    http://copyq.example.com is plain http on a non-loopback host: Claude and ChatGPT need https; fix: use the https URL your tunnel or reverse proxy serves"
    );
    let (ok, report) = doctor(
        data.path(),
        &[("COPYQ_MCP__SERVER__PUBLIC_URL", "http://127.0.0.1:9999")],
        &[],
    );
    assert!(!ok, "{report}");
    assert!(
        line(&report, "problem", "public-url")
            .contains("at another port than server.bind 127.0.0.1:8765"),
        "{report}"
    );
}
