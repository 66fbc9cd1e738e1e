//! What the NATS input and output share: the connection to a server (its
//! credentials, TLS, reconnection on its own, the connection state in the
//! status) and the set of performers received from a server, which no output to
//! that same server publishes back (a relay never loops).
//!
//! `async-nats` keeps reconnecting for as long as the client lives, waiting at
//! most `reconnect_max` between tries, and subscriptions resume on the new
//! connection by themselves. A bridge starts whether or not the server is up:
//! the first connection is tried like a reconnection.

use std::path::PathBuf;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_nats::connection::State;
use async_nats::{Client, ConnectOptions, Event};

use crate::pipeline::status::ConnectionStats;
use crate::protocol::frame::PerformerName;

/// How to reach one NATS server.
#[derive(Debug, Clone, PartialEq)]
pub struct NatsServer {
    /// `nats://host:port` (or `tls://host:port`); several separated by commas.
    pub url: String,
    pub token: Option<String>,
    pub user: Option<String>,
    pub password: Option<String>,
    /// A `.creds` file (JWT and NKey seed).
    pub credentials: Option<PathBuf>,
    /// Refuse a connection that is not TLS.
    pub tls: bool,
    /// PEM file of the certificate authorities to trust, besides the system's.
    pub root_certificates: Option<PathBuf>,
    /// Longest wait between two reconnection tries.
    pub reconnect_max: Duration,
    /// How long `connect` waits for the first connection.
    pub connect_wait: Duration,
}

/// Why a connection could not even be tried.
#[derive(Debug, thiserror::Error)]
pub enum NatsError {
    #[error("cannot read the NATS credentials file {path}")]
    Credentials {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("bad NATS server address `{url}`")]
    Url {
        url: String,
        #[source]
        source: async_nats::ConnectError,
    },
}

/// A client of `server`, named `name` on the server, whose connection state is
/// kept in `stats`. Waits up to `connect_wait` for the first connection (so a
/// bridge started beside its server publishes from its first frame), then
/// returns connected or not: the connection is made (and remade) in the
/// background.
pub async fn connect(
    server: &NatsServer,
    name: &str,
    stats: Arc<ConnectionStats>,
) -> Result<Client, NatsError> {
    let mut options = ConnectOptions::new()
        .name(name)
        .retry_on_initial_connect()
        .max_reconnects(None)
        .require_tls(server.tls);
    let reconnect_max = server.reconnect_max;
    options = options.reconnect_delay_callback(move |attempts| {
        // 10 ms, doubling, up to `reconnect_max`.
        let doubled = Duration::from_millis(10).saturating_mul(1 << attempts.min(16));
        doubled.min(reconnect_max)
    });
    if let Some(token) = &server.token {
        options = options.token(token.clone());
    }
    if let (Some(user), Some(password)) = (&server.user, &server.password) {
        options = options.user_and_password(user.clone(), password.clone());
    }
    if let Some(path) = &server.credentials {
        options =
            options
                .credentials_file(path)
                .await
                .map_err(|source| NatsError::Credentials {
                    path: path.clone(),
                    source,
                })?;
    }
    if let Some(path) = &server.root_certificates {
        options = options.add_root_certificates(path.clone());
    }
    let url = server.url.clone();
    let events = stats.clone();
    options = options.event_callback(move |event| {
        let stats = events.clone();
        let url = url.clone();
        async move { note_event(&stats, &url, &event) }
    });
    let client = options
        .connect(server.url.as_str())
        .await
        .map_err(|source| NatsError::Url {
            url: server.url.clone(),
            source,
        })?;
    let waited = tokio::time::timeout(server.connect_wait, async {
        while client.connection_state() != State::Connected {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    if waited.is_err() {
        tracing::warn!(
            "NATS: {} not reachable yet; starting anyway, connecting in the background",
            server.url
        );
    }
    Ok(client)
}

/// Keeps the connection state and says what changed in the log.
fn note_event(stats: &ConnectionStats, url: &str, event: &Event) {
    match event {
        Event::Connected => {
            stats.connected.store(true, Relaxed);
            let times = stats.connects.fetch_add(1, Relaxed);
            if times == 0 {
                tracing::info!("NATS: connected to {url}");
            } else {
                tracing::info!("NATS: reconnected to {url}");
            }
        }
        // Said for every failed try too: only losing a connection counts.
        Event::Disconnected => {
            if stats.connected.swap(false, Relaxed) {
                stats.disconnects.fetch_add(1, Relaxed);
                tracing::warn!("NATS: lost {url}; reconnecting");
            }
        }
        Event::SlowConsumer(_) => tracing::debug!("NATS: {url}: messages dropped (slow consumer)"),
        other => tracing::info!("NATS: {url}: {other}"),
    }
}

/// The performers received from one server: an output to the same server does
/// not publish them back. Written once per new performer by the input, read once
/// per new performer by the output.
#[derive(Debug, Default)]
pub struct Received(Mutex<foldhash::HashSet<PerformerName>>);

impl Received {
    pub fn insert(&self, performer: PerformerName) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(performer);
    }

    #[must_use]
    pub fn contains(&self, performer: &PerformerName) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(performer)
    }
}
