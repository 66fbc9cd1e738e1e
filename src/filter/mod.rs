//! Smoothing of live poses: the One Euro filter (Casiez, Roussel, Vogel, CHI 2012)
//! per bone and on the hips position. It removes jitter at rest and follows fast
//! motion with little lag: the cutoff frequency rises with the signal's speed.

pub mod one_euro;

pub use one_euro::{OneEuroConfig, PoseFilter};
