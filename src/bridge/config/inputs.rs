//! The inputs' entries: VMC senders, lab systems streaming their own
//! skeletons over OSC, and VRChat-style OSC trackers.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;

use serde::Deserialize;

use crate::protocol::frame::TrackedPoint;
use crate::protocol::record_control::RecordCommandsFrom;
use crate::protocol::vrchat::{TRACKER_COUNT, TrackerAssignment};

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
    /// elbow; arms whose hands no tracker holds hang.
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
