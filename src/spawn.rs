//! Process spawning that differs by platform: a child in a process group of its own, so that a
//! terminal's Ctrl-C reaches the gateway alone and the gateway decides how its children stop.

use std::process::Command;

/// [`Command`]s started in their own process group.
pub(crate) trait OwnGroup {
    /// Put the child in a new process group: `setpgid(0)` on Unix, `CREATE_NEW_PROCESS_GROUP` on
    /// Windows (which also keeps the console's Ctrl-C from it).
    fn own_group(&mut self) -> &mut Self;
}

impl OwnGroup for Command {
    #[cfg(unix)]
    fn own_group(&mut self) -> &mut Self {
        std::os::unix::process::CommandExt::process_group(self, 0)
    }

    #[cfg(windows)]
    fn own_group(&mut self) -> &mut Self {
        // winbase.h: CREATE_NEW_PROCESS_GROUP.
        const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
        std::os::windows::process::CommandExt::creation_flags(self, CREATE_NEW_PROCESS_GROUP)
    }
}
