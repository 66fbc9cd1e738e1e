//! Fanning 16 performers out to many receivers: through a NATS server (the
//! bridge's NATS output publishes each pose once, `nats-server` copies it to every
//! subscriber) against VMC over UDP (one VMC output per receiver, as a studio
//! would configure it), measured in the same run with the same frames. NATS
//! subscribers come in two kinds: of every performer's own subject
//! (`bench.fanout.*.pose`, a message per pose) and of the bridge's bundle
//! (`bench.fanout.poses`, a message per wake-up with every pose of it).
//!
//! A feeder thread plays the solver: 16 performers × 120 Hz, each frame pushed
//! onto the outputs' rings as the solver does (to every VMC output; to the one
//! NATS output), stamped when pushed. The outputs are the bridge's own tasks
//! (`io::outputs::nats`, `io::outputs::vmc`) on a runtime of their own (one
//! worker, as the bridge's outputs get); the receivers (async-nats subscribers,
//! one connection each, or UDP sockets) run on another with a worker per core, as
//! receivers on machines of their own would not queue behind each other on one
//! thread. Each frame's time carries its performer and number, so a receiver
//! knows when it was pushed: latency is push → receipt. A receiver reads only the
//! frame's identity (the time field at its documented offset), as a client that
//! hands poses on would, and is stopped by closing its connection (a NATS drain)
//! or a last datagram, with no timer per message. Loss is frames pushed ×
//! receivers − frames received. Per tick (the frames pushed together), the first
//! receipt by any receiver is the way through; the last one is that plus the
//! fan-out's drain to every receiver.
//! CPU is the CPU time the output threads, the receivers and (for NATS) the
//! server spent, per delivered frame.
//!
//! The way is split where it can be seen: "handed on" is push → handed to the
//! socket (VMC) or to the NATS client (the outputs' own latency, as the status
//! reports it); the probe, one more NATS subscriber with a thread of its own and
//! no client library (`Probe`), receives when the server's write to it arrives,
//! without the receivers' shared workers in between; it counts in no other
//! column. The server runs with its garbage collector off until its memory
//! nears a limit, `GOGC=off GOMEMLIMIT=256MiB` (docs/nats.md), or with the
//! `GOGC` and `GOMEMLIMIT` the bench is given.
//!
//! Run: `cargo bench --bench fanout` (needs `nats-server`). Arguments after
//! `--`: `quick` for 1 s per case instead of 3; receiver counts (`100`) and
//! kinds (`performers`, `bundle`, `vmc`) to run only those.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use hdrhistogram::Histogram;
use mocap_bridge::bridge::config::NatsOutputConfig;
use mocap_bridge::formats::vrma::VrmaRest;
use mocap_bridge::io::nats::connect;
use mocap_bridge::io::outputs::nats::NatsOutput;
use mocap_bridge::io::outputs::vmc::{self, Shows, VmcOutput};
use mocap_bridge::pipeline::status::{ConnectionStats, Latency, SharedHistogram};
use mocap_bridge::pipeline::{Delivery, OutputMsg, OutputPort, PoseFrame, output_ring};
use mocap_bridge::protocol::frame::PerformerName;
use mocap_bridge::protocol::nats::split_bundle;
use mocap_bridge::protocol::vmc::{Datagrams, ExpressionNames, VmcEncoder};

const PERFORMERS: usize = 16;
const RATE_HZ: f64 = 120.0;
/// A frame's time is `performer × ID + frame number`: exact in an f32.
const ID: f64 = 100_000.0;
/// The server's garbage collector: off until the memory nears the limit
/// (docs/nats.md, "A server for many subscribers").
const SERVER_GOGC: &str = "off";
const SERVER_GOMEMLIMIT: &str = "256MiB";

/// What one case measured.
struct Run {
    pushed: u64,
    received: u64,
    latency: Histogram<u64>,
    /// Per tick (the 16 frames pushed together), the latency of its first and
    /// of its last receipt by any receiver, µs: the path through, and the
    /// fan-out's drain.
    first: Histogram<u64>,
    last: Histogram<u64>,
    /// CPU seconds: output threads, receivers, server.
    cpu: [f64; 3],
    /// Push → handed to the socket (VMC) or to the client (NATS), µs, as the
    /// outputs measure it for the status.
    handed: Histogram<u64>,
    /// NATS only: the receipts of the probe (`Probe`), µs.
    probe: Option<Histogram<u64>>,
}

/// Per-thread CPU of this process by thread-name prefix, seconds (Linux).
fn threads_cpu(prefix: &str) -> f64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0.0;
    };
    tasks
        .flatten()
        .filter_map(|task| {
            let tid: i32 = task.file_name().to_str()?.parse().ok()?;
            let name = std::fs::read_to_string(task.path().join("comm")).ok()?;
            name.starts_with(prefix).then(|| thread_cpu_s(tid))
        })
        .sum()
}

#[cfg(target_os = "linux")]
fn thread_cpu_s(tid: i32) -> f64 {
    // MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED): per thread, scheduler clock.
    let clock = ((!tid) << 3) | 6;
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec to write; a bad clock only returns an error.
    if unsafe { libc::clock_gettime(clock, &raw mut t) } != 0 {
        return 0.0;
    }
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

#[cfg(not(target_os = "linux"))]
fn thread_cpu_s(_tid: i32) -> f64 {
    0.0
}

/// A process's CPU seconds (user + system), from `/proc/PID/stat`.
fn process_cpu(pid: u32) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0.0;
    };
    let Some((_, rest)) = stat.rsplit_once(')') else {
        return 0.0;
    };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = [11, 12]
        .iter()
        .filter_map(|&i| fields.get(i)?.parse::<f64>().ok())
        .sum();
    ticks / 100.0
}

fn nats_server_binary() -> Option<PathBuf> {
    std::env::var_os("NATS_SERVER")
        .map(PathBuf::from)
        .or_else(|| {
            let path = std::env::var_os("PATH").unwrap_or_default();
            std::env::split_paths(&path)
                .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/bin")])
                .map(|dir| dir.join("nats-server"))
                .find(|p| p.is_file())
        })
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

/// The solver's part: every performer's frame each tick onto every port, for
/// `seconds`; returns when each frame was pushed, by performer and number.
fn feed(mut ports: Vec<OutputPort>, seconds: f64) -> Vec<Vec<Instant>> {
    let names: Vec<PerformerName> = (0..PERFORMERS)
        .map(|p| PerformerName::new(&format!("performer-{p}")).expect("name"))
        .collect();
    let pose = mocap_bridge::takes::demo::pose_at(0.3, 0.95);
    let ticks = ticks(seconds);
    let mut pushed: Vec<Vec<Instant>> =
        (0..PERFORMERS).map(|_| Vec::with_capacity(ticks)).collect();
    let start = Instant::now();
    for tick in 0..ticks {
        let due = start + Duration::from_secs_f64(tick as f64 / RATE_HZ);
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        for (p, name) in names.iter().enumerate() {
            let received = Instant::now();
            let msg = OutputMsg::Pose(PoseFrame {
                performer: *name,
                seq: tick as u64 + 1,
                time: p as f64 * ID + tick as f64,
                pose,
                received,
            });
            for port in &mut ports {
                port.push(&msg);
            }
            pushed[p].push(received);
        }
        for port in &mut ports {
            port.wake();
        }
    }
    pushed
}

/// The ticks fed in `seconds`.
fn ticks(seconds: f64) -> usize {
    (seconds * RATE_HZ) as usize
}

/// The frame a time stands for: (performer, number).
fn frame_of(time: f64) -> (usize, usize) {
    ((time / ID) as usize, (time % ID) as usize)
}

/// Receipt times, by receiver: (performer, number, when).
type Receipts = Vec<Vec<(usize, usize, Instant)>>;

fn histogram() -> Histogram<u64> {
    Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).expect("bounds")
}

/// Latencies push → receipt, µs.
fn latencies(pushed: &[Vec<Instant>], receipts: &[(usize, usize, Instant)]) -> Histogram<u64> {
    let mut latency = histogram();
    for &(p, k, at) in receipts {
        if let Some(sent) = pushed.get(p).and_then(|v| v.get(k)) {
            let us = (at.saturating_duration_since(*sent).as_micros() as u64).max(1);
            latency.saturating_record(us);
        }
    }
    latency
}

fn summarize(
    pushed: &[Vec<Instant>],
    receipts: Receipts,
    cpu: [f64; 3],
    handed: &SharedHistogram,
) -> Run {
    let mut latency = histogram();
    let mut ticks = vec![(u64::MAX, 0u64); pushed.first().map_or(0, Vec::len)];
    let mut received = 0;
    for receiver in receipts {
        for (p, k, at) in receiver {
            if let Some(sent) = pushed.get(p).and_then(|v| v.get(k)) {
                let us = (at.saturating_duration_since(*sent).as_micros() as u64).max(1);
                latency.saturating_record(us);
                received += 1;
                if let Some((first, last)) = ticks.get_mut(k) {
                    *first = (*first).min(us);
                    *last = (*last).max(us);
                }
            }
        }
    }
    let (mut first, mut last) = (histogram(), histogram());
    for &(f, l) in ticks.iter().filter(|(_, l)| *l > 0) {
        first.saturating_record(f);
        last.saturating_record(l);
    }
    let per_receiver: u64 = pushed.iter().map(|v| v.len() as u64).sum();
    Run {
        pushed: per_receiver,
        received,
        latency,
        first,
        last,
        cpu,
        handed: handed.lock().expect("histogram").clone(),
        probe: None,
    }
}

/// The machine's cores (the receivers' worker count).
fn cores() -> usize {
    std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get)
}

fn runtime(name: &str, threads: usize) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .thread_name(name)
        .enable_all()
        .build()
        .expect("runtime")
}

/// What NATS subscribers subscribe to.
#[derive(Clone, Copy)]
enum Fanout {
    /// Every performer's subject: a message per pose.
    Performers,
    /// The bridge's bundle: a message per wake-up of the output.
    Bundle,
}

impl Fanout {
    fn subjects(self) -> &'static str {
        match self {
            Fanout::Performers => "bench.fanout.*.pose",
            Fanout::Bundle => "bench.fanout.poses",
        }
    }

    /// Notes the frames a message of this kind carries as received `at`.
    fn receipts(self, payload: &[u8], at: Instant, got: &mut Vec<(usize, usize, Instant)>) {
        match self {
            Fanout::Performers => {
                if let Some(time) = pose_time(payload) {
                    let (p, k) = frame_of(time);
                    got.push((p, k, at));
                }
            }
            Fanout::Bundle => {
                if let Ok(poses) = split_bundle(payload) {
                    for time in poses.filter_map(pose_time) {
                        let (p, k) = frame_of(time);
                        got.push((p, k, at));
                    }
                }
            }
        }
    }

    fn label(self) -> &'static str {
        match self {
            Fanout::Performers => "NATS, a subject per performer",
            Fanout::Bundle => "NATS, bundle subject",
        }
    }
}

/// The time field of a pose payload (docs/nats.md: the name's length at byte 6,
/// the time 15 + length bytes in), without reading the rest of the pose.
fn pose_time(pose: &[u8]) -> Option<f64> {
    let at = 15 + usize::from(*pose.get(6)?);
    Some(f64::from_le_bytes(pose.get(at..at + 8)?.try_into().ok()?))
}

/// One more subscriber, with no client library: a thread of its own blocked on
/// its socket, reading the NATS text protocol (`MSG` lines and their payloads,
/// `PING` answered) by hand, as no client crate reads without tasks of its own
/// between the socket and the application. Its receipt is when the server's
/// write to it arrived; where it falls in the fan-out changes from tick to tick
/// (the server flushes its subscribers in no fixed order), so over the ticks its
/// latencies spread as the server's writes do, without the receivers' workers.
struct Probe {
    socket: TcpStream,
    thread: std::thread::JoinHandle<Vec<(usize, usize, Instant)>>,
}

impl Probe {
    fn start(port: u16, fanout: Fanout, seconds: f64) -> Probe {
        let socket = TcpStream::connect(("127.0.0.1", port)).expect("probe");
        socket.set_nodelay(true).expect("nodelay");
        let mut reader = BufReader::with_capacity(1 << 16, socket.try_clone().expect("clone"));
        let mut writer = socket.try_clone().expect("clone");
        let mut line = String::new();
        reader.read_line(&mut line).expect("INFO");
        write!(
            writer,
            "CONNECT {{\"verbose\":false,\"pedantic\":false}}\r\nSUB {} 1\r\nPING\r\n",
            fanout.subjects()
        )
        .expect("subscribe");
        // Subscribed once the server answers the PING.
        while line != "PONG\r\n" {
            line.clear();
            if reader.read_line(&mut line).expect("PONG") == 0 {
                panic!("probe: the server closed the connection");
            }
        }
        let thread = std::thread::Builder::new()
            .name("fanout-probe".into())
            .spawn(move || {
                // Sized up front, as the receivers' lists are.
                let mut got = Vec::with_capacity(ticks(seconds) * PERFORMERS);
                let mut payload = Vec::new();
                loop {
                    line.clear();
                    // Ends when the bench shuts the socket down.
                    if !matches!(reader.read_line(&mut line), Ok(1..)) {
                        return got;
                    }
                    let at = Instant::now();
                    if line == "PING\r\n" {
                        writer.write_all(b"PONG\r\n").expect("PONG");
                        continue;
                    }
                    // MSG <subject> <sid> <bytes>
                    let Some(size) = line
                        .strip_prefix("MSG ")
                        .and_then(|rest| rest.split_whitespace().nth(2))
                        .and_then(|n| n.parse::<usize>().ok())
                    else {
                        continue;
                    };
                    payload.resize(size + 2, 0);
                    if reader.read_exact(&mut payload).is_err() {
                        return got;
                    }
                    let pose = &payload[..size];
                    fanout.receipts(pose, at, &mut got);
                }
            })
            .expect("probe thread");
        Probe { socket, thread }
    }

    /// Stops the thread: its receipts.
    fn stop(self) -> Vec<(usize, usize, Instant)> {
        let _ = self.socket.shutdown(Shutdown::Both);
        self.thread.join().expect("probe")
    }
}

/// Through `nats-server`: one NATS output, `subscribers` subscribers of `fanout`.
fn through_nats(
    server: &str,
    port: u16,
    server_pid: u32,
    subscribers: usize,
    fanout: Fanout,
    seconds: f64,
) -> Run {
    let outputs = runtime("fanout-out", 1);
    let receivers = runtime("fanout-recv", cores());
    let mut clients = Vec::new();
    let mut tasks = Vec::new();
    for _ in 0..subscribers {
        let (client, mut sub) = receivers.block_on(async {
            let client = async_nats::connect(server).await.expect("subscriber");
            let sub = client
                .subscribe(fanout.subjects())
                .await
                .expect("subscribe");
            client.flush().await.expect("flush");
            (client, sub)
        });
        clients.push(client);
        tasks.push(receivers.spawn(async move {
            // Room for every frame: no reallocation (copying every receipt so far,
            // in every receiver at the same tick) while frames arrive.
            let mut got = Vec::with_capacity(ticks(seconds) * PERFORMERS);
            // Ends when the connection is drained.
            while let Some(message) = sub.next().await {
                let at = Instant::now();
                fanout.receipts(&message.payload, at, &mut got);
            }
            got
        }));
    }
    let probe = Probe::start(port, fanout, seconds);
    let (port, ring) = output_ring("nats-out", 4096, Delivery::Newest);
    let stats = ring.stats.clone();
    let (latency, handed) = Latency::new();
    let connection = Arc::new(ConnectionStats::new(server));
    let settings = NatsOutputConfig {
        server: server.to_owned(),
        ..NatsOutputConfig::default()
    }
    .server();
    let client = outputs
        .block_on(connect(&settings, "bench", connection.clone()))
        .expect("connect");
    let task = outputs.spawn(
        NatsOutput {
            client,
            prefix: "bench".into(),
            bridge: "fanout".into(),
            ring,
            received: Vec::new(),
            skeletons: Arc::from(Vec::new()),
            latency,
            connection,
        }
        .run(),
    );
    let cpu_before = [
        threads_cpu("fanout-out"),
        threads_cpu("fanout-recv"),
        process_cpu(server_pid),
    ];
    let pushed = feed(vec![port], seconds);
    let _ = outputs.block_on(task);
    std::thread::sleep(Duration::from_millis(300));
    let cpu_after = [
        threads_cpu("fanout-out"),
        threads_cpu("fanout-recv"),
        process_cpu(server_pid),
    ];
    for client in &clients {
        receivers.block_on(client.drain()).expect("drain");
    }
    let receipts = tasks
        .into_iter()
        .map(|t| receivers.block_on(t).expect("receiver"))
        .collect();
    let probe = probe.stop();
    let drops = stats.drops.load(Relaxed);
    if drops > 0 {
        println!("  (the NATS output dropped {drops} frames)");
    }
    let cpu = [0, 1, 2].map(|i| cpu_after[i] - cpu_before[i]);
    let mut run = summarize(&pushed, receipts, cpu, &handed);
    run.probe = Some(latencies(&pushed, &probe));
    run
}

/// VMC over UDP: one VMC output per receiver.
fn through_vmc(receivers_n: usize, seconds: f64) -> Run {
    let outputs = runtime("fanout-out", 1);
    let receivers = runtime("fanout-recv", cores());
    let mut ports = Vec::new();
    let mut tasks = Vec::new();
    let mut senders = Vec::new();
    let mut addrs = Vec::new();
    let mut handed_each = Vec::new();
    for _ in 0..receivers_n {
        let socket = receivers
            .block_on(tokio::net::UdpSocket::bind("127.0.0.1:0"))
            .expect("receiver");
        let addr: SocketAddr = socket.local_addr().expect("addr");
        addrs.push(addr);
        tasks.push(receivers.spawn(async move {
            let tag = b"/VMC/Ext/T\0\0,f\0\0";
            let apply = b"/VMC/Ext/Blend/Apply";
            let mut buf = vec![0u8; 65_536];
            let mut got = Vec::with_capacity(ticks(seconds) * PERFORMERS);
            // A frame spans several datagrams: it has arrived with its last
            // (`/VMC/Ext/Blend/Apply`); its time is in its first.
            let mut current = None;
            // Ends with an empty datagram, which no VMC output sends.
            while let Ok(n @ 1..) = socket.recv(&mut buf).await {
                let at = Instant::now();
                let bytes = &buf[..n];
                if let Some(i) = bytes.windows(tag.len()).position(|w| w == tag)
                    && let Some(t) = bytes.get(i + tag.len()..i + tag.len() + 4)
                {
                    let time = f32::from_be_bytes([t[0], t[1], t[2], t[3]]);
                    current = Some(frame_of(f64::from(time)));
                }
                if bytes.windows(apply.len()).any(|w| w == apply)
                    && let Some((p, k)) = current.take()
                {
                    got.push((p, k, at));
                }
            }
            got
        }));
        let (port, ring) = output_ring("vmc-out", 4096, Delivery::Newest);
        let socket = outputs.block_on(vmc::socket_to(addr)).expect("sender");
        let (latency, handed) = Latency::new();
        handed_each.push(handed);
        senders.push(
            outputs.spawn(
                VmcOutput {
                    socket,
                    encoder: VmcEncoder::new(ExpressionNames::Vrm1, &VrmaRest::standard(0.95)),
                    ring,
                    rate_cap: None,
                    shows: Shows::All,
                    latency,
                    datagrams: Datagrams::new(),
                }
                .run(),
            ),
        );
        ports.push(port);
    }
    let cpu_before = [threads_cpu("fanout-out"), threads_cpu("fanout-recv")];
    let pushed = feed(ports, seconds);
    for task in senders {
        let _ = outputs.block_on(task);
    }
    std::thread::sleep(Duration::from_millis(300));
    let cpu_after = [threads_cpu("fanout-out"), threads_cpu("fanout-recv")];
    let stopper = std::net::UdpSocket::bind("127.0.0.1:0").expect("stopper");
    for addr in addrs {
        stopper.send_to(&[], addr).expect("stop");
    }
    let receipts = tasks
        .into_iter()
        .map(|t| receivers.block_on(t).expect("receiver"))
        .collect();
    let cpu = [
        cpu_after[0] - cpu_before[0],
        cpu_after[1] - cpu_before[1],
        0.0,
    ];
    let handed: SharedHistogram = Arc::new(std::sync::Mutex::new(histogram()));
    for each in handed_each {
        let _ = handed
            .lock()
            .expect("histogram")
            .add(&*each.lock().expect("histogram"));
    }
    summarize(&pushed, receipts, cpu, &handed)
}

fn line(how: &str, receivers: usize, r: &Run) -> String {
    let expected = r.pushed * receivers as u64;
    let lost = expected.saturating_sub(r.received);
    let per_frame_us = |s: f64| s * 1e6 / r.received.max(1) as f64;
    let ms = |h: &Histogram<u64>, q: f64| h.value_at_quantile(q) as f64 / 1000.0;
    let probe = r.probe.as_ref().map_or("–".to_owned(), |h| {
        format!("{:.2} / {:.2}", ms(h, 0.5), ms(h, 0.99))
    });
    format!(
        "| {how} | {receivers} | {} | {:.2} / {:.2} | {probe} | {:.2} | {:.2} | {:.2} | {:.2} / {:.2} | {lost} ({:.3} %) | {:.1} | {:.1} | {:.1} |",
        r.received,
        ms(&r.handed, 0.5),
        ms(&r.handed, 0.99),
        r.latency.value_at_quantile(0.5) as f64 / 1000.0,
        r.latency.value_at_quantile(0.99) as f64 / 1000.0,
        r.latency.max() as f64 / 1000.0,
        r.first.value_at_quantile(0.5) as f64 / 1000.0,
        r.last.value_at_quantile(0.5) as f64 / 1000.0,
        lost as f64 * 100.0 / expected.max(1) as f64,
        per_frame_us(r.cpu[0]),
        per_frame_us(r.cpu[1]),
        per_frame_us(r.cpu[2]),
    )
}

fn main() {
    let quick = std::env::args().any(|a| a == "quick");
    let seconds = if quick { 1.0 } else { 3.0 };
    let Some(binary) = nats_server_binary() else {
        println!("fanout: nats-server is not installed (apt-get install nats-server); skipped");
        return;
    };
    let port = free_port();
    // The server as docs/nats.md sets one up for many subscribers: its garbage
    // collector off until its memory nears 256 MiB, unless GOGC or GOMEMLIMIT
    // say otherwise.
    let gogc = std::env::var("GOGC").unwrap_or_else(|_| SERVER_GOGC.to_owned());
    let memlimit = std::env::var("GOMEMLIMIT").unwrap_or_else(|_| SERVER_GOMEMLIMIT.to_owned());
    let mut server: Child = Command::new(binary)
        .args(["-a", "127.0.0.1", "-p", &port.to_string()])
        .env("GOGC", &gogc)
        .env("GOMEMLIMIT", &memlimit)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("nats-server");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "nats-server did not come up");
        std::thread::sleep(Duration::from_millis(20));
    }
    let url = format!("nats://127.0.0.1:{port}");
    // What else the machine runs decides the tails: say so with the numbers.
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load: Vec<&str> = load.split_whitespace().take(3).collect();
    println!("load average at the start: {}", load.join(" "));
    println!(
        "{PERFORMERS} performers × {RATE_HZ} Hz for {seconds} s per case, nats-server with GOGC={gogc} GOMEMLIMIT={memlimit}; \
         handed on: push → handed to the socket (VMC) or the client (NATS); probe: push → receipt by the \
         probe, a bare subscriber thread; latency push → receipt (ms); \
         a tick's first / last receipt: p50 over ticks of the earliest and of the latest receipt of \
         the frames pushed together; CPU µs per delivered frame: outputs, receivers, nats-server"
    );
    println!(
        "| fan-out | receivers | frames received | handed on p50 / p99 | probe p50 / p99 | p50 | p99 | max | tick's first / last receipt | lost | CPU outputs | CPU receivers | CPU server |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let counts: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let counts = if counts.is_empty() {
        vec![1, 10, 100]
    } else {
        counts
    };
    let kinds: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| ["performers", "bundle", "vmc"].contains(&a.as_str()))
        .collect();
    let runs = |kind: &str| kinds.is_empty() || kinds.iter().any(|k| k == kind);
    for receivers in counts {
        for (kind, fanout) in [
            ("performers", Fanout::Performers),
            ("bundle", Fanout::Bundle),
        ] {
            if runs(kind) {
                let nats = through_nats(&url, port, server.id(), receivers, fanout, seconds);
                println!("{}", line(fanout.label(), receivers, &nats));
            }
        }
        if runs("vmc") {
            let vmc = through_vmc(receivers, seconds);
            println!("{}", line("VMC over UDP", receivers, &vmc));
        }
    }
    let _ = server.kill();
    let _ = server.wait();
}
