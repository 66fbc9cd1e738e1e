//! Recording: turning what arrives live into takes.

pub mod recorder;
pub mod vmc_frames;
