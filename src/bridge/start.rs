//! What the bridge loads and binds before any task runs: the skeletons senders
//! may stream (built-in ones, then the configuration's), the lab OSC inputs'
//! skeleton choices, the performers' and VMC receivers' avatars (each file
//! loaded once, else the built-in humanoid), VMC senders' rest poses, and UDP sockets. Every failure is
//! a `BridgeError` naming what failed.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::net::UdpSocket;

use super::BridgeError;
use super::config::{BridgeConfig, LabInputConfig, VmcInputConfig, same_avatar_file};
use crate::formats::gltf::as_vrm;
use crate::formats::inspect;
use crate::formats::vrma::VrmaRest;
use crate::formats::{self, LoadOptions, Units, file_type, skeleton_json};
use crate::io::web::avatars::ViewerAvatar;
use crate::pipeline::performer::{Avatar, Avatars, StreamSkeleton};
use crate::protocol::frame::PerformerName;
use crate::protocol::lab_osc::LabSkeleton;
use crate::protocol::record_control::RecordCommandsFrom;
use crate::protocol::vmc::frames::SenderRest;
use crate::protocol::vmc::{ExpressionNames, VmcEncoder};
use crate::retarget::MappedSkeleton;

/// The skeletons senders may stream, and what the lab OSC inputs stream with them.
pub(super) struct Skeletons {
    /// Built-in ones first, then the configuration's (a configured one replaces a
    /// built-in one of the same name).
    pub streams: Arc<[StreamSkeleton]>,
    /// The lab OSC form of each, where its stream format allows one.
    pub labs: Arc<[Option<LabSkeleton>]>,
}

/// One lab OSC input's skeletons: the default one and each subject's, by index
/// into `Skeletons::streams`.
pub(super) struct LabPlan {
    pub listen: SocketAddr,
    pub default_skeleton: u16,
    pub subjects: HashMap<String, u16>,
    pub record_commands: RecordCommandsFrom,
}

/// Where a setting of the configuration is: the file `run` was started with (if
/// any) and the key, as `BridgeConfig` names places (`bridge.json: skeletons.x`).
fn setting(file: Option<&Path>, key: &str, message: String) -> BridgeError {
    BridgeError::Setting {
        place: match file {
            Some(file) => format!("{}: {key}", file.display()),
            None => key.to_owned(),
        },
        message,
    }
}

/// An error and its causes on one line (`cannot read x.vrm: No such file ...`).
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(e) = source {
        let text = e.to_string();
        if !message.contains(&text) {
            message = format!("{message}: {text}");
        }
        source = e.source();
    }
    message
}

/// `message` about the file at `path`, naming it once.
fn naming(path: &Path, message: String) -> String {
    let file = path.display().to_string();
    if message.contains(&file) {
        message
    } else {
        format!("{file}: {message}")
    }
}

impl Skeletons {
    /// The built-in skeletons, then those `config.skeletons` lists; an error
    /// names `file` (the configuration file, if any) and the entry's key.
    pub fn load(config: &BridgeConfig, file: Option<&Path>) -> Result<Self, BridgeError> {
        let mut loaded = Vec::new();
        for (name, json) in [
            ("lab19", crate::skeleton::builtin::LAB19_JSON),
            ("humanoid", crate::skeleton::builtin::HUMANOID_JSON),
        ] {
            let parsed =
                skeleton_json::parse_with_stream(json, Path::new(name), &LoadOptions::default())
                    .map_err(|e| skeleton_error(name, e.to_string()))?;
            loaded.push((name.to_owned(), parsed));
        }
        for (name, path) in &config.skeletons {
            let fail = |message: String| {
                setting(file, &format!("skeletons.{name}"), naming(path, message))
            };
            let (rig, stream) = skeleton_json::load_with_stream(path, &LoadOptions::default())
                .map_err(|e| fail(with_causes(&e)))?;
            let map = rig.bone_map.as_ref().ok_or_else(|| {
                fail("the skeleton file has no boneMap: a streamed skeleton needs one".into())
            })?;
            MappedSkeleton::new(rig.skeleton.clone(), map).map_err(|e| fail(with_causes(&e)))?;
            loaded.retain(|(n, _)| n != name);
            loaded.push((name.clone(), (rig, stream)));
        }
        let mut streams = Vec::new();
        let mut labs = Vec::new();
        for (name, (rig, stream)) in loaded {
            let map = rig
                .bone_map
                .clone()
                .ok_or_else(|| skeleton_error(&name, "the skeleton file has no boneMap".into()))?;
            labs.push(LabSkeleton::new(&rig.skeleton, stream).ok());
            let mapped = MappedSkeleton::new(rig.skeleton, &map)
                .map_err(|e| skeleton_error(&name, e.to_string()))?;
            streams.push(StreamSkeleton::new(&name, mapped));
        }
        Ok(Self {
            streams: streams.into(),
            labs: labs.into(),
        })
    }

    /// Each lab OSC input's skeletons, by name resolved to index.
    pub fn lab_plans(&self, inputs: &[LabInputConfig]) -> Result<Vec<LabPlan>, BridgeError> {
        inputs
            .iter()
            .map(|lab| {
                let subjects = lab
                    .subjects
                    .iter()
                    .map(|(subject, skeleton)| Ok((subject.clone(), self.index(skeleton)?)))
                    .collect::<Result<_, BridgeError>>()?;
                Ok(LabPlan {
                    listen: lab.listen,
                    default_skeleton: self.index(&lab.skeleton)?,
                    subjects,
                    record_commands: lab.record_commands,
                })
            })
            .collect()
    }

    fn index(&self, name: &str) -> Result<u16, BridgeError> {
        self.streams
            .iter()
            .position(|s| s.name == name)
            .map(|i| i as u16)
            .ok_or_else(|| skeleton_error(name, "no such skeleton: add it to `skeletons`".into()))
    }
}

fn skeleton_error(name: &str, message: String) -> BridgeError {
    BridgeError::Skeleton {
        name: format!("skeleton `{name}`"),
        message,
    }
}

/// The rest pose of each VMC input's senders (`vmcInputs[i].rest`), loaded
/// before anything binds; an error names `file` (the configuration file, if
/// any), the key and the loader's reason.
pub(super) fn sender_rests(
    inputs: &[VmcInputConfig],
    file: Option<&Path>,
) -> Result<Vec<Option<Arc<SenderRest>>>, BridgeError> {
    inputs
        .iter()
        .enumerate()
        .map(|(i, vmc)| {
            vmc.rest
                .as_deref()
                .map(|path| {
                    sender_rest(path).map(Arc::new).map_err(|message| {
                        setting(file, &format!("vmcInputs[{i}].rest"), naming(path, message))
                    })
                })
                .transpose()
        })
        .collect()
}

/// The rest pose of VMC senders whose avatar is the model at `path`; the error
/// is the loader's reason.
fn sender_rest(path: &Path) -> Result<SenderRest, String> {
    let rig = formats::load_rig(path, &LoadOptions::default()).map_err(|e| with_causes(&e))?;
    let chosen = inspect::choose_map(&rig, None)
        .ok_or_else(|| format!("no humanoid bone map: it is {}", inspect::why_no_map(&rig)))?;
    let mapped = MappedSkeleton::new(rig.skeleton, &chosen.map).map_err(|e| with_causes(&e))?;
    Ok(SenderRest::from_mapped(&mapped))
}

/// The built-in avatar: the VRM 1.0 T-pose humanoid (the viewer draws the
/// mannequin for it).
fn built_in_avatar() -> LoadedAvatar {
    let rig = skeleton_json::embedded_rig("humanoid", crate::skeleton::builtin::HUMANOID_JSON);
    // The embedded humanoid is checked by the test suite: it has its bone map.
    let map = rig.bone_map.clone().unwrap_or_default();
    let mapped = MappedSkeleton::new(rig.skeleton, &map)
        .unwrap_or_else(|e| unreachable!("the embedded humanoid is valid: {e}"));
    LoadedAvatar {
        avatar: Avatar::new(&mapped),
        rest: VrmaRest::from_mapped(&mapped),
        viewer: ViewerAvatar::File(PathBuf::new()),
    }
}

/// What the viewer is served for the avatar file at `path`, among `viewers`
/// (`AvatarPlan::viewers`); the file as it is when it is not there.
#[must_use]
pub(super) fn viewer_of(viewers: &[(PathBuf, ViewerAvatar)], path: &Path) -> ViewerAvatar {
    viewers
        .iter()
        .find(|(file, _)| same_avatar_file(file, path))
        .map_or_else(|| ViewerAvatar::File(path.to_owned()), |(_, v)| v.clone())
}

/// An avatar as the solver and the viewer take it.
pub(super) struct LoadedAvatar {
    pub avatar: Avatar,
    pub rest: VrmaRest,
    /// What `/api/avatar` serves for it.
    pub viewer: ViewerAvatar,
}

/// The avatar model at `path`: loaded as `retarget --target` loads a model, its
/// bone map chosen as `inspect::choose_map` does (the file's own, a catalog map,
/// else recognized) and its rest turned into the T-pose facing +Z (a VRM 0.x
/// model's half turn included); a glTF humanoid that is not a VRM is written as
/// one for the viewer (`as_vrm`).
pub(super) fn load_avatar(path: &Path) -> Result<LoadedAvatar, String> {
    let fail = |error: &dyn std::error::Error| naming(path, with_causes(error));
    let rig = formats::load_rig(path, &LoadOptions::default()).map_err(|e| fail(&e))?;
    let label = path.display().to_string();
    let mapped = inspect::map_rig(&label, &rig, None).map_err(|e| fail(&e))?;
    if let Some(problem) = mapped.hips_at_the_floor() {
        return Err(format!("{}: {problem}", path.display()));
    }
    let avatar = Avatar::from_model(&mapped);
    // What the IK needs of a body: both arms and legs.
    for limb in crate::ik::body::Limb::ALL {
        if let Some(bone) = limb.bones().into_iter().find(|b| !avatar.body.has(*b)) {
            return Err(format!(
                "{}: the humanoid bone {} is not mapped: the IK needs both arms and legs",
                path.display(),
                bone.name()
            ));
        }
    }
    Ok(LoadedAvatar {
        avatar,
        rest: VrmaRest::from_mapped(&mapped),
        viewer: viewer_avatar(path, &mapped, rig.units),
    })
}

/// What the viewer draws for the avatar at `path`: a .vrm as it is, a glTF
/// humanoid as the VRM 1.0 `as_vrm` makes of it (as it is, with a warning, when
/// that fails: the page then says it is not a VRM), a skeleton's stick figure.
/// `units` are the ones the model's file was read in (`Rig::units`).
fn viewer_avatar(path: &Path, mapped: &MappedSkeleton, units: Units) -> ViewerAvatar {
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    if !matches!(file_type(path).as_deref(), Some("gltf" | "glb" | "vrm")) {
        return ViewerAvatar::Skeleton { name };
    }
    let converted = std::fs::read(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))
        .and_then(|bytes| as_vrm::to_vrm(&bytes, path, mapped, units).map_err(|e| e.to_string()));
    match converted {
        Ok(Some(glb)) => ViewerAvatar::Converted {
            name,
            glb: glb.into(),
        },
        Ok(None) => ViewerAvatar::File(path.to_owned()),
        Err(e) => {
            tracing::warn!(%e, "the viewer gets the avatar as it is, not as a VRM");
            ViewerAvatar::File(path.to_owned())
        }
    }
}

/// Every performer's and VMC receiver's avatar, built once: the default
/// (`BridgeConfig::default_avatar`, else the built-in humanoid) and each other
/// file a performer or an output names.
pub(super) struct AvatarPlan {
    pub avatars: Avatars,
    /// The T-pose of each avatar, by index (0: the default's: what the
    /// recorder's takes and the viewer's rig are built on).
    pub rests: Vec<VrmaRest>,
    /// Performers with an avatar of their own: name → index into `avatars`.
    pub by_performer: HashMap<String, usize>,
    /// The avatar each VMC output's receiver shows, by output: its own, else
    /// that of the performer it names, else the default.
    pub by_output: Vec<usize>,
    /// Whether the default is the built-in humanoid (no avatar named).
    pub built_in_default: bool,
    /// Each avatar file and what the viewer is served for it.
    pub viewers: Vec<(PathBuf, ViewerAvatar)>,
}

/// Avatar files as they are loaded, each once (see `same_avatar_file`).
struct AvatarFiles<'a> {
    /// The file of each avatar; `None`: the built-in humanoid (only ever 0).
    files: Vec<Option<&'a Path>>,
    loaded: Vec<LoadedAvatar>,
    /// Where an avatar file was named, for an error: `run --avatar` or the
    /// configuration file and the key.
    place: &'a dyn Fn(&Path) -> String,
}

impl<'a> AvatarFiles<'a> {
    /// The index of the avatar at `path` (`None`: the default), loading it the
    /// first time it is named.
    fn index(&mut self, path: Option<&'a Path>) -> Result<usize, BridgeError> {
        let Some(path) = path else {
            return Ok(0);
        };
        let named = |f: &Option<&Path>| f.is_some_and(|f| same_avatar_file(f, path));
        if let Some(i) = self.files.iter().position(named) {
            return Ok(i);
        }
        self.loaded.push(self.load(path)?);
        self.files.push(Some(path));
        Ok(self.files.len() - 1)
    }

    /// The avatar at `path`, an error naming where it was named.
    fn load(&self, path: &Path) -> Result<LoadedAvatar, BridgeError> {
        load_avatar(path).map_err(|message| BridgeError::Setting {
            place: (self.place)(path),
            message,
        })
    }
}

impl AvatarPlan {
    /// Loads every avatar file `config` names (each once, in the order of the
    /// file: the default first, then the performers' by name, then the outputs').
    /// An error names `run --avatar` for a file among `flags`, else `file` (the
    /// configuration file, if any) and the key naming it.
    pub fn load(
        config: &BridgeConfig,
        file: Option<&Path>,
        flags: &[PathBuf],
    ) -> Result<Self, BridgeError> {
        let place = |path: &Path| {
            if flags.iter().any(|flag| flag == path) {
                "run --avatar".to_owned()
            } else {
                match file {
                    Some(file) => format!("{}: {}", file.display(), config.avatar_key(path)),
                    None => config.avatar_key(path),
                }
            }
        };
        let default = config.default_avatar();
        let mut files = AvatarFiles {
            files: vec![default],
            loaded: Vec::new(),
            place: &place,
        };
        let first = match default {
            Some(path) => files.load(path)?,
            None => built_in_avatar(),
        };
        files.loaded.push(first);
        let mut by_performer = HashMap::new();
        for name in config.named_performers() {
            if let Some(path) = config.avatar_for(name) {
                by_performer.insert(name.to_owned(), files.index(Some(path))?);
            }
        }
        let by_output = config
            .vmc_outputs
            .iter()
            .map(|out| {
                let shown = out.avatar.as_deref().or_else(|| {
                    out.named_performer()
                        .and_then(|name| config.avatar_for(name))
                });
                files.index(shown)
            })
            .collect::<Result<_, _>>()?;
        let mut viewers = Vec::new();
        let mut avatars = Vec::new();
        let mut rests = Vec::new();
        for (file, loaded) in files.files.iter().zip(files.loaded) {
            if let Some(file) = file {
                viewers.push((file.to_path_buf(), loaded.viewer));
            }
            avatars.push(loaded.avatar);
            rests.push(loaded.rest);
        }
        let default = avatars.remove(0);
        Ok(Self {
            avatars: Avatars::new(default, avatars),
            rests,
            by_performer,
            by_output,
            built_in_default: config.default_avatar().is_none(),
            viewers,
        })
    }

    /// The avatar index of `performer`.
    #[must_use]
    pub fn index(&self, performer: &str) -> usize {
        self.by_performer.get(performer).copied().unwrap_or(0)
    }

    /// The default avatar's T-pose.
    #[must_use]
    pub fn default_rest(&self) -> &VrmaRest {
        &self.rests[0]
    }

    /// The encoder for VMC output `output` (its index in the configuration):
    /// for the avatar its receiver shows, or with the built-in humanoid's bone
    /// offsets and every bone when no avatar is named.
    #[must_use]
    pub fn output_encoder(&self, output: usize, names: ExpressionNames) -> VmcEncoder {
        let shown = self.by_output.get(output).copied().unwrap_or(0);
        let rest = &self.rests[shown];
        if shown == 0 && self.built_in_default {
            VmcEncoder::new(names, rest)
        } else {
            VmcEncoder::for_avatar(names, rest)
        }
    }
}

/// A UDP input socket with a receive buffer of `buffer` bytes (the kernel may
/// cap it), so bursts from many senders wait in the kernel instead of being lost.
pub(super) fn bind(what: &str, addr: SocketAddr, buffer: usize) -> Result<UdpSocket, BridgeError> {
    let open = || -> std::io::Result<UdpSocket> {
        let socket = socket2::Socket::new(
            socket2::Domain::for_address(addr),
            socket2::Type::DGRAM,
            Some(socket2::Protocol::UDP),
        )?;
        // A smaller buffer than asked for still works: not an error.
        let _ = socket.set_recv_buffer_size(buffer);
        socket.set_nonblocking(true)?;
        socket.bind(&addr.into())?;
        UdpSocket::from_std(socket.into())
    };
    open().map_err(|source| BridgeError::Bind {
        what: what.to_owned(),
        addr,
        source,
    })
}

pub(super) fn performer_name(name: &str) -> Result<PerformerName, BridgeError> {
    PerformerName::new(name).ok_or_else(|| BridgeError::PerformerName(name.to_owned()))
}
