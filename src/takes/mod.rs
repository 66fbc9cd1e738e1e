//! Takes: recordings as streams of humanoid poses. Loading any recording (a
//! `.vrma`, an EXT_skeleton_humanoid clip, a rig's clip through its bone map) and
//! playing it frame by frame (`replay`), re-encoding it into another format
//! (`convert`), and the built-in performance the bridge plays with no hardware
//! or files (`demo`).

pub mod convert;
pub mod demo;
pub mod load;
pub mod replay;
