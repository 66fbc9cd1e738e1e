//! The avatars the viewer draws performers on: `/api/avatar/{performer}` serves
//! the .vrm configured for that performer (or for every performer), and
//! `/api/avatar` the one configured for every performer, which the page's take
//! player uses. The file is read when asked for, so a changed file shows on the
//! page's next load. The bridge says which file that is (`ConfiguredAvatars`, from
//! its config); this edge only reads and serves it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// Which .vrm is configured for a performer (`Some(name)`), or for every
/// performer (`None`); `None` when there is none.
pub type ConfiguredAvatars = Arc<dyn Fn(Option<&str>) -> Option<PathBuf> + Send + Sync>;

/// The configured avatar for `performer` (or for everyone), read now.
pub async fn serve(configured: &ConfiguredAvatars, performer: Option<&str>) -> Response {
    let Some(path) = configured(performer) else {
        let whom = performer.map_or_else(|| "every performer".to_owned(), |p| format!("`{p}`"));
        return (
            StatusCode::NOT_FOUND,
            format!("no avatar is configured for {whom}\n"),
        )
            .into_response();
    };
    match tokio::fs::read(&path).await {
        Ok(bytes) => vrm(bytes, &path),
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

/// A .vrm's bytes, named by `path`'s file name (the page shows it).
fn vrm(bytes: Vec<u8>, path: &Path) -> Response {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let disposition = content_disposition(name);
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("model/gltf-binary"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
            (header::CONTENT_DISPOSITION, disposition),
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
