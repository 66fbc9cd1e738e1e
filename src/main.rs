//! The `mocap-bridge` command line: parses arguments and runs the command (see
//! `cli/`, a file per command). Errors print as `error: …` with each cause on its
//! own line, and exit with code 2.

mod cli;

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Parser;

use cli::{Cli, Command};

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        // Colours for a terminal; a log file or a service manager gets plain text.
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    let cli = Cli::parse();
    if !matches!(cli.command, Command::Run(_)) {
        quiet_on_closed_pipe();
    }
    match cli.command.run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(err)
            if err
                .downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            // The reader went away (`| head`): nothing more to say.
            ExitCode::SUCCESS
        }
        Err(err) => {
            let message = err.to_string();
            eprintln!("error: {message}");
            let mut source = err.source();
            while let Some(cause) = source {
                // Messages that already quote their cause are not repeated.
                let text = cause.to_string();
                if !message.contains(&text) {
                    eprintln!("  caused by: {text}");
                }
                source = cause.source();
            }
            ExitCode::from(2)
        }
    }
}

/// A printing command stops quietly when its reader goes away (`| head`), as
/// Unix tools do, instead of panicking in `println!`: SIGPIPE back to its default.
/// Not for `run`, whose sockets must see a closed peer as an error, not a signal.
/// (Linux only, where the project already links libc.)
fn quiet_on_closed_pipe() {
    #[cfg(target_os = "linux")]
    // SAFETY: called once at start-up, before any thread is spawned; restoring a
    // signal's default disposition touches no memory of ours.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
