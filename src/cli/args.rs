//! The command line's grammar: every subcommand and flag, with the help text clap prints.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use clap_complete::Shell;

use crate::auth::{Role, parse_ttl};

#[derive(Parser)]
#[command(
    name = "copyq-mcp",
    version,
    about = "Remote MCP gateway for the CopyQ clipboard manager"
)]
pub(super) struct Cli {
    #[command(subcommand)]
    pub(super) command: Command,
}

#[derive(Args, Clone)]
pub(super) struct Common {
    /// A TOML file layered over the built-in defaults (see config/default.toml).
    #[arg(long, value_name = "PATH", global = true)]
    pub(super) config: Option<PathBuf>,
    /// Where the gateway keeps its state (signing key, database).
    #[arg(long, value_name = "DIR", global = true)]
    pub(super) data_dir: Option<PathBuf>,
}

#[derive(Subcommand)]
pub(super) enum Command {
    /// Serve /mcp against the desktop's CopyQ.
    Serve {
        #[command(flatten)]
        common: Common,
        /// Address to listen on (default 127.0.0.1:8765).
        #[arg(long, value_name = "ADDR")]
        bind: Option<SocketAddr>,
    },
    /// Manage bearer tokens.
    Token {
        #[command(subcommand)]
        command: TokenCommand,
    },
    /// The owner's passphrase, asked on the consent page when an app connects through OAuth.
    Passphrase {
        #[command(subcommand)]
        command: PassphraseCommand,
    },
    /// Apps connected through OAuth (Claude, ChatGPT, ...).
    Clients {
        #[command(subcommand)]
        command: ClientsCommand,
    },
    /// Every write agents made (time, token, mode, tab, sizes); `audit restore ID` puts back what a
    /// delete or overwrite removed.
    Audit {
        #[command(flatten)]
        common: Common,
        /// Only entries this recent (1h, 2d) or since this time (2026-11-30T10:00:00).
        #[arg(long)]
        since: Option<String>,
        /// At most this many of the newest entries.
        #[arg(long, default_value_t = 100)]
        limit: usize,
        #[command(subcommand)]
        command: Option<AuditCommand>,
    },
    /// Built-in HTTPS.
    Tls {
        #[command(subcommand)]
        command: TlsCommand,
    },
    /// Check this setup, one line per check (ok / warn / problem, with how to fix it): config
    /// files and data dir, which CopyQ and whether it answers, passphrase, tokens and apps, public
    /// URL, TLS, and reaching the connectors' metadata documents. Exits 1 on a problem.
    Doctor {
        #[command(flatten)]
        common: Common,
        /// Print the report as JSON (for scripts).
        #[arg(long)]
        json: bool,
        /// A client-ID metadata document URL to try instead of Claude's and ChatGPT's
        /// (repeatable).
        #[arg(long = "metadata-url", value_name = "URL", hide = true)]
        metadata_urls: Vec<String>,
    },
    /// Start a private headless CopyQ with sample tabs and serve the gateway against it, with
    /// bearer tokens and OAuth (a one-time consent passphrase) ready to use.
    Demo {
        #[command(flatten)]
        common: Common,
        /// Address to listen on (default 127.0.0.1:8765).
        #[arg(long, value_name = "ADDR")]
        bind: Option<SocketAddr>,
        /// The consent passphrase for this run (default: a random one, printed).
        #[arg(long, env = "COPYQ_MCP_DEMO_PASSPHRASE", hide_env_values = true)]
        passphrase: Option<String>,
    },
    /// Windows: start `serve` at logon, beside CopyQ (a scheduled task made with `schtasks`,
    /// replacing one made before). With --config or --data-dir, the task serves with them.
    /// Elsewhere it changes nothing and says what to use (Linux: the systemd user unit).
    #[command(hide = cfg!(not(windows)))]
    InstallLogon {
        #[command(flatten)]
        common: Common,
    },
    /// Windows: remove the scheduled task `install-logon` made.
    #[command(hide = cfg!(not(windows)))]
    UninstallLogon,
    /// Print a shell completion script, e.g. `copyq-mcp completions bash >
    /// ~/.local/share/bash-completion/completions/copyq-mcp`.
    Completions {
        /// The shell to complete in, e.g. `bash` (or zsh, fish, elvish, powershell).
        shell: Shell,
    },
    /// Print the manual page (roff), e.g. `copyq-mcp man | man -l -`; with --dir, write one page
    /// per subcommand there (copyq-mcp.1, copyq-mcp-token-issue.1, ...).
    Man {
        /// Write every page into this directory instead of printing the main one.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
pub(super) enum AuditCommand {
    /// Put back the item(s) an audited delete, update or tab_delete removed (once per entry).
    Restore {
        /// The entry's number as `audit` prints it, e.g. `#12` or `12`.
        #[arg(value_parser = parse_audit_id, value_name = "ID")]
        id: i64,
    },
}

#[derive(Subcommand)]
pub(super) enum TlsCommand {
    /// Make a self-signed certificate for this machine's names (cert.pem, key.pem) and print the
    /// fingerprints clients pin.
    Generate {
        #[command(flatten)]
        common: Common,
        /// A DNS name or IP address to include (repeatable); default: this machine's names.
        #[arg(long = "name", value_name = "NAME")]
        names: Vec<String>,
        /// Where to write the pair (default: <data dir>/tls).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Replace an existing pair there (clients that pinned the old one stop trusting it).
        #[arg(long)]
        force: bool,
    },
}

#[derive(Subcommand)]
pub(super) enum PassphraseCommand {
    /// Set it: asked twice on a terminal, read from stdin when piped.
    Set {
        #[command(flatten)]
        common: Common,
    },
}

#[derive(Subcommand)]
pub(super) enum ClientsCommand {
    /// Connected apps with their role and last use, then registered apps never approved.
    List {
        #[command(flatten)]
        common: Common,
    },
    /// Remove every registered app that was never approved (the rest are kept).
    Purge {
        #[command(flatten)]
        common: Common,
    },
    /// Disconnect an app (by client id, or every app of that name): its tokens stop working.
    Revoke {
        #[command(flatten)]
        common: Common,
        /// A client id or name as `clients list` shows it, e.g. `"Claude Code"`.
        #[arg(value_name = "ID_OR_NAME")]
        id_or_name: String,
    },
}

#[derive(Subcommand)]
pub(super) enum TokenCommand {
    /// Print a new token on stdout.
    Issue {
        #[command(flatten)]
        common: Common,
        /// read: mcp_read and mcp_validate; write: also mcp_write.
        #[arg(long, value_parser = parse_role)]
        role: Role,
        /// A name for the token's holder (its `sub`), e.g. "laptop" or "backup-script".
        #[arg(long, value_parser = parse_name)]
        name: String,
        /// Lifetime, e.g. 30d, 12h; without it the token does not expire.
        #[arg(long, value_parser = parse_token_ttl)]
        ttl: Option<std::time::Duration>,
        /// The tabs the token covers: `all` (the default), `managed` (everything under mcp/),
        /// or a comma-separated list of external tab names and managed subtrees written
        /// `mcp/PATH` (`mcp/workspace/project-x` covers that tab and those below it). Other
        /// tabs do not exist for the token.
        #[arg(long, value_name = "TABS", value_delimiter = ',')]
        tabs: Vec<String>,
        /// One more external tab by its exact name (for names with a comma); repeatable.
        #[arg(long = "tab", value_name = "NAME")]
        tab: Vec<String>,
    },
    /// Tokens issued with `token issue`.
    List {
        #[command(flatten)]
        common: Common,
    },
    /// Revoke tokens by id, or all tokens issued to a name: they stop working on the next request.
    Revoke {
        #[command(flatten)]
        common: Common,
        /// A token id or name as `token list` shows it, e.g. `laptop`.
        #[arg(value_name = "ID_OR_NAME")]
        id_or_name: String,
    },
}

fn parse_role(s: &str) -> Result<Role, String> {
    Role::parse(s).ok_or_else(|| format!("role must be 'read' or 'write', not '{s}'"))
}

/// A holder's name: something `token list` and `token revoke NAME` can show and find.
fn parse_name(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        return Err("a token needs a name (e.g. --name laptop)".into());
    }
    Ok(s.to_owned())
}

/// A lifetime a token can be used in: 0 would be expired when issued.
fn parse_token_ttl(s: &str) -> Result<std::time::Duration, String> {
    let ttl = parse_ttl(s)?;
    if ttl.as_secs() == 0 {
        return Err(format!(
            "'{s}' is no lifetime: the token would be expired when issued (leave --ttl out for one that never expires)"
        ));
    }
    Ok(ttl)
}

/// An audit entry's number, as `audit` prints it (`#12`) or bare (`12`).
fn parse_audit_id(s: &str) -> Result<i64, String> {
    s.strip_prefix('#')
        .unwrap_or(s)
        .parse::<i64>()
        .ok()
        .filter(|id| *id > 0)
        .ok_or_else(|| format!("'{s}' is not an audit entry number such as #12"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// Every positional argument of every subcommand says what it takes, with an example.
    #[test]
    fn positionals_have_examples() {
        fn walk(cmd: &clap::Command, path: &str, seen: &mut usize) {
            for arg in cmd.get_positionals() {
                let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
                assert!(help.contains("e.g."), "{path} <{}>: {help:?}", arg.get_id());
                *seen += 1;
            }
            for sub in cmd.get_subcommands() {
                walk(sub, &format!("{path} {}", sub.get_name()), seen);
            }
        }
        let mut seen = 0;
        walk(&Cli::command(), "copyq-mcp", &mut seen);
        assert!(seen >= 4, "only {seen} positional arguments found");
    }

    #[test]
    fn audit_ids_as_printed() {
        assert_eq!(parse_audit_id("#12"), Ok(12));
        assert_eq!(parse_audit_id("12"), Ok(12));
        for bad in ["#", "##1", "#-1", "0", "x"] {
            assert!(parse_audit_id(bad).is_err(), "{bad}");
        }
    }
}
