//! The pages and their scripts, embedded in the binary from `src/web/assets/`:
//! plain HTML, CSS and ES modules with no build step and nothing fetched from
//! elsewhere, so they work on a machine with no internet.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// Every file served: name, content type, text.
const FILES: [(&str, &str, &str); 8] = [
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

/// A page (`index.html`, `xr.html`).
pub fn page(name: &str) -> Response {
    asset(name)
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
