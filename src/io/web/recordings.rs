//! The recordings folder over HTTP: the list of finished takes for the viewer,
//! and downloads. A name from a URL is untrusted: it goes through the same rule
//! as a take's name (`record::journal::recording_path`), so nothing outside the
//! folder, and nothing but a `.vrma`, can be asked for.

use std::path::Path;
use std::time::UNIX_EPOCH;

use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use tower::ServiceExt;
use tower_http::services::ServeFile;

use crate::record::journal::{has_vrma_extension, recording_path};

/// One finished take.
#[derive(Debug, serde::Serialize)]
pub struct Listed {
    pub file: String,
    pub bytes: u64,
    /// Seconds since 1970, when it was last written.
    pub modified: f64,
}

/// Every `.vrma` in `dir`, newest first; none when the folder does not exist yet.
pub async fn list(dir: &Path) -> std::io::Result<Vec<Listed>> {
    let mut entries = match tokio::fs::read_dir(dir).await {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut found = Vec::new();
    while let Some(entry) = entries.next_entry().await? {
        let Ok(file) = entry.file_name().into_string() else {
            continue;
        };
        if !has_vrma_extension(&file) || recording_path(dir, &file).is_err() {
            continue;
        }
        let Ok(meta) = entry.metadata().await else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        let modified = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0.0, |d| d.as_secs_f64());
        found.push(Listed {
            file,
            bytes: meta.len(),
            modified,
        });
    }
    found.sort_by(|a, b| b.modified.total_cmp(&a.modified).then(a.file.cmp(&b.file)));
    Ok(found)
}

/// `dir/file` as a download (ranges and caching headers by tower-http), or 404.
pub async fn download(dir: &Path, file: &str, request: Request) -> Response {
    let path = match recording_path(dir, file) {
        Ok(path) if has_vrma_extension(file) => path,
        _ => return (StatusCode::NOT_FOUND, "no such recording\n").into_response(),
    };
    let served = ServeFile::new(&path).oneshot(request).await;
    let mut response = match served {
        Ok(response) => response.into_response(),
        Err(e) => match e {},
    };
    if response.status().is_success() {
        let headers = response.headers_mut();
        // A .vrma is a GLB (the glTF binary container).
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("model/gltf-binary"),
        );
        // The name passed the take-name rule: no quotes, no separators.
        if let Ok(value) = HeaderValue::from_str(&format!("attachment; filename=\"{file}\"")) {
            headers.insert(header::CONTENT_DISPOSITION, value);
        }
    }
    response
}
