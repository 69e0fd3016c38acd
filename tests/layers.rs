//! The imports of `src/` run one way, as ARCHITECTURE.md draws them:
//! `base` → the byte layer (`bytes/`) → the store → the stages → the
//! commands over a finished analysis → `cli`. A module may use its own
//! unit, the units of its layer that are not its siblings' stages or
//! commands, and every layer below it; never a layer above, never a
//! sibling stage or command; and no circle of imports runs through more
//! than one unit.
//!
//! Read from the source text: every `crate::` path (in `use` trees and in
//! code) and every `super::` path that leaves its unit, comment lines left
//! out. A path that names a module this table does not know fails too, so
//! the table is kept whole as the code grows.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The layers, lowest first, with their units and whether a unit may use
/// another unit of its own layer. The stages and the commands may not:
/// each talks to the others only through the store.
const LAYERS: &[(&str, bool, &[&str])] = &[
    ("base", true, &["base"]),
    (
        "bytes",
        true,
        &[
            "bytes::scan",
            "bytes::read",
            "bytes::extract",
            "bytes::chunk",
            "bytes::fuzzy",
            "bytes::plain_url",
            "bytes::revisit",
        ],
    ),
    ("store", true, &["store"]),
    (
        "stages",
        false,
        &[
            "stages::fingerprint",
            "stages::exact",
            "stages::pairs",
            "stages::report",
            "stages::export",
            "stages::export_tables",
        ],
    ),
    (
        "commands",
        false,
        &["commands::dedup", "commands::expand", "commands::explain", "commands::eval", "commands::dump"],
    ),
    ("cli", true, &["cli"]),
];

/// Modules outside the layers, each with why. They are not part of the
/// program a user runs: what they import is checked as if they were at the
/// top, and anything may use them.
const OUTSIDE: &[(&str, &str)] = &[
    ("testing", "what the unit tests share (#[cfg(test)]): test code of every layer uses it"),
    ("fuzzing", "the fuzz targets' entry points (the fuzzing feature): nothing in the program uses it"),
];

/// Imports that break the rule and must stay, with why: none.
const ALLOWED: &[(&str, &str, &str)] = &[];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `src/`, with its module path (`stages::pairs::coarse`).
fn modules() -> Vec<(PathBuf, Vec<String>)> {
    fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, found);
            } else if path.extension().is_some_and(|e| e == "rs") {
                found.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&src(), &mut files);
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let rel = path.strip_prefix(src()).unwrap().with_extension("");
            let mut segments: Vec<String> =
                rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
            if segments.last().is_some_and(|s| s == "mod" || s == "lib" || s == "main") {
                segments.pop();
            }
            (path, segments)
        })
        .collect()
}

/// The source without its comment lines and trailing `// ...` comments
/// (a doc link names a module without using it).
fn code_of(text: &str) -> String {
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .map(|l| match l.find(" // ") {
            Some(at) if !l[..at].contains('"') => &l[..at],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The paths a `use` tree starting at `at` (just after `crate::` or
/// `super::`) names, each as its segments; only the first few segments
/// matter here, so a path stops at a name that is not a module's.
fn paths_at(code: &str, at: usize) -> Vec<Vec<String>> {
    let bytes = code.as_bytes();
    let mut i = at;
    let mut prefix = Vec::new();
    loop {
        if code[i..].starts_with('{') {
            // A group: each of its items, after the prefix.
            let mut depth = 0;
            let mut end = i;
            for (k, c) in code[i..].char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            end = i + k;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let inner = &code[i + 1..end];
            let mut items = Vec::new();
            let (mut depth, mut from) = (0, 0);
            for (k, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        items.push(&inner[from..k]);
                        from = k + 1;
                    }
                    _ => {}
                }
            }
            items.push(&inner[from..]);
            let mut out = Vec::new();
            for item in items {
                let item = item.trim();
                if item.is_empty() {
                    continue;
                }
                let offset = item.as_ptr() as usize - code.as_ptr() as usize;
                for mut tail in paths_at(code, offset) {
                    if tail.first().is_some_and(|s| s == "self") {
                        tail.remove(0);
                    }
                    let mut path = prefix.clone();
                    path.extend(tail);
                    out.push(path);
                }
            }
            return out;
        }
        let start = i;
        while i < bytes.len() && is_ident(bytes[i] as char) {
            i += 1;
        }
        if i == start {
            break;
        }
        prefix.push(code[start..i].to_string());
        if code[i..].starts_with("::") {
            i += 2;
            continue;
        }
        break;
    }
    vec![prefix]
}

/// Every path a file's code names from the crate's root, resolved from
/// `crate::` and from `super::` (relative to `module`, the file's: a
/// `mod.rs` file is its folder's module).
fn imports(code: &str, module: &[String]) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        if at > 0 && (is_ident(code[..at].chars().last().unwrap()) || code[..at].ends_with('$')) {
            continue;
        }
        found.extend(paths_at(code, at + "crate::".len()));
    }
    // `super::` from the file's module: a `mod.rs` file is its folder's
    // module, any other file a module inside its folder's.
    let inline = inline_modules(code);
    let mut at = 0;
    while let Some(k) = code[at..].find("super::") {
        let start = at + k;
        at = start + "super::".len();
        if start > 0 && (is_ident(code[..start].chars().last().unwrap()) || code[..start].ends_with("::")) {
            continue;
        }
        // Inside an inline module of the file (`mod tests { .. }`),
        // `super` is counted from that module.
        let mut base: Vec<String> = module.to_vec();
        base.extend(
            inline.iter().filter(|(from, to, _)| *from < start && start < *to).map(|(_, _, n)| n.clone()),
        );
        let mut i = start;
        while code[i..].starts_with("super::") {
            base.pop();
            i += "super::".len();
        }
        for tail in paths_at(code, i) {
            let mut path = base.clone();
            path.extend(tail);
            found.push(path);
        }
    }
    found
}

/// The inline modules of a file (`mod tests { .. }`): where each begins
/// and ends, and its name.
fn inline_modules(code: &str) -> Vec<(usize, usize, String)> {
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(k) = code[at..].find("mod ") {
        let start = at + k;
        at = start + 4;
        if start > 0 && is_ident(code[..start].chars().last().unwrap()) {
            continue;
        }
        let name: String = code[at..].chars().take_while(|&c| is_ident(c)).collect();
        let after = at + name.len();
        if name.is_empty() || !code[after..].starts_with(" {") {
            continue;
        }
        let mut depth = 0;
        for (k, c) in code[after + 1..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        found.push((after + 1, after + 1 + k, name.clone()));
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    found
}

/// The unit a module path belongs to, and its layer's index; `None` for a
/// module outside the layers.
fn unit_of(path: &[String]) -> Result<Option<(String, usize)>, String> {
    let joined = path.join("::");
    if let Some((name, _)) = OUTSIDE.iter().find(|(name, _)| path.first().is_some_and(|p| p == name)) {
        return Ok(Some((name.to_string(), LAYERS.len())));
    }
    for (layer, (name, _, units)) in LAYERS.iter().enumerate() {
        // A layer's folder (`bytes/mod.rs`) declares its units.
        if joined == *name {
            return Ok(Some((name.to_string(), layer)));
        }
        for unit in *units {
            if joined == *unit || joined.starts_with(&format!("{unit}::")) {
                return Ok(Some((unit.to_string(), layer)));
            }
        }
    }
    if path.is_empty() {
        return Ok(None);
    }
    Err(joined)
}

#[test]
fn imports_run_one_way_and_no_circle_runs_through_two_units() {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut wrong = Vec::new();
    let mut unknown = BTreeSet::new();
    let mut allowed_used = vec![false; ALLOWED.len()];
    for (file, module) in modules() {
        let rel = file.strip_prefix(src().parent().unwrap()).unwrap().to_string_lossy().replace('\\', "/");
        let from = match unit_of(&module) {
            Ok(Some(unit)) => unit,
            // lib.rs, main.rs: the crate's root declares the modules.
            Ok(None) => continue,
            Err(name) => {
                unknown.insert(format!("{rel}: module {name} is in no layer of tests/layers.rs"));
                continue;
            }
        };
        let code = code_of(&fs::read_to_string(&file).unwrap());
        for path in imports(&code, &module) {
            let to = match unit_of(&path) {
                Ok(Some(unit)) => unit,
                Ok(None) => continue,
                Err(name) => {
                    unknown.insert(format!("{rel}: crate::{name} is in no layer of tests/layers.rs"));
                    continue;
                }
            };
            if to.0 == from.0 {
                continue;
            }
            let outside = OUTSIDE.iter().any(|(name, _)| *name == to.0);
            let same_layer_ok = LAYERS.get(from.1).is_some_and(|l| l.1);
            let ok = outside || to.1 < from.1 || (to.1 == from.1 && same_layer_ok);
            if !ok {
                let target = path.join("::");
                match ALLOWED.iter().position(|(f, t, _)| *f == rel && target.starts_with(t)) {
                    Some(k) => allowed_used[k] = true,
                    None => wrong.push(format!(
                        "{rel} ({}) uses crate::{target} ({}): {}",
                        from.0,
                        to.0,
                        if to.1 > from.1 { "a layer above" } else { "a sibling" }
                    )),
                }
            }
            if !outside {
                edges.entry(from.0.clone()).or_default().insert(to.0.clone());
            }
        }
    }
    wrong.sort();
    wrong.dedup();
    assert!(
        unknown.is_empty(),
        "modules the layer table does not know:\n  {}",
        Vec::from_iter(unknown).join("\n  ")
    );
    assert!(wrong.is_empty(), "imports against the layers:\n  {}", wrong.join("\n  "));
    let stale: Vec<_> = ALLOWED.iter().zip(&allowed_used).filter(|(_, u)| !**u).map(|(a, _)| a).collect();
    assert!(stale.is_empty(), "allowed imports that the code no longer has: {stale:?}");
    // What any reading of this code must have seen: the test cannot pass
    // by reading nothing.
    for (from, to) in [("stages::pairs", "store"), ("store", "base"), ("cli", "stages::fingerprint")] {
        assert!(edges.get(from).is_some_and(|e| e.contains(to)), "no import of {to} seen from {from}");
    }
    let circles = circles(&edges);
    assert!(circles.is_empty(), "circles of imports through more than one unit: {circles:?}");
}

/// The strongly connected sets of two or more units (Tarjan's algorithm).
fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        if let Some(next) = s.edges.get(v) {
            for w in next {
                if !s.index.contains_key(w.as_str()) {
                    visit(s, w);
                    let low = s.low[w.as_str()].min(s.low[v]);
                    s.low.insert(v, low);
                } else if s.on_stack.contains(w.as_str()) {
                    let low = s.index[w.as_str()].min(s.low[v]);
                    s.low.insert(v, low);
                }
            }
        }
        if s.low[v] == s.index[v] {
            let mut set = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                set.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if set.len() > 1 {
                set.sort();
                s.found.push(set);
            }
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.found
}

/// The reader of paths finds what the code names, and the rule catches a
/// sibling stage and a layer above: the test cannot pass by reading
/// nothing.
#[test]
fn the_reader_sees_groups_supers_and_code_paths_and_the_rule_bites() {
    let module: Vec<String> = ["stages", "pairs"].map(String::from).to_vec();
    let code = code_of(
        "use crate::{store::{self, OutDir}, base::progress::Progress};\n\
         // use crate::commands::dedup;\n\
         fn f() { crate::stages::report::run(); let x = super::exact::STAGE; }",
    );
    let paths: Vec<String> = imports(&code, &module).into_iter().map(|p| p.join("::")).collect();
    assert!(paths.contains(&"store".to_string()), "{paths:?}");
    assert!(paths.contains(&"store::OutDir".to_string()), "{paths:?}");
    assert!(paths.contains(&"base::progress::Progress".to_string()), "{paths:?}");
    assert!(paths.contains(&"stages::report::run".to_string()), "{paths:?}");
    assert!(paths.contains(&"stages::exact::STAGE".to_string()), "{paths:?}");
    assert!(!paths.iter().any(|p| p.starts_with("commands")), "a comment is not an import: {paths:?}");
    let pairs = unit_of(&module).unwrap().unwrap();
    let report = unit_of(&["stages".into(), "report".into()]).unwrap().unwrap();
    let store = unit_of(&["store".into(), "docs".into()]).unwrap().unwrap();
    assert_eq!(pairs.1, report.1, "stages are one layer");
    assert!(!LAYERS[pairs.1].1, "and siblings there may not use each other");
    assert!(store.1 < pairs.1);
    assert!(unit_of(&["nowhere".into()]).is_err());
    let mut edges = BTreeMap::new();
    edges.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    edges.insert("b".to_string(), BTreeSet::from(["a".to_string()]));
    assert_eq!(circles(&edges), [["a", "b"]]);
}
