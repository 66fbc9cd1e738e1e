//! The pages and their scripts, embedded in the binary from `src/io/web/assets/`:
//! plain HTML, CSS and ES modules with no build step and nothing fetched from
//! elsewhere, so they work on a machine with no internet. The libraries they
//! import (three.js, three-vrm) are in `vendor`; a page's `<!-- import map -->`
//! line is replaced by the import map that finds them.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::vendor;

/// Every file served: name, content type, text.
const FILES: [(&str, &str, &str); 11] = [
    (
        "index.html",
        "text/html; charset=utf-8",
        include_str!("assets/index.html"),
    ),
    (
        "xr.html",
        "text/html; charset=utf-8",
        include_str!("assets/xr.html"),
    ),
    (
        "style.css",
        "text/css; charset=utf-8",
        include_str!("assets/style.css"),
    ),
    (
        "bridge.js",
        "text/javascript; charset=utf-8",
        include_str!("assets/bridge.js"),
    ),
    (
        "pose.js",
        "text/javascript; charset=utf-8",
        include_str!("assets/pose.js"),
    ),
    (
        "scene.js",
        "text/javascript; charset=utf-8",
        include_str!("assets/scene.js"),
    ),
    (
        "avatar.js",
        "text/javascript; charset=utf-8",
        include_str!("assets/avatar.js"),
    ),
    (
        "stage.js",
        "text/javascript; charset=utf-8",
        include_str!("assets/stage.js"),
    ),
    (
        "player.js",
        "text/javascript; charset=utf-8",
        include_str!("assets/player.js"),
    ),
    (
        "viewer.js",
        "text/javascript; charset=utf-8",
        include_str!("assets/viewer.js"),
    ),
    (
        "xr.js",
        "text/javascript; charset=utf-8",
        include_str!("assets/xr.js"),
    ),
];

/// Where a page takes the import map.
const IMPORT_MAP: &str = "<!-- import map -->";

/// A page (`index.html`, `xr.html`), with its import map.
pub fn page(name: &str) -> Response {
    match FILES.iter().find(|(file, _, _)| *file == name) {
        Some((_, _, text)) if text.contains(IMPORT_MAP) => {
            let map = format!(
                "<script type=\"importmap\">{}</script>",
                vendor::import_map()
            );
            let html = text.replace(IMPORT_MAP, &map);
            (
                [
                    (
                        header::CONTENT_TYPE,
                        HeaderValue::from_static("text/html; charset=utf-8"),
                    ),
                    (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
                ],
                html,
            )
                .into_response()
        }
        _ => asset(name),
    }
}

/// An embedded file by name, or 404.
pub fn asset(name: &str) -> Response {
    match FILES.iter().find(|(file, _, _)| *file == name) {
        Some((_, kind, text)) => (
            [
                (header::CONTENT_TYPE, HeaderValue::from_static(kind)),
                // A new bridge binary brings new scripts: always revalidate.
                (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
            ],
            *text,
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "no such file\n").into_response(),
    }
}
