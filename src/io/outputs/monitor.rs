//! The console view of a running bridge: an output that says when a performer
//! appears and goes and, unless asked not to (`run --quiet`), keeps each
//! performer's newest pose and prints one line per performer every interval,
//! describing the motion in words a person can check (hips position, arm elevation,
//! elbow and knee bends), so `run` shows that motion flows without any viewer.

use std::collections::BTreeMap;
use std::io::Write;
use std::time::Duration;

use glam::Vec3;
use tokio::sync::watch;

use crate::humanoid::{HumanBone, HumanoidPose};
use crate::pipeline::{OutputMsg, OutputRing};

/// Angles of a pose, degrees, from its normalized model rotations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PoseSummary {
    pub hips: Vec3,
    /// Upper arm above (+) or below (−) the horizontal, left and right.
    pub arm_elevation: [f32; 2],
    pub elbow_bend: [f32; 2],
    pub knee_bend: [f32; 2],
}

impl PoseSummary {
    #[must_use]
    pub fn of(pose: &HumanoidPose) -> Self {
        let model = pose.model_rotations();
        let m = |b: HumanBone| model[b.index()];
        // T-pose directions of the normalized bones: left arm +X, right arm −X,
        // legs −Y.
        let up = |v: Vec3| v.normalize().y.clamp(-1.0, 1.0).asin().to_degrees();
        let bend = |a: Vec3, b: Vec3| a.angle_between(b).to_degrees();
        let arm = |upper: HumanBone, lower: HumanBone, along: Vec3| {
            (
                up(m(upper) * along),
                bend(m(upper) * along, m(lower) * along),
            )
        };
        let (left_up, left_bend) = arm(HumanBone::LeftUpperArm, HumanBone::LeftLowerArm, Vec3::X);
        let (right_up, right_bend) =
            arm(HumanBone::RightUpperArm, HumanBone::RightLowerArm, -Vec3::X);
        let knee =
            |upper: HumanBone, lower: HumanBone| bend(m(upper) * -Vec3::Y, m(lower) * -Vec3::Y);
        Self {
            hips: pose.hips_position,
            arm_elevation: [left_up, right_up],
            elbow_bend: [left_bend, right_bend],
            knee_bend: [
                knee(HumanBone::LeftUpperLeg, HumanBone::LeftLowerLeg),
                knee(HumanBone::RightUpperLeg, HumanBone::RightLowerLeg),
            ],
        }
    }
}

impl std::fmt::Display for PoseSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "hips ({:+.2}, {:.2}, {:+.2}) m  arms {:+.0}°/{:+.0}°  elbows {:.0}°/{:.0}°  knees {:.0}°/{:.0}°",
            self.hips.x,
            self.hips.y,
            self.hips.z,
            self.arm_elevation[0],
            self.arm_elevation[1],
            self.elbow_bend[0],
            self.elbow_bend[1],
            self.knee_bend[0],
            self.knee_bend[1],
        )
    }
}

/// Prints when a performer appears and goes, and the newest pose of each
/// performer every `interval` (never when `None`).
pub struct Monitor {
    pub ring: OutputRing,
    pub interval: Option<Duration>,
    /// True once the bridge has said it is ready: nothing is printed before its
    /// ready line (what arrives meanwhile waits in the ring).
    pub ready: watch::Receiver<bool>,
    pub shutdown: watch::Receiver<bool>,
}

impl Monitor {
    pub async fn run(mut self) {
        tokio::select! {
            _ = self.ready.wait_for(|ready| *ready) => {}
            _ = self.shutdown.changed() => {}
        }
        let mut latest: BTreeMap<String, Latest> = BTreeMap::new();
        let mut tick = self.interval.map(tokio::time::interval);
        if let Some(tick) = &mut tick {
            tick.tick().await;
        }
        loop {
            tokio::select! {
                () = self.ring.ready() => {
                    while let Some(msg) = self.ring.try_pop() {
                        match msg {
                            OutputMsg::Pose(p) => {
                                let newest = Latest {
                                    seq: p.seq,
                                    time: p.time,
                                    pose: p.pose,
                                    printed: false,
                                };
                                latest.insert(p.performer.to_string(), newest);
                            }
                            OutputMsg::Appeared { performer, source } => {
                                say(&[format!("performer {performer} appeared ({source:?})")]);
                            }
                            OutputMsg::Gone { performer } => {
                                latest.remove(performer.as_str());
                                say(&[format!("performer {performer} gone")]);
                            }
                            // Never asked for here.
                            OutputMsg::ExpressionName { .. } | OutputMsg::Source(_) => {}
                        }
                    }
                    if self.ring.is_closed() {
                        return;
                    }
                }
                () = next_tick(tick.as_mut()) => print_lines(&mut latest),
                _ = self.shutdown.changed() => {}
            }
        }
    }
}

/// The next tick of `tick`; never without one.
async fn next_tick(tick: Option<&mut tokio::time::Interval>) {
    match tick {
        Some(tick) => {
            tick.tick().await;
        }
        None => std::future::pending().await,
    }
}

/// A performer's newest pose, and whether its line was printed.
struct Latest {
    seq: u64,
    time: f64,
    pose: HumanoidPose,
    printed: bool,
}

/// One line per performer whose newest pose is not printed yet: a performer that
/// sent nothing since the last interval is not printed again.
fn lines_due(latest: &mut BTreeMap<String, Latest>) -> Vec<String> {
    let mut lines = Vec::new();
    for (name, newest) in latest.iter_mut().filter(|(_, l)| !l.printed) {
        newest.printed = true;
        lines.push(format!(
            "{name:>12} frame {:>6} t {:>7.2}s  {}",
            newest.seq,
            newest.time,
            PoseSummary::of(&newest.pose)
        ));
    }
    lines
}

fn print_lines(latest: &mut BTreeMap<String, Latest>) {
    let lines = lines_due(latest);
    if !lines.is_empty() {
        say(&lines);
    }
}

/// Prints lines on the console, which may be gone (a closed pipe, `| head`): the
/// bridge keeps running and its takes are kept, so a failed write is not an error.
fn say(lines: &[String]) {
    let mut out = std::io::stdout().lock();
    for line in lines {
        let _ = writeln!(out, "{line}");
    }
    let _ = out.flush();
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Quat;

    #[test]
    fn arms_down_and_bent_knees_read_as_such() {
        let mut pose = HumanoidPose::default();
        // Left arm (+X) down: −90° about Z; right arm (−X) down: +90° about Z.
        pose.set_rotation(HumanBone::LeftUpperArm, Quat::from_rotation_z(-1.5707964));
        pose.set_rotation(HumanBone::RightUpperArm, Quat::from_rotation_z(1.5707964));
        pose.set_rotation(HumanBone::LeftLowerLeg, Quat::from_rotation_x(0.5));
        let s = PoseSummary::of(&pose);
        assert!(
            (s.arm_elevation[0] + 90.0).abs() < 0.01 && (s.arm_elevation[1] + 90.0).abs() < 0.01
        );
        assert!((s.knee_bend[0] - 0.5f32.to_degrees()).abs() < 0.01 && s.knee_bend[1].abs() < 0.01);
    }

    #[test]
    fn a_performer_is_printed_once_per_new_pose() {
        let mut latest = BTreeMap::new();
        let newest = |seq| Latest {
            seq,
            time: seq as f64 / 60.0,
            pose: HumanoidPose::default(),
            printed: false,
        };
        latest.insert("alice".to_owned(), newest(7));
        let first = lines_due(&mut latest);
        assert_eq!(first.len(), 1);
        assert!(first[0].contains("alice frame      7"), "{}", first[0]);
        // Nothing new: nothing printed again.
        assert!(lines_due(&mut latest).is_empty());
        latest.insert("alice".to_owned(), newest(8));
        assert_eq!(lines_due(&mut latest).len(), 1);
    }

    #[test]
    fn a_monitor_ends_when_the_solver_is_done() {
        let (port, ring) =
            crate::pipeline::output_ring("monitor", 4, crate::pipeline::Delivery::Newest);
        let (_tx, shutdown) = watch::channel(false);
        drop(port);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(
            Monitor {
                ring,
                interval: Some(Duration::from_secs(1)),
                ready: watch::channel(true).1,
                shutdown,
            }
            .run(),
        );
    }
}
