//! Pruning (seeds 000 and 001): the pure line-level [`engine`], the [`render`]ing of its decisions
//! into markers and annotations, the remote [`backend`]s, and the [`pipeline`] that runs seed 000's
//! `req:prune_check` .. `req:respond_*` for a tool output. The engine and render never do I/O;
//! the pipeline and backends never decide what a line is worth.

pub mod backend;
pub mod engine;
pub mod pipeline;
pub mod render;

pub use pipeline::{
    Call, Job, Pruned, Pruner, Warn, Within, detect_source, detect_unnamed, merge_metadata,
    not_attempted, not_stored, serve_pruner_request, widest_compact_marker, widest_marker,
};
