//! copyq-mcp: a remote MCP gateway for the CopyQ clipboard manager.
//!
//! A request travels through these layers in this order. The code depends in another order,
//! `http -> mcp -> auth -> clipboard / store -> backend` (the bearer check is `http`'s, and `mcp`
//! takes the `Principal` it leaves); ARCHITECTURE.md has the whole graph, and
//! `architecture_tests` fails on an edge that points back up.
//!
//! - [`http`] serves `/mcp` (rmcp's Streamable HTTP service, and a direct path for stateless tool
//!   calls) and `/healthz`, checks the bearer
//!   token, and serves the [`oauth`] routes the app hands it;
//! - [`auth`] turns a bearer token into a [`auth::Principal`] with a [`auth::Role`], or refuses it;
//! - [`mcp`] is the MCP handler: it filters tools by role, parses arguments into typed queries and
//!   formats the pipe-separated replies of `mcp_read`, `mcp_write` and `mcp_validate`;
//! - [`clipboard`] holds the pure rules: tab paths, scopes, which tabs are writable, which tabs a
//!   token covers, previews;
//! - [`backend`] reaches CopyQ (its local socket natively, the `copyq` CLI, or in memory for unit
//!   tests, as `copyq.backend` says) and keeps what only CopyQ knows, such as its `maxitems`,
//!   cached while CopyQ's options file is unchanged.
//!
//! Beside them: [`oauth`] is the authorization server for connectors (discovery, registration
//! and client-ID metadata documents, the consent page, tokens), over [`store`] (SQLite: clients,
//! grants, revocations, the audit log, retention); [`public`] says which base URL a request is
//! answered under; [`limit`] and `http::conn` bound what one client can take; [`text`] refuses
//! names that hide or reorder characters; [`private`] keeps state files 0600 in a 0700 dir;
//! [`privacy`] masks secrets in what the tools show (pure: reads and write previews apply it).
//!
//! Around them: [`config`] loads settings, [`app`] builds and runs the server, [`cli`] is the
//! command line, [`owner`] the owner's commands (tokens, clients, audit), [`logon`] starts the
//! gateway at logon on Windows (a scheduled task), [`doctor`] checks a setup, [`tls`] the built-in HTTPS, [`logging`] keeps secrets out of the log (and says why a
//! request was refused), [`metrics`] counts for Prometheus, [`sandbox`] starts a private headless
//! CopyQ for tests and [`demo`].
//!
//! The modules the binary (`src/main.rs`), the integration tests and the benchmarks use are
//! `pub`, the rest `pub(crate)`. The compiler reports an unused item only where it is
//! crate-private: an item left `pub` inside a `pub` module (`backend` has many) is part of the
//! library's interface, so it is never reported, even when nothing uses it.

#![forbid(unsafe_code)]
// The crate's documentation is for whoever works on it (`cargo doc --document-private-items`):
// links to crate-private modules, like the map above, are meant.
#![allow(rustdoc::private_intra_doc_links)]

pub mod app;
pub mod auth;
pub mod backend;
pub mod cli;
pub(crate) mod clipboard;
pub mod config;
pub(crate) mod demo;
pub(crate) mod dirs;
pub(crate) mod doctor;
pub(crate) mod http;
pub(crate) mod limit;
pub(crate) mod logging;
mod logon;
pub(crate) mod mcp;
pub(crate) mod metrics;
pub mod oauth;
pub(crate) mod out;
pub(crate) mod owner;
pub mod privacy;
pub(crate) mod private;
pub(crate) mod public;
pub mod sandbox;
mod shutdown;
mod spawn;
pub mod store;
pub(crate) mod text;
pub mod tls;

#[cfg(test)]
mod architecture_tests;
