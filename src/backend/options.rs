//! What only CopyQ's options file knows and a write needs: `maxitems`, the most items CopyQ keeps
//! in a tab. Asking CopyQ costs it ~20 ms (it builds its settings dialog), so the value is cached
//! while the file is unchanged: CopyQ rewrites its options file (`copyq[-session].ini`) the moment
//! an option changes, so a value read while the file had a given modification time and size stays
//! true until either changes.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::SystemTime;

use super::BackendError;
use super::socket::path::SocketEnv;

/// CopyQ's options file, beside its socket: `<settings>/copyq[-session]/copyq[-session].ini`.
pub(crate) fn beside(socket: &Path) -> Option<PathBuf> {
    let dir = socket.parent()?;
    let name = dir.file_name()?.to_str()?;
    Some(dir.join(format!("{name}.ini")))
}

/// The options file of the session a `copyq` client runs against: `settings_path` and `session`
/// where given, else what `env` (the process environment) says, as the client itself would see.
pub(crate) fn of_session(
    mut env: SocketEnv,
    settings_path: Option<&Path>,
    session: Option<&str>,
) -> Option<PathBuf> {
    if let Some(path) = settings_path {
        env.settings_path = Some(path.to_owned());
    }
    if let Some(session) = session {
        env.session = Some(session.to_owned());
    }
    beside(&env.socket_path().ok()?)
}

/// The file's modification time and size.
type Stamp = (SystemTime, u64);

/// `maxitems`, remembered with the stamp its options file had when it was read.
#[derive(Debug, Default)]
pub(crate) struct MaxItems {
    file: Option<PathBuf>,
    cached: Mutex<Option<(Stamp, usize)>>,
    /// Held by the one read that asks CopyQ while nothing is cached: reads that miss meanwhile
    /// wait for it and take what it cached, instead of each asking CopyQ too.
    asking: tokio::sync::Mutex<()>,
}

impl MaxItems {
    /// A cache watching `file`; with no file (or none there) nothing is cached and CopyQ is asked
    /// every time.
    pub(crate) fn new(file: Option<PathBuf>) -> Self {
        Self {
            file,
            cached: Mutex::new(None),
            asking: tokio::sync::Mutex::new(()),
        }
    }

    /// Run `ask`, telling it whether CopyQ must be asked for `maxitems` too (nothing cached, or
    /// the file changed since): it returns what it read and, when asked, the limit.
    pub(crate) async fn through<T, F, Fut>(&self, ask: F) -> Result<(T, usize), BackendError>
    where
        F: FnOnce(bool) -> Fut,
        Fut: Future<Output = Result<(T, Option<usize>), BackendError>>,
    {
        // The stamp is taken before CopyQ is asked: a change in between shows as a new stamp
        // next time.
        let mut stamp = self.stamp();
        let mut cached = self.get(stamp);
        // Concurrent misses are folded into one ask. Asking costs CopyQ's one thread ~20 ms, and
        // 64 writers starting at once each asked: 64 asks queued before the first write's steps
        // (issue 22: the 64-writer p99). Those that waited look again, with a fresh stamp; if the
        // first one's ask failed (or the file changed again), the next asks. No file, no cache:
        // each asks, as before, without waiting.
        let _asking = match cached.is_none() && stamp.is_some() {
            true => {
                let turn = self.asking.lock().await;
                stamp = self.stamp();
                cached = self.get(stamp);
                // Held through the ask only by the read that asks.
                cached.is_none().then_some(turn)
            }
            false => None,
        };
        let (value, asked) = ask(cached.is_none()).await?;
        match (cached, asked) {
            (Some(limit), _) => Ok((value, limit)),
            (None, Some(limit)) => {
                self.put(stamp, limit);
                Ok((value, limit))
            }
            (None, None) => Err(BackendError::Failed(
                "CopyQ did not report its maxitems option".into(),
            )),
        }
    }

    fn stamp(&self) -> Option<Stamp> {
        let meta = std::fs::metadata(self.file.as_ref()?).ok()?;
        Some((meta.modified().ok()?, meta.len()))
    }

    fn get(&self, now: Option<Stamp>) -> Option<usize> {
        let cached = self.cached.lock().unwrap_or_else(PoisonError::into_inner);
        match (*cached, now) {
            (Some((stamp, limit)), Some(now)) if stamp == now => Some(limit),
            _ => None,
        }
    }

    fn put(&self, stamp: Option<Stamp>, limit: usize) {
        if let Some(stamp) = stamp {
            *self.cached.lock().unwrap_or_else(PoisonError::into_inner) = Some((stamp, limit));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `cache` asked CopyQ this time, and the limit it answered with.
    async fn asked(cache: &MaxItems, limit: usize) -> (bool, usize) {
        let mut asked = false;
        let ((), got) = cache
            .through(|ask| {
                asked = ask;
                async move { Ok(((), ask.then_some(limit))) }
            })
            .await
            .expect("read");
        (asked, got)
    }

    #[tokio::test]
    async fn a_changed_options_file_makes_copyq_be_asked_again() {
        let dir = tempfile::tempdir().expect("dir");
        let file = dir.path().join("copyq.ini");
        std::fs::write(&file, "[Options]\nmaxitems=200\n").expect("write");
        let cache = MaxItems::new(Some(file.clone()));
        assert_eq!(asked(&cache, 200).await, (true, 200), "nothing cached yet");
        assert_eq!(
            asked(&cache, 999).await,
            (false, 200),
            "the file is unchanged"
        );
        // Another size is another stamp, whatever the clock's resolution.
        std::fs::write(&file, "[Options]\nmaxitems=5000\n").expect("write");
        assert_eq!(asked(&cache, 5000).await, (true, 5000), "the file changed");
        assert_eq!(asked(&cache, 1).await, (false, 5000));
        std::fs::remove_file(&file).expect("remove");
        assert_eq!(asked(&cache, 7).await, (true, 7), "no file, no cache");
        assert_eq!(asked(&cache, 8).await, (true, 8));
    }

    /// The 64-writer p99 of issue 22: writers starting at once each asked CopyQ for `maxitems`.
    #[tokio::test]
    async fn concurrent_reads_with_nothing_cached_ask_copyq_once() {
        let dir = tempfile::tempdir().expect("dir");
        let file = dir.path().join("copyq.ini");
        std::fs::write(&file, "[Options]\nmaxitems=200\n").expect("write");
        let cache = std::sync::Arc::new(MaxItems::new(Some(file)));
        let asks = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let reads: Vec<_> = (0..8)
            .map(|_| {
                let (cache, asks) = (cache.clone(), asks.clone());
                tokio::spawn(async move {
                    cache
                        .through(|ask| async move {
                            if ask {
                                asks.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                            }
                            // CopyQ's answer takes a while: the other reads arrive meanwhile.
                            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                            Ok(((), ask.then_some(200)))
                        })
                        .await
                        .map(|(_, limit)| limit)
                })
            })
            .collect();
        for read in reads {
            assert_eq!(read.await.expect("task").expect("read"), 200);
        }
        assert_eq!(asks.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_failed_ask_leaves_the_next_read_to_ask() {
        let dir = tempfile::tempdir().expect("dir");
        let file = dir.path().join("copyq.ini");
        std::fs::write(&file, "[Options]\nmaxitems=200\n").expect("write");
        let cache = MaxItems::new(Some(file));
        let failed = cache
            .through(|_| async { Err::<((), Option<usize>), _>(BackendError::Unavailable) })
            .await;
        assert!(
            matches!(failed, Err(BackendError::Unavailable)),
            "{failed:?}"
        );
        assert_eq!(asked(&cache, 300).await, (true, 300));
        assert_eq!(asked(&cache, 1).await, (false, 300));
    }

    #[tokio::test]
    async fn without_a_file_copyq_is_asked_every_time() {
        let cache = MaxItems::new(None);
        assert_eq!(asked(&cache, 200).await, (true, 200));
        assert_eq!(asked(&cache, 300).await, (true, 300));
    }

    #[tokio::test]
    async fn a_limit_copyq_did_not_report_is_an_error() {
        let cache = MaxItems::new(None);
        let got = cache
            .through(|_| async { Ok(((), None)) })
            .await
            .map(|(_, limit)| limit);
        assert!(
            matches!(&got, Err(BackendError::Failed(m)) if m == "CopyQ did not report its maxitems option"),
            "{got:?}"
        );
    }

    #[test]
    fn the_options_file_is_beside_the_socket() {
        assert_eq!(
            beside(Path::new("/c/copyq-work/.copyq-work_s")),
            Some(PathBuf::from("/c/copyq-work/copyq-work.ini"))
        );
        assert_eq!(
            beside(Path::new("/h/.config/copyq/.copyq_s")),
            Some(PathBuf::from("/h/.config/copyq/copyq.ini"))
        );
    }

    #[test]
    #[cfg_attr(
        windows,
        ignore = "CopyQ's server is a named pipe there: no options file is beside it, so none is watched and maxitems is asked each time"
    )]
    fn the_cli_s_session_and_settings_path_win_over_the_environment() {
        let env = SocketEnv {
            settings_path: Some("/env".into()),
            session: Some("other".into()),
            home: Some("/h".into()),
            ..SocketEnv::default()
        };
        assert_eq!(
            of_session(env.clone(), Some(Path::new("/s")), Some("work")),
            Some(PathBuf::from("/s/copyq-work/copyq-work.ini"))
        );
        assert_eq!(
            of_session(env, None, None),
            Some(PathBuf::from("/env/copyq-other/copyq-other.ini"))
        );
        assert_eq!(of_session(SocketEnv::default(), None, None), None);
    }
}
