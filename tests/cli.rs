//! The command line: error paths, damaged input, determinism across thread
//! counts and re-runs, the stage commands, and standard input.

mod common;

use common::*;
use std::fs;
use std::path::{Path, PathBuf};

// ------------------------------------------------------------ errors

#[test]
fn missing_input_file_is_an_error_naming_the_file() {
    let tmp = tempdir();
    let out = arg(&tmp.path().join("out"));
    assert_usage_error(&["run", "testdata/no-such-crawl.warc.gz", "--out", &out], &["no-such-crawl.warc.gz"]);
    assert_usage_error(
        &["run", "testdata/equiv/docs.jsonl", "testdata/also-missing.jsonl", "--out", &out],
        &["also-missing.jsonl"],
    );
    assert_usage_error(
        &["fingerprint", "testdata/no-such-crawl.warc.gz", "--out", &out],
        &["no-such-crawl.warc.gz"],
    );
}

#[test]
fn empty_files_are_skipped_and_reported_and_directories_read_in_name_order() {
    let tmp = tempdir();
    let empty = tmp.path().join("empty.warc.gz");
    fs::write(&empty, b"").unwrap();
    // A directory stands for the crawl files under it, in name order; its
    // other files are left out with a warning.
    let dir = tmp.path().join("crawl-dir");
    fs::create_dir_all(dir.join("sub")).unwrap();
    fs::copy("testdata/equiv/docs.jsonl", dir.join("sub/b.jsonl")).unwrap();
    fs::write(dir.join("README.txt"), b"not a crawl").unwrap();
    fs::write(dir.join("a.jsonl"), b"").unwrap();
    let out = tmp.path().join("out");
    let args = ["run", &arg(&empty), "testdata/equiv/docs.jsonl", &arg(&dir), "--out", &arg(&out), "-T", "3"];
    let run = overlap_ok(args);
    let stderr = String::from_utf8_lossy(&run.stderr);
    for path in [&empty, &dir.join("a.jsonl")] {
        let line = format!("overlap: warning: {}: skipped input (empty_file)", path.display());
        assert_eq!(stderr.lines().filter(|l| l.starts_with(&line)).count(), 1, "{line}\n{stderr}");
    }
    let walked = format!(
        "overlap: warning: {}: reading its 2 crawl files in name order (1 other file whose name says no crawl \
         format left out, such as {}",
        dir.display(),
        dir.join("README.txt").display()
    );
    assert!(stderr.contains(&walked), "{walked}\n{stderr}");
    let fp = &read_stats(&out)["fingerprint"];
    assert_eq!(fp["inputs_skipped"], 2, "{fp:#}");
    let inputs = fp["inputs"].as_array().unwrap();
    let named: Vec<String> = inputs.iter().map(|i| i["file"].as_str().unwrap().to_string()).collect();
    assert_eq!(
        named,
        [
            arg(&empty),
            "testdata/equiv/docs.jsonl".into(),
            arg(&dir.join("a.jsonl")),
            arg(&dir.join("sub/b.jsonl"))
        ]
    );
    assert_eq!(inputs[0]["skipped"], "empty_file");
    assert_eq!(inputs[1].get("skipped"), None);
    assert_eq!(inputs[2]["skipped"], "empty_file");
    // The directory's file is read as given by name: the same documents.
    let docs = read_docs(&out);
    let half = docs.len() / 2;
    assert!(docs[half..].iter().all(|d| d.source.starts_with(&arg(&dir.join("sub/b.jsonl")))));
    assert_eq!(
        docs[..half].iter().map(|d| &d.url).collect::<Vec<_>>(),
        docs[half..].iter().map(|d| &d.url).collect::<Vec<_>>()
    );
    // A directory without a crawl file is one line, exit 2.
    let bare = tmp.path().join("bare");
    fs::create_dir_all(bare.join("deeper")).unwrap();
    fs::write(bare.join("deeper/notes.txt"), b"x").unwrap();
    assert_usage_error(
        &["run", &arg(&bare), "--out", &arg(&tmp.path().join("x"))],
        &["holds no crawl files"],
    );
    // The file between them is read as if alone: docIDs start at 0.
    let alone = tmp.path().join("alone");
    overlap_ok(["run", "testdata/equiv/docs.jsonl", "--out", &arg(&alone), "-T", "3", "-q"]);
    let key = |d: &DocRow| (d.doc_id, d.url.clone(), d.source.clone(), d.lines, d.chunks);
    assert_eq!(
        docs[..half].iter().map(key).collect::<Vec<_>>(),
        read_docs(&alone).iter().map(key).collect::<Vec<_>>()
    );
    // A missing file next to them is still an error.
    let missing = arg(&tmp.path().join("missing.warc"));
    assert_usage_error(&["run", &arg(&empty), &missing, "--out", &arg(&out)], &["missing.warc"]);
}

#[test]
fn unknown_flag_is_an_error_naming_the_flag() {
    let tmp = tempdir();
    let out = arg(&tmp.path().join("out"));
    assert_usage_error(
        &["run", "testdata/equiv/docs.jsonl", "--out", &out, "--frobnicate"],
        &["--frobnicate"],
    );
    assert_usage_error(&["pairs", &out, "--frobnicate", "3"], &["--frobnicate"]);
}

#[test]
fn unknown_subcommand_and_missing_out_are_errors() {
    assert_usage_error(&["overlapping", "testdata/equiv/docs.jsonl"], &["overlapping"]);
    assert_usage_error(&["run", "testdata/equiv/docs.jsonl"], &["--out", "out"]);
}

#[test]
fn malformed_chunk_specs_are_errors() {
    let tmp = tempdir();
    let out = arg(&tmp.path().join("out"));
    for spec in [
        "lines:0",
        "lines:4:5",
        "foo:3",
        "lines:x",
        "words:0",
        "lines:4:0",
        "words:3:4",
        "lines",
        "lines:",
        "lines:4:1:1",
        "",
    ] {
        assert_usage_error(
            &["run", "testdata/equiv/docs.jsonl", "--out", &out, "--chunk", spec],
            &["chunk", spec],
        );
    }
    assert!(!tmp.path().join("out").join("overlap.csv").exists(), "a usage error must not produce outputs");
}

#[test]
fn zero_threads_is_an_error() {
    let tmp = tempdir();
    let out = arg(&tmp.path().join("out"));
    assert_usage_error(&["run", "testdata/equiv/docs.jsonl", "--out", &out, "--threads", "0"], &["threads"]);
}

#[test]
fn malformed_memory_sizes_are_errors() {
    let tmp = tempdir();
    let out = arg(&tmp.path().join("out"));
    for size in ["banana", "10QB", "", "-1G"] {
        let flag = format!("--memory={size}");
        assert_usage_error(&["run", "testdata/equiv/docs.jsonl", "--out", &out, &flag], &["memory", "size"]);
    }
}

#[test]
fn bad_input_format_and_method_are_errors() {
    let tmp = tempdir();
    let out = arg(&tmp.path().join("out"));
    assert_usage_error(
        &["run", "testdata/equiv/docs.jsonl", "--out", &out, "--input-format", "xml"],
        &["xml", "format"],
    );
    assert_usage_error(
        &["run", "testdata/equiv/docs.jsonl", "--out", &out, "--method", "magic"],
        &["magic", "method"],
    );
}

#[test]
fn stage_commands_on_a_missing_directory_are_errors() {
    for cmd in ["exact", "pairs", "dump"] {
        assert_usage_error(&[cmd, "testdata/no-such-output-dir"], &["no-such-output-dir"]);
    }
}

// ------------------------------------------------------------ damaged input

#[test]
fn corrupt_warc_runs_to_completion_and_reports_each_damaged_record() {
    let manifest: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(testdata("corrupt.manifest.json")).unwrap()).unwrap();
    let tmp = tempdir();
    let out = tmp.path().join("out");
    overlap_ok(["run", "testdata/corrupt.warc.gz", "--out", &arg(&out), "-T", "1", "-q"]);

    // Every good record is a document, in order, with its member offset.
    let good = manifest["documents"].as_array().unwrap();
    let docs = read_docs(&out);
    let got: Vec<(String, String)> = docs.iter().map(|d| (d.url.clone(), d.source.clone())).collect();
    let want: Vec<(String, String)> = good
        .iter()
        .map(|g| {
            (
                g["url"].as_str().unwrap().to_string(),
                format!("testdata/corrupt.warc.gz:{}", g["offset"].as_u64().unwrap()),
            )
        })
        .collect();
    assert_eq!(got, want, "the good records of corrupt.warc.gz, as (url, source)");

    // Their text is read whole: lines per document agree with the reference.
    let texts: Vec<String> = good
        .iter()
        .map(|g| fs::read_to_string(testdata("src").join(g["src"].as_str().unwrap())).unwrap())
        .collect();
    let reference = Reference::new(&texts, Spec::Lines { k: 4, s: 4 });
    assert_eq!(docs.iter().map(|d| d.lines).collect::<Vec<_>>(), reference.lines, "lines per good document");

    let stats = read_stats(&out);
    let fp = &stats["fingerprint"];
    assert_eq!(fp["documents"], serde_json::json!(good.len()), "fingerprint.documents");
    let damaged = manifest["corrupt"].as_array().unwrap();
    for reason in ["corrupt_gzip", "corrupt_header", "truncated_record"] {
        assert_eq!(
            fp["skipped"][reason],
            serde_json::json!(1),
            "fingerprint.skipped.{reason}\nstats: {stats:#}"
        );
    }
    let listed = fp["corrupt"].as_array().expect("fingerprint.corrupt is a list");
    assert_eq!(
        listed.len(),
        damaged.len(),
        "fingerprint.corrupt lists each damaged record once: {listed:#?}"
    );
    for want in damaged {
        let reason = want["reason"].as_str().unwrap();
        let start = want["offset"].as_u64().unwrap();
        let end = want["end"].as_u64().unwrap();
        let entry = listed
            .iter()
            .find(|e| e["reason"] == reason)
            .unwrap_or_else(|| panic!("no {reason} entry in fingerprint.corrupt: {listed:#?}"));
        let file = entry["file"].as_str().expect("corrupt entry has a file");
        assert!(file.ends_with("corrupt.warc.gz"), "{reason}: file {file:?}");
        let offset = entry["offset"].as_u64().expect("corrupt entry has a numeric offset");
        if reason == "corrupt_gzip" {
            // The damage is somewhere inside this gzip member.
            assert!(
                (start..end).contains(&offset),
                "{reason}: offset {offset} outside the member {start}..{end}"
            );
        } else {
            assert_eq!(offset, start, "{reason}: offset of the record's gzip member");
        }
        assert!(entry["detail"].is_string(), "{reason}: detail is a string");
    }
}

#[test]
fn quiet_run_prints_nothing_on_stderr() {
    let tmp = tempdir();
    for input in ["testdata/sample.warc.gz", "testdata/corrupt.warc.gz"] {
        let out = overlap_ok(["run", input, "--out", &arg(&tmp.path().join("out")), "-q"]);
        assert!(
            out.stderr.is_empty(),
            "{input}: -q run wrote to stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

// ------------------------------------------------------------ determinism

fn dump(dir: &Path) -> Vec<u8> {
    let out = overlap_ok(["dump", &arg(dir)]);
    assert!(!out.stdout.is_empty(), "dump printed nothing");
    out.stdout
}

const MIXED_INPUTS: [&str; 3] =
    ["testdata/sample.warc.gz", "testdata/equiv/docs.pagefeed", "testdata/equiv/docs.jsonl"];

#[test]
fn one_and_two_threads_give_byte_identical_outputs() {
    let tmp = tempdir();
    for (spec, t) in [("lines:4", "15"), ("words:8", "5")] {
        let mut dirs = Vec::new();
        for threads in ["1", "2"] {
            let out = tmp.path().join(format!("{}-{threads}", spec.replace(':', "_")));
            let mut args: Vec<String> = vec!["run".into()];
            args.extend(MIXED_INPUTS.iter().map(|s| s.to_string()));
            args.extend(["--out".into(), arg(&out), "--chunk".into(), spec.into(), "-T".into(), t.into()]);
            args.extend(["--threads".into(), threads.into(), "-q".into()]);
            overlap_ok(&args);
            dirs.push(out);
        }
        assert!(!read_overlap(&dirs[0]).is_empty(), "test data: {spec} -T {t} finds pairs");
        assert_same_outputs(&dirs[0], &dirs[1], &format!("--threads 1 vs 2, {spec}"));
        assert!(dump(&dirs[0]) == dump(&dirs[1]), "dump output differs between --threads 1 and 2 ({spec})");
    }
}

#[test]
fn small_memory_budget_gives_the_same_outputs() {
    let tmp = tempdir();
    let a = tmp.path().join("a");
    let b = tmp.path().join("b");
    let mut args: Vec<String> = vec!["run".into()];
    args.extend(MIXED_INPUTS.iter().map(|s| s.to_string()));
    let run = |out: &Path, extra: &[&str]| {
        let mut v = args.clone();
        v.extend(["--out".into(), arg(out), "-T".into(), "3".into(), "-q".into()]);
        v.extend(extra.iter().map(|s| s.to_string()));
        overlap_ok(&v);
    };
    run(&a, &[]);
    run(&b, &["--memory", "32M"]);
    assert_same_outputs(&a, &b, "--memory 32M vs default");
}

#[test]
fn rerunning_in_the_same_out_dir_gives_identical_outputs() {
    let tmp = tempdir();
    let out = tmp.path().join("out");
    let args = ["run", "testdata/sample.warc.gz", "--out", &arg(&out), "-q"];
    overlap_ok(args);
    let first = tmp.path().join("first");
    copy_dir(&out, &first);
    overlap_ok(args);
    assert_same_outputs(&first, &out, "second run in the same directory");
    dump_equal(&first, &out);
}

#[test]
fn rerunning_with_other_settings_or_inputs_replaces_old_results() {
    let tmp = tempdir();
    let reused = tmp.path().join("reused");
    let r = arg(&reused);
    overlap_ok(["run", "testdata/sample.warc.gz", "--out", &r, "-q"]);
    // Other chunking and threshold, same input.
    overlap_ok(["run", "testdata/sample.warc.gz", "--out", &r, "--chunk", "words:8", "-T", "20", "-q"]);
    let fresh = tmp.path().join("fresh");
    overlap_ok([
        "run",
        "testdata/sample.warc.gz",
        "--out",
        &arg(&fresh),
        "--chunk",
        "words:8",
        "-T",
        "20",
        "-q",
    ]);
    assert_same_outputs(&fresh, &reused, "re-run with --chunk words:8 -T 20 vs a fresh directory");
    // Other input, same settings.
    overlap_ok(["run", "testdata/equiv/docs.jsonl", "--out", &r, "--chunk", "words:8", "-T", "20", "-q"]);
    let fresh2 = tmp.path().join("fresh2");
    overlap_ok([
        "run",
        "testdata/equiv/docs.jsonl",
        "--out",
        &arg(&fresh2),
        "--chunk",
        "words:8",
        "-T",
        "20",
        "-q",
    ]);
    assert_same_outputs(&fresh2, &reused, "re-run on another input vs a fresh directory");
}

fn dump_equal(a: &Path, b: &Path) {
    assert!(dump(a) == dump(b), "dump output differs");
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), target).unwrap();
        }
    }
}

// ------------------------------------------------------------ stages

#[test]
fn stage_commands_give_the_same_outputs_as_run() {
    let tmp = tempdir();
    for (spec, t) in [("lines:4", "15"), ("lines:2:1", "4")] {
        let whole = tmp.path().join(format!("run-{}", spec.replace(':', "_")));
        let staged = tmp.path().join(format!("staged-{}", spec.replace(':', "_")));
        let mut run_args: Vec<String> = vec!["run".into()];
        run_args.extend(MIXED_INPUTS.iter().map(|s| s.to_string()));
        run_args.extend([
            "--out".into(),
            arg(&whole),
            "--chunk".into(),
            spec.into(),
            "-T".into(),
            t.into(),
            "-q".into(),
        ]);
        overlap_ok(&run_args);

        let mut fp_args: Vec<String> = vec!["fingerprint".into()];
        fp_args.extend(MIXED_INPUTS.iter().map(|s| s.to_string()));
        fp_args.extend(["--out".into(), arg(&staged), "--chunk".into(), spec.into(), "-q".into()]);
        overlap_ok(&fp_args);
        overlap_ok(["exact", &arg(&staged), "-q"]);
        overlap_ok(["pairs", &arg(&staged), "-T", t, "-q"]);
        overlap_ok(["report", &arg(&staged), "-q"]);

        assert!(!read_overlap(&whole).is_empty(), "test data: {spec} -T {t} finds pairs");
        assert_same_outputs(
            &whole,
            &staged,
            &format!("fingerprint + exact + pairs + report vs run ({spec})"),
        );
        dump_equal(&whole, &staged);
    }
}

#[test]
fn pairs_rerun_with_another_threshold_rewrites_the_table() {
    let tmp = tempdir();
    let (input, docs) = real_jsonl(tmp.path());
    let reference = Reference::new(&texts(&docs), Spec::Lines { k: 4, s: 4 });
    let out = tmp.path().join("out");
    overlap_ok(["run", &arg(&input), "--input-format", "jsonl", "--out", &arg(&out), "-q"]);
    assert_matches_reference(&out, &reference, 15, "run -T 15 (default)");
    // The pairs stage leaves docs.csv as it was but for near_group, the
    // report's, which it empties: the groups came from the old table.
    let without_groups = |dir: &Path| -> Vec<DocRow> {
        read_docs(dir).into_iter().map(|d| DocRow { near_group: None, ..d }).collect()
    };
    let docs_csv = without_groups(&out);
    assert!(read_docs(&out).iter().any(|d| d.near_group.is_some()), "test data: groups at -T 15");
    let mut previous = read_overlap(&out);
    for t in [3usize, 40, 1, 15] {
        overlap_ok(["pairs", &arg(&out), "-T", &t.to_string(), "--method", "sort", "-q"]);
        assert_matches_reference(&out, &reference, t, &format!("pairs -T {t}"));
        let table = read_overlap(&out);
        assert_ne!(table, previous, "test data: -T {t} must change the table");
        assert_eq!(
            read_stats(&out)["pairs"]["pairs_emitted"],
            serde_json::json!(table.len()),
            "pairs_emitted after -T {t}"
        );
        assert!(without_groups(&out) == docs_csv, "pairs must not change docs.csv");
        assert!(read_docs(&out).iter().all(|d| d.near_group.is_none()), "no stale near_group after pairs");
        previous = table;
    }
}

// ------------------------------------------------------------ standard input

#[test]
fn stdin_input_gives_the_same_results_as_the_file() {
    let tmp = tempdir();
    let from_file = tmp.path().join("file");
    overlap_ok(["run", "testdata/equiv/docs.jsonl", "--out", &arg(&from_file), "-T", "3", "-q"]);
    let from_stdin = tmp.path().join("stdin");
    let data = fs::read(testdata("equiv/docs.jsonl")).unwrap();
    let args: Vec<String> =
        ["run", "-", "--input-format", "jsonl", "--out", &arg(&from_stdin), "-T", "3", "-q"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    let out = overlap_stdin(&args, &data);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&args, &out));

    assert!(!read_overlap(&from_file).is_empty());
    assert!(
        fs::read(from_stdin.join("overlap.csv")).unwrap() == fs::read(from_file.join("overlap.csv")).unwrap(),
        "overlap.csv from stdin differs from the file run"
    );
    let a = read_docs(&from_file);
    let b = read_docs(&from_stdin);
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        assert_eq!((&x.url, x.lines, x.chunks, x.exact_center), (&y.url, y.lines, y.chunks, y.exact_center));
        let (path, offset) = y.source.rsplit_once(':').expect("source is PATH:OFFSET");
        assert_eq!(path, "-", "source of a document read from stdin");
        assert_eq!(offset, x.source.rsplit_once(':').unwrap().1, "same offsets from stdin and from the file");
    }
}

/// A JSONL whose records keep their text under another name is one line
/// naming the field, the fields the first record has and the flag, before
/// anything is written; named with --text-field, it is read.
#[test]
fn a_jsonl_without_the_text_field_names_the_fields_it_has() {
    let tmp = tempdir();
    let input = tmp.path().join("dolma.jsonl.gz");
    let lines: String = (0..150)
        .map(|i| format!("{{\"id\": \"d{i}\", \"content\": \"page {i}\\nsame line\", \"metadata\": {{}}}}\n"))
        .collect();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, lines.as_bytes()).unwrap();
    fs::write(&input, gz.finish().unwrap()).unwrap();
    let out = tmp.path().join("out");
    assert_usage_error(
        &["run", &arg(&input), "--out", &arg(&out)],
        &[
            r#"no field "text" (its fields: "content", "id", "metadata"): name the field that holds the text with --text-field"#,
        ],
    );
    assert!(!out.exists(), "nothing is written");
    overlap_ok(["run", &arg(&input), "--text-field", "content", "--out", &arg(&out), "-q"]);
    assert_eq!(read_docs(&out).len(), 150);
}

/// The documents of two analyses agree row by row, the inputs' names in
/// `source` aside.
fn assert_same_documents(a: &Path, b: &Path, what: &str) {
    let (x, y) = (read_docs(a), read_docs(b));
    assert_eq!(x.len(), y.len(), "{what}: documents");
    for (x, y) in x.iter().zip(&y) {
        assert_eq!(
            (&x.url, x.lines, x.chunks, x.exact_center),
            (&y.url, y.lines, y.chunks, y.exact_center),
            "{what}"
        );
        assert_eq!(
            x.source.rsplit_once(':').unwrap().1,
            y.source.rsplit_once(':').unwrap().1,
            "{what}: offsets"
        );
    }
    assert_eq!(fs::read(a.join("overlap.csv")).unwrap(), fs::read(b.join("overlap.csv")).unwrap(), "{what}");
    let corrupt = |d: &Path| read_stats(d)["fingerprint"]["corrupt_records"].clone();
    assert_eq!(corrupt(a), corrupt(b), "{what}: corrupt records");
}

/// A pipe (bash's process substitution) reads exactly like the file: the
/// bytes read to tell its format are kept, not lost to a second opening,
/// compressed or not.
#[test]
fn a_process_substitution_reads_exactly_like_the_file() {
    let tmp = tempdir();
    let from_file = tmp.path().join("file");
    overlap_ok(["run", "testdata/sample.warc.gz", "--out", &arg(&from_file), "-q"]);
    let plain = tmp.path().join("sample.warc");
    fs::write(&plain, gunzip(&testdata("sample.warc.gz"))).unwrap();
    let from_plain = tmp.path().join("plain");
    overlap_ok(["run", &arg(&plain), "--out", &arg(&from_plain), "-q"]);
    let bin = env!("CARGO_BIN_EXE_overlap");
    for (name, substitution, same_as) in [
        ("cat", "<(cat testdata/sample.warc.gz)", &from_file),
        ("zcat", "<(gzip -dc testdata/sample.warc.gz)", &from_plain),
        ("zcat-warc", "<(gzip -dc testdata/sample.warc.gz) --input-format warc", &from_plain),
    ] {
        let out = tmp.path().join(name);
        let script = format!("exec '{bin}' run {substitution} --out '{}' -q --preset paper", out.display());
        let done =
            std::process::Command::new("bash").arg("-c").arg(&script).current_dir(root()).output().unwrap();
        assert_eq!(done.status.code(), Some(0), "{script}: {}", String::from_utf8_lossy(&done.stderr));
        assert_same_documents(same_as, &out, name);
    }
}

/// Makes a FIFO at `path` and writes `data` into it from a thread, once a
/// reader opens it.
fn fifo_with(path: &Path, data: Vec<u8>) -> std::thread::JoinHandle<()> {
    if !path.exists() {
        let made = std::process::Command::new("mkfifo").arg(path).status().expect("mkfifo runs");
        assert!(made.success());
    }
    let path = path.to_path_buf();
    std::thread::spawn(move || {
        use std::io::Write;
        // A reader that stops early closes its end: the write fails then.
        if let Ok(mut f) = fs::OpenOptions::new().write(true).open(&path) {
            let _ = f.write_all(&data);
        }
    })
}

/// Runs `args`, failing the test when it has not finished in a minute.
fn run_within_a_minute(args: &[String]) -> std::process::Output {
    let mut child = overlap_cmd(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("overlap starts");
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            panic!("{args:?} still runs after a minute");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// A named FIFO is read once, like the file; it is never "up to date" (what
/// it carries next time is unknown), and one given twice is refused.
#[test]
fn a_fifo_reads_like_the_file_and_is_read_again_on_each_run() {
    let tmp = tempdir();
    let from_file = tmp.path().join("file");
    overlap_ok(["run", "testdata/sample.warc.gz", "--out", &arg(&from_file), "-q"]);
    let fifo = tmp.path().join("crawl.fifo");
    let out = tmp.path().join("fifo");
    let args: Vec<String> =
        ["run", &arg(&fifo), "--out", &arg(&out), "-q"].iter().map(|s| s.to_string()).collect();
    let data = fs::read(testdata("sample.warc.gz")).unwrap();
    for round in 0..2 {
        let writer = fifo_with(&fifo, data.clone());
        let done = run_within_a_minute(&args);
        assert_eq!(done.status.code(), Some(0), "round {round}: {}", String::from_utf8_lossy(&done.stderr));
        writer.join().unwrap();
        assert_same_documents(&from_file, &out, &format!("FIFO, round {round}"));
    }
    let writer = fifo_with(&fifo, data);
    let twice = tmp.path().join("twice");
    let args: Vec<String> = ["run", &arg(&fifo), &arg(&fifo), "--out", &arg(&twice), "-q"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let done = run_within_a_minute(&args);
    assert_eq!(done.status.code(), Some(2));
    let err = String::from_utf8_lossy(&done.stderr);
    assert!(err.contains("given a second time") && err.lines().count() == 1, "{err}");
    drop(writer); // left waiting for a reader when the run refused first
}

#[test]
fn max_doc_bytes_cuts_long_documents_at_a_line_end_and_counts_them() {
    let tmp = tempdir();
    let long: Vec<String> = (0..50).map(|i| format!("line number {i} of a long page")).collect();
    let docs = vec![
        JsonDoc { url: "http://a.example/long".into(), text: long.join("\n") },
        JsonDoc { url: "http://b.example/short".into(), text: "one line".into() },
    ];
    let input = tmp.path().join("docs.jsonl");
    write_jsonl(&input, &docs);
    let out = tmp.path().join("out");
    overlap_ok(["run", &arg(&input), "--out", &arg(&out), "--max-doc-bytes", "200", "-q"]);
    let rows = read_docs(&out);
    // The lines that fit in 200 bytes with their separators.
    let mut kept = 0;
    let mut bytes = 0;
    for l in &long {
        let next = bytes + l.len() + usize::from(kept > 0);
        if next > 200 {
            break;
        }
        bytes = next;
        kept += 1;
    }
    assert_eq!(rows[0].lines, kept, "the long document keeps its first lines");
    assert_eq!(rows[1].lines, 1);
    let stats = read_stats(&out);
    assert_eq!(stats["fingerprint"]["capped_documents"], serde_json::json!(1));
    assert_usage_error(&["run", &arg(&input), "--out", &arg(&out), "--max-doc-bytes", "lots"], &["lots"]);
}

#[test]
fn a_killed_run_started_again_gives_the_same_outputs() {
    let tmp = tempdir();
    let (input, _) = real_jsonl(tmp.path());
    let input = arg(&input);
    let args = |out: &Path| -> Vec<String> {
        [
            "run",
            &input,
            "--input-format",
            "jsonl",
            "--chunk",
            "words:3:1",
            "-T",
            "40",
            "--out",
            &arg(out),
            "-q",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let clean = tmp.path().join("clean");
    overlap_ok(args(&clean));
    // Killed at different points of the run (the later ones may find it
    // finished, which must also be fine).
    for delay_ms in [10u64, 40, 120, 300] {
        let out = tmp.path().join(format!("killed-{delay_ms}"));
        let mut child = overlap_cmd(args(&out)).spawn().expect("overlap starts");
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = child.kill();
        let _ = child.wait();
        overlap_ok(args(&out));
        // Same files, byte for byte: no `.partial` file or scratch space
        // is left over, and nothing differs.
        assert_same_outputs(&clean, &out, &format!("killed after {delay_ms} ms, then run again"));
    }
}

/// Scripts get nothing on stderr by default; `--stats` gives them one
/// summary per stage that ran, even with `-q`.
#[test]
fn stats_flag_prints_a_summary_per_stage() {
    let tmp = tempdir();
    let out = tmp.path().join("out");
    let quiet = overlap_ok(["run", "testdata/sample.warc.gz", "-q", "--no-fuzzy", "--out", &arg(&out)]);
    assert!(quiet.stderr.is_empty(), "{}", String::from_utf8_lossy(&quiet.stderr));
    std::fs::remove_dir_all(&out).unwrap();
    let run =
        overlap_ok(["run", "testdata/sample.warc.gz", "-q", "--stats", "--no-fuzzy", "--out", &arg(&out)]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    for stage in ["fingerprint:", "exact:", "pairs:", "report:"] {
        assert_eq!(
            stderr.lines().filter(|l| l.starts_with(&format!("overlap: {stage}"))).count(),
            1,
            "{stderr}"
        );
    }
    // A rerun finds every stage up to date and says what is there: each
    // stage's stored summary, its first line marked, once.
    let again =
        overlap_ok(["run", "testdata/sample.warc.gz", "-q", "--stats", "--no-fuzzy", "--out", &arg(&out)]);
    let said = String::from_utf8_lossy(&again.stderr);
    let first_lines = |text: &str| -> Vec<String> {
        text.lines().filter(|l| l.starts_with("overlap: ")).map(|l| l.to_string()).collect()
    };
    let before = first_lines(&stderr);
    let now = first_lines(&said);
    assert_eq!(now.len(), 4, "{said}");
    for (b, n) in before.iter().zip(&now) {
        assert!(n.ends_with(" (up to date)"), "{said}");
        let stage = |l: &str| l.split(':').nth(1).unwrap_or_default().trim().to_string();
        assert_eq!(stage(b), stage(n));
    }
    assert_eq!(said.lines().count(), stderr.lines().count(), "the same lines\n{stderr}\n{said}");
    // Without --stats and off a terminal, a script still gets nothing.
    let quiet = overlap_ok(["pairs", &arg(&out), "-q"]);
    assert!(quiet.stderr.is_empty(), "{}", String::from_utf8_lossy(&quiet.stderr));
}

/// An analysis of other inputs in `--out` is replaced with one warning
/// saying so; the same inputs again, or a chain carried forward, are not.
#[test]
fn an_out_holding_an_analysis_of_other_inputs_is_replaced_with_a_warning() {
    let tmp = tempdir();
    let out = arg(&tmp.path().join("out"));
    let first = overlap_ok(["run", "testdata/sample.warc.gz", "--out", &out]);
    assert!(!String::from_utf8_lossy(&first.stderr).contains("replaced"));
    let same = overlap_ok(["run", "testdata/sample.warc.gz", "--out", &out, "-T", "20"]);
    assert!(!String::from_utf8_lossy(&same.stderr).contains("replaced"));
    let other = overlap_ok(["run", "testdata/equiv/docs.jsonl", "--out", &out]);
    let said = String::from_utf8_lossy(&other.stderr);
    let line = format!(
        "overlap: warning: {out} held an analysis of other inputs (1 input, the first testdata/sample.warc.gz): it is replaced"
    );
    assert_eq!(said.lines().filter(|l| *l == line).count(), 1, "{said}");
}

/// Stands for a test whose peer tool is missing; run only by the test
/// below, through this test binary.
#[test]
#[ignore = "run by a_test_missing_its_peer_tool_fails_under_ci_and_says_so_elsewhere"]
fn peer_tool_missing_probe() {
    skip_without_peer("the probe's peer tool is missing");
}

#[test]
fn a_test_missing_its_peer_tool_fails_under_ci_and_says_so_elsewhere() {
    let probe = |require: bool| {
        let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
        cmd.args(["--ignored", "--exact", "peer_tool_missing_probe"]);
        if require {
            cmd.env(REQUIRE_PEERS, "1");
        } else {
            cmd.env_remove(REQUIRE_PEERS);
        }
        cmd.output().unwrap()
    };
    let under_ci = probe(true);
    assert!(!under_ci.status.success(), "under .ci/run a skip is a failure");
    let elsewhere = probe(false);
    assert!(elsewhere.status.success());
    let said = String::from_utf8_lossy(&elsewhere.stderr);
    assert!(said.contains("note: test skipped: the probe's peer tool is missing"), "{said}");
}

#[test]
fn a_record_over_max_record_bytes_is_skipped_with_a_warning_and_the_flag_reads_it() {
    let tmp = tempdir();
    let input = tmp.path().join("docs.jsonl");
    let big = "a long line of text\n".repeat(60_000); // 1.2 MB
    let docs = [
        JsonDoc { url: "http://a.example/".into(), text: "small\n".into() },
        JsonDoc { url: "http://b.example/".into(), text: big },
    ];
    write_jsonl(&input, &docs);
    let out = tmp.path().join("out");
    let run = |limit: Option<&str>| {
        let mut args = vec!["run".to_string(), arg(&input), "--out".into(), arg(&out)];
        if let Some(l) = limit {
            args.extend(["--max-record-bytes".into(), l.into()]);
        }
        overlap(&args)
    };
    let limited = run(Some("1M"));
    assert_eq!(limited.status.code(), Some(0));
    let said = String::from_utf8_lossy(&limited.stderr);
    let warnings: Vec<&str> = said.lines().filter(|l| l.contains("record_too_large")).collect();
    assert_eq!(warnings.len(), 1, "{said}");
    assert!(
        warnings[0].contains("docs.jsonl line 2: skipped record")
            && warnings[0].contains("--max-record-bytes"),
        "{said}"
    );
    assert_eq!(read_docs(&out).len(), 1);
    assert_eq!(read_stats(&out)["fingerprint"]["skipped"]["record_too_large"], 1);
    // The default limit (64M) reads it; the stage is keyed on the limit.
    let full = run(None);
    assert_eq!(full.status.code(), Some(0), "{}", String::from_utf8_lossy(&full.stderr));
    assert_eq!(read_docs(&out).len(), 2);
    assert_eq!(run(Some("lots")).status.code(), Some(2));
}

#[test]
fn an_input_given_twice_and_doc_chunks_with_a_threshold_are_warned_about() {
    let tmp = tempdir();
    let out = tmp.path().join("out");
    let twice = overlap(["run", "testdata/sample.warc.gz", "./testdata/sample.warc.gz", "--out", &arg(&out)]);
    assert_eq!(twice.status.code(), Some(0));
    let said = String::from_utf8_lossy(&twice.stderr);
    assert!(
        said.contains("./testdata/sample.warc.gz is given more than once (also as testdata/sample.warc.gz)"),
        "{said}"
    );
    let once = overlap(["run", "testdata/sample.warc.gz", "--out", &arg(&tmp.path().join("once"))]);
    assert!(!String::from_utf8_lossy(&once.stderr).contains("more than once"));
    // Through a symbolic link, and through a path that goes up and back.
    let link = tmp.path().join("crawl.warc.gz");
    std::os::unix::fs::symlink(root().join("testdata/sample.warc.gz"), &link).unwrap();
    for other in [arg(&link), "testdata/../testdata/sample.warc.gz".to_string()] {
        let out = arg(&tmp.path().join("linked"));
        let run = overlap(["run", "testdata/sample.warc.gz", &other, "--out", &out]);
        assert_eq!(run.status.code(), Some(0));
        let said = String::from_utf8_lossy(&run.stderr);
        assert!(said.contains(&format!("{other} is given more than once")), "{other}: {said}");
    }

    let doc = |t: &str| {
        let out = tmp.path().join(format!("doc-{t}"));
        let o = overlap(["run", "testdata/sample.warc.gz", "--out", &arg(&out), "--chunk", "doc", "-T", t]);
        assert_eq!(o.status.code(), Some(0));
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let said = doc("15");
    assert!(said.contains("--chunk doc gives each document one chunk") && said.contains("-T 15"), "{said}");
    assert!(!doc("1").contains("--chunk doc"), "-T 1 is what doc chunks are for");
}

// ------------------------------------------------------------ what happens around a run

/// `overlap run ... 2>&1 | head -1`: a closed stderr loses the messages,
/// never the run (as a closed stdout in ripgrep).
#[test]
fn a_closed_stderr_does_not_stop_a_run() {
    let tmp = tempdir();
    let want = tmp.path().join("want");
    overlap_ok(["run", "testdata/sample.warc.gz", "testdata/corrupt.warc.gz", "--out", &arg(&want), "-q"]);
    let out = tmp.path().join("out");
    // --stats and the corrupt input's warnings give it much to write.
    let mut child = overlap_cmd([
        "run",
        "testdata/sample.warc.gz",
        "testdata/corrupt.warc.gz",
        "--out",
        &arg(&out),
        "--stats",
    ])
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    drop(child.stderr.take());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{status}");
    assert_same_outputs(&want, &out, "closed stderr vs -q");
}

/// The lines on stderr.
fn stderr_lines(out: &std::process::Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr).lines().map(str::to_string).collect()
}

#[test]
fn a_memory_budget_above_the_machine_is_taken_down_to_it_with_one_warning() {
    let tmp = tempdir();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    overlap_ok(["run", "testdata/sample.warc.gz", "--out", &arg(&a), "-q"]);
    // Far above any machine: reserving a share of it up front aborted.
    let run = overlap_ok(["run", "testdata/sample.warc.gz", "--out", &arg(&b), "--memory", "1000T"]);
    let lines = stderr_lines(&run);
    if cfg!(target_os = "linux") {
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].starts_with("overlap: warning: --memory ") && lines[0].contains("machine"),
            "{lines:?}"
        );
    }
    assert_same_outputs(&a, &b, "--memory 1000T vs default");
}

#[test]
fn threads_beyond_a_few_per_core_are_capped_with_one_warning() {
    let tmp = tempdir();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    overlap_ok(["run", "testdata/sample.warc.gz", "--out", &arg(&a), "-q", "--threads", "1"]);
    let run = overlap_ok(["run", "testdata/sample.warc.gz", "--out", &arg(&b), "--threads", "100000"]);
    let lines = stderr_lines(&run);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].starts_with("overlap: warning: --threads 100000 is more than 4 per core"), "{lines:?}");
    assert_same_outputs(&a, &b, "--threads 100000 vs 1");
}

#[test]
fn a_threshold_too_large_says_so_with_the_maximum() {
    let tmp = tempdir();
    let out = arg(&tmp.path().join("out"));
    assert_usage_error(
        &["run", "testdata/equiv/docs.jsonl", "--out", &out, "-T", "99999999999"],
        &["too large (the maximum is 4294967295)"],
    );
}

#[test]
fn out_naming_a_file_says_it_is_not_a_directory() {
    let tmp = tempdir();
    let file = tmp.path().join("afile");
    fs::write(&file, b"keep me").unwrap();
    for command in ["run", "fingerprint"] {
        assert_usage_error(
            &[command, "testdata/equiv/docs.jsonl", "--out", &arg(&file)],
            &["afile is a file, not a directory"],
        );
    }
    assert_eq!(fs::read(&file).unwrap(), b"keep me");
}

#[test]
fn method_help_describes_auto_as_readme_does() {
    let help =
        String::from_utf8_lossy(&overlap_ok(["run", "--help"]).stdout).replace(char::is_whitespace, "");
    assert!(help.contains("prefixorcoarsebypredictedwork"), "{help}");
    assert!(!help.contains("coarsefromamillionpairinstanceson"), "{help}");
}

#[test]
fn summaries_say_one_in_the_singular() {
    let tmp = tempdir();
    let out = tmp.path().join("out");
    // The sample has exactly one mirrored host pair.
    let run = overlap_ok(["run", "testdata/sample.warc.gz", "--out", &arg(&out), "-q", "--stats"]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains(" 1 mirrored host pair,"), "{stderr}");
    // One document of one line: one of everything.
    let one = tmp.path().join("one.jsonl");
    fs::write(&one, "{\"url\":\"http://a.example/\",\"text\":\"only line\"}\n").unwrap();
    let run = overlap_ok(["run", &arg(&one), "--out", &arg(&tmp.path().join("one")), "-q", "--stats"]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    for wrong in [" 1 documents", " 1 fingerprints", " 1 groups", " 1 pairs", " 1 records", " 1 copies"] {
        assert!(!stderr.contains(wrong), "{wrong}: {stderr}");
    }
    assert!(stderr.contains("fingerprint: 1 document (0 empty)"), "{stderr}");
    let html = fs::read_to_string(tmp.path().join("one").join("report.html")).unwrap();
    assert!(html.contains(">1 document (0 empty)"), "report.html says 1 documents");
    assert!(!html.contains(" 1 documents"), "report.html says 1 documents");
}

/// A run whose inputs give no document is one line and exit 2, with or
/// without --strict, on every run (the second finds the fingerprint stage
/// up to date): a scheduler must not take it for an audit of no copies.
#[test]
fn a_run_with_no_document_to_analyse_exits_2_saying_what_the_inputs_held() {
    let tmp = tempdir();
    let empty = tmp.path().join("empty.warc.gz");
    fs::write(&empty, b"").unwrap();
    let blank = tmp.path().join("blank.jsonl");
    fs::write(&blank, b"\n").unwrap();
    let garbage = tmp.path().join("garbage.jsonl");
    fs::write(&garbage, b"{\"text\": 1}\n{\"text\": 2}\n").unwrap();
    for (k, (input, why)) in [
        (&empty, "1 input was skipped whole (empty_file)"),
        (&blank, "the inputs hold no records"),
        (&garbage, "2 records read, none a document (bad_json 2)"),
    ]
    .into_iter()
    .enumerate()
    {
        let out = arg(&tmp.path().join(format!("out-{k}")));
        for strict in [false, true, false] {
            let mut args =
                ["run", &arg(input), "--out", &out, "-q"].iter().map(|s| s.to_string()).collect::<Vec<_>>();
            if strict {
                args.push("--strict".into());
            }
            let run = overlap(&args);
            let what = describe(&args, &run);
            assert_eq!(run.status.code(), Some(2), "{what}");
            let lines = stderr_lines(&run);
            assert_eq!(lines.len(), 1, "{what}");
            assert!(
                lines[0].starts_with("overlap: no document to analyse: ") && lines[0].contains(why),
                "{what}"
            );
        }
    }
}

/// `--strict`: a run that skipped something or read nothing exits 3, after
/// writing every output, with one line on stderr; a clean run exits 0.
#[test]
fn strict_exits_3_when_a_record_or_input_was_skipped_or_nothing_was_read() {
    let tmp = tempdir();
    let empty = tmp.path().join("empty.jsonl");
    fs::write(&empty, b"").unwrap();
    let blank = tmp.path().join("blank.jsonl");
    fs::write(&blank, b"\n").unwrap();
    let cases: [(&[&str], &str); 2] = [
        (&["testdata/corrupt.warc.gz"], "skipped as corrupt"),
        (&[&arg(&empty), "testdata/equiv/docs.jsonl"], "1 input was skipped"),
    ];
    for (k, (inputs, why)) in cases.iter().enumerate() {
        let out = tmp.path().join(format!("out-{k}"));
        let mut args = vec!["run".to_string()];
        args.extend(inputs.iter().map(|s| s.to_string()));
        args.extend(["--out".into(), arg(&out), "-q".into(), "--strict".into()]);
        // Twice: the second finds every stage up to date.
        for _ in 0..2 {
            let run = overlap(&args);
            let what = describe(&args, &run);
            assert_eq!(run.status.code(), Some(3), "{what}");
            let lines = stderr_lines(&run);
            assert_eq!(lines.len(), 1, "{what}");
            assert!(lines[0].starts_with("overlap: --strict: ") && lines[0].contains(why), "{what}");
            assert!(out.join("report.html").exists(), "{what}");
        }
    }
    let out = arg(&tmp.path().join("clean"));
    overlap_ok(["run", "testdata/sample.warc.gz", "--out", &out, "-q", "--strict"]);
    overlap_ok(["fingerprint", "testdata/sample.warc.gz", "--out", &out, "-q", "--strict"]);
    let fp = overlap(["fingerprint", "testdata/corrupt.warc.gz", "--out", &out, "-q", "--strict"]);
    assert_eq!(fp.status.code(), Some(3));
}

#[test]
fn warnings_cut_after_the_first_hundred_say_how_many_more_there_were() {
    let tmp = tempdir();
    let input = tmp.path().join("docs.jsonl");
    let mut text = String::from("{\"url\": \"http://a.example/\", \"text\": \"kept\"}\n");
    for i in 0..130 {
        text.push_str(&format!("{{\"url\": \"http://b.example/{i}\", broken\n"));
    }
    std::fs::write(&input, text).unwrap();
    let out = overlap(["run", &arg(&input), "--out", &arg(&tmp.path().join("out"))]);
    assert_eq!(out.status.code(), Some(0));
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(said.lines().filter(|l| l.contains("skipped record (bad_json)")).count(), 100, "{said}");
    assert!(said.contains("... and 30 more skipped corrupt records (counted in stats.json)"), "{said}");
}

/// A JSONL warning names the line in the file and the column in the line
/// (serde_json's "line 1" was the one line it was given), whether the file
/// is plain or gzip; stats.json keeps the record's offset, beside its line.
#[test]
fn jsonl_warnings_name_the_line_in_the_file_and_the_column() {
    use flate2::{Compression, write::GzEncoder};
    use std::io::Write;
    let tmp = tempdir();
    let mut text = String::new();
    for i in 0..5 {
        text.push_str(&format!("{{\"url\": \"http://a.example/{i}\", \"text\": \"page {i}\"}}\n"));
    }
    // A blank line is a line of the file too.
    text.push('\n');
    let offset = text.len();
    text.push_str("{\"abcdefg\": , \"text\": \"t\"}\n{\"text\": \"last\"}\n");
    let plain = tmp.path().join("data.jsonl");
    fs::write(&plain, &text).unwrap();
    let gz = tmp.path().join("data.jsonl.gz");
    let mut enc = GzEncoder::new(Vec::new(), Compression::default());
    enc.write_all(text.as_bytes()).unwrap();
    fs::write(&gz, enc.finish().unwrap()).unwrap();
    for (k, input) in [plain, gz].iter().enumerate() {
        let out = tmp.path().join(format!("out-{k}"));
        let run = overlap_ok(["fingerprint", &arg(input), "--out", &arg(&out)]);
        let want = format!(
            "overlap: warning: {} line 7: skipped record (bad_json): expected value at column 13",
            arg(input)
        );
        assert_eq!(stderr_lines(&run), [want]);
        let corrupt = &read_stats(&out)["fingerprint"]["corrupt"];
        assert_eq!(corrupt.as_array().map(Vec::len), Some(1), "{corrupt}");
        assert_eq!(corrupt[0]["offset"], offset, "{corrupt}");
        assert_eq!(corrupt[0]["line"], 7, "{corrupt}");
    }
}

/// A mistyped command, flag or value gets clap's nearest match on the one
/// line, where the rest of clap's message is dropped.
#[test]
fn a_mistyped_command_or_flag_is_told_the_nearest_one() {
    for (args, nearest) in [
        (&["fingerprnt", "x"][..], "did you mean 'fingerprint'?"),
        (&["explian"][..], "'explain'?"),
        (&["run", "crawl.warc.gz", "--out", "x", "--thread", "2"][..], "did you mean '--threads'?"),
        (&["dedup", "x", "-o", "y", "--level", "exct"][..], "did you mean 'exact'?"),
    ] {
        assert_usage_error(args, &[nearest]);
    }
    // Nothing near: no guess.
    let out = overlap(["zzzzzz"]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("did you mean"));
}

/// A tar archive of WARC files, compressed or not, and whatever
/// `--input-format` says, is refused in one line with the command that
/// extracts it, not read as one garbage record.
#[test]
fn a_tar_archive_of_crawl_files_is_refused_with_the_command_to_extract_it() {
    let tmp = tempdir();
    fs::copy("testdata/sample.warc.gz", tmp.path().join("a.warc.gz")).unwrap();
    for (name, flags) in [("crawl.tar.gz", "-czf"), ("crawl.tar", "-cf")] {
        let made = std::process::Command::new("tar")
            .args([flags, name, "a.warc.gz"])
            .current_dir(tmp.path())
            .status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("note: test skipped: no tar to make an archive with");
            return;
        }
        let archive = arg(&tmp.path().join(name));
        let out = arg(&tmp.path().join("out"));
        assert_usage_error(&["run", &archive, "--out", &out], &["is a tar archive"]);
        assert_usage_error(&["run", &archive, "--out", &out, "--input-format", "warc"], &["tar -xf"]);
        assert!(!tmp.path().join("out").exists());
    }
}

/// A JSONL crawl of `pages` pages sharing the same 60 lines, each with a
/// line of its own.
fn same_lines_crawl(dir: &Path, pages: usize) -> PathBuf {
    let input = dir.join(format!("same-lines-{pages}.jsonl"));
    let common: Vec<String> = (0..60).map(|i| format!("common {i}")).collect();
    let common = common.join("\n");
    let mut text = String::new();
    for d in 0..pages {
        let doc =
            serde_json::json!({"url": format!("http://h{d}.example/"), "text": format!("{common}\nown {d}")});
        text.push_str(&doc.to_string());
        text.push('\n');
    }
    fs::write(&input, text).unwrap();
    input
}

/// Runs `input` with `--method method --strict`, checks that it is
/// refused with exit 2, and returns the last line and the output
/// directory.
fn refused_under_strict(dir: &Path, input: &Path, method: &str) -> (String, PathBuf) {
    let out = dir.join(format!("strict-{method}"));
    let args =
        ["run", &arg(input), "--out", &arg(&out), "--preset", "default", "--method", method, "--strict"];
    let run = overlap(args);
    assert_eq!(run.status.code(), Some(2), "{}", describe(&args.map(String::from), &run));
    let stderr = String::from_utf8_lossy(&run.stderr);
    (stderr.lines().last().unwrap_or_default().to_string(), out)
}

/// A count that would take long (20,000 pages that share the same 60
/// lines: 12 billion pair instances) is forecast before it starts: under
/// `--strict` it is refused in one line (exit 2) that says how many
/// instances, how long, how much scratch space, and that `--max-df`
/// bounds it; without `--strict` the same line is a warning and counting
/// starts; with `--max-df` the run finishes.
#[test]
fn a_count_of_billions_of_pair_instances_is_forecast_and_refused_under_strict() {
    use std::io::BufRead;
    let tmp = tempdir();
    let input = same_lines_crawl(tmp.path(), 20_000);
    for method in ["sort", "coarse"] {
        let (last, out) = refused_under_strict(tmp.path(), &input, method);
        assert!(
            last.starts_with("overlap: --strict: refused before counting: 11999400000 pair instances"),
            "{last}"
        );
        assert!(last.contains(&format!("by --method {method}")) && last.contains("--max-df N"), "{last}");
        assert_eq!(last.contains("of scratch space"), method == "sort", "{last}");
        assert!(!out.join("overlap.csv").exists(), "nothing counted");
    }
    // Without --strict, the forecast is a warning, and counting starts.
    let out = tmp.path().join("warned");
    let args = ["run", &arg(&input), "--out", &arg(&out), "--preset", "default", "--method", "sort"];
    let mut child = overlap_cmd(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let warning = loop {
        match rx.recv_timeout(std::time::Duration::from_secs(300)) {
            Ok(line) if line.contains("pair instances are coming") => break line,
            Ok(_) => continue,
            Err(e) => panic!("no forecast before counting: {e}"),
        }
    };
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(warning.starts_with("overlap: warning: 11999400000 pair instances are coming"), "{warning}");
    // --max-df leaves the shared lines out: nothing is left to count.
    let out = tmp.path().join("bounded");
    let args = [
        "run",
        &arg(&input),
        "--out",
        &arg(&out),
        "--preset",
        "default",
        "--method",
        "sort",
        "--max-df",
        "1000",
        "--strict",
    ];
    let run = overlap(args);
    assert_eq!(run.status.code(), Some(0), "{}", describe(&args.map(String::from), &run));
    assert!(!String::from_utf8_lossy(&run.stderr).contains("pair instances"));
}
/// Prefix filtering is forecast too, from its index, and `auto` refuses
/// before the pass that estimates the distinct candidates when every
/// method passes the limit: 100,000 pages sharing 60 lines took 195 s to
/// be refused, that pass included, and are refused as soon as the index
/// is built now.
#[test]
fn prefix_filtering_and_auto_are_forecast_before_they_generate_candidates() {
    let tmp = tempdir();
    // 60,000 pages: 54 billion candidate instances, at least 15 minutes.
    let input = same_lines_crawl(tmp.path(), 60_000);
    for method in ["auto", "prefix"] {
        let (last, out) = refused_under_strict(tmp.path(), &input, method);
        assert!(
            last.starts_with("overlap: --strict: refused before counting: ")
                && last.contains("candidate pair instances are coming from the prefix index: at least")
                && last.contains("by --method prefix")
                && last.contains("--max-df N"),
            "{last}"
        );
        assert!(!out.join("overlap.csv").exists(), "nothing counted");
    }
}

#[test]
fn a_budget_below_the_smallest_is_one_line_and_exit_2_and_the_smallest_runs() {
    // About 10 MiB of any budget is the process itself; below 32M the
    // stages could not keep within it, so it is refused before any work.
    let tmp = tempdir();
    let out = tmp.path().join("out");
    for (memory, refused) in [("31M", true), ("1G", false), ("32M", false), ("16M", true)] {
        let args: Vec<String> =
            ["run", "testdata/sample.warc.gz", "--out", &arg(&out), "-q", "--memory", memory]
                .iter()
                .map(|s| s.to_string())
                .collect();
        let run = overlap(&args);
        let what = describe(&args, &run);
        if refused {
            assert_eq!(run.status.code(), Some(2), "{what}");
            let lines = stderr_lines(&run);
            assert_eq!(lines.len(), 1, "{what}");
            assert!(lines[0].contains(&format!("'{memory}' is below the minimum of 32.0 MiB")), "{what}");
        } else {
            assert_eq!(run.status.code(), Some(0), "{what}");
            assert!(read_docs(&out).len() > 300, "{what}");
        }
    }
}
