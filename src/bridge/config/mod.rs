//! The bridge's configuration: every number a user may tune, with the defaults
//! `run` uses when no file is given. `config/bridge.json` spells out the same
//! defaults with a `"//"` note beside each setting; keys starting with `//` are
//! notes and ignored, any other unknown key is an error naming it.
//!
//! Paths in the file (skeletons, avatars, the recordings folder) are relative to
//! the directory `run` is started in. The inputs' entries are in `inputs`, the
//! outputs' in `outputs`, the solver's per performer in `performers`, NATS's in
//! `nats`; `calibration` writes a calibration back into the file.

mod calibration;
mod inputs;
mod nats;
mod outputs;
mod performers;
mod ranges;

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::protocol::frame::{MAX_NAME, PerformerName, TrackedPoint};
use crate::protocol::vrchat::TRACKER_COUNT;
use crate::takes::replay::MAX_FPS;

pub use calibration::save_calibration;
pub use inputs::{LabInputConfig, VmcInputConfig, VrchatInputConfig};
pub use nats::{NatsInputConfig, NatsOutputConfig};
pub use outputs::{NamesConfig, RecorderConfig, VmcOutputConfig, WebSocketConfig};
pub use performers::{MocapIkSetting, PerformerConfig, PerformerDefaults, PerformerOverrides};
pub use ranges::{OutOfRange, Range, Ranges};

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

/// The largest ring, client queue or performer count a file may ask for: each
/// is allocated when `run` starts.
pub const MAX_COUNT: usize = 1 << 16;

/// The longest timeout or interval a file may ask for, seconds (a day).
pub const MAX_SECONDS: f32 = 86_400.0;

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
            && !(fps > 0.0 && fps <= MAX_FPS)
        {
            return Err(field(
                "replay.fps",
                format!(
                    "must be a number of frames per second above 0 and at most {MAX_FPS}, or null"
                ),
            ));
        }
        let p = &self.pipeline;
        // Each slot is allocated up front: a size past `MAX_COUNT` would abort on
        // allocation.
        let counts = [
            ("pipeline.inputRing", p.input_ring),
            ("pipeline.outputRing", p.output_ring),
            ("pipeline.recorderRing", p.recorder_ring),
            ("pipeline.maxPerformers", p.max_performers),
        ]
        .into_iter()
        .chain(
            self.websocket
                .as_ref()
                .map(|ws| ("websocket.clientQueue", ws.client_queue)),
        );
        for (key, size) in counts {
            if size == 0 {
                return Err(field(key, "must be at least 1".into()));
            }
            if size > MAX_COUNT {
                return Err(field(key, format!("{size} is more than {MAX_COUNT}")));
            }
        }
        if !(p.performer_timeout_s.is_finite()
            && p.performer_timeout_s > 0.0
            && p.performer_timeout_s <= MAX_SECONDS)
        {
            return Err(field(
                "pipeline.performerTimeoutS",
                format!("must be a positive number of seconds, at most {MAX_SECONDS}"),
            ));
        }
        for (key, seconds) in [
            ("status.logIntervalS", self.status.log_interval_s),
            ("status.monitorIntervalS", self.status.monitor_interval_s),
        ] {
            if !(seconds.is_finite() && (0.0..=MAX_SECONDS).contains(&seconds)) {
                return Err(field(
                    key,
                    format!("{seconds} is not a number of seconds from 0 to {MAX_SECONDS}"),
                ));
            }
        }
        for (i, out) in self.vmc_outputs.iter().enumerate() {
            if !(out.rate_hz.is_finite()
                && (out.rate_hz == 0.0 || out.rate_hz >= 1.0 / MAX_SECONDS))
            {
                return Err(field(
                    &format!("vmcOutputs[{i}].rateHz"),
                    "must be 0 (no cap) or a positive number, at least one frame a day".into(),
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
        for (key, name) in self.performer_names() {
            if PerformerName::new(name).is_none() {
                return Err(field(
                    &key,
                    format!("performer name `{name}` is empty or longer than {MAX_NAME} bytes"),
                ));
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
        self.check_performer_settings(path)?;
        self.check_avatars(path, "avatar")?;
        self.check_nats(path)
    }

    /// Every kind's defaults and every performer's entry against the ranges of
    /// the solver's settings (`Ranges`). A performer's entry is checked as it
    /// applies to each kind: the kinds' defaults are checked first, so a number
    /// out of range is the entry's own.
    fn check_performer_settings(&self, path: &Path) -> Result<(), ConfigError> {
        let field = |place: String, e: OutOfRange| ConfigError::Field {
            path: path.to_owned(),
            field: format!("{place}.{}", e.key),
            message: e.message,
        };
        let d = &self.performer_defaults;
        let kinds = [
            ("humanoid", &d.humanoid),
            ("skeleton", &d.skeleton),
            ("trackers", &d.trackers),
        ];
        for (kind, settings) in kinds {
            settings
                .check_ranges()
                .map_err(|e| field(format!("performerDefaults.{kind}"), e))?;
        }
        for (name, own) in &self.performers {
            for (_, settings) in kinds {
                own.apply(settings)
                    .check_ranges()
                    .map_err(|e| field(format!("performers.{name}"), e))?;
            }
        }
        Ok(())
    }

    /// Every performer name the file gives, with its key: the inputs'
    /// `performer`s, the lab subjects, the VMC outputs' (`"*"` aside) and the
    /// `performers` entries.
    fn performer_names(&self) -> Vec<(String, &str)> {
        let mut names = Vec::new();
        for (i, vmc) in self.vmc_inputs.iter().enumerate() {
            names.push((format!("vmcInputs[{i}].performer"), vmc.performer.as_str()));
        }
        for (i, vrchat) in self.vrchat_inputs.iter().enumerate() {
            names.push((
                format!("vrchatInputs[{i}].performer"),
                vrchat.performer.as_str(),
            ));
        }
        for (i, lab) in self.lab_inputs.iter().enumerate() {
            for subject in lab.subjects.keys() {
                names.push((
                    format!("labInputs[{i}].subjects.{subject}"),
                    subject.as_str(),
                ));
            }
        }
        for (i, out) in self.vmc_outputs.iter().enumerate() {
            if let Some(name) = out.performer.as_deref().filter(|name| *name != "*") {
                names.push((format!("vmcOutputs[{i}].performer"), name));
            }
        }
        for name in self.performers.keys() {
            names.push((format!("performers.{name}"), name.as_str()));
        }
        names
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

    /// The key that names the avatar file `path`, first of: `avatar`,
    /// `performers.<name>.avatar`, `vmcOutputs[i].avatar` (`avatar` when none
    /// does, as for the built-in default).
    #[must_use]
    pub fn avatar_key(&self, path: &Path) -> String {
        let named = |avatar: &Option<PathBuf>| avatar.as_deref() == Some(path);
        if named(&self.avatar) {
            return "avatar".into();
        }
        if let Some((name, _)) = self.performers.iter().find(|(_, p)| named(&p.avatar)) {
            return format!("performers.{name}.avatar");
        }
        match self.vmc_outputs.iter().position(|out| named(&out.avatar)) {
            Some(i) => format!("vmcOutputs[{i}].avatar"),
            None => "avatar".into(),
        }
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
mod tests;
