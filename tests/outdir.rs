//! The output directory as a whole: its lock, what a failed command leaves,
//! and the inputs a command is given (--inputs-from).

mod common;

use std::fs;
use std::path::Path;
use std::process::Stdio;

use common::*;

const SAMPLE: &str = "testdata/sample.warc.gz";

fn assert_refused(args: &[String]) {
    let out = overlap(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}", describe(args, &out));
    assert_eq!(stderr.lines().count(), 1, "one line\n{}", describe(args, &out));
    assert!(stderr.contains(&format!("process {}", std::process::id())), "names the holder\n{stderr}");
}

/// `len` bytes of no format an input can be told to have.
fn noise(len: u32) -> Vec<u8> {
    (0..len).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect()
}

/// Every file of an analysis but its lock, stats.json included.
fn analysis_files(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut files = out_files(dir);
    files.insert("stats.json".into(), fs::read(dir.join("stats.json")).unwrap());
    files
}

#[test]
fn a_second_command_on_a_locked_directory_exits_2_naming_the_holder() {
    let tmp = tempdir();
    let dir = tmp.path().join("out");
    let holder = hold_lock(&dir);
    let run = vec!["run".into(), SAMPLE.into(), "--out".into(), arg(&dir)];
    assert_refused(&run);
    for cmd in ["exact", "pairs", "report"] {
        assert_refused(&[cmd.into(), arg(&dir)]);
    }
    assert_refused(&["fingerprint".into(), SAMPLE.into(), "--out".into(), arg(&dir)]);
    // Nothing was written while another held the lock.
    let names: Vec<_> = fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, [".overlap"]);
    drop(holder);
    overlap_ok(&run);
    assert!(dir.join("overlap.csv").exists());
}

/// A command that reads an analysis (explain, dedup, eval, --previous)
/// and finds it unfinished while another command writes it says the
/// directory is in use, naming the writer, rather than that it is not an
/// analysis; once the writer is gone, it says what is missing.
#[test]
fn a_reader_of_an_analysis_being_written_says_it_is_in_use() {
    let tmp = tempdir();
    let (fresh, redone) = (tmp.path().join("fresh"), tmp.path().join("redone"));
    overlap_ok(["run", SAMPLE, "--out", &arg(&redone), "-q"]);
    // As a command redoing the exact stage leaves it: its stamp removed.
    fs::remove_file(redone.join(".overlap/exact.stamp")).unwrap();
    let new = arg(&tmp.path().join("new"));
    let readers = |dir: &Path| -> Vec<Vec<String>> {
        let d = arg(dir);
        vec![
            vec!["explain".into(), d.clone(), "0".into(), "1".into()],
            vec!["dedup".into(), d.clone(), "-o".into(), arg(&tmp.path().join("kept.jsonl"))],
            vec!["eval".into(), d.clone(), d.clone()],
            vec!["run".into(), SAMPLE.into(), "--out".into(), new.clone(), "--previous".into(), d.clone()],
        ]
    };
    for dir in [&fresh, &redone] {
        let holder = hold_lock(dir);
        for args in readers(dir) {
            let out = overlap(&args);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{}", describe(&args, &out));
            assert_eq!(stderr.lines().count(), 1, "{}", describe(&args, &out));
            assert!(
                stderr.contains("is in use") && stderr.contains(&format!("process {}", std::process::id())),
                "{}",
                describe(&args, &out)
            );
        }
        drop(holder);
        for args in readers(dir) {
            let out = overlap(&args);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{}", describe(&args, &out));
            assert!(!stderr.contains("is in use"), "{}", describe(&args, &out));
        }
    }
}

#[test]
fn the_previous_analysis_is_read_without_its_lock() {
    let tmp = tempdir();
    let old = tmp.path().join("old");
    overlap_ok(["run", SAMPLE, "--out", &arg(&old), "-q"]);
    let holder = hold_lock(&old);
    let new = tmp.path().join("new");
    overlap_ok(["run", SAMPLE, "--out", &arg(&new), "--previous", &arg(&old), "-q"]);
    drop(holder);
}

#[test]
fn a_failed_run_into_a_new_directory_leaves_nothing() {
    let tmp = tempdir();
    let junk = tmp.path().join("random.bin");
    fs::write(&junk, noise(100_000)).unwrap();
    let dir = tmp.path().join("out");
    let out = overlap(["run", &arg(&junk), "--out", &arg(&dir)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!dir.exists(), "the directory the run made is gone");
}

#[test]
fn a_failed_stage_leaves_no_partial_files_or_scratch_and_earlier_stages_stay() {
    let tmp = tempdir();
    let dir = tmp.path().join("out");
    overlap_ok(["run", SAMPLE, "--out", &arg(&dir), "-q"]);
    let before = analysis_files(&dir);
    // A later command that fails: its input is missing.
    let out = overlap(["run", "testdata/no-such.warc.gz", "--out", &arg(&dir)]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(analysis_files(&dir), before, "the complete analysis is unchanged");
    // A chain step that fails leaves the analysis it reads unchanged and
    // nothing of its own.
    let junk = tmp.path().join("random.bin");
    fs::write(&junk, vec![0x5a; 10_000]).unwrap();
    let next = tmp.path().join("next");
    let out = overlap([
        "run",
        &arg(&junk),
        "--input-format",
        "jsonl",
        "--out",
        &arg(&next),
        "--previous",
        &arg(&dir),
    ]);
    let _ = out;
    assert_eq!(analysis_files(&dir), before, "the previous analysis is unchanged");
    let leftovers: Vec<String> = if next.exists() {
        out_files(&next).into_keys().filter(|n| n.ends_with(".partial") || n.contains("tmp-")).collect()
    } else {
        Vec::new()
    };
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// A run into an existing analysis whose inputs cannot all be read (one
/// missing, or of a format that cannot be told, given as a file or on
/// standard input, first or after a good one) fails before it touches an
/// output: one line naming the input, exit 2, and every file of the
/// analysis as it was, byte for byte.
#[test]
fn a_run_whose_input_cannot_be_read_leaves_the_analysis_as_it_was() {
    let tmp = tempdir();
    let dir = tmp.path().join("out");
    overlap_ok(["run", SAMPLE, "--out", &arg(&dir), "-q"]);
    let before = analysis_files(&dir);
    let junk = tmp.path().join("random.bin");
    let bytes = noise(10_000);
    fs::write(&junk, &bytes).unwrap();
    let missing = tmp.path().join("no-such.warc.gz");
    let cases: [(&str, &[&str], &str); 5] = [
        ("run", &[&arg(&junk)], "random.bin"),
        ("run", &[SAMPLE, &arg(&junk)], "random.bin"),
        ("run", &[SAMPLE, &arg(&missing)], "no-such.warc.gz"),
        ("fingerprint", &[&arg(&junk), SAMPLE], "random.bin"),
        ("run", &[SAMPLE, "-"], "standard input"),
    ];
    for (command, inputs, named) in cases {
        let mut args = vec![command.to_string()];
        args.extend(inputs.iter().map(|s| s.to_string()));
        args.extend(["--out".into(), arg(&dir)]);
        let out = overlap_stdin(&args, &bytes);
        let what = describe(&args, &out);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{what}");
        assert_eq!(stderr.lines().count(), 1, "{what}");
        assert!(stderr.contains(named), "names the input\n{what}");
        assert!(analysis_files(&dir) == before, "the analysis is unchanged\n{what}");
    }
}

#[test]
fn stray_scratch_and_partial_files_are_removed_by_the_next_command() {
    let tmp = tempdir();
    let dir = tmp.path().join("out");
    overlap_ok(["run", SAMPLE, "--out", &arg(&dir), "-q"]);
    fs::create_dir_all(dir.join(".overlap/tmp-x/deep")).unwrap();
    fs::write(dir.join(".overlap/tmp-x/deep/run"), b"spilled").unwrap();
    fs::write(dir.join("overlap.csv.partial"), b"half").unwrap();
    fs::write(dir.join("records/fprint-docid/part-00000.fpd.partial"), b"half").unwrap();
    // A user's files beside the tables are not the tool's, whatever their
    // names.
    fs::write(dir.join("notes.partial"), b"mine").unwrap();
    fs::write(dir.join("crawl.warc.gz.partial"), b"mine").unwrap();
    // Every stage is up to date: only the leftovers go.
    overlap_ok(["report", &arg(&dir), "-q"]);
    assert!(!dir.join(".overlap/tmp-x").exists());
    assert!(!dir.join("overlap.csv.partial").exists());
    assert!(!dir.join("records/fprint-docid/part-00000.fpd.partial").exists());
    assert_eq!(fs::read(dir.join("notes.partial")).unwrap(), b"mine");
    assert_eq!(fs::read(dir.join("crawl.warc.gz.partial")).unwrap(), b"mine");
    // A run with an input named so in the directory reads it and keeps it.
    fs::copy(SAMPLE, dir.join("input.partial")).unwrap();
    overlap_ok([
        "run",
        &arg(&dir.join("input.partial")),
        "--input-format",
        "warc",
        "--out",
        &arg(&dir),
        "-q",
    ]);
    assert_eq!(fs::read(dir.join("input.partial")).unwrap(), fs::read(root().join(SAMPLE)).unwrap());
}

/// An input among the files the analysis writes, or in its own folders,
/// is refused before anything is touched; so is an output directory
/// inside the previous analysis, which is never written to.
#[test]
fn inputs_inside_the_tools_own_files_and_an_out_inside_previous_are_refused() {
    let tmp = tempdir();
    let dir = tmp.path().join("out");
    overlap_ok(["run", SAMPLE, "--out", &arg(&dir), "-q"]);
    let before = analysis_files(&dir);
    for inside in [
        "records/fprint-docid/crawl.warc.gz",
        "records/crawl.warc.gz",
        "parquet/crawl.warc.gz",
        ".overlap/crawl.warc.gz",
        "docs.csv",
    ] {
        let input = dir.join(inside);
        if !inside.ends_with(".csv") {
            fs::create_dir_all(input.parent().unwrap()).unwrap();
            fs::copy(SAMPLE, &input).unwrap();
        }
        let copy = fs::read(&input).unwrap();
        // Through another spelling of the directory too.
        let spelled = tmp.path().join(".").join("out").join(inside);
        for given in [&input, &spelled] {
            let args = ["run", &arg(given), "--input-format", "warc", "--out", &arg(&dir)];
            assert_usage_error(&args, &["writes", &arg(&dir)]);
            assert_eq!(fs::read(&input).unwrap(), copy, "{inside} is kept");
        }
        if !inside.ends_with(".csv") {
            fs::remove_file(&input).unwrap();
        }
    }
    assert_eq!(analysis_files(&dir), before, "the analysis is as it was");
    let nested = dir.join("next");
    assert_usage_error(
        &["run", SAMPLE, "--out", &arg(&nested), "--previous", &arg(&dir)],
        &["lies inside --previous"],
    );
    assert!(!nested.exists());
    assert_eq!(analysis_files(&dir), before, "the previous analysis is as it was");
}

#[test]
fn inputs_from_a_list_give_the_same_outputs_as_arguments() {
    let tmp = tempdir();
    let inputs = ["testdata/sample.warc.gz", "testdata/sample.arc.gz", "testdata/real/wget.warc.gz"];
    let a = tmp.path().join("a");
    let mut args = vec!["run".to_string(), "-q".into(), "--out".into(), arg(&a)];
    args.extend(inputs.iter().map(|s| s.to_string()));
    overlap_ok(&args);
    let list = tmp.path().join("list");
    fs::write(&list, format!("{}\n\n{}\r\n{}", inputs[0], inputs[1], inputs[2])).unwrap();
    let b = tmp.path().join("b");
    overlap_ok(["run", "-q", "--inputs-from", &arg(&list), "--out", &arg(&b)]);
    assert_same_outputs(&a, &b, "--inputs-from FILE");
    // Arguments first, then the list; the list from standard input.
    let c = tmp.path().join("c");
    let out = overlap_stdin(
        ["run", "-q", inputs[0], "--inputs-from", "-", "--out", &arg(&c)],
        format!("{}\n{}\n", inputs[1], inputs[2]).as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_same_outputs(&a, &c, "--inputs-from -");
}

#[test]
fn a_missing_list_or_listed_input_is_one_line_exit_2() {
    let tmp = tempdir();
    let dir = tmp.path().join("out");
    let missing = tmp.path().join("no-list");
    let out = overlap(["fingerprint", "--inputs-from", &arg(&missing), "--out", &arg(&dir)]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("no-list"), "{stderr}");
    let list = tmp.path().join("list");
    fs::write(&list, "testdata/sample.warc.gz\ntestdata/absent.warc\n").unwrap();
    let out = overlap(["run", "--inputs-from", &arg(&list), "--out", &arg(&dir)]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("testdata/absent.warc"), "{stderr}");
    assert!(!dir.exists());
}

/// A disk that fills while the report writes a table in a pass over
/// docs.csv (docs.csv itself, rewritten with each document's near_group):
/// the one line names the file being written, and not the row of docs.csv
/// being read at the time; docs.csv stays as it was. A write past the file
/// size limit fails as one to a full disk does (`EFBIG` for `ENOSPC`).
#[test]
fn a_failed_write_names_the_file_written_not_the_row_being_read() {
    let tmp = tempdir();
    let input = tmp.path().join("pages.jsonl");
    let pages: Vec<JsonDoc> = (0..3000)
        .map(|i| JsonDoc {
            url: format!("http://example.org/page/{i:05}"),
            text: format!("page {i}\nwith a text of its own, {i}"),
        })
        .collect();
    write_jsonl(&input, &pages);
    let dir = tmp.path().join("out");
    overlap_ok(["run", &arg(&input), "--out", &arg(&dir), "-q", "--no-fuzzy"]);
    // The report's output written before docs.csv stays under the limit;
    // docs.csv passes it, and the 64 KiB its writer buffers, so that a
    // row's write fails (in the pass over docs.csv), not the last flush.
    let limit = 48 << 10;
    assert!(fs::metadata(dir.join("records/replicas.fpd")).unwrap().len() < limit);
    let docs = fs::read(dir.join("docs.csv")).unwrap();
    assert!(docs.len() > 2 * (64 << 10));
    // With fuzzy signatures the report is redone.
    let args = ["report".to_string(), arg(&dir)];
    let out = limit_file_size(&mut overlap_cmd(&args), limit).output().unwrap();
    let what = describe(&args, &out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{what}");
    assert_eq!(stderr.lines().count(), 1, "{what}");
    let written = dir.join("docs.csv.partial");
    assert!(
        stderr.starts_with(&format!("overlap: cannot write {}: ", written.display())),
        "names the file written\n{what}"
    );
    assert!(!stderr.contains(" line "), "names no row read\n{what}");
    assert!(!written.exists(), "the partial table is removed");
    assert!(fs::read(dir.join("docs.csv")).unwrap() == docs, "docs.csv is as it was");
}

/// Every file under `dir` that a finished command must not leave: a
/// temporary name or a scratch directory.
fn leftovers(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if name.ends_with(".partial") || name.starts_with("tmp-") {
                found.push(e.path().display().to_string());
            }
            if e.path().is_dir() {
                stack.push(e.path());
            }
        }
    }
    found
}

/// Ctrl-C (or SIGTERM) at any moment of a run: the command stops where it
/// writes, says so in one line, exits 130 (143), and leaves no temporary
/// file or scratch; the same command again finishes with the outputs of a
/// run never interrupted.
#[test]
fn an_interrupted_run_leaves_nothing_half_made_and_resumes() {
    let tmp = tempdir();
    let crawl = tmp.path().join("crawl");
    fs::create_dir_all(&crawl).unwrap();
    // Copies of the sample under their own names: enough work that a
    // signal lands in every stage.
    let mut inputs = Vec::new();
    for i in 0..12 {
        let copy = crawl.join(format!("part-{i:02}.warc.gz"));
        fs::copy(SAMPLE, &copy).unwrap();
        inputs.push(arg(&copy));
    }
    let command = |dir: &Path| {
        let mut args = vec!["run".to_string()];
        args.extend(inputs.iter().cloned());
        args.extend(["--out".into(), arg(dir), "-q".into()]);
        args
    };
    let whole = tmp.path().join("whole");
    overlap_ok(command(&whole));
    let started = std::time::Instant::now();
    overlap_ok(command(&tmp.path().join("timed")));
    let took = started.elapsed();

    let mut stopped = 0;
    for (i, fraction) in [0.05, 0.2, 0.4, 0.6, 0.8].into_iter().enumerate() {
        let dir = tmp.path().join(format!("out-{i}"));
        let signal = if i == 2 { libc::SIGTERM } else { libc::SIGINT };
        let args = command(&dir);
        let child = overlap_cmd(&args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        std::thread::sleep(took.mul_f64(fraction));
        // SAFETY: kill(2) on the child's own process id.
        unsafe { libc::kill(child.id() as libc::pid_t, signal) };
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        match out.status.code() {
            Some(0) => {} // finished before the signal
            // Stopped by the signal's default action: it came before the
            // command took its directory and installed its handler (on a
            // loaded machine, the first 5% of a run can be its start-up),
            // so it must have left nothing either (checked below).
            None if std::os::unix::process::ExitStatusExt::signal(&out.status) == Some(signal) => {}
            code => {
                assert_eq!(code, Some(128 + signal), "{}", describe(&args, &out));
                assert!(
                    stderr.lines().last()
                        == Some("overlap: interrupted; run the same command again to resume"),
                    "{}",
                    describe(&args, &out)
                );
                stopped += 1;
            }
        }
        assert!(leftovers(&dir).is_empty(), "left behind: {:?}\n{}", leftovers(&dir), describe(&args, &out));
        overlap_ok(&args);
        assert_same_outputs(&whole, &dir, "a resumed run");
    }
    assert!(stopped >= 3, "only {stopped} of 5 runs were stopped by their signal");
}

/// The columns format 3 added to the document tables, after
/// `missing_for`.
const CAPTURE_COLUMNS: [&str; 3] = ["date", "capture", "canonical"];

/// Rewrites the document table at `path` through `edit`, which gets each
/// record's fields and the index of `date` (a CSV table, header first).
fn edit_doc_table(path: &Path, edit: impl Fn(&mut Vec<String>, usize)) {
    let mut reader = csv::ReaderBuilder::new().has_headers(false).from_path(path).unwrap();
    let records: Vec<Vec<String>> =
        reader.records().map(|r| r.unwrap().iter().map(str::to_string).collect()).collect();
    let at = records[0].iter().position(|h| h == "date").unwrap();
    let mut writer = csv::Writer::from_path(path).unwrap();
    for mut r in records {
        edit(&mut r, at);
        writer.write_record(&r).unwrap();
    }
    writer.flush().unwrap();
}

/// The document tables of `files` (as `analysis_files` reads them) as a
/// migration leaves them: the format 3 columns empty.
fn capture_columns_emptied(
    mut files: std::collections::BTreeMap<String, Vec<u8>>,
    tmp: &Path,
) -> std::collections::BTreeMap<String, Vec<u8>> {
    for name in ["docs.csv", "records/fingerprint-docs.csv"] {
        let path = tmp.join("table.csv");
        fs::write(&path, &files[name]).unwrap();
        let first = std::cell::Cell::new(true);
        edit_doc_table(&path, |r, at| {
            if !first.replace(false) {
                r[at..at + CAPTURE_COLUMNS.len()].iter_mut().for_each(String::clear);
            }
        });
        files.insert(name.to_string(), fs::read(&path).unwrap());
    }
    files
}

/// Turns an analysis of this layout into one of format version 2, as an
/// earlier overlap wrote it: the document tables without the capture
/// columns.
fn to_format_2(dir: &Path) {
    for table in [dir.join("docs.csv"), dir.join("records/fingerprint-docs.csv")] {
        edit_doc_table(&table, |r, at| {
            r.drain(at..at + CAPTURE_COLUMNS.len());
        });
    }
    let path = dir.join("manifest.json");
    let mut manifest: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    manifest["format_version"] = 2.into();
    fs::write(&path, serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();
}

/// Turns an analysis of this layout into one of format version 1, as an
/// earlier overlap wrote it: format 2's tables, with the record files at
/// the top, the stamps and the manifest naming them there. (The files
/// themselves are the same in both layouts.)
fn to_format_1(dir: &Path) {
    to_format_2(dir);
    let records = dir.join("records");
    for entry in fs::read_dir(&records).unwrap() {
        let entry = entry.unwrap();
        fs::rename(entry.path(), dir.join(entry.file_name())).unwrap();
    }
    fs::remove_dir(&records).unwrap();
    let strip = |v: &serde_json::Value| {
        v.as_str().unwrap().strip_prefix("records/").unwrap_or(v.as_str().unwrap()).to_string()
    };
    for entry in fs::read_dir(dir.join(".overlap")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "stamp") {
            let mut stamp: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
            let outputs: Vec<String> = stamp["outputs"].as_array().unwrap().iter().map(strip).collect();
            stamp["outputs"] = outputs.into();
            fs::write(&path, serde_json::to_vec_pretty(&stamp).unwrap()).unwrap();
        }
    }
    let path = dir.join("manifest.json");
    let mut manifest: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    let files: serde_json::Map<String, serde_json::Value> = manifest["record_files"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, file)| (strip(&name.as_str().into()), file.clone()))
        .collect();
    manifest["record_files"] = files.into();
    manifest["format_version"] = 1.into();
    fs::write(&path, serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();
    assert!(dir.join("fprint-exact.fpd").exists() && dir.join("fprint-docid/part-00000.fpd").exists());
}

/// The tables users read are at the top of an analysis, the record files
/// in records/; an analysis of an earlier layout (format 1: everything at
/// the top; format 2: no capture columns in the document tables) is
/// refused in one line by a command that only reads it, moved by `overlap
/// migrate` and by any command that writes into it, and is then the same
/// analysis: the same bytes (the capture columns empty), up to date, and
/// still the previous analysis that a chain recorded.
#[test]
fn an_analysis_of_an_earlier_layout_is_refused_by_readers_and_moved_by_writers() {
    for version in [1, 2] {
        earlier_layout_is_refused_and_moved(version);
    }
}

fn earlier_layout_is_refused_and_moved(version: u32) {
    let to_format = |dir: &Path| if version == 1 { to_format_1(dir) } else { to_format_2(dir) };
    let tmp = tempdir();
    let (old, next) = (tmp.path().join("old"), tmp.path().join("next"));
    overlap_ok(["run", SAMPLE, "--out", &arg(&old), "-q"]);
    overlap_ok(["run", SAMPLE, "--out", &arg(&next), "--previous", &arg(&old), "-q"]);
    let top: Vec<String> = fs::read_dir(&old)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    assert!(
        top.iter().all(|n| !n.ends_with(".fpd") && n != "fprint-docid" && !n.starts_with("fingerprint-")),
        "{top:?}"
    );
    assert!(old.join("records/fprint-docid/part-00000.fpd").exists());
    let docs = fs::read_to_string(old.join("docs.csv")).unwrap();
    assert!(
        docs.lines().nth(1).is_some_and(|row| row.contains(",response,")),
        "the sample's pages have a capture date and kind:\n{docs}"
    );
    let before = capture_columns_emptied(analysis_files(&old), tmp.path());

    to_format(&old);
    // What a killed run of an overlap of format 1 left.
    if version == 1 {
        fs::write(old.join("centers.fpd.partial"), b"half").unwrap();
    }
    let urls = tmp.path().join("urls.txt");
    let hint = format!("run `overlap migrate {}`", arg(&old));
    for args in [
        vec!["dedup".to_string(), arg(&old), "--format".into(), "urls".into(), "-o".into(), arg(&urls)],
        vec!["explain".into(), arg(&old), "0".into(), "1".into()],
        vec!["dump".into(), arg(&old)],
        vec![
            "run".into(),
            SAMPLE.into(),
            "--out".into(),
            arg(&tmp.path().join("x")),
            "--previous".into(),
            arg(&old),
        ],
    ] {
        let out = overlap(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{}", describe(&args, &out));
        assert_eq!(stderr.lines().count(), 1, "one line\n{}", describe(&args, &out));
        assert!(stderr.contains("earlier overlap") && stderr.contains(&hint), "{stderr}");
    }
    assert!(!urls.exists());

    let moved = overlap_ok(["migrate", &arg(&old)]);
    assert!(String::from_utf8_lossy(&moved.stderr).contains("moved the analysis of an earlier overlap"));
    assert!(!old.join("centers.fpd.partial").exists());
    assert_eq!(analysis_files(&old), before, "the same files with the same bytes, in their new place");
    let again = overlap_ok(["migrate", &arg(&old)]);
    assert!(String::from_utf8_lossy(&again.stderr).contains("already in this overlap's layout"));
    // Up to date: every stage, and the chain that carried it forward.
    for (dir, previous) in [(&old, None), (&next, Some(&old))] {
        let mut args = vec!["run".to_string(), SAMPLE.into(), "--out".into(), arg(dir), "--stats".into()];
        if let Some(p) = previous {
            args.extend(["--previous".into(), arg(p)]);
        }
        let out = overlap_ok(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let ran: Vec<&str> = stderr
            .lines()
            .filter(|l| l.contains(": ") && l.contains(" in ") && !l.contains("(up to date)"))
            .collect();
        assert!(ran.iter().all(|l| l.starts_with("  ")), "a stage ran again:\n{stderr}");
        assert_eq!(stderr.matches("(up to date)").count(), 4, "{stderr}");
    }
    assert_eq!(analysis_files(&old), before);

    // A command that writes into the directory moves it first, by itself.
    to_format(&old);
    let report = overlap_ok(["report", &arg(&old)]);
    assert!(String::from_utf8_lossy(&report.stderr).contains("moved the analysis of an earlier overlap"));
    assert_eq!(analysis_files(&old), before);
}
