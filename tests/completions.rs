//! The command line describing itself: `overlap completions SHELL` and
//! `overlap man`. Scripts and pages are checked against the commands
//! `overlap --help` lists, so a command added later is covered without
//! touching this file; and against the commands known today, so that a
//! `--help` this file fails to read cannot make every check vacuous.

mod common;

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

use common::*;

const SHELLS: [&str; 5] = ["bash", "zsh", "fish", "elvish", "powershell"];

/// Commands that exist today; `commands()` must list at least these.
const KNOWN: [&str; 8] = ["run", "fingerprint", "exact", "pairs", "report", "dump", "completions", "man"];

/// Long flags of several commands that every script must offer.
const FLAGS: [&str; 8] = ["memory", "previous", "threshold", "chunk", "scope", "max-df", "dir", "quiet"];

/// The commands `overlap --help` lists, without clap's `help`: the names at
/// the start of the lines of its `Commands:` block (descriptions that wrap
/// continue on lines indented further).
fn commands() -> Vec<String> {
    let help = String::from_utf8(overlap_ok(["--help"]).stdout).unwrap();
    let names: Vec<String> = help
        .lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.strip_prefix("  ").filter(|rest| !rest.starts_with(' ')))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect();
    for known in KNOWN {
        assert!(names.iter().any(|n| n == known), "`overlap --help` does not list {known}:\n{help}");
    }
    assert!(!names.iter().any(|n| n == "stop-texts"), "the hidden command is listed:\n{help}");
    names
}

/// How `shell`'s script names a subcommand and a long flag: each
/// generator has its own syntax, and a bare "run" would be found in any
/// text.
fn forms(shell: &str, command: &str, flag: &str) -> (String, String) {
    match shell {
        "bash" => (format!("overlap,{command})"), format!("--{flag}")),
        "zsh" => (format!("'{command}:"), format!("'--{flag}")),
        "fish" => (format!("-a \"{command}\""), format!("-l {flag} ")),
        "elvish" => (format!("cand {command} "), format!("cand --{flag} ")),
        "powershell" => (format!("'{command}'"), format!("'--{flag}'")),
        _ => unreachable!("{shell}"),
    }
}

fn script(shell: &str) -> String {
    let out = overlap_ok(["completions", shell]);
    assert!(out.stderr.is_empty(), "{shell}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("completion scripts are UTF-8")
}

#[test]
fn every_shell_script_offers_every_command_and_their_flags() {
    let commands = commands();
    for shell in SHELLS {
        let script = script(shell);
        assert!(!script.trim().is_empty(), "{shell}: empty script");
        for command in &commands {
            let (form, _) = forms(shell, command, "");
            assert!(script.contains(&form), "{shell}: no `{form}` for the command {command}");
        }
        for flag in FLAGS {
            let (_, form) = forms(shell, "", flag);
            assert!(script.contains(&form), "{shell}: no `{form}` for --{flag}");
        }
        // Hidden commands stay out of reach of Tab, as they are of --help.
        assert!(!script.contains("stop-texts"), "{shell}: offers the hidden stop-texts");
    }
}

#[test]
fn a_bad_shell_is_a_usage_error() {
    assert_usage_error(&["completions", "tcsh"], &["tcsh"]);
    assert_usage_error(&["completions"], &["<SHELL>"]);
}

/// Runs `script` in a bash without start-up files, for the completion
/// tests; `None` (after saying so) when there is no bash.
fn bash(script: &str) -> Option<String> {
    let run =
        Command::new("bash").args(["--norc", "--noprofile", "-c", script]).stdin(Stdio::null()).output();
    let out = match run {
        Ok(out) => out,
        Err(e) => {
            eprintln!("note: test skipped: cannot run bash: {e}");
            return None;
        }
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "bash failed:\n{script}\n--- stderr ---\n{stderr}");
    assert!(stderr.is_empty(), "bash wrote on stderr:\n{script}\n--- stderr ---\n{stderr}");
    Some(String::from_utf8(out.stdout).unwrap())
}

/// The bash script, sourced, registers a completion for `overlap`, and its
/// function completes as bash would call it on Tab: commands after
/// `overlap`, a flag from its start, a shell after `completions`.
#[test]
fn the_bash_script_completes_commands_and_flags_in_bash() {
    let tmp = tempdir();
    let file = tmp.path().join("overlap.bash");
    fs::write(&file, script("bash")).unwrap();
    let source = format!("source '{}'", arg(&file));
    let Some(registered) = bash(&format!("{source} && complete -p overlap")) else { return };
    // `complete -o ... -F _overlap overlap`: the function bash calls.
    let words: Vec<&str> = registered.split_whitespace().collect();
    let function = words
        .iter()
        .position(|w| *w == "-F")
        .and_then(|i| words.get(i + 1))
        .unwrap_or_else(|| panic!("no completion function: {registered}"));
    // bash calls the function with the command, the word being completed
    // and the word before it, COMP_WORDS and COMP_CWORD set.
    let complete = |line: &[&str]| -> BTreeSet<String> {
        let cword = line.len() - 1;
        let quoted: Vec<String> = line.iter().map(|w| format!("'{w}'")).collect();
        let script = format!(
            "{source}\nCOMP_WORDS=({words})\nCOMP_CWORD={cword}\nCOMP_LINE='{text}'\nCOMP_POINT=${{#COMP_LINE}}\n\
             {function} overlap '{cur}' '{prev}'\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"",
            words = quoted.join(" "),
            text = line.join(" "),
            cur = line[cword],
            prev = line[cword - 1],
        );
        bash(&script).unwrap().lines().map(str::to_string).collect()
    };
    let offered = complete(&["overlap", ""]);
    for command in commands() {
        assert!(offered.contains(&command), "`overlap <Tab>` does not offer {command}: {offered:?}");
    }
    assert!(!offered.contains("stop-texts"), "{offered:?}");
    let offered = complete(&["overlap", "run", "--mem"]);
    assert_eq!(offered, BTreeSet::from(["--memory".to_string()]));
    let offered = complete(&["overlap", "pairs", "DIR", "--thres"]);
    assert_eq!(offered, BTreeSet::from(["--threshold".to_string()]));
    let offered = complete(&["overlap", "completions", ""]);
    for shell in SHELLS {
        assert!(offered.contains(shell), "`overlap completions <Tab>` does not offer {shell}: {offered:?}");
    }
    // A flag that takes one of a few values completes them, not file names.
    let values = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
    assert_eq!(complete(&["overlap", "run", "CRAWL", "--scope", ""]), values(&["crawl", "host", "site"]));
    assert_eq!(complete(&["overlap", "exact", "DIR", "--scope", "h"]), values(&["host"]));
    assert_eq!(
        complete(&["overlap", "pairs", "DIR", "--method", ""]),
        values(&["auto", "sort", "coarse", "prefix", "minhash", "simhash"])
    );
    assert_eq!(
        complete(&["overlap", "run", "CRAWL", "--preset", ""]),
        values(&["default", "paper", "paper-lines2", "paper-doc"])
    );
    assert_eq!(complete(&["overlap", "run", "CRAWL", "--format", ""]), values(&["csv", "parquet"]));
    assert_eq!(complete(&["overlap", "dedup", "DIR", "--level", ""]), values(&["exact", "near", "against"]));
    assert_eq!(
        complete(&["overlap", "dedup", "DIR", "--format", ""]),
        values(&["jsonl", "warc", "urls", "skip", "warc-revisits"])
    );
}

// ------------------------------------------------------------ man pages

/// The `.TH` line of a page: the first line that is not one of roff's
/// string definitions or comments (the page starts with the definition of
/// its apostrophe), checked to come before any section.
fn title_line(page: &str) -> &str {
    let line = page
        .lines()
        .find(|l| !(l.starts_with(".ie ") || l.starts_with(".el ") || l.starts_with(".\\\"")))
        .unwrap_or("");
    assert!(line.starts_with(".TH "), "the page does not start with .TH:\n{page}");
    line
}

/// A flag or a page name as roff writes it: dashes escaped.
fn roff(text: &str) -> String {
    text.replace('-', "\\-")
}

#[test]
fn man_prints_overlap_1_listing_every_command() {
    let out = overlap_ok(["man"]);
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    let page = String::from_utf8(out.stdout).unwrap();
    let title: Vec<&str> = title_line(&page).split_whitespace().collect();
    assert_eq!(title[1..3], ["OVERLAP", "1"], "{page}");
    for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "SUBCOMMANDS", "\"EXIT STATUS\""] {
        assert!(page.contains(&format!("\n.SH {section}\n")), "no {section} section:\n{page}");
    }
    for command in commands() {
        let name = roff(&format!("overlap-{command}(1)"));
        assert!(page.contains(&name), "overlap(1) does not list {name}:\n{page}");
    }
    assert!(!page.contains("stop\\-texts"), "overlap(1) shows the hidden stop-texts:\n{page}");
    assert!(page.contains(&roff("--quiet")), "{page}");
}

#[test]
fn man_dir_writes_a_page_per_command() {
    let tmp = tempdir();
    let dir = tmp.path().join("share/man/man1");
    overlap_ok(["man", "--dir", &arg(&dir)]);
    let commands = commands();
    let mut expected: BTreeSet<String> = commands.iter().map(|c| format!("overlap-{c}.1")).collect();
    expected.insert("overlap.1".into());
    let written: BTreeSet<String> =
        fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    assert_eq!(written, expected);
    // overlap.1 is the page `overlap man` prints.
    assert!(fs::read(dir.join("overlap.1")).unwrap() == overlap_ok(["man"]).stdout);
    for command in &commands {
        let page = fs::read_to_string(dir.join(format!("overlap-{command}.1"))).unwrap();
        let title: Vec<&str> = title_line(&page).split_whitespace().collect();
        assert_eq!(title[1..3], [format!("OVERLAP-{}", command.to_uppercase()), "1".into()], "{page}");
        // Its synopsis is the command's, with the flags every command takes.
        assert!(page.contains(&format!("\\fBoverlap {command}\\fR")), "{page}");
        assert!(page.contains(&roff("--quiet")), "{page}");
        assert!(page.contains("\\fBoverlap\\fR(1)"), "no SEE ALSO overlap(1):\n{page}");
        // Every page says what its exit codes mean, before SEE ALSO.
        let (exit, also) = (page.find("\n.SH \"EXIT STATUS\"\n"), page.find("\n.SH \"SEE ALSO\"\n"));
        assert!(
            exit.is_some() && exit < also,
            "overlap-{command}(1) has no EXIT STATUS before SEE ALSO:\n{page}"
        );
    }
    let run = fs::read_to_string(dir.join("overlap-run.1")).unwrap();
    for flag in ["--memory", "--previous", "--threshold", "--chunk", "--scope", "--strict"] {
        assert!(run.contains(&roff(flag)), "overlap-run(1) does not document {flag}");
    }
    // Writing again over the pages is fine: they are replaced.
    overlap_ok(["man", "--dir", &arg(&dir)]);
}

#[test]
fn man_dir_errors_name_the_file() {
    let tmp = tempdir();
    let file = tmp.path().join("a-file");
    fs::write(&file, b"").unwrap();
    assert_usage_error(&["man", "--dir", &arg(&file)], &[&arg(&file)]);
    let below_file = file.join("man1");
    assert_usage_error(&["man", "--dir", &arg(&below_file)], &[&arg(&below_file)]);
    // A directory where a page goes: that page cannot be written.
    let dir = tmp.path().join("man1");
    fs::create_dir_all(dir.join("overlap-run.1")).unwrap();
    assert_usage_error(&["man", "--dir", &arg(&dir)], &[&arg(&dir.join("overlap-run.1"))]);
}

/// man-db renders every page without a warning from groff; skipped, with a
/// note, where `man` is not man-db.
#[test]
fn man_renders_every_page() {
    let is_man_db = Command::new("man")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success() && String::from_utf8_lossy(&out.stdout).starts_with("man "));
    if !is_man_db {
        eprintln!("note: test skipped: no man-db `man` to render the pages with");
        return;
    }
    let tmp = tempdir();
    let dir = tmp.path().join("man1");
    overlap_ok(["man", "--dir", &arg(&dir)]);
    for entry in fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = render(&path);
        for heading in ["NAME", "SYNOPSIS", "OPTIONS"] {
            assert!(text.lines().any(|l| l == heading), "{}: no {heading}:\n{text}", path.display());
        }
    }
    let text = render(&dir.join("overlap.1"));
    assert!(text.lines().any(|l| l == "EXIT STATUS"), "{text}");
    // The footer carries the version where the date is not.
    let footer = text.lines().rev().find(|l| !l.trim().is_empty()).unwrap();
    assert!(footer.starts_with(&format!("overlap {}", env!("CARGO_PKG_VERSION"))), "{footer}");
}

/// `man -l PAGE` as text, checked to have succeeded without a word on stderr.
fn render(page: &Path) -> String {
    let out = Command::new("man")
        .args(["--warnings", "-P", "cat", "-l"])
        .arg(page)
        .env("MANWIDTH", "100")
        .stdin(Stdio::null())
        .output()
        .expect("cannot run man");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.is_empty(), "man -l {}: {stderr}", page.display());
    String::from_utf8_lossy(&out.stdout).into_owned()
}
