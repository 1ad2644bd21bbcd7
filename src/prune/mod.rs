//! Pruning: the pure line-level engine and the rendering of its decisions (seed 001).
//!
//! Owns deciding which lines of a text to keep and how the result is shown. It must never do I/O,
//! store anything or talk to the network; backends and storage live elsewhere.

pub mod engine;
pub mod render;
