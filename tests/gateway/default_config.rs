//! The default config file (`$XDG_CONFIG_HOME/copyq-mcp/config.toml`) as a user meets it: every
//! subcommand reads it without flags, so a token from a bare `token issue` is accepted by a bare
//! `serve`, and each command says on stderr which data dir it used.

use std::process::{Command, Stdio};

use crate::support::*;
use serde_json::json;

fn copyq() -> &'static PrivateCopyq {
    static COPYQ: std::sync::OnceLock<PrivateCopyq> = std::sync::OnceLock::new();
    private_copyq(&COPYQ)
}

const BIN: &str = env!("CARGO_BIN_EXE_copyq-mcp");

/// `copyq-mcp ARGS` with only `XDG_CONFIG_HOME` to find its settings by (no `COPYQ_MCP__*`).
fn bare(xdg: &std::path::Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .env("XDG_CONFIG_HOME", xdg)
        .env_remove("RUST_LOG");
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("COPYQ_MCP__") {
            cmd.env_remove(key);
        }
    }
    cmd
}

#[tokio::test]
async fn a_bare_token_issue_is_accepted_by_a_bare_serve() {
    copyq()
        .seed("mcp/info", &items(&["from the default config"]))
        .expect("seed");
    let xdg = tempfile::tempdir().expect("tempdir");
    let data = xdg.path().join("state");
    std::fs::create_dir_all(xdg.path().join("copyq-mcp")).expect("dir");
    let c = copyq();
    std::fs::write(
        xdg.path().join("copyq-mcp/config.toml"),
        format!(
            "data_dir = {:?}\n[server]\nbind = \"127.0.0.1:0\"\n[copyq]\nsession = {:?}\nsettings_path = {:?}\ncommand = {:?}\n",
            data.display().to_string(),
            c.session(),
            c.settings_path().display().to_string(),
            c.cli_command().display().to_string(),
        ),
    )
    .expect("config");

    let out = bare(
        xdg.path(),
        &["token", "issue", "--role", "read", "--name", "bare"],
    )
    .output()
    .expect("token issue");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let token = String::from_utf8(out.stdout)
        .expect("utf-8")
        .trim()
        .to_owned();
    let config = xdg.path().join("copyq-mcp/config.toml");
    assert_eq!(
        stderr,
        format!(
            "copyq-mcp: data dir {} (config files: {})\n",
            data.display(),
            config.display()
        )
    );
    assert!(
        data.join("signing.key").is_file(),
        "the token's key is in the configured data dir"
    );

    let mut child = Spawned(
        bare(xdg.path(), &["serve"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("serve"),
    );
    let url = listening_url(&mut child);
    let reply = {
        let client = client(&url, &token).await;
        ok(&client, "mcp_read", json!({"mode": "list", "tab": "info"})).await
    };
    let _ = child.kill();
    let _ = child.wait();
    assert!(reply.contains("from the default config"), "{reply}");
}

#[test]
fn a_broken_default_file_is_named_and_a_missing_one_is_fine() {
    let xdg = tempfile::tempdir().expect("tempdir");
    let data = tempfile::tempdir().expect("tempdir");
    let list = |xdg: &std::path::Path| {
        bare(xdg, &["token", "list", "--data-dir"])
            .arg(data.path())
            .output()
            .expect("token list")
    };
    let out = list(xdg.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("config files: none, built-in defaults"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let file = xdg.path().join("copyq-mcp/config.toml");
    std::fs::create_dir_all(file.parent().expect("parent")).expect("dir");
    std::fs::write(&file, "[server\nbind = 1\n").expect("write");
    let out = list(xdg.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.starts_with(&format!(
            "error: configuration: config file {}: ",
            file.display()
        )),
        "{stderr}"
    );
}
