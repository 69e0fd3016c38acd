//! Zstandard frames for [`gz::Source`](super::gz::Source): `.warc.zst` as
//! the WARC-zstd specification (IIPC, 1.0) and Archive Team's Wget-AT write
//! it, and plain zstd files.
//!
//! A `.warc.zst` file is one zstd frame per record (or several), with an
//! optional dictionary in a skippable frame of magic `0x184D2A5D` at the
//! start, stored as a zstd dictionary (`37 a4 30 ec`) or as one zstd frame
//! that decompresses to one. Every frame is decoded with that dictionary.
//! Other skippable frames (`0x184D2A50` to `0x184D2A5F`) carry nothing a
//! reader needs and are passed over. The source treats a frame as it
//! treats a gzip member: the compressed offset where it starts is the
//! offset of the record it starts (as for per-record gzip, so a record can
//! be read again from there with the dictionary), a frame that fails to
//! decode or to check (zstd frames carry a checksum) is a break, and
//! reading resumes at the next frame header. A plain `zstd` file is one
//! frame holding every record, like a whole-file gzip member.
//!
//! The decoding itself is libzstd's, through the `zstd` crate's raw
//! streaming decoder, which stops at the end of each frame and reports it,
//! and keeps one decompression context (and the dictionary) for the whole
//! file.

use std::io;

use zstd::stream::raw::{Decoder, Operation, Status};

/// The first four bytes of every zstd frame.
pub(crate) const FRAME_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// The magic of the skippable frame that holds the dictionary, as it is
/// stored (little-endian `0x184D2A5D`).
pub(crate) const DICT_FRAME_MAGIC: [u8; 4] = [0x5d, 0x2a, 0x4d, 0x18];

/// The first four bytes of a zstd dictionary.
const DICT_MAGIC: [u8; 4] = [0x37, 0xa4, 0x30, 0xec];

/// The largest dictionary read, compressed or not. The specification asks
/// decoders to support 8 MiB; dictionaries trained on WARC records are a
/// few hundred KiB. Larger is refused so that a damaged size field cannot
/// make the reader hold gigabytes.
pub(crate) const MAX_DICT: u32 = 32 << 20;

/// Whether a file starting with `head` is zstd by its first bytes: a frame
/// or a dictionary frame, as the specification says a `.warc.zst` begins
/// (three of the four magic bytes are enough, so that a first frame with
/// one damaged byte is reported as damage rather than read as text).
pub(crate) fn starts_like_zstd(head: &[u8]) -> bool {
    let near =
        |magic: [u8; 4]| head.len() >= 4 && head.iter().zip(magic).filter(|&(&b, m)| b == m).count() >= 3;
    near(FRAME_MAGIC) || near(DICT_FRAME_MAGIC)
}

/// A skippable frame at the start of `head`: its magic's last nibble and
/// the size of its user data.
pub(crate) fn skippable(head: &[u8]) -> Option<(u8, u32)> {
    let &[m0, 0x2a, 0x4d, 0x18, s0, s1, s2, s3, ..] = head else { return None };
    (m0 & 0xf0 == 0x50).then_some((m0 & 0x0f, u32::from_le_bytes([s0, s1, s2, s3])))
}

/// Whether `head` looks like the start of a zstd frame or a skippable
/// frame, not a chance match in compressed data: the magic, and for a zstd
/// frame a header descriptor with its reserved bit clear.
pub(crate) fn plausible_frame_header(head: &[u8]) -> bool {
    match head {
        [0x28, 0xb5, 0x2f, 0xfd, descriptor, ..] => descriptor & 0x08 == 0,
        _ => skippable(head).is_some(),
    }
}

/// The decoder of one input's frames, with its dictionary once read.
pub(crate) struct Frames {
    dec: Decoder<'static>,
}

impl Frames {
    pub(crate) fn new() -> io::Result<Frames> {
        Ok(Frames { dec: Decoder::new()? })
    }

    /// Uses the dictionary in a dictionary frame's user data for every
    /// frame from now on. An error says why the data is not a dictionary;
    /// the frames are then decoded without one (and fail, if they need it).
    pub(crate) fn load_dictionary(&mut self, data: &[u8]) -> Result<(), String> {
        let dict;
        let dict = if data.starts_with(&DICT_MAGIC) {
            data
        } else if data.starts_with(&FRAME_MAGIC) {
            dict = zstd::bulk::decompress(data, MAX_DICT as usize)
                .map_err(|e| format!("its compressed dictionary does not decompress ({e})"))?;
            if !dict.starts_with(&DICT_MAGIC) {
                return Err("it decompresses to something that is not a zstd dictionary".into());
            }
            &dict
        } else {
            return Err("it holds neither a zstd dictionary nor a zstd frame".into());
        };
        self.dec =
            Decoder::with_dictionary(dict).map_err(|e| format!("libzstd refuses its dictionary ({e})"))?;
        Ok(())
    }

    /// Gets ready to decode a new frame, whatever became of the last one.
    pub(crate) fn start_frame(&mut self) -> io::Result<()> {
        self.dec.reinit()
    }

    /// Decodes from `input` into `output`; `remaining == 0` in the status
    /// means the frame ended and its data is all in `output`.
    pub(crate) fn decode(&mut self, input: &[u8], output: &mut [u8]) -> io::Result<Status> {
        self.dec.run_on_buffers(input, output)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognizes_frames_and_skippable_frames() {
        let frame = zstd::bulk::compress(b"WARC/1.0\r\n", 3).unwrap();
        assert!(starts_like_zstd(&frame) && plausible_frame_header(&frame));
        let mut damaged = frame.clone();
        damaged[1] ^= 0x40;
        assert!(starts_like_zstd(&damaged) && !plausible_frame_header(&damaged));
        let dict_frame = [&DICT_FRAME_MAGIC[..], &[3, 0, 0, 0], b"abc"].concat();
        assert!(starts_like_zstd(&dict_frame));
        assert_eq!(skippable(&dict_frame), Some((0xd, 3)));
        assert_eq!(skippable(&[0x50, 0x2a, 0x4d, 0x18, 0, 1, 0, 0]), Some((0, 256)));
        assert_eq!(skippable(&[0x60, 0x2a, 0x4d, 0x18, 0, 1, 0, 0]), None);
        assert!(!starts_like_zstd(b"WARC/1.0") && !starts_like_zstd(b"\x1f\x8b\x08\x00"));
    }

    #[test]
    fn dictionaries_load_plain_or_compressed_and_garbage_is_refused() {
        let samples: Vec<Vec<u8>> = (0..200)
            .map(|i| format!("WARC/1.0\r\nWARC-Record-ID: <urn:{i}>\r\n\r\nhello {i}").into_bytes())
            .collect();
        let dict = zstd::dict::from_samples(&samples, 4096).unwrap();
        let mut frames = Frames::new().unwrap();
        frames.load_dictionary(&dict).unwrap();
        frames.load_dictionary(&zstd::bulk::compress(&dict, 3).unwrap()).unwrap();
        assert!(frames.load_dictionary(b"not a dictionary").is_err());
        assert!(frames.load_dictionary(&zstd::bulk::compress(b"plain text", 3).unwrap()).is_err());
    }
}
