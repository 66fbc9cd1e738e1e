//! The WebSocket message schema, as a pure codec: no sockets here (the live bridge's
//! WebSocket server moves the text and bytes). `docs/websocket.md` is the schema for
//! client authors; this header is the map for readers of the code.
//!
//! Incoming (client → bridge), JSON text messages tagged by `"type"`:
//! - `skeleton`: one frame of a streamed source skeleton, decoded in two steps: `parse`
//!   checks the message and gives the performer and skeleton names; the caller looks
//!   the skeleton up and `SkeletonMessage::decode_into` fills a `JointFrame` against it.
//! - `trackers`: one frame of VR devices, decoded straight into a `TrackerFrame`.
//! - control requests (`startRecording`, `stopRecording`, `listPerformers`, `status`,
//!   `calibrate`), each with an optional client `id` that the reply echoes.
//!
//! Everything incoming is untrusted: the server drops a message longer than
//! `MAX_MESSAGE` before parsing; numbers must be finite and at most `MAX_MAGNITUDE`;
//! quaternions must not be zero and are normalized; names are bounded by `MAX_NAME`;
//! a frame carries at most `MAX_JOINTS` joints; unknown fields are errors, unknown
//! joint names are counted. Every rejection is a `WsError` whose `kind()` says which
//! counter it belongs to.
//!
//! Outgoing (bridge → client):
//! - `pose`: a `HumanoidPose` as JSON (`encode_pose_json`) or in a compact
//!   little-endian binary form (`encode_pose_binary`), both written into a
//!   caller-owned buffer with no allocation once it has grown; floats keep their
//!   exact bits (shortest round-trip decimals in JSON). The tests read both back
//!   bit for bit with decoders of their own (`pose_decode`, test builds only).
//! - replies (`Reply`): `performers`, `recordingStarted`, `recordingStopped`,
//!   `calibrated`, `status` (a caller-built `serde_json::Value`) and `error`.
//!
//! All positions and rotations are in the internal space: glTF axes (right-handed,
//! +Y up, the character facing +Z), metres, quaternions (x, y, z, w), radians.
//!
//! Files: `wire` (how incoming messages are laid out, read by serde), `checks`
//! (bounds on incoming values), `client` (the checked incoming messages), `error`
//! (`WsError`), `pose` (outgoing poses and sources), `replies` (outgoing replies).

mod checks;
mod client;
mod error;
mod pose;
#[cfg(test)]
mod pose_decode;
mod replies;
#[cfg(test)]
mod test_support;
mod wire;

pub use client::{ClientMessage, DecodedJoints, SkeletonMessage, parse, rejected_request_id};
pub use error::{ErrorKind, Problem, WsError};
pub use pose::{PoseHeader, SourcePoint, encode_pose_binary, encode_pose_json, encode_source_json};
pub use replies::{PerformerSummary, Reply, StartedRecording, StoppedRecording};

/// Longest incoming message, bytes. The server drops longer messages before parsing
/// (and `parse` rejects them too).
pub const MAX_MESSAGE: usize = 64 * 1024;

/// Largest magnitude of any incoming position or quaternion component: 10 km in
/// metres. Anything bigger is a broken sender, not a performer.
pub const MAX_MAGNITUDE: f32 = 10_000.0;

/// Longest custom expression name an outgoing pose carries, bytes of UTF-8 (the
/// binary form stores the length in one byte); longer names are not sent.
pub const MAX_EXPRESSION_NAME: usize = 255;

/// The first four bytes of a binary pose.
pub const POSE_MAGIC: [u8; 4] = *b"MBPO";

/// The binary pose layout version; any change to the layout bumps it.
pub const POSE_VERSION: u8 = 1;
