//! Why an incoming WebSocket message was rejected: `WsError`, one line naming the
//! JSON field (or byte offset), and the counter each rejection belongs to
//! (`ErrorKind`). Client text quoted in a message is cut short (`quoted`).

use std::fmt;

use super::{MAX_MAGNITUDE, MAX_MESSAGE, POSE_VERSION};
use crate::humanoid::expression::CUSTOM_CAPACITY;
use crate::protocol::frame::{MAX_JOINTS, MAX_NAME};

/// Longest piece of client text (a name, a JSON path) quoted in an error, bytes.
const MAX_QUOTED: usize = 64;

/// Longest parser message kept in an error (it may quote the client's text), bytes.
pub(super) const MAX_PARSER_MESSAGE: usize = 160;

/// Which counter a rejected message belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// Not JSON, a wrong type, a missing or unknown field, an unknown message type.
    Malformed,
    /// Well-formed but out of bounds: non-finite, too large, zero quaternion, a bad name.
    InvalidValue,
    /// Too long a message, too many joints, too big a skeleton.
    Oversize,
}

/// What is wrong with a well-formed value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Problem {
    NotFinite,
    TooLarge,
    ZeroQuaternion,
    /// A performer or skeleton name that is empty or longer than `MAX_NAME` bytes.
    NameLength,
    /// A recording name that is not 1 to `MAX_NAME` of `A-Z a-z 0-9 _ -`.
    RecordingName,
    /// A bone or expression name this schema does not know.
    UnknownName,
    /// More custom expressions than `CUSTOM_CAPACITY` slots.
    NoFreeSlot,
    /// Bits set that this version of the binary layout does not define.
    ReservedBits,
    /// Bytes that should be UTF-8 text and are not.
    NotUtf8,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotFinite => f.write_str("not a finite number"),
            Self::TooLarge => write!(f, "magnitude over {MAX_MAGNITUDE}"),
            Self::ZeroQuaternion => f.write_str("zero quaternion"),
            Self::NameLength => write!(f, "empty or longer than {MAX_NAME} bytes"),
            Self::RecordingName => {
                write!(f, "not 1 to {MAX_NAME} of `A-Z a-z 0-9 _ -`")
            }
            Self::UnknownName => f.write_str("unknown name"),
            Self::NoFreeSlot => {
                write!(f, "more than {CUSTOM_CAPACITY} custom expressions")
            }
            Self::ReservedBits => f.write_str("reserved bits set"),
            Self::NotUtf8 => f.write_str("not UTF-8"),
        }
    }
}

/// Why a message was rejected. One line, naming the JSON field (or byte offset).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WsError {
    #[error("message of {len} bytes is over the {MAX_MESSAGE}-byte limit")]
    Oversize { len: usize },
    #[error("`joints`: {count} joints, more than {MAX_JOINTS}")]
    TooManyJoints { count: usize },
    #[error("the skeleton has {joints} joints, a frame holds at most {MAX_JOINTS}")]
    SkeletonTooBig { joints: usize },
    #[error("{}{message}", field_prefix(.field.as_deref()))]
    Malformed {
        /// The JSON path of the fault (`joints.Hips[3]`), `None` at the top level.
        field: Option<String>,
        message: String,
    },
    #[error("unknown message type `{0}`")]
    UnknownType(String),
    #[error("`{field}`: {problem}")]
    InvalidValue { field: String, problem: Problem },
    #[error("binary pose truncated at byte {at}")]
    Truncated { at: usize },
    #[error("binary pose has {extra} bytes after its end")]
    TrailingBytes { extra: usize },
    #[error("not a binary pose (bad magic)")]
    BadMagic,
    #[error("binary pose version {0}, expected {POSE_VERSION}")]
    UnsupportedVersion(u8),
}

impl WsError {
    /// Which counter this rejection belongs to.
    #[must_use]
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Oversize { .. } | Self::TooManyJoints { .. } | Self::SkeletonTooBig { .. } => {
                ErrorKind::Oversize
            }
            Self::InvalidValue { .. } => ErrorKind::InvalidValue,
            Self::Malformed { .. }
            | Self::UnknownType(_)
            | Self::Truncated { .. }
            | Self::TrailingBytes { .. }
            | Self::BadMagic
            | Self::UnsupportedVersion(_) => ErrorKind::Malformed,
        }
    }
}

/// "`field`: " before a message, or nothing.
fn field_prefix(field: Option<&str>) -> String {
    field.map(|f| format!("`{f}`: ")).unwrap_or_default()
}

pub(super) fn invalid(field: impl Into<String>, problem: Problem) -> WsError {
    WsError::InvalidValue {
        field: field.into(),
        problem,
    }
}

/// `text` cut to at most `MAX_QUOTED` bytes on a character boundary, marked when cut.
pub(super) fn quoted(text: &str) -> String {
    clipped(text, MAX_QUOTED)
}

/// `text` cut to at most `max` bytes on a character boundary, marked when cut.
pub(super) fn clipped(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}
