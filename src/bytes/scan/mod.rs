//! Byte classes many bytes at a time: eight in a `u64` ([`swar`]), and one
//! bit per byte of a 64- or 16-byte block ([`byteclass`], with SSE2 on
//! x86_64 and `swar` elsewhere).

pub(crate) mod byteclass;
pub(crate) mod swar;
