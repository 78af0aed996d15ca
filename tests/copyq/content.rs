//! What an item holds beyond plain text (issue 21), against a real CopyQ through a real MCP client,
//! on both backends: a real screenshot of the Xvfb screen (CopyQ's own `screenshot()`), image files
//! Debian ships, HTML as Chromium puts it on the clipboard, and a file manager's `text/uri-list`.
//! Replies are asserted byte for byte, written out from the seed.

mod images;
mod replies;
mod rtf;
mod writes;

use std::sync::{Once, OnceLock};

use crate::support::*;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;

/// This suite's own private CopyQ, started on first use.
fn copyq() -> &'static PrivateCopyq {
    static COPYQ: OnceLock<PrivateCopyq> = OnceLock::new();
    private_copyq(&COPYQ)
}

/// Files from Debian packages, as a person copies them (desktop-base, nodejs-doc, libxslt1-dev,
/// postgresql-common).
const LOGO: &str = "/usr/share/pixmaps/debian-logo.png";
const JPEG: &str = "/usr/share/doc/nodejs/thin-white-stripe.jpg";
const GIF: &str = "/usr/share/doc/libxslt1-dev/html/node.gif";
const SVG: &str = "/usr/share/doc/postgresql-common/dependencies.svg";

/// A paragraph of a page as Chromium 120 puts it on the clipboard with no plain text (the page
/// chose `text/html` alone through the Clipboard API), `<meta charset>` prefix included.
const HTML: &str = "<meta charset='utf-8'><h2 style=\"color: rgb(31, 35, 40); font-family: -apple-system, \
BlinkMacSystemFont, &quot;Segoe UI&quot;;\">Release notes</h2><p style=\"color: rgb(31, 35, 40);\">Fixed \
<strong>two</strong> crashes &amp; one <a href=\"https://example.org/leak\">leak</a> in the importer.</p>";

/// Two files as Nautilus and Dolphin copy them: `file://` URLs, percent-encoded, CRLF line ends.
const URIS: &str = "file:///home/anna/Documents/Q3%20report.pdf\r\nfile:///home/anna/%D0%A4%D0%BE%D1%82%D0%BE/IMG_0412.jpg\r\n";

/// One item of the seed: its formats.
pub struct Seeded {
    pub formats: Vec<(&'static str, Vec<u8>)>,
}

impl Seeded {
    fn one(mime: &'static str, bytes: Vec<u8>) -> Self {
        Self {
            formats: vec![(mime, bytes)],
        }
    }

    pub fn bytes(&self, mime: &str) -> usize {
        self.formats
            .iter()
            .find(|(m, _)| *m == mime)
            .map_or(0, |(_, b)| b.len())
    }
}

/// Width and height from a PNG's IHDR chunk, as the test knows them without the gateway.
pub fn png_size(png: &[u8]) -> (u32, u32) {
    let be = |at: usize| u32::from_be_bytes([png[at], png[at + 1], png[at + 2], png[at + 3]]);
    (be(16), be(20))
}

fn read(path: &str) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The items of `mcp/workspace/media`, row 0 first.
pub fn media() -> &'static Vec<Seeded> {
    static MEDIA: OnceLock<Vec<Seeded>> = OnceLock::new();
    MEDIA.get_or_init(|| {
        let shot = copyq()
            .eval("print(toBase64(screenshot()))", b"")
            .expect("screenshot");
        let shot = B64.decode(shot.trim()).expect("screenshot base64");
        vec![
            Seeded::one("image/png", shot),
            Seeded {
                formats: vec![
                    ("text/plain", b"Debian logo".to_vec()),
                    ("image/png", read(LOGO)),
                ],
            },
            Seeded::one("image/jpeg", read(JPEG)),
            Seeded::one("image/gif", read(GIF)),
            Seeded::one("text/html", HTML.as_bytes().to_vec()),
            Seeded::one("text/uri-list", URIS.as_bytes().to_vec()),
            Seeded::one("image/svg+xml", read(SVG)),
            Seeded::one("text/plain", b"plain".to_vec()),
        ]
    })
}

/// Row 0 first, every format written through the `copyq` CLI as it would store a copy.
const SEED_SCRIPT: &str = r#"
var req = JSON.parse(str(input()));
// CopyQ 8.0+ keeps formats over item_data_threshold in files once any option is read: make these
// images DataFiles there, as a long-running CopyQ holds them. (6.4 has no such option.)
try { config('item_data_threshold'); } catch (e) {}
tab(req.tab);
for (var i = req.items.length - 1; i >= 0; --i) {
  var data = {};
  for (var mime in req.items[i]) data[mime] = fromBase64(req.items[i][mime]);
  insert(0, data);
}
"#;

pub fn seed(c: &PrivateCopyq, tab: &str, items: &[Seeded]) {
    let items: Vec<serde_json::Map<String, serde_json::Value>> = items
        .iter()
        .map(|it| {
            it.formats
                .iter()
                .map(|(m, b)| ((*m).to_owned(), B64.encode(b).into()))
                .collect()
        })
        .collect();
    let req = serde_json::json!({ "tab": tab, "items": items });
    c.eval(SEED_SCRIPT, req.to_string().as_bytes())
        .expect("seed");
}

pub fn seeded() -> &'static PrivateCopyq {
    static SEED: Once = Once::new();
    let c = copyq();
    SEED.call_once(|| {
        seed(c, "mcp/workspace/media", media());
        seed(c, "screens", &media()[..1]);
    });
    c
}

pub async fn session(backend: &str) -> (Gateway, Client) {
    let backend = copyq_mcp::config::BackendKind::parse(backend).expect("socket or cli");
    let gw = gateway_with(seeded(), |s| s.copyq.backend = backend).await;
    let c = client(&gw.url, &gw.read).await;
    (gw, c)
}
