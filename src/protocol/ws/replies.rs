//! Outgoing replies to control requests (`Reply`), each echoing the request's
//! `id`: `performers`, `recordingStarted`, `recordingStopped`, `calibrated`,
//! `status` (a caller-built `serde_json::Value`) and `error`.

use serde::Serialize;

/// One performer in the `performers` reply.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PerformerSummary<'a> {
    pub name: &'a str,
    /// Where its frames come from: `vmc`, `osc`, `websocket`, `trackers`, `replay`,
    /// `demo`.
    pub source: &'a str,
    /// The source skeleton's name, for skeleton sources.
    pub skeleton: Option<&'a str>,
    /// Frames received so far.
    pub frames: u64,
    /// Seconds since the last frame arrived.
    pub since_last_frame: f64,
    /// Whether it is being recorded.
    pub recording: bool,
    /// Whether a T-pose calibration is in use (tracker sources only).
    pub calibrated: bool,
}

/// A recording that `startRecording` started.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StartedRecording<'a> {
    pub performer: &'a str,
    /// The file being written, as the bridge names it.
    pub file: &'a str,
}

/// A recording that `stopRecording` finished.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StoppedRecording<'a> {
    pub performer: &'a str,
    /// The file written; `None` for a take that got no frame (nothing written).
    pub file: Option<&'a str>,
    /// Frames written.
    pub frames: u64,
}

/// A reply to a request, echoing its `id` (`null` when it had none).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Reply<'a> {
    /// To `listPerformers`.
    Performers {
        id: Option<u64>,
        performers: &'a [PerformerSummary<'a>],
    },
    /// To `startRecording`: one entry per performer now recording, and the named
    /// performers not present that start recording with their first frame.
    RecordingStarted {
        id: Option<u64>,
        recordings: &'a [StartedRecording<'a>],
        waiting: &'a [&'a str],
    },
    /// To `stopRecording`: one entry per file finished.
    RecordingStopped {
        id: Option<u64>,
        recordings: &'a [StoppedRecording<'a>],
    },
    /// To `calibrate`: `saved` names the configuration file the calibration was
    /// written into (`null` when the bridge runs without one, or writing failed:
    /// `saveError` says why).
    #[serde(rename_all = "camelCase")]
    Calibrated {
        id: Option<u64>,
        performer: &'a str,
        saved: Option<&'a str>,
        save_error: Option<&'a str>,
    },
    /// To `status`: whatever the bridge reports about itself.
    Status {
        id: Option<u64>,
        status: &'a serde_json::Value,
    },
    /// To a request that failed (or could not be read: `id` is then `null`).
    Error { id: Option<u64>, message: &'a str },
}

impl Reply<'_> {
    /// The reply as a JSON text message.
    #[must_use]
    pub fn to_json(&self) -> String {
        // Strings, integers, booleans, floats (non-finite ones become `null`) and a
        // `Value` (string keys only): serializing cannot fail.
        serde_json::to_string(self).expect("replies always serialize")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_are_json_with_the_id_echoed() {
        let performers = [PerformerSummary {
            name: "alice",
            source: "websocket",
            skeleton: Some("lab19"),
            frames: 120,
            since_last_frame: 0.25,
            recording: true,
            calibrated: false,
        }];
        let started = [StartedRecording {
            performer: "alice",
            file: "recordings/take-01-alice.vrma",
        }];
        let stopped = [
            StoppedRecording {
                performer: "alice",
                file: Some("recordings/take-01-alice.vrma"),
                frames: 600,
            },
            StoppedRecording {
                performer: "bob",
                file: None,
                frames: 0,
            },
        ];
        let status = serde_json::json!({"uptime": 12.5, "clients": 2});
        let cases = [
            (
                Reply::Performers {
                    id: Some(1),
                    performers: &performers,
                },
                r#"{"type":"performers","id":1,"performers":[{"name":"alice","source":"websocket","skeleton":"lab19","frames":120,"sinceLastFrame":0.25,"recording":true,"calibrated":false}]}"#,
            ),
            (
                Reply::RecordingStarted {
                    id: Some(2),
                    recordings: &started,
                    waiting: &[],
                },
                r#"{"type":"recordingStarted","id":2,"recordings":[{"performer":"alice","file":"recordings/take-01-alice.vrma"}],"waiting":[]}"#,
            ),
            (
                Reply::RecordingStarted {
                    id: Some(3),
                    recordings: &[],
                    waiting: &["bob"],
                },
                r#"{"type":"recordingStarted","id":3,"recordings":[],"waiting":["bob"]}"#,
            ),
            (
                Reply::RecordingStopped {
                    id: None,
                    recordings: &stopped,
                },
                r#"{"type":"recordingStopped","id":null,"recordings":[{"performer":"alice","file":"recordings/take-01-alice.vrma","frames":600},{"performer":"bob","file":null,"frames":0}]}"#,
            ),
            (
                Reply::Calibrated {
                    id: Some(4),
                    performer: "vr",
                    saved: Some("config/bridge.json"),
                    save_error: None,
                },
                r#"{"type":"calibrated","id":4,"performer":"vr","saved":"config/bridge.json","saveError":null}"#,
            ),
            (
                Reply::Status {
                    id: Some(5),
                    status: &status,
                },
                r#"{"type":"status","id":5,"status":{"uptime":12.5,"clients":2}}"#,
            ),
            (
                Reply::Error {
                    id: Some(6),
                    message: "unknown performer `x`",
                },
                r#"{"type":"error","id":6,"message":"unknown performer `x`"}"#,
            ),
        ];
        for (reply, expected) in cases {
            let json = reply.to_json();
            assert_eq!(json, expected);
            let v: serde_json::Value = serde_json::from_str(&json).unwrap();
            assert!(v["type"].is_string() && v.get("id").is_some());
        }
    }
}
