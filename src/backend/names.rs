//! How CopyQ finds a tab by name (`MainWindow::findTabIndex`, the same from 6.4 to 17.0): the exact
//! name first; failing that, and only when the name asked for has no keyboard-accelerator hint
//! itself, the first tab whose name with its hint (the first unescaped `&`) removed is that name.
//! So with no tab `mcp/x`, a write to `mcp/x` goes to an existing `&mcp/x` or `m&cp/x`. (An empty
//! name means the current tab; `&&` is an escaped `&`, not a hint.) Every slot and script function
//! that takes a tab name resolves it this way, except `unloadTabs`, which matches exactly.

/// Byte index of the `&` that makes `name`'s accelerator hint: the first `&` not escaped as `&&`
/// and followed by another character (CopyQ's `indexOfKeyHint`).
fn key_hint(name: &str) -> Option<usize> {
    let mut amp: Option<usize> = None;
    for (i, c) in name.char_indices() {
        match (c, amp) {
            ('&', None) => amp = Some(i),
            ('&', Some(_)) => amp = None,
            (_, Some(at)) => return Some(at),
            (_, None) => {}
        }
    }
    None
}

/// `name` as CopyQ compares it when no tab has the exact name: its hint `&` removed.
fn without_key_hint(name: &str) -> String {
    let mut out = name.to_owned();
    if let Some(at) = key_hint(name) {
        out.remove(at);
    }
    out
}

/// The tab of `tabs` CopyQ uses for `name`, if any.
pub fn resolve<'a>(name: &str, tabs: &'a [String]) -> Option<&'a str> {
    if let Some(exact) = tabs.iter().find(|t| *t == name) {
        return Some(exact);
    }
    if key_hint(name).is_some() {
        return None;
    }
    tabs.iter()
        .find(|t| without_key_hint(t) == name)
        .map(String::as_str)
}

/// The existing tab, of another name, that CopyQ would use for `name` (which does not exist).
pub fn clash<'a>(name: &str, tabs: &'a [String]) -> Option<&'a str> {
    resolve(name, tabs).filter(|t| *t != name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tabs(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn the_first_unescaped_ampersand_is_ignored() {
        let t = tabs(&[
            "&clipboard",
            "&mcp/w/kh2",
            "m&cp/w/a",
            "a&b&&c",
            "&&mcp/w/b",
            "x&",
        ]);
        assert_eq!(resolve("mcp/w/kh2", &t), Some("&mcp/w/kh2"));
        assert_eq!(clash("mcp/w/kh2", &t), Some("&mcp/w/kh2"));
        assert_eq!(resolve("mcp/w/a", &t), Some("m&cp/w/a"));
        assert_eq!(
            resolve("ab&&c", &t),
            Some("a&b&&c"),
            "only the first & is a hint"
        );
        assert_eq!(resolve("ab&c", &t), None, "asked with a hint: exact only");
        assert_eq!(resolve("abc", &t), None);
        assert_eq!(resolve("&mcp/w/b", &t), None, "&& is an escaped &");
        assert_eq!(resolve("mcp/w/b", &t), None);
        assert_eq!(resolve("x", &t), None, "a final & is no hint");
        assert_eq!(resolve("clipboard", &t), Some("&clipboard"));
    }

    #[test]
    fn an_exact_name_wins_and_a_name_with_a_hint_matches_only_exactly() {
        let t = tabs(&["&mcp/a", "mcp/a", "&x"]);
        assert_eq!(resolve("mcp/a", &t), Some("mcp/a"));
        assert_eq!(clash("mcp/a", &t), None);
        assert_eq!(resolve("&&x", &t), None);
        assert_eq!(resolve("m&cp/a", &t), None, "asked with a hint: exact only");
        assert_eq!(clash("mcp/new", &t), None);
    }
}
