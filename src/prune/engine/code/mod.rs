//! Pruning source code: keep the skeleton (imports, file header, signatures, closing braces,
//! attributes), keep whole the definitions that serve the goal (doc comment, signature, body), and
//! remove whole the bodies and doc comments of the others.
//!
//! Owns the code decisions on top of the outline. It must never remove a structural line or cut a
//! relevant definition in pieces; limits and NO_PRUNE are applied by the caller.

mod indent;
mod outline;
mod scan;

use super::draft::{Draft, Reason, is_blank};
use super::terms::Matches;
use outline::{Role, Unit, outline};

/// A definition is relevant when its score reaches this fraction of the best definition's score...
const REL_OF_BEST: f32 = 0.6;
/// ...and this fraction of the goal's total IDF mass present in the text.
const REL_OF_TOTAL: f32 = 0.25;
/// Terms in a signature (the definition's name and parameters) count this much extra.
const SIG_BONUS: f32 = 1.0;
/// Loose statements of at most this many code lines are kept as structure.
const SMALL_LOOSE: usize = 2;

/// Decides every line of a source file.
pub(crate) fn plan(lines: &[&str], m: &Matches, draft: &mut Draft) {
    let o = outline(lines);
    let scores: Vec<f32> = o.units.iter().map(|u| unit_score(u, m)).collect();
    let best = scores.iter().copied().fold(0.0, f32::max);
    let threshold = (REL_OF_BEST * best).max(REL_OF_TOTAL * m.total);
    let relevant: Vec<bool> = scores.iter().map(|&s| s > 0.0 && s >= threshold).collect();
    for (i, role) in o.roles.iter().enumerate() {
        match *role {
            Role::Pre(u) | Role::Body(u) => {
                let u = u as usize;
                draft.score[i] = scores[u] + m.line(i);
                if !relevant[u] {
                    let reason = if matches!(role, Role::Pre(_)) {
                        Reason::Doc
                    } else {
                        Reason::Body
                    };
                    draft.remove(i, reason);
                }
            }
            Role::Loose
            | Role::Blank
            | Role::Import
            | Role::Header
            | Role::Sig
            | Role::Close
            | Role::Attr => {
                draft.score[i] = m.line(i);
            }
        }
    }
    loose(lines, &o.roles, m, threshold, draft);
}

/// Score of a definition: goal terms over all its lines, plus a bonus for terms in its signature.
fn unit_score(u: &Unit, m: &Matches) -> f32 {
    m.span(u.pre.start..u.body.end) + SIG_BONUS * m.span(u.sig.clone())
}

/// Loose paragraphs (runs of loose lines between blank lines or other roles): kept when relevant;
/// otherwise their comments go, and so does their code unless it is a short statement.
fn loose(lines: &[&str], roles: &[Role], m: &Matches, threshold: f32, draft: &mut Draft) {
    let mut i = 0;
    while i < roles.len() {
        if roles[i] != Role::Loose {
            i += 1;
            continue;
        }
        let start = i;
        while i < roles.len() && roles[i] == Role::Loose {
            i += 1;
        }
        let score = m.span(start..i);
        draft.score[start..i].fill(score);
        if score > 0.0 && score >= threshold {
            continue;
        }
        let code_lines = lines[start..i].iter().filter(|l| !is_comment(l)).count();
        for (k, line) in lines.iter().enumerate().take(i).skip(start) {
            if code_lines > SMALL_LOOSE || is_comment(line) {
                draft.remove(k, Reason::OffFocus);
            }
        }
    }
}

/// A line that is only a comment in the usual comment syntaxes (approximate, used for loose lines).
fn is_comment(line: &str) -> bool {
    let t = line.trim_start();
    !is_blank(line)
        && (t.starts_with("//")
            || t.starts_with("/*")
            || t.starts_with('*')
            || t.starts_with('#')
                && !t.starts_with("#[")
                && !t.starts_with("#include")
                && !t.starts_with("#!")
            || t.starts_with("--"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prune::engine::terms::Query;

    fn kept(src: &str, goal: &str) -> Vec<String> {
        let lines: Vec<&str> = src.lines().collect();
        let m = Matches::new(&Query::new(goal), &lines);
        let mut d = Draft::keep_all(lines.len());
        plan(&lines, &m, &mut d);
        lines
            .iter()
            .zip(&d.keep)
            .filter(|(_, k)| **k)
            .map(|(l, _)| l.to_string())
            .collect()
    }

    const SRC: &str = "use std::fmt;

/// Parses a header line.
pub fn parse_header(line: &str) -> Header {
    let (name, value) = line.split_once(':').unwrap();
    Header { name, value }
}

/// Renders the body.
pub fn render_body(body: &Body) -> String {
    let mut out = String::new();
    out.push_str(&body.text);
    out
}
";

    #[test]
    fn keeps_relevant_definition_whole_and_skeleton_of_others() {
        let k = kept(SRC, "how are header lines parsed");
        assert!(k.iter().any(|l| l.contains("split_once")), "{k:#?}");
        assert!(k.iter().any(|l| l.contains("/// Parses")));
        assert!(k.iter().any(|l| l.starts_with("pub fn render_body")));
        assert!(!k.iter().any(|l| l.contains("push_str")));
        assert!(!k.iter().any(|l| l.contains("/// Renders")));
        assert!(k.iter().any(|l| l.starts_with("use std::fmt")));
        assert_eq!(k.iter().filter(|l| *l == "}").count(), 2);
    }

    #[test]
    fn identifier_in_goal_selects_its_definition() {
        let k = kept(SRC, "render_body");
        assert!(k.iter().any(|l| l.contains("push_str")));
        assert!(!k.iter().any(|l| l.contains("split_once")));
    }

    #[test]
    fn goal_absent_from_text_leaves_the_skeleton() {
        let k = kept(SRC, "websocket reconnection");
        assert!(
            !k.iter()
                .any(|l| l.contains("split_once") || l.contains("push_str"))
        );
        assert_eq!(k.iter().filter(|l| l.starts_with("pub fn")).count(), 2);
    }

    #[test]
    fn python_methods() {
        let src = "import os\n\nclass Store:\n    def load(self, path):\n        with open(path) as f:\n            return f.read()\n\n    def save(self, path, data):\n        with open(path, 'w') as f:\n            f.write(data)\n";
        let k = kept(src, "save data");
        assert!(k.iter().any(|l| l.contains("f.write")));
        assert!(!k.iter().any(|l| l.contains("f.read")));
        assert!(k.iter().any(|l| l.contains("def load")));
    }
}
