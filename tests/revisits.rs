//! `overlap dedup --format warc-revisits`: the inputs written again with
//! exact copies as revisit records, checked record by record against the
//! inputs and the skip list, read by warcio (digests checked) and
//! replayed by pywb from the output and its CDXJ index.

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::Path;
use std::process::Command;

use common::*;

/// A page of `n` lines, distinct for each `seed` (100 lines make 25 chunks
/// of the paper's four lines, above its T = 15 with one line changed).
fn page(seed: &str, n: usize, changed: Option<usize>) -> String {
    let mut html = format!("<html><head><title>{seed}</title></head><body>\n");
    for i in 0..n {
        let line = if changed == Some(i) {
            format!("a line rewritten on the mirror, number {i}")
        } else {
            format!("line {i} of page {seed}, with words that make it its own: {}", seed.repeat(i % 3 + 1))
        };
        html.push_str(&format!("<p>{line}</p>\n"));
    }
    html.push_str("</body></html>\n");
    html
}

fn sha1(bytes: &[u8]) -> String {
    use sha1::{Digest, Sha1};
    const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let hash = Sha1::digest(bytes);
    let mut out = String::from("sha1:");
    for five in hash.chunks_exact(5) {
        let acc = five.iter().fold(0u64, |a, &b| a << 8 | u64::from(b));
        for s in (0..8).rev() {
            out.push(char::from(ALPHABET[(acc >> (s * 5) & 31) as usize]));
        }
    }
    out
}

/// A response record for `url` at `date`, with digests when `digests`.
fn response(url: &str, date: &str, id: usize, body: &str, digests: bool) -> Vec<u8> {
    let block = http_response("200 OK", "Content-Type: text/html; charset=utf-8\r\n", body.as_bytes());
    let rid = format!("<urn:uuid:00000000-0000-4000-8000-{id:012}>");
    let (bd, pd) = (sha1(&block), sha1(body.as_bytes()));
    let mut fields = vec![("WARC-Record-ID", rid.as_str()), ("WARC-Date", date), ("WARC-Target-URI", url)];
    if digests {
        fields.push(("WARC-Block-Digest", &bd));
        fields.push(("WARC-Payload-Digest", &pd));
    }
    fields.push(("Content-Type", "application/http; msgtype=response"));
    warc_record("response", &fields, &block)
}

fn request(url: &str, date: &str, id: usize) -> Vec<u8> {
    let rid = format!("<urn:uuid:00000000-0000-4000-8000-{id:012}>");
    let block = format!("GET / HTTP/1.1\r\nHost: {}\r\n\r\n", host_of(url));
    warc_record(
        "request",
        &[("WARC-Record-ID", &rid), ("WARC-Date", date), ("WARC-Target-URI", url)],
        block.as_bytes(),
    )
}

fn gz(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// The crawl: `a.warc.gz` compressed record by record (with digests),
/// `b.warc` plain (without). Exact copies with the same bytes, one with
/// the same text in other bytes, a near-replica, an image, requests and
/// metadata.
fn crawl(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let p1 = page("alpha", 100, None);
    let p1_other = p1.replace("</body>", "<!-- served by mirror c --></body>");
    let p2 = page("beta", 100, None);
    let p2_near = page("beta", 100, Some(7));
    let p3 = page("gamma", 100, None);
    let png = String::from("\u{89}PNG not a page");
    let a = [
        warc_record("warcinfo", &[("WARC-Date", "2024-01-01T00:00:00Z")], b"software: test\r\n"),
        request("http://a.example/p1", "2024-01-01T00:00:01Z", 1),
        response("http://a.example/p1", "2024-01-01T00:00:01Z", 2, &p1, true),
        request("http://b.example/p1", "2024-01-01T00:00:02Z", 3),
        response("http://b.example/p1", "2024-01-01T00:00:02Z", 4, &p1, true),
        response("http://c.example/p1", "2024-01-01T00:00:03Z", 5, &p1_other, true),
        warc_record(
            "response",
            &[
                ("WARC-Record-ID", "<urn:uuid:00000000-0000-4000-8000-000000000006>"),
                ("WARC-Date", "2024-01-01T00:00:04Z"),
                ("WARC-Target-URI", "http://a.example/logo.png"),
            ],
            &http_response("200 OK", "Content-Type: image/png\r\n", png.as_bytes()),
        ),
        response("http://a.example/p2", "2024-01-01T00:00:05Z", 7, &p2, true),
        warc_record(
            "metadata",
            &[("WARC-Date", "2024-01-01T00:00:05Z"), ("WARC-Target-URI", "http://a.example/p2")],
            b"outlink: http://a.example/p1\r\n",
        ),
        response("http://d.example/p2", "2024-01-01T00:00:06Z", 8, &p2_near, true),
    ];
    let b = [
        response("http://e.example/p1", "2024-02-01T00:00:00Z", 9, &p1, false),
        response("http://e.example/p3", "2024-02-01T00:00:01Z", 10, &p3, false),
        response("http://f.example/p3", "2024-02-01T00:00:02Z", 11, &p3, false),
    ];
    let a_path = dir.join("a.warc.gz");
    fs::write(&a_path, a.iter().map(|r| gz(r)).collect::<Vec<_>>().concat()).unwrap();
    let b_path = dir.join("b.warc");
    fs::write(&b_path, b.concat()).unwrap();
    (a_path, b_path)
}

/// A record as the test reads it: header fields and block.
#[derive(Clone, Debug)]
struct Rec {
    head: String,
    block: Vec<u8>,
}

impl Rec {
    fn field(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }

    /// The HTTP header and the payload of a response's block.
    fn http(&self) -> (&[u8], &[u8]) {
        let end = self.block.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        self.block.split_at(end)
    }
}

/// The records of WARC bytes (plain, or decompressed).
fn records(mut data: &[u8]) -> Vec<Rec> {
    let mut out = Vec::new();
    while !data.is_empty() {
        let end = data.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        let head = String::from_utf8(data[..end].to_vec()).unwrap();
        let rec = Rec { head, block: Vec::new() };
        let len: usize = rec.field("Content-Length").unwrap().parse().unwrap();
        let block = data[end..end + len].to_vec();
        out.push(Rec { block, ..rec });
        data = &data[end + len..];
        while data.first().is_some_and(|&b| b == b'\r' || b == b'\n') {
            data = &data[1..];
        }
    }
    out
}

/// Runs dedup into `out` and returns the skip list's `url -> (kept_url, why)`.
fn dedup(dir: &Path, out: &Path, extra: &[&str]) -> BTreeMap<String, (String, String)> {
    let mut args =
        vec!["dedup", arg(dir).leak(), "--format", "warc-revisits", "-o", arg(out).leak(), "--cdxj"];
    args.extend_from_slice(extra);
    overlap_ok(&args);
    let skip = out.with_extension("skip.csv");
    let mut args = vec!["dedup", arg(dir).leak(), "--format", "skip", "-o", arg(&skip).leak()];
    args.extend(extra.iter().filter(|a| **a != "--cdxj"));
    overlap_ok(&args);
    let (_, rows) = read_csv(&skip);
    rows.into_iter().map(|r| (r[0].clone(), (r[1].clone(), r[2].clone()))).collect()
}

/// Checks the rewrite of `input` (its records `before`) into `after`,
/// given the skip list and every input record by URL.
fn check_file(
    before: &[Rec],
    after: &[Rec],
    skipped: &BTreeMap<String, (String, String)>,
    responses: &BTreeMap<String, Rec>,
    near_level: bool,
) -> (usize, usize) {
    let (mut revisits, mut notes) = (0, 0);
    let mut after = after.iter();
    for rec in before {
        let got = after.next().expect("a record for each input record");
        let url = rec.field("WARC-Target-URI").unwrap_or_default().to_string();
        let is_response = rec.field("WARC-Type") == Some("response");
        let skip = skipped.get(&url).filter(|_| is_response);
        let kept = skip.map(|(kept, _)| &responses[kept]);
        let same_payload = kept.is_some_and(|k| k.http().1 == rec.http().1);
        match skip {
            Some((kept_url, why)) if why == "exact" && same_payload => {
                revisits += 1;
                let kept = kept.unwrap();
                assert_eq!(got.field("WARC-Type"), Some("revisit"), "{url}");
                assert_eq!(got.field("WARC-Refers-To-Target-URI"), Some(kept_url.as_str()));
                assert_eq!(got.field("WARC-Refers-To-Date"), kept.field("WARC-Date"));
                assert_eq!(got.field("WARC-Refers-To"), kept.field("WARC-Record-ID"));
                assert_eq!(got.field("WARC-Record-ID"), rec.field("WARC-Record-ID"), "the capture's own ID");
                assert!(got.field("WARC-Profile").unwrap().ends_with("/revisit/identical-payload-digest"));
                // Undone: the revisit's HTTP header and the kept capture's
                // payload are the copy's block.
                assert_eq!([&got.block[..], kept.http().1].concat(), rec.block, "{url}: expands back");
            }
            _ => {
                assert_eq!(got.head, rec.head, "{url}: copied as it was");
                assert_eq!(got.block, rec.block, "{url}");
                if let Some((kept_url, why)) = skip.filter(|(_, why)| why == "near" && near_level) {
                    let note = after.next().expect("a note after a near-replica");
                    notes += 1;
                    assert_eq!(why, "near");
                    assert_eq!(note.field("WARC-Type"), Some("metadata"));
                    assert_eq!(note.field("WARC-Concurrent-To"), rec.field("WARC-Record-ID"));
                    assert_eq!(note.field("WARC-Refers-To-Target-URI"), Some(kept_url.as_str()));
                    assert_eq!(
                        note.block,
                        format!(
                            "near-replica-of: {kept_url}\r\nnear-replica-date: {}\r\n",
                            responses[kept_url].field("WARC-Date").unwrap()
                        )
                        .into_bytes()
                    );
                }
            }
        }
    }
    assert!(after.next().is_none(), "no record beyond the input's");
    (revisits, notes)
}

#[test]
fn exact_copies_become_revisits_that_expand_back_and_replay() {
    let tmp = tempdir();
    let (a, b) = crawl(tmp.path());
    let dir = tmp.path().join("analysis");
    overlap_ok(["run", &arg(&a), &arg(&b), "--out", &arg(&dir), "-q"]);

    let a_recs = records(&gunzip(&a));
    let b_recs = records(&fs::read(&b).unwrap());
    let responses: BTreeMap<String, Rec> = a_recs
        .iter()
        .chain(&b_recs)
        .filter(|r| r.field("WARC-Type") == Some("response"))
        .map(|r| (r.field("WARC-Target-URI").unwrap().to_string(), r.clone()))
        .collect();
    let py = python_peers();
    for (name, extra, want_revisits, want_notes) in [
        // a/p1 stands for b/p1 and e/p1 (same bytes) and c/p1 (other
        // bytes, kept whole); e/p3 for f/p3.
        ("exact", &["--level", "exact"][..], 3, 0),
        ("near", &["--level", "near"][..], 3, 1),
        // The newest copy stands: b/p1 and a/p1 revisit e/p1, which comes
        // after them (read in a pass of its own).
        ("newest", &["--level", "exact", "--keep", "newest"][..], 3, 0),
    ] {
        let out = tmp.path().join(name);
        let skipped = dedup(&dir, &out, extra);
        let near = name == "near";
        let (r1, n1) =
            check_file(&a_recs, &records(&gunzip(&out.join("a.warc.gz"))), &skipped, &responses, near);
        let (r2, n2) =
            check_file(&b_recs, &records(&gunzip(&out.join("b.warc.gz"))), &skipped, &responses, near);
        assert_eq!((r1 + r2, n1 + n2), (want_revisits, want_notes), "{name}: revisits and notes");
        // A record per gzip member; the members of records copied from a
        // file compressed record by record are its own bytes.
        let members = gzip_members(&out.join("a.warc.gz"));
        let input_members = gzip_members(&a);
        assert_eq!(members.len(), a_recs.len() + n1, "{name}: one member per record");
        let raw_out = fs::read(out.join("a.warc.gz")).unwrap();
        let raw_in = fs::read(&a).unwrap();
        let spans = |m: &[(u64, Vec<u8>)], len: usize| -> Vec<(usize, usize)> {
            m.iter()
                .enumerate()
                .map(|(i, (o, _))| (*o as usize, m.get(i + 1).map_or(len, |n| n.0 as usize)))
                .collect()
        };
        let in_spans: Vec<&[u8]> =
            spans(&input_members, raw_in.len()).into_iter().map(|(s, e)| &raw_in[s..e]).collect();
        let out_spans: Vec<&[u8]> =
            spans(&members, raw_out.len()).into_iter().map(|(s, e)| &raw_out[s..e]).collect();
        let copied = in_spans.iter().filter(|m| out_spans.contains(m)).count();
        assert_eq!(
            copied,
            a_recs.len() - r1,
            "{name}: every record not replaced is copied compressed as it was"
        );
        check_index(&out);
        // Expanded, the revisits are the records they replaced, byte for
        // byte, and the near-replicas' notes are gone.
        let full = tmp.path().join(format!("{name}-full"));
        let said = overlap_ok([
            "expand",
            &arg(&out.join("a.warc.gz")),
            &arg(&out.join("b.warc.gz")),
            "-o",
            &arg(&full),
            "--stats",
        ]);
        let a_full = gunzip(&full.join("a.warc.gz"));
        assert_eq!(a_full, gunzip(&a), "{name}: expand gives a.warc.gz back");
        let summary = String::from_utf8_lossy(&said.stderr);
        assert_eq!(summary.contains("near-replica note"), near, "{name}: {summary}");
        assert_eq!(
            gunzip(&full.join("b.warc.gz")),
            fs::read(&b).unwrap(),
            "{name}: expand gives b.warc back"
        );
        if let Some(python) = &py {
            peers(python, &out, &responses, &skipped);
        }
    }
}

/// The index has a line per response, revisit and resource record of the
/// output, sorted, each pointing at its gzip member.
fn check_index(out: &Path) {
    let text = fs::read_to_string(out.join("index.cdxj")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut sorted = lines.clone();
    sorted.sort_unstable();
    assert_eq!(lines, sorted, "sorted");
    let mut indexed = 0;
    for line in &lines {
        let json: serde_json::Value = serde_json::from_str(line.splitn(3, ' ').nth(2).unwrap()).unwrap();
        let file = out.join(json["filename"].as_str().unwrap());
        let data = fs::read(file).unwrap();
        let offset: usize = json["offset"].as_str().unwrap().parse().unwrap();
        let length: usize = json["length"].as_str().unwrap().parse().unwrap();
        let mut member = Vec::new();
        flate2::read::GzDecoder::new(&data[offset..offset + length]).read_to_end(&mut member).unwrap();
        let rec = &records(&member)[0];
        assert_eq!(rec.field("WARC-Target-URI"), json["url"].as_str(), "{line}");
        let revisit = rec.field("WARC-Type") == Some("revisit");
        assert_eq!(json["mime"] == "warc/revisit", revisit, "{line}");
        indexed += 1;
    }
    let responses = ["a.warc.gz", "b.warc.gz"]
        .iter()
        .flat_map(|f| records(&gunzip(&out.join(f))))
        .filter(|r| matches!(r.field("WARC-Type"), Some("response" | "revisit" | "resource")))
        .count();
    assert_eq!(indexed, responses, "a line per response and revisit");
}

/// python3 with warcio and pywb, or `None` (and a note) when it lacks them.
fn python_peers() -> Option<String> {
    let python = std::env::var("OVERLAP_PYTHON").unwrap_or_else(|_| "python3".into());
    let probe = Command::new(&python).args(["-c", "import warcio, pywb"]).output();
    if probe.is_ok_and(|o| o.status.success()) {
        return Some(python);
    }
    skip_without_peer("python3 cannot import warcio and pywb (python3 -m pip install warcio pywb)");
    None
}

/// warcio reads every record of the output with its digests checked, and
/// pywb replays each revisited page from the output and its index: the
/// page it serves is the kept capture's payload.
const PEERS: &str = r#"
import json, os, shutil, sys, tempfile, wsgiref.util
from warcio.archiveiterator import ArchiveIterator
outs, expect = sys.argv[1].split(os.pathsep), json.loads(sys.argv[2])
for out in outs:
    for name in sorted(os.listdir(out)):
        if name.endswith('.warc.gz'):
            with open(os.path.join(out, name), 'rb') as f:
                for r in ArchiveIterator(f, check_digests='raise'):
                    r.content_stream().read()
root = tempfile.mkdtemp()
coll = os.path.join(root, 'collections', 'c')
os.makedirs(os.path.join(coll, 'archive'))
os.makedirs(os.path.join(coll, 'indexes'))
for i, out in enumerate(outs):
    for name in os.listdir(out):
        index = name.endswith('.cdxj')
        dest = os.path.join(coll, 'indexes', '%d-%s' % (i, name)) if index else os.path.join(coll, 'archive', name)
        shutil.copy(os.path.join(out, name), dest)
os.chdir(root)
from pywb.apps.frontendapp import FrontEndApp
app = FrontEndApp()
for url, (stamp, body) in expect.items():
    env = {}
    wsgiref.util.setup_testing_defaults(env)
    env['PATH_INFO'] = env['REQUEST_URI'] = '/c/%sid_/%s' % (stamp, url)
    got = {}
    def start(status, headers, exc_info=None):
        got['status'] = status
    served = b''.join(app(env, start))
    assert got['status'].startswith('200'), (url, got['status'])
    assert served == body.encode(), (url, served[:200])
    print('replayed', url)
shutil.rmtree(root)
"#;

fn peers(
    python: &str,
    out: &Path,
    responses: &BTreeMap<String, Rec>,
    skipped: &BTreeMap<String, (String, String)>,
) {
    let mut expect = serde_json::Map::new();
    for (url, (kept, why)) in skipped {
        let rec = &responses[url];
        if why != "exact" || responses[kept].http().1 != rec.http().1 {
            continue;
        }
        let stamp: String = rec.field("WARC-Date").unwrap().chars().filter(char::is_ascii_digit).collect();
        let body = String::from_utf8(responses[kept].http().1.to_vec()).unwrap();
        expect.insert(url.clone(), serde_json::json!([stamp, body]));
    }
    assert!(!expect.is_empty());
    let run = Command::new(python)
        .args(["-c", PEERS])
        .arg(out)
        .arg(serde_json::Value::Object(expect.clone()).to_string())
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "warcio or pywb failed on {}: {}{}",
        out.display(),
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    let replayed = String::from_utf8_lossy(&run.stdout).lines().filter(|l| l.starts_with("replayed")).count();
    assert_eq!(replayed, expect.len());
}

#[test]
fn inputs_that_cannot_be_rewritten_are_refused_before_anything_is_written() {
    let tmp = tempdir();
    let (a, _) = crawl(tmp.path());
    // One gzip stream for the whole file.
    let whole = tmp.path().join("whole.warc.gz");
    fs::write(&whole, gz(&gunzip(&a))).unwrap();
    let dir = tmp.path().join("analysis");
    overlap_ok(["run", &arg(&whole), "--out", &arg(&dir), "-q"]);
    let out = tmp.path().join("out");
    assert_usage_error(
        &["dedup", &arg(&dir), "--format", "warc-revisits", "-o", &arg(&out)],
        &["whole.warc.gz", "not compressed record by record"],
    );
    assert!(!out.join("whole.warc.gz").exists(), "nothing left under the final name");
    // Into the analysis, or onto the inputs: refused.
    let dir2 = tmp.path().join("analysis2");
    overlap_ok(["run", &arg(&a), "--out", &arg(&dir2), "-q"]);
    assert_usage_error(
        &["dedup", &arg(&dir2), "--format", "warc-revisits", "-o", &arg(&dir2.join("x"))],
        &["inside the analysis"],
    );
    assert_usage_error(
        &["dedup", &arg(&dir2), "--format", "warc-revisits", "-o", &arg(tmp.path())],
        &["holds the input"],
    );
}

/// Across a chain: a page unchanged since the previous crawl, with the
/// same payload bytes, becomes a revisit of its capture there; one with
/// the same text in other bytes, a modified page and a new one stay
/// whole; a copy within this crawl still revisits its kept capture here.
/// `--self-contained` names captures of the files written only, and with
/// the previous analysis gone the pages stay whole, said in a warning.
/// warcio reads the output, pywb replays the unchanged page from a
/// collection holding both crawls, and `expand` gives the crawl back.
#[test]
fn pages_unchanged_since_the_previous_crawl_become_revisits_of_their_capture_there() {
    let tmp = tempdir();
    let (p1, p2, p3, p4) = (
        page("alpha", 100, None),
        page("beta", 100, None),
        page("gamma", 100, None),
        page("delta", 100, None),
    );
    let p3_other = p3.replace("</body>", "<!-- served by another server --></body>");
    let old = [
        request("http://a.example/p1", "2024-01-01T00:00:01Z", 1),
        response("http://a.example/p1", "2024-01-01T00:00:01Z", 2, &p1, true),
        response("http://a.example/p2", "2024-01-01T00:00:02Z", 3, &p2, true),
        response("http://a.example/p3", "2024-01-01T00:00:03Z", 4, &p3, true),
    ];
    let new = [
        request("http://a.example/p1", "2024-02-01T00:00:01Z", 11),
        response("http://a.example/p1", "2024-02-01T00:00:01Z", 12, &p1, true),
        response("http://a.example/p2", "2024-02-01T00:00:02Z", 13, &page("beta", 100, Some(7)), true),
        response("http://a.example/p3", "2024-02-01T00:00:03Z", 14, &p3_other, true),
        response("http://a.example/p4", "2024-02-01T00:00:04Z", 15, &p4, true),
        response("http://b.example/p4", "2024-02-01T00:00:05Z", 16, &p4, true),
    ];
    let (old_in, new_in) = (tmp.path().join("old.warc.gz"), tmp.path().join("new.warc.gz"));
    fs::write(&old_in, old.iter().map(|r| gz(r)).collect::<Vec<_>>().concat()).unwrap();
    fs::write(&new_in, new.iter().map(|r| gz(r)).collect::<Vec<_>>().concat()).unwrap();
    let (old_dir, new_dir) = (tmp.path().join("old"), tmp.path().join("new"));
    overlap_ok(["run", &arg(&old_in), "--out", &arg(&old_dir), "-q"]);
    overlap_ok(["run", &arg(&new_in), "--out", &arg(&new_dir), "--previous", &arg(&old_dir), "-q"]);

    let before = records(&gunzip(&new_in));
    let old_recs = records(&gunzip(&old_in));
    let rewrite = |name: &str, extra: &[&str]| -> (Vec<Rec>, String) {
        let out = tmp.path().join(name);
        let mut args = vec![
            "dedup",
            arg(&new_dir).leak(),
            "--format",
            "warc-revisits",
            "--cdxj",
            "-o",
            arg(&out).leak(),
        ];
        args.extend_from_slice(extra);
        args.push("--stats");
        let said = overlap_ok(&args);
        (records(&gunzip(&out.join("new.warc.gz"))), String::from_utf8_lossy(&said.stderr).into_owned())
    };
    let types =
        |recs: &[Rec]| recs.iter().map(|r| r.field("WARC-Type").unwrap().to_string()).collect::<Vec<_>>();

    let (after, said) = rewrite("out", &[]);
    assert_eq!(
        types(&after),
        ["request", "revisit", "response", "response", "response", "revisit"],
        "{said}"
    );
    let p1_now = &after[1];
    assert_eq!(p1_now.field("WARC-Record-ID"), before[1].field("WARC-Record-ID"), "the capture's own ID");
    assert_eq!(p1_now.field("WARC-Date"), Some("2024-02-01T00:00:01Z"));
    assert_eq!(p1_now.field("WARC-Refers-To"), old_recs[1].field("WARC-Record-ID"));
    assert_eq!(p1_now.field("WARC-Refers-To-Date"), Some("2024-01-01T00:00:01Z"));
    assert_eq!(p1_now.field("WARC-Refers-To-Target-URI"), Some("http://a.example/p1"));
    assert_eq!([&p1_now.block[..], old_recs[1].http().1].concat(), before[1].block, "expands back");
    assert_eq!(
        after[5].field("WARC-Refers-To"),
        before[4].field("WARC-Record-ID"),
        "a copy revisits this crawl's capture"
    );
    for k in [0, 2, 3, 4] {
        assert_eq!(
            (&after[k].head, &after[k].block),
            (&before[k].head, &before[k].block),
            "record {k} copied whole"
        );
    }
    assert!(
        said.contains("1 page unchanged since the previous analysis as a revisit of its capture there"),
        "{said}"
    );
    assert!(said.contains("1 unchanged since the previous analysis in other bytes"), "{said}");

    let (after, said) = rewrite("contained", &["--self-contained"]);
    assert_eq!(
        types(&after),
        ["request", "response", "response", "response", "response", "revisit"],
        "{said}"
    );

    // The collection holds both crawls: the previous crawl's file as
    // dedup writes it (nothing to replace there) with its index.
    let old_out = tmp.path().join("old-out");
    overlap_ok(["dedup", &arg(&old_dir), "--format", "warc-revisits", "--cdxj", "-o", &arg(&old_out), "-q"]);
    assert_eq!(gunzip(&old_out.join("old.warc.gz")), gunzip(&old_in));
    if let Some(python) = python_peers() {
        let expect = serde_json::json!({"http://a.example/p1": ["20240201000001", p1]});
        let dirs = std::env::join_paths([old_out.clone(), tmp.path().join("out")]).unwrap();
        let run =
            Command::new(&python).args(["-c", PEERS]).arg(&dirs).arg(expect.to_string()).output().unwrap();
        assert!(
            run.status.success(),
            "warcio or pywb failed: {}{}",
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr)
        );
    }
    // Expanded against the previous crawl's file, the crawl comes back.
    let full = tmp.path().join("full");
    overlap_ok([
        "expand",
        &arg(&old_out.join("old.warc.gz")),
        &arg(&tmp.path().join("out/new.warc.gz")),
        "-o",
        &arg(&full),
        "-q",
    ]);
    assert_eq!(gunzip(&full.join("new.warc.gz")), gunzip(&new_in), "expand gives the crawl back");

    // The previous analysis gone: the page stays whole, and a warning says
    // why.
    fs::rename(&old_dir, tmp.path().join("old-moved")).unwrap();
    let (after, said) = rewrite("gone", &[]);
    assert_eq!(
        types(&after),
        ["request", "response", "response", "response", "response", "revisit"],
        "{said}"
    );
    assert!(said.contains("the previous analysis") && said.contains("cannot be read"), "{said}");
}
