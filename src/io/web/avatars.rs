//! The avatars the viewer draws performers on: `/api/avatar/{performer}` serves
//! the avatar configured for that performer (or for every performer), and
//! `/api/avatar` the one configured for every performer, which the page's take
//! player uses; either is the bridge's mannequin when none is configured (also at
//! `/avatars/mannequin.vrm`). A configured .vrm is read when asked for, so a
//! changed file shows on the page's next load; a glTF humanoid is served as the
//! VRM 1.0 the bridge made of it when it loaded it (`formats::gltf::as_vrm`); a
//! skeleton without a mesh (.bvh, skeleton .json) is a `204 No Content` naming the
//! file, and the page draws a stick figure. The bridge says which avatar that is
//! (`ConfiguredAvatars`, from its config); this edge only reads and serves it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};

use axum::body::Bytes;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::formats::mannequin::mannequin_vrm;

/// Which avatar is configured for a performer (`Some(name)`), or for every
/// performer (`None`); `None` when there is none.
pub type ConfiguredAvatars = Arc<dyn Fn(Option<&str>) -> Option<ViewerAvatar> + Send + Sync>;

/// What the viewer is served for a configured avatar file.
#[derive(Debug, Clone)]
pub enum ViewerAvatar {
    /// A .vrm (or a glTF the bridge could not convert), read when asked for.
    File(PathBuf),
    /// A glTF humanoid written as a VRM 1.0 when the bridge loaded it, served
    /// under its file's `name`.
    Converted { name: String, glb: Bytes },
    /// A skeleton without a mesh (.bvh, skeleton .json), called `name`.
    Skeleton { name: String },
}

/// The bridge's own avatar, written when first asked for.
static MANNEQUIN: LazyLock<Vec<u8>> = LazyLock::new(mannequin_vrm);

/// The mannequin's .vrm.
pub fn mannequin() -> Response {
    vrm(Bytes::from_static(MANNEQUIN.as_slice()), "mannequin.vrm")
}

/// The configured avatar for `performer` (or for everyone), read now; else the
/// mannequin.
pub async fn serve(configured: &ConfiguredAvatars, performer: Option<&str>) -> Response {
    let path = match configured(performer) {
        None => return mannequin(),
        Some(ViewerAvatar::Converted { name, glb }) => return vrm(glb, &name),
        Some(ViewerAvatar::Skeleton { name }) => {
            return (
                StatusCode::NO_CONTENT,
                [(header::CONTENT_DISPOSITION, content_disposition(&name))],
            )
                .into_response();
        }
        Some(ViewerAvatar::File(path)) => path,
    };
    match tokio::fs::read(&path).await {
        Ok(bytes) => vrm(bytes.into(), file_name(&path)),
        Err(e) => {
            tracing::warn!(%e, file = %path.display(), "cannot read the avatar");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("cannot read {}: {e}\n", path.display()),
            )
                .into_response()
        }
    }
}

fn file_name(path: &Path) -> &str {
    path.file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
}

/// A .vrm's bytes, named (the page shows the name).
fn vrm(bytes: Bytes, name: &str) -> Response {
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("model/gltf-binary"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
            (header::CONTENT_DISPOSITION, content_disposition(name)),
        ],
        bytes,
    )
        .into_response()
}

/// `inline; filename="NAME"`, with characters a quoted header value cannot
/// carry (quotes, backslashes, controls, non-ASCII) replaced by `_`.
fn content_disposition(name: &str) -> HeaderValue {
    let safe: String = name
        .chars()
        .map(|c| match c {
            ' '..='~' if c != '"' && c != '\\' => c,
            _ => '_',
        })
        .collect();
    HeaderValue::from_str(&format!("inline; filename=\"{safe}\""))
        .unwrap_or_else(|_| HeaderValue::from_static("inline"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_quoted_safely() {
        assert_eq!(
            content_disposition("Example.vrm"),
            "inline; filename=\"Example.vrm\""
        );
        assert_eq!(
            content_disposition("a\"b\\c\nd é.vrm"),
            "inline; filename=\"a_b_c_d _.vrm\""
        );
    }
}
