//! `copyq-mcp completions SHELL` and `copyq-mcp man`: made from the same grammar as `--help`
//! (clap_complete, clap_mangen), so they never disagree with it. A package ships their output.

use std::path::Path;

use clap::CommandFactory;
use clap_complete::Shell;

use super::args::Cli;
use crate::out::outln;

/// The completion script for `shell`, on stdout.
pub(super) fn completions(shell: Shell) -> Result<(), String> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "copyq-mcp", &mut script);
    outln!("{}", String::from_utf8_lossy(&script).trim_end());
    Ok(())
}

/// The main manual page on stdout, or every page (one per subcommand) written into `dir`.
pub(super) fn man(dir: Option<&Path>) -> Result<(), String> {
    let cmd = Cli::command();
    if let Some(dir) = dir {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        clap_mangen::generate_to(cmd, dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        eprintln!("manual pages written to {}", dir.display());
        return Ok(());
    }
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd)
        .render(&mut page)
        .map_err(|e| e.to_string())?;
    outln!("{}", String::from_utf8_lossy(&page).trim_end());
    Ok(())
}
