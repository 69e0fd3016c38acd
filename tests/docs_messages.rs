//! docs/troubleshooting.md lists every message the tool prints: each
//! message format string in src/ must be findable on that page.
//!
//! The messages are found in the source, not by running the binary: a
//! small lexer reads src/**/*.rs (strings with their escapes, raw strings,
//! comments, char literals and lifetimes), skips `#[cfg(test)]` items, and
//! takes as a message
//!
//! - the format string of `bail!(...)` and `anyhow!(...)` (and of a
//!   `&str` constant that is its only content, as in `bail!("{NAME}")`);
//! - the first string literal given to `.warn(...)`, `.context(...)` and
//!   `.with_context(...)`;
//! - every string literal in the functions that build messages another
//!   way: every `from_str` (the flags' values are parsed by them, and clap
//!   prints their errors) and those listed in [`MESSAGE_FUNCTIONS`].
//!
//! A message is split on its `{...}` placeholders; its longest literal
//! fragment, trimmed of spaces and punctuation, must appear on the page
//! (whitespace compared loosely, so the page may wrap) when it has at least
//! [`MIN_FRAGMENT`] characters. Shorter fragments (`"{}: {why}"`) say
//! nothing a reader could look up.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

/// Fragments shorter than this are not looked for.
const MIN_FRAGMENT: usize = 12;

/// Functions (file, name) whose string literals are all parts of messages
/// printed on stderr or under a command's output.
const MESSAGE_FUNCTIONS: &[(&str, &str)] = &[
    // The flags' own checks (clap prints "invalid value ... : MESSAGE").
    ("src/cli/mod.rs", "parse_positive"),
    ("src/cli/mod.rs", "parse_rate"),
    ("src/cli/mod.rs", "parse_memory"),
    // "no document to analyse: ..." and "--strict: ...".
    ("src/cli/mod.rs", "nothing_to_analyse"),
    ("src/cli/mod.rs", "check_strict"),
    // "FILE: skipped input (REASON): ...".
    ("src/stages/fingerprint/mod.rs", "skip_input"),
    // The warning naming a directory's files left out.
    ("src/bytes/read/walk.rs", "note"),
    // "FILE: its first record has no field ...".
    ("src/bytes/read/jsonl.rs", "check_first_record"),
    // Why a document cannot be read again (dedup, explain).
    ("src/store/manifest.rs", "fmt"),
    // "cannot read document N's text ...".
    ("src/commands/explain.rs", "text"),
    // The report's warnings (report.json, report.html, the summary).
    ("src/stages/report/warnings.rs", "of"),
    // An analysis of an earlier layout, and its move to this one's.
    ("src/store/manifest.rs", "earlier"),
    ("src/cli/mod.rs", "migrated"),
    // The notes under eval's tables.
    ("src/commands/eval/mod.rs", "notes"),
    ("src/commands/eval/mod.rs", "shown_bins"),
];

/// Messages no user can meet, each with why: (file, a piece of the
/// message, reason).
const EXEMPT: &[(&str, &str, &str)] = &[
    ("src/store/stats/mod.rs", "cannot encode stats", "serializing the stats structs to JSON cannot fail"),
    ("src/store/stamp.rs", "cannot encode stamp", "serializing a stamp to JSON cannot fail"),
    ("src/store/manifest.rs", "cannot encode manifest.json", "serializing the manifest to JSON cannot fail"),
    ("src/stages/report/mod.rs", "cannot encode report.json", "serializing the report to JSON cannot fail"),
    (
        "src/commands/eval/mod.rs",
        "cannot encode the evaluation",
        "serializing the evaluation to JSON cannot fail",
    ),
    ("src/store/parquet.rs", "bad Parquet schema", "the schema is a constant of the code"),
    ("src/store/parquet.rs", "too few columns given", "the columns are a constant of the code"),
    ("src/stages/pairs/coarse/multi_stage.rs", "two arrays expected", "the code always builds two"),
    (
        "src/stages/fingerprint/mod.rs",
        "no inputs given",
        "the command line requires an input, and an empty list is refused",
    ),
];

/// One message found in the source.
#[derive(Debug)]
struct Message {
    file: String,
    line: usize,
    text: String,
}

#[test]
fn the_troubleshooting_page_lists_every_message() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let page_path = root.join("docs/troubleshooting.md");
    let page = fs::read_to_string(&page_path).unwrap_or_else(|e| panic!("{}: {e}", page_path.display()));
    let page = squeeze(&page);
    let messages = messages_in(root);
    // The scanner still finds what it is for.
    assert!(messages.len() >= 150, "only {} messages found in src/: is the scanner broken?", messages.len());
    for known in [
        "is in use by another overlap command",
        "skipped record ({}): {detail}",
        "cannot create directory {}",
    ] {
        assert!(messages.iter().any(|m| m.text.contains(known)), "the scanner no longer finds {known:?}");
    }
    let mut used = vec![false; EXEMPT.len()];
    let mut missing = String::new();
    for m in &messages {
        if let Some(k) = EXEMPT.iter().position(|(file, piece, _)| m.file == *file && m.text.contains(piece))
        {
            used[k] = true;
            continue;
        }
        let Some(fragment) = longest_fragment(&m.text) else { continue };
        if fragment.chars().count() >= MIN_FRAGMENT && !page.contains(&squeeze(&fragment)) {
            writeln!(missing, "  {}:{}: {:?} (looked for {:?})", m.file, m.line, m.text, fragment).unwrap();
        }
    }
    assert!(
        missing.is_empty(),
        "docs/troubleshooting.md does not list these messages (add each, as printed, with what it means \
         and what to do, or exempt it in tests/docs_messages.rs if no user can meet it):\n{missing}"
    );
    let stale: Vec<_> = EXEMPT.iter().zip(&used).filter(|(_, u)| !**u).map(|(e, _)| e).collect();
    assert!(stale.is_empty(), "exemptions that match no message any more: {stale:?}");
    // A function listed but renamed or moved would drop its messages.
    for (file, name) in MESSAGE_FUNCTIONS {
        let tokens = lex(&fs::read_to_string(root.join(file)).unwrap()).unwrap();
        let defined = tokens
            .windows(2)
            .any(|w| w[0] == Tok::Ident("fn".into()) && w[1] == Tok::Ident(name.to_string()));
        assert!(defined, "MESSAGE_FUNCTIONS names {file}'s {name}, which is not there any more");
    }
}

/// Every message of src/, in file order.
fn messages_in(root: &Path) -> Vec<Message> {
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    files.sort();
    let mut messages = Vec::new();
    for path in files {
        let name = path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
        let source = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let tokens = lex(&source).unwrap_or_else(|e| panic!("{name}: {e}"));
        for (line, text) in scan(&without_test_items(&tokens), &name) {
            messages.push(Message { file: name.clone(), line, text });
        }
    }
    // `bail!("{NAME}")`, `bail!("{}", path::NAME)`: the constant's text.
    let constants = str_constants(root);
    for m in &mut messages {
        if longest_fragment(&m.text).is_none_or(|f| f.chars().count() < MIN_FRAGMENT) {
            let named = m.text.trim_start_matches('{').trim_end_matches('}');
            if let Some(text) = constants.get(named) {
                m.text = text.clone();
            }
        }
    }
    messages
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `const NAME: &str = "...";` of every file, by name.
fn str_constants(root: &Path) -> BTreeMap<String, String> {
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let mut constants = BTreeMap::new();
    for path in files {
        let tokens = lex(&fs::read_to_string(&path).unwrap()).unwrap();
        for w in tokens.windows(7) {
            if let [
                Tok::Ident(c),
                Tok::Ident(name),
                Tok::Punct(':'),
                Tok::Punct('&'),
                Tok::Ident(ty),
                Tok::Punct('='),
                Tok::Str(text, _),
            ] = w
                && c == "const"
                && ty == "str"
            {
                constants.insert(name.clone(), text.clone());
            }
        }
    }
    constants
}

/// The messages among `tokens` of the file `name`: (line, format string).
fn scan(tokens: &[Tok], name: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let ident = |i: usize, want: &str| matches!(tokens.get(i), Some(Tok::Ident(s)) if s == want);
    let punct = |i: usize, want: char| matches!(tokens.get(i), Some(Tok::Punct(c)) if *c == want);
    let mut i = 0;
    while i < tokens.len() {
        // bail!("...") and anyhow!("...").
        if (ident(i, "bail") || ident(i, "anyhow"))
            && punct(i + 1, '!')
            && punct(i + 2, '(')
            && let Some(Tok::Str(text, line)) = tokens.get(i + 3)
        {
            // `bail!("{}", path::NAME)` stands for the constant NAME.
            let args = &tokens[i + 4..closing(tokens, i + 2)];
            let path = args.len() >= 2
                && args[0] == Tok::Punct(',')
                && args[1..].iter().all(|t| matches!(t, Tok::Ident(_) | Tok::Punct(':')));
            match args.last() {
                Some(Tok::Ident(constant)) if text == "{}" && path => {
                    found.push((*line, format!("{{{constant}}}")))
                }
                _ => found.push((*line, text.clone())),
            }
        }
        // .warn(...), .context(...), .with_context(...): their first string.
        if punct(i, '.')
            && (ident(i + 1, "warn") || ident(i + 1, "context") || ident(i + 1, "with_context"))
            && punct(i + 2, '(')
        {
            let end = closing(tokens, i + 2);
            if let Some(Tok::Str(text, line)) = tokens[i + 3..end].iter().find(|t| matches!(t, Tok::Str(..)))
            {
                found.push((*line, text.clone()));
            }
        }
        // Functions that build messages: every string in their bodies.
        if ident(i, "fn")
            && let Some(Tok::Ident(f)) = tokens.get(i + 1)
            && (f == "from_str" || MESSAGE_FUNCTIONS.contains(&(name, f.as_str())))
            && let Some(open) = (i + 2..tokens.len()).find(|&k| punct(k, '{') || punct(k, ';'))
            && punct(open, '{')
        {
            let end = closing(tokens, open);
            for t in &tokens[open..end] {
                if let Tok::Str(text, line) = t {
                    found.push((*line, text.clone()));
                }
            }
        }
        i += 1;
    }
    found.sort();
    found.dedup();
    found
}

/// The index of the bracket that closes the one at `open`.
fn closing(tokens: &[Tok], open: usize) -> usize {
    let mut depth = 0usize;
    for (k, t) in tokens.iter().enumerate().skip(open) {
        match t {
            Tok::Punct('(' | '[' | '{') => depth += 1,
            Tok::Punct(')' | ']' | '}') => {
                depth -= 1;
                if depth == 0 {
                    return k;
                }
            }
            _ => {}
        }
    }
    tokens.len()
}

/// `tokens` without the items marked `#[cfg(test)]` (test modules and
/// functions).
fn without_test_items(tokens: &[Tok]) -> Vec<Tok> {
    let is = |t: &Tok, want: &str| match t {
        Tok::Ident(s) => s == want,
        Tok::Punct(c) => want.len() == 1 && want.starts_with(*c),
        Tok::Str(..) | Tok::Other => false,
    };
    let cfg_test = ["#", "[", "cfg", "(", "test", ")", "]"];
    let mut kept = Vec::with_capacity(tokens.len());
    let mut i = 0;
    while i < tokens.len() {
        if tokens.len() - i >= cfg_test.len()
            && cfg_test.iter().enumerate().all(|(k, w)| is(&tokens[i + k], w))
        {
            // The item ends at its first `;` or with the block it opens.
            let mut k = i + cfg_test.len();
            while k < tokens.len() && !is(&tokens[k], "{") && !is(&tokens[k], ";") {
                k += 1;
            }
            i = if k < tokens.len() && is(&tokens[k], "{") { closing(tokens, k) + 1 } else { k + 1 };
            continue;
        }
        kept.push(tokens[i].clone());
        i += 1;
    }
    kept
}

/// The longest literal piece of a format string, between its `{...}`
/// placeholders (`{{` and `}}` are braces), trimmed of spaces and
/// punctuation; `None` when it has none.
fn longest_fragment(format: &str) -> Option<String> {
    let mut pieces = vec![String::new()];
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                pieces.last_mut().unwrap().push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                pieces.last_mut().unwrap().push('}');
            }
            '{' => {
                for c in chars.by_ref() {
                    if c == '}' {
                        break;
                    }
                }
                pieces.push(String::new());
            }
            c => pieces.last_mut().unwrap().push(c),
        }
    }
    pieces
        .iter()
        .map(|p| p.trim_matches(|c: char| c.is_whitespace() || c.is_ascii_punctuation()).to_string())
        .filter(|p| !p.is_empty())
        .max_by_key(|p| p.chars().count())
}

/// `text` with every run of whitespace made one space.
fn squeeze(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A token of Rust source, as far as this test needs: a string literal
/// is its value (escapes undone) and the line it starts on.
#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Punct(char),
    Str(String, usize),
    /// Numbers, char literals, lifetimes.
    Other,
}

/// The tokens of `src`.
fn lex(src: &str) -> Result<Vec<Tok>, String> {
    let chars: Vec<char> = src.chars().collect();
    let mut tokens = Vec::new();
    let mut line = 1;
    let mut i = 0;
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            loop {
                match (at(i), at(i + 1)) {
                    ('\0', _) => return Err(format!("line {line}: unclosed comment")),
                    ('/', '*') => (depth, i) = (depth + 1, i + 2),
                    ('*', '/') => {
                        (depth, i) = (depth - 1, i + 2);
                        if depth == 0 {
                            break;
                        }
                    }
                    ('\n', _) => (line, i) = (line + 1, i + 1),
                    _ => i += 1,
                }
            }
        } else if let Some(raw) = raw_string_start(&chars, i) {
            // r"...", r#"..."#, br"...", with `hashes` #s.
            let (quote, hashes) = raw;
            let start_line = line;
            let mut k = quote + 1;
            let mut text = String::new();
            loop {
                if k >= chars.len() {
                    return Err(format!("line {start_line}: unclosed raw string"));
                }
                if chars[k] == '"' && (0..hashes).all(|h| at(k + 1 + h) == '#') {
                    break;
                }
                if chars[k] == '\n' {
                    line += 1;
                }
                text.push(chars[k]);
                k += 1;
            }
            tokens.push(Tok::Str(text, start_line));
            i = k + 1 + hashes;
        } else if c == '"' || (c == 'b' && at(i + 1) == '"') || (c == 'c' && at(i + 1) == '"') {
            let start_line = line;
            let mut k = if c == '"' { i + 1 } else { i + 2 };
            let mut text = String::new();
            loop {
                match at(k) {
                    '\0' if k >= chars.len() => return Err(format!("line {start_line}: unclosed string")),
                    '"' => break,
                    '\\' => {
                        let (value, used) = escape(&chars[k..]).map_err(|e| format!("line {line}: {e}"))?;
                        line += chars[k..k + used].iter().filter(|&&c| c == '\n').count();
                        text.extend(value);
                        k += used;
                    }
                    ch => {
                        if ch == '\n' {
                            line += 1;
                        }
                        text.push(ch);
                        k += 1;
                    }
                }
            }
            tokens.push(Tok::Str(text, start_line));
            i = k + 1;
        } else if c == '\'' || (c == 'b' && at(i + 1) == '\'') {
            // A char literal ('a', '\n', '\u{7f}', b'x') or a lifetime ('a).
            let q = if c == 'b' { i + 1 } else { i };
            if at(q + 1) == '\\' {
                let (_, used) = escape(&chars[q + 1..]).map_err(|e| format!("line {line}: {e}"))?;
                i = q + 1 + used + 1;
            } else if at(q + 2) == '\'' {
                i = q + 3;
            } else {
                i = q + 1;
                while at(i).is_alphanumeric() || at(i) == '_' {
                    i += 1;
                }
            }
            tokens.push(Tok::Other);
        } else if c.is_alphabetic() || c == '_' {
            if c == 'r' && at(i + 1) == '#' && (at(i + 2).is_alphabetic() || at(i + 2) == '_') {
                i += 2; // r#ident
            }
            let start = i;
            while at(i).is_alphanumeric() || at(i) == '_' {
                i += 1;
            }
            tokens.push(Tok::Ident(chars[start..i].iter().collect()));
        } else if c.is_ascii_digit() {
            while at(i).is_alphanumeric() || at(i) == '_' || (at(i) == '.' && at(i + 1).is_ascii_digit()) {
                i += 1;
            }
            tokens.push(Tok::Other);
        } else {
            tokens.push(Tok::Punct(c));
            i += 1;
        }
    }
    Ok(tokens)
}

/// Where a raw string starting at `i` has its opening quote, and how many
/// `#`s close it; `None` when none starts there.
fn raw_string_start(chars: &[char], i: usize) -> Option<(usize, usize)> {
    // Not the tail of an identifier such as `bar"`.
    if i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_') {
        return None;
    }
    let mut k = i;
    if chars.get(k) == Some(&'b') || chars.get(k) == Some(&'c') {
        k += 1;
    }
    if chars.get(k) != Some(&'r') {
        return None;
    }
    k += 1;
    let hashes = chars[k..].iter().take_while(|&&c| c == '#').count();
    (chars.get(k + hashes) == Some(&'"')).then_some((k + hashes, hashes))
}

/// The value of the escape at the start of `s` (which starts with `\`)
/// and how many chars it takes; a line continuation (`\` before a line
/// end) is no value and takes the whitespace after it.
fn escape(s: &[char]) -> Result<(Option<char>, usize), String> {
    let value = match s.get(1) {
        Some('n') => '\n',
        Some('r') => '\r',
        Some('t') => '\t',
        Some('0') => '\0',
        Some('\\') => '\\',
        Some('\'') => '\'',
        Some('"') => '"',
        Some('x') => {
            let hex: String = s.iter().skip(2).take(2).collect();
            let n = u8::from_str_radix(&hex, 16).map_err(|_| format!("bad escape \\x{hex}"))?;
            return Ok((Some(char::from(n)), 4));
        }
        Some('u') => {
            let close = s.iter().position(|&c| c == '}').ok_or("unclosed \\u{...}")?;
            let hex: String = s[3..close].iter().filter(|&&c| c != '_').collect();
            let n = u32::from_str_radix(&hex, 16).map_err(|_| format!("bad escape \\u{{{hex}}}"))?;
            return Ok((char::from_u32(n), close + 1));
        }
        Some('\n') | Some('\r') => {
            let skipped = s[1..].iter().take_while(|c| c.is_whitespace()).count();
            return Ok((None, 1 + skipped));
        }
        other => return Err(format!("unknown escape {other:?}")),
    };
    Ok((Some(value), 2))
}

#[test]
fn the_lexer_reads_rust_strings_as_rustc_does() {
    let src = r####"
        // bail!("in a comment")
        /* bail!("in /* a nested */ comment") */
        let c = '"'; let l: &'static str = "a"; let e = '\'';
        bail!("tab\there \"quoted\" \u{e9}\x41 brace {{ and \
               continued");
        anyhow!(r#"raw "with" quotes"#);
        x.warn(&format!("{n} warned"));
        #[cfg(test)]
        mod tests { fn f() { bail!("a test's"); } }
        fn from_str(s: &str) -> Result<X, String> { Err(format!("'{s}' is bad")) }
    "####;
    let tokens = lex(src).unwrap();
    let found: Vec<String> = scan(&without_test_items(&tokens), "x.rs").into_iter().map(|(_, t)| t).collect();
    assert_eq!(
        found,
        [
            "tab\there \"quoted\" \u{e9}A brace {{ and continued",
            "raw \"with\" quotes",
            "{n} warned",
            "'{s}' is bad"
        ]
    );
    let lines: Vec<usize> = scan(&tokens, "x.rs").into_iter().map(|(l, _)| l).collect();
    assert_eq!(lines, [5, 7, 8, 10, 11]);
    assert_eq!(
        longest_fragment("{} line {line}: doc_id {} does not follow {last}").unwrap(),
        "does not follow"
    );
    assert_eq!(longest_fragment("a {{literal}} brace {x}").unwrap(), "a {literal} brace");
    assert_eq!(longest_fragment("{}: {why}"), None);
}
