//! Smoothing of live poses and of their inputs: the One Euro filter (Casiez,
//! Roussel, Vogel, CHI 2012) per bone and on the hips position, which removes
//! jitter at rest and follows fast motion with little lag (the cutoff rises with
//! the signal's speed); and a lag-compensating FIR filter on tracked device
//! positions and rotations before VR-mode IK (`device`).

pub mod device;
pub mod one_euro;

pub use device::{DeviceFilter, DeviceFilterConfig};
pub use one_euro::{OneEuroConfig, PoseFilter};
