//! Files only the owner may read, from the first byte: the gateway's state (the database and its
//! WAL, which hold removed clipboard text and secret hashes; the signing and TLS keys) is created
//! in a 0700 directory as 0600 files. The process umask is set to 077 before anything is created,
//! so that files made by others on our behalf (SQLite's `-wal` and `-shm`) are private too.

use std::fs::{DirBuilder, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// Make every file and directory this process creates from now on private to its owner.
pub fn restrict_process() {
    rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o077));
}

/// `path` as a directory only its owner may enter: created 0700, or tightened to 0700.
pub fn dir(path: &Path) -> io::Result<()> {
    DirBuilder::new().recursive(true).mode(0o700).create(path)?;
    let meta = std::fs::metadata(path)?;
    if meta.permissions().mode() & 0o077 != 0 {
        tracing::info!(dir = %path.display(), "making the data dir private (0700)");
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// `path` as an existing file only its owner may read: created empty with 0600 if missing, or
/// tightened to 0600.
pub fn file(path: &Path) -> io::Result<()> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)?;
    if std::fs::metadata(path)?.permissions().mode() & 0o077 != 0 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn dirs_and_files_are_private_whatever_the_umask() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("a/b");
        dir(&d).unwrap();
        assert_eq!(mode(&d), 0o700);
        let f = d.join("db");
        file(&f).unwrap();
        assert_eq!(mode(&f), 0o600);
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        dir(&d).unwrap();
        file(&f).unwrap();
        assert_eq!((mode(&d), mode(&f)), (0o700, 0o600), "tightened");
    }
}
