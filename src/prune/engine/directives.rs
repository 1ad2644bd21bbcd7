//! NO_PRUNE directives (seed 001 section 7.4): every line from a `⟦NO_PRUNE_BEGIN⟧` line through
//! the matching `⟦NO_PRUNE_END⟧` line, both directive lines included, is kept.
//!
//! Owns finding protected lines. It must never interpret anything else in the text: a directive is
//! recognised wherever it appears in a line (so it works inside code comments), nothing more.

/// Opens a protected block.
pub(crate) const BEGIN: &str = "⟦NO_PRUNE_BEGIN⟧";
/// Closes a protected block.
pub(crate) const END: &str = "⟦NO_PRUNE_END⟧";

/// `true` for every protected line. Blocks nest; an unclosed block runs to the end of the text; a
/// stray end directive protects its own line.
pub(crate) fn protected(lines: &[&str]) -> Vec<bool> {
    let mut depth = 0usize;
    lines
        .iter()
        .map(|line| {
            // Most lines are ASCII, which `is_ascii` tells a word at a time; `⟦` is not.
            if line.is_ascii() || !line.contains('⟦') {
                return depth > 0;
            }
            let opens = line.matches(BEGIN).count();
            let closes = line.matches(END).count();
            depth += opens;
            let inside = depth > 0 || opens > 0 || closes > 0;
            depth = depth.saturating_sub(closes);
            inside
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protects_directive_lines_and_everything_between() {
        let lines = ["a", "// ⟦NO_PRUNE_BEGIN⟧", "b", "⟦NO_PRUNE_END⟧", "c"];
        assert_eq!(protected(&lines), [false, true, true, true, false]);
    }

    #[test]
    fn nested_and_unclosed_blocks() {
        let lines = [BEGIN, BEGIN, "x", END, "y", END, "z", BEGIN, "w"];
        assert_eq!(
            protected(&lines),
            [true, true, true, true, true, true, false, true, true]
        );
    }

    #[test]
    fn stray_end_protects_only_itself() {
        assert_eq!(protected(&["a", END, "b"]), [false, true, false]);
    }

    #[test]
    fn one_line_block() {
        let line = format!("{BEGIN} keep me {END}");
        assert_eq!(protected(&[line.as_str(), "x"]), [true, false]);
    }
}
