//! The rows whose previews a mask made unsure (see `cut.rs`) read again whole: those rows only,
//! in one read, then masked and put in their pages. A row read again must be the item the first
//! read cut: another client may have added or removed items in between, shifting the rows. When
//! one is not (or the tab's length changed), its page is read again whole instead, as before
//! there were row reads: one consistent page, masked, then cut.

use super::redact::{Masked, mask_pages};
use crate::backend::{Item, ReadRequest, RowsPage, TabPage, TabRows, TabSelector};
use crate::mcp::ToolState;
use crate::mcp::error::ToolError;

/// `pages`, read with `request`, with every unsure row replaced by its whole item, masked.
pub(super) async fn settle(
    tools: &ToolState,
    pages: &mut Vec<Masked>,
    request: &ReadRequest,
    versions: bool,
) -> Result<(), ToolError> {
    let wanted: Vec<TabRows> = pages
        .iter()
        .filter(|m| !m.unsure.is_empty())
        .map(|m| TabRows {
            name: m.page.name.clone(),
            rows: m.unsure.iter().map(|(i, _)| request.skip + i).collect(),
        })
        .collect();
    if wanted.is_empty() {
        return Ok(());
    }
    let fresh = tools.backend.read_rows(&wanted).await?;
    let mut again = Vec::new();
    for m in pages.iter_mut().filter(|m| !m.unsure.is_empty()) {
        let rows = fresh.iter().find(|p| p.name == m.page.name);
        match rows.and_then(|p| same_rows(m, p)) {
            Some(items) => put(tools, m, items, versions),
            None => again.push(m.page.name.clone()),
        }
    }
    if again.is_empty() {
        return Ok(());
    }
    tracing::debug!(
        tabs = again.len(),
        "rows shifted between reads; reading pages whole"
    );
    let whole = ReadRequest {
        tabs: TabSelector::Names {
            names: again.clone(),
        },
        preview: None,
        ..request.clone()
    };
    let fresh = tools.backend.read(&whole).await?.pages;
    pages.retain(|m| !again.contains(&m.page.name));
    pages.extend(mask_pages(tools, fresh, None, versions));
    Ok(())
}

/// The whole items `fresh` holds for `m`'s unsure rows, if the tab's length is unchanged and each
/// is the item the first read cut.
fn same_rows(m: &Masked, fresh: &RowsPage) -> Option<Vec<Item>> {
    if fresh.total != m.page.total || fresh.items.len() != m.unsure.len() {
        return None;
    }
    m.unsure
        .iter()
        .zip(&fresh.items)
        .map(|((_, cut), whole)| whole.clone().filter(|w| same_item(cut, w)))
        .collect()
}

/// Whether `whole` is the item `cut` was read from: its text, note and rich source start with
/// those cut, and the rest agrees.
fn same_item(cut: &Item, whole: &Item) -> bool {
    let rich = match (&cut.content.rich, &whole.content.rich) {
        (None, None) => true,
        (Some(c), Some(w)) => c.mime == w.mime && w.source.starts_with(&c.source),
        _ => false,
    };
    rich && whole.text.starts_with(&cut.text)
        && whole.note.starts_with(&cut.note)
        && whole.tags == cut.tags
        && whole.secret == cut.secret
        && whole.content.formats == cut.content.formats
}

/// `items`, the whole unsure rows of `m` in order, masked and put in its page.
fn put(tools: &ToolState, m: &mut Masked, items: Vec<Item>, versions: bool) {
    let page = TabPage {
        name: m.page.name.clone(),
        total: m.page.total,
        items,
    };
    let rows = std::mem::take(&mut m.unsure);
    for fixed in mask_pages(tools, vec![page], None, versions) {
        for (k, ((i, _), it)) in rows.iter().zip(fixed.page.items).enumerate() {
            m.page.items[*i] = it;
            if let (Some(v), Some(slot)) = (fixed.versions.get(k), m.versions.get_mut(*i)) {
                slot.clone_from(v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::backend::{Backend, Item, MemoryBackend};
    use crate::mcp::ToolState;
    use crate::privacy::{Privacy, Redact};

    /// A private key block of `body` characters inside, then an AWS key.
    fn key_block(body: usize, n: usize) -> String {
        let body: String = "MIIEpAIBAAKCAQEAx4Gd".chars().cycle().take(body).collect();
        format!(
            "-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY----- key AKIAQYLPMN5HTIQR7WDG and more {n}"
        )
    }

    /// A private key block, then an AWS key that the cut of a masked tab's listing (4,096 UTF-16
    /// units) splits: its preview needs the whole text.
    fn keyed(n: usize) -> String {
        key_block(4_019, n)
    }

    fn items(texts: &[&str]) -> Vec<Item> {
        texts.iter().map(|t| Item::new(t, &[], "")).collect()
    }

    fn tools(texts: &[&str]) -> (ToolState, MemoryBackend) {
        let mem = MemoryBackend::with_tabs(vec![("mcp/t".into(), items(texts))]);
        let tools = ToolState::new(
            Backend::Memory(mem.clone()),
            crate::clipboard::Roots::default(),
        )
        .with_privacy(Privacy::new(Redact::All, &[]).expect("rules"));
        (tools, mem)
    }

    async fn list(tools: &ToolState, skip: usize) -> String {
        let args = json!({"mode": "list", "tab": "t", "skip": skip});
        let map = args.as_object().cloned().unwrap_or_default();
        match crate::mcp::read::call(tools, &crate::clipboard::Coverage::All, &map).await {
            Ok(reply) => reply.text,
            Err(e) => e.line(),
        }
    }

    fn shown(n: usize) -> String {
        format!("\"[redacted:private-key] key [redacted:aws-access-token] and more {n}\"|[]")
    }

    /// Of a page of four, the two rows whose previews a mask made unsure are read again, and
    /// only they: by their row in the tab (past `skip`), in one read.
    #[tokio::test]
    async fn only_the_rows_a_mask_made_unsure_are_read_again() {
        let (k1, k2) = (keyed(1), keyed(2));
        let (tools, mem) = tools(&["zero", "one", &k1, "three", &k2]);
        assert!(k1.encode_utf16().count() > 4_106 && k1[..4_106].contains("AKIAQ"));
        assert!(!k1[..4_096].contains("AKIAQYLPMN5HTIQR7WDG"));
        assert_eq!(
            list(&tools, 1).await,
            format!(
                "mode:list|tab:t|full_path:mcp/t|total:5|showing:1-4\n1|\"one\"|[]\n2|{}\n3|\"three\"|[]\n4|{}",
                shown(1),
                shown(2)
            )
        );
        let reads = mem.reads();
        assert_eq!(reads.len(), 2, "{reads:?}");
        assert_eq!(reads[1], "rows [TabRows { name: \"mcp/t\", rows: [2, 4] }]");
    }

    /// A key block a preview's cut (320 UTF-16 units) would split comes whole in the first read
    /// of a masked tab's listing, which cuts texts at 4,096: its preview is sure, and the tab is
    /// read once.
    #[tokio::test]
    async fn a_key_block_shorter_than_the_masked_cut_is_read_once() {
        let (k1, k2) = (key_block(243, 1), key_block(3_000, 2));
        let (tools, mem) = tools(&["zero", &k1, &k2]);
        assert!(k1.encode_utf16().count() > 320 && !k1[..320].contains("AKIAQYLPMN5HTIQR7WDG"));
        assert_eq!(
            list(&tools, 0).await,
            format!(
                "mode:list|tab:t|full_path:mcp/t|total:3|showing:0-2\n0|\"zero\"|[]\n1|{}\n2|{}",
                shown(1),
                shown(2)
            )
        );
        let reads = mem.reads();
        assert_eq!(
            reads,
            [
                "read ReadRequest { tabs: Names { names: [\"mcp/t\"] }, skip: 0, limit: Some(20), preview: Some(4096) }"
            ]
        );
    }

    /// As [`a_key_block_shorter_than_the_masked_cut_is_read_once`], for a tree: it cuts texts at
    /// 4,096 too when the mode masks a tab of its scope.
    #[tokio::test]
    async fn a_tree_of_masked_tabs_reads_a_short_key_block_once() {
        let (k1, k2) = (key_block(243, 1), key_block(3_000, 2));
        let (tools, mem) = tools(&["zero", &k1, &k2]);
        let args = json!({"mode": "tree"});
        let map = args.as_object().cloned().unwrap_or_default();
        let tree = crate::mcp::read::call(&tools, &crate::clipboard::Coverage::All, &map)
            .await
            .map_or_else(|e| e.line(), |r| r.text);
        assert_eq!(
            tree,
            format!("t [3]\n0:|\"zero\"|[]\n1:|{}\n2:|{}", shown(1), shown(2))
        );
        let reads = mem.reads();
        assert_eq!(
            reads,
            [
                "read ReadRequest { tabs: Prefix { prefix: \"mcp/\", invert: false }, skip: 0, limit: Some(20), preview: Some(4096) }"
            ]
        );
    }

    /// When the tab changed between the two reads (an item added, or one moved up a row at the same
    /// length), the rows read again are not the items cut: the page is read again whole, and
    /// the reply is that page's, masked.
    #[tokio::test]
    async fn a_tab_changed_between_the_reads_is_read_again_whole() {
        let (k1, k2) = (keyed(1), keyed(2));
        let before = ["zero", "one", &k1, "three", &k2];
        let added = ["new", "zero", "one", &k1, "three", &k2];
        let swapped = ["zero", &k1, "one", "three", &k2];
        let whole = "read ReadRequest { tabs: Names { names: [\"mcp/t\"] }, skip: 0, limit: Some(20), preview: None }";
        for (now, reply) in [
            (
                &added[..],
                format!(
                    "mode:list|tab:t|full_path:mcp/t|total:6|showing:0-5\n0|\"new\"|[]\n1|\"zero\"|[]\n2|\"one\"|[]\n3|{}\n4|\"three\"|[]\n5|{}",
                    shown(1),
                    shown(2)
                ),
            ),
            (
                &swapped[..],
                format!(
                    "mode:list|tab:t|full_path:mcp/t|total:5|showing:0-4\n0|\"zero\"|[]\n1|{}\n2|\"one\"|[]\n3|\"three\"|[]\n4|{}",
                    shown(1),
                    shown(2)
                ),
            ),
        ] {
            let (tools, mem) = tools(&before);
            mem.set_after_next_read("mcp/t", items(now));
            assert_eq!(list(&tools, 0).await, reply);
            let reads = mem.reads();
            assert_eq!(reads.len(), 3, "{reads:?}");
            assert_eq!(reads[2], whole);
        }
    }
}
