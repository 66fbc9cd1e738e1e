//! `record`: what a VMC sender streams, into a `.vrma`.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use mocap_bridge::formats::tracks::Spool;
use mocap_bridge::formats::vrma::{VrmaRest, VrmaWriter};
use mocap_bridge::humanoid::{CustomNames, HumanoidPose};
use mocap_bridge::protocol::vmc::frames::{VmcFrames, standing_hips_height};
use mocap_bridge::protocol::vmc::{DecodeStats, decode as vmc_decode};

use super::CliResult;

/// Options of `record`.
#[derive(clap::Args)]
pub struct RecordArgs {
    /// The .vrma to write.
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
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
    record_to(&args.output, args.listen, args.duration, args.hips_height)
}

/// `record`: VMC datagrams on `listen` -> frames -> a .vrma at `output`.
fn record_to(
    output: &Path,
    listen: std::net::SocketAddr,
    duration: Option<f32>,
    hips_height: Option<f32>,
) -> CliResult<()> {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let socket =
        std::net::UdpSocket::bind(listen).map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    socket.set_read_timeout(Some(std::time::Duration::from_millis(100)))?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    ctrlc::set_handler(move || flag.store(true, Ordering::Relaxed))
        .map_err(|e| format!("cannot catch Ctrl-C: {e}"))?;
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
    let (mut datagrams, mut rejected) = (0u64, 0u64);
    let mut totals = DecodeStats::default();
    let mut push = |writer: &mut Option<(VrmaWriter, f32)>,
                    t: f32,
                    mut pose: HumanoidPose,
                    names: &CustomNames| {
        let (w, height) = writer.get_or_insert_with(|| {
            let height = hips_height.map_or(pose.rest_hips_height, standing_hips_height);
            let rest = VrmaRest::standard(height);
            let writer = match spool.take() {
                Some(spool) => VrmaWriter::spooled(rest, "vmc take", spool),
                None => VrmaWriter::new(rest, "vmc take"),
            };
            (writer, height)
        });
        pose.rest_hips_height = *height;
        if w.push(t, &pose, names).is_err() {
            rejected += 1;
        }
    };
    let mut buf = vec![0u8; 65_536];
    // Once stopped (Ctrl-C, SIGTERM, SIGHUP, --duration), what the socket already holds is
    // still read: every datagram that arrived before the stop is in the take.
    let mut draining = false;
    loop {
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
            push(&mut writer, t, pose, frames.custom_names());
        }
        totals.events += stats.events;
        totals.ignored += stats.ignored;
        totals.malformed += stats.malformed;
        totals.unknown_bones += stats.unknown_bones;
        totals.broken += stats.broken;
    }
    if let Some((t, pose)) = frames.finish() {
        push(&mut writer, t, pose, frames.custom_names());
    }
    let Some((writer, _)) = writer else {
        return Err(format!("no VMC frame arrived on {listen}; nothing written").into());
    };
    writer.save(output)?;
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
