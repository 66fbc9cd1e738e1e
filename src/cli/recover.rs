//! `recover`: turns the journal a crashed recorder left behind (`take.vrma.journal`)
//! into the `.vrma` the take would have been, keeping every frame up to the last
//! flush whose record holds (past damaged records and a damaged header) and
//! dropping a torn tail.

use std::path::{Path, PathBuf};

use mocap_bridge::record::journal::{self, Recovered};

use super::CliResult;

/// Options of `recover`.
#[derive(clap::Args)]
pub struct RecoverArgs {
    /// The journal (`take.vrma.journal`, next to where `take.vrma` was to be written).
    pub journal: PathBuf,
    /// The .vrma to write (default: the journal's path without `.journal`).
    #[arg(short, long, value_name = "OUT.vrma")]
    pub output: Option<PathBuf>,
    /// Overwrite OUT when it exists.
    #[arg(long)]
    pub force: bool,
}

/// `recover`: reads the journal, writes the .vrma, prints one summary line.
pub fn run(args: RecoverArgs) -> CliResult<()> {
    let RecoverArgs {
        journal,
        output,
        force,
    } = args;
    let output = output.unwrap_or_else(|| journal::vrma_path_for_journal(&journal));
    if is_same_file(&output, &journal) {
        return Err(format!(
            "{}: that is the journal itself; pass -o to write elsewhere",
            output.display()
        )
        .into());
    }
    super::refuse_existing(&output, force)?;
    let recovered = journal::recover(&journal)?;
    if recovered.frames == 0 {
        let why = recovered
            .defect
            .map_or(String::new(), |defect| format!(" ({defect})"));
        return Err(format!(
            "{}: no complete frame in the journal{why}; nothing written",
            journal.display()
        )
        .into());
    }
    journal::save_vrma(&recovered.writer, &output)
        .map_err(|e| format!("cannot write {}: {e}", output.display()))?;
    println!("{}", summary(&recovered, &journal, &output));
    Ok(())
}

fn summary(r: &Recovered, journal: &Path, output: &Path) -> String {
    let seconds = r.span.map_or(0.0, |(first, last)| last - first);
    let mut line = format!(
        "wrote {}: {}, {seconds:.2} s, recovered from {} (performer {}, take {:?}); torn tail dropped: {} bytes",
        output.display(),
        super::frames(r.frames),
        journal.display(),
        match r.header.performer.as_str() {
            "" => "unknown".to_owned(),
            name => format!("{name:?}"),
        },
        r.header.animation,
        r.dropped_tail_bytes,
    );
    if let Some(defect) = r.defect {
        line.push_str(&format!(" ({defect})"));
    }
    if r.refused > 0 {
        line.push_str(&format!("; {} frames refused", r.refused));
    }
    if let Some(why) = &r.header_damage {
        line.push_str(&format!(
            "; the header is damaged ({why}): the take is named after the file and stands in standard proportions at its hips height"
        ));
    }
    for skipped in &r.skipped {
        line.push_str(&format!(
            "; {} damaged bytes left out at byte {} ({})",
            skipped.bytes, skipped.at, skipped.problem
        ));
    }
    line
}

/// Whether `a` and `b` name the same file (literally, or once both exist).
fn is_same_file(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(a), Ok(b)) if a == b
        )
}
