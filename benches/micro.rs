//! Criterion micro-benchmarks of the pipeline's hot paths, through the
//! library's public API only: WARC record parsing (per-record gzip and
//! plain), HTML to text, normalization, chunk fingerprints (`lines:4`,
//! `words:8`), the fuzzy signature, the sort of a fingerprint partition
//! (in memory and spilled), and pair counting from the fingerprint groups
//! of a partition (the group scan every method reads through, then the
//! sort, coarse and prefix methods).
//!
//! `cargo bench --bench micro [FILTER]`; a quick look:
//! `cargo bench --bench micro -- --warm-up-time 1 --measurement-time 2`.
//! The input comes from `common` (the same pages as `benches/pipeline.rs`),
//! smaller than there, since Criterion runs each case many times.

use std::cell::Cell;
use std::hint::black_box;
use std::io::Cursor;
use std::path::{Path, PathBuf};

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};

use overlap::base::progress::Progress;
use overlap::bytes::chunk::{Chunker, Chunking};
use overlap::bytes::extract::html::html_to_text;
use overlap::bytes::extract::normalize::normalize;
use overlap::bytes::fuzzy;
use overlap::bytes::read::Reader;
use overlap::bytes::read::gz;
use overlap::bytes::read::jsonl::JsonlReader;
use overlap::bytes::read::warc::WarcReader;
use overlap::stages::pairs::PairsStats;
use overlap::stages::pairs::coarse::CoarseCounting;
use overlap::stages::pairs::prefix::PrefixCounting;
use overlap::stages::pairs::sort::SortCounting;
use overlap::stages::pairs::{
    CoarseVariant, CountInput, Counted, CountingMethod, Criterion as PairCriterion, scan_groups,
};
use overlap::store::{Center, ChunkRecord, Header, Mapped, RecordWriter};

mod common;

/// HTML bytes of the input pages.
const HTML_BYTES: usize = 8 << 20;
/// T for the pair counting cases (the tool's default).
const THRESHOLD: u32 = 15;

struct Input {
    pages: Vec<String>,
    texts: Vec<String>,
    normalized: Vec<String>,
}

fn input() -> Input {
    let (_, pages) = common::corpus(HTML_BYTES);
    let (texts, normalized) = common::texts(&pages);
    Input { pages, texts, normalized }
}

fn total(items: &[String]) -> u64 {
    items.iter().map(|s| s.len() as u64).sum()
}

fn read_warc(c: &mut Criterion, input: &Input) {
    let mut g = c.benchmark_group("warc");
    for (name, gzip) in [("gzip per record", true), ("plain", false)] {
        // Leaked once so that every iteration reads the same bytes without
        // copying them.
        let bytes: &'static [u8] = Box::leak(common::warc_file(&input.pages, gzip).into_boxed_slice());
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_function(name, |b| {
            b.iter(|| {
                let src = gz::Source::new(Box::new(Cursor::new(bytes))).expect("a source");
                let mut reader = WarcReader::new(src, 64 << 20);
                let mut items = 0u64;
                while let Some(item) = reader.next_item().expect("reading memory") {
                    black_box(&item);
                    items += 1;
                }
                assert_eq!(items, input.pages.len() as u64);
            })
        });
    }
    g.finish();
}

/// JSONL lines of the pages' texts with the fields datatrove writes, the
/// URL at the top level (`--url-field url`) or in `metadata`
/// (`--url-field metadata.url`, where datatrove and dolma keep it): the
/// same bytes but for where the URL is.
fn read_jsonl(c: &mut Criterion, input: &Input) {
    let mut g = c.benchmark_group("jsonl");
    for url_field in ["url", "metadata.url"] {
        let mut data = Vec::new();
        for (i, text) in input.texts.iter().enumerate() {
            let url = format!("https://host{}.example/page/{i}", i % 97);
            let mut metadata = serde_json::json!({
                "dump": "CC-MAIN-2024-10",
                "date": "2024-02-20T12:00:00Z",
                "file_path": format!("s3://commoncrawl/crawl-data/segments/{}/warc.gz", i % 13),
                "language": "en",
                "language_score": 0.93,
                "token_count": text.len() / 5,
            });
            let mut line = serde_json::json!({"id": format!("<urn:uuid:{i:08}>"), "text": text});
            if url_field == "url" {
                line["url"] = url.into();
            } else {
                metadata["url"] = url.into();
            }
            line["metadata"] = metadata;
            serde_json::to_writer(&mut data, &line).expect("JSON into memory");
            data.push(b'\n');
        }
        let bytes: &'static [u8] = Box::leak(data.into_boxed_slice());
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_function(url_field, |b| {
            b.iter(|| {
                let src = gz::Source::new(Box::new(Cursor::new(bytes))).expect("a source");
                let mut reader = JsonlReader::new(src, url_field, "text", 64 << 20);
                let mut urls = 0u64;
                while let Some(item) = reader.next_item().expect("reading memory") {
                    if let overlap::bytes::read::Item::Doc(doc) = black_box(&item) {
                        urls += u64::from(!doc.url.is_empty());
                    }
                }
                assert_eq!(urls, input.texts.len() as u64, "every line gives its URL");
            })
        });
    }
    g.finish();
}

fn extract(c: &mut Criterion, input: &Input) {
    let mut g = c.benchmark_group("extract");
    g.throughput(Throughput::Bytes(total(&input.pages)));
    g.bench_function("html_to_text", |b| {
        b.iter(|| {
            for p in &input.pages {
                black_box(html_to_text(black_box(p)));
            }
        })
    });
    g.throughput(Throughput::Bytes(total(&input.texts)));
    let mut out = String::with_capacity(1 << 20);
    g.bench_function("normalize", |b| {
        b.iter(|| {
            for t in &input.texts {
                out.clear();
                black_box(normalize(black_box(t), &mut out));
            }
        })
    });
    g.finish();
}

fn chunk(c: &mut Criterion, input: &Input) {
    let mut g = c.benchmark_group("fingerprints");
    g.throughput(Throughput::Bytes(total(&input.normalized)));
    g.bench_function("fuzzy signature", |b| {
        b.iter(|| {
            for t in &input.normalized {
                black_box(fuzzy::fuzzy(black_box(t), fuzzy::MIN_TOKEN_LEN, fuzzy::QUANT_RATE));
            }
        })
    });
    for spec in ["lines:4", "words:8"] {
        let chunking: Chunking = spec.parse().expect("a valid chunk spec");
        let mut chunker = Chunker::new();
        let mut out = Vec::with_capacity(1 << 16);
        g.bench_function(spec, |b| {
            b.iter(|| {
                for t in &input.normalized {
                    out.clear();
                    black_box(chunker.fingerprints(black_box(t), chunking, &mut out));
                }
            })
        });
    }
    g.finish();
}

/// The FPrint-DocID records of the input with `lines:4`, in document order.
fn records(input: &Input) -> Vec<ChunkRecord> {
    let chunking: Chunking = "lines:4".parse().expect("a valid chunk spec");
    let mut chunker = Chunker::new();
    let mut out = Vec::new();
    let mut records = Vec::new();
    for (doc, t) in input.normalized.iter().enumerate() {
        out.clear();
        chunker.fingerprints(t, chunking, &mut out);
        records.extend(out.iter().map(|&fprint| ChunkRecord { fprint, doc: doc as u32 }));
    }
    records
}

fn write_part(path: &Path, records: &[ChunkRecord], sorted: bool) {
    let mut w =
        RecordWriter::create(path, Header::new::<ChunkRecord>("lines:4:4", sorted, 0, 1)).expect("a file");
    for r in records {
        w.push(r).expect("writing");
    }
    w.finish().expect("writing");
}

/// Near-replicas for the pair cases: the records of every document again
/// under `copies` more docIDs, each copy without a random tenth of its
/// fingerprints (a few lines edited), so that groups are larger and pairs
/// many, as in a crawl.
fn with_copies(records: &[ChunkRecord], documents: u32, copies: u32) -> Vec<ChunkRecord> {
    let mut rng = common::Rng::new(0x00C0_F1E5);
    let mut out = records.to_vec();
    for k in 1..=copies {
        out.extend(
            records
                .iter()
                .filter(|_| rng.f64() >= 0.1)
                .map(|r| ChunkRecord { fprint: r.fprint, doc: r.doc + k * documents }),
        );
    }
    out
}

/// Records of a partition in the tool's proportions: 2 million, random
/// fingerprints, docIDs in input order.
const SORT_RECORDS: u64 = 2_000_000;

fn partition_sort(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut rng = common::Rng::new(0x5027);
    let records: Vec<ChunkRecord> =
        (0..SORT_RECORDS).map(|i| ChunkRecord { fprint: rng.next_u64(), doc: (i / 400) as u32 }).collect();
    let part = dir.path().join("part-00000.fpd");
    write_part(&part, &records, false);
    let src = Mapped::<ChunkRecord>::open(&part).expect("the partition");
    let bytes = (records.len() * std::mem::size_of::<ChunkRecord>()) as u64;
    let mut g = c.benchmark_group("partition sort");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(bytes));
    // The whole partition within the budget, and a budget of an eighth of
    // it (sorted segments spilled and merged).
    for (name, budget) in [("in memory", bytes * 2), ("spilled", bytes / 8)] {
        let scratch = dir.path().join(name.replace(' ', "-"));
        std::fs::create_dir_all(&scratch).expect("a scratch directory");
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut n = 0u64;
                overlap::store::sort::sorted(&src, budget, &scratch, |r| {
                    black_box(r);
                    n += 1;
                    Ok(())
                })
                .expect("sorting");
                assert_eq!(n, records.len() as u64);
            })
        });
    }
    g.finish();
}

fn pairs(c: &mut Criterion, input: &Input) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    const COPIES: u32 = 3;
    let documents = input.normalized.len() as u32;
    let mut records = with_copies(&records(input), documents, COPIES);
    records.sort_unstable();
    let part = dir.path().join("part-00000.fpd");
    write_part(&part, &records, true);
    // Every document counted (no exact copies in the input).
    let centers = dir.path().join("centers.bin");
    let mut w = RecordWriter::create(&centers, Header::new::<Center>("", true, 0, 1)).expect("a file");
    for doc in 0..documents * (COPIES + 1) {
        w.push(&Center(doc)).expect("writing");
    }
    w.finish().expect("writing");
    let counted = Counted::open(&centers).expect("the centers");
    let parts: Vec<PathBuf> = vec![part.clone()];
    let scratch = dir.path().join("scratch");
    std::fs::create_dir_all(&scratch).expect("a scratch directory");
    let progress = Progress::silent();
    let count_input = CountInput {
        parts: &parts,
        counted: &counted,
        threshold: THRESHOLD,
        criterion: PairCriterion::count(THRESHOLD),
        sizes: None,
        max_df: None,
        cross_at: None,
        memory: 512 << 20,
        scratch: &scratch,
        progress: &progress,
    };

    let mut g = c.benchmark_group("pairs");
    g.sample_size(10);
    let instances = scan_groups(&part, &counted, |_, _| Ok(())).expect("scanning").pairs;
    g.throughput(Throughput::Elements(instances));
    g.bench_function("group scan, pair generation", |b| {
        b.iter(|| {
            let mut sum = 0u64;
            scan_groups(&part, &counted, |docs, _| {
                for (k, &i) in docs.iter().enumerate() {
                    for &j in &docs[k + 1..] {
                        sum = sum.wrapping_add(u64::from(i) << 32 | u64::from(j));
                    }
                }
                Ok(())
            })
            .expect("scanning");
            black_box(sum)
        })
    });
    for name in ["sort", "coarse", "prefix"] {
        g.bench_function(format!("count: {name}"), |b| {
            b.iter_batched(
                || method(name),
                |m| {
                    let mut stats = PairsStats::default();
                    let mut rows = 0u64;
                    m.count(&count_input, &mut stats, &mut |o| {
                        black_box(o);
                        rows += 1;
                        Ok(())
                    })
                    .expect("counting");
                    rows
                },
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

/// A fresh counting method by name (prefix counting keeps its index).
fn method(name: &str) -> Box<dyn CountingMethod> {
    match name {
        "sort" => Box::new(SortCounting { pair_instances: None }),
        "coarse" => Box::new(CoarseCounting {
            variant: CoarseVariant::default(),
            counters: None,
            pair_instances: None,
        }),
        _ => Box::new(PrefixCounting { index: Cell::new(None) }),
    }
}

fn benches(c: &mut Criterion) {
    let input = input();
    read_warc(c, &input);
    read_jsonl(c, &input);
    extract(c, &input);
    chunk(c, &input);
    partition_sort(c);
    pairs(c, &input);
}

criterion_group!(micro, benches);
criterion_main!(micro);
