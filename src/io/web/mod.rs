//! The bridge's web server, on the WebSocket port (axum over hyper): the WebSocket
//! upgrade (sessions live in `websocket`), the live viewer at `/`, the WebXR
//! sender at `/xr`, and what those pages read besides the pose stream: the
//! avatar's T-pose (`/api/rig`), the performers' avatars (`/api/avatar/`,
//! `avatars`), the recordings (`/api/recordings`, downloads under
//! `/recordings/`), and `/metrics` for Prometheus (`metrics`).
//!
//! The pages, their scripts and the libraries they import (`vendor`: three.js,
//! three-vrm) are embedded in the binary (`assets`), so an installed bridge
//! serves them with no files beside it and no internet. They are code, not data:
//! anyone who can reach the port may load them. Everything that carries data (the
//! WebSocket, the rig, the avatars, the recordings, the metrics) needs `?token=`
//! when a token is configured; the pages pass on the token they were opened with. Every
//! request must be addressed to the bridge and come from its own pages or this
//! machine's (`guard`), so that a web page elsewhere cannot use the browser to
//! drive it.

mod assets;
pub mod avatars;
pub mod guard;
pub mod metrics;
mod recordings;
mod vendor;
pub mod websocket;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;

use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{ConnectInfo, FromRequestParts, Path, Query, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::serve::ListenerExt;
use axum::{Json, Router};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};

use crate::formats::vrma::VrmaRest;
use crate::humanoid::HumanBone;
use crate::humanoid::bone::ALL;
use avatars::ConfiguredAvatars;
use guard::Guard;
use websocket::{ClientOptions, Shared};

/// The web server, ready to run.
pub struct WebServer {
    pub listener: TcpListener,
    pub shared: Arc<Shared>,
    /// The avatar's T-pose, which the viewer draws poses on.
    pub rig: VrmaRest,
    /// Where the recorder writes its takes.
    pub recordings: PathBuf,
    /// The .vrm files configured for performers.
    pub avatars: ConfiguredAvatars,
    /// The hosts and origins answered besides the built-in ones.
    pub guard: Guard,
    pub shutdown: watch::Receiver<bool>,
}

/// What every request handler shares.
#[derive(Clone)]
struct AppState {
    shared: Arc<Shared>,
    rig: Arc<serde_json::Value>,
    recordings: Arc<std::path::Path>,
    avatars: ConfiguredAvatars,
    guard: Arc<Guard>,
    shutdown: watch::Receiver<bool>,
    /// Held by every WebSocket session; shutdown waits until all are dropped.
    alive: mpsc::Sender<()>,
}

impl WebServer {
    /// Serves until shutdown, then waits for every WebSocket session to close (so
    /// no client still feeds the solver when the inputs are said to be stopped).
    pub async fn run(self) {
        let (alive, mut sessions) = mpsc::channel(1);
        let state = AppState {
            shared: self.shared,
            rig: Arc::new(rig_json(&self.rig)),
            recordings: self.recordings.into(),
            avatars: self.avatars,
            guard: Arc::new(self.guard),
            shutdown: self.shutdown.clone(),
            alive,
        };
        let app = Router::new()
            .route("/", get(root))
            .route("/xr", get(|| async { assets::page("xr.html") }))
            .route("/assets/{file}", get(asset))
            .route("/vendor/{*path}", get(vendored))
            .route("/api/rig", get(rig))
            .route(
                "/avatars/mannequin.vrm",
                get(|| async { avatars::mannequin() }),
            )
            .route("/api/avatar", get(shared_avatar))
            .route("/api/avatar/{performer}", get(performer_avatar))
            .route("/api/recordings", get(list_recordings))
            .route("/recordings/{file}", get(download))
            .route("/metrics", get(prometheus_metrics))
            .layer(middleware::from_fn_with_state(state.clone(), guarded))
            .with_state(state);
        let mut shutdown = self.shutdown;
        let served = axum::serve(
            self.listener.tap_io(limit_unsent),
            app.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .with_graceful_shutdown(async move {
            let _ = shutdown.wait_for(|&stop| stop).await;
        });
        if let Err(e) = served.await {
            tracing::error!(%e, "the web server failed");
        }
        // `None` once the router (dropped with `serve`) and every session are gone.
        let _ = sessions.recv().await;
    }
}

/// Unsent bytes a connection's socket may hold (`TCP_NOTSENT_LOWAT`): past this, a
/// write waits, so a client that reads slowly is not sent a backlog (poses
/// seconds old) but, when it reads again, the newest pose, the ones passed over
/// counted as drops. Two or three poses; what the network and the client's own
/// receive window hold comes on top.
const UNSENT_BYTES: u32 = 16 * 1024;

/// Applies `UNSENT_BYTES` to an accepted connection; elsewhere than Linux, a send
/// buffer of that size bounds unsent and unacknowledged bytes together.
fn limit_unsent(connection: &mut tokio::net::TcpStream) {
    let socket = socket2::SockRef::from(&*connection);
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let limited = socket.set_tcp_notsent_lowat(UNSENT_BYTES);
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let limited = socket.set_send_buffer_size(UNSENT_BYTES as usize);
    if let Err(e) = limited {
        tracing::warn!(%e, "cannot bound what waits for a WebSocket client");
    }
}

/// The avatar's bones for the viewer: name, parent and T-pose position (model
/// space, metres), parents before children.
fn rig_json(rest: &VrmaRest) -> serde_json::Value {
    let bones: Vec<serde_json::Value> = ALL
        .iter()
        .map(|&bone| {
            let p = rest.position(bone);
            serde_json::json!({
                "name": bone.name(),
                "parent": bone.parent().map(|b| b.name()),
                "position": [p.x, p.y, p.z],
            })
        })
        .collect();
    let hips = rest.position(HumanBone::Hips);
    serde_json::json!({ "bones": bones, "hipsHeight": hips.y })
}

/// Answers a request only when `Guard` accepts its `Host` and `Origin`; else 403,
/// counted with the bad input and logged.
async fn guarded(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    request: Request,
    next: Next,
) -> Response {
    let checked = {
        let headers = request.headers();
        let header = |name| {
            headers
                .get(name)
                .map(|v: &header::HeaderValue| String::from_utf8_lossy(v.as_bytes()).into_owned())
        };
        let (host, origin) = (header(header::HOST), header(header::ORIGIN));
        state.guard.check(host.as_deref(), origin.as_deref())
    };
    match checked {
        Ok(()) => next.run(request).await,
        Err(refusal) => {
            state.shared.input_stats.bad.fetch_add(1, Relaxed);
            let path = request.uri().path();
            tracing::info!(%peer, path, "request refused: {refusal}");
            (StatusCode::FORBIDDEN, format!("{refusal}\n")).into_response()
        }
    }
}

/// The token in a data request's query.
#[derive(Debug, serde::Deserialize)]
struct TokenQuery {
    token: Option<String>,
}

impl AppState {
    /// The 401 answer when a token is configured and not given.
    fn refusal(&self, query: &TokenQuery) -> Option<Response> {
        match &self.shared.rules.token {
            Some(token) if query.token.as_deref() != Some(token.as_str()) => {
                Some((StatusCode::UNAUTHORIZED, "a valid ?token= is required\n").into_response())
            }
            _ => None,
        }
    }
}

/// `/`: a WebSocket client when it asks to upgrade, else the viewer page.
async fn root(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    request: Request,
) -> Response {
    let (mut parts, _body) = request.into_parts();
    if !wants_websocket(&parts.headers) {
        return assets::page("index.html");
    }
    let options = ClientOptions::from_query(parts.uri.query().unwrap_or(""));
    if !options.authorized(state.shared.rules.token.as_deref()) {
        state.shared.input_stats.bad.fetch_add(1, Relaxed);
        tracing::info!(%peer, "WebSocket client refused: wrong or missing token");
        return (StatusCode::UNAUTHORIZED, "a valid ?token= is required\n").into_response();
    }
    match WebSocketUpgrade::from_request_parts(&mut parts, &state).await {
        Ok(upgrade) => websocket::accept(
            upgrade,
            peer,
            options,
            state.shared.clone(),
            state.shutdown.clone(),
            state.alive.clone(),
        ),
        Err(rejection) => {
            state.shared.input_stats.bad.fetch_add(1, Relaxed);
            rejection.into_response()
        }
    }
}

fn wants_websocket(headers: &HeaderMap) -> bool {
    headers
        .get(header::UPGRADE)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"websocket"))
}

async fn asset(Path(file): Path<String>) -> Response {
    assets::asset(&file)
}

async fn vendored(Path(path): Path<String>) -> Response {
    vendor::serve(&path)
}

async fn rig(State(state): State<AppState>, Query(query): Query<TokenQuery>) -> Response {
    if let Some(refused) = state.refusal(&query) {
        return refused;
    }
    Json(state.rig.as_ref().clone()).into_response()
}

async fn shared_avatar(State(state): State<AppState>, Query(query): Query<TokenQuery>) -> Response {
    if let Some(refused) = state.refusal(&query) {
        return refused;
    }
    avatars::serve(&state.avatars, None).await
}

async fn performer_avatar(
    State(state): State<AppState>,
    Path(performer): Path<String>,
    Query(query): Query<TokenQuery>,
) -> Response {
    if let Some(refused) = state.refusal(&query) {
        return refused;
    }
    avatars::serve(&state.avatars, Some(&performer)).await
}

async fn list_recordings(
    State(state): State<AppState>,
    Query(query): Query<TokenQuery>,
) -> Response {
    if let Some(refused) = state.refusal(&query) {
        return refused;
    }
    match recordings::list(&state.recordings).await {
        Ok(list) => Json(serde_json::json!({ "recordings": list })).into_response(),
        Err(e) => {
            tracing::warn!(%e, dir = %state.recordings.display(), "cannot list the recordings");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("cannot list {}: {e}\n", state.recordings.display()),
            )
                .into_response()
        }
    }
}

async fn download(
    State(state): State<AppState>,
    Path(file): Path<String>,
    Query(query): Query<TokenQuery>,
    request: Request,
) -> Response {
    if let Some(refused) = state.refusal(&query) {
        return refused;
    }
    recordings::download(&state.recordings, &file, request).await
}

async fn prometheus_metrics(
    State(state): State<AppState>,
    Query(query): Query<TokenQuery>,
) -> Response {
    if let Some(refused) = state.refusal(&query) {
        return refused;
    }
    let performers = metrics::performers(&state.shared).await;
    let text = metrics::render(&state.shared.status, &performers);
    ([(header::CONTENT_TYPE, metrics::CONTENT_TYPE)], text).into_response()
}
