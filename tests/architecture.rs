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

/// The source with its test-only items (each `#[cfg(test)]` item: a `mod tests
/// { ... }`, a helper function, a `mod test_support;` line) and `//` comments
/// blanked, line numbers kept; and the names of the modules it declares test-only.
fn non_test_lines(text: &str) -> (Vec<String>, Vec<String>) {
    let mut lines = Vec::new();
    let mut test_modules = Vec::new();
    let mut depth = 0usize;
    let mut in_test_item = false;
    for line in text.lines() {
        let code = line.find("//").map_or(line, |at| &line[..at]);
        if in_test_item {
            depth += code.matches('{').count();
            depth = depth.saturating_sub(code.matches('}').count());
            // The item ends at its closing brace, or at a `;` outside any braces.
            if depth == 0 && (code.contains('}') || code.trim_end().ends_with(';')) {
                in_test_item = false;
                if let Some(name) = code.trim().strip_prefix("mod ") {
                    test_modules.push(name.trim_end_matches(';').trim().to_owned());
                }
            }
            lines.push(String::new());
        } else if code.trim() == "#[cfg(test)]" {
            in_test_item = true;
            depth = 0;
            lines.push(String::new());
        } else {
            lines.push(code.to_owned());
        }
    }
    (lines, test_modules)
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
    let mut sources = Vec::new();
    let mut test_only = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("source is UTF-8");
        let (lines, test_modules) = non_test_lines(&text);
        // `mod name;` in `dir/mod.rs` or `dir.rs` is `dir/name.rs` or `dir/name/`.
        let dir = match path.file_name().and_then(|n| n.to_str()) {
            Some("mod.rs" | "lib.rs" | "main.rs") => path.parent().map(Path::to_path_buf),
            _ => Some(path.with_extension("")),
        };
        if let Some(dir) = dir {
            test_only.extend(test_modules.iter().map(|m| dir.join(m)));
        }
        sources.push((path, lines));
    }
    let mut found = Vec::new();
    for (path, lines) in sources {
        let relative = path.strip_prefix(src).expect("under src");
        let Some(from) = room_of(relative) else {
            continue;
        };
        if test_only
            .iter()
            .any(|m| path == m.with_extension("rs") || path.starts_with(m))
        {
            continue;
        }
        // The binary's files name the library as `mocap_bridge`; `crate` is the binary.
        let prefix = if from == "cli" {
            "mocap_bridge::"
        } else {
            "crate::"
        };
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
        "//! A pose.\n\n#[cfg(test)]\nmod test_support;\n\nuse crate::{\n    skeleton::Skeleton,\n    \
         bridge::config,\n};\n\n#[cfg(test)]\nfn helper() {\n    crate::io::udp::f();\n}\n\n\
         #[cfg(test)]\nmod tests {\n    use crate::io::udp;\n}\n",
    )
    .expect("file");
    std::fs::create_dir_all(src.join("humanoid/pose")).expect("folder");
    std::fs::write(
        src.join("humanoid/pose/test_support.rs"),
        "use crate::bridge::config;\n",
    )
    .expect("file");
    assert_eq!(
        upward_uses(src),
        [
            UpwardUse {
                file: "humanoid/pose.rs".into(),
                line: 6,
                from: "humanoid",
                to: "skeleton".into(),
            },
            UpwardUse {
                file: "humanoid/pose.rs".into(),
                line: 6,
                from: "humanoid",
                to: "bridge".into(),
            },
        ]
    );
}
