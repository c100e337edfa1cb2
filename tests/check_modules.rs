//! The modules of `src/check` form no import cycle: every pass depends on `check::context` (the
//! shared state, e2fsck.h's role) and on leaf helpers, never on a module that depends back on
//! it. Reads the sources: every `super::...` and `crate::check::...` path outside comments and
//! test modules is an edge from the module of the file to the check module it names. The root
//! (`check/mod.rs`, which runs the pass table and declares `Finding`) is left out: it names every
//! module by design.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The check modules: top-level name -> (file, depth below `src/check`): `check/x.rs` and
/// `check/x/mod.rs` are at depth 0 (their `super` is the root), `check/x/y.rs` at depth 1.
fn module_files(check: &Path) -> BTreeMap<String, Vec<(PathBuf, usize)>> {
    let mut out: BTreeMap<String, Vec<(PathBuf, usize)>> = BTreeMap::new();
    for entry in std::fs::read_dir(check).expect("src/check is readable") {
        let path = entry.expect("directory entry").path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            let mut stack = vec![(path.clone(), 1usize)];
            while let Some((dir, depth)) = stack.pop() {
                for e in std::fs::read_dir(&dir).expect("module directory is readable") {
                    let p = e.expect("directory entry").path();
                    if p.is_dir() {
                        stack.push((p, depth + 1));
                    } else if p.extension().is_some_and(|x| x == "rs") {
                        let d = if p.file_name().is_some_and(|f| f == "mod.rs") {
                            depth - 1
                        } else {
                            depth
                        };
                        out.entry(name.clone()).or_default().push((p, d));
                    }
                }
            }
        } else if path.extension().is_some_and(|x| x == "rs") && name != "mod" {
            out.entry(name).or_default().push((path, 0));
        }
    }
    out
}

/// The source without comments and without the `#[cfg(test)] mod tests` part.
fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    };
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

fn ident_at(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The first segments named right after `at` in `code`: one identifier, or each item of a
/// `{...}` group.
fn named_after(code: &str) -> Vec<String> {
    if let Some(group) = code.strip_prefix('{') {
        let mut depth = 1;
        let mut items = Vec::new();
        let mut start = 0;
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        items.push(&group[start..i]);
                        break;
                    }
                }
                ',' if depth == 1 => {
                    items.push(&group[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        return items
            .iter()
            .map(|item| ident_at(item.trim()).to_string())
            .filter(|s| !s.is_empty())
            .collect();
    }
    vec![ident_at(code).to_string()]
}

/// The check modules a file at `depth` names.
fn references(code: &str, depth: usize) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::check::") {
        rest = &rest[at + "crate::check::".len()..];
        out.extend(named_after(rest));
    }
    let bytes = code.as_bytes();
    let mut i = 0;
    while let Some(at) = code[i..].find("super::") {
        let start = i + at;
        // Only whole chains: `super::super::x`, not the tail of another path.
        let whole = start == 0
            || !(bytes[start - 1] == b':'
                || bytes[start - 1].is_ascii_alphanumeric()
                || bytes[start - 1] == b'_');
        let mut end = start;
        let mut k = 0;
        while code[end..].starts_with("super::") {
            end += "super::".len();
            k += 1;
        }
        if whole && k == depth + 1 {
            out.extend(named_after(&code[end..]));
        }
        i = end;
    }
    out
}

/// Edges module -> check modules it names (itself and the root left out).
fn graph(check: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let files = module_files(check);
    let names: BTreeSet<String> = files.keys().cloned().collect();
    files
        .iter()
        .map(|(module, paths)| {
            let mut deps = BTreeSet::new();
            for (path, depth) in paths {
                let text = std::fs::read_to_string(path).expect("source is readable");
                deps.extend(
                    references(&code_of(&text), *depth)
                        .into_iter()
                        .filter(|d| names.contains(d) && d != module),
                );
            }
            (module.clone(), deps)
        })
        .collect()
}

/// A cycle of `graph`, as the modules along it (the first repeated at the end), if any.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        marks: &mut BTreeMap<String, Mark>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match marks.get(node) {
            Some(Mark::Done) => return None,
            Some(Mark::Open) => {
                let from = path.iter().position(|p| p == node).unwrap_or(0);
                let mut cycle = path[from..].to_vec();
                cycle.push(node.to_string());
                return Some(cycle);
            }
            None => {}
        }
        marks.insert(node.to_string(), Mark::Open);
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(c) = visit(next, graph, marks, path) {
                return Some(c);
            }
        }
        path.pop();
        marks.insert(node.to_string(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    for node in graph.keys() {
        if let Some(c) = visit(node, graph, &mut marks, &mut Vec::new()) {
            return Some(c);
        }
    }
    None
}

#[test]
fn check_modules_form_no_import_cycle() {
    let check = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/check");
    let g = graph(&check);
    // The reading itself works: the passes are found, and they name the shared context.
    for pass in ["pass1", "pass2", "pass3", "pass4", "pass5"] {
        assert!(
            g.get(pass).is_some_and(|d| d.contains("context")),
            "{pass} should depend on check::context; graph: {g:?}"
        );
    }
    if let Some(cycle) = find_cycle(&g) {
        panic!(
            "import cycle among check modules: {}\n(move what two modules share into check::context)",
            cycle.join(" -> ")
        );
    }
}

#[test]
fn the_reader_of_paths_and_the_cycle_finder_work() {
    let refs = references(
        "use super::context::{A, B};\nuse super::{walk, Findings};\nfn f() { super::state::g(); x::super::no(); }",
        0,
    );
    let want: BTreeSet<String> = ["context", "walk", "Findings", "state"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(refs, want);
    // Depth 1: `super::` is the module itself, `super::super::` the check root.
    let nested = references(
        "use super::index::X;\nuse super::super::ownership::Claims;\nuse crate::check::walk::Y;",
        1,
    );
    let want: BTreeSet<String> = ["ownership", "walk"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(nested, want);
    assert!(code_of("// use super::pass1::X;\nlet a = 1;")
        .find("pass1")
        .is_none());
    let edge = |a: &str, b: &str| (a.to_string(), [b.to_string()].into_iter().collect());
    let acyclic: BTreeMap<String, BTreeSet<String>> =
        [edge("pass1", "context"), edge("walk", "progress")]
            .into_iter()
            .collect();
    assert_eq!(find_cycle(&acyclic), None);
    let cyclic: BTreeMap<String, BTreeSet<String>> = [edge("pass1", "walk"), edge("walk", "pass1")]
        .into_iter()
        .collect();
    let cycle = find_cycle(&cyclic).expect("a cycle is found");
    assert_eq!(cycle.first(), cycle.last());
    assert_eq!(cycle.len(), 3);
}
