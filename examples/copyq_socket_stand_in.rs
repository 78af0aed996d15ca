//! A stand-in CopyQ server for the Windows CI step (tests/windows.sh): no CopyQ for Windows runs
//! here, so the Wine-run gateway's socket backend is answered by this program, built for the same
//! target and run under Wine beside it. It listens where the gateway looks: the pipe (a socket on
//! Unix) that the gateway's own code computes from this process's environment
//! (`COPYQ_SESSION_NAME`, `USERNAME`), and prints that name on its first line. The server is
//! `copyq_mcp::backend::socket::stand_in`: CopyQ's protocol as a Qt 6 CopyQ 17.0 speaks it, over
//! tabs held in memory, written to the JSON file `COPYQ_STAND_IN_STATE` after each change.
//!
//! What this proves is the gateway's side on Windows: the pipe's name, the pipe transport, and the
//! protocol client as the socket backend drives it. It proves nothing of CopyQ's own server there.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use copyq_mcp::backend::socket::SocketEnv;
use copyq_mcp::backend::socket::stand_in::serve;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let path = match SocketEnv::from_process_env().socket_path() {
        Ok(path) => path,
        Err(e) => {
            eprintln!("copyq socket stand-in: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!("listening on {}", path.display());
    let _ = std::io::stdout().flush();
    let state = std::env::var_os("COPYQ_STAND_IN_STATE").map(PathBuf::from);
    match serve(&path, state).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("copyq socket stand-in: {}: {e}", path.display());
            ExitCode::FAILURE
        }
    }
}
