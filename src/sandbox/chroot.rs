//! Running the sandbox's programs on the host or inside a Debian chroot holding another CopyQ
//! version (see [`super`] for how the two share paths).

use std::io;
use std::path::Path;
use std::process::Command;

/// Names the chroot [`super::PrivateCopyq::start`] runs CopyQ in, when set (the version matrix).
pub(super) const CHROOT_ENV: &str = "COPYQ_MCP_TEST_CHROOT";

/// `PATH` inside a chroot: the host's may name directories the chroot lacks.
const CHROOT_PATH: &str = "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";

/// `program` on the host, or inside `chroot` (`chroot DIR /usr/bin/env PATH=... program`; both
/// exec, so the child's pid is the program's and its process group is the program's).
pub(super) fn program(chroot: Option<&Path>, program: &str) -> Command {
    match chroot {
        None => Command::new(program),
        Some(dir) => {
            let mut cmd = Command::new("chroot");
            cmd.arg(dir).args(["/usr/bin/env", CHROOT_PATH, program]);
            cmd
        }
    }
}

/// `program` as a shell command line, for the wrapper script: the host's or the chroot's.
pub(super) fn shell_command(chroot: Option<&Path>, program: &str) -> String {
    match chroot {
        None => program.to_owned(),
        Some(root) => format!(
            "chroot '{}' /usr/bin/env {CHROOT_PATH} {program}",
            root.display()
        ),
    }
}

/// A chroot whose `/tmp` is not the host's cannot share the sandbox's paths: say so early.
pub(super) fn check_tmp_shared(root: &Path) -> io::Result<()> {
    let probe = tempfile::Builder::new()
        .prefix("copyq-mcp-probe-")
        .tempfile_in("/tmp")?;
    let inside = root.join(probe.path().strip_prefix("/").unwrap_or(probe.path()));
    if inside.exists() {
        return Ok(());
    }
    Err(io::Error::other(format!(
        "{} does not see the host's /tmp: mount it first (tests/copyq-versions/chroot.sh mount {})",
        root.display(),
        root.display()
    )))
}
