//! Revisits read before the record that holds their payload.
//!
//! A revisit names its original by payload digest or by URI and date, and
//! the original may come later in the inputs: `overlap run crawl/*.warc.gz`
//! sorts `wget-dedup.warc.gz` (the revisits) before `wget.warc.gz` (the
//! originals). A revisit whose original is not known when it is written is
//! set aside here, in a scratch file, and settled once every input is read:
//! a document when some input held its original (its docID then comes after
//! every input's documents), skipped as `revisit_unresolved` when none did.
//! The file holds what the revisit's row needs, in input order, and is read
//! back once; nothing of it stays in memory.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;

use super::copies::Key;
use super::{CopyOf, Seen};
use crate::store::docs::CaptureStatus;
use crate::store::handles::Payload;

/// The revisits set aside, in the order they were written.
pub(super) struct LateRevisits {
    path: PathBuf,
    out: Option<BufWriter<File>>,
    count: u64,
}

/// A revisit set aside: its input, its place among the records read (which
/// orders its URL's captures), and the revisit.
pub(super) struct Late {
    pub(super) input: usize,
    pub(super) order: u64,
    pub(super) copy: CopyOf,
}

impl LateRevisits {
    /// Sets revisits aside in `scratch`; the file is made for the first.
    pub(super) fn new(scratch: &Path) -> LateRevisits {
        LateRevisits { path: scratch.join("late-revisits.bin"), out: None, count: 0 }
    }

    /// Sets `copy` aside, a revisit of `input` with `order` records read
    /// before it.
    pub(super) fn push(&mut self, input: usize, order: u64, copy: &CopyOf) -> anyhow::Result<()> {
        if self.out.is_none() {
            let file =
                File::create(&self.path).with_context(|| format!("cannot create {}", self.path.display()))?;
            self.out = Some(BufWriter::new(file));
        }
        let Some(out) = self.out.as_mut() else { unreachable!("made above") };
        let mut record = Vec::with_capacity(64 + copy.url.len() + copy.host.len());
        encode(input, order, copy, &mut record);
        out.write_all(&record).with_context(|| format!("cannot write {}", self.path.display()))?;
        self.count += 1;
        Ok(())
    }

    /// Every revisit set aside, in order, for `f`.
    pub(super) fn drain(mut self, mut f: impl FnMut(Late) -> anyhow::Result<()>) -> anyhow::Result<()> {
        let Some(out) = self.out.take() else { return Ok(()) };
        let what = || format!("cannot read back {}", self.path.display());
        out.into_inner().map_err(|e| e.into_error()).with_context(what)?;
        let mut input = BufReader::new(File::open(&self.path).with_context(what)?);
        for _ in 0..self.count {
            f(decode(&mut input).with_context(what)?)?;
        }
        drop(input);
        std::fs::remove_file(&self.path).with_context(|| format!("cannot remove {}", self.path.display()))
    }
}

fn encode(input: usize, order: u64, c: &CopyOf, out: &mut Vec<u8>) {
    out.extend_from_slice(&(input as u64).to_le_bytes());
    out.extend_from_slice(&order.to_le_bytes());
    out.extend_from_slice(&c.offset.to_le_bytes());
    for key in &c.keys {
        out.push(u8::from(key.is_some()));
        out.extend_from_slice(&key.unwrap_or_default());
    }
    out.extend_from_slice(&c.payload.digest.to_le_bytes());
    out.extend_from_slice(&c.payload.decoding.to_le_bytes());
    for s in [&c.url, &c.host, &c.seen.date] {
        out.extend_from_slice(&(s.len() as u64).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    }
}

fn decode(r: &mut impl Read) -> std::io::Result<Late> {
    fn u64_of(r: &mut impl Read) -> std::io::Result<u64> {
        let mut b = [0u8; 8];
        r.read_exact(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }
    fn string_of(r: &mut impl Read) -> std::io::Result<String> {
        let len = usize::try_from(u64_of(r)?).map_err(std::io::Error::other)?;
        let mut b = vec![0u8; len];
        r.read_exact(&mut b)?;
        String::from_utf8(b).map_err(std::io::Error::other)
    }
    let input = usize::try_from(u64_of(r)?).map_err(std::io::Error::other)?;
    let order = u64_of(r)?;
    let offset = u64_of(r)?;
    let mut keys: [Option<Key>; 2] = [None, None];
    for key in &mut keys {
        let mut b = [0u8; 13];
        r.read_exact(&mut b)?;
        if b[0] == 1 {
            let mut k = Key::default();
            k.copy_from_slice(&b[1..]);
            *key = Some(k);
        }
    }
    let digest = u64_of(r)?;
    let mut decoding = [0u8; 4];
    r.read_exact(&mut decoding)?;
    let url = string_of(r)?;
    let host = string_of(r)?;
    // A revisit's status is always `revisit`.
    let seen = Seen { date: string_of(r)?, status: CaptureStatus::Revisit };
    let payload = Payload { digest, decoding: u32::from_le_bytes(decoding) };
    Ok(Late {
        input,
        order,
        copy: CopyOf { offset, url, host, bytes: 0, keys, revisit: true, payload, seen },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisits_set_aside_come_back_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut late = LateRevisits::new(dir.path());
        let made: Vec<Late> = (0..1000u64)
            .map(|i| Late {
                input: (i % 3) as usize,
                order: i * 7,
                copy: CopyOf {
                    offset: i * 100,
                    url: format!("http://h{i}.example/é{i}"),
                    host: format!("h{i}.example"),
                    bytes: 0,
                    keys: [(i % 2 == 0).then_some([i as u8; 12]), Some([1; 12])],
                    revisit: true,
                    payload: Payload { digest: i ^ 0xdead, decoding: i as u32 },
                    seen: Seen {
                        date: format!("2024-01-0{}T00:00:00Z", i % 9),
                        status: CaptureStatus::Revisit,
                    },
                },
            })
            .collect();
        for l in &made {
            late.push(l.input, l.order, &l.copy).unwrap();
        }
        assert_eq!(late.count, 1000);
        let path = dir.path().join("late-revisits.bin");
        let mut back = Vec::new();
        late.drain(|l| {
            back.push(l);
            Ok(())
        })
        .unwrap();
        assert!(!path.exists(), "the scratch file is removed once read");
        assert_eq!(back.len(), made.len());
        for (a, b) in made.iter().zip(&back) {
            assert_eq!((a.input, a.order), (b.input, b.order));
            let (x, y) = (&a.copy, &b.copy);
            assert_eq!(
                (x.offset, &x.url, &x.host, x.keys, x.payload, &x.seen.date, x.seen.status),
                (y.offset, &y.url, &y.host, y.keys, y.payload, &y.seen.date, y.seen.status)
            );
        }
    }
}
