//! Growing keyframe buffers for writers that take frames as they come (`vrma`,
//! `ext_humanoid`): the checks every appended frame passes, and one float `Track`
//! per channel where a channel that first appears late holds its rest value in the
//! earlier frames and a frame that lacks it repeats its last value.
//!
//! A track keeps its floats in memory, or, given a `Spool`, keeps only its newest
//! floats in memory and moves each full chunk to the spool file: a take recorded
//! for an hour holds the same few megabytes as one recorded for a minute, and the
//! file is written by reading the chunks back in order.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::OnceLock;

use crate::humanoid::HumanoidPose;

/// Floats a spooled track keeps in memory before it moves them to the spool:
/// 48 KiB, a whole number of elements of every width used (1, 3, 4).
const CHUNK: usize = 12 * 1024;

/// Why a frame was not appended.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum PushError {
    #[error("frame time {time} s is not after the previous frame's {previous} s")]
    TimeNotIncreasing { time: f32, previous: f32 },
    #[error("frame at {0} s holds a value that is not finite")]
    NotFinite(f32),
}

/// Checks a frame before it is appended after the frame at `last` (none for the
/// first frame): a finite time after the last one, a finite hips position and
/// finite rotations.
pub fn check_frame(last: &[f32], time: f32, pose: &HumanoidPose) -> Result<(), PushError> {
    if !time.is_finite() || !pose.hips_position.is_finite() {
        return Err(PushError::NotFinite(time));
    }
    if let Some(&previous) = last.last()
        && time <= previous
    {
        return Err(PushError::TimeNotIncreasing { time, previous });
    }
    if pose.bones().any(|(_, q)| !q.is_finite()) {
        return Err(PushError::NotFinite(time));
    }
    Ok(())
}

/// Appends one frame to a channel's track, `rest.len()` floats per frame, when
/// `frames` frames were appended before this one. `value` is this frame's value, if
/// the frame has one; the track is created (back-filled with `rest`) when it first
/// gets a value, and repeats its last value when a frame has none.
pub fn record(
    track: &mut Option<Track>,
    frames: usize,
    rest: &[f32],
    value: Option<&[f32]>,
    spool: Option<&Spool>,
) {
    match (value, track) {
        (Some(v), Some(track)) => track.push(v, spool),
        (Some(v), track @ None) => {
            let mut values = Track::new(rest.len());
            for _ in 0..frames {
                values.push(rest, spool);
            }
            values.push(v, spool);
            *track = Some(values);
        }
        (None, Some(track)) => track.repeat_last(spool),
        (None, None) => {}
    }
}

/// An unnamed temporary file that spooled tracks move their full chunks to. The
/// system removes it when it is closed, or when the process ends however it ends,
/// so a crash leaves nothing behind (the journal is what survives a crash).
#[derive(Debug)]
pub struct Spool {
    file: File,
    /// Why the spool stopped taking chunks, once a write failed: from then on the
    /// tracks keep their floats in memory.
    failed: OnceLock<String>,
}

impl Spool {
    /// A spool in `dir` (the folder the take is written to, so that it shares its
    /// disk).
    pub fn new_in(dir: &Path) -> io::Result<Self> {
        Ok(Self {
            file: tempfile::tempfile_in(dir)?,
            failed: OnceLock::new(),
        })
    }

    /// Why the spool stopped taking chunks, if it did.
    #[must_use]
    pub fn failure(&self) -> Option<&str> {
        self.failed.get().map(String::as_str)
    }

    /// Appends `floats` at the end of the file; returns where they start, or `None`
    /// when the spool cannot take them (they then stay in memory).
    fn append(&self, floats: &[f32]) -> Option<u64> {
        if self.failed.get().is_some() {
            return None;
        }
        let mut bytes = Vec::with_capacity(floats.len() * 4);
        for f in floats {
            bytes.extend_from_slice(&f.to_le_bytes());
        }
        let mut file = &self.file;
        let written = file
            .seek(SeekFrom::End(0))
            .and_then(|at| file.write_all(&bytes).map(|()| at));
        match written {
            Ok(at) => Some(at),
            Err(e) => {
                let _ = self.failed.set(e.to_string());
                None
            }
        }
    }

    /// Reads `count` floats starting at byte `at` into `out`.
    fn read(&self, at: u64, out: &mut Vec<f32>, count: usize) -> io::Result<()> {
        let mut bytes = vec![0u8; count * 4];
        let mut file = &self.file;
        file.seek(SeekFrom::Start(at))?;
        file.read_exact(&mut bytes)?;
        out.clear();
        out.extend(
            bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        );
        Ok(())
    }
}

/// One channel's floats, `width` per frame: in memory, or, when pushed with a
/// spool, in the spool but for the newest chunk.
#[derive(Debug, Clone)]
pub struct Track {
    width: usize,
    /// Chunks moved to the spool, in order: byte offset and float count.
    spooled: Vec<(u64, usize)>,
    spooled_len: usize,
    /// The floats after the spooled ones; never empty once a value was pushed.
    tail: Vec<f32>,
    /// The first element, once pushed.
    first: Vec<f32>,
}

impl Track {
    /// An empty track of `width` floats per frame.
    #[must_use]
    pub fn new(width: usize) -> Self {
        Self {
            width,
            spooled: Vec::new(),
            spooled_len: 0,
            tail: Vec::new(),
            first: Vec::new(),
        }
    }

    /// Floats in the track (frames times width).
    #[must_use]
    pub fn len(&self) -> usize {
        self.spooled_len + self.tail.len()
    }

    /// Whether nothing was pushed.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The first frame's floats (empty before the first push).
    #[must_use]
    pub fn first(&self) -> &[f32] {
        &self.first
    }

    /// The last frame's floats (empty before the first push).
    #[must_use]
    pub fn last(&self) -> &[f32] {
        &self.tail[self.tail.len().saturating_sub(self.width)..]
    }

    /// Appends one frame's floats (`width` of them).
    pub fn push(&mut self, value: &[f32], spool: Option<&Spool>) {
        debug_assert_eq!(value.len(), self.width);
        if self.first.is_empty() {
            self.first.extend_from_slice(value);
        }
        self.tail.extend_from_slice(value);
        self.spill(spool);
    }

    /// Appends the last frame's floats again.
    pub fn repeat_last(&mut self, spool: Option<&Spool>) {
        let start = self.tail.len().saturating_sub(self.width);
        self.tail.extend_from_within(start..);
        self.spill(spool);
    }

    /// Moves a full chunk to the spool, keeping at least the last frame in memory.
    fn spill(&mut self, spool: Option<&Spool>) {
        let Some(spool) = spool else { return };
        if self.tail.len() <= CHUNK {
            return;
        }
        if let Some(at) = spool.append(&self.tail[..CHUNK]) {
            self.spooled.push((at, CHUNK));
            self.spooled_len += CHUNK;
            self.tail.drain(..CHUNK);
        }
    }

    /// Hands every float, in order, to `each`, a chunk at a time: the spooled
    /// chunks read back from `spool`, then the ones in memory.
    pub fn for_each_chunk(
        &self,
        spool: Option<&Spool>,
        mut each: impl FnMut(&[f32]) -> io::Result<()>,
    ) -> io::Result<()> {
        if !self.spooled.is_empty() {
            let spool =
                spool.ok_or_else(|| io::Error::other("a spooled track without its spool"))?;
            let mut chunk = Vec::with_capacity(CHUNK);
            for &(at, count) in &self.spooled {
                spool.read(at, &mut chunk, count)?;
                each(&chunk)?;
            }
        }
        each(&self.tail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn floats(track: &Track, spool: Option<&Spool>) -> Vec<f32> {
        let mut all = Vec::new();
        track
            .for_each_chunk(spool, |chunk| {
                all.extend_from_slice(chunk);
                Ok(())
            })
            .unwrap();
        all
    }

    #[test]
    fn late_channels_are_back_filled_and_gaps_repeat() {
        let mut track = None;
        record(&mut track, 0, &[0.0], None, None);
        record(&mut track, 1, &[0.0], Some(&[5.0]), None);
        record(&mut track, 2, &[0.0], None, None);
        record(&mut track, 3, &[0.0], Some(&[7.0]), None);
        let track = track.unwrap();
        assert_eq!(floats(&track, None), [0.0, 5.0, 5.0, 7.0]);
        assert_eq!((track.first(), track.last()), (&[0.0][..], &[7.0][..]));
    }

    #[test]
    fn a_spooled_track_holds_the_same_floats_in_a_chunk_of_memory() {
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::new_in(dir.path()).unwrap();
        let (mut spooled, mut in_memory) = (None, None);
        let frames = 3 * CHUNK / 4 + 17;
        for i in 0..frames {
            // A channel that appears late, and gaps that repeat.
            let value = [i as f32, 1.0, 2.0, -(i as f32)];
            let value = (i > 100 && i % 7 != 0).then_some(&value[..]);
            record(&mut spooled, i, &[0.0; 4], value, Some(&spool));
            record(&mut in_memory, i, &[0.0; 4], value, None);
        }
        let (spooled, in_memory) = (spooled.unwrap(), in_memory.unwrap());
        assert_eq!(spooled.len(), frames * 4);
        assert!(
            spooled.tail.len() <= CHUNK,
            "{} floats in memory",
            spooled.tail.len()
        );
        assert_eq!(floats(&spooled, Some(&spool)), floats(&in_memory, None));
        assert_eq!(spooled.last(), in_memory.last());
        assert!(spool.failure().is_none());
    }

    #[test]
    fn frames_must_move_forward_and_be_finite() {
        let pose = HumanoidPose::default();
        assert!(check_frame(&[1.0], 2.0, &pose).is_ok());
        assert!(matches!(
            check_frame(&[1.0], 1.0, &pose),
            Err(PushError::TimeNotIncreasing { .. })
        ));
        assert!(matches!(
            check_frame(&[], f32::NAN, &pose),
            Err(PushError::NotFinite(_))
        ));
    }
}
