//! The command line: `serve`, `token issue`, `demo`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::app::Application;
use crate::auth::{Role, parse_ttl};
use crate::clipboard::Coverage;
use crate::config::{Overrides, Settings};
use crate::owner;

#[derive(Parser)]
#[command(
    name = "copyq-mcp",
    version,
    about = "Remote MCP gateway for the CopyQ clipboard manager"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Args, Clone)]
struct Common {
    /// A TOML file layered over the built-in defaults (see config/default.toml).
    #[arg(long, value_name = "PATH", global = true)]
    config: Option<PathBuf>,
    /// Where the gateway keeps its state (signing key, database).
    #[arg(long, value_name = "DIR", global = true)]
    data_dir: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Command {
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
}

#[derive(Subcommand)]
enum AuditCommand {
    /// Put back the item(s) an audited delete, update or tab_delete removed.
    Restore { id: i64 },
}

#[derive(Subcommand)]
enum TlsCommand {
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
    },
}

#[derive(Subcommand)]
enum PassphraseCommand {
    /// Set it: asked twice on a terminal, read from stdin when piped.
    Set {
        #[command(flatten)]
        common: Common,
    },
}

#[derive(Subcommand)]
enum ClientsCommand {
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
        id_or_name: String,
    },
}

#[derive(Subcommand)]
enum TokenCommand {
    /// Print a new token on stdout.
    Issue {
        #[command(flatten)]
        common: Common,
        /// read: mcp_read and mcp_validate; write: also mcp_write.
        #[arg(long, value_parser = parse_role)]
        role: Role,
        /// A name for the token's holder (its `sub`), e.g. "laptop" or "backup-script".
        #[arg(long)]
        name: String,
        /// Lifetime, e.g. 30d, 12h; without it the token does not expire.
        #[arg(long, value_parser = parse_ttl)]
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
        id_or_name: String,
    },
}

fn parse_role(s: &str) -> Result<Role, String> {
    Role::parse(s).ok_or_else(|| format!("role must be 'read' or 'write', not '{s}'"))
}

fn load(common: &Common, bind: Option<SocketAddr>) -> Result<Settings, String> {
    let overrides = Overrides {
        bind,
        data_dir: common.data_dir.clone(),
    };
    Settings::load(common.config.as_deref(), &overrides).map_err(|e| e.to_string())
}

pub fn main() -> ExitCode {
    crate::private::restrict_process();
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Serve { common, bind } => serve(load(&common, bind)?).await,
            Command::Token { command } => match command {
                TokenCommand::Issue {
                    common,
                    role,
                    name,
                    ttl,
                    tabs,
                    tab,
                } => {
                    let tabs = Coverage::from_flags(&tabs, &tab)?;
                    let settings = load(&common, None)?;
                    let token = owner::issue_token(&settings, &name, role, ttl, &tabs)?;
                    println!("{token}");
                    Ok(())
                }
                TokenCommand::List { common } => owner::list_tokens(&load(&common, None)?),
                TokenCommand::Revoke { common, id_or_name } => {
                    owner::revoke_token(&load(&common, None)?, &id_or_name)
                }
            },
            Command::Audit {
                common,
                since,
                limit,
                command,
            } => {
                let settings = load(&common, None)?;
                match command {
                    None => owner::show_audit(&settings, since.as_deref(), limit),
                    Some(AuditCommand::Restore { id }) => owner::restore(&settings, id).await,
                }
            }
            Command::Tls {
                command: TlsCommand::Generate { common, names, out },
            } => {
                let settings = load(&common, None)?;
                tls_generate(&settings, names, out)
            }
            Command::Passphrase {
                command: PassphraseCommand::Set { common },
            } => owner::set_passphrase(&load(&common, None)?),
            Command::Clients { command } => match command {
                ClientsCommand::List { common } => owner::list_clients(&load(&common, None)?),
                ClientsCommand::Purge { common } => owner::purge_clients(&load(&common, None)?),
                ClientsCommand::Revoke { common, id_or_name } => {
                    owner::revoke_client(&load(&common, None)?, &id_or_name)
                }
            },
            Command::Demo {
                common,
                bind,
                passphrase,
            } => {
                let keep_data_dir = common.data_dir.is_some();
                crate::demo::run(load(&common, bind)?, keep_data_dir, passphrase).await
            }
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn tls_generate(
    settings: &Settings,
    names: Vec<String>,
    out: Option<PathBuf>,
) -> Result<(), String> {
    let names = if names.is_empty() {
        crate::tls::machine_names()
    } else {
        names
    };
    let dir = out.unwrap_or_else(|| settings.data_dir().join("tls"));
    let g = crate::tls::generate(&names, &dir)?;
    println!(
        "certificate: {}\nprivate key: {} (mode 0600)",
        g.cert.display(),
        g.key.display()
    );
    println!("names: {}", names.join(", "));
    println!("SHA-256 fingerprint: {}", g.fingerprint);
    println!("public key pin (curl --pinnedpubkey): {}", g.pin);
    println!(
        "\nTo serve HTTPS, add to your config file:\n[tls]\ncert = \"{}\"\nkey = \"{}\"",
        g.cert.display(),
        g.key.display()
    );
    Ok(())
}

async fn serve(settings: Settings) -> Result<(), String> {
    crate::logging::init(&settings.log.level);
    let app = Application::build(&settings)
        .await
        .map_err(|e| e.to_string())?;
    stop_on_signal(app.shutdown_token());
    println!("copyq-mcp listening on {}", app.url());
    app.run_until_stopped().await.map_err(|e| e.to_string())
}

/// Cancel `token` on SIGINT or SIGTERM, for a graceful stop. The handlers are in place when this
/// returns, so a signal sent as soon as the listening line is out is not the default (a kill).
pub(crate) fn stop_on_signal(token: tokio_util::sync::CancellationToken) {
    use tokio::signal::unix::{SignalKind, signal};
    let term = signal(SignalKind::terminate());
    let int = signal(SignalKind::interrupt());
    tokio::spawn(async move {
        let wait = |s: std::io::Result<tokio::signal::unix::Signal>| async move {
            match s {
                Ok(mut s) => {
                    s.recv().await;
                }
                Err(_) => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = wait(int) => {}
            _ = wait(term) => {}
        }
        tracing::info!("stopping");
        token.cancel();
    });
}
