//! Recording: turning what arrives live into takes, safely.

pub mod journal;
pub mod recorder;
