//! Reading a goal: which of its words are its topic. An issue report's environment section, the
//! clauses that only frame a request (`Where in this file is ...`), a fenced snippet's keywords
//! and the fence's language tag give no terms; code quoted in backticks or written as code is a
//! name even when it is a stop word.
//!
//! Owns the goal's terms and their order. It must never look at the text being pruned.

use super::super::docs::atx_level;
use super::MAX_TERMS;
use super::words::{
    for_each_identifier, for_each_term, for_each_term_keeping, is_stop_word, split_parts,
};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::sync::LazyLock;

/// The goal's terms (first occurrences first, at most [`MAX_TERMS`]) and whether one is a stop
/// word quoted as code. With `skip_frames`, the clauses of prose that only frame a request
/// ([`is_request_frame`]) give none.
pub(super) fn goal_terms(goal: &str, skip_frames: bool) -> (HashMap<String, usize>, bool) {
    let mut index = HashMap::default();
    let mut quoted_stop_words = false;
    // Inside backticks the goal quotes code: `Fixed`, `is_empty` are names, not stop words.
    // So is a word written as code outside them, a whole name: `xr.where`, `app.use`, `any()`.
    let mut add = |text: &str, keep: bool| {
        let mut added = false;
        for_each_term_keeping(text, keep, &mut |term| {
            if index.len() < MAX_TERMS && !index.contains_key(term) {
                added = true;
                let next = index.len();
                index.insert(term.to_owned(), next);
            }
        });
        // Lines must then keep their stop words too (tested before stemming: `where`).
        quoted_stop_words |= keep && added && has_stop_word(text);
    };
    let blocks: Vec<&str> = goal.split("```").collect();
    for (f, block) in blocks.iter().enumerate() {
        if f % 2 == 1 {
            let closed = f + 1 < blocks.len();
            if closed && !block.contains('\n') {
                // ```` ```where``` ```` is inline code, as `` `where` `` is.
                add(block.trim(), true);
            } else {
                // A fenced block is a snippet (the reporter's code, a log), not one quoted
                // name: its `if`, `for` and `it` are no terms. Its words are read like
                // prose, without the fence's language tag; a stop word is a name there
                // only as a member (`xr.where(c)`, not `it.name` or `if(x)`).
                for_each_prose_term(fence_body(block), true, &mut add);
            }
            continue;
        }
        for (piece, code) in pieces(block, skip_frames) {
            if code {
                add(piece, true);
            } else {
                for_each_prose_term(piece, false, &mut add);
            }
        }
    }
    (index, quoted_stop_words)
}

/// Words an agent wraps a question in that name no part of the code: where to look and what to
/// do (`Where in this file is the code that handles this:`, `Which function is responsible?`).
const REQUEST_WORDS: &[&str] = &[
    "behind",
    "class",
    "classes",
    "code",
    "codebase",
    "deal",
    "define",
    "defined",
    "definition",
    "describe",
    "described",
    "explain",
    "file",
    "files",
    "find",
    "following",
    "function",
    "functions",
    "handle",
    "handled",
    "handles",
    "handling",
    "help",
    "implement",
    "implementation",
    "implemented",
    "implementing",
    "implements",
    "involve",
    "involved",
    "know",
    "locate",
    "located",
    "logic",
    "look",
    "looking",
    "method",
    "methods",
    "module",
    "modules",
    "part",
    "parts",
    "place",
    "places",
    "point",
    "relevant",
    "responsible",
    "section",
    "show",
    "snippet",
    "tell",
    "understand",
];

/// [`REQUEST_WORDS`] as terms (stemmed as lines' words are).
static REQUEST_TERMS: LazyLock<HashSet<String>> = LazyLock::new(|| {
    let mut set = HashSet::default();
    for word in REQUEST_WORDS {
        for_each_term(word, &mut |t| {
            set.insert(t.to_owned());
        });
    }
    set
});

/// Headings that introduce an issue report's environment: the versions, platform and settings
/// the reporter ran (`### Environment information`, `**Your Environment**`, `## 环境信息`). A
/// heading matches whole (case aside, and its closing `:` or `?`): `## RUST_LOG environment
/// variable ignored` is the bug, not its environment. Not a `Version` section either: a reporter
/// may paste there the setup the bug is about (a renamed crate in `Cargo.toml`).
const ENVIRONMENT_HEADINGS: &[&str] = &[
    "environment",
    "environment information",
    "environment info",
    "environment details",
    "your environment",
    "system info",
    "system information",
    "环境",
    "环境信息",
    "运行环境",
];

/// The text of a Markdown heading line ([`atx_level`]) or of a line made only of bold text
/// (`**Environment**:`), lowercased, without a closing `:` or `?`.
fn heading_text(line: &str) -> Option<String> {
    let t = line.trim();
    let text = if let Some(level) = atx_level(line) {
        &t[level as usize..]
    } else {
        t.strip_prefix("**")?
            .trim_end_matches(':')
            .strip_suffix("**")
            .filter(|inner| !inner.contains("**"))?
    };
    Some(
        text.trim()
            .trim_end_matches([':', '?'])
            .trim()
            .to_lowercase(),
    )
}

/// `goal` without the sections of an issue report that describe the reporter's environment: from
/// a heading that names it ([`ENVIRONMENT_HEADINGS`]) to the next heading outside a fence, or to
/// any heading inside a fence that never closes (a report cut short leaves its dump's fence
/// open). What a tool prints there (`Version: 2.4.2`, `OS: linux`, `BIOME_LOG_PATH: unset`)
/// names no code, and in a report cut to its first few hundred characters it fills the term
/// slots the report's own words need. Fences are counted by their ```` ``` ````, as the goal's
/// terms read them; a heading inside a fence that closes is the dump's (`## System:` of
/// `envinfo --markdown`).
pub(super) fn without_environment(goal: &str) -> std::borrow::Cow<'_, str> {
    let lines: Vec<&str> = goal.split_inclusive('\n').collect();
    // Whether a fence mark follows each line: a fence open there closes later.
    let mut closes_later = vec![false; lines.len()];
    for i in (0..lines.len().saturating_sub(1)).rev() {
        closes_later[i] = closes_later[i + 1] || lines[i + 1].contains("```");
    }
    let mut out = String::new();
    let (mut fence, mut skipping, mut skipped) = (false, false, false);
    for (i, line) in lines.iter().enumerate() {
        let unclosed = fence && !closes_later[i];
        if (!fence || skipping && unclosed)
            && let Some(h) = heading_text(line)
        {
            // The section's fence never closes: it ends here, its opener dropped with it.
            fence = false;
            // `**Environment (please complete the following information):**`
            let named = h.split(" (").next().unwrap_or(&h).trim_end();
            skipping = ENVIRONMENT_HEADINGS.contains(&named);
        }
        fence ^= line.matches("```").count() % 2 == 1;
        if skipping {
            skipped = true;
            out.push('\n');
        } else {
            out.push_str(line);
        }
    }
    if skipped {
        std::borrow::Cow::Owned(out)
    } else {
        std::borrow::Cow::Borrowed(goal)
    }
}

/// The pieces of a block of the goal outside fences, in order: prose (`false`) and inline code in
/// backticks (`true`); with `skip_frames`, without the clauses of prose that only frame a request.
fn pieces(block: &str, skip_frames: bool) -> Vec<(&str, bool)> {
    let frames = if skip_frames {
        frame_ranges(block)
    } else {
        Vec::new()
    };
    let mut out = Vec::new();
    let mut offset = 0;
    for (k, segment) in block.split('`').enumerate() {
        let (start, end) = (offset, offset + segment.len());
        offset = end + 1;
        if k % 2 == 1 {
            out.push((segment, true));
            continue;
        }
        let mut at = start;
        for f in frames.iter().filter(|f| f.start >= start && f.end <= end) {
            out.push((&block[at..f.start], false));
            at = f.end;
        }
        out.push((&block[at..end], false));
    }
    out
}

/// Byte ranges of the clauses of `block` that frame a request ([`is_request_frame`]). A clause
/// ends after `.`, `:`, `?`, `!` or `;` followed by a space or the end, after a full-width `？`,
/// `！`, `。`, `：` or `；`, and at a line break
/// (`xr.where` and `a::b` stay whole); one that quotes code in backticks is about that code.
fn frame_ranges(block: &str) -> Vec<std::ops::Range<usize>> {
    let bytes = block.as_bytes();
    let mut out = Vec::new();
    let (mut start, mut inside, mut quotes) = (0, false, false);
    for (i, c) in block.char_indices() {
        if c == '`' {
            (inside, quotes) = (!inside, true);
            continue;
        }
        let after = i + c.len_utf8();
        // Full-width marks end a clause as they are (no space follows them in CJK text).
        let end = !inside
            && (c == '\n'
                || matches!(c, '？' | '！' | '。' | '：' | '；')
                || (matches!(c, '.' | ':' | '?' | '!' | ';')
                    && bytes.get(after).is_none_or(|n| n.is_ascii_whitespace())));
        if end {
            if !quotes && is_request_frame(&block[start..after]) {
                out.push(start..after);
            }
            (start, quotes) = (after, false);
        }
    }
    if !quotes && start < bytes.len() && is_request_frame(&block[start..]) {
        out.push(start..bytes.len());
    }
    out
}

/// Words that ask: a clause frames a request only when it asks (`Where is the code?`, `Explain
/// the logic.`), not when it introduces what follows (`The following code works:`).
const ASKING_WORDS: &[&str] = &[
    "describe",
    "explain",
    "find",
    "how",
    "locate",
    "look",
    "looking",
    "point",
    "show",
    "tell",
    "understand",
    "what",
    "where",
    "which",
    "why",
];

/// True when `clause` asks ([`ASKING_WORDS`]) and every term of it is a request word: the clause
/// frames the question and says nothing of its topic. A clause with no term is no frame (it has
/// nothing to drop).
fn is_request_frame(clause: &str) -> bool {
    // Code written as code is what the clause asks about (`Where is show()?`, `Point::new`).
    if clause.split_whitespace().any(written_as_code) {
        return false;
    }
    // So is a name: a capitalised word past the clause's first (`Where is the Point class?`,
    // `Which Handle leaks?`); `I` is no name.
    // A list item's bullet or number (`-`, `1)`) is no word: the first word is the first with a
    // letter.
    let named = clause
        .split_whitespace()
        .skip_while(|w| !w.chars().any(char::is_alphabetic))
        .skip(1)
        .any(|w| {
            let w = w.trim_start_matches(|c: char| !c.is_alphanumeric());
            // (The goal's typographic apostrophes are plain ones by now: `I’m` is `I'm`.)
            w.chars().next().is_some_and(char::is_uppercase) && w != "I" && !w.starts_with("I'")
        });
    if named {
        return false;
    }
    let asks = clause
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| ASKING_WORDS.iter().any(|a| a.eq_ignore_ascii_case(w)));
    if !asks {
        return false;
    }
    let mut any = false;
    let mut all = true;
    for_each_term(clause, &mut |t| {
        any = true;
        all &= REQUEST_TERMS.contains(t);
    });
    any && all
}

/// Calls `add(text, keep_stop_words)` for each whitespace-separated chunk of prose, and for
/// each stop word a chunk written as code names whole: `where` of `xr.where`, not `get` of
/// `getStopTime`, which matches every getter. With `members_only` (a fenced snippet, where
/// `it.name`, `this.x` and `if(x)` are everywhere), only a stop word after `.`, `::` or `->`.
fn for_each_prose_term(segment: &str, members_only: bool, add: &mut impl FnMut(&str, bool)) {
    for chunk in segment.split_whitespace() {
        add(chunk, false);
        if written_as_code(chunk) {
            for_each_identifier(chunk, &mut |ident| {
                let before = &chunk[..ident.as_ptr() as usize - chunk.as_ptr() as usize];
                let member =
                    before.ends_with('.') || before.ends_with("::") || before.ends_with("->");
                if (member || !members_only) && is_stop_word(&ident.to_lowercase()) {
                    add(ident, true);
                }
            });
        }
    }
}

/// The content of a fenced block (the text between two ```` ``` ````), without its info string:
/// a first line that is empty, or a language tag (`kotlin`, `c++`) followed by nothing but
/// attributes (`title="app.py"`, `{1,3}`). A first line of content (`panic!`, `foo()`) stays.
fn fence_body(block: &str) -> &str {
    let Some((first, rest)) = block.split_once('\n') else {
        return block;
    };
    let mut words = first.split_whitespace();
    let tag = words.next().is_none_or(|w| {
        w.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '+' | '#' | '.' | '-' | '_'))
    });
    let attributes = words.all(|w| w.contains('=') || w.starts_with('{'));
    if tag && attributes { rest } else { block }
}

/// True when a part of an identifier of `text` is a stop word (`Fixed`, `is_empty`, `where`).
fn has_stop_word(text: &str) -> bool {
    let mut found = false;
    for_each_identifier(text, &mut |ident| {
        found |= split_parts(ident).any(|p| is_stop_word(&p.to_lowercase()));
    });
    found
}

/// True when a word of a goal is written as code: a call (`where(`), a member or path
/// (`xr.where`, `Series::get`, `obj->any`), not a URL, a path, a version (`3.10`) or a
/// conventional commit's prefix.
fn written_as_code(chunk: &str) -> bool {
    // A conventional commit's type and scope (`fix(parser):`) is no call.
    if chunk.contains("://")
        || chunk.contains('/')
        || chunk.ends_with("):")
        || chunk.ends_with(")!:")
    {
        return false;
    }
    let b = chunk.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    (1..b.len()).any(|i| {
        let (prev, c) = (b[i - 1], b[i]);
        let next = b.get(i + 1).copied().unwrap_or(b' ');
        (c == b'(' && word(prev))
            || (c == b'.' && word(prev) && next.is_ascii_alphabetic())
            || (c == b':' && next == b':' && word(prev))
            || (c == b'-' && next == b'>' && word(prev))
    })
}

#[cfg(test)]
mod tests {
    use super::super::Query;

    /// The goal's terms, in order.
    fn goal_terms_of(goal: &str) -> Vec<String> {
        let q = Query::new(goal, true);
        let mut terms: Vec<(&String, &usize)> = q.index.iter().collect();
        terms.sort_by_key(|(_, t)| **t);
        terms.into_iter().map(|(t, _)| t.clone()).collect()
    }

    #[test]
    fn an_issue_reports_environment_section_gives_no_terms() {
        let report = "Formatter drops comments in blocks\n\n### Environment information\n\n\
                      <details>\n\n```bash\nCLI:\n  Version: 2.4.2\nPlatform:\n  OS: linux\n\
                      ## not a heading inside the fence\n```\n</details>\n\n\
                      ### What happened?\n\nThe `lone_block` rule removes it.";
        let terms = goal_terms_of(report);
        for kept in [
            "formatter",
            "comment",
            "block",
            "lone_block",
            "rule",
            "remov",
        ] {
            assert!(terms.iter().any(|t| t == kept), "{kept}: {terms:?}");
        }
        for dropped in ["cli", "platform", "linux", "heading", "fenc"] {
            assert!(!terms.iter().any(|t| t == dropped), "{dropped}: {terms:?}");
        }
        // Bold headings too, to the next one; a `Version` section may be the topic and stays.
        let terms = goal_terms_of(
            "Base image for Java 21\n**Environment**:\n- Build tool: Maven\n\
             **Description**:\nselects Java 17\n## Version\ntokio02 = { package = \"tokio\" }",
        );
        assert!(!terms.iter().any(|t| t == "maven"), "{terms:?}");
        for kept in ["base", "imag", "java", "select", "tokio02", "packag"] {
            assert!(terms.iter().any(|t| t == kept), "{kept}: {terms:?}");
        }
        // A goal made only of an environment section still has its terms, and a request's
        // framing still gives none.
        assert!(!goal_terms_of("## Environment\nOS: linux").is_empty());
        let terms = goal_terms_of("Please fix this.\n## Environment\nOS: linux");
        assert!(terms.contains(&"linux".to_owned()), "{terms:?}");
        assert!(!terms.contains(&"pleas".to_owned()), "{terms:?}");
    }

    #[test]
    fn a_heading_that_is_the_bug_is_no_environment_section() {
        for report in [
            "Title\n## `RUST_LOG` environment variable ignored\nparse_config drops it",
            "Title\n### Filesystem information\nparse_config drops it",
            "Title\n**Only fails in the CI environment, locally fine**\nparse_config drops it",
            "# Environment variables not expanded\nparse_config drops it",
        ] {
            let terms = goal_terms_of(report);
            assert!(
                terms.contains(&"parse_config".to_owned()),
                "{report}: {terms:?}"
            );
        }
        let terms = goal_terms_of(
            "Title\n**Environment (please complete the following information):**\n\
             - OS: Fedora\n**Describe the bug**\nparse_config drops it",
        );
        assert!(terms.contains(&"parse_config".to_owned()), "{terms:?}");
        assert!(!terms.contains(&"fedora".to_owned()), "{terms:?}");
    }

    #[test]
    fn an_environment_dump_left_open_ends_at_the_next_section() {
        let terms = goal_terms_of(
            "Title\n### Environment\n```\nOS: linux\n### What happened\nparse_config panics",
        );
        assert!(terms.contains(&"parse_config".to_owned()), "{terms:?}");
        assert!(!terms.contains(&"linux".to_owned()), "{terms:?}");
        // So does a bold heading, in a fence that never closes.
        let terms = goal_terms_of(
            "Title\n**Environment**\n```\nOS: fedora\n**Describe the bug**\nparse_config panics",
        );
        assert!(terms.contains(&"parse_config".to_owned()), "{terms:?}");
        assert!(!terms.contains(&"fedora".to_owned()), "{terms:?}");
        // In a fence that closes, a heading is the dump's (`envinfo --markdown`), and both
        // environment sections go.
        let terms = goal_terms_of(
            "Title\n### Environment\n```\n## System:\n - OS: macOS 14\n## Binaries:\n\
             - Node: 18.1\n```\n### What happened\nparse_config panics\n### Environment\n\
             OS: fedora",
        );
        assert!(terms.contains(&"parse_config".to_owned()), "{terms:?}");
        for dropped in ["system", "mac", "binari", "node", "fedora"] {
            assert!(!terms.contains(&dropped.to_owned()), "{dropped}: {terms:?}");
        }
        // A fence opened mid-line is a fence too, as the goal's terms count them.
        let terms = goal_terms_of(
            "Title\n### Environment\nLogs: ```\n# not a heading\n```\nOS: linux\n\
             ### What happened\nparse_config panics",
        );
        assert!(terms.contains(&"parse_config".to_owned()), "{terms:?}");
        assert!(!terms.contains(&"linux".to_owned()), "{terms:?}");
    }

    #[test]
    fn a_clause_that_only_frames_a_request_gives_no_terms() {
        assert_eq!(
            goal_terms_of("Where in this file is the code that handles this: retry the upload"),
            ["retry", "upload"]
        );
        assert_eq!(
            goal_terms_of(
                "I need to understand the logic behind this change: cache tokens. Which part of this file implements it?"
            ),
            ["cach", "token"]
        );
        assert_eq!(
            goal_terms_of("Find the function responsible for the following. Parse headers"),
            ["pars", "header"]
        );
        // A clause with a word of its own is the topic, request words and all.
        assert_eq!(
            goal_terms_of("Fix file handle leak"),
            ["file", "handl", "leak"]
        );
        // Code quoted in a clause is what it asks about.
        assert_eq!(
            goal_terms_of("Where is `handle_file` defined?"),
            ["handl", "file", "handle_file", "defin"]
        );
        // So is a name written as code without backticks.
        assert_eq!(
            goal_terms_of("Where is show() defined? retry the upload"),
            ["show", "defin", "retry", "upload"]
        );
        // Non-ASCII text, `\r\n` and an unclosed backtick end or hold clauses safely.
        assert_eq!(
            goal_terms_of("Où est le code qui gère ça?\r\nWhere is the code? réessayer `l'envoi"),
            ["code", "gère", "ça", "réessayer", "envoi"]
        );
        // A typographic apostrophe splits a word as an ASCII one does.
        assert_eq!(
            goal_terms_of("Where’s the retry? It doesn’t stop"),
            goal_terms_of("Where's the retry? It doesn't stop")
        );
        assert_eq!(goal_terms_of("It doesn’t retry"), ["retry"]);
        // A goal made only of request words keeps them: they are all it says.
        assert_eq!(
            goal_terms_of("Show the file handling."),
            ["show", "file", "handl"]
        );
        // Typographic quotes separate words too; a full-width low line joins them as `_` does.
        assert_eq!(
            goal_terms_of("序列化“JSONType”无效…a＿b"),
            ["序列化", "json", "type", "json_type", "无效", "a＿b"]
        );
        // Full-width punctuation separates words wherever it stands, after a dash too.
        assert_eq!(
            goal_terms_of("序列化（JSONType）无效，max-，retry。"),
            [
                "序列化",
                "json",
                "type",
                "json_type",
                "无效",
                "max",
                "retry"
            ]
        );
        // Full-width marks end a clause too.
        assert_eq!(
            goal_terms_of("Where is the code？retry the upload"),
            ["retry", "upload"]
        );
        // A list item's bullet or number is no word, and `I’m` no name.
        assert_eq!(
            goal_terms_of("- Where is the code? retry the upload"),
            ["retry", "upload"]
        );
        assert_eq!(
            goal_terms_of("1) Where’s the code I’m after? retry the upload"),
            ["retry", "upload"]
        );
        // A name capitalised in prose is what the clause asks about, request word or not.
        assert_eq!(
            goal_terms_of("Where is the Point class? It moves on resize"),
            ["point", "class", "move", "resiz"]
        );
        assert_eq!(
            goal_terms_of("Where do I find the code that handles this: retry the upload"),
            ["retry", "upload"]
        );
        // A dot inside a name (`retry.Show`) does not end a clause.
        assert_eq!(
            goal_terms_of("Where is the code? Explain retry.Show"),
            ["explain", "retry", "show"]
        );
    }

    #[test]
    fn a_fenced_block_is_a_snippet_not_a_quoted_name() {
        let goal = "Space after suspend\n\n```kotlin\nval f: suspend(Long) -> Unit\nfor (x in xs) { if (x == null) return it }\nval y = xr.where(c)\n```\n\nSee `where` too.";
        let q = Query::new(goal, true);
        // The reporter's `for`, `if`, `in` and `it` are no terms, nor is the language tag.
        for line in [
            "    for (i in 0 until n) {",
            "        if (it.isEmpty()) {",
            "import org.jetbrains.kotlin.psi.KtFile",
        ] {
            assert_eq!(q.mask(line), 0, "{line}");
        }
        // Its names are, and so is a stop word it calls as code.
        assert_ne!(q.mask("fun suspendModifier(node: ASTNode) {"), 0);
        assert_ne!(q.mask("def where(cond, x, y):"), 0);
        // An unclosed fence (a report cut at 600 characters) is a snippet too.
        let q = Query::new(
            "Crash\n```\nfor (x in xs) { if (x == null) return it }",
            true,
        );
        assert_eq!(q.mask("        if (it.isEmpty()) {"), 0);
        // A one-line fence has no tag to drop, and quotes like backticks do.
        let q = Query::new("Crash in ```parse_header(x)```", true);
        assert_ne!(q.mask("fn parse_header(line: &str) {"), 0);
        let q = Query::new("```where``` drops attributes", true);
        assert_ne!(q.mask("def where(cond, x, y):"), 0);
        // In a snippet, `it.`, `this.`, `if(` and `for(` name nothing; a member call does.
        let q = Query::new(
            "Wrong\n```kotlin\nlist.forEach { it.name }\nif(this.ok) for(x in y) app.use(z)\n```",
            true,
        );
        for line in ["        if (it.isEmpty()) {", "    for (i in 0 until n) {"] {
            assert_eq!(q.mask(line), 0, "{line}");
        }
        assert_ne!(q.mask("app.use = function use(fn) {"), 0);
        // An info string with attributes is no content; a first line of code is.
        let q = Query::new("Crash\n```python title=\"app.py\"\nparse(x)\n```", true);
        assert_eq!(q.mask("import python_title"), 0);
        let q = Query::new("Crash\n```render_table()\nparse(x)\n```", true);
        assert_ne!(q.mask("fn render_table() {"), 0);
    }
}
