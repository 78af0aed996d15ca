//! How clients show the gateway: the server's title and icon in `initialize`, an icon on each
//! tool, each only for protocol versions that define it (titles from 2025-06-18, icons from
//! 2025-11-25). Tool titles themselves are in the catalog and sent as they always were.
//!
//! The icon is CopyQ's own, read once from the CopyQ installed beside the gateway and sent as a
//! `data:` URI. CopyQ's icon is GPL-3.0-or-later, so it is not copied into this MIT project;
//! using the copy the owner installed, to stand for CopyQ, redistributes nothing. No CopyQ icon
//! installed (a container with the socket only): no icon, everything else as usual.

use std::sync::LazyLock;

use base64::Engine;
use rmcp::RoleServer;
use rmcp::model::{Icon, Implementation, ProtocolVersion, Tool};
use rmcp::service::RequestContext;

pub const SERVER_TITLE: &str = "CopyQ clipboard";

/// Where distributions install CopyQ's icon; each size is looked up in these roots in order.
const ROOTS: &[&str] = &["/usr/share/icons/hicolor", "/usr/local/share/icons/hicolor"];

/// A PNG of CopyQ's icon at `size` (e.g. `32x32`), as an [`Icon`].
fn png(size: &str) -> Option<Icon> {
    let bytes = ROOTS
        .iter()
        .find_map(|root| std::fs::read(format!("{root}/{size}/apps/copyq.png")).ok())?;
    let data = base64::engine::general_purpose::STANDARD.encode(bytes);
    Some(
        Icon::new(format!("data:image/png;base64,{data}"))
            .with_mime_type("image/png")
            .with_sizes(vec![size.to_owned()]),
    )
}

/// The small icon for tools; the server also gets a larger one.
static SMALL: LazyLock<Option<Icon>> = LazyLock::new(|| png("32x32"));
static LARGE: LazyLock<Option<Icon>> = LazyLock::new(|| png("64x64"));

fn icons(large: bool) -> Option<Vec<Icon>> {
    let mut all: Vec<Icon> = SMALL.iter().cloned().collect();
    if large {
        all.extend(LARGE.iter().cloned());
    }
    (!all.is_empty()).then_some(all)
}

/// The server's title and icons, as far as `version` defines them.
pub fn server_info(info: &mut Implementation, version: &ProtocolVersion) {
    if *version >= ProtocolVersion::V_2025_06_18 {
        info.title = Some(SERVER_TITLE.into());
    }
    if *version >= ProtocolVersion::V_2025_11_25 {
        info.icons = icons(true);
    }
}

/// Each tool's icon, for a request on 2025-11-25 or later.
pub fn tool_icons(ctx: &RequestContext<RoleServer>, tools: &mut [Tool]) {
    if !super::protocol::at_least(ctx, &ProtocolVersion::V_2025_11_25) {
        return;
    }
    for tool in tools {
        tool.icons = icons(false);
    }
}
