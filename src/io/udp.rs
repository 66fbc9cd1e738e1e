//! UDP plumbing shared by the bridge's edges: an input's receive loop, which takes
//! every queued datagram per wake-up in batches until shutdown, and an output's
//! batched send on a connected socket.
//!
//! At a few hundred performers one system call per datagram (and one wake-up of
//! the solver per frame) was most of what the bridge spent. On Linux a batch is
//! one `recvmmsg` or `sendmmsg` call, written here over `libc` by hand because
//! neither tokio nor socket2 offers them; elsewhere the same batches are filled
//! and sent one datagram at a time with tokio's `try_recv_from` / `try_send`:
//! the same behaviour with more system calls.
//!
//! A batch can also carry each datagram's kernel arrival stamp (`SO_TIMESTAMPNS`)
//! and be filled from a plain std socket: the bridge benchmark's receiver, which
//! stands for a machine elsewhere, measures latency that way with the same code.
//!
//! Nothing here reads a datagram: the input decodes it, and counts and drops a
//! bad one. Receive errors (an ICMP error left by an earlier send, a datagram cut
//! short) concern one datagram and never end the loop; only shutdown does.

use std::io;
use std::net::SocketAddr;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use tokio::io::Interest;
use tokio::net::UdpSocket;
use tokio::sync::watch;

use crate::protocol::vmc::Datagrams;

/// Largest UDP payload over IPv4; nothing bigger can arrive.
pub const MAX_DATAGRAM: usize = 65_507;

/// Datagrams taken (or sent) per system call.
pub const BATCH: usize = 32;

/// Batches taken per wake-up before other tasks get a turn.
const BATCHES_PER_TURN: usize = 8;

/// Batches at most taken at shutdown: 8192 datagrams, more than a burst of frames
/// left in a socket, and a bound on the stop however a flood goes on.
const SHUTDOWN_BATCHES: usize = 256;

/// Room for one received datagram: the largest UDP payload over IPv6, so none is
/// ever cut short.
const SLOT: usize = 65_536;

/// One batch of received datagrams, in buffers allocated once per socket (2 MiB of
/// address space; only the pages datagrams touch are ever committed).
pub struct ReceivedBatch {
    buffers: Vec<u8>,
    lens: [usize; BATCH],
    from: [SocketAddr; BATCH],
    /// Arrival of each datagram, nanoseconds since the Unix epoch, in a batch made
    /// `with_arrival_stamps`; unused otherwise.
    arrived: [u64; BATCH],
    /// Room for one `SCM_TIMESTAMPNS` control message (a cmsghdr and a timespec)
    /// per datagram, u64-aligned; only in a batch made `with_arrival_stamps`.
    controls: Option<Box<[[u64; 8]; BATCH]>>,
    count: usize,
}

impl Default for ReceivedBatch {
    fn default() -> Self {
        Self {
            buffers: vec![0; BATCH * SLOT],
            lens: [0; BATCH],
            from: [SocketAddr::from(([0, 0, 0, 0], 0)); BATCH],
            arrived: [0; BATCH],
            controls: None,
            count: 0,
        }
    }
}

impl ReceivedBatch {
    /// Each datagram of the batch with its sender, in arrival order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], SocketAddr)> + '_ {
        (0..self.count).map(|i| {
            (
                &self.buffers[i * SLOT..i * SLOT + self.lens[i]],
                self.from[i],
            )
        })
    }

    /// A batch that also reads when each datagram arrived: the kernel's stamp on
    /// Linux (this turns `SO_TIMESTAMPNS` on for `socket`), elsewhere the time it
    /// was taken from the socket.
    pub fn with_arrival_stamps(socket: &std::net::UdpSocket) -> io::Result<Self> {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            let on: libc::c_int = 1;
            // SAFETY: a valid socket and an int option of the size given.
            let set = unsafe {
                libc::setsockopt(
                    socket.as_raw_fd(),
                    libc::SOL_SOCKET,
                    libc::SO_TIMESTAMPNS,
                    (&raw const on).cast(),
                    size_of::<libc::c_int>() as libc::socklen_t,
                )
            };
            if set != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        socket.set_nonblocking(true)?;
        Ok(Self {
            controls: Some(Box::new([[0; 8]; BATCH])),
            ..Self::default()
        })
    }

    /// Takes up to `BATCH` datagrams queued on a non-blocking std socket without
    /// waiting, and says how many (0 when none is queued).
    pub fn receive_queued(&mut self, socket: &std::net::UdpSocket) -> io::Result<usize> {
        match receive_queued(socket, self) {
            Ok(()) => Ok(self.count),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                self.count = 0;
                Ok(0)
            }
            Err(e) => Err(e),
        }
    }

    /// Each datagram of the batch with its arrival (see `with_arrival_stamps`).
    pub fn iter_arrivals(&self) -> impl Iterator<Item = (&[u8], u64)> + '_ {
        (0..self.count).map(|i| {
            (
                &self.buffers[i * SLOT..i * SLOT + self.lens[i]],
                self.arrived[i],
            )
        })
    }

    #[must_use]
    pub fn len(&self) -> usize {
        self.count
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

/// Receives on `socket` until `shutdown` changes (or its sender is gone), handing
/// `on_batch` every batch with the time it was taken from the socket. All queued
/// datagrams are taken per wake-up, a batch at a time, so the caller can do its
/// per-batch work (waking the solver) once per batch rather than per datagram.
/// At shutdown, what the socket already holds is still taken (up to
/// `SHUTDOWN_BATCHES`): a take stopped by Ctrl-C keeps every frame that had arrived.
pub async fn receive_until_shutdown(
    socket: &UdpSocket,
    shutdown: &mut watch::Receiver<bool>,
    mut on_batch: impl FnMut(&ReceivedBatch, Instant),
) -> io::Result<()> {
    let mut batch = ReceivedBatch::default();
    loop {
        tokio::select! {
            biased;
            _ = shutdown.changed() => {
                take_queued(socket, &mut batch, SHUTDOWN_BATCHES, &mut on_batch);
                return Ok(());
            }
            ready = socket.readable() => ready?,
        }
        take_queued(socket, &mut batch, BATCHES_PER_TURN, &mut on_batch);
        // Let the other tasks run between turns: a port flooded with datagrams that
        // are costly to read must not hold a worker thread (and the inputs,
        // outputs and timers it would run) for longer than one turn.
        tokio::task::yield_now().await;
    }
}

/// Hands `on_batch` the datagrams queued on `socket`, up to `batches` batches.
fn take_queued(
    socket: &UdpSocket,
    batch: &mut ReceivedBatch,
    batches: usize,
    on_batch: &mut impl FnMut(&ReceivedBatch, Instant),
) {
    for _ in 0..batches {
        match socket.try_io(Interest::READABLE, || receive_batch(socket, batch)) {
            Ok(()) => on_batch(batch, Instant::now()),
            // Drained: `try_io` has cleared the readiness; wait for more.
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            // An ICMP error from an earlier send, or the like: nothing to do
            // with the next datagram.
            Err(e) => tracing::debug!(%e, "receive failed"),
        }
        if batch.count < BATCH {
            break;
        }
    }
}

/// Fills `batch` with up to `BATCH` queued datagrams: at least one, or an error
/// (`WouldBlock` when none is queued).
#[cfg(target_os = "linux")]
fn receive_batch(socket: &impl std::os::fd::AsRawFd, batch: &mut ReceivedBatch) -> io::Result<()> {
    batch.count = 0;
    // SAFETY: all-zero bytes are valid values of these plain C structs.
    let mut names: [libc::sockaddr_storage; BATCH] = unsafe { std::mem::zeroed() };
    let mut iovecs: [libc::iovec; BATCH] = unsafe { std::mem::zeroed() };
    let mut headers: [libc::mmsghdr; BATCH] = unsafe { std::mem::zeroed() };
    for (i, chunk) in batch.buffers.chunks_exact_mut(SLOT).enumerate() {
        iovecs[i] = libc::iovec {
            iov_base: chunk.as_mut_ptr().cast(),
            iov_len: SLOT,
        };
        let header = &mut headers[i].msg_hdr;
        header.msg_name = (&raw mut names[i]).cast();
        header.msg_namelen = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
        header.msg_iov = &raw mut iovecs[i];
        header.msg_iovlen = 1;
        if let Some(controls) = batch.controls.as_deref_mut() {
            header.msg_control = controls[i].as_mut_ptr().cast();
            header.msg_controllen = size_of::<[u64; 8]>();
        }
    }
    // SAFETY: every header points at a live iovec over its own `SLOT` bytes of
    // `batch.buffers`, at its own address buffer and (with stamps) at its own
    // control buffer, all outliving the call; the
    // socket does not block (MSG_DONTWAIT), and no timeout is passed.
    let n = unsafe {
        libc::recvmmsg(
            socket.as_raw_fd(),
            headers.as_mut_ptr(),
            BATCH as libc::c_uint,
            libc::MSG_DONTWAIT,
            std::ptr::null_mut(),
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    for (header, name) in headers.iter().zip(&names).take(n as usize) {
        // An address of another family cannot come from an IP socket; such a
        // datagram would be skipped.
        if let Some(from) = socket_addr(name) {
            batch.lens[batch.count] = (header.msg_len as usize).min(SLOT);
            batch.from[batch.count] = from;
            if batch.controls.is_some() {
                batch.arrived[batch.count] = kernel_stamp(&header.msg_hdr).unwrap_or_else(wall_ns);
            }
            batch.count += 1;
        }
    }
    Ok(())
}

/// The `SCM_TIMESTAMPNS` stamp the kernel put in a received message's control
/// data, nanoseconds since the Unix epoch.
#[cfg(target_os = "linux")]
fn kernel_stamp(header: &libc::msghdr) -> Option<u64> {
    // SAFETY: the kernel filled the control buffer it was given; the macros walk
    // it within `msg_controllen`.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(header);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                let t: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast());
                return Some(t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64);
            }
            c = libc::CMSG_NXTHDR(header, c);
        }
    }
    None
}

/// Now, nanoseconds since the Unix epoch: the clock of kernel arrival stamps.
fn wall_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// A std socket's queued datagrams: the same `recvmmsg` batch on Linux.
#[cfg(target_os = "linux")]
fn receive_queued(socket: &std::net::UdpSocket, batch: &mut ReceivedBatch) -> io::Result<()> {
    receive_batch(socket, batch)
}

/// Portable: one `recv_from` per datagram until the batch is full or the socket
/// is drained, each stamped as it is taken.
#[cfg(not(target_os = "linux"))]
fn receive_queued(socket: &std::net::UdpSocket, batch: &mut ReceivedBatch) -> io::Result<()> {
    fill_one_by_one(batch, |slot| socket.recv_from(slot))
}

/// The IPv4 or IPv6 address the kernel wrote.
#[cfg(target_os = "linux")]
fn socket_addr(name: &libc::sockaddr_storage) -> Option<SocketAddr> {
    use std::net::{Ipv4Addr, Ipv6Addr, SocketAddrV4, SocketAddrV6};
    match i32::from(name.ss_family) {
        libc::AF_INET => {
            // SAFETY: the family says the storage holds a `sockaddr_in`.
            let a: &libc::sockaddr_in = unsafe { &*(std::ptr::from_ref(name).cast()) };
            Some(SocketAddr::V4(SocketAddrV4::new(
                Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr)),
                u16::from_be(a.sin_port),
            )))
        }
        libc::AF_INET6 => {
            // SAFETY: the family says the storage holds a `sockaddr_in6`.
            let a: &libc::sockaddr_in6 = unsafe { &*(std::ptr::from_ref(name).cast()) };
            Some(SocketAddr::V6(SocketAddrV6::new(
                Ipv6Addr::from(a.sin6_addr.s6_addr),
                u16::from_be(a.sin6_port),
                a.sin6_flowinfo,
                a.sin6_scope_id,
            )))
        }
        _ => None,
    }
}

/// Portable: one `try_recv_from` per datagram until the batch is full or the
/// socket is drained.
#[cfg(not(target_os = "linux"))]
fn receive_batch(socket: &UdpSocket, batch: &mut ReceivedBatch) -> io::Result<()> {
    fill_one_by_one(batch, |slot| socket.try_recv_from(slot))
}

/// Fills `batch` one `receive` call per datagram until it is full or `receive`
/// fails: at least one datagram, or the error (`WouldBlock` when none is queued).
#[cfg(not(target_os = "linux"))]
fn fill_one_by_one(
    batch: &mut ReceivedBatch,
    mut receive: impl FnMut(&mut [u8]) -> io::Result<(usize, SocketAddr)>,
) -> io::Result<()> {
    batch.count = 0;
    while batch.count < BATCH {
        let slot = &mut batch.buffers[batch.count * SLOT..(batch.count + 1) * SLOT];
        match receive(slot) {
            Ok((len, from)) => {
                batch.lens[batch.count] = len;
                batch.from[batch.count] = from;
                if batch.controls.is_some() {
                    batch.arrived[batch.count] = wall_ns();
                }
                batch.count += 1;
            }
            // What was taken so far is a batch; the error comes again next call.
            Err(_) if batch.count > 0 => break,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Most datagrams one UDP GSO message carries (the kernel's limit is 64 or more).
#[cfg(target_os = "linux")]
const GSO_SEGMENTS: usize = 64;

/// Most bytes one UDP GSO message carries: under the 64 KiB of one IP packet.
#[cfg(target_os = "linux")]
const GSO_BYTES: usize = 60_000;

/// `setsockopt` / control message level and type of UDP GSO (`linux/udp.h`).
#[cfg(target_os = "linux")]
const UDP_SEGMENT: libc::c_int = 103;

/// Datagrams waiting to go out on a connected socket. Its buffers are kept from
/// batch to batch: no allocation once warmed up.
///
/// On Linux, runs of datagrams of one length (the same frame layout for many
/// performers) go out as one message with UDP generic segmentation offload
/// (`UDP_SEGMENT`): the kernel cuts it into the same datagrams, paying its send
/// path once per run instead of once per datagram. A socket or route that refuses
/// it (`EINVAL`, `EIO`) turns it off for the batch and sends one message each.
pub struct SendBatch {
    queued: Datagrams,
    /// Whether runs of equal datagrams go out as one GSO message.
    gso: bool,
}

impl Default for SendBatch {
    fn default() -> Self {
        Self {
            queued: Datagrams::default(),
            gso: cfg!(target_os = "linux"),
        }
    }
}

impl SendBatch {
    /// Queues one datagram.
    pub fn push(&mut self, datagram: &[u8]) {
        self.queued.push(datagram);
    }

    #[must_use]
    pub fn len(&self) -> usize {
        self.queued.len()
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.queued.is_empty()
    }

    /// Sends every queued datagram in order, at most `BATCH` messages per system
    /// call, telling `outcome` each datagram's result (its length, or why it did
    /// not go: a receiver not listening is `ConnectionRefused`), and empties the
    /// batch. Waits while the socket's send buffer is full.
    pub async fn send(&mut self, socket: &UdpSocket, mut outcome: impl FnMut(io::Result<usize>)) {
        let mut next = 0;
        while next < self.len() {
            match socket.try_io(Interest::WRITABLE, || self.send_some(socket, next)) {
                Ok(sent) => {
                    for i in next..next + sent {
                        outcome(Ok(self.queued.get(i).len()));
                    }
                    next += sent;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if let Err(e) = socket.writable().await {
                        // The runtime is going away: what is left cannot go.
                        for _ in next..self.len() {
                            outcome(Err(io::Error::new(e.kind(), e.to_string())));
                        }
                        break;
                    }
                }
                // The datagram at `next` failed; the ones after it may still go.
                Err(e) => {
                    outcome(Err(e));
                    next += 1;
                }
            }
        }
        self.queued.clear();
    }

    /// How many datagrams from `first` on go in one message: a run of one length,
    /// which may end with one shorter datagram (GSO cuts the last segment short).
    #[cfg(target_os = "linux")]
    fn run_from(&self, first: usize) -> usize {
        let size = self.queued.get(first).len();
        if !self.gso || size == 0 {
            return 1;
        }
        let mut count = 1;
        while first + count < self.len() && count < GSO_SEGMENTS && (count + 1) * size <= GSO_BYTES
        {
            let len = self.queued.get(first + count).len();
            if len == size {
                count += 1;
            } else {
                if len > 0 && len < size {
                    count += 1;
                }
                break;
            }
        }
        count
    }

    /// Sends datagrams from `first` on, up to `BATCH` messages: how many datagrams
    /// went (at least one), or the error of the first.
    #[cfg(target_os = "linux")]
    fn send_some(&mut self, socket: &UdpSocket, first: usize) -> io::Result<usize> {
        use std::os::fd::AsRawFd;
        // SAFETY: all-zero bytes are valid values of these plain C structs.
        let mut iovecs: [libc::iovec; BATCH] = unsafe { std::mem::zeroed() };
        let mut headers: [libc::mmsghdr; BATCH] = unsafe { std::mem::zeroed() };
        // Room for one `UDP_SEGMENT` control message (a cmsghdr and a u16) each.
        let mut controls = [[0u64; 4]; BATCH];
        let mut runs = [0usize; BATCH];
        let (mut messages, mut next) = (0, first);
        while messages < BATCH && next < self.len() {
            let count = self.run_from(next);
            let bytes = self.queued.span(next, count);
            iovecs[messages] = libc::iovec {
                // The kernel only reads through it.
                iov_base: bytes.as_ptr().cast_mut().cast(),
                iov_len: bytes.len(),
            };
            // Connected: no address per message.
            let header = &mut headers[messages].msg_hdr;
            header.msg_iov = &raw mut iovecs[messages];
            header.msg_iovlen = 1;
            if count > 1 {
                let segment = self.queued.get(next).len() as u16;
                header.msg_control = controls[messages].as_mut_ptr().cast();
                // SAFETY: CMSG_SPACE of a u16 fits the 32 bytes of the control
                // buffer; the macros write within `msg_controllen`.
                unsafe {
                    header.msg_controllen =
                        libc::CMSG_SPACE(size_of::<u16>() as libc::c_uint) as usize;
                    let c = libc::CMSG_FIRSTHDR(header);
                    (*c).cmsg_level = libc::IPPROTO_UDP;
                    (*c).cmsg_type = UDP_SEGMENT;
                    (*c).cmsg_len = libc::CMSG_LEN(size_of::<u16>() as libc::c_uint) as usize;
                    std::ptr::write_unaligned(libc::CMSG_DATA(c).cast::<u16>(), segment);
                }
            }
            runs[messages] = count;
            messages += 1;
            next += count;
        }
        // SAFETY: the first `messages` headers point at live iovecs over datagrams
        // in `self.queued` and at their own control buffers, all outliving the
        // call; the socket does not block.
        let n = unsafe {
            libc::sendmmsg(
                socket.as_raw_fd(),
                headers.as_mut_ptr(),
                messages as libc::c_uint,
                libc::MSG_DONTWAIT,
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            if runs[0] > 1 && matches!(e.raw_os_error(), Some(libc::EINVAL | libc::EIO)) {
                // GSO refused (a segment over the route's MTU, a device without
                // it): one message per datagram from now on.
                self.gso = false;
                return self.send_some(socket, first);
            }
            Err(e)
        } else {
            Ok(runs[..n as usize].iter().sum())
        }
    }

    /// Portable: one `try_send`.
    #[cfg(not(target_os = "linux"))]
    fn send_some(&mut self, socket: &UdpSocket, first: usize) -> io::Result<usize> {
        socket.try_send(self.queued.get(first)).map(|_| 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn pair() -> (UdpSocket, UdpSocket) {
        let receiver = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let sender = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        sender
            .connect(receiver.local_addr().unwrap())
            .await
            .unwrap();
        (receiver, sender)
    }

    #[tokio::test]
    async fn a_send_batch_arrives_whole_in_order_and_from_its_sender() {
        let (receiver, sender) = pair().await;
        let mut batch = SendBatch::default();
        // More than one system call's worth, of assorted lengths (one empty).
        let datagrams: Vec<Vec<u8>> = (0..BATCH * 2 + 5)
            .map(|i| vec![i as u8; i * 37 % 1500])
            .collect();
        for d in &datagrams {
            batch.push(d);
        }
        let mut sent = Vec::new();
        batch.send(&sender, |r| sent.push(r.unwrap())).await;
        assert!(batch.is_empty());
        assert_eq!(sent, datagrams.iter().map(Vec::len).collect::<Vec<_>>());

        let from = sender.local_addr().unwrap();
        let got = receive_all(&receiver, datagrams.len()).await;
        assert!(got.iter().all(|(_, addr)| *addr == from));
        let bytes: Vec<Vec<u8>> = got.into_iter().map(|(b, _)| b).collect();
        assert_eq!(bytes, datagrams);
    }

    /// Receives `want` datagrams on `receiver`, each with its sender.
    async fn receive_all(receiver: &UdpSocket, want: usize) -> Vec<(Vec<u8>, SocketAddr)> {
        let (stop_tx, mut stop) = watch::channel(false);
        let mut got = Vec::new();
        let receiving = receive_until_shutdown(receiver, &mut stop, |batch, _| {
            for (bytes, addr) in batch.iter() {
                got.push((bytes.to_vec(), addr));
            }
            if got.len() == want {
                let _ = stop_tx.send(true);
            }
        });
        tokio::time::timeout(std::time::Duration::from_secs(10), receiving)
            .await
            .expect("all datagrams arrive")
            .unwrap();
        got
    }

    #[tokio::test]
    async fn runs_of_equal_datagrams_arrive_as_the_same_datagrams() {
        let (receiver, sender) = pair().await;
        let mut batch = SendBatch::default();
        // A run longer than one GSO message, a shorter one closing a run, an empty
        // one, and short runs: every datagram distinct. Small, so that all of them
        // fit a default receive buffer.
        let lens = [
            vec![200; 70],
            vec![150],
            vec![200; 10],
            vec![0],
            vec![50; 3],
        ]
        .concat();
        let datagrams: Vec<Vec<u8>> = lens
            .iter()
            .enumerate()
            .map(|(i, &len)| (0..len).map(|j| (i * 7 + j) as u8).collect())
            .collect();
        for d in &datagrams {
            batch.push(d);
        }
        let mut sent = Vec::new();
        batch.send(&sender, |r| sent.push(r.unwrap())).await;
        assert_eq!(sent, lens);
        let got = receive_all(&receiver, datagrams.len()).await;
        let from = sender.local_addr().unwrap();
        assert!(got.iter().all(|(_, addr)| *addr == from));
        let got: Vec<Vec<u8>> = got.into_iter().map(|(bytes, _)| bytes).collect();
        assert_eq!(got, datagrams);
    }

    #[tokio::test]
    async fn a_receiver_not_listening_is_an_error_per_datagram_not_the_end() {
        let (receiver, sender) = pair().await;
        drop(receiver);
        let mut batch = SendBatch::default();
        let mut outcomes = Vec::new();
        // The first send draws the ICMP "port unreachable"; later ones see it.
        for _ in 0..3 {
            for _ in 0..4 {
                batch.push(b"/x\0\0,\0\0\0");
            }
            batch
                .send(&sender, |r| outcomes.push(r.map_err(|e| e.kind())))
                .await;
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        assert_eq!(outcomes.len(), 12, "every datagram has an outcome");
        assert!(
            outcomes.contains(&Err(io::ErrorKind::ConnectionRefused)),
            "{outcomes:?}"
        );
    }

    #[tokio::test]
    async fn what_arrived_before_shutdown_is_still_handed_on() {
        let (receiver, sender) = pair().await;
        // Room for them all, whatever the system's default.
        socket2::SockRef::from(&receiver)
            .set_recv_buffer_size(1 << 20)
            .unwrap();
        // More than a turn's worth: a take stopped by Ctrl-C keeps every frame that
        // had arrived.
        let sent: Vec<Vec<u8>> = (0..BATCH * BATCHES_PER_TURN + 5)
            .map(|i| (i as u32).to_be_bytes().to_vec())
            .collect();
        for d in &sent {
            sender.send(d).await.unwrap();
        }
        let (stop_tx, mut stop) = watch::channel(false);
        stop_tx.send(true).unwrap();
        let mut got = Vec::new();
        receive_until_shutdown(&receiver, &mut stop, |batch, _| {
            got.extend(batch.iter().map(|(bytes, _)| bytes.to_vec()));
        })
        .await
        .unwrap();
        assert_eq!(got, sent);
    }

    #[tokio::test]
    async fn shutdown_ends_the_receive_loop() {
        let (receiver, _sender) = pair().await;
        let (stop_tx, mut stop) = watch::channel(false);
        stop_tx.send(true).unwrap();
        receive_until_shutdown(&receiver, &mut stop, |_, _| unreachable!())
            .await
            .unwrap();
    }
}
