//! `JournalWriter`: one take's journal written while it records, the header at
//! once, then a record per frame, buffered and written out on `flush`.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::JournalError;
use super::format::{
    JournalHeader, KIND_FRAME, KIND_NAMES, MAX_FRAME_RECORD, MAX_RECORD, begin_record,
    encode_frame, encode_header, end_record, put_str,
};
use crate::humanoid::expression::CUSTOM_CAPACITY;
use crate::humanoid::{CustomNames, HumanoidPose};

/// The most of a take a crash may lose unless configured otherwise: the recorder
/// flushes every journal with unflushed frames twice per interval, so no frame
/// waits longer than half of it (plus the write) to reach the file.
pub const DEFAULT_FLUSH_INTERVAL: Duration = Duration::from_millis(100);

/// Buffered bytes past which `append` writes them out without waiting for `flush`.
const WRITE_THRESHOLD: usize = 1 << 16;

/// Writes one take's journal: the header at once, then a record per frame.
///
/// `append` runs on the recorder task every frame: it encodes into one reusable
/// buffer and, once warmed up, never allocates (a custom names record may, when the
/// performer's `CustomNames` changes). If a write fails, the file may end in a torn
/// record; the writer then refuses further records, since none after the tear could
/// be recovered. Dropping the writer writes out what is buffered.
#[derive(Debug)]
pub struct JournalWriter {
    file: File,
    path: PathBuf,
    /// Encoded records not yet written to the file.
    buffer: Vec<u8>,
    /// The custom names as last journaled, slot order.
    names: Vec<String>,
    /// Records appended since the last flush (written out or still buffered).
    dirty: bool,
    /// Whether `flush` also calls `sync_data`.
    sync: bool,
    failed: bool,
}

impl JournalWriter {
    /// Creates the journal at `path` (never over an existing file) and writes its
    /// header through to the file.
    pub fn create(path: &Path, header: &JournalHeader) -> Result<Self, JournalError> {
        let create_error = |source| JournalError::Create {
            path: path.to_owned(),
            source,
        };
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(create_error)?;
        let mut writer = Self {
            file,
            path: path.to_owned(),
            buffer: Vec::with_capacity(WRITE_THRESHOLD + MAX_FRAME_RECORD),
            names: Vec::with_capacity(CUSTOM_CAPACITY),
            dirty: false,
            sync: false,
            failed: false,
        };
        let written = match encode_header(&mut writer.buffer, header) {
            Ok(()) => writer.flush().map_err(|source| JournalError::Write {
                path: path.to_owned(),
                source,
            }),
            Err(source) => Err(create_error(source)),
        };
        if written.is_err() {
            // A journal without its header could never be recovered.
            let _ = fs::remove_file(path);
        }
        written.map(|()| writer)
    }

    /// The journal's path.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether `flush` also asks the OS to put the data on disk (`sync_data`): off by
    /// default, since a killed process loses nothing the OS has; on survives a power
    /// cut too, at the cost of a disk round trip per flush.
    pub fn set_sync(&mut self, sync: bool) {
        self.sync = sync;
    }

    /// Appends one frame at `time` seconds, preceded by a custom names record when
    /// `custom` differs from the names journaled so far. Written out by `flush`, or
    /// here once the buffer passes 64 KiB.
    pub fn append(
        &mut self,
        time: f32,
        pose: &HumanoidPose,
        custom: &CustomNames,
    ) -> io::Result<()> {
        if self.failed {
            return Err(stopped());
        }
        if self.names_changed(custom) {
            self.append_names(custom)?;
        }
        let start = begin_record(&mut self.buffer, KIND_FRAME);
        encode_frame(&mut self.buffer, time, pose);
        end_record(&mut self.buffer, start);
        self.dirty = true;
        if self.buffer.len() >= WRITE_THRESHOLD {
            self.write_buffered()?;
        }
        Ok(())
    }

    /// Writes every buffered record to the file (and syncs it when `set_sync` asked).
    pub fn flush(&mut self) -> io::Result<()> {
        self.write_buffered()?;
        if self.sync
            && let Err(err) = self.file.sync_data()
        {
            self.failed = true;
            return Err(err);
        }
        self.dirty = false;
        Ok(())
    }

    /// Whether records were appended since the last flush.
    #[must_use]
    pub fn has_unflushed(&self) -> bool {
        self.dirty
    }

    fn write_buffered(&mut self) -> io::Result<()> {
        if self.failed {
            return Err(stopped());
        }
        let written = self.file.write_all(&self.buffer);
        self.buffer.clear();
        if written.is_err() {
            self.failed = true;
        }
        written
    }

    fn names_changed(&self, custom: &CustomNames) -> bool {
        (0..CUSTOM_CAPACITY)
            .any(|slot| custom.name(slot) != self.names.get(slot).map(String::as_str))
    }

    fn append_names(&mut self, custom: &CustomNames) -> io::Result<()> {
        self.names.clear();
        self.names.extend(
            (0..CUSTOM_CAPACITY)
                .map_while(|slot| custom.name(slot))
                .map(str::to_owned),
        );
        let start = begin_record(&mut self.buffer, KIND_NAMES);
        // At most CUSTOM_CAPACITY (16) names.
        self.buffer.push(self.names.len() as u8);
        for name in &self.names {
            put_str(&mut self.buffer, name);
        }
        if self.buffer.len() - start > MAX_RECORD as usize {
            // Later frames would use slots whose names the journal lacks: stop here.
            self.buffer.truncate(start);
            self.failed = true;
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "custom expression names too long for a journal record",
            ));
        }
        end_record(&mut self.buffer, start);
        Ok(())
    }
}

impl Drop for JournalWriter {
    /// Writes out what is buffered (no sync), as `BufWriter` does: a writer dropped
    /// without a crash loses nothing. Errors are ignored; the journal then ends at
    /// the last good record.
    fn drop(&mut self) {
        if !self.failed && !self.buffer.is_empty() {
            let _ = self.write_buffered();
        }
    }
}

fn stopped() -> io::Error {
    io::Error::other("an earlier write to this journal failed; the journal ends there")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::journal::test_support::{header, read_all, take};

    #[test]
    fn appended_frames_reach_the_file_on_flush() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.journal");
        let mut writer = JournalWriter::create(&path, &header()).unwrap();
        let header_len = fs::metadata(&path).unwrap().len();
        let frames = take(3);
        for (t, pose, names) in &frames {
            writer.append(*t, pose, names).unwrap();
        }
        assert_eq!(fs::metadata(&path).unwrap().len(), header_len);
        writer.set_sync(true);
        writer.flush().unwrap();
        let (got, _) = read_all(&fs::read(&path).unwrap());
        assert_eq!(got.len(), 3);
        assert!(matches!(
            JournalWriter::create(&path, &header()),
            Err(JournalError::Create { source, .. }) if source.kind() == io::ErrorKind::AlreadyExists
        ));
    }

    #[test]
    fn frames_are_unflushed_from_their_append_to_the_next_flush() {
        let dir = tempfile::tempdir().unwrap();
        let mut writer = JournalWriter::create(&dir.path().join("t.journal"), &header()).unwrap();
        assert!(!writer.has_unflushed(), "the header is written at once");
        writer
            .append(0.0, &HumanoidPose::default(), &CustomNames::default())
            .unwrap();
        assert!(writer.has_unflushed());
        writer.flush().unwrap();
        assert!(!writer.has_unflushed());
    }
}
