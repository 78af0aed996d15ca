//! The floors each gateway operation is compared with: the same work done directly, by one
//! `copyq eval` (what any CLI-based tool pays) and by raw socket calls (what a native client pays).

use std::time::{Duration, Instant};

use copyq_mcp::backend::socket::Call;
use copyq_mcp::backend::socket::client::{Client, Options};
use copyq_mcp::backend::socket::path::SocketEnv;
use copyq_mcp::backend::socket::probe::{Detected, Layout, detect};
use copyq_mcp::backend::socket::slots;
use copyq_mcp::backend::socket::value::{Value, map_get};
use copyq_mcp::sandbox::PrivateCopyq;

use super::{BIG, stats};

pub struct Floors {
    client: std::sync::Arc<Client>,
    /// Detected as the gateway does (once per connection: not part of any timing).
    layout: Layout,
}

const ROW: &str = "function row(d) { return [str(d['text/plain']), str(d['application/x-copyq-tags']), str(d['application/x-copyq-item-notes'])]; }";

/// The same work as the gateway's CLI backend, in one `copyq eval` each.
fn cli_script(op: &str) -> String {
    let body = match op {
        "list (20 items)" => format!("tab('{BIG}'); var n = size(); var o = []; for (var i = 0; i < 20; ++i) o.push(row(getItem(i))); print(JSON.stringify([n, o]))"),
        "item" => format!("tab('{BIG}'); print(JSON.stringify([size(), row(getItem(5000))]))"),
        "tree scope:all" => "var o = []; tab().forEach(function (t) { tab(t); var n = size(); var r = []; \
             for (var i = 0; i < Math.min(n, 20); ++i) r.push(row(getItem(i))); o.push([t, n, r]); }); print(JSON.stringify(o))"
            .into(),
        "search 10,000 items" => "var re = /needle \\d+/i; var hits = []; tab().filter(function (t) { return t.indexOf('mcp/') === 0; }).forEach(function (t) { \
             var s = new ItemSelection(t).selectAll(); var x = s.itemsFormat('text/plain'), g = s.itemsFormat('application/x-copyq-tags'), \
             n = s.itemsFormat('application/x-copyq-item-notes'); for (var i = 0; i < x.length; ++i) \
             if (re.test(str(x[i])) || re.test(str(g[i])) || re.test(str(n[i]))) hits.push([t, i, str(x[i])]); }); print(JSON.stringify(hits))"
            .into(),
        _ => "tab('mcp/workspace/floor-add'); add('benchmark item'); unload('mcp/workspace/floor-add')".into(),
    };
    format!("{ROW} {body}")
}

impl Floors {
    pub async fn connect(copyq: &PrivateCopyq) -> Floors {
        let env = SocketEnv {
            settings_path: Some(copyq.settings_path()),
            session: Some(copyq.session().to_owned()),
            ..SocketEnv::default()
        };
        let path = env.socket_path().expect("socket path");
        let client = Client::connect(
            path,
            Options {
                timeout: Duration::from_secs(30),
                ..Options::default()
            },
        )
        .await
        .expect("socket");
        let layout = match detect(&client).await.expect("detect") {
            Detected::Known(layout) => layout,
            Detected::Unknown(why) => panic!("unknown socket layout: {why}"),
        };
        Floors {
            client: std::sync::Arc::new(client),
            layout,
        }
    }

    /// Another handle on the same connection (its calls pipelined with this one's).
    pub fn share(&self) -> Floors {
        Floors {
            client: self.client.clone(),
            layout: self.layout,
        }
    }

    pub async fn cli(&self, copyq: &PrivateCopyq, op: &str, n: usize) -> (f64, f64) {
        let script = cli_script(op);
        let run = || {
            let t = Instant::now();
            copyq.eval(&script, b"").expect("copyq eval");
            t.elapsed()
        };
        run();
        stats((0..n).map(|_| run()).collect())
    }

    /// The same calls the gateway's socket backend makes, pipelined as far as they can be.
    pub async fn socket_once(&self, op: &str) {
        match op {
            "list (20 items)" => self.rows(BIG, 0..20).await,
            "item" => self.rows(BIG, 5000..5001).await,
            "tree scope:all" => self.tree("", 20).await,
            "search 10,000 items" => {
                assert!(
                    self.search("needle \\d+").await > 0,
                    "the floor search found nothing"
                )
            }
            _ => self.socket_add().await,
        }
    }

    /// `calls` as one pipelined batch, their replies dropped (each checked to be a reply).
    pub async fn raw(&self, calls: &[Call]) {
        self.client.call_many(calls).await.expect("raw calls");
    }

    /// A listing's calls: the tab list, the tab's length and `rows`' data, in one pipelined batch.
    pub async fn rows(&self, tab: &str, rows: std::ops::Range<i32>) {
        let mut calls = vec![slots::tabs(), slots::browser_length(tab)];
        calls.extend(rows.map(|r| slots::browser_item_data(tab, r)));
        self.client.call_many(&calls).await.expect("read");
    }

    /// A tree's calls over the tabs whose names start with `prefix`: the tab list, then each tab's
    /// length and its first `rows` items.
    pub async fn tree(&self, prefix: &str, rows: i32) {
        let c = &self.client;
        let tabs: Vec<String> = match c.call(&slots::tabs()).await.expect("tabs") {
            Value::StringList(t) => t.into_iter().filter(|t| t.starts_with(prefix)).collect(),
            _ => Vec::new(),
        };
        let mut calls: Vec<_> = tabs.iter().map(|t| slots::browser_length(t)).collect();
        for t in &tabs {
            calls.extend((0..rows).map(|r| slots::browser_item_data(t, r)));
        }
        c.call_many(&calls).await.expect("tree");
    }

    /// A search's calls over the `mcp/` tabs: every item's data through one selection per tab,
    /// matched against `pattern` (case-insensitive) in text, tags and notes. The count of hits.
    pub async fn search(&self, pattern: &str) -> usize {
        let c = &self.client;
        let tabs: Vec<String> = match c.call(&slots::tabs()).await.expect("tabs") {
            Value::StringList(t) => t.into_iter().filter(|t| t.starts_with("mcp/")).collect(),
            _ => Vec::new(),
        };
        let ids = c
            .call_many(
                &tabs
                    .iter()
                    .map(|t| slots::create_selection(t))
                    .collect::<Vec<_>>(),
            )
            .await
            .expect("selections");
        let mut calls = Vec::new();
        for id in ids.iter().filter_map(|v| {
            if let Value::Int(i) = v {
                Some(*i)
            } else {
                None
            }
        }) {
            calls.extend([
                slots::selection_select_all(id),
                slots::selection_get_items_data(id),
                slots::destroy_selection(id),
            ]);
        }
        let re = regex::RegexBuilder::new(pattern)
            .case_insensitive(true)
            .build()
            .expect("regex");
        let mut hits = 0;
        for reply in c.call_many(&calls).await.expect("data") {
            if let Value::List(items) = reply {
                hits += items
                    .iter()
                    .filter_map(Value::as_map)
                    .filter(|m| {
                        [
                            "text/plain",
                            "application/x-copyq-tags",
                            "application/x-copyq-item-notes",
                        ]
                        .iter()
                        .any(|k| {
                            map_get(m, k)
                                .and_then(Value::to_text)
                                .is_some_and(|t| re.is_match(&t))
                        })
                    })
                    .count();
            }
        }
        hits
    }

    /// A durable write's floor: `call`, then the unload that saves `tab`, pipelined.
    pub async fn durable(&self, tab: &str, call: Call) {
        let calls = [call, slots::unload_tabs(&[tab])];
        self.client.call_many(&calls).await.expect("write");
    }

    /// An add of `text` at the top of `tab`, made durable.
    pub async fn add(&self, tab: &str, text: &str) {
        let item = vec![("text/plain".to_owned(), Value::bytes(text))];
        let call = slots::browser_insert(self.layout.map_list, tab, 0, vec![item]);
        self.durable(tab, call).await;
    }

    /// An update of row `row`'s text in `tab`, made durable.
    pub async fn update(&self, tab: &str, row: i32, text: &str) {
        let item = vec![("text/plain".to_owned(), Value::bytes(text))];
        let call = slots::browser_change(self.layout.map_list, tab, row, vec![item]);
        self.durable(tab, call).await;
    }

    /// A delete of row `row` of `tab`, made durable.
    pub async fn delete(&self, tab: &str, row: i32) {
        let call = slots::browser_remove_rows(self.layout.qt, tab, vec![row]);
        self.durable(tab, call).await;
    }

    /// The floor of a durable add: the insert and the unload that saves it, pipelined.
    pub async fn socket_add(&self) {
        self.add("mcp/workspace/floor-add-socket", "benchmark item")
            .await;
    }
}
