//! The decompression floor of `overlap fingerprint`: reads every input
//! through the same byte source the readers use (`overlap::bytes::read::gz`, with
//! the same inflate and zstd backends and buffer sizes), and does nothing with the
//! bytes. `scripts/bench.sh` times it beside the fingerprint stage, so
//! that the stage's cost is stated as a ratio to merely decompressing the
//! same files, measured in the same run.
//!
//! Usage: `cargo run --release --example floor -- FILE... [--threads N]`.
//! One thread by default, as `zcat` is; with `--threads N`, files are
//! decompressed N at a time. Prints the decompressed byte count to stderr.

use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;
use std::process::ExitCode;

use rayon::prelude::*;

use overlap::bytes::read::gz;

fn main() -> ExitCode {
    let mut files = Vec::new();
    let mut threads = 1usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--threads" {
            match args.next().and_then(|n| n.parse().ok()).filter(|&n| n > 0) {
                Some(n) => threads = n,
                None => {
                    eprintln!("floor: --threads needs a positive number");
                    return ExitCode::from(2);
                }
            }
        } else {
            files.push(PathBuf::from(arg));
        }
    }
    if files.is_empty() {
        eprintln!("usage: floor FILE... [--threads N]");
        return ExitCode::from(2);
    }
    let pool = match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
        Ok(pool) => pool,
        Err(e) => {
            eprintln!("floor: {e}");
            return ExitCode::from(2);
        }
    };
    let sizes: Vec<Result<u64, String>> = pool.install(|| files.par_iter().map(decompress).collect());
    let mut total = 0u64;
    for size in sizes {
        match size {
            Ok(n) => total += n,
            Err(e) => {
                eprintln!("floor: {e}");
                return ExitCode::from(2);
            }
        }
    }
    eprintln!("{total} bytes decompressed");
    ExitCode::SUCCESS
}

/// Decompressed bytes of one file, read the way the readers read it.
fn decompress(path: &PathBuf) -> Result<u64, String> {
    let error = |e: std::io::Error| format!("{}: {e}", path.display());
    let file = File::open(path).map_err(error)?;
    let mut src = gz::Source::new(Box::new(BufReader::with_capacity(gz::BUF_SIZE, file))).map_err(error)?;
    let mut total = 0u64;
    loop {
        let n = src.fill_buf().map_err(error)?.len();
        if n == 0 {
            // A break is damage to skip past, as the readers do.
            if src.take_break().is_some() {
                continue;
            }
            return Ok(total);
        }
        src.consume(n);
        total += n as u64;
    }
}
