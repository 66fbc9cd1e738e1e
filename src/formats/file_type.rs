//! A file's type as its name gives it: the extension, lower case. A file whose whole
//! name is a dot and an extension (`.bvh`, as a generator writes a take it was given
//! no name for) is of that type, where `Path::extension` reads the name as a hidden
//! file's stem with no extension.

use std::path::Path;

/// The type `path`'s name gives, lower case (`"bvh"`, `"vrma"`), or `None` when the
/// name has no extension.
#[must_use]
pub fn file_type(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let extension = match path.extension() {
        Some(extension) => extension.to_str()?,
        None => name
            .strip_prefix('.')
            .filter(|rest| !rest.is_empty() && !rest.contains('.'))?,
    };
    Some(extension.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extension_in_lower_case() {
        assert_eq!(file_type(Path::new("a/walk.BVH")).as_deref(), Some("bvh"));
        assert_eq!(file_type(Path::new("take.2.vrma")).as_deref(), Some("vrma"));
        assert_eq!(file_type(Path::new("README")), None);
        assert_eq!(file_type(Path::new("folder/")), None);
    }

    #[test]
    fn a_name_that_is_only_an_extension_is_of_that_type() {
        assert_eq!(
            file_type(Path::new("visualization/.bvh")).as_deref(),
            Some("bvh")
        );
        assert_eq!(file_type(Path::new(".GLB")).as_deref(), Some("glb"));
        assert_eq!(file_type(Path::new(".")), None);
        assert_eq!(file_type(Path::new("..")), None);
    }
}
