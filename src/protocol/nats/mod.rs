//! What one bridge publishes to NATS for others, as a pure codec: subjects, the
//! binary pose, the binary source points and the JSON status events. No sockets
//! here (`io::inputs::nats` and `io::outputs::nats` move the bytes);
//! `docs/nats.md` is the schema for client authors.
//!
//! Subjects are `<prefix>.<bridge>.<performer>.<kind>`, `kind` one of `pose`,
//! `source` and `status`. The prefix may have dots of its own; the bridge and the
//! performer are one token each (`subject_token`), so the last three tokens of a
//! subject always read back (`Subject::parse`), whatever the prefix. Beside them,
//! `<prefix>.<bridge>.poses` carries every pose of one wake-up of the bridge's
//! output in one message (`bundle`; `bundle_subject`, `parse_bundle_subject`).
//!
//! The pose payload is the WebSocket's binary pose (magic `MBPO`, version 1,
//! little-endian: the performer's name, the frame's sequence number and time, the
//! hips position, the rest hips height, the present bones' normalized rotations,
//! expressions and lookAt), so one reader serves both. What comes in from the
//! network is untrusted: `decode_pose` never panics, bounds every length and
//! number and refuses trailing bytes, with a small `Copy` error per kind.

mod bundle;
mod pose;
mod source;

pub use bundle::{BUNDLE_MAGIC, BUNDLE_VERSION, BundlePoses, BundleWriter, split_bundle};
pub use pose::{DecodeError, decode_pose, encode_pose};
pub use source::{SOURCE_MAGIC, SOURCE_VERSION, Source, decode_source, encode_source};

/// What a message on a subject carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A solved pose (`encode_pose`).
    Pose,
    /// The points the pose was solved from (`encode_source`).
    Source,
    /// A performer appeared or went (`encode_status`, JSON).
    Status,
}

impl Kind {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Pose => "pose",
            Kind::Source => "source",
            Kind::Status => "status",
        }
    }

    fn from_token(token: &str) -> Option<Self> {
        match token {
            "pose" => Some(Kind::Pose),
            "source" => Some(Kind::Source),
            "status" => Some(Kind::Status),
            _ => None,
        }
    }
}

/// The last three tokens of a subject: who published what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Subject<'a> {
    /// The publishing bridge's name (`bridgeName` in its config).
    pub bridge: &'a str,
    /// The performer's subject token (the payload carries the full name).
    pub performer: &'a str,
    pub kind: Kind,
}

impl<'a> Subject<'a> {
    /// Reads `<anything>.<bridge>.<performer>.<kind>`; `None` when the subject has
    /// fewer tokens or its last one is not a kind.
    #[must_use]
    pub fn parse(subject: &'a str) -> Option<Self> {
        let mut tokens = subject.rsplitn(4, '.');
        let kind = Kind::from_token(tokens.next()?)?;
        let performer = tokens.next()?;
        let bridge = tokens.next()?;
        // A prefix is required: three tokens alone are not a bridge's subject.
        tokens.next()?;
        (!bridge.is_empty() && !performer.is_empty()).then_some(Self {
            bridge,
            performer,
            kind,
        })
    }
}

/// `<prefix>.<bridge>.<performer>.<kind>`, the performer made one token.
#[must_use]
pub fn subject(prefix: &str, bridge: &str, performer: &str, kind: Kind) -> String {
    format!(
        "{prefix}.{bridge}.{}.{}",
        subject_token(performer),
        kind.as_str()
    )
}

/// The last token of a bundle's subject.
const BUNDLE_TOKEN: &str = "poses";

/// `<prefix>.<bridge>.poses`: every pose of one wake-up of the bridge's output.
#[must_use]
pub fn bundle_subject(prefix: &str, bridge: &str) -> String {
    format!("{prefix}.{bridge}.{BUNDLE_TOKEN}")
}

/// The publishing bridge of `<anything>.<bridge>.poses`; `None` for any other
/// subject (no per-performer subject ends in `poses`).
#[must_use]
pub fn parse_bundle_subject(subject: &str) -> Option<&str> {
    let mut tokens = subject.rsplitn(3, '.');
    if tokens.next()? != BUNDLE_TOKEN {
        return None;
    }
    let bridge = tokens.next()?;
    // A prefix is required, as for the per-performer subjects.
    let prefix = tokens.next()?;
    (!bridge.is_empty() && !prefix.is_empty()).then_some(bridge)
}

/// A name as one subject token: ASCII letters, digits, `-` and `_` kept, every
/// other character (dots, spaces, wildcards, non-ASCII) turned into `_`.
#[must_use]
pub fn subject_token(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Why a configured prefix (`allow_dots`) or bridge name cannot be used in a
/// subject.
pub fn check_tokens(tokens: &str, allow_dots: bool) -> Result<(), &'static str> {
    if tokens.is_empty() {
        return Err("is empty");
    }
    let bad = |c: char| c.is_whitespace() || c == '*' || c == '>' || (!allow_dots && c == '.');
    if tokens.contains(bad) {
        return Err(if allow_dots {
            "may not hold spaces, `*` or `>`"
        } else {
            "may not hold spaces, dots, `*` or `>`"
        });
    }
    if allow_dots && tokens.split('.').any(str::is_empty) {
        return Err("has an empty token (`..`, or a dot at an end)");
    }
    Ok(())
}

/// A performer appeared (`source`: `humanoid`, `skeleton` or `trackers`) or went
/// (`None`), as the JSON of a `status` message.
#[must_use]
pub fn encode_status(performer: &str, appeared: Option<&str>) -> Vec<u8> {
    let value = match appeared {
        Some(source) => {
            serde_json::json!({"performer": performer, "state": "appeared", "source": source})
        }
        None => serde_json::json!({"performer": performer, "state": "gone"}),
    };
    value.to_string().into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_read_back_whatever_the_prefix() {
        for (prefix, bridge, performer, kind, token) in [
            ("mocap", "stage", "alice", Kind::Pose, "alice"),
            (
                "studio.a.mocap",
                "room-2",
                "bob smith",
                Kind::Source,
                "bob_smith",
            ),
            ("m", "b_1", "a.b*c>", Kind::Status, "a_b_c_"),
            (
                "mocap",
                "stage",
                "\u{e9}l\u{e9}onore",
                Kind::Pose,
                "_l_onore",
            ),
        ] {
            let s = subject(prefix, bridge, performer, kind);
            assert_eq!(s, format!("{prefix}.{bridge}.{token}.{}", kind.as_str()));
            assert_eq!(
                Subject::parse(&s),
                Some(Subject {
                    bridge,
                    performer: token,
                    kind
                }),
                "{s}"
            );
        }
    }

    #[test]
    fn subjects_that_are_not_a_bridge_s_are_refused() {
        for s in [
            "",
            "pose",
            "a.pose",
            "b.a.pose",
            "mocap.b.a.frame",
            "mocap..a.pose",
            "mocap.b..pose",
        ] {
            assert_eq!(Subject::parse(s), None, "{s}");
        }
    }

    #[test]
    fn bundle_subjects_read_back_and_are_no_performer_s() {
        for (prefix, bridge) in [("mocap", "stage"), ("studio.a.mocap", "room-2")] {
            let s = bundle_subject(prefix, bridge);
            assert_eq!(s, format!("{prefix}.{bridge}.poses"));
            assert_eq!(parse_bundle_subject(&s), Some(bridge));
            assert_eq!(Subject::parse(&s), None, "{s}");
        }
        // A performer named `poses` is a performer's subject, not a bundle.
        let performer = subject("mocap", "stage", "poses", Kind::Pose);
        assert_eq!(parse_bundle_subject(&performer), None);
        for s in [
            "poses",
            "b.poses",
            ".b.poses",
            "mocap..poses",
            "mocap.b.pose",
        ] {
            assert_eq!(parse_bundle_subject(s), None, "{s}");
        }
    }

    #[test]
    fn configured_tokens_are_checked() {
        for (tokens, dots, ok) in [
            ("mocap", false, true),
            ("studio.mocap", true, true),
            ("studio.mocap", false, false),
            ("", true, false),
            ("a..b", true, false),
            (".a", true, false),
            ("a b", true, false),
            ("a*", true, false),
            ("a.>", true, false),
        ] {
            assert_eq!(check_tokens(tokens, dots).is_ok(), ok, "{tokens:?}");
        }
    }

    #[test]
    fn status_events_are_json() {
        let appeared: serde_json::Value =
            serde_json::from_slice(&encode_status("a\"b", Some("humanoid"))).unwrap();
        assert_eq!(
            appeared,
            serde_json::json!({"performer": "a\"b", "state": "appeared", "source": "humanoid"})
        );
        let gone: serde_json::Value = serde_json::from_slice(&encode_status("a", None)).unwrap();
        assert_eq!(gone, serde_json::json!({"performer": "a", "state": "gone"}));
    }
}
