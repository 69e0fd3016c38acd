//! The commands over a finished analysis, which read it and write nothing
//! into it: [`dedup`] (the documents a recrawl would keep, written out),
//! [`explain`] (what two documents share, chunk by chunk), [`eval`] (a run
//! or another tool's answer against an exact one) and [`dump`] (a record
//! file as text); and [`expand`], which undoes what `dedup --format
//! warc-revisits` wrote (the record forms both use are the byte layer's
//! `bytes::revisit`). They read the analysis through the store and its
//! read-only view (`store::analysis`).

pub(crate) mod dedup;
pub(crate) mod dump;
pub(crate) mod eval;
pub(crate) mod expand;
pub(crate) mod explain;
