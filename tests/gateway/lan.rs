//! A second machine on the LAN: a network namespace with its own address, joined to this host by
//! a veth pair, reaches the gateway bound on the LAN side over HTTPS, pinning its self-signed
//! certificate. Needs root and iproute2 (tests/run.sh installs it), as CI has.

use std::process::Command;

use crate::support::*;
use serde_json::Value;

/// This suite's own private CopyQ, started on first use.
fn copyq() -> &'static PrivateCopyq {
    static COPYQ: std::sync::OnceLock<PrivateCopyq> = std::sync::OnceLock::new();
    private_copyq(&COPYQ)
}

/// The namespace and link, removed when dropped.
struct Lan {
    ns: String,
    link: String,
    host: String,
}

fn ip(args: &[&str]) {
    let out = Command::new("ip")
        .args(args)
        .output()
        .expect("ip (apt-get install iproute2)");
    assert!(
        out.status.success(),
        "ip {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Lan {
    fn new() -> Lan {
        let id = std::process::id() % 10_000;
        let (ns, link, peer) = (format!("cqlan{id}"), format!("cqh{id}"), format!("cqc{id}"));
        let subnet = format!("10.199.{}", id % 250);
        let lan = Lan {
            ns: ns.clone(),
            link: link.clone(),
            host: format!("{subnet}.1"),
        };
        ip(&["netns", "add", &ns]);
        ip(&["link", "add", &link, "type", "veth", "peer", "name", &peer]);
        ip(&["link", "set", &peer, "netns", &ns]);
        ip(&["addr", "add", &format!("{subnet}.1/30"), "dev", &link]);
        ip(&["link", "set", &link, "up"]);
        ip(&[
            "netns",
            "exec",
            &ns,
            "ip",
            "addr",
            "add",
            &format!("{subnet}.2/30"),
            "dev",
            &peer,
        ]);
        ip(&["netns", "exec", &ns, "ip", "link", "set", &peer, "up"]);
        ip(&["netns", "exec", &ns, "ip", "link", "set", "lo", "up"]);
        lan
    }

    /// curl run on the other machine.
    async fn curl(&self, args: Vec<String>) -> (bool, String) {
        let mut cmd = Command::new("ip");
        cmd.args([
            "netns",
            "exec",
            &self.ns,
            "curl",
            "-sS",
            "--fail",
            "--max-time",
            "10",
        ])
        .args(args);
        let out = tokio::task::spawn_blocking(move || cmd.output())
            .await
            .expect("join")
            .expect("curl");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    }
}

impl Drop for Lan {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["link", "del", &self.link])
            .output();
        let _ = Command::new("ip").args(["netns", "del", &self.ns]).output();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_machine_reaches_the_gateway_over_pinned_https() {
    copyq()
        .seed("mcp/info", &items(&["seen from the LAN"]))
        .expect("seed");
    let lan = Lan::new();
    let dir = tempfile::tempdir().expect("tempdir");
    let cert =
        copyq_mcp::tls::generate(std::slice::from_ref(&lan.host), dir.path()).expect("certificate");
    let gw = gateway_with(copyq(), |s| {
        s.server.bind = format!("{}:0", lan.host).parse().expect("addr");
        s.tls.cert = cert.cert.display().to_string();
        s.tls.key = cert.key.display().to_string();
    })
    .await;
    assert!(
        gw.url.starts_with(&format!("https://{}:", lan.host)),
        "{}",
        gw.url
    );
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcp_read","arguments":{"mode":"list","tab":"info"}}}"#;
    let request = |trust: Vec<String>, url: String| {
        let mut args = trust;
        args.extend([
            "-H".into(),
            format!("Authorization: Bearer {}", gw.read),
            "-H".into(),
            "Content-Type: application/json".into(),
            "-H".into(),
            "Accept: application/json, text/event-stream".into(),
            "-d".into(),
            call.into(),
            url,
        ]);
        args
    };
    let (ok, body) = lan
        .curl(request(
            vec!["--cacert".into(), cert.cert.display().to_string()],
            gw.url.clone(),
        ))
        .await;
    assert!(ok, "trusting the certificate: {body}");
    let v: Value = serde_json::from_str(&body).expect("json");
    assert!(
        v["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("seen from the LAN")),
        "{body}"
    );
    let (ok, _) = lan
        .curl(request(
            vec!["-k".into(), "--pinnedpubkey".into(), cert.pin.clone()],
            gw.url.clone(),
        ))
        .await;
    assert!(ok, "pinning the key");
    let (ok, _) = lan
        .curl(request(
            vec![
                "-k".into(),
                "--pinnedpubkey".into(),
                "sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=".into(),
            ],
            gw.url.clone(),
        ))
        .await;
    assert!(!ok, "another key is refused");
    let (ok, _) = lan
        .curl(request(vec![], gw.url.replace("https://", "http://")))
        .await;
    assert!(!ok, "no plain HTTP");
}
