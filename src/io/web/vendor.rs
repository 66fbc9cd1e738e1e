//! The browser modules the viewer draws avatars with, embedded in the binary:
//! three.js with its glTF loader, @pixiv/three-vrm and @pixiv/three-vrm-animation,
//! as their npm packages ship them (ES modules, no build step), each beside its
//! LICENSE, in `src/io/web/vendor/`.
//!
//! `vendor/manifest.json` pins each package's version and every file's sha256; the
//! script beside it (`refresh.mjs`) copies the files from npm and checks or
//! rewrites the hashes, and the unit test below checks what is embedded against
//! them. A file is served at `/vendor/<package>@<version>/<path>` with a year's
//! cache (the version is in the path, so a new one is a new address), and the
//! pages find the packages through an import map made from the manifest
//! (`import_map`): `import * as THREE from "three"` works in the page as in node,
//! with no CDN, no bundler and nothing fetched from elsewhere.

use std::sync::LazyLock;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// Every vendored file: `<package>/<path in the package>` and its bytes.
const FILES: [(&str, &[u8]); 10] = [
    ("three/LICENSE", include_bytes!("vendor/three/LICENSE")),
    (
        "three/build/three.module.js",
        include_bytes!("vendor/three/build/three.module.js"),
    ),
    (
        "three/build/three.core.js",
        include_bytes!("vendor/three/build/three.core.js"),
    ),
    (
        "three/examples/jsm/loaders/GLTFLoader.js",
        include_bytes!("vendor/three/examples/jsm/loaders/GLTFLoader.js"),
    ),
    (
        "three/examples/jsm/utils/BufferGeometryUtils.js",
        include_bytes!("vendor/three/examples/jsm/utils/BufferGeometryUtils.js"),
    ),
    (
        "three/examples/jsm/utils/SkeletonUtils.js",
        include_bytes!("vendor/three/examples/jsm/utils/SkeletonUtils.js"),
    ),
    (
        "@pixiv/three-vrm/LICENSE",
        include_bytes!("vendor/@pixiv/three-vrm/LICENSE"),
    ),
    (
        "@pixiv/three-vrm/lib/three-vrm.module.min.js",
        include_bytes!("vendor/@pixiv/three-vrm/lib/three-vrm.module.min.js"),
    ),
    (
        "@pixiv/three-vrm-animation/LICENSE",
        include_bytes!("vendor/@pixiv/three-vrm-animation/LICENSE"),
    ),
    (
        "@pixiv/three-vrm-animation/lib/three-vrm-animation.module.min.js",
        include_bytes!("vendor/@pixiv/three-vrm-animation/lib/three-vrm-animation.module.min.js"),
    ),
];

/// `vendor/manifest.json`: the pinned packages.
#[derive(Debug, serde::Deserialize)]
struct Manifest {
    packages: Vec<Package>,
}

#[derive(Debug, serde::Deserialize)]
struct Package {
    /// The npm name, `three` or `@pixiv/three-vrm`.
    name: String,
    version: String,
    /// Import-map specifier → path in the package.
    imports: serde_json::Map<String, serde_json::Value>,
    /// Path in the package → sha256, lower-case hex.
    files: serde_json::Map<String, serde_json::Value>,
}

/// The manifest, read once: embedded, and read by the unit tests below.
static MANIFEST: LazyLock<Manifest> = LazyLock::new(|| {
    serde_json::from_str(include_str!("vendor/manifest.json"))
        .unwrap_or_else(|e| unreachable!("the embedded vendor/manifest.json is tested: {e}"))
});

/// The address a package's file is served at.
fn url(package: &Package, path: &str) -> String {
    format!("/vendor/{}@{}/{path}", package.name, package.version)
}

/// The `<script type="importmap">` text the pages carry: every package's
/// specifiers mapped to their versioned addresses.
#[must_use]
pub fn import_map() -> String {
    let mut imports = serde_json::Map::new();
    for package in &MANIFEST.packages {
        for (specifier, path) in &package.imports {
            let path = path.as_str().unwrap_or_default();
            imports.insert(specifier.clone(), url(package, path).into());
        }
    }
    serde_json::json!({ "imports": imports }).to_string()
}

/// The bytes of the file at `/vendor/<rest>`, when `rest` names a pinned
/// package at its pinned version and one of its files.
fn find(rest: &str) -> Option<&'static [u8]> {
    let package = MANIFEST.packages.iter().find(|p| {
        rest.strip_prefix(p.name.as_str())
            .and_then(|r| r.strip_prefix('@'))
            .and_then(|r| r.strip_prefix(p.version.as_str()))
            .is_some_and(|r| r.starts_with('/'))
    })?;
    let path = &rest[package.name.len() + 1 + package.version.len() + 1..];
    if !package.files.contains_key(path) {
        return None;
    }
    let key = format!("{}/{path}", package.name);
    FILES
        .iter()
        .find(|(name, _)| *name == key)
        .map(|(_, bytes)| *bytes)
}

/// `/vendor/<rest>`: a vendored file, cached for a year, or 404.
pub fn serve(rest: &str) -> Response {
    let Some(bytes) = find(rest) else {
        return (StatusCode::NOT_FOUND, "no such file\n").into_response();
    };
    let kind = if rest.ends_with(".js") {
        "text/javascript; charset=utf-8"
    } else {
        "text/plain; charset=utf-8"
    };
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(kind)),
            (
                header::CACHE_CONTROL,
                HeaderValue::from_static("public, max-age=31536000, immutable"),
            ),
        ],
        bytes,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};

    fn hex(bytes: &[u8]) -> String {
        Sha256::digest(bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    #[test]
    fn every_embedded_file_has_its_pinned_hash() {
        let mut pinned = 0;
        for package in &MANIFEST.packages {
            for (path, hash) in &package.files {
                let key = format!("{}/{path}", package.name);
                let (_, bytes) = FILES
                    .iter()
                    .find(|(name, _)| *name == key)
                    .unwrap_or_else(|| panic!("{key} is pinned but not embedded"));
                assert_eq!(
                    Some(hex(bytes).as_str()),
                    hash.as_str(),
                    "{key}: run src/io/web/vendor/refresh.mjs"
                );
                pinned += 1;
            }
        }
        assert_eq!(pinned, FILES.len(), "a file is embedded but not pinned");
    }

    #[test]
    fn every_package_ships_its_license_and_its_imports() {
        for package in &MANIFEST.packages {
            assert!(package.files.contains_key("LICENSE"), "{}", package.name);
            for path in package.imports.values() {
                let path = path.as_str().expect("a path");
                let is_file = package.files.contains_key(path);
                let is_folder =
                    path.ends_with('/') && package.files.keys().any(|f| f.starts_with(path));
                assert!(is_file || is_folder, "{}: {path}", package.name);
            }
        }
    }

    #[test]
    fn the_import_map_points_at_served_files() {
        let map: serde_json::Value = serde_json::from_str(&import_map()).expect("JSON");
        let three = map["imports"]["three"].as_str().expect("three");
        assert!(three.ends_with("/build/three.module.js"), "{three}");
        for (_, address) in map["imports"].as_object().expect("imports") {
            let address = address.as_str().expect("an address");
            let rest = address.strip_prefix("/vendor/").expect("under /vendor/");
            if !rest.ends_with('/') {
                assert!(find(rest).is_some(), "{address} is not served");
            }
        }
        // three.module.js imports three.core.js beside it; the loader its utils.
        let base = three.trim_end_matches("build/three.module.js");
        for path in [
            "build/three.core.js",
            "examples/jsm/loaders/GLTFLoader.js",
            "examples/jsm/utils/SkeletonUtils.js",
        ] {
            let address = format!("{base}{path}");
            assert!(find(&address["/vendor/".len()..]).is_some(), "{address}");
        }
    }

    /// The page plays takes with the same three.js and three-vrm-animation that the
    /// interop tests (tests/interop, under node) read them with.
    #[test]
    fn the_page_and_the_interop_tests_pin_the_same_versions() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/interop/package.json");
        let text = std::fs::read_to_string(path).expect("tests/interop/package.json");
        let interop: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        for name in ["three", "@pixiv/three-vrm-animation"] {
            let package = MANIFEST.packages.iter().find(|p| p.name == name);
            assert_eq!(
                package.map(|p| p.version.as_str()),
                interop["dependencies"][name].as_str(),
                "{name}"
            );
        }
    }

    #[test]
    fn other_versions_and_unlisted_files_are_not_found() {
        assert!(find("three@0.186.0/build/three.module.js").is_none());
        assert!(find("three@0.187.0/build/three.webgpu.js").is_none());
        assert!(find("three@0.187.0/../three/LICENSE").is_none());
        assert!(find("three").is_none());
        assert!(find("").is_none());
    }
}
