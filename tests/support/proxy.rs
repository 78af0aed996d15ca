//! A fault injector between the gateway and its private CopyQ: a proxy of CopyQ's local socket that
//! forwards bytes both ways and, the `nth` time a call from the gateway holds every one of
//! `patterns` (a slot such as `browserRemoveRows`, which both backends send as plain text; a tab
//! name, sent as [`utf16`]), does something first: runs a closure (change CopyQ meanwhile, wait,
//! pause it) or closes the connection (CopyQ gone, for a moment or a while, once it has answered
//! the calls sent before that one). It works call by call, not chunk by chunk: a round trip's
//! calls arrive together, and the fault lands at its own call. Both backends go
//! through it: the socket backend connects to it, and the `copyq` client finds it from its own
//! settings path (where CopyQ's socket would be), so a fault lands at the same step of the write
//! whichever backend makes it.

use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use copyq_mcp::config::Settings;
use tempfile::TempDir;

use super::PrivateCopyq;

/// What the proxy does when the call it waits for comes.
pub enum Fault {
    /// Run this, then forward the call.
    Run(Box<dyn FnOnce() + Send>),
    /// Close the connection instead of forwarding the call.
    Close,
    /// Close it, and every connection made for this long after (CopyQ gone for a while).
    Sever(Duration),
}

/// A string as CopyQ's calls carry it (a `QString`: UTF-16, big-endian).
pub fn utf16(s: &str) -> Vec<u8> {
    s.encode_utf16().flat_map(u16::to_be_bytes).collect()
}

struct Trigger {
    patterns: Vec<Vec<u8>>,
    left: usize,
    fault: Option<Fault>,
    /// Connections are closed at once until then.
    severed: Option<Instant>,
}

impl Trigger {
    fn severed(&self) -> bool {
        self.severed.is_some_and(|until| Instant::now() < until)
    }
}

pub struct Proxy {
    dir: TempDir,
    session: String,
    trigger: Arc<Mutex<Trigger>>,
}

impl Proxy {
    /// A proxy of `copyq`'s socket that injects `fault` at the `nth` (from 1) call holding all
    /// of `patterns`.
    pub fn start(copyq: &PrivateCopyq, patterns: &[&[u8]], nth: usize, fault: Fault) -> Self {
        let mut real = Settings::defaults().expect("settings");
        copyq.configure(&mut real);
        let target = real.copyq_socket().expect("CopyQ's socket");
        // Under /tmp, as the sandbox: a CopyQ client in a chroot sees the same path.
        let dir = tempfile::Builder::new()
            .prefix("copyq-mcp-proxy-")
            .tempdir_in("/tmp")
            .expect("proxy dir");
        let session = copyq.session().to_owned();
        let me = Self {
            dir,
            session,
            trigger: Arc::new(Mutex::new(Trigger {
                patterns: patterns.iter().map(|p| p.to_vec()).collect(),
                left: nth,
                fault: Some(fault),
                severed: None,
            })),
        };
        let path = me.socket();
        std::fs::create_dir_all(path.parent().expect("parent")).expect("socket dir");
        let listener = UnixListener::bind(&path).expect("bind the proxy");
        let trigger = me.trigger.clone();
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                if lock(&trigger).severed() {
                    continue;
                }
                let Ok(server) = UnixStream::connect(&target) else {
                    continue;
                };
                forward(client, server, trigger.clone());
            }
        });
        me
    }

    fn socket(&self) -> PathBuf {
        let name = format!("copyq-{}", self.session);
        self.dir.path().join(&name).join(format!(".{name}_s"))
    }

    /// Point a gateway at the proxy instead of CopyQ (after `copyq.configure`).
    pub fn configure(&self, settings: &mut Settings) {
        settings.copyq.socket = self.socket().display().to_string();
        settings.copyq.settings_path = self.dir.path().display().to_string();
    }

    /// Whether the fault was injected.
    pub fn fired(&self) -> bool {
        lock(&self.trigger).fault.is_none()
    }
}

/// A proxy that adds `text` on top of `tab` (a CopyQ tab name) when the gateway asks that tab's
/// length the `nth` time: the write's own check, after the plan asked it `nth - 1` times.
fn adding_between_plan_and_write(copyq: &PrivateCopyq, tab: &str, text: &str, nth: usize) -> Proxy {
    let add = eval_later(copyq, &format!("tab('{tab}'); add('{text}')"));
    Proxy::start(
        copyq,
        &[b"browserLength", &utf16(tab)],
        nth,
        Fault::Run(Box::new(add)),
    )
}

/// The error `write` gets (through a gateway of its own) when `text` is added on top of `tab`
/// between the write's plan and its own check. The plan of an update, a delete or a move asks the
/// tab's length once (`nth` 2: the write's check asks it next); an add's plan reads only the tab
/// list (`nth` 1).
pub async fn write_racing_an_add(
    copyq: &PrivateCopyq,
    tab: &str,
    text: &str,
    write: serde_json::Value,
    nth: usize,
) -> String {
    let proxy = adding_between_plan_and_write(copyq, tab, text, nth);
    let gw = super::gateway_with(copyq, |s| proxy.configure(s)).await;
    let c = super::client(&gw.url, &gw.write).await;
    let got = super::err(&c, "mcp_write", write).await;
    assert!(
        proxy.fired(),
        "{tab}: the write asked no length after the plan"
    );
    got
}

/// `copyq eval -- script` against `copyq`, ready to run from a proxy's fault.
pub fn eval_later(copyq: &PrivateCopyq, script: &str) -> impl FnOnce() + Send + 'static {
    let mut cmd = copyq.command();
    cmd.args(["eval", "--", script])
        .stdout(std::process::Stdio::null());
    move || {
        let status = cmd.status().expect("copyq eval");
        assert!(status.success(), "the fault's script failed");
    }
}

fn lock(trigger: &Mutex<Trigger>) -> std::sync::MutexGuard<'_, Trigger> {
    trigger.lock().unwrap_or_else(PoisonError::into_inner)
}

/// CopyQ's frames: `u32 magic | u32 version | u32 len | len bytes`, the first 4 of those the
/// message's code (8: a function call; 9: its return value).
const HEADER_LEN: usize = 12;
const FUNCTION_CALL: i32 = 8;
const FUNCTION_CALL_RETURN_VALUE: i32 = 9;

/// The whole frames at the start of `buf`: each one's bytes and message code, and how many bytes
/// they take together (what is left is a frame still arriving).
fn frames(buf: &[u8]) -> (Vec<(std::ops::Range<usize>, i32)>, usize) {
    let (mut out, mut at) = (Vec::new(), 0);
    while let Some(len) = buf.get(at + 8..at + HEADER_LEN) {
        let end = at + HEADER_LEN + u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize;
        if buf.len() < end {
            break;
        }
        let code = buf
            .get(at + HEADER_LEN..at + HEADER_LEN + 4)
            .map_or(0, |c| i32::from_be_bytes([c[0], c[1], c[2], c[3]]));
        out.push((at..end, code));
        at = end;
    }
    (out, at)
}

/// Calls forwarded to CopyQ and return values relayed back, on one connection.
#[derive(Default)]
struct Counts {
    calls: std::sync::atomic::AtomicUsize,
    replies: std::sync::atomic::AtomicUsize,
}

impl Counts {
    /// Wait (at most 10 s) until CopyQ has answered every call forwarded to it: a fault that
    /// closes the connection at a call models CopyQ gone at that call, after it answered the
    /// calls sent before it in the same round trip (CopyQ flushes each reply as it is made).
    fn answered(&self) {
        use std::sync::atomic::Ordering::SeqCst;
        let until = Instant::now() + Duration::from_secs(10);
        while self.replies.load(SeqCst) < self.calls.load(SeqCst) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

fn forward(client: UnixStream, server: UnixStream, trigger: Arc<Mutex<Trigger>>) {
    let (Ok(client_out), Ok(server_in)) = (client.try_clone(), server.try_clone()) else {
        return;
    };
    let counts = Arc::new(Counts::default());
    std::thread::spawn({
        let counts = counts.clone();
        move || pump(server_in, client_out, &counts)
    });
    std::thread::spawn(move || {
        use std::sync::atomic::Ordering::SeqCst;
        let mut from = client;
        let mut to = server;
        let mut buf = vec![0u8; 1 << 16];
        let mut pending = Vec::new();
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 {
                break;
            }
            pending.extend_from_slice(&buf[..n]);
            // Frame by frame: a round trip's calls come in one chunk, and the fault lands at its
            // own call, after the calls before it.
            let (whole, used) = frames(&pending);
            for (range, code) in whole {
                let frame = &pending[range];
                match due(&trigger, frame) {
                    Some(Fault::Sever(d)) => {
                        counts.answered();
                        lock(&trigger).severed = Some(Instant::now() + d);
                        let _ = from.shutdown(std::net::Shutdown::Both);
                        let _ = to.shutdown(std::net::Shutdown::Both);
                        return;
                    }
                    Some(Fault::Close) => {
                        counts.answered();
                        let _ = from.shutdown(std::net::Shutdown::Both);
                        let _ = to.shutdown(std::net::Shutdown::Both);
                        return;
                    }
                    Some(Fault::Run(f)) => f(),
                    None => {}
                }
                if code == FUNCTION_CALL {
                    counts.calls.fetch_add(1, SeqCst);
                }
                if to.write_all(frame).is_err() {
                    let _ = to.shutdown(std::net::Shutdown::Write);
                    return;
                }
            }
            pending.drain(..used);
        }
        let _ = to.shutdown(std::net::Shutdown::Write);
    });
}

/// The fault, if this frame holds the call it waits for.
fn due(trigger: &Mutex<Trigger>, frame: &[u8]) -> Option<Fault> {
    let mut t = lock(trigger);
    t.fault.as_ref()?;
    let has = |p: &Vec<u8>| frame.windows(p.len()).any(|w| w == p.as_slice());
    if !t.patterns.iter().all(has) {
        return None;
    }
    if t.left > 1 {
        t.left -= 1;
        return None;
    }
    t.fault.take()
}

fn pump(mut from: UnixStream, mut to: UnixStream, counts: &Counts) {
    use std::sync::atomic::Ordering::SeqCst;
    let mut buf = vec![0u8; 1 << 16];
    let mut pending = Vec::new();
    while let Ok(n) = from.read(&mut buf) {
        if n == 0 {
            break;
        }
        pending.extend_from_slice(&buf[..n]);
        let (whole, used) = frames(&pending);
        let answers = whole
            .iter()
            .filter(|(_, code)| *code == FUNCTION_CALL_RETURN_VALUE)
            .count();
        if to.write_all(&pending[..used]).is_err() {
            break;
        }
        pending.drain(..used);
        counts.replies.fetch_add(answers, SeqCst);
    }
    let _ = to.write_all(&pending);
    let _ = to.shutdown(std::net::Shutdown::Write);
}
