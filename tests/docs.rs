//! The user guide cannot drift from the binary: the command-line page holds
//! every command's `--help` as the binary prints it, and the outputs page
//! names every file an analysis writes and every column of its CSV tables.
//!
//! `OVERLAP_BLESS_DOCS=1 cargo test --test docs` rewrites the generated part
//! of docs/cli.md after a change to the flags.

mod common;

use common::{overlap, root, testdata};
use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

const BEGIN: &str =
    "<!-- BEGIN GENERATED: every command's --help (OVERLAP_BLESS_DOCS=1 cargo test --test docs) -->";
const END: &str = "<!-- END GENERATED -->";

fn help(args: &[&str]) -> String {
    let out = common::overlap_cmd(args).env("COLUMNS", "100").output().unwrap();
    assert!(out.status.success(), "overlap {args:?} failed");
    String::from_utf8(out.stdout).unwrap()
}

/// The subcommands `overlap --help` lists, in its order (without `help`).
fn commands() -> Vec<String> {
    let top = help(&["--help"]);
    let listed = top.split("Commands:\n").nth(1).unwrap().split("\n\n").next().unwrap();
    listed
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .filter(|c| c != "help")
        .collect()
}

/// The generated block: `overlap --help`, then each command's.
fn generated() -> String {
    let mut s = String::new();
    s.push_str(BEGIN);
    s.push_str("\n\n## `overlap`\n\n```text\n");
    s.push_str(help(&["--help"]).trim_end());
    s.push_str("\n```\n");
    for c in commands() {
        s.push_str(&format!("\n## `overlap {c}`\n\n```text\n"));
        s.push_str(help(&[&c, "--help"]).trim_end());
        s.push_str("\n```\n");
    }
    s.push('\n');
    s.push_str(END);
    s
}

#[test]
fn the_command_line_page_holds_every_commands_help() {
    let path = root().join("docs/cli.md");
    let page = fs::read_to_string(&path).unwrap();
    let (start, end) =
        (page.find(BEGIN).expect("docs/cli.md lost its BEGIN marker"), page.find(END).unwrap());
    let want = generated();
    if std::env::var_os("OVERLAP_BLESS_DOCS").is_some() {
        fs::write(&path, format!("{}{}{}", &page[..start], want, &page[end + END.len()..])).unwrap();
        return;
    }
    let have = &page[start..end + END.len()];
    assert!(
        have == want,
        "docs/cli.md's generated reference differs from the binary's --help: run \
         OVERLAP_BLESS_DOCS=1 cargo test --test docs, and read the diff"
    );
    // Every flag a command takes appears in the hand-written part too, where
    // the page says what it is for.
    let prose = format!("{}{}", &page[..start], &page[end..]);
    let mut missing = BTreeSet::new();
    for c in commands() {
        for flag in flags(&help(&[&c, "--help"])) {
            if !names_flag(&prose, &flag) {
                missing.insert(format!("{c} {flag}"));
            }
        }
    }
    assert!(missing.is_empty(), "flags the hand-written part of docs/cli.md does not name: {missing:?}");
}

/// Whether `text` names `flag` as a whole word (`--max-df`, not only
/// `--max-df-foo`).
fn names_flag(text: &str, flag: &str) -> bool {
    text.match_indices(flag).any(|(at, _)| {
        let next = text[at + flag.len()..].chars().next();
        !next.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
    })
}

/// The long flags of one command's help: the lines of its Options section.
fn flags(help: &str) -> Vec<String> {
    let options = help.split("Options:\n").nth(1).unwrap_or("");
    options
        .lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let l = l
                .strip_prefix("-")
                .filter(|r| !r.starts_with('-'))
                .map(|r| &r[r.find("--").unwrap_or(r.len())..])
                .unwrap_or(l);
            let flag: String = l
                .strip_prefix("--")?
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            (flag != "help" && flag != "version").then(|| format!("--{flag}"))
        })
        .collect()
}

// ------------------------------------------------------------------- outputs

/// Every file under `dir`, relative, with runs of digits written `N`
/// (`fprint-docid/part-NNNNN.fpd` names all 64 partitions).
fn files(dir: &Path) -> BTreeSet<String> {
    let mut all = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_string_lossy().replace('\\', "/");
                all.insert(rel.chars().map(|c| if c.is_ascii_digit() { 'N' } else { c }).collect());
            }
        }
    }
    all
}

#[test]
fn the_outputs_page_names_every_file_and_column_an_analysis_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let (first, second) = (tmp.path().join("first"), tmp.path().join("second"));
    let sample = testdata("sample.warc.gz");
    let run = |args: &[&str]| {
        let out = overlap(args);
        assert!(out.status.success(), "overlap {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    let (f, s) = (first.to_str().unwrap(), second.to_str().unwrap());
    run(&[
        "run",
        sample.to_str().unwrap(),
        "--out",
        f,
        "--format",
        "parquet",
        "--max-df",
        "20",
        "--scope",
        "host",
        "-q",
    ]);
    run(&["run", sample.to_str().unwrap(), "--out", s, "--previous", f, "--format", "parquet", "-q"]);
    let third = tmp.path().join("third");
    let t = third.to_str().unwrap();
    run(&["run", sample.to_str().unwrap(), "--out", t, "--against", s, "--format", "parquet", "-q"]);

    let page = fs::read_to_string(root().join("docs/outputs.md")).unwrap();
    let mut written = files(&first);
    written.extend(files(&second));
    written.extend(files(&third));
    let missing: Vec<_> = written
        .iter()
        .filter(|name| !name.starts_with(".overlap/"))
        .filter(|name| !page.contains(&format!("`{name}`")) && !page.contains(&format!("{name}`")))
        .collect();
    assert!(missing.is_empty(), "files an analysis writes that docs/outputs.md does not name: {missing:?}");

    let mut columns = BTreeSet::new();
    for dir in [&first, &second, &third] {
        for e in fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "csv") {
                let name = p.file_name().unwrap().to_string_lossy().to_string();
                let text = fs::read_to_string(&p).unwrap();
                for col in text.lines().next().unwrap_or("").split(',') {
                    columns.insert((name.clone(), col.to_string()));
                }
            }
        }
    }
    // Each column is named in its file's row of the outputs table, as
    // `a,b,c` or as `a`.
    let row_names = |file: &str, col: &str| {
        page.lines()
            .filter(|l| l.starts_with(&format!("| `{file}`")))
            .any(|l| l.split(['`', ',', ' ']).any(|word| word == col))
    };
    let undocumented: Vec<_> = columns.iter().filter(|(file, col)| !row_names(file, col)).collect();
    assert!(undocumented.is_empty(), "CSV columns docs/outputs.md does not describe: {undocumented:?}");
}

// --------------------------------------------------------------------- links

/// A heading's anchor as code hosts make it: lowercase, punctuation other
/// than `-` and `_` dropped, spaces made hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_' || *c == ' ')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a Markdown file's headings, outside code blocks.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut fence = false;
    let mut all = BTreeSet::new();
    for line in text.lines() {
        if line.starts_with("```") {
            fence = !fence;
        } else if !fence && line.starts_with('#') {
            all.insert(slug(line.trim_start_matches('#')));
        }
    }
    all
}

/// The relative link targets of a Markdown file, outside code blocks and
/// code spans.
fn links(text: &str) -> Vec<String> {
    let mut fence = false;
    let mut all = Vec::new();
    for line in text.lines() {
        if line.starts_with("```") {
            fence = !fence;
            continue;
        }
        if fence {
            continue;
        }
        // Leave out code spans, whose brackets are not links.
        let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = prose.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let end = after.find(')').unwrap_or(after.len());
            let target = &after[..end];
            if !target.contains("://") && !target.starts_with("mailto:") {
                all.push(target.to_string());
            }
            rest = &after[end..];
        }
    }
    all
}

#[test]
fn every_link_of_the_documentation_leads_somewhere() {
    let root = root();
    let mut pages = vec![root.join("README.md"), root.join("ARCHITECTURE.md"), root.join("CONTRIBUTING.md")];
    let mut stack = vec![root.join("docs")];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                pages.push(p);
            }
        }
    }
    let mut broken = Vec::new();
    for page in &pages {
        let text = fs::read_to_string(page).unwrap();
        for target in links(&text) {
            let (file, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let path = if file.is_empty() { page.clone() } else { page.parent().unwrap().join(file) };
            let name = page.strip_prefix(&root).unwrap().display().to_string();
            if !path.exists() {
                broken.push(format!("{name}: {target} (no such file)"));
            } else if !anchor.is_empty() && !anchors(&fs::read_to_string(&path).unwrap()).contains(anchor) {
                broken.push(format!("{name}: {target} (no such heading)"));
            }
        }
    }
    assert!(broken.is_empty(), "broken links in the documentation:\n{}", broken.join("\n"));
}
