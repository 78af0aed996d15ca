//! A private, headless CopyQ: its own Xvfb display, session name and temp dirs, so it never touches
//! the desktop's CopyQ. The integration tests and `copyq-mcp demo` both start CopyQ through this.
//!
//! The CopyQ and Xvfb can also run inside a Debian chroot holding another CopyQ version (made by
//! tests/copyq-versions/chroot.sh, which bind-mounts the host's `/tmp` into it): the sandbox dir is
//! under `/tmp`, so its paths, the X socket and CopyQ's socket are the same inside and outside, and
//! the gateway reaches that CopyQ's socket directly. Its CLI goes through a wrapper script that runs
//! the chroot's `copyq`.

use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::spawn::OwnGroup;

use tempfile::TempDir;

use crate::backend::Item;
use crate::config::Settings;

mod chroot;
mod server;
use chroot::{CHROOT_ENV, program};

const READY_TIMEOUT: Duration = Duration::from_secs(30);
const SEED_SCRIPT: &str = r#"
var req = JSON.parse(str(input()));
tab(req.tab);
for (var i = 0; i < req.items.length; ++i) {
  var it = req.items[i];
  var args = [i, 'text/plain', it.text];
  if (it.tags.length) args.push('application/x-copyq-tags', it.tags.join(','));
  if (it.note) args.push('application/x-copyq-item-notes', it.note);
  write.apply(this, args);
}
"#;

/// Outlives the process that started the sandbox: once that process is gone (a test binary exits
/// without dropping its statics, or the demo is killed), kill every process group recorded in
/// `pgids` and remove the sandbox dir. No orphaned Xvfb or CopyQ is ever left behind.
const WATCHDOG: &str = r#"
while kill -0 "$1" 2>/dev/null; do sleep 1; done
for g in $(cat "$2/pgids" 2>/dev/null); do kill -KILL "-$g" 2>/dev/null; done
rm -rf "$2"
"#;

static SEQ: AtomicUsize = AtomicUsize::new(0);

pub struct PrivateCopyq {
    dir: TempDir,
    xvfb: Child,
    display: String,
    session: String,
    server: Option<Child>,
    chroot: Option<PathBuf>,
}

fn missing_tool(name: &str, e: io::Error) -> io::Error {
    if e.kind() == io::ErrorKind::NotFound {
        io::Error::new(
            e.kind(),
            format!("'{name}' not found: install it with `apt-get install -y copyq xvfb`"),
        )
    } else {
        e
    }
}

/// Note a process group for the watchdog to kill.
fn record_group(dir: &Path, pgid: u32) -> io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("pgids"))?;
    writeln!(f, "{pgid}")
}

/// The sandbox's dirs, with the watchdog that removes them (and kills what ran there) once this
/// process is gone.
fn sandbox_dir() -> io::Result<TempDir> {
    // Under /tmp itself (not $TMPDIR): a chroot sees the host's /tmp at the same path, so the
    // same sandbox can also serve a CopyQ in a chroot later (see [`PrivateCopyq::use_chroot`]).
    let dir = tempfile::Builder::new()
        .prefix("copyq-mcp-")
        .tempdir_in("/tmp")?;
    for sub in ["config", "data", "run", "cache", "gateway"] {
        std::fs::create_dir_all(dir.path().join(sub))?;
    }
    crate::private::set_mode(&dir.path().join("run"), 0o700)?;
    remove_when_gone(dir.path())?;
    Ok(dir)
}

/// Start the watchdog that, once this process is gone, kills the process groups recorded in
/// `dir/pgids` (none for a dir that records none) and removes `dir`: for dirs a test binary's
/// statics own, which are never dropped.
pub fn remove_when_gone(dir: &Path) -> io::Result<()> {
    Command::new("sh")
        .args(["-c", WATCHDOG, "copyq-mcp-watchdog"])
        .arg(std::process::id().to_string())
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .own_group()
        .spawn()?;
    Ok(())
}

/// Xvfb on a free display (in `chroot` if given), in its own process group: the child and its
/// display number.
fn start_xvfb(chroot: Option<&Path>, dir: &Path) -> io::Result<(Child, String)> {
    let mut xvfb = program(chroot, "Xvfb")
        .args([
            "-displayfd",
            "1",
            "-screen",
            "0",
            "1024x768x24",
            "-nolisten",
            "tcp",
        ])
        .stdin(Stdio::null())
        .own_group()
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| missing_tool("Xvfb", e))?;
    let mut line = String::new();
    if let Some(out) = xvfb.stdout.take() {
        BufReader::new(out).read_line(&mut line)?;
    }
    let number = line.trim();
    if number.is_empty() {
        let _ = xvfb.kill();
        return Err(io::Error::other("Xvfb did not report a display"));
    }
    record_group(dir, xvfb.id())?;
    Ok((xvfb, number.to_owned()))
}

impl PrivateCopyq {
    /// Start Xvfb on a free display and a CopyQ server in fresh temp dirs; wait until it answers.
    /// Both run inside the chroot named by [`CHROOT_ENV`] when it is set.
    pub fn start() -> io::Result<Self> {
        let chroot = std::env::var_os(CHROOT_ENV)
            .filter(|d| !d.is_empty())
            .map(PathBuf::from);
        Self::start_in(chroot)
    }

    /// [`Self::start`] on the host (`None`) or inside the chroot `chroot`.
    pub fn start_in(chroot: Option<PathBuf>) -> io::Result<Self> {
        Self::start_named(chroot, "t")
    }

    /// [`Self::start_in`] with a session named `prefix` and a number (at most 16 characters in
    /// all, CopyQ's limit): a prefix with capitals is spelled differently in the socket's name
    /// by CopyQ before 14 and since.
    pub fn start_named(chroot: Option<PathBuf>, prefix: &str) -> io::Result<Self> {
        if let Some(dir) = &chroot {
            chroot::check_tmp_shared(dir)?;
        }
        let dir = sandbox_dir()?;
        let (xvfb, number) = start_xvfb(chroot.as_deref(), dir.path())?;
        let session = format!(
            "{prefix}{}x{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let mut me = Self {
            dir,
            xvfb,
            display: format!(":{number}"),
            session,
            server: None,
            chroot,
        };
        me.write_cli_wrapper()?;
        me.start_server()?;
        Ok(me)
    }

    /// `copyq` for the CLI backend: the host's or the chroot's client (run inside it), with this
    /// sandbox's data dir: the client makes its log dir there, not in the user's ~/.local/share.
    fn write_cli_wrapper(&self) -> io::Result<()> {
        let data = self.dir.path().join("data");
        let run = chroot::shell_command(self.chroot.as_deref(), "copyq");
        let script = format!(
            "#!/bin/sh\nexport XDG_DATA_HOME='{}'\nexec {run} \"$@\"\n",
            data.display()
        );
        let path = self.cli_command();
        std::fs::write(&path, script)?;
        crate::private::set_mode(&path, 0o755)
    }

    /// Start the server from `chroot` (or the host) from the next [`Self::start_server`] on: the
    /// same session, dirs and display with another CopyQ version, as an upgrade would be.
    pub fn use_chroot(&mut self, chroot: Option<PathBuf>) -> io::Result<()> {
        if let Some(root) = &chroot {
            chroot::check_tmp_shared(root)?;
        }
        self.chroot = chroot;
        self.write_cli_wrapper()
    }

    /// What the CLI backend runs as `copyq`: a wrapper running the host's or the chroot's.
    pub fn cli_command(&self) -> PathBuf {
        self.dir.path().join("copyq")
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    pub fn session(&self) -> &str {
        &self.session
    }

    pub fn settings_path(&self) -> PathBuf {
        self.dir.path().join("config")
    }

    /// `copyq` with this private session's environment.
    pub fn command(&self) -> Command {
        let mut cmd = program(self.chroot.as_deref(), "copyq");
        let d = self.dir.path();
        cmd.env("DISPLAY", &self.display)
            .env("QT_QPA_PLATFORM", "xcb")
            .env("COPYQ_SESSION_NAME", &self.session)
            .env("COPYQ_SETTINGS_PATH", d.join("config"))
            .env("XDG_DATA_HOME", d.join("data"))
            .env("XDG_RUNTIME_DIR", d.join("run"))
            .env("XDG_CACHE_HOME", d.join("cache"));
        cmd
    }

    /// Point a gateway's settings at this CopyQ, with its data dir inside the sandbox.
    pub fn configure(&self, settings: &mut Settings) {
        settings.copyq.session = self.session.clone();
        settings.copyq.settings_path = self.settings_path().display().to_string();
        settings.copyq.command = self.cli_command().display().to_string();
        settings.data_dir = self.dir.path().join("gateway").display().to_string();
    }

    /// Run `copyq eval -- script` with `input` on stdin; stdout on success.
    pub fn eval(&self, script: &str, input: &[u8]) -> io::Result<String> {
        let mut child = self
            .command()
            .args(["eval", "--", script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| missing_tool("copyq", e))?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin.write_all(input)?;
        }
        let out = child.wait_with_output()?;
        if !out.status.success() {
            return Err(io::Error::other(format!(
                "copyq eval failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Put `items` into `tab` (created if missing) so that `items[0]` is row 0.
    pub fn seed(&self, tab: &str, items: &[Item]) -> io::Result<()> {
        let req = serde_json::json!({ "tab": tab, "items": items });
        self.eval(SEED_SCRIPT, req.to_string().as_bytes())
            .map(|_| ())
    }
}

impl Drop for PrivateCopyq {
    fn drop(&mut self) {
        self.kill_server();
        let _ = self.xvfb.kill();
        let _ = self.xvfb.wait();
    }
}
