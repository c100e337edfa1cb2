//! The layer rule, checked on the source: each layer names only the layers below it.
//!
//! Order, lowest first: `error` (the one error type), `reader`, `models`, `check`, `views`,
//! `format`, `cli`. A file in `src/<layer>/` may name `crate::<other>` (or reach it through
//! `super::`, or through a name `lib.rs` re-exports at the crate root) only when `<other>` is its
//! own layer or a lower one. Doc links count: a doc naming a higher layer is a dependency a
//! newcomer follows. `lib.rs` (the crate root that re-exports the layers) and `main.rs` (the
//! binary, above every layer) are not layered.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

const LAYERS: [&str; 7] = [
    "error", "reader", "models", "check", "views", "format", "cli",
];

fn rank(layer: &str) -> Option<usize> {
    LAYERS.iter().position(|l| *l == layer)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a file below `src/`: `reader/ondisk/inode.rs` is `[reader, ondisk, inode]`,
/// a `mod.rs` is its directory's module.
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// Root-level names `lib.rs` re-exports (`pub use reader::{fs, ...}`), mapped to their layer, so
/// that `crate::fs::...` counts as naming the reader.
fn root_aliases(lib: &str) -> HashMap<String, String> {
    let mut aliases = HashMap::new();
    let flat = lib.replace('\n', " ");
    for stmt in flat.split(';') {
        let Some(rest) = stmt.trim().strip_prefix("pub use ") else {
            continue;
        };
        let Some((layer, names)) = rest.split_once("::") else {
            continue;
        };
        if rank(layer.trim()).is_none() {
            continue;
        }
        let names = names.trim().trim_start_matches('{').trim_end_matches('}');
        for name in names.split(',') {
            let name = name.trim();
            if !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
                aliases.insert(name.to_string(), layer.trim().to_string());
            }
        }
    }
    aliases
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The first path segment after `text[at..]` (an identifier, or the names of a `{...}` group).
fn segments_after(text: &str) -> Vec<String> {
    if let Some(group) = text.strip_prefix('{') {
        let end = group.find('}').unwrap_or(group.len());
        return group[..end]
            .split(',')
            .map(|s| s.trim().split("::").next().unwrap_or("").to_string())
            .filter(|s| !s.is_empty())
            .collect();
    }
    let ident: String = text.chars().take_while(|c| is_ident_char(*c)).collect();
    vec![ident]
}

/// Every top-level module a line names: through `crate::`, or through `super::` chains that
/// climb to the crate root (resolved against the file's module path).
fn named_roots(line: &str, module: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(pos) = rest.find("crate::") {
        let before = rest[..pos].chars().last();
        let after = &rest[pos + "crate::".len()..];
        if !before.is_some_and(is_ident_char) {
            out.extend(segments_after(after));
        }
        rest = after;
    }
    let mut rest = line;
    while let Some(pos) = rest.find("super::") {
        let before = rest[..pos].chars().last();
        let mut after = &rest[pos + "super::".len()..];
        if before.is_some_and(is_ident_char) || before == Some(':') {
            rest = after;
            continue;
        }
        let mut climbs = 1;
        while let Some(next) = after.strip_prefix("super::") {
            climbs += 1;
            after = next;
        }
        // `super` from the file's module; an inline `mod tests` climbs one less, which only
        // makes this lookup stricter for a chain that would otherwise stop inside the layer.
        if climbs >= module.len() {
            out.extend(segments_after(after));
        }
        rest = after;
    }
    out
}

#[test]
fn lower_layers_never_name_higher_ones() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = fs::read_to_string(src.join("lib.rs")).unwrap();
    let aliases = root_aliases(&lib);
    assert!(aliases.contains_key("fs"), "lib.rs re-exports not found");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut checked = 0;
    let mut violations = Vec::new();
    for file in &files {
        let module = module_path(&src, file);
        let Some(own) = module.first().and_then(|m| rank(m)) else {
            continue; // lib.rs, main.rs
        };
        checked += 1;
        let text = fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate() {
            for root in named_roots(line, &module) {
                let layer = aliases.get(&root).map(String::as_str).unwrap_or(&root);
                if let Some(other) = rank(layer) {
                    if other > own {
                        violations.push(format!(
                            "{}:{}: {} names {layer}: {}",
                            file.strip_prefix(&src).unwrap().display(),
                            n + 1,
                            LAYERS[own],
                            line.trim()
                        ));
                    }
                }
            }
        }
    }
    assert!(checked > 50, "only {checked} layered files found");
    assert!(
        violations.is_empty(),
        "lower layers name higher ones (order: {}):\n{}",
        LAYERS.join(" < "),
        violations.join("\n")
    );
}

#[test]
fn the_scanner_sees_what_it_must() {
    let module: Vec<String> = ["reader", "fs"].iter().map(|s| s.to_string()).collect();
    assert_eq!(
        named_roots("use crate::format::json::Time;", &module),
        ["format"]
    );
    assert_eq!(
        named_roots("use crate::{cli, reader::fs};", &module),
        ["cli", "reader"]
    );
    assert_eq!(
        named_roots("use super::super::views::x;", &module),
        ["views"]
    );
    assert!(named_roots("use super::dir::ROOT_INO;", &module).is_empty());
    assert!(named_roots("let x = mycrate::format::y;", &module).is_empty());
    let aliases = root_aliases("pub use reader::{\n    bitmap, fs,\n};\npub use views::{scan};");
    assert_eq!(aliases["fs"], "reader");
    assert_eq!(aliases["scan"], "views");
}
