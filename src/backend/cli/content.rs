//! An item's other formats as the CLI script tells them (see `content` in copyq.js).

use serde::Deserialize;

use crate::backend::content::{Content, Format, Rich, pixels_of};

/// What the script tells of an item's other formats: an image's first bytes rather than its
/// pixel size, which the gateway reads from them exactly as the socket backend does.
#[derive(Deserialize, Default)]
pub(super) struct RawContent {
    formats: Vec<RawFormat>,
    rich: Option<Rich>,
}

#[derive(Deserialize)]
struct RawFormat {
    mime: String,
    bytes: u64,
    #[serde(default)]
    head: Option<String>,
}

impl From<RawContent> for Content {
    fn from(raw: RawContent) -> Self {
        use base64::Engine as _;
        let formats = raw
            .formats
            .into_iter()
            .map(|f| {
                let head = f
                    .head
                    .as_deref()
                    .and_then(|h| base64::engine::general_purpose::STANDARD.decode(h).ok());
                Format {
                    pixels: head.and_then(|h| pixels_of(&f.mime, &h)),
                    mime: f.mime,
                    bytes: f.bytes,
                }
            })
            .collect();
        Self {
            formats,
            rich: raw.rich,
            derived: None,
        }
    }
}
