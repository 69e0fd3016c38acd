use std::io;
use std::process::ExitCode;

use clap::Parser;
use clap::error::{ContextKind, ContextValue, ErrorKind};

fn main() -> ExitCode {
    let cli = match overlap::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            return ExitCode::from(2);
        }
        Err(e) => {
            overlap::base::progress::line(&one_line_usage_error(&e));
            return ExitCode::from(2);
        }
    };
    match overlap::cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        // Stopped by Ctrl-C or SIGTERM where it writes, what it left
        // removed: the shell's code for the signal, 128 + its number.
        Err(_) if let Some(signal) = overlap::base::interrupt::received() => {
            overlap::base::progress::line("interrupted; run the same command again to resume");
            ExitCode::from(128 + signal as u8)
        }
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) if e.is::<overlap::cli::Strict>() => {
            overlap::base::progress::line(&format!("{e}"));
            ExitCode::from(3)
        }
        Err(e) => {
            overlap::base::progress::line(&format!("{e:#}"));
            ExitCode::from(2)
        }
    }
}

/// clap's error as one line: its first paragraph (which for a missing
/// argument spans lines, naming the argument on the second) without the
/// `error: ` prefix, and a pointer to `--help`. Scripts get one line,
/// people get the way to more.
fn one_line_usage_error(e: &clap::Error) -> String {
    let rendered = e.render().to_string();
    let first: Vec<&str> = rendered
        .lines()
        .map(str::trim)
        .skip_while(|l| l.is_empty())
        .take_while(|l| !l.is_empty() && !l.starts_with("Usage:"))
        .collect();
    let text = first.join(" ");
    let text = text.strip_prefix("error: ").unwrap_or(&text);
    let text = if text.is_empty() { "invalid arguments" } else { text };
    match suggestion(e) {
        Some(similar) => format!("{text}; did you mean {similar}? (see --help)"),
        None => format!("{text} (see --help)"),
    }
}

/// The subcommand, flag or value clap finds most like a mistyped one
/// (`rnu`, `--thread`), which its later paragraphs (dropped above) give.
fn suggestion(e: &clap::Error) -> Option<String> {
    [ContextKind::SuggestedSubcommand, ContextKind::SuggestedArg, ContextKind::SuggestedValue]
        .into_iter()
        .find_map(|kind| match e.get(kind)? {
            ContextValue::String(s) => Some(format!("'{s}'")),
            ContextValue::Strings(v) if !v.is_empty() => {
                Some(v.iter().map(|s| format!("'{s}'")).collect::<Vec<_>>().join(" or "))
            }
            _ => None,
        })
}

/// A closed pipe on stdout (`overlap dump DIR | head`) ends the run quietly.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().filter_map(|c| c.downcast_ref::<io::Error>()).any(|io| io.kind() == io::ErrorKind::BrokenPipe)
}
