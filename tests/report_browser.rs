//! report.html in a real browser: `scripts/check_report_browser.py` renders
//! it in headless Chromium at 700 and 1400 pixels and checks the page its
//! script made (at 1400, the headline figures and the first mirror set on
//! the first screen; a click on a header sorts the rows, the filter box hides
//! rows, a group opens to its members, every URL is a link with
//! `rel="noreferrer"`, no table is wider than the window). Skipped, saying
//! so, where Chromium is not installed (Debian: `apt-get install
//! chromium`); `.ci/run` installs it, and there the skip is a failure.

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::*;

/// Chromium's command, if one is on the `PATH`, under the names the script
/// looks for.
fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| ["chromium", "chromium-browser", "google-chrome"].map(|name| dir.join(name)))
        .find(|p| p.is_file())
}

#[test]
fn the_report_sorts_filters_and_opens_its_groups_at_700_and_1400_pixels() {
    if chromium().is_none() {
        skip_without_peer("chromium is not installed (apt-get install chromium)");
        return;
    }
    let tmp = tempdir();
    let out = tmp.path().join("out");
    // Groups, mirrors and aliases from the report's test crawl, and a
    // damaged WARC file for the data quality's tables.
    overlap_ok([
        "run",
        "testdata/report/crawl.jsonl",
        "testdata/corrupt.warc.gz",
        "--chunk",
        "lines:4",
        "-T",
        "3",
        "-q",
        "--out",
        &arg(&out),
    ]);
    let done = Command::new("python3")
        .arg(root().join("scripts/check_report_browser.py"))
        .arg(&out)
        .args(["--widths", "700,1400"])
        .output()
        .expect("python3 runs");
    let said = format!("{}{}", String::from_utf8_lossy(&done.stdout), String::from_utf8_lossy(&done.stderr));
    assert!(done.status.success(), "scripts/check_report_browser.py:\n{said}");
    for width in ["700 px: ", "1400 px: "] {
        let line = said.lines().find(|l| l.starts_with(width)).unwrap_or_default();
        assert!(line.contains("sorted 11 groups by documents both ways"), "{said}");
    }
    assert!(said.contains("opened group 28 to its 4 members listed"), "{said}");
    assert!(said.contains("first screen: headline figures and the first mirror set in view"), "{said}");
}
