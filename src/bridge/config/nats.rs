//! The NATS entries: servers every performer is published to, subscriptions
//! whose performers become this bridge's, and the rules they are checked by.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{BridgeConfig, ConfigError};
use crate::io::nats::NatsServer;
use crate::protocol::nats::check_tokens;

/// How to reach a NATS server: the keys `natsOutputs` and `natsInputs` entries
/// share (serde cannot flatten them and still refuse unknown keys).
macro_rules! nats_server_fields {
    ($(#[$meta:meta])* pub struct $name:ident { $($(#[$fmeta:meta])* pub $field:ident: $ty:ty = $default:expr,)* }) => {
        $(#[$meta])*
        pub struct $name {
            /// `nats://host:port` (`tls://` for TLS); several, comma-separated, for
            /// a cluster.
            pub server: String,
            /// Authentication: a token, a user and password, or a `.creds` file.
            pub token: Option<String>,
            pub user: Option<String>,
            pub password: Option<String>,
            pub credentials: Option<PathBuf>,
            /// Refuse a connection without TLS.
            pub tls: bool,
            /// PEM file of certificate authorities to trust besides the system's.
            pub root_certificates: Option<PathBuf>,
            /// Longest wait between reconnection tries, seconds.
            pub reconnect_max_s: f32,
            /// How long start-up waits for the first connection, seconds (the
            /// bridge starts anyway and connects when the server comes).
            pub connect_wait_s: f32,
            $($(#[$fmeta])* pub $field: $ty,)*
        }

        impl Default for $name {
            fn default() -> Self {
                Self {
                    server: NATS_SERVER.into(),
                    token: None,
                    user: None,
                    password: None,
                    credentials: None,
                    tls: false,
                    root_certificates: None,
                    reconnect_max_s: NATS_RECONNECT_MAX_S,
                    connect_wait_s: NATS_CONNECT_WAIT_S,
                    $($field: $default,)*
                }
            }
        }

        impl $name {
            /// The connection settings.
            #[must_use]
            pub fn server(&self) -> NatsServer {
                NatsServer {
                    url: self.server.clone(),
                    token: self.token.clone(),
                    user: self.user.clone(),
                    password: self.password.clone(),
                    credentials: self.credentials.clone(),
                    tls: self.tls,
                    root_certificates: self.root_certificates.clone(),
                    reconnect_max: std::time::Duration::from_secs_f32(
                        self.reconnect_max_s.max(0.0),
                    ),
                    connect_wait: std::time::Duration::from_secs_f32(
                        self.connect_wait_s.max(0.0),
                    ),
                }
            }
        }
    };
}

nats_server_fields! {
    /// One NATS server every performer is published to.
    #[derive(Debug, Clone, PartialEq, Deserialize)]
    #[serde(default, deny_unknown_fields, rename_all = "camelCase")]
    pub struct NatsOutputConfig {
        /// Subjects are `<prefix>.<bridgeName>.<performer>.pose|source|status`.
        pub prefix: String = "mocap".into(),
    }
}

nats_server_fields! {
    /// One NATS subscription: performers of other bridges.
    #[derive(Debug, Clone, PartialEq, Deserialize)]
    #[serde(default, deny_unknown_fields, rename_all = "camelCase")]
    pub struct NatsInputConfig {
        /// The subject pattern subscribed to (`mocap.>`: every bridge's; `mocap.stage.>`:
        /// bridge `stage`'s).
        pub subjects: String = "mocap.>".into(),
    }
}

const NATS_SERVER: &str = "nats://127.0.0.1:4222";
const NATS_RECONNECT_MAX_S: f32 = 1.0;
const NATS_CONNECT_WAIT_S: f32 = 2.0;

impl BridgeConfig {
    /// Names usable in subjects, and no server off this machine without
    /// authentication or TLS.
    pub(super) fn check_nats(&self, path: &Path) -> Result<(), ConfigError> {
        let field = |field: String, message: String| ConfigError::Field {
            path: path.to_owned(),
            field,
            message,
        };
        if !self.nats_outputs.is_empty() || !self.nats_inputs.is_empty() {
            check_tokens(&self.bridge_name, false)
                .map_err(|e| field("bridgeName".into(), e.into()))?;
        }
        let servers = self
            .nats_outputs
            .iter()
            .map(|o| ("natsOutputs", o.server()))
            .chain(self.nats_inputs.iter().map(|i| ("natsInputs", i.server())));
        let counts = [self.nats_outputs.len(), self.nats_inputs.len()];
        for (n, (list, server)) in servers.enumerate() {
            let i = if n < counts[0] { n } else { n - counts[0] };
            let open = server.url.split(',').any(|url| !is_loopback_url(url));
            let authenticated = server.token.is_some()
                || (server.user.is_some() && server.password.is_some())
                || server.credentials.is_some();
            if open && !authenticated && !server.tls {
                return Err(field(
                    format!("{list}[{i}].server"),
                    format!(
                        "{} is not on this machine: set a token, user and password, credentials or tls",
                        server.url
                    ),
                ));
            }
            if server.user.is_some() != server.password.is_some() {
                return Err(field(
                    format!("{list}[{i}]"),
                    "user and password go together".into(),
                ));
            }
        }
        for (i, out) in self.nats_outputs.iter().enumerate() {
            check_tokens(&out.prefix, true)
                .map_err(|e| field(format!("natsOutputs[{i}].prefix"), e.into()))?;
            check_seconds(
                &format!("natsOutputs[{i}]"),
                out.reconnect_max_s,
                out.connect_wait_s,
            )
            .map_err(|(f, m)| field(f, m))?;
        }
        for (i, input) in self.nats_inputs.iter().enumerate() {
            if input.subjects.is_empty() || input.subjects.contains(char::is_whitespace) {
                return Err(field(
                    format!("natsInputs[{i}].subjects"),
                    "must be a subject pattern without spaces (`mocap.>`)".into(),
                ));
            }
            check_seconds(
                &format!("natsInputs[{i}]"),
                input.reconnect_max_s,
                input.connect_wait_s,
            )
            .map_err(|(f, m)| field(f, m))?;
        }
        Ok(())
    }
}

/// `reconnectMaxS` must be positive, `connectWaitS` at least 0.
fn check_seconds(
    entry: &str,
    reconnect_max_s: f32,
    connect_wait_s: f32,
) -> Result<(), (String, String)> {
    if !(reconnect_max_s.is_finite() && reconnect_max_s > 0.0) {
        return Err((
            format!("{entry}.reconnectMaxS"),
            "must be a positive number of seconds".into(),
        ));
    }
    if !(connect_wait_s.is_finite() && connect_wait_s >= 0.0) {
        return Err((
            format!("{entry}.connectWaitS"),
            "must be a number of seconds ≥ 0".into(),
        ));
    }
    Ok(())
}

/// Whether a server address (`nats://host:port`, `host:port`, `tls://...`) names
/// this machine.
pub(super) fn is_loopback_url(url: &str) -> bool {
    let url = url.trim();
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let host_port = rest.rsplit_once('@').map_or(rest, |(_, h)| h);
    let host = match host_port.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host_port.split(':').next().unwrap_or(""),
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}
