//! The layering of `src/` stays true: a folder's code uses only the folders below
//! it. Reads every source file as text, takes the paths its non-test code names
//! (`crate::room::...` in the library, `mocap_bridge::room::...` in the binary's
//! commands, `use` lines and paths in code alike, brace groups included) and fails
//! on each one that reaches a room above the file's own, naming the file, the line
//! and both rooms. docs/architecture.md describes the rooms.

use std::path::{Path, PathBuf};

/// The rooms of `src/`, bottom to top. A room may use the rooms before it.
const LAYERS: &[&str] = &[
    "assets", "humanoid", "skeleton", "retarget", "filter", "ik", "formats", "eval", "protocol",
    "takes", "pipeline", "record", "io", "bridge", "cli",
];

/// One reference from a file to a room above its own.
#[derive(Debug, PartialEq)]
struct UpwardUse {
    file: String,
    line: usize,
    from: &'static str,
    to: String,
}

fn layer(room: &str) -> Option<usize> {
    LAYERS.iter().position(|r| *r == room)
}

/// The room a file under `src/` belongs to: its first folder, or its own name for
/// a top-level file; the binary's `main.rs` belongs to `cli`; `lib.rs` to none.
fn room_of(relative: &Path) -> Option<&'static str> {
    let first = relative.components().next()?.as_os_str().to_str()?;
    let name = match first {
        "main.rs" => "cli",
        "lib.rs" => return None,
        other => other.strip_suffix(".rs").unwrap_or(other),
    };
    LAYERS.iter().copied().find(|r| *r == name)
}

/// The source before its unit tests, with `//` comments blanked (line numbers kept).
fn non_test_lines(text: &str) -> Vec<String> {
    text.lines()
        .take_while(|line| line.trim() != "#[cfg(test)]")
        .map(|line| match line.find("//") {
            Some(at) => line[..at].to_owned(),
            None => line.to_owned(),
        })
        .collect()
}

/// The first path segment of each item a path starting at `prefix` names:
/// `crate::io::udp` gives `io`; `crate::{formats::vrma, humanoid}` gives both.
fn rooms_named(code: &str, prefix: &str) -> Vec<String> {
    let mut rooms = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find(prefix) {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + prefix.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            // Top-level items of the group: split at commas outside nested braces.
            let mut depth = 0;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        rooms.push(first_segment(&item));
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                item.push(c);
            }
            rooms.push(first_segment(&item));
        } else {
            rooms.push(first_segment(rest));
        }
    }
    rooms.retain(|r| !r.is_empty());
    rooms
}

fn first_segment(path: &str) -> String {
    path.trim_start()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// Every reference in `src/` from a room to one above it. Brace groups are read
/// whole, so a `use` spread over lines is joined first.
fn upward_uses(src: &Path) -> Vec<UpwardUse> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut found = Vec::new();
    for path in files {
        let relative = path.strip_prefix(src).expect("under src");
        let Some(from) = room_of(relative) else {
            continue;
        };
        // The binary's files name the library as `mocap_bridge`; `crate` is the binary.
        let prefix = if from == "cli" {
            "mocap_bridge::"
        } else {
            "crate::"
        };
        let text = std::fs::read_to_string(&path).expect("source is UTF-8");
        let lines = non_test_lines(&text);
        let mut at = 0;
        while at < lines.len() {
            // A statement that opens a brace group after the prefix runs to its close.
            let mut code = lines[at].clone();
            let start = at;
            if code.contains(&format!("{prefix}{{")) {
                while code.matches('{').count() > code.matches('}').count() && at + 1 < lines.len()
                {
                    at += 1;
                    code.push_str(&lines[at]);
                }
            }
            for to in rooms_named(&code, prefix) {
                let (Some(own), Some(other)) = (layer(from), layer(&to)) else {
                    continue;
                };
                if other > own {
                    found.push(UpwardUse {
                        file: relative.display().to_string(),
                        line: start + 1,
                        from,
                        to,
                    });
                }
            }
            at += 1;
        }
    }
    found
}

#[test]
fn every_room_of_src_is_in_the_layering() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut unknown = Vec::new();
    for entry in std::fs::read_dir(&src).expect("src/ lists") {
        let path = entry.expect("directory entry").path();
        let relative = path.strip_prefix(&src).expect("under src");
        if relative != Path::new("lib.rs") && room_of(relative).is_none() {
            unknown.push(relative.display().to_string());
        }
    }
    assert!(
        unknown.is_empty(),
        "rooms missing from LAYERS in tests/architecture.rs: {unknown:?}"
    );
}

#[test]
fn no_room_uses_one_above_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let upward = upward_uses(&src);
    let report: Vec<String> = upward
        .iter()
        .map(|u| {
            format!(
                "src/{}:{}: {} uses {}, which is above it",
                u.file, u.line, u.from, u.to
            )
        })
        .collect();
    assert!(
        upward.is_empty(),
        "the layering is {}; these uses go up:\n{}",
        LAYERS.join(" < "),
        report.join("\n")
    );
}

#[test]
fn paths_are_read_in_use_lines_groups_and_code() {
    assert_eq!(rooms_named("use crate::io::udp;", "crate::"), ["io"]);
    assert_eq!(
        rooms_named(
            "use crate::{formats::{vrma, glb}, humanoid::HumanBone};",
            "crate::"
        ),
        ["formats", "humanoid"]
    );
    assert_eq!(
        rooms_named("let m = crate::bridge::config::load(p)?;", "crate::"),
        ["bridge"]
    );
    assert_eq!(
        rooms_named("use mocap_bridge::takes::demo;", "mocap_bridge::"),
        ["takes"]
    );
    assert!(rooms_named("use my_crate::io::udp;", "crate::").is_empty());
}

#[test]
fn an_upward_use_is_found_with_its_file_and_line() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let src = dir.path();
    std::fs::create_dir_all(src.join("humanoid")).expect("folder");
    std::fs::write(
        src.join("humanoid/pose.rs"),
        "//! A pose.\n\nuse crate::{\n    skeleton::Skeleton,\n    bridge::config,\n};\n\n\
         #[cfg(test)]\nmod tests {\n    use crate::io::udp;\n}\n",
    )
    .expect("file");
    assert_eq!(
        upward_uses(src),
        [
            UpwardUse {
                file: "humanoid/pose.rs".into(),
                line: 3,
                from: "humanoid",
                to: "skeleton".into(),
            },
            UpwardUse {
                file: "humanoid/pose.rs".into(),
                line: 3,
                from: "humanoid",
                to: "bridge".into(),
            },
        ]
    );
}
