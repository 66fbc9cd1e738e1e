//! Recording names: `recording_path` turns an untrusted name into a plain file
//! name inside the recordings folder, `numbered` gives a taken name its next
//! number (`take.vrma`, `take-2.vrma`, ...), and a recording and its journal name
//! each other (`take.vrma` <-> `take.vrma.journal`).

use std::path::{Path, PathBuf};

/// What a journal's path adds to its recording's path: `take.vrma.journal`.
pub const JOURNAL_SUFFIX: &str = ".journal";

/// Longest recording name accepted, bytes.
pub const MAX_NAME_BYTES: usize = 100;

/// Highest number tried after a taken recording name (`take-1000.vrma`).
pub(super) const MAX_NUMBER: u32 = 1000;

/// Why a recording name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordingNameError {
    #[error("recording name is empty")]
    Empty,
    #[error("recording name {name} is {len} bytes long; at most {MAX_NAME_BYTES} are allowed")]
    TooLong { name: String, len: usize },
    #[error("recording name {0} contains a control character")]
    Control(String),
    #[error("recording name {0} contains a path separator")]
    Separator(String),
    #[error("recording name {0} starts with a dot")]
    LeadingDot(String),
    #[error(
        "recording name {name} contains {found:?}; use letters, digits, spaces, `-`, `_` and `.`"
    )]
    Character { name: String, found: char },
    #[error("recording name {0} starts or ends with a space, or ends with a dot")]
    Edge(String),
    #[error("recording name {0} is a reserved device name on windows")]
    Reserved(String),
}

/// The path of recording `name` in `dir`: `dir/name.vrma` (`.vrma` added unless the
/// name ends with it). `name` is untrusted: only a plain file name of letters, digits,
/// spaces, `-`, `_` and `.` is accepted, at most `MAX_NAME_BYTES` long, not starting
/// with a dot or a space and not ending with a space or a dot, and not a Windows
/// device name; the result is always directly inside `dir`.
pub fn recording_path(dir: &Path, name: &str) -> Result<PathBuf, RecordingNameError> {
    if name.is_empty() {
        return Err(RecordingNameError::Empty);
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(RecordingNameError::TooLong {
            name: shown(name),
            len: name.len(),
        });
    }
    if name.chars().any(char::is_control) {
        return Err(RecordingNameError::Control(shown(name)));
    }
    if name.contains(['/', '\\']) {
        return Err(RecordingNameError::Separator(shown(name)));
    }
    if name.starts_with('.') {
        return Err(RecordingNameError::LeadingDot(shown(name)));
    }
    if let Some(found) = name
        .chars()
        .find(|c| !(c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | ' ')))
    {
        return Err(RecordingNameError::Character {
            name: shown(name),
            found,
        });
    }
    if name.starts_with(' ') || name.ends_with([' ', '.']) {
        return Err(RecordingNameError::Edge(shown(name)));
    }
    if is_windows_device(name) {
        return Err(RecordingNameError::Reserved(shown(name)));
    }
    let mut file = name.to_owned();
    if !has_vrma_extension(name) {
        file.push_str(".vrma");
    }
    Ok(dir.join(file))
}

/// A name quoted and escaped for one line of a message, cut after 40 characters.
fn shown(name: &str) -> String {
    let cut: String = name.chars().take(40).collect();
    let mut text = format!("{cut:?}");
    if cut.len() < name.len() {
        text.push('…');
    }
    text
}

/// Whether Windows would take `name` for a device (`con.vrma` is `CON`).
fn is_windows_device(name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or(name).trim_end();
    let upper = stem.to_ascii_uppercase();
    match upper.as_str() {
        "CON" | "PRN" | "AUX" | "NUL" => true,
        _ => {
            let bytes = upper.as_bytes();
            bytes.len() == 4
                && (upper.starts_with("COM") || upper.starts_with("LPT"))
                && matches!(bytes[3], b'1'..=b'9')
        }
    }
}

/// Whether `name` ends with `.vrma` (any case) after at least one character.
pub fn has_vrma_extension(name: &str) -> bool {
    name.len() > 5
        && name
            .get(name.len() - 5..)
            .is_some_and(|end| end.eq_ignore_ascii_case(".vrma"))
}

/// The journal of the recording at `path`: `take.vrma` -> `take.vrma.journal`.
#[must_use]
pub fn journal_path(path: &Path) -> PathBuf {
    let mut journal = path.as_os_str().to_owned();
    journal.push(JOURNAL_SUFFIX);
    PathBuf::from(journal)
}

/// The recording a journal stands for: its path without `.journal`, with `.vrma`
/// added when that does not end in `.vrma` (`take.vrma.journal` -> `take.vrma`,
/// `take.journal` -> `take.vrma`, `take.bin` -> `take.bin.vrma`).
#[must_use]
pub fn vrma_path_for_journal(journal: &Path) -> PathBuf {
    let text = journal.as_os_str().to_string_lossy();
    let stripped = text.strip_suffix(JOURNAL_SUFFIX).unwrap_or(&text);
    let mut path = stripped.to_owned();
    if !has_vrma_extension(&path) {
        path.push_str(".vrma");
    }
    PathBuf::from(path)
}

/// `take.vrma` for 1, `take-2.vrma` for 2, ...
pub(super) fn numbered(base: &Path, n: u32) -> PathBuf {
    if n <= 1 {
        return base.to_owned();
    }
    let stem = base.file_stem().unwrap_or_default().to_string_lossy();
    let name = match base.extension() {
        Some(ext) => format!("{stem}-{n}.{}", ext.to_string_lossy()),
        None => format!("{stem}-{n}"),
    };
    base.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recording_path_rejects_every_unsafe_name() {
        let dir = Path::new("recordings");
        let long = "x".repeat(MAX_NAME_BYTES + 1);
        let cases = [
            ("../x", "contains a path separator"),
            ("/etc/x", "contains a path separator"),
            ("a/b", "contains a path separator"),
            ("a\\b", "contains a path separator"),
            ("..", "starts with a dot"),
            (".", "starts with a dot"),
            (".hidden", "starts with a dot"),
            ("", "recording name is empty"),
            ("a\0b", "contains a control character"),
            ("line\nbreak", "contains a control character"),
            (long.as_str(), "is 101 bytes long"),
            ("C:x", "contains ':'"),
            ("c:", "contains ':'"),
            ("take*", "contains '*'"),
            ("what?", "contains '?'"),
            ("a<b>", "contains '<'"),
            (" take", "starts or ends with a space"),
            ("take ", "starts or ends with a space"),
            ("take.", "ends with a dot"),
            ("CON", "reserved device name"),
            ("com1.vrma", "reserved device name"),
            ("Lpt9 .txt", "reserved device name"),
            ("nul.take", "reserved device name"),
        ];
        for (name, expected) in cases {
            let err = match recording_path(dir, name) {
                Ok(path) => panic!("{name:?} accepted as {}", path.display()),
                Err(err) => err.to_string(),
            };
            assert!(
                err.contains(expected),
                "{name:?}: `{err}` lacks `{expected}`"
            );
            assert!(
                !err.contains('\n') && !err.contains('\0'),
                "{name:?}: {err}"
            );
        }
    }

    #[test]
    fn recording_path_keeps_plain_names_inside_the_directory() {
        let dir = Path::new("/srv/recordings");
        let longest = "y".repeat(MAX_NAME_BYTES);
        let cases = [
            ("take 1", "take 1.vrma"),
            ("take.vrma", "take.vrma"),
            ("Take.VRMA", "Take.VRMA"),
            ("a..b", "a..b.vrma"),
            ("ライブ_01-b", "ライブ_01-b.vrma"),
            ("console", "console.vrma"),
            ("com10", "com10.vrma"),
            ("vrma", "vrma.vrma"),
            (longest.as_str(), &format!("{longest}.vrma")),
        ];
        for (name, file) in cases {
            let path = recording_path(dir, name).unwrap();
            assert_eq!(path, dir.join(file), "{name:?}");
            assert_eq!(path.parent(), Some(dir), "{name:?}");
        }
    }

    #[test]
    fn journal_and_recording_paths_pair_up() {
        let take = Path::new("rec/take.vrma");
        assert_eq!(journal_path(take), Path::new("rec/take.vrma.journal"));
        assert_eq!(vrma_path_for_journal(&journal_path(take)), take);
        assert_eq!(
            vrma_path_for_journal(Path::new("take.journal")),
            Path::new("take.vrma")
        );
        assert_eq!(
            vrma_path_for_journal(Path::new("take.bin")),
            Path::new("take.bin.vrma")
        );
        assert_eq!(numbered(take, 1), take);
        assert_eq!(numbered(take, 12), Path::new("rec/take-12.vrma"));
    }
}
