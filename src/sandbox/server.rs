//! The private CopyQ server's life: started and waited for, hung and resumed, killed as a crash
//! would, or stopped as a user would.

use std::io;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::spawn::OwnGroup;

use super::{PrivateCopyq, READY_TIMEOUT, missing_tool, record_group};

impl PrivateCopyq {
    /// Start the CopyQ server (its own process group) and wait until it answers.
    pub fn start_server(&mut self) -> io::Result<()> {
        let log = std::fs::File::create(self.dir.path().join("copyq.log"))?;
        let child = self
            .command()
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .own_group()
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

    /// The server's process id, which is also its process group's (its helpers are in that
    /// group): what a benchmark reads CopyQ's CPU time from.
    pub fn server_pid(&self) -> Option<u32> {
        self.server.as_ref().map(std::process::Child::id)
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
