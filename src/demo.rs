//! `copyq-mcp demo`: a private headless CopyQ filled with sample tabs, the gateway in front of it,
//! and ready-to-use tokens. Never touches the user's own CopyQ; removes its files on exit.

use crate::app::{Application, token_service};
use crate::auth::Role;
use crate::backend::Item;
use crate::config::Settings;
use crate::sandbox::PrivateCopyq;
use crate::shutdown::stop_on_signal;

fn sample() -> Vec<(&'static str, Vec<Item>)> {
    vec![
        (
            "mcp/info",
            vec![
                Item::new(
                    "Release checklist: bump version, update CHANGELOG, tag, publish.\nThen announce.",
                    &["important", "task"],
                    "Reviewed 2026-11-01",
                ),
                Item::new(
                    "API base URL for staging: https://staging.example.test/api",
                    &["doc", "api"],
                    "",
                ),
                Item::new(
                    "TODO: rotate the backup key before December",
                    &["task", "todo"],
                    "",
                ),
            ],
        ),
        (
            "mcp/заметки",
            vec![
                Item::new(
                    "Заметка о встрече: обсудили план на квартал",
                    &["встреча"],
                    "Следующая встреча в пятницу",
                ),
                Item::new("Идея: хранить черновики в workspace", &[], ""),
            ],
        ),
        (
            "mcp/workspace",
            vec![Item::new(
                "Проект Alpha: описание и ссылки",
                &["project", "active"],
                "",
            )],
        ),
        (
            "mcp/workspace/project1",
            vec![
                Item::new("Задача 1: собрать требования", &["task", "todo"], ""),
                Item::new(
                    "Задача 2: написать прототип",
                    &["task"],
                    "Срок: до конца недели",
                ),
            ],
        ),
        (
            "архив",
            vec![
                Item::new("Старые данные 2023 года", &["2023"], ""),
                Item::new("Важный документ: договор", &[], ""),
            ],
        ),
        (
            "личное/проекты/web",
            vec![Item::new("TODO заметка про вёрстку", &["web"], "")],
        ),
    ]
}

/// A passphrase a person can type: four groups of four letters and digits (~80 bits).
fn one_time_passphrase() -> Result<String, String> {
    const ALPHABET: &[u8] = b"abcdefghjkmnpqrstuvwxyz23456789";
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| e.to_string())?;
    let chars: Vec<char> = bytes
        .iter()
        .map(|b| char::from(ALPHABET[usize::from(*b) % ALPHABET.len()]))
        .collect();
    Ok(chars
        .chunks(4)
        .map(|c| c.iter().collect::<String>())
        .collect::<Vec<_>>()
        .join("-"))
}

/// `settings`: loaded like `serve`'s (`--config`, `COPYQ_MCP__*`, flags); the private CopyQ
/// replaces the `[copyq]` connection, and the data dir too unless `--data-dir` was given.
pub async fn run(
    mut settings: Settings,
    keep_data_dir: bool,
    passphrase: Option<String>,
) -> Result<(), String> {
    crate::logging::init(
        &settings.log.level,
        settings.log.format == crate::config::LogFormat::Json,
    );
    eprintln!("starting a private headless CopyQ (Xvfb)...");
    let copyq = tokio::task::spawn_blocking(PrivateCopyq::start)
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("cannot start a private CopyQ: {e}"))?;
    for (tab, items) in sample() {
        copyq
            .seed(tab, &items)
            .map_err(|e| format!("seeding {tab}: {e}"))?;
    }
    let data_dir = settings.data_dir.clone();
    copyq.configure(&mut settings);
    if keep_data_dir {
        settings.data_dir = data_dir;
    }
    let (passphrase, generated) = match passphrase {
        Some(p) => (p, false),
        None => (one_time_passphrase()?, true),
    };
    crate::store::Store::open(&settings.data_dir())
        .map_err(|e| e.to_string())?
        .set_passphrase_hash(&crate::oauth::passphrase::hash(&passphrase)?)
        .map_err(|e| e.to_string())?;
    let tokens = token_service(&settings).map_err(|e| e.to_string())?;
    let read = tokens
        .issue("demo-read", Role::Read, None)
        .map_err(|e| e.to_string())?;
    let write = tokens
        .issue("demo-write", Role::Write, None)
        .map_err(|e| e.to_string())?;
    let app = Application::build(&settings)
        .await
        .map_err(|e| e.to_string())?;
    stop_on_signal(app.shutdown_token());
    let url = app.url().to_owned();
    println!("copyq-mcp demo listening on {url}");
    println!("\nread token:\n{read}\n\nwrite token:\n{write}\n");
    println!(
        "Try it with curl:\n  curl -s {url} -H 'Authorization: Bearer {read}' \\\n    -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \\\n    -d '{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{{\"name\":\"mcp_read\",\"arguments\":{{\"mode\":\"tree\",\"scope\":\"all\"}}}}}}'\n"
    );
    println!(
        "Or with the MCP Inspector 2.x (Node >= 22.19):\n  npx @modelcontextprotocol/inspector@2 --cli {url} --transport http --method tools/list --header 'Authorization: Bearer {read}'\n"
    );
    if settings.oauth.enabled {
        let shown = if generated {
            passphrase.as_str()
        } else {
            "(the one you gave)"
        };
        // Claude Code's default path fetches its metadata document from claude.ai, which fails
        // offline: give it a client registered here instead, which works either way.
        let (client_id, port) = register_claude_code(&settings)?;
        println!(
            "OAuth: give an MCP client the URL {url} with no token; it opens the consent page in\n\
             your browser, where you approve with this run's passphrase: {shown}\n\
             Claude Code, with a client registered for this run (kept an hour unless approved):\n  \
             claude mcp add --transport http --client-id {client_id} --callback-port {port} copyq-demo {url}\n  \
             claude mcp login copyq-demo\n\
             Codex (it registers itself and logs in at once):\n  \
             codex mcp add copyq-demo --url {url} --oauth-client-registration dcr\n\
             Or the MCP Inspector (Node >= 22.19): npx @modelcontextprotocol/inspector@2  (then Connect, with OAuth)\n\
             Claude.ai and ChatGPT call from their cloud: they need a public https URL (see the README's\n\
             'Connecting Claude or ChatGPT').\n"
        );
    }
    println!("Ctrl-C stops the demo and removes its CopyQ and files.");
    let served = app.run_until_stopped().await.map_err(|e| e.to_string());
    tokio::task::spawn_blocking(move || drop(copyq))
        .await
        .map_err(|e| e.to_string())?;
    served
}

/// Register a public client for Claude Code's `--client-id`, calling back on a port free now:
/// (client id, port).
fn register_claude_code(settings: &Settings) -> Result<(String, u16), String> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| format!("finding a free callback port: {e}"))?
        .port();
    let id = crate::store::Store::open(&settings.data_dir())
        .and_then(|store| {
            store.register_client(&crate::store::NewClient {
                name: "Claude Code (demo)".into(),
                redirect_uris: vec![format!("http://localhost:{port}/callback")],
                auth_method: "none".into(),
                secret: None,
            })
        })
        .map_err(|e| e.to_string())?;
    Ok((id, port))
}
