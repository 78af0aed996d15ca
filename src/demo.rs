//! `copyq-mcp demo`: a private headless CopyQ filled with sample tabs, the gateway in front of it,
//! and ready-to-use tokens. Never touches the user's own CopyQ; removes its files on exit.

use std::net::SocketAddr;

use crate::app::{Application, token_service};
use crate::auth::Role;
use crate::backend::Item;
use crate::cli::stop_on_signal;
use crate::config::Settings;
use crate::sandbox::PrivateCopyq;

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

pub async fn run(bind: Option<SocketAddr>) -> Result<(), String> {
    let mut settings = Settings::defaults().map_err(|e| e.to_string())?;
    crate::logging::init(&settings.log.level);
    if let Some(bind) = bind {
        settings.server.bind = bind;
    }
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
    copyq.configure(&mut settings);
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
    let url = format!("http://{}/mcp", app.local_addr());
    println!("copyq-mcp demo listening on {url}");
    println!("\nread token:\n{read}\n\nwrite token:\n{write}\n");
    println!(
        "Try it with curl:\n  curl -s {url} -H 'Authorization: Bearer {read}' \\\n    -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \\\n    -d '{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{{\"name\":\"mcp_read\",\"arguments\":{{\"mode\":\"tree\",\"scope\":\"all\"}}}}}}'\n"
    );
    println!(
        "Or with the MCP Inspector (Node 22):\n  npx @modelcontextprotocol/inspector --cli {url} --transport http --method tools/list --header 'Authorization: Bearer {read}'\n"
    );
    println!("Ctrl-C stops the demo and removes its CopyQ and files.");
    stop_on_signal(app.shutdown_token());
    let served = app.run_until_stopped().await.map_err(|e| e.to_string());
    tokio::task::spawn_blocking(move || drop(copyq))
        .await
        .map_err(|e| e.to_string())?;
    served
}
