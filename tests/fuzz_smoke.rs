//! The fuzz targets (`fuzz/src/lib.rs`) on a stable toolchain: each runs over its
//! committed seeds (`fuzz/corpus/TARGET/`) and a few thousand deterministic
//! mutations of them (bit flips, bytes set, inserted, deleted, repeated, cut,
//! boundary values, seeds spliced together). A panic fails the test and names the
//! target, the seed and the mutation, so it can be replayed. The long runs are
//! libFuzzer's (`fuzz/run TARGET`, docs/fuzzing.md).

#[path = "../fuzz/src/lib.rs"]
mod targets;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;

/// Mutated inputs per seed folder: network decoders are fast, file readers load
/// and recognize whole rigs.
const NETWORK_MUTATIONS: usize = 6_000;
const FILE_MUTATIONS: usize = 1_500;

/// xorshift64*: the same mutations on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// One to four random edits of `input`.
fn mutate(rng: &mut Rng, input: &[u8], seeds: &[Vec<u8>]) -> Vec<u8> {
    const INTERESTING: [u32; 8] = [0, 1, 0x7f, 0x80, 0xff, 0xffff, 0x7fff_ffff, 0xffff_ffff];
    let mut out = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        let len = out.len();
        let at = rng.below(len.max(1));
        match rng.below(9) {
            0 if len > 0 => out[at] ^= 1 << rng.below(8),
            1 if len > 0 => out[at] = rng.next() as u8,
            2 => {
                let byte = rng.next() as u8;
                out.insert(at.min(len), byte);
            }
            3 if len > 0 => {
                let end = (at + 1 + rng.below(16)).min(len);
                out.drain(at..end);
            }
            4 if len > 0 => {
                let end = (at + 1 + rng.below(64)).min(len);
                let piece = out[at..end].to_vec();
                let to = rng.below(len);
                out.splice(to..to, piece);
            }
            5 => out.truncate(rng.below(len + 1)),
            6 if len >= 4 => {
                let at = (at & !3).min(len - 4);
                let value = INTERESTING[rng.below(INTERESTING.len())];
                let bytes = if rng.below(2) == 0 {
                    value.to_le_bytes()
                } else {
                    value.to_be_bytes()
                };
                out[at..at + 4].copy_from_slice(&bytes);
            }
            7 if !seeds.is_empty() => {
                let other = &seeds[rng.below(seeds.len())];
                let from = rng.below(other.len());
                let end = (from + 1 + rng.below(256)).min(other.len());
                out.splice(at.min(len)..at.min(len), other[from..end].iter().copied());
            }
            _ => {
                if let Some(digit) = out.iter().position(|b| b.is_ascii_digit()) {
                    // Numbers in text formats: make one huge, negative or odd.
                    let text: &[u8] =
                        [b"99999999999".as_slice(), b"-1", b"1e39", b"nan"][rng.below(4)];
                    out.splice(digit..digit + 1, text.iter().copied());
                }
            }
        }
    }
    out
}

fn seeds(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut seeds: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| {
            let bytes = std::fs::read(e.path()).expect("a seed");
            (e.file_name().to_string_lossy().into_owned(), bytes)
        })
        .collect();
    seeds.sort();
    assert!(!seeds.is_empty(), "{}: no seeds", dir.display());
    seeds
}

#[test]
fn every_target_survives_its_seeds_and_their_mutations() {
    // A panic is caught and reported with what caused it, not printed twice.
    std::panic::set_hook(Box::new(|_| {}));
    let mut failures = Vec::new();
    for target in targets::TARGETS {
        let seeds = seeds(target.name);
        let bytes: Vec<Vec<u8>> = seeds.iter().map(|(_, b)| b.clone()).collect();
        let mutations = if target.network {
            NETWORK_MUTATIONS
        } else {
            FILE_MUTATIONS
        };
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ target.name.len() as u64);
        let mut runs = 0;
        for (name, seed) in &seeds {
            let mut inputs = vec![(format!("seed {name}"), seed.clone())];
            for i in 0..mutations / seeds.len() {
                inputs.push((
                    format!("mutation {i} of seed {name}"),
                    mutate(&mut rng, seed, &bytes),
                ));
            }
            for (what, input) in inputs {
                runs += 1;
                if catch_unwind(AssertUnwindSafe(|| (target.run)(&input))).is_err() {
                    let file = std::env::temp_dir().join(format!("crash-{}-{runs}", target.name));
                    let _ = std::fs::write(&file, &input);
                    failures.push(format!(
                        "{}: {what} panicked (input saved to {})",
                        target.name,
                        file.display()
                    ));
                }
            }
        }
        println!("{}: {} seeds, {runs} runs", target.name, seeds.len());
    }
    let _ = std::panic::take_hook();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
