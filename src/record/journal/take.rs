//! The live take: `Recording`, what the recorder holds per performer while it
//! records, the `.vrma` in memory and its journal on disk; `finish` writes the
//! `.vrma` and only then removes the journal.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::JournalError;
use super::format::JournalHeader;
use super::names::{
    MAX_NUMBER, RecordingNameError, has_vrma_extension, journal_path, numbered, recording_path,
};
use super::recover::{save_vrma, widen};
use super::writer::JournalWriter;
use crate::formats::tracks::Spool;
use crate::formats::vrma::{PushError, VrmaRest, VrmaWriter};
use crate::humanoid::{CustomNames, HumanoidPose};

/// Why a frame pushed onto a `Recording` was not (fully) recorded.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The frame is not in the take (time not after the previous frame, not finite).
    #[error("frame not recorded: {0}")]
    Refused(#[from] PushError),
    /// The frame is in the take, but the journal stopped: from now on the take lives
    /// only in memory. Returned once, by the push or flush that failed.
    #[error("cannot write journal {path}; the take goes on in memory only")]
    Journal {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// Why a recording cannot start or finish.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error(transparent)]
    Name(#[from] RecordingNameError),
    #[error("cannot create the recordings directory {dir}")]
    Dir {
        dir: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot create a spool file for the take in {dir}")]
    Spool {
        dir: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error(transparent)]
    Journal(#[from] JournalError),
    #[error("{base}: that name and every numbered one up to -{MAX_NUMBER} are taken")]
    NoFreeName { base: PathBuf },
    #[error("cannot write {path}; the take is kept in {journal} for `mocap-bridge recover`")]
    Write {
        path: PathBuf,
        journal: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// One performer's take while it records: the `.vrma`'s tracks (their newest chunk
/// in memory, the rest in an unnamed spool file beside the take, so memory stays
/// flat however long the take) and its journal on disk.
#[derive(Debug)]
pub struct Recording {
    /// Where `finish` writes the `.vrma`.
    path: PathBuf,
    journal: JournalWriter,
    writer: VrmaWriter,
    refused: usize,
    span: Option<(f32, f32)>,
    /// Set once a journal write failed (and was reported).
    journal_stopped: bool,
}

/// A take written to disk.
#[derive(Debug, Clone, PartialEq)]
pub struct FinishedRecording {
    /// The `.vrma` written.
    pub path: PathBuf,
    pub frames: usize,
    /// Frames pushed but refused (time not after the previous one, not finite).
    pub refused: usize,
    /// First and last frame time, seconds; `None` for a take without frames.
    pub span: Option<(f32, f32)>,
    /// The journal, when it could not be removed after the `.vrma` was written.
    pub leftover_journal: Option<PathBuf>,
}

impl Recording {
    /// Starts recording `name` (untrusted, see `recording_path`) by `performer` into
    /// `dir` (created when missing), in the T-pose `rest`. A name whose `.vrma` or
    /// journal exists gets the next free number: `take-2.vrma`, ...; `path` tells
    /// which. The journal is created at once, next to the `.vrma`.
    pub fn start(
        dir: &Path,
        name: &str,
        performer: &str,
        rest: VrmaRest,
    ) -> Result<Self, RecordError> {
        let base = recording_path(dir, name)?;
        fs::create_dir_all(dir).map_err(|source| RecordError::Dir {
            dir: dir.to_owned(),
            source,
        })?;
        let animation = if has_vrma_extension(name) {
            &name[..name.len() - ".vrma".len()]
        } else {
            name
        };
        let header = JournalHeader {
            performer: performer.to_owned(),
            animation: animation.to_owned(),
            rest,
            created: SystemTime::now(),
        };
        // The take's tracks wait on its disk, not in memory, until it is written.
        let spool = Spool::new_in(dir).map_err(|source| RecordError::Spool {
            dir: dir.to_owned(),
            source,
        })?;
        for n in 1..=MAX_NUMBER {
            let path = numbered(&base, n);
            if exists(&path) {
                continue;
            }
            match JournalWriter::create(&journal_path(&path), &header) {
                Ok(journal) => {
                    return Ok(Self {
                        path,
                        journal,
                        writer: VrmaWriter::spooled(header.rest, &header.animation, spool),
                        refused: 0,
                        span: None,
                        journal_stopped: false,
                    });
                }
                Err(JournalError::Create { source, .. })
                    if source.kind() == io::ErrorKind::AlreadyExists => {}
                Err(err) => return Err(err.into()),
            }
        }
        Err(RecordError::NoFreeName { base })
    }

    /// Where `finish` will write the `.vrma`.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The journal protecting the take.
    #[must_use]
    pub fn journal_path(&self) -> &Path {
        self.journal.path()
    }

    /// Frames recorded so far.
    #[must_use]
    pub fn frame_count(&self) -> usize {
        self.writer.frame_count()
    }

    /// Bytes of the take's `.vrma` so far (see `VrmaWriter::binary_bytes`).
    #[must_use]
    pub fn binary_bytes(&self) -> u64 {
        self.writer.binary_bytes()
    }

    /// Frames refused so far.
    #[must_use]
    pub fn refused(&self) -> usize {
        self.refused
    }

    /// See `JournalWriter::set_sync`.
    pub fn set_sync(&mut self, sync: bool) {
        self.journal.set_sync(sync);
    }

    /// Records one frame at `time` seconds: into the take, then into the journal. A
    /// refused frame is counted and goes into neither.
    pub fn push(
        &mut self,
        time: f32,
        pose: &HumanoidPose,
        custom: &CustomNames,
    ) -> Result<(), FrameError> {
        if let Err(err) = self.writer.push(time, pose, custom) {
            self.refused += 1;
            return Err(err.into());
        }
        widen(&mut self.span, time);
        if self.journal_stopped {
            return Ok(());
        }
        let appended = self.journal.append(time, pose, custom);
        self.journal_result(appended)
    }

    /// Writes the journaled frames to disk; see `JournalWriter::flush`. Does nothing
    /// once the journal has stopped.
    pub fn flush(&mut self) -> Result<(), FrameError> {
        if self.journal_stopped {
            return Ok(());
        }
        let flushed = self.journal.flush();
        self.journal_result(flushed)
    }

    /// Whether a `flush` has frames to write (see `JournalWriter::has_unflushed`).
    #[must_use]
    pub fn has_unflushed(&self) -> bool {
        !self.journal_stopped && self.journal.has_unflushed()
    }

    /// Writes the `.vrma` (through a temporary file, synced and renamed), then
    /// removes the journal. If something else took `path` meanwhile, the next free
    /// number is used. On error the journal stays, for `mocap-bridge recover`.
    pub fn finish(mut self) -> Result<FinishedRecording, RecordError> {
        // Every frame into the journal first, so a failed write below loses none.
        // A journal that fails now only matters if the write fails too.
        let _ = self.flush();
        let journal = self.journal.path().to_owned();
        let own = &self.path;
        let Some(path) = (1..=MAX_NUMBER)
            .map(|n| numbered(own, n))
            .find(|p| !exists(p) && (p == own || !exists(&journal_path(p))))
        else {
            return Err(RecordError::NoFreeName { base: own.clone() });
        };
        save_vrma(&self.writer, &path).map_err(|source| RecordError::Write {
            path: path.clone(),
            journal: journal.clone(),
            source,
        })?;
        drop(self.journal);
        let leftover_journal = fs::remove_file(&journal).err().map(|_| journal);
        Ok(FinishedRecording {
            path,
            frames: self.writer.frame_count(),
            refused: self.refused,
            span: self.span,
            leftover_journal,
        })
    }

    /// Ends a take that has no frame: nothing is written (a `.vrma` without frames
    /// animates nothing) and the journal is removed. Returns the journal when it
    /// could not be removed.
    #[must_use]
    pub fn discard(self) -> Option<PathBuf> {
        let journal = self.journal.path().to_owned();
        drop(self.journal);
        fs::remove_file(&journal).err().map(|_| journal)
    }

    fn journal_result(&mut self, result: io::Result<()>) -> Result<(), FrameError> {
        result.map_err(|source| {
            self.journal_stopped = true;
            FrameError::Journal {
                path: self.journal.path().to_owned(),
                source,
            }
        })
    }
}

/// Whether anything (even a dangling link) is at `path`.
fn exists(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::journal::recover;
    use crate::record::journal::test_support::take;

    #[test]
    fn a_recording_dropped_without_finish_keeps_every_frame_in_its_journal() {
        let dir = tempfile::tempdir().unwrap();
        let mut recording =
            Recording::start(dir.path(), "take", "Ai", VrmaRest::standard(0.9)).unwrap();
        for (t, pose, names) in take(13) {
            recording.push(t, &pose, &names).unwrap();
        }
        let journal = recording.journal_path().to_owned();
        drop(recording);
        assert_eq!(recover(&journal).unwrap().frames, 13);
    }

    #[test]
    fn recordings_are_numbered_never_overwritten_and_finish_removes_the_journal() {
        let dir = tempfile::tempdir().unwrap();
        let rest = VrmaRest::standard(0.9);
        fs::write(dir.path().join("take.vrma"), b"an earlier take").unwrap();
        let mut first = Recording::start(dir.path(), "take", "Ai", rest.clone()).unwrap();
        let second = Recording::start(dir.path(), "take.vrma", "Bo", rest.clone()).unwrap();
        assert_eq!(first.path(), dir.path().join("take-2.vrma"));
        assert_eq!(first.journal_path(), dir.path().join("take-2.vrma.journal"));
        assert_eq!(second.path(), dir.path().join("take-3.vrma"));

        for (t, pose, names) in take(5) {
            first.push(t, &pose, &names).unwrap();
        }
        let done = first.finish().unwrap();
        assert_eq!(done.path, dir.path().join("take-2.vrma"));
        assert_eq!((done.frames, done.refused), (5, 0));
        assert_eq!(done.span, Some((0.0, 4.0 / 60.0)));
        assert_eq!(done.leftover_journal, None);
        let read = crate::formats::vrma::load(&done.path, None).unwrap();
        assert_eq!(read.frame_times().len(), 5);
        assert_eq!(read.name.as_deref(), Some("take"));

        let mut files: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        assert_eq!(files, ["take-2.vrma", "take-3.vrma.journal", "take.vrma"]);
        assert_eq!(
            fs::read(dir.path().join("take.vrma")).unwrap(),
            b"an earlier take"
        );
        assert!(matches!(
            Recording::start(dir.path(), "../take", "Ai", rest),
            Err(RecordError::Name(RecordingNameError::Separator(_)))
        ));
        drop(second);
    }

    #[test]
    fn a_discarded_recording_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let recording =
            Recording::start(dir.path(), "take", "Ai", VrmaRest::standard(0.9)).unwrap();
        assert!(recording.journal_path().exists());
        assert_eq!(recording.discard(), None);
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn finish_takes_the_next_free_name_when_its_own_was_taken_meanwhile() {
        let dir = tempfile::tempdir().unwrap();
        let recording = Recording::start(
            &dir.path().join("new"),
            "take",
            "Ai",
            VrmaRest::standard(0.9),
        )
        .unwrap();
        fs::write(dir.path().join("new/take.vrma"), b"someone else").unwrap();
        let done = recording.finish().unwrap();
        assert_eq!(done.path, dir.path().join("new/take-2.vrma"));
        assert_eq!(done.frames, 0);
        assert!(!dir.path().join("new/take.vrma.journal").exists());
        assert_eq!(
            fs::read(dir.path().join("new/take.vrma")).unwrap(),
            b"someone else"
        );
    }
}
