//! A sender's clock as a timeline that only goes forward (`SenderClock`): seconds
//! from the sender's first frame, as its own clock says, except where that clock
//! stalls or goes back (a sender restarted with its clock at 0, a datagram
//! arriving after a later one, a sender that sends no time at all). There the
//! timeline goes on one frame interval after its last time (the sender's last
//! step, else the time between the two frames' arrivals) and follows the sender's
//! clock from that point, so a take keeps every frame in order at its pace and no
//! time is ever negative.

/// Steps between frames this long or longer are pauses, not the sender's frame
/// interval, seconds.
const PAUSE: f64 = 1.0;

/// The frame interval assumed when neither the sender's clock nor the arrivals
/// show one, seconds.
const FIRST_INTERVAL: f64 = 1.0 / 60.0;

/// A sender's clock read as a forward-only timeline.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SenderClock {
    /// The sender's time at timeline 0 (moved when its clock went back).
    origin: Option<f64>,
    /// The last time handed out.
    last: f64,
    /// The last step forward shorter than `PAUSE`: the sender's frame interval.
    interval: Option<f64>,
    /// When the last frame arrived, seconds on the caller's clock.
    arrived: Option<f64>,
}

impl SenderClock {
    /// The last time handed out, seconds (0 before the first frame).
    #[must_use]
    pub fn last(&self) -> f64 {
        self.last
    }

    /// The timeline's time for sender time `t` of a frame that arrived at
    /// `arrived` (seconds on any clock that goes forward): 0 for the first frame,
    /// then the sender's own steps; one frame interval on where its clock stalls
    /// or goes back.
    pub fn time(&mut self, t: f64, arrived: f64) -> f64 {
        let since = self.arrived.map(|a| arrived - a);
        self.arrived = Some(arrived);
        let Some(origin) = self.origin else {
            self.origin = Some(t);
            return 0.0;
        };
        let time = t - origin;
        let step = time - self.last;
        if step > 0.0 {
            if step < PAUSE {
                self.interval = Some(step);
            }
            self.last = time;
            return time;
        }
        let arrivals = since.filter(|&s| s > 0.0 && s < PAUSE);
        let time = self.last + self.interval.or(arrivals).unwrap_or(FIRST_INTERVAL);
        self.origin = Some(t - time);
        self.last = time;
        time
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Times of frames arriving every 1/50 s.
    fn times(clock: &mut SenderClock, sender: &[f64]) -> Vec<f64> {
        (0..)
            .zip(sender)
            .map(|(i, &t)| clock.time(t, f64::from(i) / 50.0))
            .collect()
    }

    #[test]
    fn the_sender_clock_is_followed_from_its_first_frame() {
        let mut clock = SenderClock::default();
        assert_eq!(
            times(&mut clock, &[100.0, 100.5, 101.0, 104.0]),
            [0.0, 0.5, 1.0, 4.0]
        );
    }

    #[test]
    fn a_restarted_clock_goes_on_one_frame_after_the_last() {
        // A sender sending at 50 Hz restarts with its clock at 0.
        let mut clock = SenderClock::default();
        let got = times(&mut clock, &[3.0, 3.02, 3.04, 0.0, 0.02, 0.04]);
        let want = [0.0, 0.02, 0.04, 0.06, 0.08, 0.1];
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-9, "{got:?}");
        }
    }

    #[test]
    fn a_stalled_or_late_frame_still_moves_forward() {
        let mut clock = SenderClock::default();
        // The same time twice, then a frame older than the last.
        let got = times(&mut clock, &[0.0, 0.1, 0.1, 0.05, 0.15]);
        assert!(got.windows(2).all(|w| w[1] > w[0]), "{got:?}");
        // A pause does not become the interval a stall steps by.
        let mut clock = SenderClock::default();
        let got = times(&mut clock, &[0.0, 0.02, 5.0, 5.0]);
        assert!((got[3] - 5.02).abs() < 1e-9, "{got:?}");
    }

    #[test]
    fn a_sender_sending_no_time_keeps_the_pace_of_its_arrivals() {
        // Every frame says 0: the frames arrive every 1/50 s.
        let mut clock = SenderClock::default();
        let got = times(&mut clock, &[0.0; 4]);
        for (g, w) in got.iter().zip([0.0, 0.02, 0.04, 0.06]) {
            assert!((g - w).abs() < 1e-9, "{got:?}");
        }
    }
}
