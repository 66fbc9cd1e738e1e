//! Recording: turning what arrives live into takes.

pub mod vmc_frames;
