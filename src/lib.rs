//! mocap-bridge: live motion capture onto VRM 1.0 humanoids.
//!
//! Poses come in from mocap systems and VR devices, are mapped onto the VRM 1.0
//! humanoid bone set and go out live or into `.vrma` recordings. This crate is the
//! whole library; `main.rs` is a thin CLI over it.
//!
//! # Layout
//! - `humanoid`: the 55 bones, `HumanoidPose` (normalized rotations), expressions.
//! - `skeleton`: `Skeleton`, bone maps, rest pose detection and correction.
//! - `retarget`: source skeleton -> normalized pose -> target skeleton.
//! - `ik`: two-bone limb IK on normalized poses, mocap mode (feet planted, hands
//!   placed), the `eval-ik` metrics.
//! - `formats`: BVH, glTF/VRM rigs, the skeleton JSON; units and axes.
//! - `catalog`: bone maps for well-known skeletons, embedded in the binary.
//! - `demo`: the built-in lab19 performance, for running with no hardware or files.
//! - `inspect`: the report behind `mocap-bridge inspect`.
//! - `protocol`: wire codecs, pure over bytes (OSC, VMC and lab OSC both ways, the
//!   WebSocket JSON and binary messages, VRChat OSC trackers in).
//! - `net`: sockets that move those bytes (the VMC sender; the live bridge's UDP
//!   inputs and outputs, batched by `net::udp`, and its WebSocket server).
//! - `web`: the HTTP side of the WebSocket port: the live viewer and WebXR pages,
//!   the avatar's rest skeleton and the recordings for them.
//! - `record`: turning what arrives live into takes (VMC frames), the crash-safe
//!   journal behind every recording, and recovery from it.
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
