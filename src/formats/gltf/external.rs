//! External buffer files of a `.gltf`, read only where they may be: a file named by
//! a URI is untrusted input (it may come from anywhere), so it must be a regular
//! file inside the `.gltf`'s folder (subfolders allowed, symbolic links followed
//! only if they stay inside), at most `MAX_BYTES` long, and only its `byteLength`
//! bytes are read. `MOCAP_BRIDGE_TRUST_FILES=1` lifts the folder and size rules for
//! files the user trusts; a device or a missing file is refused all the same.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

/// The largest external buffer read: 1 GiB.
pub const MAX_BYTES: u64 = 1 << 30;

/// The environment variable that lifts the folder and size rules.
pub const TRUST_VARIABLE: &str = "MOCAP_BRIDGE_TRUST_FILES";

/// Why an external buffer was not read.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    #[error("the file is not there")]
    Missing,
    #[error(
        "points outside the file's folder (an absolute path, `..` or a link out); \
         set {TRUST_VARIABLE}=1 to read it anyway"
    )]
    Outside,
    #[error("is not a regular file")]
    NotAFile,
    #[error(
        "its byteLength {0} is over the {MAX_BYTES}-byte limit; set {TRUST_VARIABLE}=1 to read it anyway"
    )]
    TooLarge(u64),
    #[error("cannot read {}", .0.display())]
    Read(PathBuf, #[source] io::Error),
}

/// Whether the user lifted the folder and size rules (`MOCAP_BRIDGE_TRUST_FILES=1`).
#[must_use]
pub fn trusted() -> bool {
    std::env::var_os(TRUST_VARIABLE).is_some_and(|v| v == "1")
}

/// Reads the first `length` bytes of `relative` (a URI's decoded path) under
/// `folder`; fewer when the file is shorter (the caller checks the length).
pub fn read(folder: &Path, relative: &str, length: u64, trusted: bool) -> Result<Vec<u8>, Refused> {
    let named = Path::new(relative);
    let climbs = named
        .components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir));
    if climbs && !trusted {
        return Err(Refused::Outside);
    }
    if length > MAX_BYTES && !trusted {
        return Err(Refused::TooLarge(length));
    }
    let file = folder.join(named);
    let read_error = |e: io::Error| match e.kind() {
        io::ErrorKind::NotFound => Refused::Missing,
        _ => Refused::Read(file.clone(), e),
    };
    let real = file.canonicalize().map_err(read_error)?;
    if !trusted {
        let home = folder
            .canonicalize()
            .or_else(|_| Path::new(".").canonicalize())
            .map_err(read_error)?;
        if !real.starts_with(&home) {
            return Err(Refused::Outside);
        }
    }
    if !real.metadata().map_err(read_error)?.is_file() {
        return Err(Refused::NotAFile);
    }
    let mut bytes = Vec::new();
    File::open(&real)
        .and_then(|f| f.take(length).read_to_end(&mut bytes))
        .map_err(read_error)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_inside_the_folder_are_read_and_only_their_length() {
        let root = tempfile::tempdir().unwrap();
        let folder = root.path().join("model");
        std::fs::create_dir_all(folder.join("data")).unwrap();
        std::fs::write(folder.join("data/body.bin"), [7u8; 64]).unwrap();
        std::fs::write(root.path().join("secret.bin"), [1u8; 64]).unwrap();
        let secret = root.path().join("secret.bin");

        assert_eq!(
            read(&folder, "data/body.bin", 16, false).unwrap(),
            [7u8; 16]
        );
        assert_eq!(
            read(&folder, "./data/body.bin", 100, false).unwrap().len(),
            64
        );
        for outside in [
            "../secret.bin",
            secret.to_str().unwrap(),
            "data/../../secret.bin",
        ] {
            assert!(
                matches!(read(&folder, outside, 16, false), Err(Refused::Outside)),
                "{outside}"
            );
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&secret, folder.join("link.bin")).unwrap();
            assert!(matches!(
                read(&folder, "link.bin", 16, false),
                Err(Refused::Outside)
            ));
            assert_eq!(read(&folder, "link.bin", 16, true).unwrap(), [1u8; 16]);
            assert!(matches!(
                read(&folder, "/dev/zero", 16, true),
                Err(Refused::NotAFile)
            ));
        }
        assert!(matches!(
            read(&folder, "nope.bin", 16, false),
            Err(Refused::Missing)
        ));
        assert!(matches!(
            read(&folder, "data/body.bin", MAX_BYTES + 1, false),
            Err(Refused::TooLarge(_))
        ));
        assert_eq!(read(&folder, "../secret.bin", 8, true).unwrap(), [1u8; 8]);
    }
}
