//! The bridge's configuration: every number a user may tune, with the defaults
//! `run` uses when no file is given. `config/bridge.json` spells out the same
//! defaults with a `"//"` note beside each setting; keys starting with `//` are
//! notes and ignored, any other unknown key is an error naming it.
//!
//! Paths in the file (skeletons, avatars, the recordings folder) are relative to
//! the directory `run` is started in.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Component, Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::filter::{DeviceFilterConfig, OneEuroConfig};
use crate::ik::calibration::Calibration;
use crate::ik::mocap::MocapIkConfig;
use crate::ik::vr::VrIkConfig;
use crate::io::nats::NatsServer;
use crate::pipeline::performer::PerformerSettings;
use crate::protocol::frame::TrackedPoint;
use crate::protocol::nats::check_tokens;
use crate::protocol::record_control::RecordCommandsFrom;
use crate::protocol::vmc::ExpressionNames;
use crate::protocol::vrchat::{TRACKER_COUNT, TrackerAssignment};

/// Why a configuration cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}:{column}: {message}")]
    Syntax {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{path}: {field}: {message}")]
    Field {
        path: PathBuf,
        field: String,
        message: String,
    },
}

/// The whole configuration.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct BridgeConfig {
    /// The avatar of every performer without its own (see `avatar_for`): a .vrm,
    /// glTF, BVH or skeleton JSON whose body the IK solves for; `null`: a VMC
    /// output's for every performer (`default_avatar`), else the built-in VRM 1.0
    /// humanoid.
    pub avatar: Option<PathBuf>,
    /// VMC senders (VSeeFace, VMC, Warudo...), one performer per sender.
    pub vmc_inputs: Vec<VmcInputConfig>,
    /// Lab systems streaming custom skeletons over OSC.
    pub lab_inputs: Vec<LabInputConfig>,
    /// VRChat-style OSC trackers.
    pub vrchat_inputs: Vec<VrchatInputConfig>,
    /// The WebSocket server: skeleton and tracker input, control, pose stream.
    pub websocket: Option<WebSocketConfig>,
    /// Skeletons senders may stream, by name: skeleton JSON files. `lab19` and
    /// `humanoid` are built in.
    pub skeletons: BTreeMap<String, PathBuf>,
    /// VMC receivers to send the solved poses to.
    pub vmc_outputs: Vec<VmcOutputConfig>,
    pub recorder: RecorderConfig,
    pub pipeline: PipelineConfig,
    /// Solver settings per kind of source, for performers without their own.
    pub performer_defaults: PerformerDefaults,
    /// Solver settings of named performers: what each changes from its kind's
    /// defaults.
    pub performers: BTreeMap<String, PerformerOverrides>,
    pub status: StatusConfig,
    /// How recordings given to `run --replay` are streamed.
    pub replay: ReplayConfig,
    /// This bridge's name in the NATS subjects it publishes on.
    pub bridge_name: String,
    /// NATS servers every performer is published to.
    pub nats_outputs: Vec<NatsOutputConfig>,
    /// NATS subscriptions whose performers become this bridge's.
    pub nats_inputs: Vec<NatsInputConfig>,
}

impl Default for BridgeConfig {
    fn default() -> Self {
        Self {
            avatar: None,
            vmc_inputs: vec![VmcInputConfig::default()],
            lab_inputs: vec![LabInputConfig::default()],
            vrchat_inputs: Vec::new(),
            websocket: Some(WebSocketConfig::default()),
            skeletons: BTreeMap::new(),
            vmc_outputs: vec![VmcOutputConfig::default()],
            recorder: RecorderConfig::default(),
            pipeline: PipelineConfig::default(),
            performer_defaults: PerformerDefaults::default(),
            performers: BTreeMap::new(),
            status: StatusConfig::default(),
            replay: ReplayConfig::default(),
            bridge_name: "bridge".into(),
            nats_outputs: Vec::new(),
            nats_inputs: Vec::new(),
        }
    }
}

/// One VMC input port.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct VmcInputConfig {
    pub listen: SocketAddr,
    /// The first sender's performer name; further senders on the port get `-2`,
    /// `-3`, ... appended. A sender's devices make the performer `<name>-vr`.
    pub performer: String,
    /// Device serial → tracked point (`head`, `leftHand`, `hips`, `leftFoot`, ...),
    /// for devices whose part should not be guessed.
    pub devices: BTreeMap<String, String>,
    /// The senders' avatar (a .vrm, glTF, BVH or skeleton JSON) when their bone
    /// rotations are local to its rest pose; `null`: VRM 0 style identity rest.
    pub rest: Option<PathBuf>,
    /// Whose `/bridge/record/start|stop` the port obeys.
    pub record_commands: RecordCommandsFrom,
}

impl Default for VmcInputConfig {
    fn default() -> Self {
        Self {
            listen: ([127, 0, 0, 1], 39540).into(),
            performer: "vmc".into(),
            devices: BTreeMap::new(),
            rest: None,
            record_commands: RecordCommandsFrom::Loopback,
        }
    }
}

impl VmcInputConfig {
    /// The configured device assignments (checked when the file is loaded).
    #[must_use]
    pub fn device_points(&self) -> std::collections::HashMap<String, TrackedPoint> {
        self.devices
            .iter()
            .filter_map(|(serial, point)| Some((serial.clone(), TrackedPoint::from_name(point)?)))
            .collect()
    }
}

/// One lab OSC input port.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct LabInputConfig {
    pub listen: SocketAddr,
    /// The skeleton every subject on this port streams (a name from `skeletons`).
    pub skeleton: String,
    /// Subjects streaming another skeleton: subject name → skeleton name.
    pub subjects: BTreeMap<String, String>,
    /// Whose `/bridge/record/start|stop` the port obeys.
    pub record_commands: RecordCommandsFrom,
}

impl Default for LabInputConfig {
    fn default() -> Self {
        Self {
            listen: ([127, 0, 0, 1], 39541).into(),
            skeleton: "lab19".into(),
            subjects: BTreeMap::new(),
            record_commands: RecordCommandsFrom::Loopback,
        }
    }
}

/// One VRChat-style OSC tracker input port.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct VrchatInputConfig {
    pub listen: SocketAddr,
    pub performer: String,
    /// Tracker number ("1" to "8") → tracked point; empty: 1 hips, 2 left foot,
    /// 3 right foot, 4 chest, 5 left knee, 6 right knee, 7 left elbow, 8 right
    /// elbow. VR IK needs both hands: assign two trackers to them.
    pub trackers: BTreeMap<String, String>,
}

impl Default for VrchatInputConfig {
    fn default() -> Self {
        Self {
            listen: ([127, 0, 0, 1], 9000).into(),
            performer: "vrchat".into(),
            trackers: BTreeMap::new(),
        }
    }
}

impl VrchatInputConfig {
    /// The tracker assignment (checked when the file is loaded).
    #[must_use]
    pub fn assignment(&self) -> TrackerAssignment {
        if self.trackers.is_empty() {
            return TrackerAssignment::default();
        }
        let mut points = [None; TRACKER_COUNT];
        for (number, point) in &self.trackers {
            if let (Ok(n @ 1..=TRACKER_COUNT), Some(p)) =
                (number.parse::<usize>(), TrackedPoint::from_name(point))
            {
                points[n - 1] = Some(p);
            }
        }
        TrackerAssignment::new(points)
    }
}

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

/// Ring sizes and performer limits.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct PipelineConfig {
    /// Frames an input may have waiting for the solver before it drops.
    pub input_ring: usize,
    /// Frames a live output may have waiting before it drops.
    pub output_ring: usize,
    /// Frames the recorder's ring holds (more wait on the solver side: never lost).
    pub recorder_ring: usize,
    /// A performer silent this long is gone, seconds.
    pub performer_timeout_s: f32,
    pub max_performers: usize,
    /// Receive buffer of each UDP input socket, bytes (the OS may cap it: on Linux
    /// at `net.core.rmem_max`).
    pub udp_receive_buffer: usize,
}

impl Default for PipelineConfig {
    fn default() -> Self {
        Self {
            input_ring: 4096,
            output_ring: 4096,
            recorder_ring: 8192,
            performer_timeout_s: 2.0,
            max_performers: 4096,
            udp_receive_buffer: 4 << 20,
        }
    }
}

/// Solver settings of one performer (or of a kind of source).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, serde::Serialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct PerformerConfig {
    /// One Euro smoothing of the solved pose; `null`: none.
    pub filter: Option<OneEuroConfig>,
    /// Smoothing of tracked device positions and rotations before VR-mode IK
    /// (tracker sources); `null`: none.
    pub device_filter: Option<DeviceFilterConfig>,
    /// Mocap-mode IK (skeleton sources).
    pub mocap_ik: MocapIkSetting,
    /// VR-mode IK (tracker sources).
    pub vr_ik: VrIkConfig,
    /// A stored T-pose calibration (tracker sources); `null`: the avatar's body
    /// until the performer calibrates.
    pub calibration: Option<Calibration>,
}

impl PerformerConfig {
    /// The solver's settings for a performer with an avatar of its own choosing
    /// (`has_avatar`) or on the built-in humanoid (see `MocapIkSetting`).
    #[must_use]
    pub fn settings(&self, has_avatar: bool) -> PerformerSettings {
        PerformerSettings {
            filter: self.filter,
            device_filter: self.device_filter,
            mocap_ik: self.mocap_ik.resolve(has_avatar),
            vr_ik: self.vr_ik,
            calibration: self.calibration,
        }
    }
}

/// Defaults per kind of source. In the file each kind's entry says only what it
/// changes from the built-in defaults of that kind (see `PerformerOverrides`).
#[derive(Debug, Clone, PartialEq)]
pub struct PerformerDefaults {
    pub humanoid: PerformerConfig,
    pub skeleton: PerformerConfig,
    pub trackers: PerformerConfig,
}

impl<'de> Deserialize<'de> for PerformerDefaults {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(default, deny_unknown_fields, rename_all = "camelCase")]
        #[derive(Default)]
        struct Entries {
            #[serde(deserialize_with = "kind_entry")]
            humanoid: PerformerOverrides,
            #[serde(deserialize_with = "kind_entry")]
            skeleton: PerformerOverrides,
            #[serde(deserialize_with = "kind_entry")]
            trackers: PerformerOverrides,
        }
        /// A kind's entry: a performer's fields but the avatar (avatars belong to
        /// performers, not to kinds of source).
        fn kind_entry<'de, D: serde::Deserializer<'de>>(
            deserializer: D,
        ) -> Result<PerformerOverrides, D::Error> {
            let entry = PerformerOverrides::deserialize(deserializer)?;
            match entry.avatar {
                Some(_) => Err(serde::de::Error::custom(
                    "avatar: set the avatar at the top level or in a performer's entry",
                )),
                None => Ok(entry),
            }
        }
        let entries = Entries::deserialize(deserializer)?;
        let built_in = Self::default();
        Ok(Self {
            humanoid: entries.humanoid.apply(&built_in.humanoid),
            skeleton: entries.skeleton.apply(&built_in.skeleton),
            trackers: entries.trackers.apply(&built_in.trackers),
        })
    }
}

/// What one performer's entry (or a kind's defaults) changes, field by field: a
/// field it leaves out keeps the value it overrides, and `mocapIk`, `vrIk`,
/// `filter`, `deviceFilter` and `calibration` merge key by key, so a saved
/// calibration leaves the device filter on and one `mocapIk` key changes only
/// that key. `null` turns a filter off. A performer's entry may also name its
/// avatar.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PerformerOverrides {
    fields: serde_json::Map<String, Value>,
    /// This performer's avatar (see `BridgeConfig::avatar`); `None`: the default.
    pub avatar: Option<PathBuf>,
}

impl<'de> Deserialize<'de> for PerformerOverrides {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut fields = serde_json::Map::deserialize(deserializer)?;
        let avatar = match fields.remove("avatar") {
            None => None,
            Some(value) => Option::<PathBuf>::deserialize(value)
                .map_err(|e| serde::de::Error::custom(format!("avatar: {e}")))?,
        };
        // Checked now against the built-in defaults, so `apply` cannot fail later:
        // every field's type is the same whatever it overrides.
        merged(&PerformerConfig::default(), &fields).map_err(serde::de::Error::custom)?;
        Ok(Self { fields, avatar })
    }
}

impl PerformerOverrides {
    /// `defaults` with these fields changed.
    #[must_use]
    pub fn apply(&self, defaults: &PerformerConfig) -> PerformerConfig {
        merged(defaults, &self.fields).unwrap_or_else(|e| {
            tracing::error!("performer settings not applied: {e}");
            defaults.clone()
        })
    }
}

/// `base` with `fields` merged in key by key (objects into objects, anything else
/// replaced), read back as settings; the error names the field.
fn merged(
    base: &PerformerConfig,
    fields: &serde_json::Map<String, Value>,
) -> Result<PerformerConfig, String> {
    fn merge(base: &mut Value, patch: &Value) {
        match (base, patch) {
            (Value::Object(base), Value::Object(patch)) => {
                for (key, value) in patch {
                    merge(base.entry(key.clone()).or_insert(Value::Null), value);
                }
            }
            (base, patch) => *base = patch.clone(),
        }
    }
    let mut value = serde_json::to_value(base).map_err(|e| e.to_string())?;
    merge(&mut value, &Value::Object(fields.clone()));
    serde_path_to_error::deserialize(value).map_err(|e| format!("{}: {}", e.path(), e.inner()))
}

impl Default for PerformerDefaults {
    fn default() -> Self {
        Self {
            humanoid: PerformerConfig::default(),
            skeleton: PerformerConfig::default(),
            // Consumer trackers jitter by millimetres: smooth their poses by
            // default, before the IK (no lag on steady motion, unlike a low-pass
            // on the pose).
            trackers: PerformerConfig {
                device_filter: Some(DeviceFilterConfig::default()),
                ..PerformerConfig::default()
            },
        }
    }
}

/// Mocap-mode IK settings as the file spells them. `enabled` may be `null` (the
/// default): the IK is then on for a performer with an avatar (`avatar`, a
/// performer's own, `run --avatar`) and off on the built-in humanoid; `true` or
/// `false` says so for every performer.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MocapIkSetting {
    /// `Some(on)`: as said; `None`: on exactly when the performer has an avatar.
    pub enabled: Option<bool>,
    /// The solver's other settings (its own `enabled` is what `resolve` gives).
    pub ik: MocapIkConfig,
}

impl MocapIkSetting {
    /// The solver's settings for a performer with (`has_avatar`) or without an
    /// avatar.
    #[must_use]
    pub fn resolve(&self, has_avatar: bool) -> MocapIkConfig {
        MocapIkConfig {
            enabled: self.enabled.unwrap_or(has_avatar),
            ..self.ik
        }
    }
}

impl serde::Serialize for MocapIkSetting {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut value = serde_json::to_value(self.ik).map_err(serde::ser::Error::custom)?;
        if let Value::Object(fields) = &mut value {
            fields.insert("enabled".into(), self.enabled.into());
        }
        value.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for MocapIkSetting {
    /// Key by key, so an error names its key (`mocapIk.hands`): `enabled` as
    /// `null` or a boolean, every other key as `MocapIkConfig` reads it.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Key(String);
        impl<'de> serde::de::DeserializeSeed<'de> for Key {
            type Value = Value;
            fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
                let value = Value::deserialize(d)?;
                let alone = Value::Object([(self.0, value.clone())].into_iter().collect());
                MocapIkConfig::deserialize(alone).map_err(serde::de::Error::custom)?;
                Ok(value)
            }
        }
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = MocapIkSetting;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("mocap IK settings")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<MocapIkSetting, A::Error> {
                let mut enabled = None;
                let mut fields = serde_json::Map::new();
                while let Some(key) = map.next_key::<String>()? {
                    if key == "enabled" {
                        enabled = map.next_value::<Option<bool>>()?;
                    } else {
                        let value = map.next_value_seed(Key(key.clone()))?;
                        fields.insert(key, value);
                    }
                }
                let ik = MocapIkConfig::deserialize(Value::Object(fields))
                    .map_err(serde::de::Error::custom)?;
                Ok(MocapIkSetting { enabled, ik })
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}

/// The periodic status line.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct StatusConfig {
    /// Seconds between status lines; 0: none.
    pub log_interval_s: f32,
    /// Seconds between `run`'s lines describing each performer's motion; 0: none.
    pub monitor_interval_s: f32,
}

impl Default for StatusConfig {
    fn default() -> Self {
        Self {
            log_interval_s: 5.0,
            monitor_interval_s: 1.0,
        }
    }
}

/// How replays are streamed.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct ReplayConfig {
    /// Frames per second a replay streams at, poses interpolated as the file
    /// says; `None`: a BVH's own frame rate, else 60 (`takes::replay::stream_fps`).
    pub fps: Option<f32>,
}

/// Removes `"//..."` note keys at every level.
fn strip_notes(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|k, _| !k.starts_with("//"));
            map.values_mut().for_each(strip_notes);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_notes),
        _ => {}
    }
}

/// Writes `calibration` as `performers.<performer>.calibration` into the
/// configuration file at `path`, keeping everything else in it (notes, order,
/// other settings) as it was. The file is replaced whole (written beside it,
/// then renamed), so a crash never leaves half a file. Returns a one-line error
/// naming the file.
pub fn save_calibration(
    path: &Path,
    performer: &str,
    calibration: &Calibration,
) -> Result<(), String> {
    let fail = |what: &str, e: &dyn std::fmt::Display| format!("{}: {what}: {e}", path.display());
    let text = std::fs::read_to_string(path).map_err(|e| fail("cannot read", &e))?;
    let mut value: Value = serde_json::from_str(&text).map_err(|e| fail("not JSON", &e))?;
    let Value::Object(root) = &mut value else {
        return Err(fail("not a JSON object", &"the configuration is an object"));
    };
    let performers = root
        .entry("performers")
        .or_insert_with(|| Value::Object(serde_json::Map::new()));
    if performers.is_null() {
        *performers = Value::Object(serde_json::Map::new());
    }
    let Value::Object(performers) = performers else {
        return Err(fail(
            "`performers` is not an object",
            &"cannot add a performer",
        ));
    };
    let entry = performers
        .entry(performer)
        .or_insert_with(|| Value::Object(serde_json::Map::new()));
    let Value::Object(entry) = entry else {
        return Err(fail(
            &format!("`performers.{performer}` is not an object"),
            &"cannot store a calibration",
        ));
    };
    let stored = serde_json::to_value(calibration).map_err(|e| fail("calibration", &e))?;
    entry.insert("calibration".into(), stored);
    let mut out = serde_json::to_string_pretty(&value).map_err(|e| fail("encoding", &e))?;
    out.push('\n');
    // The result must still be a valid configuration.
    BridgeConfig::parse(path, &out).map_err(|e| e.to_string())?;
    let file_name = path
        .file_name()
        .map_or_else(|| "config".into(), |n| n.to_string_lossy().into_owned());
    let temp = path.with_file_name(format!(".{file_name}.saving"));
    std::fs::write(&temp, out).map_err(|e| fail("cannot write", &e))?;
    std::fs::rename(&temp, path).map_err(|e| fail("cannot replace", &e))
}

impl BridgeConfig {
    /// Reads and checks a configuration file.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(path, &text)
    }

    /// Parses and checks configuration text; `path` is for messages.
    pub fn parse(path: &Path, text: &str) -> Result<Self, ConfigError> {
        let mut value: Value = serde_json::from_str(text).map_err(|e| ConfigError::Syntax {
            path: path.to_owned(),
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?;
        strip_notes(&mut value);
        let config: Self = serde_path_to_error::deserialize(value).map_err(|e| {
            let field = e.path().to_string();
            ConfigError::Field {
                path: path.to_owned(),
                field,
                message: e.into_inner().to_string(),
            }
        })?;
        config.check(path)?;
        Ok(config)
    }

    /// What serde cannot check: limits and the security rules.
    fn check(&self, path: &Path) -> Result<(), ConfigError> {
        let field = |field: &str, message: String| ConfigError::Field {
            path: path.to_owned(),
            field: field.to_owned(),
            message,
        };
        if let Some(ws) = &self.websocket {
            let open = !ws.listen.ip().is_loopback();
            if open && ws.token.as_deref().is_none_or(str::is_empty) {
                return Err(field(
                    "websocket.token",
                    format!(
                        "listening on {} (not a loopback address) needs a token: set websocket.token",
                        ws.listen
                    ),
                ));
            }
            if ws.max_message_bytes < 1024 {
                return Err(field(
                    "websocket.maxMessageBytes",
                    "must be at least 1024".into(),
                ));
            }
        }
        if !(1..=100).contains(&self.recorder.flush_ms) {
            return Err(field(
                "recorder.flushMs",
                format!("{} is not in 1..=100", self.recorder.flush_ms),
            ));
        }
        let r = &self.recorder;
        if !(r.max_minutes.is_finite() && r.max_minutes >= 0.0) {
            return Err(field(
                "recorder.maxMinutes",
                format!("{} is not a number of minutes ≥ 0", r.max_minutes),
            ));
        }
        if r.max_megabytes > crate::record::recorder::MAX_TAKE_MEGABYTES {
            return Err(field(
                "recorder.maxMegabytes",
                format!(
                    "{} is more than a .vrma can hold ({}: a GLB is at most 4 GiB)",
                    r.max_megabytes,
                    crate::record::recorder::MAX_TAKE_MEGABYTES
                ),
            ));
        }
        if let Some(fps) = self.replay.fps
            && !(fps.is_finite() && fps > 0.0)
        {
            return Err(field(
                "replay.fps",
                "must be a positive number of frames per second, or null".into(),
            ));
        }
        let p = &self.pipeline;
        if p.input_ring == 0 || p.output_ring == 0 || p.recorder_ring == 0 {
            return Err(field("pipeline", "ring sizes must be at least 1".into()));
        }
        if !(p.performer_timeout_s.is_finite() && p.performer_timeout_s > 0.0) {
            return Err(field(
                "pipeline.performerTimeoutS",
                "must be a positive number of seconds".into(),
            ));
        }
        for (i, out) in self.vmc_outputs.iter().enumerate() {
            if !(out.rate_hz.is_finite() && out.rate_hz >= 0.0) {
                return Err(field(
                    &format!("vmcOutputs[{i}].rateHz"),
                    "must be 0 (no cap) or a positive number".into(),
                ));
            }
        }
        for (i, vmc) in self.vmc_inputs.iter().enumerate() {
            for (serial, point) in &vmc.devices {
                if TrackedPoint::from_name(point).is_none() {
                    return Err(field(
                        &format!("vmcInputs[{i}].devices.{serial}"),
                        format!(
                            "`{point}` is not a tracked point (head, leftHand, rightHand, hips, chest, leftFoot, rightFoot, leftElbow, rightElbow, leftKnee, rightKnee)"
                        ),
                    ));
                }
            }
        }
        for (i, vrchat) in self.vrchat_inputs.iter().enumerate() {
            for (number, point) in &vrchat.trackers {
                let place = format!("vrchatInputs[{i}].trackers.{number}");
                if !matches!(number.parse::<usize>(), Ok(1..=TRACKER_COUNT)) {
                    return Err(field(&place, "tracker numbers are 1 to 8".into()));
                }
                if TrackedPoint::from_name(point).is_none() {
                    return Err(field(&place, format!("`{point}` is not a tracked point")));
                }
            }
        }
        for (i, lab) in self.lab_inputs.iter().enumerate() {
            for name in std::iter::once(&lab.skeleton).chain(lab.subjects.values()) {
                if !self.has_skeleton(name) {
                    return Err(field(
                        &format!("labInputs[{i}]"),
                        format!("no skeleton `{name}`: add it to `skeletons`"),
                    ));
                }
            }
        }
        self.check_avatars(path, "avatar")?;
        self.check_nats(path)
    }

    /// The avatar file of `performer`, in order: its own entry's
    /// (`performers.<name>.avatar`, `run --avatar NAME=FILE`), that of a VMC
    /// output naming it (the avatar its receiver shows), else the default
    /// (`default_avatar`); `None`: the built-in humanoid. `check_avatars` has made
    /// sure that outputs agree.
    #[must_use]
    pub fn avatar_for(&self, performer: &str) -> Option<&Path> {
        self.performers
            .get(performer)
            .and_then(|own| own.avatar.as_deref())
            .or_else(|| {
                self.vmc_outputs
                    .iter()
                    .filter(|out| out.named_performer() == Some(performer))
                    .find_map(|out| out.avatar.as_deref())
            })
            .or_else(|| self.default_avatar())
    }

    /// The avatar file of every performer without one of its own: `avatar` (or
    /// `run --avatar FILE`), else that of a VMC output showing the first
    /// performer or every performer; `None`: the built-in humanoid.
    #[must_use]
    pub fn default_avatar(&self) -> Option<&Path> {
        self.avatar.as_deref().or_else(|| {
            self.vmc_outputs
                .iter()
                .filter(|out| out.named_performer().is_none())
                .find_map(|out| out.avatar.as_deref())
        })
    }

    /// Every performer with settings or an avatar of its own: the `performers`
    /// entries, then those VMC outputs with an avatar name, each once.
    #[must_use]
    pub fn named_performers(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.performers.keys().map(String::as_str).collect();
        for out in &self.vmc_outputs {
            if let (Some(name), Some(_)) = (out.named_performer(), &out.avatar)
                && !names.contains(&name)
            {
                names.push(name);
            }
        }
        names
    }

    /// The VMC outputs' avatars against each other and the default: two outputs
    /// naming the same performer, or two showing the first or every performer,
    /// must name the same file, and the latter the same as `avatar` when it is
    /// set (`default_from` says where it came from: `avatar`, `run --avatar`).
    /// A performer's own entry is no conflict: it wins (see `avatar_for`). Files
    /// are the same when their paths are, as written, a `./` aside
    /// (`same_avatar_file`).
    pub fn check_avatars(&self, path: &Path, default_from: &str) -> Result<(), ConfigError> {
        let mut every: Option<(&Path, String)> = self
            .avatar
            .as_deref()
            .map(|avatar| (avatar, default_from.to_owned()));
        let mut named: BTreeMap<&str, (&Path, String)> = BTreeMap::new();
        for (i, out) in self.vmc_outputs.iter().enumerate() {
            let Some(avatar) = out.avatar.as_deref() else {
                continue;
            };
            let place = format!("vmcOutputs[{i}]");
            let (who, first) = match out.named_performer() {
                Some(name) => (name, named.entry(name).or_insert((avatar, place.clone()))),
                None => (
                    "every performer",
                    every.get_or_insert((avatar, place.clone())),
                ),
            };
            if !same_avatar_file(first.0, avatar) {
                return Err(ConfigError::Field {
                    path: path.to_owned(),
                    field: format!("{place}.avatar"),
                    message: format!(
                        "{who} already has avatar {} from {}",
                        first.0.display(),
                        first.1
                    ),
                });
            }
        }
        Ok(())
    }

    /// Whether `name` is a built-in skeleton or one the file lists.
    #[must_use]
    pub fn has_skeleton(&self, name: &str) -> bool {
        BUILT_IN_SKELETONS.contains(&name) || self.skeletons.contains_key(name)
    }
}

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
    fn check_nats(&self, path: &Path) -> Result<(), ConfigError> {
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
fn is_loopback_url(url: &str) -> bool {
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

/// Whether two avatar paths name the same file: the same as written, `.`
/// components aside (`a.vrm` and `./a.vrm` are one file; `m/../a.vrm` and an
/// absolute path to it are others). The configuration is read without the disk.
#[must_use]
pub fn same_avatar_file(a: &Path, b: &Path) -> bool {
    fn parts(p: &Path) -> impl Iterator<Item = Component<'_>> {
        p.components().filter(|c| *c != Component::CurDir)
    }
    parts(a).eq(parts(b))
}

/// Skeletons embedded in the binary.
pub const BUILT_IN_SKELETONS: [&str; 2] = ["lab19", "humanoid"];

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<BridgeConfig, String> {
        BridgeConfig::parse(Path::new("bridge.json"), text).map_err(|e| e.to_string())
    }

    #[test]
    fn a_saved_calibration_lands_in_the_file_and_keeps_the_rest() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("bridge.json");
        let shipped = include_str!("../../config/bridge.json");
        std::fs::write(&path, shipped).expect("write");
        let calibration = Calibration {
            height: 1.61,
            arm_span: 1.58,
            ..Calibration::default()
        };
        save_calibration(&path, "vr", &calibration).expect("saved");
        // Saving again replaces it; another performer is added beside it.
        save_calibration(&path, "vr", &calibration).expect("saved again");
        save_calibration(&path, "quest", &Calibration::default()).expect("saved");
        let text = std::fs::read_to_string(&path).expect("read");
        let config = BridgeConfig::load(&path).expect("still a valid configuration");
        let trackers = &config.performer_defaults.trackers;
        let vr = config.performers["vr"].apply(trackers);
        assert_eq!(vr.calibration, Some(calibration));
        // The calibration is all the entry changes: the trackers' device filter stays.
        assert_eq!(vr.device_filter, trackers.device_filter);
        assert!(vr.device_filter.is_some());
        assert_eq!(
            config.performers["quest"].apply(trackers).calibration,
            Some(Calibration::default())
        );
        // Everything else as it was: the notes and the order of the settings.
        let before: Value = serde_json::from_str(shipped).expect("json");
        let after: Value = serde_json::from_str(&text).expect("json");
        let keys = |v: &Value| v.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>());
        assert_eq!(keys(&before), keys(&after));
        for (key, value) in before.as_object().expect("object") {
            if key != "performers" {
                assert_eq!(&after[key], value, "{key}");
            }
        }
        // A file that is not a configuration is left alone, with a clear error.
        std::fs::write(&path, "[1, 2]").expect("write");
        let error = save_calibration(&path, "vr", &calibration).expect_err("refused");
        assert!(
            error.contains("bridge.json") && error.contains("not a JSON object"),
            "{error}"
        );
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "[1, 2]");
    }

    #[test]
    fn the_shipped_file_spells_out_the_defaults() {
        let text = include_str!("../../config/bridge.json");
        assert_eq!(parse(text), Ok(BridgeConfig::default()));
    }

    #[test]
    fn a_file_that_spells_out_every_key_of_every_kind_still_loads() {
        // Every setting for every kind of source, as older configuration files
        // have them, including those a kind does not use.
        let text = include_str!("../../tests/data/bridge-every-key.json");
        assert_eq!(parse(text), Ok(BridgeConfig::default()));
    }

    #[test]
    fn one_setting_changes_only_that_setting() {
        let config = parse(
            r#"{"performerDefaults": {"skeleton": {"mocapIk": {"hands": false}}},
                "performers": {"alice": {"mocapIk": {"footWeight": 0.5}},
                               "bob": {"deviceFilter": null}}}"#,
        )
        .unwrap();
        let built_in = PerformerDefaults::default();
        let skeleton = &config.performer_defaults.skeleton;
        let want = MocapIkSetting {
            enabled: None,
            ik: MocapIkConfig {
                hands: false,
                ..built_in.skeleton.mocap_ik.ik
            },
        };
        assert_eq!(skeleton.mocap_ik, want);
        assert_eq!(
            skeleton.mocap_ik.enabled, None,
            "one key does not decide whether mocap IK runs"
        );
        assert_eq!(
            PerformerConfig {
                mocap_ik: built_in.skeleton.mocap_ik,
                ..skeleton.clone()
            },
            built_in.skeleton
        );
        let alice = config.performers["alice"].apply(skeleton);
        assert_eq!(
            alice.mocap_ik.ik,
            MocapIkConfig {
                foot_weight: 0.5,
                ..want.ik
            }
        );
        // `null` turns a filter off; what the entry leaves out stays.
        let bob = config.performers["bob"].apply(&config.performer_defaults.trackers);
        assert_eq!(bob.device_filter, None);
        assert_eq!(bob.vr_ik, built_in.trackers.vr_ik);
    }

    #[test]
    fn avatars_come_from_the_performer_entry_else_the_default() {
        let config = parse(
            r#"{"avatar": "models/everyone.vrm",
                "performers": {"alice": {"avatar": "models/alice.vrm"},
                               "bob": {"filter": null}}}"#,
        )
        .unwrap();
        assert_eq!(
            config.avatar_for("alice"),
            Some(Path::new("models/alice.vrm"))
        );
        for other in ["bob", "carol"] {
            assert_eq!(
                config.avatar_for(other),
                Some(Path::new("models/everyone.vrm"))
            );
        }
        let none = parse(r#"{"performers": {"alice": {"avatar": "a.vrm"}}}"#).unwrap();
        assert_eq!(none.avatar_for("alice"), Some(Path::new("a.vrm")));
        assert_eq!(none.avatar_for("bob"), None);
        assert_eq!(BridgeConfig::default().avatar_for("alice"), None);
        // An avatar does not change the performer's other settings.
        let skeleton = &config.performer_defaults.skeleton;
        assert_eq!(config.performers["alice"].apply(skeleton), *skeleton);
    }

    #[test]
    fn a_performers_own_avatar_comes_first_then_its_receivers_then_the_default() {
        let config = parse(
            r#"{"avatar": "everyone.vrm",
                "vmcOutputs": [{"performer": "alice", "avatar": "alice-receiver.vrm"},
                               {"performer": "bob", "avatar": "bob-receiver.vrm"},
                               {"performer": "carol"}],
                "performers": {"alice": {"avatar": "alice.vrm"}}}"#,
        )
        .unwrap();
        for (performer, want) in [
            ("alice", "alice.vrm"),
            ("bob", "bob-receiver.vrm"),
            ("carol", "everyone.vrm"),
            ("dave", "everyone.vrm"),
        ] {
            assert_eq!(
                config.avatar_for(performer),
                Some(Path::new(want)),
                "{performer}"
            );
        }
        assert_eq!(config.named_performers(), ["alice", "bob"]);
        // An output showing the first performer or all: every performer's without
        // its own, as `avatar` is; one naming a performer stays that performer's.
        for shows in ["null", r#""*""#] {
            let config = parse(&format!(
                r#"{{"vmcOutputs": [{{"performer": "bob", "avatar": "bob.vrm"}},
                                   {{"performer": {shows}, "avatar": "all.vrm"}}],
                    "performers": {{"alice": {{"avatar": "alice.vrm"}}}}}}"#
            ))
            .unwrap();
            assert_eq!(config.default_avatar(), Some(Path::new("all.vrm")));
            for (performer, want) in [
                ("alice", "alice.vrm"),
                ("bob", "bob.vrm"),
                ("carol", "all.vrm"),
            ] {
                assert_eq!(
                    config.avatar_for(performer),
                    Some(Path::new(want)),
                    "{shows}"
                );
            }
        }
        // No avatar anywhere: the built-in humanoid; an output without one adds no
        // performer.
        let none = parse(r#"{"vmcOutputs": [{"performer": "alice"}]}"#).unwrap();
        assert_eq!(none.avatar_for("alice"), None);
        assert_eq!(none.default_avatar(), None);
        assert!(none.named_performers().is_empty());
    }

    #[test]
    fn receivers_that_disagree_about_an_avatar_name_the_key() {
        for (text, expected) in [
            (
                r#"{"vmcOutputs": [{"performer": "alice", "avatar": "a.vrm"},
                                   {"performer": "alice", "avatar": "b.vrm"}]}"#,
                "bridge.json: vmcOutputs[1].avatar: alice already has avatar a.vrm from vmcOutputs[0]",
            ),
            (
                r#"{"vmcOutputs": [{"avatar": "a.vrm"}, {"performer": "bob"},
                                   {"performer": "*", "avatar": "b.vrm"}]}"#,
                "bridge.json: vmcOutputs[2].avatar: every performer already has avatar a.vrm from vmcOutputs[0]",
            ),
            (
                r#"{"avatar": "a.vrm", "vmcOutputs": [{"avatar": "b.vrm"}]}"#,
                "bridge.json: vmcOutputs[0].avatar: every performer already has avatar a.vrm from avatar",
            ),
        ] {
            assert_eq!(parse(text).unwrap_err(), expected, "{text}");
        }
        // The same file twice, a `./` aside, is no conflict; nor is a performer's
        // own entry, or the default, against an output naming the performer.
        for text in [
            r#"{"avatar": "m/a.vrm", "vmcOutputs": [{"avatar": "./m/a.vrm"}, {"performer": "*", "avatar": "m/./a.vrm"}]}"#,
            r#"{"vmcOutputs": [{"performer": "alice", "avatar": "a.vrm"}, {"performer": "alice", "avatar": "./a.vrm"}]}"#,
            r#"{"avatar": "all.vrm", "vmcOutputs": [{"performer": "alice", "avatar": "a.vrm"}],
                "performers": {"alice": {"avatar": "own.vrm"}}}"#,
        ] {
            assert!(parse(text).is_ok(), "{text}");
        }
        assert!(!same_avatar_file(
            Path::new("m/../a.vrm"),
            Path::new("a.vrm")
        ));
        // `run --avatar FILE` in place of `avatar`: checked again, named as such.
        let mut config = parse(r#"{"vmcOutputs": [{"avatar": "b.vrm"}]}"#).unwrap();
        config.avatar = Some("a.vrm".into());
        assert_eq!(
            config
                .check_avatars(Path::new("bridge.json"), "run --avatar")
                .unwrap_err()
                .to_string(),
            "bridge.json: vmcOutputs[0].avatar: every performer already has avatar a.vrm from run --avatar"
        );
        config.avatar = Some("./b.vrm".into());
        assert!(
            config
                .check_avatars(Path::new("bridge.json"), "run --avatar")
                .is_ok()
        );
    }

    #[test]
    fn mocap_ik_is_on_with_an_avatar_unless_the_file_says_false() {
        let skeleton = |text: &str, performer: &str| {
            let config = parse(text).unwrap();
            let defaults = &config.performer_defaults.skeleton;
            let own = config
                .performers
                .get(performer)
                .map_or_else(|| defaults.clone(), |own| own.apply(defaults));
            let has_avatar = config.avatar_for(performer).is_some();
            own.settings(has_avatar).mocap_ik.enabled
        };
        // Built-in defaults: off on the built-in humanoid, on with an avatar.
        assert!(!skeleton("{}", "lab"));
        assert!(skeleton(r#"{"avatar": "a.vrm"}"#, "lab"));
        assert!(skeleton(
            r#"{"performers": {"lab": {"avatar": "a.vrm"}}}"#,
            "lab"
        ));
        // An avatar from a receiver counts as one, for the performer it names or
        // for every performer.
        let receiver = r#"{"vmcOutputs": [{"performer": "lab", "avatar": "a.vrm"}]}"#;
        assert!(skeleton(receiver, "lab"));
        assert!(!skeleton(receiver, "other"));
        assert!(skeleton(
            r#"{"vmcOutputs": [{"avatar": "a.vrm"}]}"#,
            "other"
        ));
        // An explicit false turns it off, for the kind or for one performer.
        let off = r#"{"avatar": "a.vrm",
            "performerDefaults": {"skeleton": {"mocapIk": {"enabled": false}}},
            "performers": {"bob": {"mocapIk": {"enabled": true}},
                           "carol": {"mocapIk": {"enabled": null}}}}"#;
        assert!(!skeleton(off, "lab"));
        assert!(skeleton(off, "bob"));
        // `null` in an entry puts the rule back.
        assert!(skeleton(off, "carol"));
        let own_off =
            r#"{"avatar": "a.vrm", "performers": {"lab": {"mocapIk": {"enabled": false}}}}"#;
        assert!(!skeleton(own_off, "lab"));
        assert!(skeleton(own_off, "other"));
        // An explicit true runs it on the built-in humanoid too.
        let on = r#"{"performerDefaults": {"skeleton": {"mocapIk": {"enabled": true}}}}"#;
        assert!(skeleton(on, "lab"));
    }

    #[test]
    fn nats_entries_load_and_bad_ones_name_the_place() {
        let config = parse(
            r#"{"bridgeName": "stage", "natsOutputs": [{"prefix": "studio.mocap"}],
                "natsInputs": [{"server": "tls://hub.example:4222", "token": "t", "subjects": "mocap.room2.>"}]}"#,
        )
        .expect("valid");
        assert_eq!(config.nats_outputs[0].server().url, "nats://127.0.0.1:4222");
        assert_eq!(config.nats_inputs[0].server().token.as_deref(), Some("t"));
        for (text, expected) in [
            (
                r#"{"natsOutputs": [{"server": "nats://10.0.0.5:4222"}]}"#,
                "bridge.json: natsOutputs[0].server: nats://10.0.0.5:4222 is not on this machine: set a token, user and password, credentials or tls",
            ),
            (
                r#"{"natsInputs": [{}, {"server": "hub:4222"}]}"#,
                "bridge.json: natsInputs[1].server: hub:4222 is not on this machine: set a token, user and password, credentials or tls",
            ),
            (
                r#"{"bridgeName": "a.b", "natsOutputs": [{}]}"#,
                "bridge.json: bridgeName: may not hold spaces, dots, `*` or `>`",
            ),
            (
                r#"{"natsOutputs": [{"prefix": "mocap.*"}]}"#,
                "bridge.json: natsOutputs[0].prefix: may not hold spaces, `*` or `>`",
            ),
            (
                r#"{"natsOutputs": [{"user": "u"}]}"#,
                "bridge.json: natsOutputs[0]: user and password go together",
            ),
            (
                r#"{"natsInputs": [{"reconnectMaxS": 0}]}"#,
                "bridge.json: natsInputs[0].reconnectMaxS: must be a positive number of seconds",
            ),
        ] {
            assert_eq!(parse(text).unwrap_err(), expected, "{text}");
        }
        for url in [
            "nats://localhost:4222",
            "127.0.0.2:1",
            "nats://u:p@[::1]:4222",
            "::1",
        ] {
            assert!(is_loopback_url(url) || url == "::1", "{url}");
        }
        assert!(!is_loopback_url("nats://127.0.0.1.example:4222"));
    }

    #[test]
    fn bad_files_name_the_place() {
        for (text, expected) in [
            (
                "{",
                "bridge.json:1:1: EOF while parsing an object at line 1 column 1",
            ),
            (
                r#"{"vmcInputs": [{"lisen": "127.0.0.1:1"}]}"#,
                "bridge.json: vmcInputs[0].lisen: unknown field `lisen`, expected one of `listen`, `performer`, `devices`, `rest`, `recordCommands`",
            ),
            (
                r#"{"vmcOutputs": [{"to": "nowhere"}]}"#,
                "bridge.json: vmcOutputs[0].to: invalid socket address syntax",
            ),
            (
                r#"{"websocket": {"listen": "0.0.0.0:8787"}}"#,
                "bridge.json: websocket.token: listening on 0.0.0.0:8787 (not a loopback address) needs a token: set websocket.token",
            ),
            (
                r#"{"recorder": {"flushMs": 500}}"#,
                "bridge.json: recorder.flushMs: 500 is not in 1..=100",
            ),
            (
                r#"{"recorder": {"maxMegabytes": 5000}}"#,
                "bridge.json: recorder.maxMegabytes: 5000 is more than a .vrma can hold (4000: a GLB is at most 4 GiB)",
            ),
            (
                r#"{"recorder": {"maxMinutes": -1}}"#,
                "bridge.json: recorder.maxMinutes: -1 is not a number of minutes ≥ 0",
            ),
            (
                r#"{"labInputs": [{"skeleton": "nope"}]}"#,
                "bridge.json: labInputs[0]: no skeleton `nope`: add it to `skeletons`",
            ),
            (
                r#"{"performers": {"alice": {"mocapIk": {"hands": 3}}}}"#,
                "bridge.json: performers.alice: mocapIk.hands: invalid type: integer `3`, expected a boolean",
            ),
            (
                r#"{"performerDefaults": {"trackers": {"vrIK": {}}}}"#,
                "bridge.json: performerDefaults.trackers: vrIK: unknown field `vrIK`, expected one of `filter`, `deviceFilter`, `mocapIk`, `vrIk`, `calibration`",
            ),
            (
                r#"{"performers": {"alice": {"mocapIk": {"enabled": 1}}}}"#,
                "bridge.json: performers.alice: mocapIk.enabled: invalid type: integer `1`, expected a boolean",
            ),
            (
                r#"{"performers": {"alice": {"avatar": 1}}}"#,
                "bridge.json: performers.alice: avatar: invalid type: integer `1`, expected path string",
            ),
            (
                r#"{"performerDefaults": {"skeleton": {"avatar": "a.vrm"}}}"#,
                "bridge.json: performerDefaults.skeleton: avatar: set the avatar at the top level or in a performer's entry",
            ),
            (
                r#"{"pipeline": {"performerTimeoutS": -1}}"#,
                "bridge.json: pipeline.performerTimeoutS: must be a positive number of seconds",
            ),
        ] {
            assert_eq!(parse(text).unwrap_err(), expected, "{text}");
        }
    }

    #[test]
    fn notes_are_ignored_and_a_token_opens_other_interfaces() {
        let config = parse(
            r#"{"// a note": 1, "websocket": {"// why": "lan", "listen": "0.0.0.0:8787", "token": "s3cret"}}"#,
        )
        .unwrap();
        assert_eq!(config.websocket.unwrap().token.as_deref(), Some("s3cret"));
    }
}
