//! The native socket client against a real private CopyQ 6.4: every slot the gateway uses,
//! pipelining, Unicode, missing tabs, bad calls, and a server hung, killed or stopped under a
//! call. Latencies go to stderr (`--nocapture`) for the notes; they are printed, never asserted.
//! (The byte-for-byte comparison with the Python probe is in src/backend/socket/reference_tests.rs.)

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use copyq_mcp::backend::Item;
use copyq_mcp::backend::socket::probe::{Detected, Layout, detect};
use copyq_mcp::backend::socket::value::map_get;
use copyq_mcp::backend::socket::{
    Call, Client, Map, MapListType, Options, Qt, SocketEnv, SocketError, Value, slots,
};
use copyq_mcp::sandbox::PrivateCopyq;

const TEXT: &str = "text/plain";
const TAGS: &str = "application/x-copyq-tags";
const NOTE: &str = "application/x-copyq-item-notes";
const V6: MapListType = MapListType::QVector;

static COPYQ: OnceLock<PrivateCopyq> = OnceLock::new();

/// One private CopyQ shared by the tests of this suite; each test uses its own tabs.
fn copyq() -> &'static PrivateCopyq {
    COPYQ.get_or_init(|| PrivateCopyq::start().expect("private CopyQ"))
}

fn socket_of(c: &PrivateCopyq) -> PathBuf {
    let env = SocketEnv {
        settings_path: Some(c.settings_path()),
        session: Some(c.session().into()),
        ..SocketEnv::default()
    };
    env.socket_path().expect("socket path")
}

async fn connect(c: &PrivateCopyq) -> Client {
    let client = Client::connect(socket_of(c), Options::default()).await;
    client.expect("connect")
}

/// The reply to `call`, which must not fail.
async fn call(client: &Client, call: Call) -> Value {
    let reply = client.call(&call).await;
    reply.unwrap_or_else(|e| panic!("{}: {e}", call.signature))
}

/// Run a slot that answers with a `QString` error: it must say "no error".
async fn ok(client: &Client, c: Call) {
    let reply = call(client, c.clone()).await;
    assert_eq!(slots::expect_error_text(&c, reply).expect("QString"), None);
}

async fn tabs(client: &Client) -> Vec<String> {
    slots::expect_string_list(&slots::tabs(), call(client, slots::tabs()).await).expect("list")
}

async fn has_tab(client: &Client, tab: &str) -> bool {
    tabs(client).await.iter().any(|t| t == tab)
}

async fn length(client: &Client, tab: &str) -> i32 {
    call(client, slots::browser_length(tab))
        .await
        .as_int()
        .expect("int")
}

async fn row(client: &Client, tab: &str, row: i32) -> Map {
    let c = slots::browser_item_data(tab, row);
    slots::expect_map(&c, call(client, c.clone()).await).expect("map")
}

fn item(text: &str, tags: &str, note: &str) -> Map {
    vec![
        (TEXT.into(), Value::bytes(text)),
        (TAGS.into(), Value::bytes(tags)),
        (NOTE.into(), Value::bytes(note)),
    ]
}

fn text_of(map: &Map, mime: &str) -> Option<String> {
    map_get(map, mime).and_then(Value::to_text)
}

fn texts(values: &[Value]) -> Vec<Option<String>> {
    let text = |v: &Value| v.as_map().and_then(|m| text_of(m, TEXT));
    values.iter().map(text).collect()
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

#[tokio::test]
async fn the_socket_path_is_where_copyq_listens_and_the_layout_is_known() {
    let c = copyq();
    let path = socket_of(c);
    assert!(path.exists(), "no socket at {}", path.display());
    let started = Instant::now();
    let client = connect(c).await;
    let connected = started.elapsed();
    let started = Instant::now();
    let found = detect(&client).await.expect("detect");
    let detected = started.elapsed();
    eprintln!("latency: connect {connected:?}, detect (5 calls) {detected:?}");
    assert_eq!(
        found,
        Detected::Known(Layout {
            map_list: V6,
            qt: Qt::V5,
            since_14: false
        })
    );
}

#[tokio::test]
async fn insert_read_change_remove_and_remove_tab() {
    let client = connect(copyq()).await;
    let tab = "sock/crud";
    assert!(!has_tab(&client, tab).await);
    let items = vec![item("first", "a,b", "n1"), item("second", "", "")];
    ok(&client, slots::browser_insert(V6, tab, 0, items)).await;
    assert!(has_tab(&client, tab).await);
    assert_eq!(length(&client, tab).await, 2);

    // Each item goes in at `row` in turn: the last one ends up first.
    assert_eq!(
        text_of(&row(&client, tab, 0).await, TEXT).as_deref(),
        Some("second")
    );
    let row1 = row(&client, tab, 1).await;
    assert_eq!(
        map_get(&row1, TEXT),
        Some(&Value::bytes("first")),
        "bytes stay bytes"
    );
    assert_eq!(text_of(&row1, TAGS).as_deref(), Some("a,b"));
    assert_eq!(text_of(&row1, NOTE).as_deref(), Some("n1"));
    assert_eq!(row(&client, tab, 99).await, vec![], "past the end");
    let one = call(&client, slots::browser_item_format(tab, 1, NOTE)).await;
    assert_eq!(one, Value::bytes("n1"));

    // Change merges: a QString value stays a QString; an invalid value removes the format.
    let change = vec![
        (NOTE.into(), Value::str("new note")),
        (TAGS.into(), Value::Invalid),
    ];
    ok(&client, slots::browser_change(V6, tab, 1, vec![change])).await;
    let row1 = row(&client, tab, 1).await;
    assert_eq!(map_get(&row1, NOTE), Some(&Value::str("new note")));
    assert_eq!(map_get(&row1, TAGS), None);
    assert_eq!(text_of(&row1, TEXT).as_deref(), Some("first"));
    // The CLI reads a format the socket stored as a QString like any other.
    let script = format!("tab('{tab}'); print(str(read('{NOTE}', 1)))");
    assert_eq!(copyq().eval(&script, b"").expect("CLI read"), "new note");

    ok(&client, slots::browser_remove_rows(Qt::V5, tab, vec![0, 7])).await;
    assert_eq!(length(&client, tab).await, 1);
    let unloaded = call(&client, slots::unload_tabs(&[tab])).await;
    assert_eq!(unloaded, Value::StringList(vec![tab.into()]));
    let limit = call(&client, slots::config("maxitems")).await;
    eprintln!("unloadTabs -> {unloaded:?}; config(maxitems) -> {limit:?}");
    assert_eq!(
        limit,
        Value::Map(vec![("maxitems".into(), Value::Int(200))])
    );

    ok(&client, slots::remove_tab(tab)).await;
    assert!(!has_tab(&client, tab).await);
    let again = call(&client, slots::remove_tab(tab)).await;
    eprintln!("removeTab of a missing tab -> {again:?}");
    assert!(matches!(again, Value::String(Some(ref e)) if !e.is_empty()));
}

#[tokio::test]
async fn server_side_search_with_a_case_insensitive_regex() {
    let c = copyq();
    let tab = "sock/search";
    let seed = ["Alpha PROBE one", "beta", "gamma probe two", "delta"];
    let items: Vec<Item> = seed.iter().map(|t| Item::new(t, &[], "")).collect();
    c.seed(tab, &items).expect("seed");
    let client = connect(c).await;
    let id = call(&client, slots::create_selection(tab)).await;
    let id = id.as_int().expect("selection id");
    let select = slots::selection_select(id, Value::regex("probe", true), TEXT);
    assert_eq!(call(&client, select).await, Value::Invalid, "a void slot");
    let rows = call(&client, slots::selection_get_rows(id)).await;
    assert_eq!(rows, Value::IntVector(vec![0, 2]));
    let Value::List(data) = call(&client, slots::selection_get_items_data(id)).await else {
        panic!("QVariantList expected")
    };
    let found = ["Alpha PROBE one", "gamma probe two"].map(|t| Some(t.to_string()));
    assert_eq!(texts(&data), found);
    // Items written by the CLI come back as QByteArray.
    let first = data[0].as_map().and_then(|m| map_get(m, TEXT));
    assert!(matches!(first, Some(Value::Bytes(_))), "{first:?}");
    call(&client, slots::selection_select_all(id)).await;
    let rows = call(&client, slots::selection_get_rows(id)).await;
    assert_eq!(
        rows,
        Value::IntVector(vec![0, 1, 2, 3]),
        "every row, in row order"
    );
    assert_eq!(
        call(&client, slots::destroy_selection(id)).await,
        Value::Invalid
    );
    let gone = call(&client, slots::selection_get_rows(id)).await;
    assert_eq!(gone, Value::IntVector(vec![]));
}

#[tokio::test]
async fn twenty_items_sequential_and_pipelined() {
    let c = copyq();
    let tab = "sock/twenty";
    let items: Vec<Item> = (0..20)
        .map(|i| Item::new(&format!("item {i}"), &["t"], "n"))
        .collect();
    c.seed(tab, &items).expect("seed");
    let client = connect(c).await;
    let calls: Vec<Call> = (0..20)
        .map(|row| slots::browser_item_data(tab, row))
        .collect();
    let expected: Vec<Option<String>> = (0..20).map(|i| Some(format!("item {i}"))).collect();
    let (mut one, mut seq, mut pipe, mut fresh) = (vec![], vec![], vec![], vec![]);
    for _ in 0..15 {
        let started = Instant::now();
        call(&client, slots::browser_length(tab)).await;
        one.push(started.elapsed());

        let started = Instant::now();
        let mut values = Vec::new();
        for c in &calls {
            values.push(call(&client, c.clone()).await);
        }
        seq.push(started.elapsed());
        assert_eq!(texts(&values), expected);

        let started = Instant::now();
        let values = client.call_many(&calls).await.expect("pipelined");
        pipe.push(started.elapsed());
        assert_eq!(texts(&values), expected);

        let started = Instant::now();
        call(&connect(c).await, slots::tabs()).await;
        fresh.push(started.elapsed());
    }
    let (one, seq, pipe, fresh) = (median(one), median(seq), median(pipe), median(fresh));
    eprintln!(
        "latency (median of 15): one call {one:?}; 20 items sequential {seq:?}, pipelined \
         {pipe:?}; connect + tabs() {fresh:?}"
    );
}

#[tokio::test]
async fn cyrillic_and_emoji_round_trip() {
    let client = connect(copyq()).await;
    let tab = "sock/юникод 🎉";
    let text = "Привет, мир! 🎉👩‍👩‍👧 ё\n\u{1F600}\t\"quotes\" | pipe";
    let (tags, note) = ("важно,🏷️", "Заметка 📝");
    ok(
        &client,
        slots::browser_insert(V6, tab, 0, vec![item(text, tags, note)]),
    )
    .await;
    // The same text as a QString (UTF-16 on the wire) next to the UTF-8 bytes.
    let change = vec![("text/x-utf16".into(), Value::str(text))];
    ok(&client, slots::browser_change(V6, tab, 0, vec![change])).await;
    assert!(has_tab(&client, tab).await);
    let got = row(&client, tab, 0).await;
    assert_eq!(text_of(&got, TEXT).as_deref(), Some(text));
    assert_eq!(text_of(&got, TAGS).as_deref(), Some(tags));
    assert_eq!(text_of(&got, NOTE).as_deref(), Some(note));
    assert_eq!(map_get(&got, "text/x-utf16"), Some(&Value::str(text)));
    let script = "tab(str(input())); print(str(read(0)))";
    assert_eq!(copyq().eval(script, tab.as_bytes()).expect("CLI"), text);
    ok(&client, slots::remove_tab(tab)).await;
}

/// Reads must never create tabs; these slots do, as the CLI does. Only `tabs()` is safe.
#[tokio::test]
async fn touching_a_missing_tab_creates_it() {
    let client = connect(copyq()).await;
    let probes: [fn(&str) -> Call; 4] = [
        slots::browser_length,
        |t| slots::browser_item_data(t, 0),
        |t| slots::browser_item_format(t, 0, TEXT),
        slots::create_selection,
    ];
    for (i, probe) in probes.iter().enumerate() {
        let tab = format!("sock/missing-{i}");
        assert!(!has_tab(&client, &tab).await);
        let c = probe(&tab);
        let reply = call(&client, c.clone()).await;
        let created = has_tab(&client, &tab).await;
        eprintln!(
            "{} on a missing tab -> {reply:?}; tab created: {created}",
            c.signature
        );
        assert!(created, "{} did not create the tab", c.signature);
        ok(&client, slots::remove_tab(&tab)).await;
    }
    // An empty tab name means the first tab, which always exists: nothing is created.
    let before = tabs(&client).await;
    let first = length(&client, "").await;
    assert_eq!(tabs(&client).await, before);
    eprintln!(
        "browserLength(\"\") -> {first}: rows of the first tab {:?}",
        before.first()
    );
}

#[tokio::test]
async fn bad_calls_are_rejected_and_the_connection_survives() {
    let client = connect(copyq()).await;
    let length = "browserLength(QString)";
    let bad = [
        Call::new("noSuchSlot()", vec![]),
        Call::new(length, vec![Value::Int(1)]),
        Call::new(length, vec![Value::bytes("x")]),
        Call::new(length, vec![Value::str("x"), Value::Int(1)]),
        Call::new("browserLength( QString )", vec![Value::str("x")]),
    ];
    for c in &bad {
        let got = client.call(c).await;
        eprintln!("{} {:?} -> {got:?}", c.signature, c.args);
        assert!(matches!(got, Err(SocketError::Rejected)), "{got:?}");
    }
    // Too few arguments: the slot exists, Qt refuses to invoke it, the default value comes back.
    let got = client.call(&Call::new(length, vec![])).await;
    eprintln!("{length} without arguments -> {got:?}");
    assert_eq!(got.expect("default value"), Value::Int(0));
    // Pipelined between good calls, the rejection is charged to the right one.
    let (good1, good2) = (slots::tabs(), slots::browser_length(""));
    let (a, b, c) = tokio::join!(
        client.call(&good1),
        client.call(&bad[0]),
        client.call(&good2)
    );
    assert!(matches!(a, Ok(Value::StringList(_))), "{a:?}");
    assert!(matches!(b, Err(SocketError::Rejected)), "{b:?}");
    assert!(matches!(c, Ok(Value::Int(_))), "{c:?}");
    assert!(!client.is_closed());
}

/// A long pipelined batch (seconds of server work), returned once it is in flight: sent, and the
/// server has answered some of it but not all.
async fn batch_in_flight(
    client: Arc<Client>,
    tab: &str,
) -> tokio::task::JoinHandle<(Result<Vec<Value>, SocketError>, Instant)> {
    const CALLS: usize = 60_000;
    let calls: Vec<Call> = (0..CALLS)
        .map(|i| slots::browser_item_data(tab, (i % 20) as i32))
        .collect();
    let batch = client.clone();
    let task = tokio::spawn(async move { (batch.call_many(&calls).await, Instant::now()) });
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = client.in_flight();
        if left > 0 && left < CALLS {
            return task;
        }
        assert!(
            !task.is_finished() && Instant::now() < deadline,
            "the batch never got under way ({left} calls in flight)"
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// Send SIGSTOP or SIGCONT to the server, whose PID is the first line of its lock file.
fn signal_server(c: &PrivateCopyq, signal: &str) {
    let dir = socket_of(c).parent().expect("settings dir").to_owned();
    let lock = dir.join(format!("copyq-{}.lock", c.session()));
    let pid = std::fs::read_to_string(lock).expect("lock file");
    let pid = pid.lines().next().expect("pid").trim().to_owned();
    let status = std::process::Command::new("kill")
        .args([signal, &pid])
        .status();
    assert!(status.expect("kill").success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_killed_or_stopped_server_fails_calls_promptly() {
    let mut c = PrivateCopyq::start().expect("own CopyQ");
    let tab = "sock/crash";
    let items: Vec<Item> = (0..20)
        .map(|i| Item::new(&format!("i{i}"), &[], ""))
        .collect();
    c.seed(tab, &items).expect("seed");
    let short = Options {
        timeout: Duration::from_millis(300),
        ..Options::default()
    };
    let long = Options {
        timeout: Duration::from_secs(60),
        ..Options::default()
    };

    // A hung server (SIGSTOP): the call times out; the connection stays usable.
    let client = Client::connect(socket_of(&c), short)
        .await
        .expect("connect");
    signal_server(&c, "-STOP");
    let got = client.call(&slots::tabs()).await;
    signal_server(&c, "-CONT");
    assert!(matches!(got, Err(SocketError::Timeout(_))), "{got:?}");
    assert_eq!(
        length(&client, tab).await,
        20,
        "usable after the late reply"
    );

    // SIGKILL mid-batch: the end of the stream fails the batch at once.
    let client = Arc::new(Client::connect(socket_of(&c), long).await.expect("connect"));
    let task = batch_in_flight(client.clone(), tab).await;
    let killed_at = Instant::now();
    let mut c = tokio::task::spawn_blocking(move || {
        c.kill_server();
        c
    })
    .await
    .expect("kill");
    let waited = tokio::time::timeout(Duration::from_secs(5), task).await;
    let (result, failed_at) = waited.expect("the batch must not hang").expect("task");
    let err = result.expect_err("killed");
    let after = failed_at.saturating_duration_since(killed_at);
    eprintln!("killed mid-batch -> {err} after {after:?}");
    assert!(matches!(err, SocketError::Closed), "{err}");
    assert!(client.is_closed() && err.is_disconnect());
    let started = Instant::now();
    assert!(matches!(
        client.call(&slots::tabs()).await,
        Err(SocketError::Closed)
    ));
    // At once: not after the 60 s call timeout (a bound far from both, for a busy machine).
    assert!(started.elapsed() < long.timeout / 4);
    let refused = Client::connect(socket_of(&c), long).await;
    assert!(
        matches!(refused, Err(SocketError::Connect { .. })),
        "{refused:?}"
    );

    // `copyq exit` mid-batch: the stop message fails the batch, and the client lets go of the
    // socket at once so the exiting server need not wait for it (it would, up to 10 s).
    c.start_server().expect("restart");
    c.seed(tab, &items).expect("seed again"); // the SIGKILL lost it: tabs are saved late
    let client = Arc::new(
        Client::connect(socket_of(&c), long)
            .await
            .expect("reconnect"),
    );
    assert_eq!(length(&client, tab).await, 20);
    let task = batch_in_flight(client.clone(), tab).await;
    let stopped_at = Instant::now();
    let exit = tokio::task::spawn_blocking(move || c.stop_server());
    let waited = tokio::time::timeout(Duration::from_secs(15), task).await;
    let (result, failed_at) = waited.expect("the batch must not hang").expect("task");
    exit.await.expect("stop");
    let gone = stopped_at.elapsed();
    let err = result.expect_err("stopped");
    let after = failed_at.saturating_duration_since(stopped_at);
    eprintln!("stopped mid-batch -> {err} after {after:?}; server gone after {gone:?}");
    assert!(matches!(err, SocketError::Stopped), "{err}");
    assert!(client.is_closed());
    // That the client closes its end on the stop message (so CopyQ need not wait its 10 s for it)
    // is shown without a clock by the unit test
    // `stop_fails_waiting_and_later_calls_at_once_and_closes_the_socket`, whose server sees the
    // end of the stream. Timed here it failed at load 16, where CopyQ alone took 9.4 s to exit.
}
