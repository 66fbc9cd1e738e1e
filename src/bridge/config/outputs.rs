//! The outputs' entries: the WebSocket server, VMC receivers and the recorder.

use std::net::SocketAddr;
use std::path::PathBuf;

use serde::Deserialize;

use crate::protocol::vmc::ExpressionNames;

/// The WebSocket server.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct WebSocketConfig {
    pub listen: SocketAddr,
    /// Required (as `?token=...` in the URL) from every client; must be set when
    /// `listen` is not a loopback address.
    pub token: Option<String>,
    /// Larger messages are counted and dropped without being parsed.
    pub max_message_bytes: usize,
    /// Poses a slow client may have waiting before it loses the oldest.
    pub client_queue: usize,
    /// `Host` names (or `name:port`) answered besides IP addresses and `localhost`.
    pub allowed_hosts: Vec<String>,
    /// Web page origins (`https://show.example`) that may use the bridge besides
    /// its own pages and pages on this machine.
    pub allowed_origins: Vec<String>,
}

impl Default for WebSocketConfig {
    fn default() -> Self {
        Self {
            listen: ([127, 0, 0, 1], 8787).into(),
            token: None,
            max_message_bytes: 64 * 1024,
            client_queue: 64,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
        }
    }
}

/// Expression names a VMC receiver expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NamesConfig {
    Vrm0,
    Vrm1,
}

impl From<NamesConfig> for ExpressionNames {
    fn from(n: NamesConfig) -> Self {
        match n {
            NamesConfig::Vrm0 => ExpressionNames::Vrm0,
            NamesConfig::Vrm1 => ExpressionNames::Vrm1,
        }
    }
}

/// One VMC receiver.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct VmcOutputConfig {
    pub to: SocketAddr,
    /// VRM 0 (`Joy`, `A`...) or VRM 1 (`happy`, `aa`...) expression names.
    pub names: NamesConfig,
    /// At most this many frames per second to this receiver (per performer);
    /// 0: every frame.
    pub rate_hz: f32,
    /// Which performer this receiver shows; `null`: the first to appear;
    /// `"*"`: every performer (a receiver that tells them apart by `/VMC/Ext/T`).
    pub performer: Option<String>,
    /// The avatar the receiver shows (a .vrm, glTF, BVH or skeleton JSON): the
    /// performer it names is solved for it unless its own entry names one; with
    /// `performer` `null` or `"*"`, it is every performer's without its own, as
    /// `avatar` (see `BridgeConfig::avatar_for`). Its bone offsets are the ones
    /// sent. `null`: the avatar of the performer it names, else the default.
    pub avatar: Option<PathBuf>,
}

impl Default for VmcOutputConfig {
    fn default() -> Self {
        Self {
            to: ([127, 0, 0, 1], 39539).into(),
            names: NamesConfig::Vrm1,
            rate_hz: 0.0,
            performer: None,
            avatar: None,
        }
    }
}

impl VmcOutputConfig {
    /// The performer this receiver shows by name; `None` for the first to appear
    /// or every performer.
    #[must_use]
    pub fn named_performer(&self) -> Option<&str> {
        self.performer.as_deref().filter(|name| *name != "*")
    }
}

/// The recorder.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct RecorderConfig {
    /// Where takes go; recording names cannot leave it.
    pub dir: PathBuf,
    /// The journal is flushed to disk at least this often, milliseconds (≤ 100).
    pub flush_ms: u64,
    /// Also `fsync` the journal at each flush (survives power loss, costs I/O).
    pub sync: bool,
    /// Record every performer from its first frame (as `run --record`).
    pub record_on_start: bool,
    /// A take stops (and is written) when it reaches this many minutes; 0: no limit.
    pub max_minutes: f64,
    /// A take stops when its `.vrma` would pass this many megabytes; 0: no limit.
    pub max_megabytes: u64,
    /// Takes stop when the recordings folder's disk has less than this many
    /// megabytes free (a take needs room for its journal and its `.vrma`).
    pub min_free_megabytes: u64,
}

impl Default for RecorderConfig {
    fn default() -> Self {
        Self {
            dir: "recordings".into(),
            flush_ms: 100,
            sync: false,
            record_on_start: false,
            max_minutes: 240.0,
            max_megabytes: 2048,
            min_free_megabytes: 512,
        }
    }
}
