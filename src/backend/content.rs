//! What an item holds beside text, tags and note (images, rich text, file lists), as both backends
//! describe it on a read: the same formats, sizes and pixel sizes, so their replies agree.

use serde::{Deserialize, Serialize};

/// The formats a read describes, in the order a reply lists them. Both backends describe exactly
/// these (the CLI's bulk reads ask CopyQ for each by name), so a format outside the list is kept
/// by CopyQ and by every write but not shown.
pub const CONTENT_MIMES: [&str; 10] = [
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "image/bmp",
    "image/svg+xml",
    "text/html",
    "text/rtf",
    "application/rtf",
    "text/uri-list",
];

/// Formats whose text a read derives when the item has no plain text, in order of preference.
pub const RICH_MIMES: [&str; 4] = ["text/html", "text/rtf", "application/rtf", "text/uri-list"];

/// A rich source read for a listing is cut to this many UTF-16 units per unit of the preview:
/// enough HTML for the 80 characters a preview shows, whatever markup comes first.
pub const RICH_UNITS_PER_PREVIEW: usize = 64;

/// The most UTF-16 units of a preview that count toward its rich source's cut: a listing of a tab
/// the gateway masks cuts texts longer than a preview needs (`mcp/read/tabs.rs`, so that a masked
/// key comes whole), while the 80 characters shown of an HTML source need no more of it.
/// It is the units of an unmasked preview, `mcp::format::PREVIEW_UNITS` (80 characters of up to
/// 4 units; a test there keeps the two equal): the backend does not depend on `clipboard`.
pub const RICH_PREVIEW_MOST: usize = 320;

/// How many UTF-16 units of a `mime` source a listing of `preview` units reads: RTF whole, as its
/// text comes after a header of fonts, colours, styles and lists (2.5 KB from LibreOffice for a
/// line of plain text, 11 KB for a converted Word document) and after any picture that precedes it
/// (53 KB for a 1.6 KB logo), so no cut is sure to reach it.
pub fn rich_units(mime: &str, preview: usize) -> Option<usize> {
    (!mime.ends_with("/rtf")).then(|| {
        preview
            .min(RICH_PREVIEW_MOST)
            .saturating_mul(RICH_UNITS_PER_PREVIEW)
    })
}

/// Bytes of an image a listing reads to learn its pixel size: enough for the header of PNG, GIF,
/// WebP and BMP, and for the frame header of most JPEGs (one whose EXIF block pushes it further
/// shows no pixel size in listings). Listings never fetch more of an image than this.
pub const HEAD_BYTES: usize = 8192;

/// One format of an item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Format {
    pub mime: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// Width and height, for an image whose header tells them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pixels: Option<(u32, u32)>,
}

/// The source of a text derived for an item with no plain text (HTML, a file list).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rich {
    pub mime: String,
    pub source: String,
}

/// The item's formats other than text, tags and note, in [`CONTENT_MIMES`] order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Content {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub formats: Vec<Format>,
    /// For an item without plain text: the format its text is derived from (the read path derives
    /// it, then sets [`Content::derived`] and drops the source).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rich: Option<Rich>,
    /// The format the item's shown text was derived from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub derived: Option<String>,
}

impl Content {
    pub fn is_empty(&self) -> bool {
        self.formats.is_empty() && self.rich.is_none() && self.derived.is_none()
    }

    /// The first image format, the one `item` sends to the model.
    pub fn image(&self) -> Option<&Format> {
        self.formats.iter().find(|f| f.mime.starts_with("image/"))
    }

    /// Put formats in the order of [`CONTENT_MIMES`], whatever order CopyQ gave them in.
    pub fn sort(&mut self) {
        let rank = |f: &Format| CONTENT_MIMES.iter().position(|m| *m == f.mime);
        self.formats.sort_by_key(rank);
    }
}

/// The constants as the CLI script reads them (`CONTENT.MIMES`, ...).
pub fn for_script() -> serde_json::Value {
    serde_json::json!({
        "MIMES": CONTENT_MIMES,
        "RICH": RICH_MIMES,
        "RICH_UNITS_PER_PREVIEW": RICH_UNITS_PER_PREVIEW,
        "RICH_PREVIEW_MOST": RICH_PREVIEW_MOST,
        "HEAD_BYTES": HEAD_BYTES,
    })
}

/// Width and height of an image from its first [`HEAD_BYTES`] (`head` may be longer; the rest is
/// not looked at, so both backends agree whatever they hold).
pub fn pixels_of(mime: &str, head: &[u8]) -> Option<(u32, u32)> {
    if !mime.starts_with("image/") || mime == "image/svg+xml" {
        return None;
    }
    let head = &head[..head.len().min(HEAD_BYTES)];
    let size = imagesize::blob_size(head).ok()?;
    Some((
        u32::try_from(size.width).ok()?,
        u32::try_from(size.height).ok()?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A masked tab's listing cuts texts at 4,096 units; its HTML is cut as a preview's would be,
    /// so the text derived from it (and the preview shown) is the same as in any listing.
    #[test]
    fn a_longer_cut_reads_no_more_of_a_rich_source() {
        assert_eq!(rich_units("text/html", 320), Some(320 * 64));
        assert_eq!(rich_units("text/html", 4_096), Some(320 * 64));
        assert_eq!(rich_units("text/uri-list", 3), Some(3 * 64));
        assert_eq!(rich_units("text/rtf", 4_096), None);
    }

    #[test]
    fn pixels_from_a_real_png_header() {
        // Shipped by Debian's desktop-base; the machines that run the suites have it.
        let png = std::fs::read("/usr/share/pixmaps/debian-logo.png").expect("debian-logo.png");
        assert_eq!(pixels_of("image/png", &png), Some((48, 48)));
        assert_eq!(pixels_of("text/html", &png), None);
        assert_eq!(pixels_of("image/png", b"not an image"), None);
    }

    #[test]
    fn formats_sort_in_reply_order() {
        let f = |m: &str| Format {
            mime: m.into(),
            bytes: 1,
            pixels: None,
        };
        let mut c = Content {
            formats: vec![f("text/uri-list"), f("text/html"), f("image/png")],
            ..Content::default()
        };
        c.sort();
        let order: Vec<_> = c.formats.iter().map(|f| f.mime.as_str()).collect();
        assert_eq!(order, ["image/png", "text/html", "text/uri-list"]);
    }
}
