//! What the command line says about itself outside `--help`: shell
//! completion scripts and man pages. Both are generated from the clap
//! definition in [`crate::cli`] when asked for, not kept as files, so
//! they cannot drift from the flags the binary takes.

use std::io::{self, Write};
use std::path::Path;

use anyhow::Context;
use clap_complete::Shell;
use clap_mangen::Man;
use clap_mangen::roff::{Roff, bold, roman};

/// Writes `shell`'s completion script for `cmd` to `out`.
///
/// clap_complete panics when a write fails, so the script is made in
/// memory first: a closed pipe (`overlap completions bash | head`) is then
/// an error that `main` ends on quietly, not a panic.
pub fn completions(shell: Shell, cmd: clap::Command, out: &mut impl Write) -> io::Result<()> {
    let mut cmd = without_hidden_commands(cmd);
    let name = cmd.get_name().to_string();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, name, &mut script);
    out.write_all(&script)?;
    out.flush()
}

/// `cmd` without its hidden subcommands (`stop-texts`, which the Spark job
/// runs), which clap_complete would otherwise offer at every Tab: it does
/// not look at `hide`, and clap cannot remove a subcommand, so the command
/// is put together again from its parts. What is copied is all a
/// completion script shows; the rest (usage, help layout) it never does.
fn without_hidden_commands(cmd: clap::Command) -> clap::Command {
    let mut visible = clap::Command::new(cmd.get_name().to_string())
        .subcommand_required(cmd.is_subcommand_required_set())
        .args(cmd.get_arguments().cloned())
        .subcommands(cmd.get_subcommands().filter(|c| !c.is_hide_set()).cloned());
    if let Some(version) = cmd.get_version() {
        visible = visible.version(version.to_string());
    }
    if let Some(about) = cmd.get_about() {
        visible = visible.about(about.clone());
    }
    visible
}

/// Writes overlap(1), the page of the command itself, to `out`: on
/// standard output, as `rg --generate man` does, it can be read at once
/// (`overlap man | man -l -`) or redirected wherever a package wants it.
pub fn page(cmd: clap::Command, out: &mut impl Write) -> io::Result<()> {
    let (_, roff) = pages(cmd).into_iter().next().expect("overlap(1) is the first page");
    out.write_all(roff.as_bytes())?;
    out.flush()
}

/// Writes overlap(1) and one page per command (overlap-run(1), ...) into
/// `dir`, created if needed, as git and cargo do: `man overlap-run` then
/// finds a command's flags without paging through every other command's.
/// A failure names the file.
pub fn write_pages(cmd: clap::Command, dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for (name, roff) in pages(cmd) {
        let path = dir.join(name);
        std::fs::write(&path, roff).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// Every page with its file name: overlap.1 first, then one per visible
/// command in the order `--help` lists them. The command is built once, as
/// clap_mangen's own `generate_to` does, so that each subcommand carries
/// its display name (`overlap-run`) and the global flags.
fn pages(cmd: clap::Command) -> Vec<(String, String)> {
    // clap's `help` subcommand has no page of its own to point to.
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    let version = cmd.get_version().unwrap_or_default().to_string();
    let commands: Vec<clap::Command> = cmd.get_subcommands().filter(|c| !c.is_hide_set()).cloned().collect();
    let mut pages = vec![render(cmd, &version, exit_status(Roff::new()))];
    pages.extend(commands.into_iter().map(|c| render(c, &version, see_also(exit_status(Roff::new())))));
    pages
}

/// One page: clap_mangen's sections, then `extra`.
///
/// The version goes in the footer (`.TH`'s source, "overlap 0.1.0"), where
/// man pages keep it, rather than in clap_mangen's VERSION section, which
/// man-pages(7) does not have; with that section left out, the sections
/// man-pages(7) puts last (EXIT STATUS, SEE ALSO) end the page.
fn render(cmd: clap::Command, version: &str, extra: Roff) -> (String, String) {
    let name = cmd.get_display_name().unwrap_or_else(|| cmd.get_name()).to_string();
    // An empty date would be written as nothing, which moves the source
    // into the date's place on the `.TH` line; `""` keeps it an argument.
    // There is no date, so that pages made by one binary are the same bytes.
    let man = Man::new(cmd.version(None::<&str>))
        .title(name.to_uppercase())
        .date(r#""""#)
        .source(format!("overlap {version}"));
    let mut page = Vec::new();
    man.render(&mut page).expect("writing to a Vec cannot fail");
    let mut page = String::from_utf8(page).expect("roff from UTF-8 help text is UTF-8");
    // Every rendered roff document starts with the same apostrophe
    // definitions; the page has them already.
    let preamble = Roff::new().render();
    let extra = extra.render();
    page.push_str(extra.strip_prefix(&preamble).unwrap_or(&extra));
    (man.get_filename(), page)
}

/// The EXIT STATUS every page ends with (before a command's SEE ALSO): the
/// contract scripts and schedulers rely on, the same for every command.
fn exit_status(mut roff: Roff) -> Roff {
    roff.control("SH", ["EXIT STATUS"]);
    for (code, meaning) in [
        ("0", "Success."),
        (
            "2",
            "An error: a bad flag, a missing input, an unwritable output, an output directory \
             another command is writing, a damaged analysis, inputs that give no document to \
             analyse. One line on standard error says what.",
        ),
        (
            "3",
            "With --strict (run, fingerprint): every output was written, but a record was \
             skipped as corrupt, an input was skipped, or no document was read this time (a \
             chain whose pages were all kept from before).",
        ),
        (
            "130, 143",
            "Stopped by Ctrl-C (SIGINT) or SIGTERM: what the command had half made is removed, \
             the outputs of the stages that finished stay, and the same command again resumes.",
        ),
    ] {
        roff.control("TP", []).text([bold(code)]).text([roman(meaning)]);
    }
    roff
}

/// A command's SEE ALSO, after `roff`: the page of the whole tool, with the
/// flags every command takes.
fn see_also(mut roff: Roff) -> Roff {
    roff.control("SH", ["SEE ALSO"]).text([bold("overlap"), roman("(1)")]);
    roff
}
