//! The HS256 signing key: read from config or a file, or generated into the data dir on first use
//! with mode 0600. Its `Debug` never shows it.

use std::fs;
use std::io::{self, Write};
use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

/// Shortest key accepted, in bytes (HS256's block-size security level).
pub const MIN_KEY_BYTES: usize = 32;

/// A secret string from configuration.
#[derive(Clone, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    pub fn new(s: impl Into<String>) -> Self {
        Self(s.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[redacted]")
    }
}

/// Key bytes from a key file's text: base64 of at least [`MIN_KEY_BYTES`] bytes.
fn decode(text: &str, origin: &str) -> io::Result<Vec<u8>> {
    let bytes = STANDARD
        .decode(text.trim())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, format!("{origin}: not base64")))?;
    if bytes.len() < MIN_KEY_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{origin}: key shorter than {MIN_KEY_BYTES} bytes"),
        ));
    }
    Ok(bytes)
}

/// The key from `path`, creating a fresh random one there (mode 0600, parent 0700) if absent.
pub fn load_or_create_key(path: &Path) -> io::Result<Vec<u8>> {
    let origin = path.display().to_string();
    match fs::read_to_string(path) {
        Ok(text) => {
            if let Some(mode) = crate::private::loose_mode(&fs::metadata(path)?) {
                tracing::warn!(path = %origin, mode = format!("{mode:o}"), "signing key is readable by others; chmod 600 it");
            }
            return decode(&text, &origin);
        }
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        Err(_) => {}
    }
    if let Some(dir) = path.parent() {
        crate::private::mkdir(dir)?;
    }
    let mut key = vec![0u8; MIN_KEY_BYTES];
    getrandom::fill(&mut key).map_err(|e| io::Error::other(e.to_string()))?;
    // Written whole to a private temp file, then linked into place without clobbering: a
    // concurrent reader never sees a half-written key, and a concurrent creator's key wins whole.
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".signing-key")
        .tempfile_in(dir)?;
    crate::private::set_mode(tmp.path(), 0o600)?;
    tmp.write_all(STANDARD.encode(&key).as_bytes())?;
    tmp.as_file().sync_all()?;
    match tmp.persist_noclobber(path) {
        Ok(_) => {
            tracing::info!(path = %origin, "generated a new token signing key");
            Ok(key)
        }
        Err(e) if e.error.kind() == io::ErrorKind::AlreadyExists => {
            decode(&fs::read_to_string(path)?, &origin)
        }
        Err(e) => Err(e.error),
    }
}

/// Key bytes given inline in configuration (base64, or the raw text if it is long enough).
pub fn inline_key(secret: &Secret) -> io::Result<Vec<u8>> {
    decode(secret.expose(), "auth.signing_key").or_else(|_| {
        let raw = secret.expose().as_bytes().to_vec();
        if raw.len() >= MIN_KEY_BYTES {
            Ok(raw)
        } else {
            Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("auth.signing_key: shorter than {MIN_KEY_BYTES} bytes"),
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_key_is_private_and_stable() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/signing.key");
        let a = load_or_create_key(&path).unwrap();
        let b = load_or_create_key(&path).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.len(), MIN_KEY_BYTES);
        // Modes are Unix's; on Windows the key inherits the data dir's ACL (private.rs).
        #[cfg(unix)]
        use std::os::unix::fs::PermissionsExt;
        #[cfg(unix)]
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        #[cfg(unix)]
        assert_eq!(
            fs::metadata(path.parent().unwrap())
                .unwrap()
                .permissions()
                .mode()
                & 0o777,
            0o700
        );
    }

    #[test]
    fn concurrent_first_use_agrees_on_one_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("signing.key");
        let keys: Vec<Vec<u8>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| s.spawn(|| load_or_create_key(&path).unwrap()))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(keys.windows(2).all(|w| w[0] == w[1]));
        let leftovers = fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(leftovers, 1, "temp files are cleaned up");
    }

    #[test]
    fn short_or_garbled_keys_are_refused() {
        assert!(inline_key(&Secret::new("short")).is_err());
        assert!(inline_key(&Secret::new("x".repeat(40))).is_ok());
        assert_eq!(format!("{:?}", Secret::new("hunter2")), "[redacted]");
    }
}
