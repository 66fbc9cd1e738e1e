//! `record`: what a VMC sender streams, into a `.vrma`, with the same append-only
//! journal beside it as the live recorder's (`record::journal`), so a killed
//! `record` leaves a take `recover` rebuilds.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use mocap_bridge::formats::tracks::Spool;
use mocap_bridge::formats::vrma::{VrmaRest, VrmaWriter};
use mocap_bridge::humanoid::{CustomNames, HumanoidPose};
use mocap_bridge::protocol::vmc::frames::{VmcFrames, standing_hips_height};
use mocap_bridge::protocol::vmc::{DecodeStats, decode as vmc_decode};
use mocap_bridge::record::journal::{
    DEFAULT_FLUSH_INTERVAL, JournalHeader, JournalWriter, journal_path,
};

use super::CliResult;

/// Options of `record`.
#[derive(clap::Args)]
pub struct RecordArgs {
    /// The .vrma to write.
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
    /// Overwrite OUT when it exists.
    #[arg(long)]
    pub force: bool,
    /// Where to listen for VMC (OSC over UDP).
    #[arg(long, default_value = "127.0.0.1:39540", value_name = "HOST:PORT")]
    pub listen: std::net::SocketAddr,
    /// Stop after this many seconds (default: at Ctrl-C).
    #[arg(long, value_name = "SECONDS")]
    pub duration: Option<f32>,
    /// The performer's hips height standing, metres (default: the first
    /// frame's hips height).
    #[arg(long, value_name = "METRES")]
    pub hips_height: Option<f32>,
}

/// `record`: see `record_to`.
pub fn run(args: RecordArgs) -> CliResult<()> {
    // Refused before anything is recorded, not when the take is written.
    super::refuse_existing(&args.output, args.force)?;
    record_to(&args.output, args.listen, args.duration, args.hips_height)
}

/// `record`: VMC datagrams on `listen` -> frames -> a .vrma at `output`.
fn record_to(
    output: &Path,
    listen: std::net::SocketAddr,
    duration: Option<f32>,
    hips_height: Option<f32>,
) -> CliResult<()> {
    use std::sync::atomic::Ordering;
    let journal_file = journal_path(output);
    if journal_file.exists() {
        return Err(format!(
            "{}: the journal of a take into {} that did not finish is there: `mocap-bridge \
             recover {}` rebuilds that take (or remove the journal)",
            journal_file.display(),
            output.display(),
            journal_file.display()
        )
        .into());
    }
    let socket =
        std::net::UdpSocket::bind(listen).map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    socket.set_read_timeout(Some(DEFAULT_FLUSH_INTERVAL / 2))?;
    let stop = super::stop_on_interrupt()?;
    let mut stdout = std::io::stdout().lock();
    writeln!(
        stdout,
        "recording VMC on {listen} into {}; Ctrl-C to stop",
        output.display()
    )?;
    stdout.flush()?;

    // The take's tracks wait in a spool beside the output, not in memory.
    let folder = match output.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let mut spool = Some(
        Spool::new_in(folder)
            .map_err(|e| format!("cannot create a spool file in {}: {e}", folder.display()))?,
    );
    let started = std::time::Instant::now();
    let mut frames = VmcFrames::default();
    let mut writer: Option<(VrmaWriter, f32)> = None;
    // The journal, from the first frame on; `None` again once a write failed.
    let mut journal: Option<JournalWriter> = None;
    let mut flushed = std::time::Instant::now();
    let (mut datagrams, mut rejected) = (0u64, 0u64);
    let mut totals = DecodeStats::default();
    let mut push = |writer: &mut Option<(VrmaWriter, f32)>,
                    journal: &mut Option<JournalWriter>,
                    t: f32,
                    mut pose: HumanoidPose,
                    names: &CustomNames|
     -> CliResult<()> {
        if writer.is_none() {
            let height = hips_height.map_or(pose.rest_hips_height, standing_hips_height);
            let rest = VrmaRest::standard(height);
            let header = JournalHeader {
                performer: "vmc".into(),
                animation: TAKE_NAME.into(),
                rest: rest.clone(),
                created: std::time::SystemTime::now(),
            };
            *journal = Some(JournalWriter::create(&journal_file, &header)?);
            let w = match spool.take() {
                Some(spool) => VrmaWriter::spooled(rest, TAKE_NAME, spool),
                None => VrmaWriter::new(rest, TAKE_NAME),
            };
            *writer = Some((w, height));
        }
        let Some((w, height)) = writer.as_mut() else {
            return Ok(());
        };
        pose.rest_hips_height = *height;
        if w.push(t, &pose, names).is_err() {
            rejected += 1;
        } else if let Some(j) = journal.as_mut()
            && let Err(e) = j.append(t, &pose, names)
        {
            journal_failed(journal, &e);
        }
        Ok(())
    };
    let mut buf = vec![0u8; 65_536];
    // Once stopped (Ctrl-C, SIGTERM, SIGHUP, --duration), what the socket already holds is
    // still read: every datagram that arrived before the stop is in the take.
    let mut draining = false;
    loop {
        // Each frame on disk within the live recorder's default interval (the
        // socket's timeout wakes the loop at least that often).
        if let Some(j) = journal.as_mut()
            && j.has_unflushed()
            && flushed.elapsed() >= DEFAULT_FLUSH_INTERVAL / 2
        {
            flushed = std::time::Instant::now();
            if let Err(e) = j.flush() {
                journal_failed(&mut journal, &e);
            }
        }
        if !draining
            && (stop.load(Ordering::Relaxed)
                || duration.is_some_and(|d| started.elapsed().as_secs_f32() >= d))
        {
            draining = true;
            socket.set_nonblocking(true)?;
        }
        let n = match socket.recv(&mut buf) {
            Ok(n) => n,
            // Drained: the take ends here.
            Err(e) if draining && e.kind() == std::io::ErrorKind::WouldBlock => break,
            // A timeout to look at the stop flag again, or a signal that
            // interrupted the wait (the signals do).
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) =>
            {
                continue;
            }
            Err(e) => return Err(format!("cannot receive on {listen}: {e}").into()),
        };
        datagrams += 1;
        let now = started.elapsed().as_secs_f32();
        let mut finished = None;
        let stats = vmc_decode(&buf[..n], &mut |event| {
            if let Some(frame) = frames.event(event, now) {
                finished = Some(frame);
            }
        });
        if let Some((t, pose)) = finished {
            push(&mut writer, &mut journal, t, pose, frames.custom_names())?;
        }

        totals.events += stats.events;
        totals.ignored += stats.ignored;
        totals.malformed += stats.malformed;
        totals.unknown_bones += stats.unknown_bones;
        totals.broken += stats.broken;
    }
    if let Some((t, pose)) = frames.finish() {
        push(&mut writer, &mut journal, t, pose, frames.custom_names())?;
    }
    let Some((writer, _)) = writer else {
        return Err(format!("no VMC frame arrived on {listen}; nothing written").into());
    };
    if let Some(j) = journal.as_mut() {
        // Every frame in the journal first, so a failed write below loses none.
        let _ = j.flush();
    }
    writer.save(output)?;
    drop(journal);
    if journal_file.exists() {
        std::fs::remove_file(&journal_file)
            .map_err(|e| format!("cannot remove {}: {e}", journal_file.display()))?;
    }
    writeln!(
        stdout,
        "wrote {}: {} frames from {datagrams} datagrams; dropped: {} malformed, {} unknown bones, {} broken, {} frames out of order; {} unknown addresses ignored",
        output.display(),
        writer.frame_count(),
        totals.malformed,
        totals.unknown_bones,
        totals.broken,
        rejected,
        totals.ignored
    )?;
    Ok(())
}

/// The animation's name in the take.
const TAKE_NAME: &str = "vmc take";

/// Says once that the journal stopped (the take itself goes on in the spool), and
/// stops writing it.
fn journal_failed(journal: &mut Option<JournalWriter>, error: &std::io::Error) {
    if let Some(j) = journal.take() {
        eprintln!(
            "warning: {}: {error}; the take goes on without its journal",
            j.path().display()
        );
    }
}
