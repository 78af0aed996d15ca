//! Tab paths and scopes. Managed tabs live under `mcp/` and are addressed relative to it
//! (`workspace/p1` is the CopyQ tab `mcp/workspace/p1`); every other tab is external and is
//! addressed by its exact CopyQ name. Only managed tabs under a configured root are writable.

use thiserror::Error;

/// The CopyQ name prefix of every managed tab.
pub const MCP_PREFIX: &str = "mcp/";
/// Longest tab argument accepted, in characters.
pub const MAX_TAB_CHARS: usize = 1024;

/// Which tabs a read looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Managed tabs only (`mcp/*`), the default.
    Mcp,
    /// Every CopyQ tab.
    All,
    /// Every tab outside `mcp/`.
    External,
}

impl Scope {
    /// Every scope, in the order the tools' schemas list them: the one list both the schemas and
    /// [`Self::parse`] are made from.
    pub const ALL: [Self; 3] = [Self::Mcp, Self::All, Self::External];

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|scope| scope.as_str() == s)
    }

    /// The names of [`Self::ALL`].
    pub fn names() -> [&'static str; 3] {
        Self::ALL.map(Self::as_str)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Mcp => "mcp",
            Self::All => "all",
            Self::External => "external",
        }
    }

    /// Whether the CopyQ tab `full` belongs to this scope (the property tests' oracle).
    #[cfg(test)]
    pub fn includes(self, full: &str) -> bool {
        match self {
            Self::Mcp => is_mcp_tab(full),
            Self::All => true,
            Self::External => !is_mcp_tab(full),
        }
    }
}

/// A tab argument that was malformed; the message is shown to the client.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PathError {
    /// `INVALID_PARAM`.
    #[error("{0}")]
    Invalid(String),
    /// `PERMISSION_DENIED`: a well-formed path outside the writable area.
    #[error("{0}")]
    NotWritable(String),
}

/// A resolved tab: its CopyQ name, the name shown to clients, and whether it is external.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TabRef {
    pub full: String,
    pub shown: String,
    pub external: bool,
}

impl TabRef {
    pub fn from_full(full: &str) -> Self {
        let (shown, external) = display_name(full);
        Self {
            full: full.to_owned(),
            shown: shown.to_owned(),
            external,
        }
    }
}

pub fn is_mcp_tab(full: &str) -> bool {
    full.starts_with(MCP_PREFIX)
}

/// The name a client sees for the CopyQ tab `full`, and whether it is external.
pub fn display_name(full: &str) -> (&str, bool) {
    match full.strip_prefix(MCP_PREFIX) {
        Some(rel) => (rel, false),
        None => (full, true),
    }
}

/// How `mcp_read` addresses the CopyQ tab `full`: the name it shows and the scope that finds it
/// (a managed tab by its path under `mcp/`, scope `mcp`; any other by its name, scope `external`).
pub fn read_address(full: &str) -> (&str, Scope) {
    match display_name(full) {
        (name, false) => (name, Scope::Mcp),
        (name, true) => (name, Scope::External),
    }
}

/// Depth of a tab as `max_depth` counts it: the segments of its shown name.
pub fn tab_depth(full: &str) -> usize {
    display_name(full).0.split('/').count()
}

/// The managed roots (`info`, `заметки`, `workspace` by default) and which of them may hold sub-tabs.
#[derive(Debug, Clone)]
pub struct Roots {
    roots: Vec<String>,
    nested: Vec<String>,
}

impl Default for Roots {
    fn default() -> Self {
        Self::new(
            vec!["info".into(), "заметки".into(), "workspace".into()],
            vec!["workspace".into()],
        )
    }
}

impl Roots {
    pub fn new(roots: Vec<String>, nested: Vec<String>) -> Self {
        Self { roots, nested }
    }

    #[cfg(test)]
    pub fn names(&self) -> &[String] {
        &self.roots
    }

    /// The CopyQ tabs a read of `input` in `scope` may mean, most preferred first. An empty list
    /// means nothing can match (the caller answers `TAB_NOT_FOUND`).
    pub fn read_candidates(&self, input: &str, scope: Scope) -> Result<Vec<TabRef>, PathError> {
        check_name(input)?;
        let managed =
            || relative(input).map(|rel| TabRef::from_full(&format!("{MCP_PREFIX}{rel}")));
        match scope {
            Scope::Mcp => Ok(vec![managed()?]),
            Scope::External if is_mcp_tab(input) => Err(PathError::Invalid(format!(
                "Tab '{input}' is a managed tab, not an external one: use scope 'mcp' or 'all'"
            ))),
            Scope::External => Ok(vec![TabRef::from_full(input)]),
            Scope::All => {
                let mut out = Vec::new();
                if let Ok(tab) = managed() {
                    out.push(tab);
                }
                if !is_mcp_tab(input) {
                    out.push(TabRef::from_full(input));
                }
                Ok(out)
            }
        }
    }

    /// A managed tab that writes may touch: under a configured root, with sub-tabs only under a
    /// nested root.
    pub fn writable(&self, input: &str, operation: &str) -> Result<TabRef, PathError> {
        check_name(input)?;
        let rel = relative(input)?;
        let mut segments = rel.split('/');
        let root = segments.next().unwrap_or_default();
        let deeper = segments.next().is_some();
        let allowed = self.roots.iter().any(|r| r == root)
            && (!deeper || self.nested.iter().any(|r| r == root));
        if !allowed {
            return Err(PathError::NotWritable(format!(
                "Operation '{operation}' not allowed on '{input}'"
            )));
        }
        Ok(TabRef::from_full(&format!("{MCP_PREFIX}{rel}")))
    }

    /// A path that `tab_create` / `tab_delete` may touch: strictly below a nested root.
    pub fn sub_tab(&self, input: &str, operation: &str) -> Result<TabRef, PathError> {
        let tab = self.writable(input, operation)?;
        if !tab.shown.contains('/') {
            return Err(PathError::NotWritable(format!(
                "Operation '{operation}' not allowed on '{input}'"
            )));
        }
        Ok(tab)
    }
}

pub(super) fn check_name(input: &str) -> Result<(), PathError> {
    if input.is_empty() {
        return Err(PathError::Invalid("Tab path must not be empty".into()));
    }
    if input.chars().count() > MAX_TAB_CHARS {
        return Err(PathError::Invalid(format!(
            "Tab path longer than {MAX_TAB_CHARS} characters"
        )));
    }
    if input.chars().any(char::is_control) {
        return Err(PathError::Invalid(
            "Tab path must not contain control characters".into(),
        ));
    }
    Ok(())
}

/// A managed path relative to `mcp/`; an explicit `mcp/` prefix is accepted and dropped. Names an
/// agent gives tabs must show what they are: characters that hide or reorder text are refused
/// (`mcp/workspace/\u{202E}abc` would display as another name).
pub(super) fn relative(input: &str) -> Result<&str, PathError> {
    if let Some(c) = crate::text::deceptive_char(input) {
        return Err(PathError::Invalid(format!(
            "Invalid tab path: it holds an invisible or direction-changing character ({})",
            crate::text::code_point(c)
        )));
    }
    let rel = input.strip_prefix(MCP_PREFIX).unwrap_or(input);
    let bad = rel
        .split('/')
        .any(|seg| seg.is_empty() || seg == "." || seg == ".." || seg.trim() != seg);
    if bad {
        return Err(PathError::Invalid(format!(
            "Invalid tab path '{input}': segments must be non-empty, without '.', '..' or surrounding spaces"
        )));
    }
    Ok(rel)
}

#[cfg(test)]
mod deceptive_names {
    use super::*;

    #[test]
    fn managed_paths_with_hiding_characters_are_invalid() {
        let roots = Roots::new(
            vec!["info".into(), "workspace".into()],
            vec!["workspace".into()],
        );
        for (input, c) in [
            ("workspace/\u{202E}abc", "U+202E"),
            ("workspace/a\u{200B}b", "U+200B"),
            ("mcp/workspace/x\u{2066}", "U+2066"),
            ("info\u{FEFF}", "U+FEFF"),
        ] {
            assert_eq!(
                roots.writable(input, "add"),
                Err(PathError::Invalid(format!(
                    "Invalid tab path: it holds an invisible or direction-changing character ({c})"
                ))),
                "{input:?}"
            );
        }
        assert!(roots.writable("workspace/проект 🎉", "add").is_ok());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fulls(v: Vec<TabRef>) -> Vec<String> {
        v.into_iter().map(|t| t.full).collect()
    }

    #[test]
    fn managed_paths_map_under_mcp() {
        let r = Roots::default();
        let c = r.read_candidates("workspace/p1", Scope::Mcp).unwrap();
        assert_eq!(c[0].full, "mcp/workspace/p1");
        assert_eq!(c[0].shown, "workspace/p1");
        assert!(!c[0].external);
        assert_eq!(
            fulls(r.read_candidates("mcp/info", Scope::Mcp).unwrap()),
            ["mcp/info"]
        );
    }

    #[test]
    fn external_names_are_exact() {
        let r = Roots::default();
        let c = r.read_candidates("&буфер обмена", Scope::External).unwrap();
        assert_eq!(c, vec![TabRef::from_full("&буфер обмена")]);
        assert!(c[0].external);
        assert_eq!(
            r.read_candidates("mcp/info", Scope::External),
            Err(PathError::Invalid(
                "Tab 'mcp/info' is a managed tab, not an external one: use scope 'mcp' or 'all'"
                    .into()
            ))
        );
    }

    #[test]
    fn scope_all_prefers_managed() {
        let r = Roots::default();
        assert_eq!(
            fulls(r.read_candidates("info", Scope::All).unwrap()),
            ["mcp/info", "info"]
        );
        assert_eq!(fulls(r.read_candidates("/x", Scope::All).unwrap()), ["/x"]);
    }

    #[test]
    fn malformed_paths_are_invalid() {
        let r = Roots::default();
        for bad in [
            "",
            "info//x",
            "/info",
            "info/",
            "info/../x",
            "a\nb",
            " info",
            "a\0b",
        ] {
            assert!(
                matches!(
                    r.read_candidates(bad, Scope::Mcp),
                    Err(PathError::Invalid(_))
                ),
                "{bad:?}"
            );
        }
        let long = "x".repeat(MAX_TAB_CHARS + 1);
        assert_eq!(
            r.read_candidates(&long, Scope::Mcp),
            Err(PathError::Invalid(format!(
                "Tab path longer than {MAX_TAB_CHARS} characters"
            )))
        );
    }

    #[test]
    fn writes_only_under_roots() {
        let r = Roots::default();
        assert_eq!(r.writable("info", "add").unwrap().full, "mcp/info");
        assert_eq!(
            r.writable("workspace/a/b", "add").unwrap().full,
            "mcp/workspace/a/b"
        );
        assert_eq!(
            r.writable("info/sub", "tab_create"),
            Err(PathError::NotWritable(
                "Operation 'tab_create' not allowed on 'info/sub'".into()
            ))
        );
        assert!(matches!(
            r.writable("архив", "add"),
            Err(PathError::NotWritable(_))
        ));
        assert_eq!(
            r.sub_tab("workspace", "tab_delete"),
            Err(PathError::NotWritable(
                "Operation 'tab_delete' not allowed on 'workspace'".into()
            ))
        );
        assert_eq!(
            r.sub_tab("workspace/p", "tab_delete").map(|t| t.full),
            Ok("mcp/workspace/p".to_owned())
        );
    }

    #[test]
    fn scopes_and_depths() {
        assert!(Scope::Mcp.includes("mcp/info") && !Scope::Mcp.includes("архив"));
        assert!(Scope::External.includes("mcp") && !Scope::External.includes("mcp/x"));
        assert_eq!(tab_depth("mcp/workspace/p1"), 2);
        assert_eq!(tab_depth("a/b/c"), 3);
    }

    // Property tests: hostile tab arguments never escape the roots, and never panic.

    use proptest::prelude::*;

    /// Root names, look-alikes of them and of the separator, invisible and control characters.
    const TRICKY: &[&str] = &[
        "",
        ".",
        "..",
        "...",
        "mcp",
        "MCP",
        "info",
        "заметки",
        "workspace",
        "Info",
        "WORKSPACE",
        "\u{456}nfo",                            // Cyrillic і
        "inf\u{43e}",                            // Cyrillic о
        "w\u{43e}rkspace",                       // Cyrillic о
        "\u{437}a\u{43c}e\u{442}\u{43a}\u{438}", // заметки with Latin a and e
        "\u{ff49}\u{ff4e}\u{ff46}\u{ff4f}",      // full-width ｉｎｆｏ
        "info\u{200d}",
        "\u{200b}info",
        "info\u{feff}",
        "\u{200f}info",
        "info\u{202e}",
        "workspace\u{ff0f}x",
        "..\u{ff0f}info",
        "\u{ff0e}\u{ff0e}",
        "info\u{2215}x",
        "..\\info",
        " info",
        "info ",
        "info\u{a0}",
        "\u{3000}info",
        "a\u{0}b",
        "\n",
        "\r",
        "\t",
        "\u{7f}",
        "\u{85}",
        "\u{9b}",
        "\u{2028}",
        "%2e%2e",
        "x y",
        "p1",
        "\u{200d}",
        "..\u{200b}",
        "a\u{2028}b",
        "&x",
    ];

    fn chars(max: usize) -> impl Strategy<Value = String> {
        prop::collection::vec(any::<char>(), 0..max).prop_map(String::from_iter)
    }

    fn segment() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => prop::sample::select(TRICKY).prop_map(str::to_owned),
            1 => chars(6),
            1 => "[a-z0-9]{1,6}",
        ]
    }

    /// Paths assembled from tricky segments, separators, prefixes and suffixes; most start with a
    /// real root, so that the accepting side of every rule is exercised too.
    fn hostile_path() -> impl Strategy<Value = String> {
        let pick = |options: &'static [&'static str]| prop::sample::select(options);
        let prefix = pick(&["", "", "", "mcp/", "mcp/", "/", "mcp", "mcp//", "./"]);
        let first = prop_oneof![
            3 => pick(&["info", "заметки", "workspace", "workspace"]).prop_map(str::to_owned),
            2 => segment(),
        ];
        let sep = pick(&[
            "/", "/", "/", "/", "/", "//", "\u{ff0f}", "\\", "/./", "/../",
        ]);
        let suffix = pick(&["", "", "", "", "", "/", "/.", "\u{0}"]);
        let rest = prop::collection::vec((sep, segment()), 0..5);
        (prefix, first, rest, suffix).prop_map(|(prefix, first, rest, suffix)| {
            let mut s = format!("{prefix}{first}");
            for (sep, seg) in rest {
                s.push_str(sep);
                s.push_str(&seg);
            }
            s + suffix
        })
    }

    /// The security invariants of a tab that `writable` accepted for `input`.
    fn check_writable(r: &Roots, input: &str, tab: &TabRef) -> Result<(), TestCaseError> {
        let rel = tab.full.strip_prefix(MCP_PREFIX);
        prop_assert!(rel.is_some(), "{:?} -> {:?}", input, tab);
        let rel = rel.unwrap_or_default();
        prop_assert_eq!(&tab.shown, rel);
        prop_assert!(!tab.external);
        let segments: Vec<&str> = rel.split('/').collect();
        prop_assert!(r.roots.iter().any(|root| root == segments[0]), "{:?}", tab);
        prop_assert!(
            segments.len() == 1 || r.nested.iter().any(|root| root == segments[0]),
            "sub-tab of a flat root: {:?}",
            tab
        );
        for s in &segments {
            prop_assert!(!s.is_empty() && *s != "." && *s != "..", "{:?}", tab);
            prop_assert_eq!(s.trim(), *s);
        }
        prop_assert!(!tab.full.chars().any(char::is_control), "{:?}", tab);
        prop_assert!(rel.chars().count() <= MAX_TAB_CHARS);
        // Nothing is rewritten: the tab is the input itself, with or without its `mcp/` prefix.
        prop_assert!(input == rel || input.strip_prefix(MCP_PREFIX) == Some(rel));
        // Feeding the result back gives the same tab.
        prop_assert_eq!(r.writable(&tab.shown, "add"), Ok(tab.clone()));
        prop_assert_eq!(r.writable(&tab.full, "add"), Ok(tab.clone()));
        Ok(())
    }

    /// Every function under test, on one input: no panic, and every answer within its rules.
    fn check_all(r: &Roots, input: &str) -> Result<(), TestCaseError> {
        for scope in [Scope::Mcp, Scope::All, Scope::External] {
            let Ok(candidates) = r.read_candidates(input, scope) else {
                continue;
            };
            prop_assert!(!input.is_empty() && !input.chars().any(char::is_control));
            prop_assert!(candidates.len() <= 2);
            for c in &candidates {
                prop_assert!(scope.includes(&c.full), "{:?} in {:?}", c, scope);
                prop_assert_eq!(c.external, !is_mcp_tab(&c.full));
                prop_assert!(!c.full.chars().any(char::is_control));
                if c.external {
                    prop_assert_eq!(&c.full, input, "external names are exact");
                } else {
                    let rel = &c.full[MCP_PREFIX.len()..];
                    prop_assert!(
                        rel.split('/')
                            .all(|s| !s.is_empty() && s != "." && s != ".."),
                        "{:?}",
                        c
                    );
                }
            }
            if scope == Scope::Mcp {
                prop_assert_eq!(candidates.len(), 1);
            }
        }
        match r.writable(input, "add") {
            Ok(tab) => check_writable(r, input, &tab)?,
            Err(PathError::Invalid(m) | PathError::NotWritable(m)) => {
                prop_assert!(!m.is_empty());
            }
        }
        if let Ok(tab) = r.sub_tab(input, "tab_create") {
            check_writable(r, input, &tab)?;
            prop_assert!(tab.shown.contains('/'), "{:?}", tab);
        }
        Ok(())
    }

    /// Look-alikes of `c`: Cyrillic, Greek and full-width letters, the other case.
    fn lookalikes(c: char) -> Vec<char> {
        let mut out: Vec<char> = match c {
            'a' => vec!['\u{430}', '\u{251}', '\u{3b1}'],
            'c' => vec!['\u{441}', '\u{3f2}'],
            'e' => vec!['\u{435}', '\u{3b5}'],
            'i' => vec!['\u{456}', '\u{131}', '\u{3b9}', '\u{ed}'],
            'k' => vec!['\u{43a}', '\u{3ba}'],
            'n' => vec!['\u{578}', '\u{3b7}'],
            'o' => vec!['\u{43e}', '\u{3bf}', '0'],
            'p' => vec!['\u{440}', '\u{3c1}'],
            'r' => vec!['\u{433}'],
            's' => vec!['\u{455}'],
            'w' => vec!['\u{461}', '\u{3c9}'],
            '\u{430}' => vec!['a'],
            '\u{435}' => vec!['e', '\u{451}'],
            '\u{43a}' => vec!['k'],
            '\u{438}' => vec!['u', '\u{439}'],
            '\u{437}' => vec!['3'],
            '\u{442}' => vec!['T'],
            '\u{43c}' => vec!['M'],
            _ => vec![],
        };
        if c.is_ascii_alphabetic() {
            out.extend(char::from_u32(c as u32 + 0xfee0)); // full-width form
        }
        out.extend(c.to_uppercase().filter(|u| *u != c));
        out
    }

    /// Characters that change a name without changing how it looks.
    const INVISIBLE: &[char] = &[
        '\u{200b}', '\u{200c}', '\u{200d}', '\u{200e}', '\u{200f}', '\u{2060}', '\u{feff}',
        '\u{202e}', '\u{ad}', '\u{34f}', '\u{301}', '\u{180e}',
    ];

    /// A root name with one character swapped for a look-alike, or an invisible one inserted.
    fn spoofed_root() -> impl Strategy<Value = (String, String)> {
        let roots = Roots::default().names().to_vec();
        (
            prop::sample::select(roots),
            any::<prop::sample::Index>(),
            any::<prop::sample::Index>(),
            any::<bool>(),
        )
            .prop_filter_map(
                "a character with look-alikes",
                |(root, at, pick, insert)| {
                    let chars: Vec<char> = root.chars().collect();
                    let i = at.index(chars.len());
                    let mut spoof = chars.clone();
                    if insert {
                        spoof.insert(i, *pick.get(INVISIBLE));
                    } else {
                        let options = lookalikes(chars[i]);
                        if options.is_empty() {
                            return None;
                        }
                        spoof[i] = *pick.get(&options);
                    }
                    Some((root, String::from_iter(spoof)))
                },
            )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]

        #[test]
        fn hostile_paths_stay_confined(input in hostile_path()) {
            check_all(&Roots::default(), &input)?;
        }

        #[test]
        fn arbitrary_strings_stay_confined(input in chars(64)) {
            check_all(&Roots::default(), &input)?;
        }

        #[test]
        fn odd_segments_below_a_root_stay_confined(
            root in prop::sample::select(vec!["info", "workspace", "mcp/workspace"]),
            rest in prop::collection::vec(segment(), 1..5),
        ) {
            check_all(&Roots::default(), &format!("{root}/{}", rest.join("/")))?;
        }

        #[test]
        fn configured_roots_confine_too(
            roots in prop::collection::vec("[a-zа-я.]{1,5}", 1..4),
            nested in any::<prop::sample::Index>(),
            input in hostile_path(),
        ) {
            let nested = vec![roots[nested.index(roots.len())].clone()];
            let r = Roots::new(roots.clone(), nested);
            check_all(&r, &input)?;
            for root in roots.iter().filter(|x| *x != "." && *x != "..") {
                check_all(&r, &format!("{root}/{input}"))?;
            }
        }

        #[test]
        fn well_formed_paths_under_roots_are_writable(
            root in prop::sample::select(vec!["info", "заметки", "workspace"]),
            rest in prop::collection::vec("[a-zA-Z0-9_\\-а-я]{1,8}( [a-z]{1,3})?", 0..4),
            explicit in any::<bool>(),
        ) {
            let rel = std::iter::once(root.to_owned()).chain(rest.iter().cloned()).collect::<Vec<_>>().join("/");
            let input = if explicit { format!("{MCP_PREFIX}{rel}") } else { rel.clone() };
            let r = Roots::default();
            match r.writable(&input, "add") {
                Ok(tab) => {
                    prop_assert!(rest.is_empty() || root == "workspace");
                    prop_assert_eq!(&tab.full, &format!("{MCP_PREFIX}{rel}"));
                    check_writable(&r, &input, &tab)?;
                }
                Err(e) => {
                    prop_assert!(!rest.is_empty() && root != "workspace", "{:?}: {:?}", input, e);
                    prop_assert_eq!(e, PathError::NotWritable(format!("Operation 'add' not allowed on '{input}'")));
                }
            }
            prop_assert_eq!(r.sub_tab(&input, "tab_create").is_ok(), root == "workspace" && !rest.is_empty());
        }

        #[test]
        fn confusable_roots_are_not_roots((root, spoof) in spoofed_root(), tail in "(/[a-z]{1,4}){0,2}") {
            prop_assume!(spoof != root);
            let r = Roots::default();
            for input in [spoof.clone(), format!("{spoof}{tail}"), format!("{MCP_PREFIX}{spoof}{tail}")] {
                let refused = r.writable(&input, "add");
                prop_assert!(refused.is_err(), "{:?} ({:?}) accepted as {:?}", input, input.escape_unicode().to_string(), refused);
                prop_assert!(r.sub_tab(&input, "tab_delete").is_err());
                // A read of it addresses its own tab, never the root's.
                for c in r.read_candidates(&input, Scope::All).unwrap_or_default() {
                    prop_assert_ne!(&c.full, &format!("{MCP_PREFIX}{root}"));
                    prop_assert_ne!(&c.full, &root);
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        #[test]
        fn huge_names_are_refused(
            unit in prop::sample::select(&["x", "../", "workspace/", "\u{430}", "😀", "\u{200d}"][..]),
            extra in 0usize..4096,
        ) {
            let input = format!("workspace/{}", unit.repeat((100 * 1024 + extra) / unit.len()));
            prop_assert!(input.len() > 100 * 1024);
            let r = Roots::default();
            let invalid = |res: Result<TabRef, PathError>| matches!(res, Err(PathError::Invalid(_)));
            prop_assert!(invalid(r.writable(&input, "add")));
            prop_assert!(invalid(r.sub_tab(&input, "tab_create")));
            for scope in [Scope::Mcp, Scope::All, Scope::External] {
                prop_assert!(matches!(r.read_candidates(&input, scope), Err(PathError::Invalid(_))));
            }
        }
    }

    #[test]
    fn named_path_tricks_are_refused() {
        let r = Roots::default();
        for input in [
            "../info",
            "workspace/../../x",
            "mcp/../архив",
            "workspace/a\u{0}b",
            "\u{456}nfo",
            "w\u{43e}rkspace/p",
            "workspace\u{ff0f}p",
            "workspace\u{200d}/p",
            "\u{200f}info",
            "mcp/mcp/info",
            "MCP/info",
            "Info",
            "архив",
            "mcp",
            "mcp/",
            "info\u{a0}",
        ] {
            assert!(r.writable(input, "add").is_err(), "{input:?}");
            assert!(r.sub_tab(input, "tab_create").is_err(), "{input:?}");
        }
    }
}
