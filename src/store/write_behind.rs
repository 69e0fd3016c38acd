//! Writes an output file from a thread of its own, so that the kernel's
//! part of writing overlaps the stage's work instead of adding to it.
//!
//! Copying bytes into the page cache is not free: on a 2-core machine it
//! cost 2 to 4 s of system time per GB written (`cp` of a 4.3 GB
//! `fingerprint-docs.csv`: 9.1 s, 8.8 s of it in the kernel; reading the
//! file back, 0.56 s). At 23 million documents the exact stage writes
//! 4.5 GB and the report 8.7 GB, each from one thread, while the second
//! core waits. Handed to a writer thread, the exact stage took 14.8 s
//! where it took 16.9 (median of three interleaved runs at `--memory 2G`);
//! the report, CPU-bound on its one thread, gained less than 2%.
//!
//! Bytes are gathered in buffers of [`CHUNK`] bytes; a full one goes to the
//! writer thread through a channel of one slot, and comes back empty to be
//! filled again. So at most three buffers exist per file, whatever its size
//! or the disk's speed: the one being filled, one waiting, one being
//! written. A file that never fills one buffer is written when it is
//! finished, without a thread. The bytes reach the file in the order they
//! were given, so the output is the same as writing it directly.
//!
//! A failed write stops the thread; the error comes back from the next
//! [`WriteBehind::hand_off_if_full`] or from [`WriteBehind::finish`], which callers
//! report as they did a failed direct write ("cannot write PATH: ...").

use std::fs::File;
use std::io::{self, Write};
use std::sync::mpsc::{Receiver, SyncSender, channel, sync_channel};
use std::thread::JoinHandle;

/// Bytes handed to the writer thread at a time. A larger buffer saves no
/// measurable time (a `write(2)` of 512 KB costs some 150 µs of copying
/// against a few µs of call), and three of them are what a file holds.
pub(crate) const CHUNK: usize = 512 << 10;

/// Room past [`CHUNK`] for the row that crosses it: a buffer is handed off
/// after the row that fills it, and one made exactly [`CHUNK`] long doubled
/// on that row, so that each of a file's three buffers was 1 MiB (at
/// `--memory 32M` the report's two CSV tables held 6.3 MiB of buffers on
/// an 856 MB crawl; with the room, 3.4). A row longer than this still
/// grows its buffer, once.
const ROOM: usize = 64 << 10;

/// An output file being written from its own thread.
pub(crate) struct WriteBehind {
    buf: Vec<u8>,
    state: State,
}

enum State {
    /// Nothing handed over yet: the file is still here.
    Direct(File),
    Threaded(Writer),
    /// A write failed, here or on the thread, and was reported.
    Failed,
}

struct Writer {
    full: SyncSender<Vec<u8>>,
    empty: Receiver<Vec<u8>>,
    thread: JoinHandle<io::Result<File>>,
}

impl WriteBehind {
    pub(crate) fn new(file: File) -> WriteBehind {
        WriteBehind { buf: empty_buffer(), state: State::Direct(file) }
    }

    /// The buffer being filled, for writers that format into it directly;
    /// call [`WriteBehind::hand_off_if_full`] after adding to it.
    pub(crate) fn buf(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// Hands the buffer to the writer thread once it holds [`CHUNK`] bytes.
    #[inline]
    pub(crate) fn hand_off_if_full(&mut self) -> io::Result<()> {
        if self.buf.len() >= CHUNK { self.hand_off() } else { Ok(()) }
    }

    #[cold]
    fn hand_off(&mut self) -> io::Result<()> {
        crate::base::interrupt::check()?;
        if let State::Direct(_) = self.state {
            self.start();
        }
        match &mut self.state {
            State::Direct(file) => {
                // No thread could be started: write here.
                let result = file.write_all(&self.buf);
                self.buf.clear();
                result.inspect_err(|_| self.state = State::Failed)
            }
            State::Threaded(writer) => {
                let full = std::mem::take(&mut self.buf);
                if writer.full.send(full).is_ok() {
                    // The slot was free once the thread took the buffer
                    // before this one, which it does after giving back the
                    // one it wrote: so that one is taken here, and a file
                    // never has more than three.
                    self.buf = writer.empty.try_recv().unwrap_or_else(|_| empty_buffer());
                    return Ok(());
                }
                // The thread stopped: a write failed there.
                match std::mem::replace(&mut self.state, State::Failed) {
                    State::Threaded(writer) => Err(writer.join().err().unwrap_or_else(stopped)),
                    _ => unreachable!("state was Threaded"),
                }
            }
            State::Failed => Err(failed_before()),
        }
    }

    /// Moves the file to a writer thread; stays direct if none can start.
    fn start(&mut self) {
        let State::Direct(file) = std::mem::replace(&mut self.state, State::Failed) else {
            return;
        };
        let (full, full_rx) = sync_channel::<Vec<u8>>(1);
        let (empty_tx, empty) = channel::<Vec<u8>>();
        // The file is shared with the thread only once it has started: a
        // failed spawn drops its closure, and the file with it.
        let (file_tx, file_rx) = channel::<File>();
        let spawned = std::thread::Builder::new().name("overlap-write".into()).spawn(move || {
            let mut file = file_rx.recv().map_err(|_| stopped())?;
            for mut buf in full_rx {
                file.write_all(&buf)?;
                buf.clear();
                // The other end is gone only when the file is being finished.
                let _ = empty_tx.send(buf);
            }
            Ok(file)
        });
        self.state = match spawned {
            Ok(thread) => {
                // The thread waits on `file_rx`, so this cannot fail.
                let _ = file_tx.send(file);
                State::Threaded(Writer { full, empty, thread })
            }
            Err(_) => State::Direct(file),
        };
    }

    /// Writes what is left and returns the file once every byte is in it.
    pub(crate) fn finish(mut self) -> io::Result<File> {
        match std::mem::replace(&mut self.state, State::Failed) {
            State::Direct(mut file) => file.write_all(&self.buf).map(|()| file),
            State::Threaded(writer) => {
                let rest = std::mem::take(&mut self.buf);
                // A failed send means the thread stopped on an error, which
                // joining returns.
                let _ = writer.full.send(rest);
                writer.join()
            }
            State::Failed => Err(failed_before()),
        }
    }
}

impl Writer {
    fn join(self) -> io::Result<File> {
        drop(self.full);
        self.thread.join().unwrap_or_else(|_| Err(stopped()))
    }
}

fn empty_buffer() -> Vec<u8> {
    Vec::with_capacity(CHUNK + ROOM)
}

fn stopped() -> io::Error {
    io::Error::other("the writer thread stopped")
}

fn failed_before() -> io::Error {
    io::Error::other("an earlier write to this file failed")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes written in pieces of every size, past several buffers, are the
    /// file's bytes in order; a file smaller than a buffer too.
    #[test]
    fn a_file_holds_the_bytes_in_order() {
        let dir = tempfile::tempdir().unwrap();
        for total in [0usize, 10, CHUNK - 1, CHUNK, 3 * CHUNK + 12_345] {
            let path = dir.path().join(format!("f{total}"));
            let mut w = WriteBehind::new(File::create(&path).unwrap());
            let expected: Vec<u8> = (0..total).map(|i| (i * 7 + i / 251) as u8).collect();
            let mut at = 0;
            let mut piece = 1;
            while at < total {
                let end = (at + piece).min(total);
                w.buf().extend_from_slice(&expected[at..end]);
                w.hand_off_if_full().unwrap();
                at = end;
                piece = piece * 5 % 65_537 + 1;
            }
            let file = w.finish().unwrap();
            drop(file);
            assert_eq!(std::fs::read(&path).unwrap(), expected, "{total} bytes");
        }
    }

    /// A write that fails on the thread comes back as an error, from a
    /// later write or from finish, never as success.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_failed_write_is_an_error() {
        // /dev/full fails every write with ENOSPC.
        let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
            return;
        };
        let mut w = WriteBehind::new(full);
        let chunk = vec![b'x'; CHUNK];
        let mut failed = None;
        for _ in 0..8 {
            w.buf().extend_from_slice(&chunk);
            if let Err(e) = w.hand_off_if_full() {
                failed = Some(e);
                break;
            }
        }
        let err = match failed {
            Some(e) => e,
            None => w.finish().expect_err("writes to /dev/full fail"),
        };
        assert_eq!(err.raw_os_error(), Some(libc::ENOSPC), "{err}");
    }
}
