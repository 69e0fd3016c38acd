use std::io;
use std::process::ExitCode;

use clap::Parser;
use clap::error::ErrorKind;

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
            eprintln!("overlap: {}", one_line_usage_error(&e));
            return ExitCode::from(2);
        }
    };
    match overlap::cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("overlap: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// clap's first error line without its `error: ` prefix, plus a pointer to
/// `--help`: scripts get one line, people get the way to more.
fn one_line_usage_error(e: &clap::Error) -> String {
    let rendered = e.render().to_string();
    let first = rendered.lines().find(|l| !l.trim().is_empty()).unwrap_or("invalid arguments");
    let first = first.strip_prefix("error: ").unwrap_or(first);
    format!("{first} (see --help)")
}

/// A closed pipe on stdout (`overlap dump DIR | head`) ends the run quietly.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().filter_map(|c| c.downcast_ref::<io::Error>()).any(|io| io.kind() == io::ErrorKind::BrokenPipe)
}
