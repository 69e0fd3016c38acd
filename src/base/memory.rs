//! Memory sizes: the `--memory` budget and peak resident memory per stage;
//! and zeroed arrays on huge pages for the randomly accessed counters.

use std::fmt;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::str::FromStr;
use std::sync::atomic::{AtomicU8, AtomicU16, AtomicU32, AtomicU64, Ordering};

use memmap2::{Advice, MmapMut};

/// A size in bytes, parsed from `2G`, `512M`, `1.5GiB`, `100000`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ByteSize(pub u64);

impl FromStr for ByteSize {
    type Err = String;

    fn from_str(s: &str) -> Result<ByteSize, String> {
        let t = s.trim();
        let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
        let (number, unit) = t.split_at(split);
        let shift = match unit.trim().to_ascii_lowercase().as_str() {
            "" | "b" => 0,
            "k" | "kb" | "kib" => 10,
            "m" | "mb" | "mib" => 20,
            "g" | "gb" | "gib" => 30,
            "t" | "tb" | "tib" => 40,
            _ => return Err(format!("'{s}' is not a size (use e.g. 512M, 2G, 1.5G)")),
        };
        let value: f64 =
            number.parse().map_err(|_| format!("'{s}' is not a size (use e.g. 512M, 2G, 1.5G)"))?;
        let bytes = value * (1u64 << shift) as f64;
        if !bytes.is_finite() || bytes < 1.0 || bytes > u64::MAX as f64 {
            return Err(format!("'{s}' is not a usable size"));
        }
        Ok(ByteSize(bytes as u64))
    }
}

impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
        let mut v = self.0 as f64;
        let mut u = 0;
        while v >= 1024.0 && u + 1 < UNITS.len() {
            v /= 1024.0;
            u += 1;
        }
        if u == 0 { write!(f, "{} B", self.0) } else { write!(f, "{v:.1} {}", UNITS[u]) }
    }
}

/// What a process of the tool holds resident whatever its budget and its
/// crawl: the binary's code and the libraries it touches (about 7.5 MiB on
/// Linux), the threads' stacks and the allocator's per-thread pools. Each
/// stage of `overlap run` on the bundled sample peaks at 8.8 to 9.8 MiB
/// (`--memory 32M`, release build): that much of any budget is never the
/// stages' to divide, and sizing their shares from the whole of `--memory`
/// took them past it at small budgets (at 16M, where it was two thirds of
/// the budget, the fingerprint stage peaked at 27.9 MiB on an 856 MB
/// crawl). The stages divide [`working`] instead.
pub(crate) const BASE: u64 = 10 << 20;

/// The smallest `--memory`: the [`BASE`] and 22 MiB for the stages, which
/// is what every stage needs to stay within the budget + 15% on generated
/// crawls of 213 MB to 3.4 GB (the table in docs/performance.md).
pub(crate) const MIN_BUDGET: u64 = 32 << 20;

/// The share of the `--memory` budget the stages divide among their
/// buffers, sorts and spills: the budget less the process's [`BASE`].
pub(crate) fn working(budget: u64) -> u64 {
    budget.saturating_sub(BASE)
}

/// The `--memory` a working share comes from, for messages that tell the
/// user what to give: the inverse of [`working`] at every budget from
/// [`MIN_BUDGET`] up.
pub(crate) fn stated(working: u64) -> u64 {
    working.saturating_add(BASE)
}

/// The stages' working share of `--memory`, once it is known (0 before).
static BUDGET: AtomicU64 = AtomicU64::new(0);

/// Records the stages' working share of the budget ([`working`]), for
/// what sizes itself by it without being handed it ([`scan_window`]).
pub(crate) fn set_budget(bytes: u64) {
    BUDGET.store(bytes, Ordering::Relaxed);
}

/// A buffer's size as a share of the budget: `budget / divisor`, between
/// `min` and `max` bytes (`max` before a budget is known). The fixed sizes
/// that suit the default budget (1 MiB read buffers, 64 KiB write
/// buffers, whole mapped files resident) were most of what every stage
/// held at `--memory 16M`; at 2G they are what they were, and so is the
/// speed.
pub(crate) fn sized_by_budget(divisor: u64, min: usize, max: usize) -> usize {
    match BUDGET.load(Ordering::Relaxed) {
        0 => max,
        budget => usize::try_from(budget / divisor).unwrap_or(max).clamp(min, max),
    }
}

/// How much of a mapped file a pass that reads it in order keeps resident
/// behind its read position: a 64th of the budget, between 1 and 32 MiB.
/// Letting go of the pages a mebibyte at a time at every budget cost the
/// pairs stage 7% of its time on a generated 856 MB crawl at `--memory 2G`
/// (one `madvise` a mebibyte, with the shootdown of the other threads' TLB
/// entries each time): five interleaved rounds, 3.33 s against 3.10 s at
/// the median.
pub(crate) fn scan_window() -> usize {
    sized_by_budget(64, 1 << 20, 32 << 20)
}

/// The highest peak seen before the last [`pass_peak`] reset, so that the
/// stage's figure still covers every pass.
static EARLIER_PEAK: AtomicU64 = AtomicU64::new(0);

/// Makes the allocator serve every allocation of 4 MiB or more by a
/// mapping of its own, given back to the system when freed. Linux with
/// glibc only; elsewhere a no-op. Called as a command starts, before the
/// stages allocate.
///
/// glibc raises its mmap threshold each time a mapped block is freed, up
/// to 32 MiB: after a freed 25 MB list, later lists of up to that size
/// came from the heap, which keeps freed memory, and the report's peak RSS
/// on 2.1 million pages at `--memory 256M` was 205 MB for a heap peak of
/// 165 MB. With the threshold fixed it is 167 MB; in `overlap run` every
/// stage's peak fell (fingerprint 161 to 128 MB, exact 138 to 128, pairs
/// 186 to 160, report 256 to 175). Allocations below 4 MiB, the
/// per-document ones of the fingerprint stage among them, are not
/// concerned.
pub(crate) fn configure_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt sets one of the allocator's tuning parameters; it
    // takes no pointer, and only decides how later requests are served.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 4 << 20);
    }
}

/// Hands the memory earlier stages freed back to the system, then resets
/// the kernel's peak-RSS counter so the next [`peak_rss`] measures one
/// stage only. Linux only; elsewhere a no-op.
///
/// glibc keeps freed memory in its arenas, one per thread that allocated:
/// in `overlap run`, each stage started with what the stages before it had
/// freed still resident, and the report's peak on 2.1 million pages at
/// `--memory 256M` was 300 MB against 198 MB as a process of its own.
pub fn reset_peak_rss() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory of the allocator's own
    // arenas to the system; it takes no pointer and touches no live
    // allocation.
    unsafe {
        libc::malloc_trim(0);
    }
    EARLIER_PEAK.store(0, Ordering::Relaxed);
    clear_peak();
}

/// Peak resident set size since the last [`pass_peak`] (or stage start),
/// and starts measuring the next pass. The stage's [`peak_rss`] still
/// covers every pass.
pub fn pass_peak() -> Option<u64> {
    let peak = current_peak();
    if let Some(p) = peak {
        EARLIER_PEAK.fetch_max(p, Ordering::Relaxed);
    }
    clear_peak();
    peak
}

/// Peak resident set size in bytes since the last [`reset_peak_rss`], if
/// the system reports it.
pub fn peak_rss() -> Option<u64> {
    current_peak().map(|p| p.max(EARLIER_PEAK.load(Ordering::Relaxed)))
}

/// Element types whose all-zero bytes are a valid value (zero), with an
/// alignment a page satisfies.
///
/// # Safety
/// Implement only for such types.
pub unsafe trait ZeroValid: Sized {}
// SAFETY: integers and atomic integers are valid as zero bytes, and their
// alignment is at most 8.
unsafe impl ZeroValid for u64 {}
unsafe impl ZeroValid for AtomicU8 {}
unsafe impl ZeroValid for AtomicU16 {}
unsafe impl ZeroValid for AtomicU32 {}

/// An array of `len` zeros in an anonymous mapping that asks for
/// transparent huge pages.
///
/// Coarse counting increments counters at random over a gigabyte or more.
/// With 4 KiB pages nearly every access misses the TLB, and under a
/// hypervisor a miss walks two page tables; with 2 MiB pages a gigabyte is
/// 512 TLB entries. Measured on a 1 GiB array of saturating byte counters
/// with prefetching: 2.5 to 3.6 times the increments per second. The kernel
/// zeroes the pages on first touch, so a large array costs nothing until it
/// is used, and where huge pages are unavailable this is an ordinary
/// mapping.
pub struct ZeroedArray<T: ZeroValid> {
    map: MmapMut,
    len: usize,
    _t: PhantomData<T>,
}

impl<T: ZeroValid> ZeroedArray<T> {
    pub fn new(len: usize) -> std::io::Result<ZeroedArray<T>> {
        let bytes = len.checked_mul(std::mem::size_of::<T>()).ok_or(std::io::ErrorKind::OutOfMemory)?;
        let map = MmapMut::map_anon(bytes.max(1))?;
        // Only a hint: a kernel without transparent huge pages refuses it,
        // and the array works all the same.
        let _ = map.advise(Advice::HugePage);
        Ok(ZeroedArray { map, len, _t: PhantomData })
    }
}

impl<T: ZeroValid> Deref for ZeroedArray<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: the mapping holds `len` elements' bytes, page-aligned,
        // zeroed by the kernel, which `ZeroValid` makes valid values; it
        // lives as long as `self`.
        unsafe { std::slice::from_raw_parts(self.map.as_ptr().cast::<T>(), self.len) }
    }
}

impl<T: ZeroValid> DerefMut for ZeroedArray<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.map.as_mut_ptr().cast::<T>(), self.len) }
    }
}

/// The machine's physical memory (`MemTotal`), if the system reports it.
/// Linux only; elsewhere `None`, and budgets are taken as given.
pub fn physical() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Makes room in `buf` for one more element, never beyond `cap` elements.
///
/// Buffers sized by a share of `--memory` grow as data comes, doubling up
/// to their share: reserving the whole share up front asks for memory the
/// data may never need, and a budget of 200G aborted a run on the sample.
/// With glibc, doubling a large buffer is a `realloc` that remaps its
/// pages rather than copying them, so growth does not hold two at once.
#[inline]
pub(crate) fn grow_within<T>(buf: &mut Vec<T>, cap: usize) {
    if buf.len() == buf.capacity() {
        let more = buf.capacity().max(1 << 12).min(cap.saturating_sub(buf.len()).max(1));
        buf.reserve_exact(more);
    }
}

fn clear_peak() {
    // Writing "5" to clear_refs resets VmHWM (Linux 4.0+). Failure only
    // means the next figure covers more of the process's life.
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn current_peak() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroed_arrays_start_at_zero_and_keep_what_is_written() {
        let mut words = ZeroedArray::<u64>::new(1 << 20).unwrap();
        assert_eq!(words.len(), 1 << 20);
        assert!(words.iter().all(|&w| w == 0));
        words[12345] = 7;
        assert_eq!(words.iter().sum::<u64>(), 7);
        let counters = ZeroedArray::<AtomicU16>::new(3).unwrap();
        counters[2].fetch_add(5, Ordering::Relaxed);
        assert_eq!(counters.iter().map(|c| c.load(Ordering::Relaxed)).collect::<Vec<_>>(), [0, 0, 5]);
        assert!(ZeroedArray::<AtomicU8>::new(0).unwrap().is_empty());
    }

    #[test]
    fn buffers_grow_as_data_comes_and_stop_at_their_share() {
        let cap = 10_000;
        let mut buf = Vec::new();
        grow_within::<u64>(&mut buf, 1 << 40);
        assert!(buf.capacity() < 1 << 20, "reserved the share up front");
        buf.clear();
        let mut buf = Vec::new();
        for i in 0..cap as u64 {
            grow_within(&mut buf, cap);
            buf.push(i);
        }
        assert_eq!(buf.capacity(), cap);
    }

    #[test]
    fn parses_sizes() {
        assert_eq!("2G".parse(), Ok(ByteSize(2 << 30)));
        assert_eq!("512M".parse(), Ok(ByteSize(512 << 20)));
        assert_eq!("1.5GiB".parse(), Ok(ByteSize(3 << 29)));
        assert_eq!("100000".parse(), Ok(ByteSize(100000)));
        assert_eq!("64kb".parse(), Ok(ByteSize(64 << 10)));
        for bad in ["", "G", "2X", "-1G", "0", "1e9", "lots"] {
            assert!(bad.parse::<ByteSize>().is_err(), "{bad}");
        }
    }

    #[test]
    fn displays_sizes() {
        assert_eq!(ByteSize(512).to_string(), "512 B");
        assert_eq!(ByteSize(3 << 29).to_string(), "1.5 GiB");
    }
}
