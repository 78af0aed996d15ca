//! What an item holds beside its plain text, as replies show it: the text derived from HTML, RTF
//! or a file list for an item with no plain text, and the `content:` descriptor of its formats.

use html2text::render::TrivialDecorator;

use crate::backend::Item;
use crate::backend::content::{Content, Format, Rich};

/// Lines wider than any clipboard text: the derived text keeps the source's own line breaks.
const NO_WRAP: usize = 1 << 16;

/// Give an item with no plain text the text derived from its HTML, RTF or file list, and say so in
/// its content. Returns whether it did.
pub fn derive_text(it: &mut Item) -> bool {
    let Some(rich) = it.content.rich.take() else {
        return false;
    };
    if !it.text.is_empty() {
        return false;
    }
    it.text = derived(&rich);
    it.content.derived = Some(rich.mime);
    true
}

/// The text of `rich`: an HTML or RTF document's readable text, or a file list's paths and URLs.
pub fn derived(rich: &Rich) -> String {
    match rich.mime.as_str() {
        "text/uri-list" => uri_list(&rich.source),
        "text/rtf" | "application/rtf" => super::rtf::text(&rich.source),
        _ => html_text(&rich.source),
    }
}

/// The text a person reads in `html`, without markup, one line per block; empty when it cannot
/// be read (an HTML fragment that is not text at all).
fn html_text(html: &str) -> String {
    // The trivial decorator adds no markup of its own (no `#` headings, `[link]`, `*` bold).
    let text = html2text::config::with_decorator(TrivialDecorator::new())
        .raw_mode(true)
        .allow_width_overflow()
        .string_from_read(html.as_bytes(), NO_WRAP)
        .unwrap_or_default();
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    lines.join("\n").trim_matches('\n').to_owned()
}

/// RFC 2483 `text/uri-list`: one URI per line (CRLF or LF), `#` lines are comments. A `file:` URI
/// is shown as its local path, percent-decoded; any other URI as it is. Nothing on disk is read.
fn uri_list(list: &str) -> String {
    list.lines()
        .map(|l| l.trim_end_matches('\r').trim())
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| match url::Url::parse(l) {
            Ok(u) if u.scheme() == "file" => u
                .to_file_path()
                .map_or_else(|()| l.to_owned(), |p| p.to_string_lossy().into_owned()),
            _ => l.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The `content:` descriptor: each format as `KIND MIME [WxH] NB`, joined by `, `, then
/// `; text from MIME` when the shown text was derived. `None` for an item of plain text alone,
/// whose replies stay as they were. Made of the gateway's own words (MIME types from a fixed
/// list, numbers), never of the item's text, so it cannot be faked by what an item holds.
pub fn descriptor(content: &Content) -> Option<String> {
    if content.formats.is_empty() && content.derived.is_none() {
        return None;
    }
    let mut parts = vec![
        content
            .formats
            .iter()
            .map(format_words)
            .collect::<Vec<_>>()
            .join(", "),
    ];
    if let Some(from) = &content.derived {
        parts.push(format!("text from {from}"));
    }
    parts.retain(|p| !p.is_empty());
    Some(parts.join("; "))
}

fn format_words(f: &Format) -> String {
    let kind = kind(&f.mime);
    match f.pixels {
        Some((w, h)) => format!("{kind} {} {w}x{h} {}B", f.mime, f.bytes),
        None => format!("{kind} {} {}B", f.mime, f.bytes),
    }
}

/// What a format holds, in one word.
pub fn kind(mime: &str) -> &'static str {
    match mime {
        m if m.starts_with("image/") => "image",
        "text/html" => "html",
        "text/rtf" | "application/rtf" => "rtf",
        "text/uri-list" => "files",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rich(mime: &str, source: &str) -> Rich {
        Rich {
            mime: mime.into(),
            source: source.into(),
        }
    }

    #[test]
    fn chromium_html_reads_as_its_text() {
        // As Chromium puts a selection of a page on the clipboard.
        let html = "<meta charset='utf-8'><h1 style=\"color: rgb(0, 0, 0);\">Release notes</h1>\
                    <p style=\"margin: 0px;\">Fixed <b>two</b> bugs &amp; one <a href=\"https://example.org/x\">leak</a>.</p>";
        assert_eq!(
            derived(&rich("text/html", html)),
            "Release notes\n\nFixed two bugs & one leak."
        );
    }

    #[test]
    #[cfg(unix)]
    fn file_lists_show_paths_and_urls() {
        let list = "file:///home/anna/Documents/Q3%20report.pdf\r\n# comment\r\n\
                    file:///home/anna/%D1%84%D0%BE%D1%82%D0%BE.jpg\r\nhttps://example.org/a%20b\r\n";
        assert_eq!(
            derived(&rich("text/uri-list", list)),
            "/home/anna/Documents/Q3 report.pdf\n/home/anna/фото.jpg\nhttps://example.org/a%20b"
        );
    }

    /// Windows' file URLs name a drive; its paths read with backslashes.
    #[test]
    #[cfg(windows)]
    fn file_lists_show_paths_and_urls() {
        let list = "file:///C:/Users/anna/Documents/Q3%20report.pdf\r\n# comment\r\n\
                    file:///C:/Users/anna/%D1%84%D0%BE%D1%82%D0%BE.jpg\r\nhttps://example.org/a%20b\r\n";
        assert_eq!(
            derived(&rich("text/uri-list", list)),
            "C:\\Users\\anna\\Documents\\Q3 report.pdf\nC:\\Users\\anna\\фото.jpg\nhttps://example.org/a%20b"
        );
    }

    #[test]
    fn rtf_reads_as_its_text() {
        // As LibreOffice Writer copies a selection (cut short here: fonts, colours and styles).
        let rtf = "{\\rtf1\\ansi\\deff3\\adeflang1025{\\fonttbl{\\f3\\froman\\fprq2\\fcharset0 Liberation Serif;}}\
                   {\\colortbl;\\red0\\green0\\blue0;}\\pard\\plain Release {\\b notes}\\par \\pard\\plain \
                   \\u1055\\'3f\\u1088\\'3f\\u1080\\'3f \\u8364\\'80\\par }";
        for mime in ["text/rtf", "application/rtf"] {
            assert_eq!(derived(&rich(mime, rtf)), "Release notes\nПри €");
        }
    }

    #[test]
    fn descriptors() {
        let png = Format {
            mime: "image/png".into(),
            bytes: 1678,
            pixels: Some((48, 48)),
        };
        let html = Format {
            mime: "text/html".into(),
            bytes: 20,
            pixels: None,
        };
        let c = Content {
            formats: vec![png, html],
            rich: None,
            derived: Some("text/html".into()),
        };
        assert_eq!(
            descriptor(&c).as_deref(),
            Some("image image/png 48x48 1678B, html text/html 20B; text from text/html")
        );
        assert_eq!(descriptor(&Content::default()), None);
    }

    #[test]
    fn only_items_without_text_get_a_derived_one() {
        let mut it = Item::new("plain", &[], "");
        it.content.rich = Some(rich("text/html", "<b>bold</b>"));
        assert!(!derive_text(&mut it));
        assert_eq!(it.text, "plain");
        let mut it = Item::new("", &[], "");
        it.content.rich = Some(rich("text/html", "<b>bold</b>"));
        assert!(derive_text(&mut it));
        assert_eq!(
            (it.text.as_str(), it.content.derived.as_deref()),
            ("bold", Some("text/html"))
        );
    }
}
