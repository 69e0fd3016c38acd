//! The one reporting handle: progress bars and warnings on stderr.
//!
//! Stages never print; they call this handle, which the command line owns.
//! Bars are drawn only when stderr is a terminal, so scripts and schedulers
//! see nothing but warnings and errors; `--quiet` silences warnings too.
//!
//! Nothing written to stderr can stop a run: a closed or full stderr
//! (`overlap run ... 2>&1 | head -1`) loses the messages, never the
//! outputs, as a closed stdout does in ripgrep.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

#[derive(Clone, Debug)]
pub struct Progress {
    bars: bool,
    warnings: bool,
    /// Stage summaries on stderr even when it is not a terminal
    /// (`--stats`).
    summaries: bool,
}

impl Progress {
    /// Bars when stderr is a terminal and not quiet; warnings unless quiet.
    pub(crate) fn new(quiet: bool) -> Progress {
        Progress { bars: !quiet && std::io::stderr().is_terminal(), warnings: !quiet, summaries: false }
    }

    /// Also prints each stage's summary, terminal or not, quiet or not:
    /// for logs of scheduled runs.
    pub(crate) fn with_summaries(mut self, on: bool) -> Progress {
        self.summaries = on;
        self
    }

    /// A handle that reports nothing (tests, library use).
    pub fn silent() -> Progress {
        Progress { bars: false, warnings: false, summaries: false }
    }

    /// A bar over `total` bytes (or a spinner when the total is unknown).
    pub(crate) fn bytes(&self, stage: &str, total: Option<u64>) -> ProgressBar {
        self.bar(stage, total, "{bytes}/{total_bytes} ({bytes_per_sec}, {eta})", "{bytes} ({bytes_per_sec})")
    }

    /// A bar over `total` items.
    pub(crate) fn items(&self, stage: &str, total: u64, unit: &str) -> ProgressBar {
        let with = format!("{{pos}}/{{len}} {unit}");
        self.bar(stage, Some(total), &with, &with)
    }

    fn bar(&self, stage: &str, total: Option<u64>, counted: &str, open: &str) -> ProgressBar {
        if !self.bars {
            return ProgressBar::hidden();
        }
        let bar = match total {
            Some(n) => ProgressBar::with_draw_target(Some(n), ProgressDrawTarget::stderr()),
            None => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
        };
        let template = match total {
            Some(_) => format!("{{prefix:>11}} [{{bar:30}}] {counted}"),
            None => format!("{{prefix:>11}} {{spinner}} {open}"),
        };
        if let Ok(style) = ProgressStyle::with_template(&template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_prefix(stage.to_string());
        bar.enable_steady_tick(Duration::from_millis(200));
        bar
    }

    /// A one-line warning: `overlap: warning: ...`.
    pub(crate) fn warn(&self, message: &str) {
        if self.warnings {
            line(&format!("warning: {message}"));
        }
    }

    /// A one-line message about what was done to the user's files beyond
    /// the command's outputs (an analysis moved to this overlap's layout),
    /// shown wherever warnings are: a scheduler's log keeps it.
    pub(crate) fn tell(&self, message: &str) {
        if self.warnings {
            line(message);
        }
    }

    /// A one-line note about what a stage did (e.g. that it was up to date);
    /// shown only on a terminal.
    pub(crate) fn note(&self, message: &str) {
        if self.bars {
            line(message);
        }
    }

    /// A stage's summary: on a terminal, or everywhere with `--stats`.
    pub(crate) fn summary(&self, message: &str) {
        if self.bars || self.summaries {
            line(message);
        }
    }
}

/// `n` and the noun for it: `1 document`, `2 documents`.
pub(crate) fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Writes `overlap: {message}` and a newline to stderr, ignoring a failed
/// write: `eprintln!` panics when stderr is closed, and a message nobody
/// can read is no reason to stop.
pub fn line(message: &str) {
    let _ = writeln!(std::io::stderr().lock(), "overlap: {message}");
}
