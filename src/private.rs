//! Files only the owner may read, from the first byte: the gateway's state (the database and its
//! WAL, which hold removed clipboard text and secret hashes; the signing and TLS keys) is created
//! in a 0700 directory as 0600 files. The process umask is set to 077 before anything is created,
//! so that files made by others on our behalf (SQLite's `-wal` and `-shm`) are private too.
//!
//! On Windows there are no mode bits: what is relied on there is the default ACL that a file
//! inherits from its directory, and the data dir is under `%LOCALAPPDATA%` (the user's profile),
//! whose ACL grants the user, SYSTEM and Administrators only. The functions below create what is
//! asked and leave the ACL as inherited; a data dir configured outside the profile gets that
//! place's ACL, which the operator must check (README, Windows).

use std::io;
use std::path::Path;

#[cfg(unix)]
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};

/// Make every file and directory this process creates from now on private to its owner.
#[cfg(unix)]
pub fn restrict_process() {
    rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o077));
}

/// Windows has no umask: new files inherit their directory's ACL (see the module's doc).
#[cfg(windows)]
pub fn restrict_process() {}

/// `path` as a directory only its owner may enter: created 0700, or tightened to 0700.
#[cfg(unix)]
pub fn dir(path: &Path) -> io::Result<()> {
    mkdir(path)?;
    let meta = std::fs::metadata(path)?;
    if meta.permissions().mode() & 0o077 != 0 {
        tracing::info!(dir = %path.display(), "making the data dir private (0700)");
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// `path` as a directory, created with its parents (the inherited ACL, see the module's doc).
#[cfg(windows)]
pub fn dir(path: &Path) -> io::Result<()> {
    mkdir(path)
}

/// Create `path` and its parents, each new one 0700; existing ones are left as they are.
pub fn mkdir(path: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    builder.mode(0o700);
    builder.create(path)
}

/// `path` as an existing file only its owner may read: created empty with 0600 if missing, or
/// tightened to 0600.
pub fn file(path: &Path) -> io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    options.mode(0o600);
    options.open(path)?;
    if loose_mode(&std::fs::metadata(path)?).is_some() {
        set_mode(path, 0o600)?;
    }
    Ok(())
}

/// Set `path`'s mode bits (a no-op on Windows, which has none).
pub fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    #[cfg(unix)]
    return std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode));
    #[cfg(windows)]
    {
        let _ = (path, mode);
        Ok(())
    }
}

/// The mode bits (`& 0o777`) of a file that others than its owner may read or enter; `None` when
/// it is private, and always on Windows.
pub fn loose_mode(meta: &std::fs::Metadata) -> Option<u32> {
    #[cfg(unix)]
    return (meta.permissions().mode() & 0o077 != 0).then_some(meta.permissions().mode() & 0o777);
    #[cfg(windows)]
    {
        let _ = meta;
        None
    }
}

#[cfg(all(test, unix))]
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
        assert_eq!(loose_mode(&std::fs::metadata(&f).unwrap()), None);
        set_mode(&f, 0o640).unwrap();
        assert_eq!(loose_mode(&std::fs::metadata(&f).unwrap()), Some(0o640));
    }
}
