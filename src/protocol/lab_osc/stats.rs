//! What lab OSC decoding counts: `LabStats`, per datagram and summed per stream,
//! and `Refusal`, why one message was dropped.

/// Why one message was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Refusal {
    Malformed,
    NotFinite,
    OutOfRange,
    ZeroRotation,
}

/// What one datagram (or, summed with `+=`, a stream) held, counted by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LabStats {
    /// Frames completed and handed on.
    pub frames: u32,
    /// Frame parts accepted (datagrams, for one part per datagram).
    pub parts: u32,
    /// Joint rotations read into frames.
    pub joints: u32,
    /// Broken OSC framing: garbage datagrams, truncated bundles and elements.
    pub broken: u32,
    /// Messages with missing, extra, wrongly typed or cut-short arguments, and
    /// headers with a bad subject name, a negative frame number, a part outside
    /// its count or a part count other than their frame's.
    pub malformed: u32,
    /// Values that are NaN or infinite.
    pub not_finite: u32,
    /// Values too large to be a pose: positions past 10 km, quaternions longer
    /// than 10⁶, Euler angles past 32 turns.
    pub out_of_range: u32,
    /// Quaternions too short to normalize.
    pub zero_rotations: u32,
    /// Joint messages naming no joint of the subject's skeleton.
    pub unknown_joints: u32,
    /// Headers naming a subject no skeleton is given for.
    pub unknown_subjects: u32,
    /// Messages at addresses the schema does not define.
    pub ignored: u32,
    /// Root and joint messages with no header before them in their datagram.
    pub orphaned: u32,
    /// Parts received twice, parts of frames already complete and late parts of
    /// recent frames older than the newest (not a sender restarting).
    pub stale_parts: u32,
    /// Frames given up with parts missing, when a newer frame began.
    pub incomplete_frames: u32,
    /// Subjects forgotten (the least recently seen) to make room for a new one.
    pub evicted_subjects: u32,
}

impl LabStats {
    pub(super) fn refused(&mut self, refusal: Refusal) {
        match refusal {
            Refusal::Malformed => self.malformed += 1,
            Refusal::NotFinite => self.not_finite += 1,
            Refusal::OutOfRange => self.out_of_range += 1,
            Refusal::ZeroRotation => self.zero_rotations += 1,
        }
    }

    /// Everything dropped, of every kind.
    #[must_use]
    pub fn dropped(&self) -> u32 {
        self.broken
            + self.malformed
            + self.not_finite
            + self.out_of_range
            + self.zero_rotations
            + self.unknown_joints
            + self.unknown_subjects
            + self.orphaned
            + self.stale_parts
            + self.incomplete_frames
    }
}

impl std::ops::AddAssign for LabStats {
    fn add_assign(&mut self, o: Self) {
        self.frames += o.frames;
        self.parts += o.parts;
        self.joints += o.joints;
        self.broken += o.broken;
        self.malformed += o.malformed;
        self.not_finite += o.not_finite;
        self.out_of_range += o.out_of_range;
        self.zero_rotations += o.zero_rotations;
        self.unknown_joints += o.unknown_joints;
        self.unknown_subjects += o.unknown_subjects;
        self.ignored += o.ignored;
        self.orphaned += o.orphaned;
        self.stale_parts += o.stale_parts;
        self.incomplete_frames += o.incomplete_frames;
        self.evicted_subjects += o.evicted_subjects;
    }
}
