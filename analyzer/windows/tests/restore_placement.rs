//! Where a window's restores ran, from the order of its callbacks: inside the next pass (after
//! its PASS ENTER, ahead of its kernel) or between passes, and no call when the evidence is too
//! close or a scheduling delay could explain it.

use krphase_windows::{Pass, Restore, restore_in_pass};

const US: u64 = 1_000;

/// Three passes 10 ms apart; pass `i` starts its kernel `lead[i]` after PASS ENTER, and the gap
/// before pass `i + 1` lasts `gap[i]`.
fn window(lead: [u64; 3], gap: [u64; 2]) -> (Vec<Pass>, Vec<Restore>) {
    let passes: Vec<Pass> = (0..3)
        .map(|i| {
            let enter = 10_000 * US * i as u64;
            Pass {
                index: i,
                enter: Some(enter),
                exit: Some(enter + 5_000 * US),
                gpu_start: Some(enter + lead[i as usize]),
                gpu_end: Some(enter + lead[i as usize] + 100 * US),
                ..Pass::default()
            }
        })
        .collect();
    let restores = (0..2)
        .map(|i| {
            let end = passes[i + 1].enter.unwrap();
            Restore {
                after_pass: i as u32,
                start: end - gap[i],
                end,
                continue_phase: None,
            }
        })
        .collect();
    (passes, restores)
}

#[test]
fn a_restore_after_pass_enter_is_inside_the_pass() {
    let (p, r) = window([20 * US, 720 * US, 730 * US], [4 * US, 3 * US]);
    assert_eq!(restore_in_pass(&p, &r, None), Some(true));
}

#[test]
fn a_restore_in_the_gap_is_between_passes() {
    let (p, r) = window([20 * US, 22 * US, 19 * US], [700 * US, 710 * US]);
    assert_eq!(restore_in_pass(&p, &r, None), Some(false));
}

/// A host-order window whose next pass was delayed longer than its restore (a loaded host): the
/// gap holds a restore, so it is never read as inside the pass.
#[test]
fn a_delayed_pass_never_moves_a_restore_out_of_its_gap() {
    let (p, r) = window([20 * US, 1_500 * US, 1_600 * US], [1_070 * US, 1_060 * US]);
    assert_eq!(restore_in_pass(&p, &r, None), None);
}

#[test]
fn too_close_or_disagreeing_evidence_says_nothing() {
    let (p, r) = window([20 * US, 40 * US, 30 * US], [10 * US, 20 * US]);
    assert_eq!(restore_in_pass(&p, &r, None), None, "both under the margin");
    let (p, r) = window([20 * US, 720 * US, 20 * US], [4 * US, 700 * US]);
    assert_eq!(restore_in_pass(&p, &r, None), None, "one each way");
    let (mut p, r) = window([20 * US, 720 * US, 730 * US], [4 * US, 3 * US]);
    for q in &mut p {
        q.gpu_start = None;
    }
    assert_eq!(
        restore_in_pass(&p, &r, None),
        None,
        "no kernel start or enqueue"
    );
}

/// Pass 0 itself delayed (a loaded host): the restore before pass 2 cannot tell, the one before
/// pass 1 can, and the gaps hold nothing.
#[test]
fn one_restore_that_can_tell_is_enough() {
    let (p, r) = window([14_500 * US, 19_700 * US, 6_400 * US], [2 * US, 3 * US]);
    assert_eq!(restore_in_pass(&p, &r, None), Some(true));
}

/// Every lead delayed alike, but the gaps are far too short to copy the snapshot's 16 MiB on any
/// host link: the restores ran inside the passes. Without the bytes nothing can be said.
#[test]
fn a_gap_too_short_for_the_snapshots_bytes_holds_no_restore() {
    let (p, r) = window([10_900 * US, 7_000 * US, 6_300 * US], [4 * US, 3 * US]);
    assert_eq!(restore_in_pass(&p, &r, None), None);
    assert_eq!(restore_in_pass(&p, &r, Some(16 << 20)), Some(true));
    // A small snapshot fits in a short gap: no claim.
    assert_eq!(restore_in_pass(&p, &r, Some(4096)), None);
}
