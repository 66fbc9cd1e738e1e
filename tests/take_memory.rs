//! A take's memory stays flat however long it records: ten minutes at 120 Hz
//! through the recorder's `Recording` (journal and spooled tracks), with the heap
//! in use measured by a counting allocator after the first minute and after the
//! tenth. The take is then written and read back whole.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use mocap_bridge::formats::vrma::{self, VrmaRest};
use mocap_bridge::humanoid::{CustomNames, Preset};
use mocap_bridge::record::journal::Recording;

/// Counts the bytes allocated and not yet freed, by every thread.
struct LiveBytes;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed straight to the system allocator.
unsafe impl GlobalAlloc for LiveBytes {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Relaxed);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size, Relaxed);
        LIVE.fetch_sub(layout.size(), Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: LiveBytes = LiveBytes;

const RATE: usize = 120;

#[test]
fn ten_minutes_at_120_hz_take_the_memory_of_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut recording =
        Recording::start(dir.path(), "long", "alice", VrmaRest::standard(0.9)).expect("a take");
    let names = CustomNames::default();
    let before = LIVE.load(Relaxed);
    let (mut after_one, mut data_after_one) = (0, 0);
    for i in 0..10 * 60 * RATE {
        let t = i as f32 / RATE as f32;
        let mut pose = mocap_bridge::takes::demo::pose_at(t, 0.9);
        pose.expressions
            .set_preset(Preset::Blink, (i % 50) as f32 / 50.0);
        recording.push(t, &pose, &names).expect("a frame");
        if i % 12 == 11 {
            recording.flush().expect("the journal"); // as the recorder does
        }
        if i + 1 == 60 * RATE {
            after_one = LIVE.load(Relaxed) - before;
            data_after_one = recording.binary_bytes();
        }
    }
    let after_ten = LIVE.load(Relaxed) - before;
    let data_after_ten = recording.binary_bytes();
    let mb = |b: usize| b as f64 / 1e6;
    println!(
        "heap in use by a take at 120 Hz: {:.2} MB after 1 min, {:.2} MB after 10 min \
         (its data: {:.1} MB, then {:.1} MB)",
        mb(after_one),
        mb(after_ten),
        data_after_one as f64 / 1e6,
        data_after_ten as f64 / 1e6,
    );
    // Nine more minutes of data add nine times the first minute's; the heap may
    // grow only by the spool's chunk index, a tiny fraction of that.
    let added_data = (data_after_ten - data_after_one) as usize;
    assert!(
        after_ten.saturating_sub(after_one) < added_data / 100,
        "the heap grew by {:.2} MB while the take grew by {:.1} MB",
        mb(after_ten.saturating_sub(after_one)),
        mb(added_data)
    );

    let finished = recording.finish().expect("the take is written");
    assert_eq!(finished.frames, 10 * 60 * RATE);
    let read = vrma::load(&finished.path, None).expect("the take reads back");
    assert_eq!(read.frame_times().len(), 10 * 60 * RATE);
    assert_eq!(
        read.frame_times().last().copied(),
        Some((10 * 60 * RATE - 1) as f32 / RATE as f32)
    );
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .collect();
    assert_eq!(
        leftovers,
        [std::ffi::OsString::from("long.vrma")],
        "no journal or spool left"
    );
}
