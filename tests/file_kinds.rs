//! Files the definition outline does not describe, read through the real binary over stdio with a
//! question: a Maven `pom.xml` (a data file: the property the question names comes back with what
//! holds it, the rest behind markers naming the file's parts; `max_prune_ratio` brings back the
//! lines after the kept ones up to a fifth of the file) and a Haskell module (the markers
//! name the equations they hide, as Haskell writes them).

mod common;
use common::*;
use regex::Regex;

/// What the real binary's `read` shows of `src`, saved as `name` in a fresh root, for `question`.
fn read_asking(name: &str, src: &str, question: &str) -> String {
    let (_root, _client, r) = read_with_question(name, src, question);
    text(&r["result"]).to_string()
}

/// A pom whose versions sit in `<properties>` far above the dependencies that use them.
fn pom() -> String {
    let mut s = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<project>\n  <modelVersion>4.0.0</modelVersion>\n  <properties>\n",
    );
    for k in 0..60 {
        s.push_str(&format!("    <lib{k}.version>1.{k}.0</lib{k}.version>\n"));
    }
    s.push_str("    <grpc.version>1.65.1</grpc.version>\n  </properties>\n  <dependencies>\n");
    for k in 0..60 {
        s.push_str(&format!(
            "    <dependency>\n      <groupId>org.example</groupId>\n      <artifactId>lib{k}</artifactId>\n      <version>${{lib{k}.version}}</version>\n    </dependency>\n"
        ));
    }
    s.push_str("  </dependencies>\n</project>\n");
    s
}

#[test]
fn a_pom_read_for_one_property_returns_it_with_what_holds_it() {
    let src = pom();
    let shown = read_asking("pom.xml", &src, "Bump grpc.version from 1.65.1 to 1.66.0");
    assert!(
        shown.contains("<grpc.version>1.65.1</grpc.version>"),
        "{shown}"
    );
    assert!(
        shown.contains("<properties>") && shown.contains("<project>"),
        "{shown}"
    );
    let kept = shown.lines().filter(|l| !l.starts_with('[')).count();
    assert!(
        kept * 4 < src.lines().count(),
        "kept {kept} of {} lines:\n{shown}",
        src.lines().count()
    );
    let names = marker_names(&shown).join(", ");
    assert!(
        names.contains("dependency"),
        "markers name: {names}\n{shown}"
    );
}

#[test]
fn a_haskell_module_names_the_equations_it_hides() {
    let mut src = String::from("module Checks where\n\nimport Data.List\n\n");
    for k in 0..30 {
        src.push_str(&format!(
            "-- | Check number {k}.\ncheck{k} :: Int -> [String] -> Bool\ncheck{k} limit xs =\n    length (filter ok xs) > limit\n  where\n    ok x = length x > {k}\n\n"
        ));
    }
    src.push_str("quoteWarning :: String -> Bool\nquoteWarning s =\n    '\"' `elem` s\n");
    let shown = read_asking("Checks.hs", &src, "quoteWarning misses single quotes");
    assert!(shown.contains("quoteWarning s ="), "{shown}");
    let names = marker_names(&shown).join(", ");
    assert!(
        Regex::new(r"\bcheck\d+\b").unwrap().is_match(&names),
        "markers name: {names}\n{shown}"
    );
}
