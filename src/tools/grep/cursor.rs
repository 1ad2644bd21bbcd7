//! `grep`'s paging cursors: a digest of what determines the match list, and the sealed cursor
//! that carries it with the next offset (and the stored artifact, when there is one).
//!
//! Owns the cursor's contents. It must never accept a cursor minted for another search.

use crate::contract::types::GrepInput;

/// A digest of everything that determines the match list, so a cursor cannot be replayed on
/// another search.
pub(super) fn fingerprint(input: &GrepInput) -> [u8; 32] {
    let canonical = serde_json::to_vec(&serde_json::json!([
        &input.pattern,
        &input.paths,
        &input.cwd,
        input.fixed_string,
        input.case_sensitive,
    ]))
    .expect("serializes");
    crate::secret::digest(&canonical)
}

/// Kind under which `grep` cursors are sealed.
const CURSOR_KIND: &str = "grep";

/// `g1.OFFSET`, or `g2.OFFSET.ID` when every match is stored under `ID` (later pages are then
/// read from it instead of searching again), sealed with the process's key over itself and the
/// search ([`crate::secret::seal`]): neither the offset nor the id can be forged.
pub(super) fn encode_cursor(
    offset: usize,
    fingerprint: [u8; 32],
    artifact: Option<&str>,
) -> String {
    let body = match artifact {
        Some(id) => format!("g2.{offset:x}.{id}"),
        None => format!("g1.{offset:x}"),
    };
    crate::secret::seal(CURSOR_KIND, &fingerprint, &body)
}

/// The offset and, for a `g2` cursor, the artifact id of a cursor sealed for this search.
pub(super) fn decode_cursor(
    cursor: &str,
    fingerprint: [u8; 32],
) -> Option<(usize, Option<String>)> {
    let body = crate::secret::open(CURSOR_KIND, &fingerprint, cursor)?;
    let mut parts = body.split('.');
    let version = parts.next()?;
    let offset = usize::from_str_radix(parts.next()?, 16).ok()?;
    let artifact = match version {
        "g1" => None,
        "g2" => Some(
            parts
                .next()
                .filter(|id| id.starts_with("prn_"))?
                .to_string(),
        ),
        _ => return None,
    };
    parts.next().is_none().then_some((offset, artifact))
}
