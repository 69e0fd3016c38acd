//! What every layer may use: the memory budget and peak memory
//! ([`memory`]), the one handle that prints ([`progress`]), and the
//! interrupt flag that a long loop checks ([`interrupt`]).

pub mod interrupt;
pub mod memory;
pub mod progress;
