//! The recorder's crash-safe side: recording file names, the append-only journal
//! written while a take runs, the `Recording` a live recorder holds per performer,
//! and recovery of a journal left behind by a crash into the `.vrma` it stood for.
//!
//! While recording, every accepted frame goes both into a `VrmaWriter` in memory and,
//! encoded, into `<take>.vrma.journal` next to where `<take>.vrma` will be written.
//! `JournalWriter` buffers records in one reusable `Vec<u8>` and writes them out on
//! `flush` (the recorder flushes every journal with unflushed frames twice per
//! `DEFAULT_FLUSH_INTERVAL`), so a killed process loses at most the frames since the
//! last flush: never more than that interval.
//! `Recording::finish` writes the `.vrma` (temporary file, synced, renamed) and only
//! then removes the journal. `recover` reads a journal back and pushes its frames
//! into a `VrmaWriter` exactly as the live recorder did; past a torn or corrupt
//! record, or a damaged header, it keeps every later record whose own checksum
//! holds, and says what it left out.
//!
//! Recording names come from the network, so `recording_path` accepts only a plain
//! file name; a name already taken (a `.vrma` or a live journal) gets the next free
//! number (`take.vrma`, `take-2.vrma`, `take-3.vrma`, ...): a recording is never
//! overwritten, and a performer who records twice under one name keeps both takes.
//!
//! Files: `names` (recording and journal file names), `format` (the journal's
//! bytes, its byte layout in that file's header), `writer` (`JournalWriter`),
//! `reader` (`JournalReader`), `recover` (a journal back into a `.vrma`), `salvage`
//! (the good records of a damaged journal), `take` (`Recording`, the live take).

mod format;
mod names;
mod reader;
mod recover;
mod salvage;
mod take;
#[cfg(test)]
mod test_support;
mod writer;

use std::io;
use std::path::PathBuf;

pub use format::{JournalHeader, MAGIC, VERSION};
pub use names::{
    JOURNAL_SUFFIX, MAX_NAME_BYTES, RecordingNameError, has_vrma_extension, journal_path,
    recording_path, vrma_path_for_journal,
};
pub use reader::{JournalEnd, JournalReader, TailDefect, TailProblem};
pub use recover::{Recovered, recover, save_vrma};
pub use salvage::Skipped;
pub use take::{FinishedRecording, FrameError, RecordError, Recording};
pub use writer::{DEFAULT_FLUSH_INTERVAL, JournalWriter};

/// Why a journal cannot be written or read. Messages name the file and, for a bad
/// journal, the byte offset.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("cannot create journal {path}")]
    Create {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot write journal {path}")]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot read {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{path}: byte 0: the file is empty, so no journal header was written")]
    Empty { path: PathBuf },
    #[error("{path}: byte 0: not a mocap-bridge journal (bad magic)")]
    BadMagic { path: PathBuf },
    #[error(
        "{path}: byte 8: journal version {found} is not supported (this build reads {VERSION})"
    )]
    Version { path: PathBuf, found: u16 },
    #[error("{path}: byte {at}: the journal header is cut short")]
    ShortHeader { path: PathBuf, at: u64 },
    #[error("{path}: byte {at}: the journal header is corrupt (checksum mismatch)")]
    HeaderChecksum { path: PathBuf, at: u64 },
    #[error("{path}: byte {at}: bad journal header: {what}")]
    BadHeader {
        path: PathBuf,
        at: u64,
        what: &'static str,
    },
}
