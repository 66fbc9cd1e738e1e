//! Recovery: a journal left behind by a crash read back into the `.vrma` it
//! stood for, every frame pushed into a `VrmaWriter` exactly as the live recorder
//! did (`recover`), and `save_vrma`, which writes a `.vrma` whole or not at all.

use crate::formats::glb::GlbFile;
use std::fs::{self, File};
use std::io::{self, BufWriter, Read};
use std::path::{Path, PathBuf};

use super::JournalError;
use super::format::JournalHeader;
use super::reader::{JournalEnd, JournalReader, TailDefect};
use crate::formats::vrma::VrmaWriter;
use crate::humanoid::CustomNames;

impl<R: Read> JournalReader<R> {
    /// Pushes every frame into a `VrmaWriter` in the header's rest, under the
    /// custom names journaled with them, as the live recorder did.
    pub fn recover(mut self) -> Result<Recovered, JournalError> {
        let mut writer = VrmaWriter::new(self.header.rest.clone(), &self.header.animation);
        let (mut refused, mut span) = (0, None);
        while let Some((time, pose)) = self.next_frame()? {
            match writer.push(time, &pose, &self.custom_names) {
                Ok(()) => widen(&mut span, time),
                Err(_) => refused += 1,
            }
        }
        let end = self.end.unwrap_or(JournalEnd {
            dropped_tail_bytes: 0,
            defect: None,
        });
        Ok(Recovered {
            frames: writer.frame_count(),
            writer,
            header: self.header,
            custom_names: self.custom_names,
            refused,
            span,
            dropped_tail_bytes: end.dropped_tail_bytes,
            defect: end.defect,
        })
    }
}

/// A take read back from its journal.
#[derive(Debug)]
pub struct Recovered {
    pub header: JournalHeader,
    /// Every recovered frame, ready to `save_vrma`.
    pub writer: VrmaWriter,
    /// The custom names in force at the last frame.
    pub custom_names: CustomNames,
    /// Frames in `writer`.
    pub frames: usize,
    /// Frames the writer refused (time not after the previous one, not finite);
    /// always 0 for a journal written by `Recording`, which journals accepted frames.
    pub refused: usize,
    /// First and last frame time, seconds; `None` when no frame was recovered.
    pub span: Option<(f32, f32)>,
    /// Bytes of torn or corrupt tail after the last good record, dropped.
    pub dropped_tail_bytes: u64,
    /// What was wrong at the end, when the file did not end on a record boundary.
    pub defect: Option<TailDefect>,
}

/// Reads the journal at `path` into a `VrmaWriter`: every frame up to the first torn
/// or corrupt record (reported in `Recovered`, never an error); errors only for a
/// file that is not a readable journal.
pub fn recover(path: &Path) -> Result<Recovered, JournalError> {
    JournalReader::open(path)?.recover()
}

/// Writes `writer` to `path` through `path.partial` in the same directory, synced,
/// then renamed over `path`: a crash leaves the whole file or none of it.
pub fn save_vrma(writer: &VrmaWriter, path: &Path) -> io::Result<()> {
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    let partial = PathBuf::from(partial);
    let saved = write_and_rename(writer, &partial, path);
    if saved.is_err() {
        // Gone already when the rename happened; nothing else to do on failure.
        let _ = fs::remove_file(&partial);
    }
    saved
}

fn write_and_rename(writer: &VrmaWriter, partial: &Path, path: &Path) -> io::Result<()> {
    let mut out = BufWriter::with_capacity(1 << 20, File::create(partial)?);
    writer.write_to(&mut out)?;
    out.into_inner()
        .map_err(io::IntoInnerError::into_error)?
        .sync_all()?;
    fs::rename(partial, path)?;
    sync_dir(path)
}

/// Makes a rename in `path`'s directory durable.
#[cfg(unix)]
fn sync_dir(path: &Path) -> io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    File::open(dir)?.sync_all()
}

#[cfg(not(unix))]
fn sync_dir(_path: &Path) -> io::Result<()> {
    Ok(())
}

pub(super) fn widen(span: &mut Option<(f32, f32)>, time: f32) {
    *span = Some(span.map_or((time, time), |(first, _)| (first, time)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::glb::GlbFile;
    use crate::formats::vrma::VrmaRest;
    use crate::record::journal::Recording;
    use crate::record::journal::test_support::{header, take};

    #[test]
    fn recovery_pushes_frames_as_the_live_recorder_did() {
        let dir = tempfile::tempdir().unwrap();
        let rest = header().rest;
        let mut recording = Recording::start(dir.path(), "take 7", "Ai", rest.clone()).unwrap();
        let mut live = VrmaWriter::new(rest, "take 7");
        let mut frames = take(30);
        frames[9].0 = frames[8].0; // time not moving forward: refused
        frames[15].0 = f32::NAN; // refused
        for (i, (t, pose, names)) in frames.iter().enumerate() {
            let pushed = recording.push(*t, pose, names);
            assert_eq!(pushed.is_err(), matches!(i, 9 | 15), "frame {i}");
            assert_eq!(live.push(*t, pose, names).is_err(), matches!(i, 9 | 15));
            if i % 4 == 0 {
                recording.flush().unwrap();
            }
        }
        recording.flush().unwrap();
        assert_eq!(recording.refused(), 2);
        let journal = recording.journal_path().to_owned();
        std::mem::forget(recording); // killed: no finish, no drop

        let recovered = recover(&journal).unwrap();
        assert_eq!(recovered.frames, 28);
        assert_eq!(recovered.refused, 0);
        assert_eq!(recovered.span, Some((0.0, 29.0 / 60.0)));
        assert_eq!((recovered.dropped_tail_bytes, recovered.defect), (0, None));
        assert_eq!(recovered.header.performer, "Ai");
        assert_eq!(recovered.header.animation, "take 7");
        assert_eq!(recovered.writer.to_bytes(), live.to_bytes());
    }

    #[test]
    fn a_crash_loses_only_the_frames_after_the_last_flush() {
        let dir = tempfile::tempdir().unwrap();
        let mut recording =
            Recording::start(dir.path(), "take", "Ai", VrmaRest::standard(0.9)).unwrap();
        for (i, (t, pose, names)) in take(13).iter().enumerate() {
            recording.push(*t, pose, names).unwrap();
            if i == 9 {
                recording.flush().unwrap();
            }
        }
        let journal = recording.journal_path().to_owned();
        std::mem::forget(recording); // killed: no drop
        assert_eq!(recover(&journal).unwrap().frames, 10);
    }
}
