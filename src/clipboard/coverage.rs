//! Which tabs a grant or token covers: all of them (the default, as before scopes existed), or an
//! explicit list of managed subtrees and external tabs. A tab outside the coverage does not exist
//! for the caller: reads never show it, and writes to it are refused like writes outside the
//! writable roots.
//!
//! Written by the owner as `all`, `managed`, or a list: an entry starting `mcp/` (or `mcp`
//! alone) is a managed subtree (`mcp/workspace/project-x` covers that tab and every tab below it;
//! `mcp` covers every managed tab), any other entry is one external tab by its exact CopyQ name.
//! In a token or a grant it is kept as `{"mcp": [relative subtrees, "" for all], "ext": [names]}`.

use serde::{Deserialize, Serialize};

use super::path::{MCP_PREFIX, check_name, is_mcp_tab, relative};

/// The tabs a grant covers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Coverage {
    /// Every tab: the default, what grants and tokens without a coverage have.
    #[default]
    All,
    /// Only these.
    Only(Tabs),
}

/// An explicit coverage: managed subtrees by their path relative to `mcp/` (`""` is every
/// managed tab) and external tabs by their exact names. Both sorted, without repeats.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tabs {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mcp: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ext: Vec<String>,
}

impl Coverage {
    /// Every managed tab, nothing external.
    pub fn managed() -> Self {
        Self::Only(Tabs {
            mcp: vec![String::new()],
            ext: Vec::new(),
        })
    }

    /// Whether the CopyQ tab `full` is covered.
    pub fn covers(&self, full: &str) -> bool {
        let Self::Only(tabs) = self else {
            return true;
        };
        match full.strip_prefix(MCP_PREFIX) {
            Some(rel) => tabs.mcp.iter().any(|sub| {
                sub.is_empty()
                    || rel == sub
                    || rel
                        .strip_prefix(sub.as_str())
                        .is_some_and(|r| r.starts_with('/'))
            }),
            None => tabs.ext.iter().any(|name| name == full),
        }
    }

    pub fn is_all(&self) -> bool {
        matches!(self, Self::All)
    }

    /// Parse the owner's words: `all`, `managed`, or entries (see the module doc). An empty list
    /// is refused: a grant that covers nothing is a mistake, not a scope.
    pub fn parse<'a>(entries: impl IntoIterator<Item = &'a str>) -> Result<Self, String> {
        let entries: Vec<&str> = entries.into_iter().collect();
        match entries.as_slice() {
            ["all"] => return Ok(Self::All),
            ["managed"] => return Ok(Self::managed()),
            [] => return Err("no tabs given: use 'all', 'managed' or a list of tabs".into()),
            _ => {}
        }
        let mut tabs = Tabs::default();
        for entry in entries {
            if entry == "all" || entry == "managed" {
                return Err(format!("'{entry}' cannot be combined with other tabs"));
            }
            if entry == "mcp" || entry == MCP_PREFIX {
                tabs.mcp.push(String::new());
            } else if is_mcp_tab(entry) {
                check_name(entry).map_err(|e| e.to_string())?;
                tabs.mcp
                    .push(relative(entry).map_err(|e| e.to_string())?.to_owned());
            } else {
                check_name(entry).map_err(|e| format!("tab '{entry}': {e}"))?;
                tabs.ext.push(entry.to_owned());
            }
        }
        Ok(Self::Only(tabs.normalized()))
    }

    /// From the command line: `--tabs` words (split at commas) and `--tab` names taken exactly
    /// (for an external tab whose name holds a comma or is one of the words). Neither: all tabs.
    pub fn from_flags(words: &[String], exact: &[String]) -> Result<Self, String> {
        if words.is_empty() && exact.is_empty() {
            return Ok(Self::All);
        }
        let mut coverage = if words.is_empty() {
            Self::Only(Tabs::default())
        } else {
            Self::parse(words.iter().map(String::as_str))?
        };
        for name in exact {
            check_name(name).map_err(|e| format!("tab '{name}': {e}"))?;
            if is_mcp_tab(name) {
                return Err(format!(
                    "--tab names an external tab; give the managed '{name}' with --tabs"
                ));
            }
            match &mut coverage {
                Self::All => return Err("'all' cannot be combined with other tabs".into()),
                Self::Only(tabs) => tabs.ext.push(name.clone()),
            }
        }
        if let Self::Only(tabs) = coverage {
            return Ok(Self::Only(tabs.normalized()));
        }
        Ok(coverage)
    }

    /// How the owner sees it in lists and on the consent page.
    pub fn describe(&self) -> String {
        let Self::Only(tabs) = self else {
            return "all tabs".into();
        };
        if tabs.mcp == [""] && tabs.ext.is_empty() {
            return "managed tabs (mcp/)".into();
        }
        let managed = tabs.mcp.iter().map(|rel| match rel.as_str() {
            "" => "mcp/ (all managed)".to_owned(),
            rel => format!("{MCP_PREFIX}{rel}"),
        });
        managed
            .chain(tabs.ext.iter().cloned())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// What a token or grant keeps: `None` for all tabs.
    pub fn to_stored(&self) -> Option<String> {
        match self {
            Self::All => None,
            Self::Only(tabs) => serde_json::to_string(tabs).ok(),
        }
    }

    /// The inverse of [`Coverage::to_stored`]. A stored value that does not parse covers
    /// nothing rather than everything.
    pub fn from_stored(stored: Option<&str>) -> Result<Self, String> {
        match stored {
            None => Ok(Self::All),
            Some(s) => serde_json::from_str::<Tabs>(s)
                .map(|t| Self::Only(t.normalized()))
                .map_err(|e| format!("stored tab coverage: {e}")),
        }
    }
}

impl Tabs {
    fn normalized(mut self) -> Self {
        self.mcp.sort();
        self.mcp.dedup();
        // A subtree inside another adds nothing; "" holds them all.
        let all = self.mcp.clone();
        self.mcp.retain(|sub| {
            !all.iter().any(|outer| {
                outer != sub
                    && (outer.is_empty()
                        || sub
                            .strip_prefix(outer.as_str())
                            .is_some_and(|r| r.starts_with('/')))
            })
        });
        self.ext.sort();
        self.ext.dedup();
        self
    }
}

/// Tokens carry their coverage as a claim; absent means all tabs.
impl Serialize for Coverage {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::All => s.serialize_none(),
            Self::Only(tabs) => s.serialize_some(tabs),
        }
    }
}

impl<'de> Deserialize<'de> for Coverage {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match Option::<Tabs>::deserialize(d)? {
            None => Self::All,
            Some(tabs) => Self::Only(tabs.normalized()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(words: &[&str]) -> Coverage {
        Coverage::parse(words.iter().copied()).unwrap()
    }

    #[test]
    fn all_covers_everything_managed_covers_mcp_only() {
        assert!(parse(&["all"]).covers("&clipboard"));
        assert_eq!(parse(&["all"]), Coverage::All);
        let m = parse(&["managed"]);
        assert!(m.covers("mcp/info") && m.covers("mcp/workspace/a/b"));
        assert!(!m.covers("&clipboard") && !m.covers("mcp") && !m.covers("mcpx/a"));
        assert_eq!(parse(&["mcp"]), m);
        assert_eq!(parse(&["mcp/"]), m);
    }

    #[test]
    fn a_subtree_covers_itself_and_below_only() {
        let c = parse(&["mcp/workspace/project-x", "&clipboard"]);
        for yes in [
            "mcp/workspace/project-x",
            "mcp/workspace/project-x/notes",
            "&clipboard",
        ] {
            assert!(c.covers(yes), "{yes}");
        }
        for no in [
            "mcp/workspace",
            "mcp/workspace/project-xy",
            "mcp/workspace/project",
            "mcp/info",
            "clipboard",
            "&Clipboard",
            "workspace/project-x",
        ] {
            assert!(!c.covers(no), "{no}");
        }
    }

    #[test]
    fn stored_form_round_trips_and_is_normalised() {
        let c = parse(&[
            "mcp/workspace/b",
            "mcp/workspace/a",
            "mcp/workspace/a/deep",
            "Notes",
            "Notes",
        ]);
        let stored = c.to_stored().unwrap();
        assert_eq!(
            stored,
            r#"{"mcp":["workspace/a","workspace/b"],"ext":["Notes"]}"#
        );
        assert_eq!(Coverage::from_stored(Some(&stored)).unwrap(), c);
        assert_eq!(Coverage::All.to_stored(), None);
        assert_eq!(Coverage::from_stored(None).unwrap(), Coverage::All);
        assert!(Coverage::from_stored(Some(r#"{"mcp":[],"all":true}"#)).is_err());
        assert_eq!(
            parse(&["mcp", "mcp/workspace/a"]).to_stored().unwrap(),
            r#"{"mcp":[""]}"#
        );
    }

    #[test]
    fn bad_lists_are_refused_with_a_reason() {
        for (words, why) in [
            (
                &[][..],
                "no tabs given: use 'all', 'managed' or a list of tabs",
            ),
            (
                &["all", "Notes"][..],
                "'all' cannot be combined with other tabs",
            ),
            (
                &["mcp/workspace/../info"][..],
                "Invalid tab path 'mcp/workspace/../info': segments must be non-empty, without '.', '..' or surrounding spaces",
            ),
            (&[""][..], "tab '': Tab path must not be empty"),
        ] {
            assert_eq!(
                Coverage::parse(words.iter().copied()),
                Err(why.to_owned()),
                "{words:?}"
            );
        }
    }

    #[test]
    fn flags_take_words_and_exact_names() {
        let v = |xs: &[&str]| xs.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(Coverage::from_flags(&[], &[]), Ok(Coverage::All));
        assert_eq!(
            Coverage::from_flags(&v(&["managed"]), &v(&["all", "a,b"])),
            Ok(Coverage::Only(Tabs {
                mcp: vec![String::new()],
                ext: v(&["a,b", "all"])
            }))
        );
        assert_eq!(
            Coverage::from_flags(&v(&["all"]), &v(&["x"])),
            Err("'all' cannot be combined with other tabs".into())
        );
        assert_eq!(
            Coverage::from_flags(&[], &v(&["mcp/info"])),
            Err("--tab names an external tab; give the managed 'mcp/info' with --tabs".into())
        );
    }

    #[test]
    fn described_for_the_owner() {
        assert_eq!(Coverage::All.describe(), "all tabs");
        assert_eq!(Coverage::managed().describe(), "managed tabs (mcp/)");
        assert_eq!(
            parse(&["&clipboard", "mcp/workspace/x"]).describe(),
            "mcp/workspace/x, &clipboard"
        );
    }

    #[test]
    fn a_claim_is_absent_for_all_tabs() {
        #[derive(Serialize, Deserialize)]
        struct Claim {
            #[serde(default, skip_serializing_if = "Coverage::is_all")]
            tabs: Coverage,
        }
        let all = serde_json::to_string(&Claim {
            tabs: Coverage::All,
        })
        .unwrap();
        assert_eq!(all, "{}");
        let some = serde_json::to_string(&Claim {
            tabs: Coverage::managed(),
        })
        .unwrap();
        assert_eq!(some, r#"{"tabs":{"mcp":[""]}}"#);
        let back: Claim = serde_json::from_str(&some).unwrap();
        assert_eq!(back.tabs, Coverage::managed());
        assert!(serde_json::from_str::<Claim>(r#"{"tabs":{"every":1}}"#).is_err());
    }
}
