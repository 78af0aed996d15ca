//! Built-in HTTPS (rustls): the certificate and key from `tls.cert` / `tls.key`, reloaded on SIGHUP
//! or when either file changes, and `copyq-mcp tls generate`, which makes a self-signed certificate
//! for the machine's names and prints the fingerprints a LAN client pins.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use axum_server::tls_rustls::RustlsConfig;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

/// How often the certificate files are checked for changes.
const POLL: Duration = Duration::from_secs(2);

#[derive(Debug, Clone)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

fn modified(files: &TlsFiles) -> Option<(SystemTime, SystemTime)> {
    let m = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    Some((m(&files.cert)?, m(&files.key)?))
}

pub async fn load(files: &TlsFiles) -> std::io::Result<RustlsConfig> {
    RustlsConfig::from_pem_file(&files.cert, &files.key)
        .await
        .map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!(
                    "TLS certificate {} / key {}: {e}",
                    files.cert.display(),
                    files.key.display()
                ),
            )
        })
}

/// Reload the certificate on SIGHUP or when its files change, until `stop`. A bad new pair is
/// logged and the current one kept.
pub(crate) fn watch(config: RustlsConfig, files: TlsFiles, stop: CancellationToken) {
    tokio::spawn(async move {
        let mut hup = crate::shutdown::Hangup::new();
        let mut seen = modified(&files);
        loop {
            let hup_fired = hup.recv();
            let reason = tokio::select! {
                _ = stop.cancelled() => return,
                _ = hup_fired => "SIGHUP",
                _ = tokio::time::sleep(POLL) => {
                    let now = modified(&files);
                    if now == seen || now.is_none() { continue; }
                    seen = now;
                    "file change"
                }
            };
            match config.reload_from_pem_file(&files.cert, &files.key).await {
                Ok(()) => tracing::info!(%reason, "TLS certificate reloaded"),
                Err(e) => {
                    tracing::error!(%reason, error = %e, "TLS certificate not reloaded; keeping the current one")
                }
            }
        }
    });
}

/// What `tls generate` made.
#[derive(Debug)]
pub struct Generated {
    pub cert: PathBuf,
    pub key: PathBuf,
    /// SHA-256 of the certificate, `AA:BB:...`.
    pub fingerprint: String,
    /// `sha256//<base64>` of the public key, for `curl --pinnedpubkey`.
    pub pin: String,
}

/// The machine's names: `localhost`, its host name, loopback and its own addresses (from
/// `hostname -I`, when that exists).
pub(crate) fn machine_names() -> Vec<String> {
    let mut names = vec![
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
        "::1".to_owned(),
    ];
    let run = |args: &[&str]| {
        std::process::Command::new("hostname")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
    };
    if let Some(host) = run(&[])
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
    {
        names.push(format!("{host}.local"));
        names.push(host);
    }
    names.extend(
        run(&["-I"])
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_owned),
    );
    names.dedup();
    names
}

/// A self-signed certificate for `names` (DNS names or IP addresses), written into `dir` as
/// `cert.pem` and `key.pem` (mode 0600).
pub fn generate(names: &[String], dir: &Path) -> Result<Generated, String> {
    let key_pair = rcgen::KeyPair::generate().map_err(|e| e.to_string())?;
    let mut params = rcgen::CertificateParams::new(names.to_vec()).map_err(|e| e.to_string())?;
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "copyq-mcp");
    params.not_before = rcgen::date_time_ymd(2024, 1, 1);
    params.not_after = rcgen::date_time_ymd(2036, 1, 1);
    let cert = params.self_signed(&key_pair).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let (cert_path, key_path) = (dir.join("cert.pem"), dir.join("key.pem"));
    let write = |path: &Path, text: &str, mode: u32| -> Result<(), String> {
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, text).map_err(|e| format!("{}: {e}", tmp.display()))?;
        crate::private::set_mode(&tmp, mode).map_err(|e| e.to_string())?;
        std::fs::rename(&tmp, path).map_err(|e| format!("{}: {e}", path.display()))
    };
    write(&key_path, &key_pair.serialize_pem(), 0o600)?;
    write(&cert_path, &cert.pem(), 0o644)?;
    let fingerprint = Sha256::digest(cert.der())
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":");
    // The public key as SubjectPublicKeyInfo DER: the body of its PEM.
    let spki_b64: String = key_pair
        .public_key_pem()
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .collect();
    let spki = STANDARD.decode(spki_b64).map_err(|e| e.to_string())?;
    let pin = format!("sha256//{}", STANDARD.encode(Sha256::digest(spki)));
    Ok(Generated {
        cert: cert_path,
        key: key_path,
        fingerprint,
        pin,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generates_a_private_key_and_a_loadable_pair() {
        let dir = tempfile::tempdir().unwrap();
        let g = generate(
            &["localhost".into(), "127.0.0.1".into(), "desk.lan".into()],
            dir.path(),
        )
        .unwrap();
        #[cfg(unix)]
        use std::os::unix::fs::PermissionsExt;
        #[cfg(unix)]
        assert_eq!(
            std::fs::metadata(&g.key).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(g.fingerprint.len(), 32 * 3 - 1);
        assert!(g.pin.starts_with("sha256//"));
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(load(&TlsFiles {
            cert: g.cert,
            key: g.key,
        }))
        .unwrap();
    }

    #[test]
    fn names_include_loopback() {
        let n = machine_names();
        assert!(n.contains(&"localhost".to_owned()) && n.contains(&"127.0.0.1".to_owned()));
    }
}
