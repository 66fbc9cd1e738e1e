//! mocap-bridge: live motion capture onto VRM 1.0 humanoids.
//!
//! Poses come in from mocap systems and VR devices, are mapped onto the VRM 1.0
//! humanoid bone set and go out live or into `.vrma` recordings. This crate is the
//! whole library; `main.rs` is a thin CLI over it.
//!
//! # Layout
//! Rooms by role, each using only the rooms listed before it (`tests/architecture.rs`
//! holds the order; docs/architecture.md is the map):
//! - `assets`: where the real-file corpus the tests measure on lives.
//! - `humanoid`: the 55 bones, `HumanoidPose` (normalized rotations), expressions,
//!   device poses.
//! - `skeleton`: `Skeleton`, bone maps, rest pose detection and correction,
//!   recognition of humanoid bones, the built-in skeleton files and the catalog of
//!   known maps.
//! - `retarget`: source skeleton -> normalized pose -> target skeleton.
//! - `filter`: One Euro smoothing of poses, the device filter.
//! - `ik`: two-bone limb IK on normalized poses, mocap mode (feet planted, hands
//!   placed), VR mode (headset, controllers, trackers) and its calibration.
//! - `formats`: BVH, glTF/VRM rigs, `.vrma`, EXT_skeleton_humanoid, the skeleton
//!   JSON; units and axes; which bone map a rig gets and the `inspect` report; the
//!   mannequin VRM the bridge ships.
//! - `eval`: IK measured against ground truth (`eval-ik`).
//! - `protocol`: wire codecs, pure over bytes (OSC, VMC and lab OSC both ways, the
//!   WebSocket JSON and binary messages, VRChat OSC trackers in).
//! - `takes`: recordings loaded, replayed as frames, converted; the built-in
//!   performance.
//! - `pipeline`: the SPSC rings, the solver thread, per-performer state, status.
//! - `record`: the recorder task and the crash-safe journal behind every take.
//! - `io`: the edges: UDP inputs and outputs, the web server (pages, data routes,
//!   WebSocket sessions), the `send` command's VMC socket.
//! - `bridge`: the live bridge's configuration, start-up and ordered shutdown.
//!
//! # Conventions
//! Internal space is glTF's: right-handed, +Y up, metres, the character faces +Z and
//! its left arm points to +X. Angles are radians, quaternions are (x, y, z, w) as in
//! glam. Files and protocols are converted at the edges, never in the core.

pub mod assets;
pub mod bridge;
pub mod eval;
pub mod filter;
pub mod formats;
pub mod humanoid;
pub mod ik;
pub mod io;
pub mod pipeline;
pub mod protocol;
pub mod record;
pub mod retarget;
pub mod skeleton;
pub mod takes;
