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
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "mcp" => Some(Self::Mcp),
            "all" => Some(Self::All),
            "external" => Some(Self::External),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Mcp => "mcp",
            Self::All => "all",
            Self::External => "external",
        }
    }

    /// Whether the CopyQ tab `full` belongs to this scope.
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

/// Depth of a tab as `max_depth` counts it: the segments of its shown name.
pub fn tab_depth(full: &str) -> usize {
    display_name(full).0.split('/').count()
}

/// Depth of a managed relative path.
pub fn mcp_depth(rel: &str) -> usize {
    rel.split('/').count()
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

fn check_name(input: &str) -> Result<(), PathError> {
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

/// A managed path relative to `mcp/`; an explicit `mcp/` prefix is accepted and dropped.
fn relative(input: &str) -> Result<&str, PathError> {
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
        assert!(r.read_candidates("mcp/info", Scope::External).is_err());
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
        assert!(r.read_candidates(&long, Scope::Mcp).is_err());
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
        assert!(r.sub_tab("workspace", "tab_delete").is_err());
        assert!(r.sub_tab("workspace/p", "tab_delete").is_ok());
    }

    #[test]
    fn scopes_and_depths() {
        assert!(Scope::Mcp.includes("mcp/info") && !Scope::Mcp.includes("архив"));
        assert!(Scope::External.includes("mcp") && !Scope::External.includes("mcp/x"));
        assert_eq!(tab_depth("mcp/workspace/p1"), 2);
        assert_eq!(tab_depth("a/b/c"), 3);
        assert_eq!(mcp_depth("info"), 1);
    }
}
