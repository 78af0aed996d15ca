//! A private, headless CopyQ: its own Xvfb display, session name and temp dirs, so it never touches
//! the desktop's CopyQ. The integration tests and `copyq-mcp demo` both start CopyQ through this.

use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;

use tempfile::TempDir;

use crate::backend::Item;
use crate::config::Settings;

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

impl PrivateCopyq {
    /// Start Xvfb on a free display and a CopyQ server in fresh temp dirs; wait until it answers.
    pub fn start() -> io::Result<Self> {
        let dir = tempfile::Builder::new().prefix("copyq-mcp-").tempdir()?;
        for sub in ["config", "data", "run", "cache", "gateway"] {
            std::fs::create_dir_all(dir.path().join(sub))?;
        }
        std::fs::set_permissions(
            dir.path().join("run"),
            std::fs::Permissions::from_mode(0o700),
        )?;
        Command::new("sh")
            .args(["-c", WATCHDOG, "copyq-mcp-watchdog"])
            .arg(std::process::id().to_string())
            .arg(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()?;
        let mut xvfb = Command::new("Xvfb")
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
            .process_group(0)
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
        record_group(dir.path(), xvfb.id())?;
        let session = format!(
            "t{}x{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let mut me = Self {
            dir,
            xvfb,
            display: format!(":{number}"),
            session,
            server: None,
        };
        me.start_server()?;
        Ok(me)
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
        let mut cmd = Command::new("copyq");
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

    pub fn is_running(&self) -> bool {
        self.server.is_some()
    }

    /// Start the CopyQ server (its own process group) and wait until it answers.
    pub fn start_server(&mut self) -> io::Result<()> {
        let log = std::fs::File::create(self.dir.path().join("copyq.log"))?;
        let child = self
            .command()
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .process_group(0)
            .spawn()
            .map_err(|e| missing_tool("copyq", e))?;
        record_group(self.dir.path(), child.id())?;
        self.server = Some(child);
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            if self.eval("1", b"").is_ok() {
                return Ok(());
            }
            if Instant::now() > deadline {
                self.kill_server();
                return Err(io::Error::other(
                    "CopyQ server did not become ready in time",
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn signal_group(pid: u32, signal: &str) {
        let _ = Command::new("kill")
            .args([signal, "--", &format!("-{pid}")])
            .stderr(Stdio::null())
            .status();
    }

    /// SIGSTOP the server and its helpers: a CopyQ that hangs.
    pub fn pause_server(&self) {
        if let Some(child) = &self.server {
            Self::signal_group(child.id(), "-STOP");
        }
    }

    /// SIGCONT after [`Self::pause_server`].
    pub fn resume_server(&self) {
        if let Some(child) = &self.server {
            Self::signal_group(child.id(), "-CONT");
        }
    }

    /// SIGKILL the server and its helpers: what a crash looks like. Unsaved changes are lost.
    pub fn kill_server(&mut self) {
        if let Some(mut child) = self.server.take() {
            Self::signal_group(child.id(), "-KILL");
            let _ = child.wait();
        }
    }

    /// Stop the server the way a user would (`copyq exit`: it saves first).
    pub fn stop_server(&mut self) {
        let Some(mut child) = self.server.take() else {
            return;
        };
        let _ = self
            .command()
            .arg("exit")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        // CopyQ waits up to 10 s for connected clients to hang up, then saves and exits.
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                Self::signal_group(child.id(), "-KILL");
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Self::signal_group(child.id(), "-KILL");
        let _ = child.wait();
    }
}

impl Drop for PrivateCopyq {
    fn drop(&mut self) {
        self.kill_server();
        let _ = self.xvfb.kill();
        let _ = self.xvfb.wait();
    }
}
