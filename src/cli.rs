//! The command line: `serve`, `token issue`, `demo`, ... Each subcommand runs here; its flags and
//! help text are in [`args`].

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use crate::app::Application;
use crate::clipboard::Coverage;
use crate::config::{Overrides, Settings};
use crate::out::outln;
use crate::owner;

mod args;
mod checks;
mod docs;
use args::{
    AuditCommand, Cli, ClientsCommand, Command, Common, PassphraseCommand, TlsCommand, TokenCommand,
};

fn load(common: &Common, bind: Option<SocketAddr>) -> Result<Settings, String> {
    let settings = load_quiet(common, bind)?;
    announce(&settings);
    Ok(settings)
}

fn load_quiet(common: &Common, bind: Option<SocketAddr>) -> Result<Settings, String> {
    let overrides = Overrides {
        bind,
        data_dir: common.data_dir.clone(),
    };
    Settings::load(common.config.as_deref(), &overrides).map_err(|e| e.to_string())
}

/// Which state a command works on, on stderr (stdout stays the command's answer): a token issued
/// against another data dir than `serve` uses is a bare 401 later, so the owner sees it now.
fn announce(settings: &Settings) {
    let files: Vec<String> = settings
        .files
        .iter()
        .map(|f| f.display().to_string())
        .collect();
    let files = if files.is_empty() {
        "none, built-in defaults".to_owned()
    } else {
        files.join(", ")
    };
    eprintln!(
        "copyq-mcp: data dir {} (config files: {files})",
        settings.data_dir().display()
    );
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
    match runtime.block_on(run(cli.command)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// One subcommand, to its end: `Err` is the line printed after `error: `.
async fn run(command: Command) -> Result<(), String> {
    match command {
        Command::Serve { common, bind } => serve(load_quiet(&common, bind)?).await,
        Command::Token { command } => token(command).await,
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
            command:
                TlsCommand::Generate {
                    common,
                    names,
                    out,
                    force,
                },
        } => {
            let settings = load(&common, None)?;
            tls_generate(&settings, names, out, force)
        }
        Command::Passphrase {
            command: PassphraseCommand::Set { common },
        } => owner::set_passphrase(&load(&common, None)?),
        Command::Clients { command } => clients(command),
        Command::Doctor {
            common,
            json,
            metadata_urls,
        } => {
            let options = crate::doctor::Options {
                json,
                metadata_urls,
            };
            crate::doctor::run(&load_quiet(&common, None)?, &options).await
        }
        Command::Demo {
            common,
            bind,
            passphrase,
        } => {
            let keep_data_dir = common.data_dir.is_some();
            crate::demo::run(load_quiet(&common, bind)?, keep_data_dir, passphrase).await
        }
        Command::InstallLogon { common } => crate::logon::install(common.config, common.data_dir),
        Command::UninstallLogon => crate::logon::uninstall(),
        Command::Completions { shell } => docs::completions(shell),
        Command::Man { dir } => docs::man(dir.as_deref()),
    }
}

async fn token(command: TokenCommand) -> Result<(), String> {
    match command {
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
            checks::known_roots(&tabs, &settings)?;
            checks::warn_missing_tabs(&tabs, &settings).await;
            let token = owner::issue_token(&settings, &name, role, ttl, &tabs)?;
            checks::print_token(&token, &name)
        }
        TokenCommand::List { common } => owner::list_tokens(&load(&common, None)?),
        TokenCommand::Revoke { common, id_or_name } => {
            owner::revoke_token(&load(&common, None)?, &id_or_name)
        }
    }
}

fn clients(command: ClientsCommand) -> Result<(), String> {
    match command {
        ClientsCommand::List { common } => owner::list_clients(&load(&common, None)?),
        ClientsCommand::Purge { common } => owner::purge_clients(&load(&common, None)?),
        ClientsCommand::Revoke { common, id_or_name } => {
            owner::revoke_client(&load(&common, None)?, &id_or_name)
        }
    }
}

fn tls_generate(
    settings: &Settings,
    names: Vec<String>,
    out: Option<PathBuf>,
    force: bool,
) -> Result<(), String> {
    let names = if names.is_empty() {
        crate::tls::machine_names()
    } else {
        names
    };
    let dir = out.unwrap_or_else(|| settings.data_dir().join("tls"));
    checks::may_replace(&dir, force, settings)?;
    let g = crate::tls::generate(&names, &dir)?;
    outln!(
        "certificate: {}\nprivate key: {} (mode 0600)",
        g.cert.display(),
        g.key.display()
    );
    outln!("names: {}", names.join(", "));
    outln!("SHA-256 fingerprint: {}", g.fingerprint);
    outln!("public key pin (curl --pinnedpubkey): {}", g.pin);
    outln!(
        "\nTo serve HTTPS, add to your config file:\n[tls]\ncert = \"{}\"\nkey = \"{}\"",
        g.cert.display(),
        g.key.display()
    );
    Ok(())
}

async fn serve(settings: Settings) -> Result<(), String> {
    crate::logging::init(
        &settings.log.level,
        settings.log.format == crate::config::LogFormat::Json,
    );
    // In the log rather than on bare stderr, so that `log.format = "json"` stays JSON throughout.
    let files: Vec<String> = settings
        .files
        .iter()
        .map(|f| f.display().to_string())
        .collect();
    tracing::info!(
        data_dir = %settings.data_dir().display(),
        config_files = %files.join(", "),
        "starting"
    );
    let app = Application::build(&settings)
        .await
        .map_err(|e| e.to_string())?;
    crate::shutdown::stop_on_signal(app.shutdown_token());
    println!("copyq-mcp listening on {}", app.url());
    app.run_until_stopped().await.map_err(|e| e.to_string())
}
