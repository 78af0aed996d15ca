//! `copyq.backend = "auto"`: the socket whenever it can serve, the CLI otherwise, decided per
//! connection rather than once at start-up. A gateway started before CopyQ, or across a CopyQ
//! restart or upgrade, ends on the socket as soon as CopyQ is up and speaks a layout the socket
//! client knows; a layout it does not know sends the calls through the CLI from that moment, with
//! one log line, and back to the socket once it is usable again. Nothing is ever retried on the
//! other backend: a write that failed half-way must not be made twice.

use std::sync::{Arc, Mutex, PoisonError};

use super::socket::backend::Prepared;
use super::{
    BackendError, CliBackend, Health, Item, Persisted, ReadRequest, Ready, RowsPage, Snapshot,
    SocketBackend, TabRows, Whole, wait_ready,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    Socket,
    Cli,
}

#[derive(Debug, Clone)]
pub struct AutoBackend {
    socket: SocketBackend,
    cli: CliBackend,
    /// The route taken last, to log each change once.
    last: Arc<Mutex<Option<Route>>>,
    /// Updates and deletes routed to the CLI, one at a time: over the socket they go beside each
    /// other (`ToolState::beside`), but each CLI write zeroes and puts back the save delays in
    /// its own `copyq` process, and two at once would leave them at 0.
    cli_writes: Arc<tokio::sync::Mutex<()>>,
}

/// Run one operation on the backend the current route names.
macro_rules! routed {
    ($self:ident, $method:ident($($arg:expr),*)) => {
        match $self.route().await? {
            Route::Socket => $self.socket.$method($($arg),*).await,
            Route::Cli => $self.cli.$method($($arg),*).await,
        }
    };
}

impl AutoBackend {
    pub fn new(socket: SocketBackend, cli: CliBackend) -> Self {
        Self {
            socket,
            cli,
            last: Arc::new(Mutex::new(None)),
            cli_writes: Arc::default(),
        }
    }

    /// The socket if its connection is live or can be made and its layout is known (detection
    /// runs once per connection, ~1 ms); the CLI if the layout is unknown. CopyQ not answering
    /// is an error here, as it would be on either backend.
    async fn route(&self) -> Result<Route, BackendError> {
        match self.socket.probe().await {
            Ok(layout) => {
                self.note(Route::Socket, || {
                    tracing::info!(layout = %layout.describe(), "serving through CopyQ's socket");
                });
                Ok(Route::Socket)
            }
            Err(BackendError::Unsupported(why)) => {
                self.note(Route::Cli, || {
                    tracing::warn!(%why, "CopyQ's socket speaks a protocol this gateway does not know; serving through the copyq CLI until it does");
                });
                Ok(Route::Cli)
            }
            Err(e) => Err(e),
        }
    }

    /// Where the route taken last looks for CopyQ (the socket before any call).
    pub fn target(&self) -> String {
        match self.current() {
            "cli" => self.cli.target(),
            _ => self.socket.target(),
        }
    }

    /// The backend that served last (`socket` before any call).
    pub fn current(&self) -> &'static str {
        match *self.last.lock().unwrap_or_else(PoisonError::into_inner) {
            Some(Route::Cli) => "cli",
            Some(Route::Socket) | None => "socket",
        }
    }

    fn note(&self, route: Route, log: impl FnOnce()) {
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        if *last != Some(route) {
            *last = Some(route);
            log();
        }
    }

    pub async fn read(&self, request: &ReadRequest) -> Result<Snapshot, BackendError> {
        routed!(self, read(request))
    }

    pub async fn read_rows(&self, wanted: &[TabRows]) -> Result<Vec<RowsPage>, BackendError> {
        routed!(self, read_rows(wanted))
    }

    pub async fn format(
        &self,
        tab: &str,
        row: usize,
        mime: &str,
    ) -> Result<Option<Vec<u8>>, BackendError> {
        routed!(self, format(tab, row, mime))
    }

    pub async fn item_limit(&self) -> Result<usize, BackendError> {
        routed!(self, item_limit())
    }

    pub async fn read_with_max_items(
        &self,
        request: &ReadRequest,
    ) -> Result<(Snapshot, usize), BackendError> {
        routed!(self, read_with_max_items(request))
    }

    pub async fn insert(
        &self,
        tab: &str,
        item: &Item,
        limit: usize,
    ) -> Result<super::Landed, BackendError> {
        routed!(self, insert(tab, item, limit))
    }

    pub async fn insert_many(
        &self,
        writes: &[super::Insert<'_>],
        ready: super::Ready,
    ) -> Result<Vec<Result<super::Landed, BackendError>>, BackendError> {
        match self.route().await? {
            Route::Socket => self.socket.insert_many(writes, ready).await,
            Route::Cli => {
                super::wait_ready(ready).await?;
                self.cli.insert_many(writes).await
            }
        }
    }

    pub async fn insert_whole(
        &self,
        tab: &str,
        item: &Item,
        whole: &Whole,
        limit: usize,
    ) -> Result<super::Landed, BackendError> {
        routed!(self, insert_whole(tab, item, whole, limit))
    }

    pub async fn every_format(
        &self,
        tab: &str,
        row: usize,
        expect: &Item,
    ) -> Result<Whole, BackendError> {
        routed!(self, every_format(tab, row, expect))
    }

    /// The socket's [`SocketBackend::read_prepared`]; a read alone through the CLI.
    pub async fn read_prepared(
        &self,
        request: &ReadRequest,
        tabs: &[&str],
    ) -> Result<(Snapshot, Option<Prepared>), BackendError> {
        match self.route().await? {
            Route::Socket => {
                let (snap, prepared) = self.socket.read_prepared(request, tabs).await?;
                Ok((snap, Some(prepared)))
            }
            Route::Cli => Ok((self.cli.read(request).await?, None)),
        }
    }

    /// The socket's [`SocketBackend::prepare_write`]; nothing through the CLI (its script makes
    /// every step). A write routed elsewhere than its preparation makes every step itself.
    pub async fn prepare_write(&self, tabs: &[&str]) -> Result<Option<Prepared>, BackendError> {
        match self.route().await? {
            Route::Socket => self.socket.prepare_write(tabs).await.map(Some),
            Route::Cli => Ok(None),
        }
    }

    pub async fn change(
        &self,
        tab: &str,
        row: usize,
        expect: &Item,
        item: &Item,
        (prepared, ready): (Option<Prepared>, Ready),
    ) -> Result<Persisted, BackendError> {
        match self.route().await? {
            Route::Socket => {
                self.socket
                    .change(tab, row, expect, item, (prepared, ready))
                    .await
            }
            Route::Cli => {
                let _alone = self.cli_writes.lock().await;
                wait_ready(ready).await?;
                self.cli.change(tab, row, expect, item).await
            }
        }
    }

    pub async fn remove(
        &self,
        tab: &str,
        row: usize,
        expect: &Item,
        (prepared, ready): (Option<Prepared>, Ready),
    ) -> Result<Persisted, BackendError> {
        match self.route().await? {
            Route::Socket => {
                self.socket
                    .remove(tab, row, expect, (prepared, ready))
                    .await
            }
            Route::Cli => {
                let _alone = self.cli_writes.lock().await;
                wait_ready(ready).await?;
                self.cli.remove(tab, row, expect).await
            }
        }
    }

    pub async fn move_item(
        &self,
        from: &str,
        row: usize,
        expect: &Item,
        to: &str,
        limit: usize,
        prepared: Option<Prepared>,
    ) -> Result<super::Landed, BackendError> {
        match self.route().await? {
            Route::Socket => {
                self.socket
                    .move_item(from, row, expect, to, limit, prepared)
                    .await
            }
            Route::Cli => self.cli.move_item(from, row, expect, to, limit).await,
        }
    }

    pub async fn create_tab(&self, tab: &str) -> Result<bool, BackendError> {
        routed!(self, create_tab(tab))
    }

    pub async fn remove_tabs(&self, tabs: &[String]) -> Result<usize, BackendError> {
        routed!(self, remove_tabs(tabs))
    }

    pub async fn ping(&self) -> Result<(), BackendError> {
        routed!(self, ping())
    }

    /// The health of the route taken now; CopyQ down is reported as the socket's.
    pub async fn health(&self) -> Health {
        match self.route().await {
            Ok(Route::Cli) => self.cli.health().await,
            Ok(Route::Socket) | Err(_) => self.socket.health().await,
        }
    }
}

#[cfg(all(test, unix))]
#[path = "auto_tests.rs"]
mod tests;
