//! Running the real `mocap-bridge run` binary for a test: a configuration with
//! free loopback ports, stdout/stderr captured, readiness awaited, SIGTERM to stop
//! (as a user's Ctrl-C), and the independent clients (python-osc) installed on
//! first use.
//!
//! Tests run two at a time (one per core on CI's 2-core machine). The few that
//! measure against the wall clock or flood the machine (`alone`) have it to
//! themselves: no other test's bridge runs beside them, so nothing but the bridge
//! under test decides what they measure. Every other test shares the machine while
//! its bridges run.

use std::cell::{Cell, RefCell};
use std::io::{BufRead, BufReader, Read};
use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard, mpsc};
use std::time::Duration;

/// Held shared while a test's bridges run, alone by a test that times them.
static MACHINE: RwLock<()> = RwLock::new(());

thread_local! {
    /// Set while this thread's test holds the machine alone.
    static ALONE: Cell<bool> = const { Cell::new(false) };
    /// This thread's share of the machine and how many of its bridges hold it.
    static SHARE: RefCell<Option<(RwLockReadGuard<'static, ()>, usize)>> =
        const { RefCell::new(None) };
}

/// The machine to one test, until dropped: taken once the bridges of the tests
/// running now have stopped; others wait to start theirs until it is dropped.
pub struct Alone {
    _machine: RwLockWriteGuard<'static, ()>,
}

impl Drop for Alone {
    fn drop(&mut self) {
        ALONE.with(|a| a.set(false));
    }
}

/// Takes the machine for the calling test alone (see the module's header).
pub fn alone() -> Alone {
    let guard = MACHINE.write().unwrap_or_else(PoisonError::into_inner);
    ALONE.with(|a| a.set(true));
    Alone { _machine: guard }
}

/// A bridge starting: shares the machine, unless its test holds it alone.
/// Returns whether it took a share.
fn share() -> bool {
    if ALONE.with(Cell::get) {
        return false;
    }
    SHARE.with(|share| {
        let mut share = share.borrow_mut();
        match share.as_mut() {
            Some((_, bridges)) => *bridges += 1,
            None => {
                let guard = MACHINE.read().unwrap_or_else(PoisonError::into_inner);
                *share = Some((guard, 1));
            }
        }
    });
    true
}

/// A bridge that took a share has stopped: the last one gives the share back.
fn unshare() {
    SHARE.with(|share| {
        let mut share = share.borrow_mut();
        if let Some((_, bridges)) = share.as_mut() {
            *bridges -= 1;
            if *bridges == 0 {
                *share = None;
            }
        }
    });
}

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A UDP port nothing listens on right now.
pub fn free_udp_port() -> u16 {
    let s = UdpSocket::bind("127.0.0.1:0").expect("bind");
    s.local_addr().expect("addr").port()
}

/// A TCP port nothing listens on right now.
pub fn free_tcp_port() -> u16 {
    let s = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    s.local_addr().expect("addr").port()
}

/// A running bridge.
pub struct Bridge {
    pub child: Child,
    stdout: mpsc::Receiver<String>,
    pub lines: Vec<String>,
    stderr: Option<std::thread::JoinHandle<String>>,
    /// Whether it holds a share of the machine (given back when dropped).
    shared: bool,
}

impl Bridge {
    /// Starts `mocap-bridge run --config CONFIG ARGS...` in `dir` and waits for
    /// its `ready:` line.
    pub fn start(dir: &Path, config: &serde_json::Value, args: &[&str]) -> Bridge {
        let shared = share();
        let path = dir.join("bridge.json");
        std::fs::write(&path, serde_json::to_string_pretty(config).expect("json")).expect("write");
        let mut child = Command::new(env!("CARGO_BIN_EXE_mocap-bridge"))
            .arg("run")
            .arg("--config")
            .arg(&path)
            .args(args)
            .current_dir(dir)
            .env("RUST_LOG", "info")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start mocap-bridge run");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut stderr = child.stderr.take().expect("stderr");
        let stderr = Some(std::thread::spawn(move || {
            let mut s = String::new();
            let _ = stderr.read_to_string(&mut s);
            s
        }));
        let mut bridge = Bridge {
            child,
            stdout: rx,
            lines: Vec::new(),
            stderr,
            shared,
        };
        bridge.wait_for_line("ready:", Duration::from_secs(60));
        bridge
    }

    /// Waits for a stdout line containing `needle`; panics (with what was printed)
    /// when the bridge exits or the time runs out.
    pub fn wait_for_line(&mut self, needle: &str, limit: Duration) -> String {
        let deadline = std::time::Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.stdout.recv_timeout(left) {
                Ok(line) => {
                    self.lines.push(line.clone());
                    if line.contains(needle) {
                        return line;
                    }
                }
                Err(_) => {
                    let _ = self.child.kill();
                    let err = self.stderr.take().map(|h| h.join().unwrap_or_default());
                    panic!(
                        "no line with `{needle}`; stdout:\n{}\nstderr:\n{}",
                        self.lines.join("\n"),
                        err.unwrap_or_default()
                    );
                }
            }
        }
    }

    /// SIGTERM (what a service manager or Ctrl-C sends), then waits: returns the
    /// exit code, all stdout lines and stderr.
    pub fn stop(self) -> (i32, Vec<String>, String) {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        self.finish()
    }

    /// Waits for the bridge to exit by itself.
    pub fn finish(mut self) -> (i32, Vec<String>, String) {
        let status = self.child.wait().expect("wait");
        while let Ok(line) = self.stdout.recv_timeout(Duration::from_secs(5)) {
            self.lines.push(line);
        }
        let err = self
            .stderr
            .take()
            .map(|h| h.join().unwrap_or_default())
            .unwrap_or_default();
        (
            status.code().unwrap_or(-1),
            std::mem::take(&mut self.lines),
            err,
        )
    }
}

/// A test that panics (or returns) with its bridge still running leaves no
/// process behind: it is killed and reaped.
impl Drop for Bridge {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        if self.shared {
            unshare();
        }
    }
}

/// A configuration with every input and output off; tests switch on what they use.
pub fn quiet_config() -> serde_json::Value {
    serde_json::json!({
        "vmcInputs": [],
        "labInputs": [],
        "vrchatInputs": [],
        "websocket": null,
        "vmcOutputs": [],
        "status": { "logIntervalS": 0.0, "monitorIntervalS": 0.0 }
    })
}

/// `python3` with python-osc (and prometheus_client) importable: installed into
/// target/pydeps from tests/clients/requirements.txt on first use (once: two
/// tests installing into the same folder at once could break it). Returns the
/// PYTHONPATH to use.
pub fn python_osc() -> String {
    static READY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    READY.get_or_init(install_python_clients).clone()
}

fn install_python_clients() -> String {
    let deps = repo().join("target/pydeps");
    let importable = |path: &Path| {
        Command::new("python3")
            .args(["-c", "import pythonosc, prometheus_client"])
            .env("PYTHONPATH", path)
            .status()
            .is_ok_and(|s| s.success())
    };
    if !importable(&deps) {
        let status = Command::new("python3")
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--target",
            ])
            .arg(&deps)
            .arg("-r")
            .arg(repo().join("tests/clients/requirements.txt"))
            .status()
            .expect("python3 -m pip (the tests need Python 3 with pip)");
        assert!(status.success(), "pip could not install python-osc");
    }
    deps.display().to_string()
}
