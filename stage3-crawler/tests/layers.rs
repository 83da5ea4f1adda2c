//! Stage 3's modules import one another in one direction only: the seams
//! at the bottom, the lesson (`crawling`, and its queue in memory) above
//! them, the real web's features beside the lesson, and the program on
//! top. Neither the lesson nor the seams reach a feature, and no feature
//! reaches the lesson's crawler. Read from the
//! source as text, the way `shared/tools/module-cycles` reads it: a
//! `crate::NAME` anywhere in a module (a `use`, a path, a doc link) is an
//! arrow to NAME, and a folder counts as its parent module.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

type Graph = BTreeMap<String, BTreeSet<String>>;

/// Every module of `src` and the modules it names.
fn imports(src: &Path) -> Graph {
    let mut graph = Graph::new();
    let mut pending = vec![src.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let top = path.strip_prefix(src).unwrap().components().next().unwrap();
            let name = top.as_os_str().to_str().unwrap().trim_end_matches(".rs");
            if name == "lib" || name == "main" {
                continue;
            }
            let text = fs::read_to_string(&path).unwrap();
            let named = graph.entry(name.to_string()).or_default();
            for (at, _) in text.match_indices("crate::") {
                let preceded_by_word = text[..at]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_');
                let rest = &text[at + "crate::".len()..];
                if preceded_by_word {
                    continue;
                }
                if let Some(group) = rest.strip_prefix('{') {
                    let group = &group[..group.find('}').unwrap_or(group.len())];
                    named.extend(group.split(',').map(|part| first_word(part.trim())));
                } else {
                    named.insert(first_word(rest));
                }
            }
        }
    }
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    for (name, deps) in &mut graph {
        deps.retain(|d| d != name && modules.contains(d));
    }
    graph
}

fn first_word(s: &str) -> String {
    s.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// Every module `from` reaches by its imports, itself excluded unless a
/// cycle leads back to it.
fn reach(graph: &Graph, from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut pending: Vec<&str> = graph[from].iter().map(String::as_str).collect();
    while let Some(m) = pending.pop() {
        if seen.insert(m.to_string()) {
            pending.extend(graph[m].iter().map(String::as_str));
        }
    }
    seen
}

fn src() -> Graph {
    imports(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
}

#[test]
fn no_module_imports_itself_through_others() {
    let graph = src();
    let cyclic: Vec<(&String, BTreeSet<String>)> = graph
        .keys()
        .filter_map(|m| {
            let reached = reach(&graph, m);
            reached.contains(m).then(|| {
                let cycle = reached
                    .into_iter()
                    .filter(|other| reach(&graph, other).contains(m))
                    .collect();
                (m, cycle)
            })
        })
        .collect();
    assert!(cyclic.is_empty(), "import cycles: {cyclic:?}");
}

/// Every file of `src` as a module path (`http/response.rs` is
/// `http::response`, `http/mod.rs` is `http`), and the module paths it
/// names: a `crate::a::b` or `super::b` path is an arrow to the longest
/// module it names. A file's arrows to its own ancestors and descendants
/// do not count (a parent declares its children; a child uses what its
/// parent re-exports), nor do comments or a trailing `mod tests`.
fn file_imports(src: &Path) -> Graph {
    let mut texts = BTreeMap::new();
    let mut pending = vec![src.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_str().unwrap().to_string())
                .collect();
            if parts.last().is_some_and(|p| p == "mod") {
                parts.pop();
            }
            if parts == ["lib"] || parts == ["main"] {
                continue;
            }
            let text = fs::read_to_string(&path).unwrap();
            let text = match text.find("#[cfg(test)]\nmod tests") {
                Some(at) => text[..at].to_string(),
                None => text,
            };
            let code: String = text
                .lines()
                .map(|line| line.split("//").next().unwrap_or(""))
                .collect::<Vec<_>>()
                .join("\n");
            texts.insert(parts.join("::"), code);
        }
    }
    let modules: BTreeSet<String> = texts.keys().cloned().collect();
    let longest = |path: &[&str]| {
        (1..=path.len())
            .rev()
            .map(|n| path[..n].join("::"))
            .find(|m| modules.contains(m))
    };
    let mut graph = Graph::new();
    for (module, code) in &texts {
        let parent: Vec<&str> = module.split("::").collect();
        let parent = &parent[..parent.len() - 1];
        let mut named = BTreeSet::new();
        for (prefix, base) in [("crate::", &[][..]), ("super::", parent)] {
            for (at, _) in code.match_indices(prefix) {
                if code[..at]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
                {
                    continue;
                }
                let rest = &code[at + prefix.len()..];
                let heads: Vec<String> = match rest.strip_prefix('{') {
                    Some(group) => group[..group.find('}').unwrap_or(group.len())]
                        .split(',')
                        .map(|p| p.trim().to_string())
                        .collect(),
                    None => vec![rest.to_string()],
                };
                for head in heads {
                    let words: Vec<&str> = head
                        .split("::")
                        .map(|w| {
                            w.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                                .next()
                                .unwrap_or("")
                        })
                        .take_while(|w| !w.is_empty())
                        .collect();
                    let full: Vec<&str> = base.iter().copied().chain(words).collect();
                    if let Some(target) = longest(&full) {
                        named.insert(target);
                    }
                }
            }
        }
        named.retain(|t| {
            t != module
                && !t.starts_with(&format!("{module}::"))
                && !module.starts_with(&format!("{t}::"))
        });
        graph.insert(module.clone(), named);
    }
    graph
}

#[test]
fn no_file_imports_itself_through_others() {
    let graph = file_imports(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(graph.contains_key("http::response") && graph.contains_key("http::decode"));
    let cyclic: Vec<&String> = graph
        .keys()
        .filter(|m| reach(&graph, m).contains(*m))
        .collect();
    assert!(cyclic.is_empty(), "files in import cycles: {cyclic:?}");
}

#[test]
fn the_file_check_sees_a_cycle_inside_a_folder() {
    let dir = std::env::temp_dir().join(format!("layers-files-{}", std::process::id()));
    fs::create_dir_all(dir.join("http")).unwrap();
    fs::write(dir.join("http/mod.rs"), "pub use response::Response;").unwrap();
    fs::write(dir.join("http/response.rs"), "use super::decode::Cap;").unwrap();
    fs::write(dir.join("http/decode.rs"), "use crate::http::response::X;").unwrap();
    fs::write(dir.join("lib.rs"), "mod http;").unwrap();
    let graph = file_imports(&dir);
    fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        graph["http::decode"],
        ["http::response"].map(String::from).into()
    );
    assert!(reach(&graph, "http::response").contains("http::response"));
    assert!(
        graph["http"].is_empty(),
        "a parent's arrows to its children do not count"
    );
}

#[test]
fn the_features_do_not_know_the_lesson() {
    let graph = src();
    // The lesson, and the program and assembly that sit on top of it.
    let above = ["crawling", "assembly", "program"];
    let features = FEATURES.iter().chain(&["seams", "http", "links"]);
    for &feature in features {
        let Some(_) = graph.get(feature) else {
            panic!("no module {feature}");
        };
        let reached = reach(&graph, feature);
        for top in above {
            assert!(
                !reached.contains(top),
                "{feature} imports {top} (directly or through others): {reached:?}"
            );
        }
    }
}

/// The real web's features, a folder each, named for the book's chapter
/// (Being a Good Citizen, Keeping What You Fetched, Beyond One Machine,
/// the report): each plugs into a seam, and the lesson and the seams know
/// none of them.
const FEATURES: [&str; 4] = ["polite", "keeping", "sharing", "report"];

/// The features that `module` reaches, directly or through others.
fn features_reached(graph: &Graph, module: &str) -> Vec<String> {
    let reached = reach(graph, module);
    FEATURES
        .iter()
        .filter(|f| reached.contains(**f))
        .map(|f| f.to_string())
        .collect()
}

#[test]
fn the_lesson_and_the_seams_know_no_feature() {
    let graph = src();
    for feature in FEATURES {
        assert!(graph.contains_key(feature), "no module {feature}");
    }
    for lesson in ["crawling", "queue", "seams", "records"] {
        let reached = features_reached(&graph, lesson);
        assert!(
            reached.is_empty(),
            "{lesson} reaches {reached:?} (directly or through others)"
        );
    }
}

#[test]
fn the_check_sees_a_lesson_that_reaches_a_feature() {
    // The lesson imports a module that imports a feature: caught, however
    // far the feature is.
    let mut graph = Graph::new();
    let edges = [("crawling", "config"), ("config", "polite")];
    for (from, to) in edges {
        graph.entry(from.into()).or_default().insert(to.into());
        graph.entry(to.into()).or_default();
    }
    assert_eq!(features_reached(&graph, "crawling"), ["polite"]);
    assert!(features_reached(&graph, "polite").is_empty());
}

#[test]
fn the_check_sees_an_arrow_and_a_cycle() {
    // The reader of the source, on a crate made up here: a cycle of two
    // and an arrow through a grouped `use`.
    let dir = std::env::temp_dir().join(format!("layers-{}", std::process::id()));
    fs::create_dir_all(dir.join("b")).unwrap();
    fs::write(dir.join("a.rs"), "use crate::{b::X, c};").unwrap();
    fs::write(dir.join("b/mod.rs"), "/// See [`crate::a`].").unwrap();
    fs::write(dir.join("c.rs"), "// nothing").unwrap();
    fs::write(dir.join("lib.rs"), "use crate::a;").unwrap();
    let graph = imports(&dir);
    fs::remove_dir_all(&dir).unwrap();
    assert_eq!(graph.len(), 3);
    assert_eq!(graph["a"], ["b", "c"].map(String::from).into());
    assert!(reach(&graph, "a").contains("a"));
    assert!(!reach(&graph, "c").contains("c"));
}
