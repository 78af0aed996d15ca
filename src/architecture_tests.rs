//! The module graph has no circles (ARCHITECTURE.md: "add none"): each top-level module's
//! `crate::` paths outside tests and comments, followed transitively, never lead back to it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Top-level module -> the top-level modules its code names through `crate::`.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut dirs = vec![src.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("src dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let name = path.to_string_lossy().into_owned();
            if !name.ends_with(".rs") || name.ends_with("tests.rs") {
                continue;
            }
            let rel = path.strip_prefix(&src).expect("under src");
            let first = rel.components().next().expect("a component");
            let top = first
                .as_os_str()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_owned();
            let text = std::fs::read_to_string(&path).expect("read");
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
                for (at, _) in line.match_indices("crate::") {
                    let used: String = line[at + 7..]
                        .chars()
                        .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                        .collect();
                    if !used.is_empty() && used != top {
                        graph.entry(top.clone()).or_default().insert(used);
                    }
                }
            }
        }
    }
    graph
}

/// Whether `to` is reachable from `from`.
fn reaches(graph: &BTreeMap<String, BTreeSet<String>>, from: &str, to: &str) -> bool {
    let (mut seen, mut next) = (BTreeSet::new(), vec![from.to_owned()]);
    while let Some(module) = next.pop() {
        for used in graph.get(&module).into_iter().flatten() {
            if used == to {
                return true;
            }
            if seen.insert(used.clone()) {
                next.push(used.clone());
            }
        }
    }
    false
}

#[test]
fn no_module_circles() {
    let graph = graph();
    assert!(
        graph.contains_key("http") && graph.contains_key("mcp"),
        "{graph:?}"
    );
    let circles: Vec<String> = graph
        .iter()
        .flat_map(|(module, used)| used.iter().map(move |u| (module, u)))
        .filter(|(module, used)| reaches(&graph, used, module))
        .map(|(module, used)| format!("{module} -> {used}"))
        .collect();
    assert!(circles.is_empty(), "edges on a circle: {circles:?}");
}

#[test]
fn a_circle_is_found() {
    let mut graph = BTreeMap::new();
    graph.insert("a".to_owned(), BTreeSet::from(["b".to_owned()]));
    graph.insert("b".to_owned(), BTreeSet::from(["a".to_owned()]));
    assert!(reaches(&graph, "b", "a") && !reaches(&graph, "c", "a"));
}
