//! `fork`: `--threads` threads dispatch on their own queues while the main thread forks
//! `--children` children in a burst. HSA does not follow a fork onto the device, so a child
//! never dispatches: it does CPU work, then `exit(0)` (the SDK's and the tool's atexit
//! handlers run) or `execv("/bin/true")` (`--child-does`). The parent waits for every child
//! (30 s in all, then kills the rest) and fails unless each exited 0.

use crate::clock::now_ns;
use crate::opts::{ChildDoes, RunOpts};
use crate::outcome::Outcome;
use crate::process::{self, Ended, Forked};
use crate::program as hip;
use crate::truth;
use krphase_kernels::checksum::Checksum;
use krphase_kernels::steps;
use serde_json::json;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long the parent waits for all its children before it kills the rest.
const CHILD_WAIT: Duration = Duration::from_secs(30);

/// What the child does: a little CPU work, then exit or exec. Never returns; takes no lock of
/// the emulator (a parent thread may have held one when the process forked).
fn child_main(does: ChildDoes) -> ! {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for i in 0..200_000u64 {
        h = (h ^ i).wrapping_mul(0x0100_0000_01b3);
    }
    std::hint::black_box(h);
    match does {
        ChildDoes::Exit => process::exit(0),
        ChildDoes::AllocExit => {
            crate::memory::failed_allocate(4096, crate::agents::gpu_agent(0));
            process::exit(0)
        }
        ChildDoes::Exec => process::exec_true(),
    }
}

/// The fork burst: returns each child's pid, and the longest `fork()` call in ns.
fn fork_children(o: &RunOpts) -> Result<(Vec<i32>, u64), String> {
    let mut kids = Vec::with_capacity(o.children);
    let mut longest = 0;
    for _ in 0..o.children {
        let t0 = now_ns();
        match process::fork()? {
            Forked::Child => child_main(o.child_does),
            Forked::Parent(pid) => kids.push(pid),
        }
        longest = longest.max(now_ns().saturating_sub(t0));
    }
    Ok((kids, longest))
}

pub fn run(o: &RunOpts) -> Result<Outcome, String> {
    let n = o.elements;
    let bufs: Vec<_> = (0..o.threads).map(|_| hip::malloc(n)).collect();
    let queues: Vec<_> = (0..o.threads).map(|_| hip::create_stream()).collect();
    let counts: Vec<AtomicU64> = (0..o.threads).map(|_| AtomicU64::new(0)).collect();
    let stop = AtomicBool::new(false);
    let forked = std::thread::scope(|s| {
        for ((x, q), count) in bufs.iter().zip(&queues).zip(&counts) {
            let stop = &stop;
            s.spawn(move || {
                // At least --iterations dispatches, and on until the children have been reaped.
                while count.load(Ordering::SeqCst) < o.iterations as u64
                    || !stop.load(Ordering::SeqCst)
                {
                    let x1 = x.clone();
                    hip::launch(q, "multi_queue_step", n, move || {
                        steps::add_step(&x1.words, n, 1)
                    });
                    q.synchronize();
                    count.fetch_add(1, Ordering::SeqCst);
                }
            });
        }
        // Fork only once every thread is dispatching.
        while counts.iter().any(|c| c.load(Ordering::SeqCst) == 0) {
            std::thread::sleep(Duration::from_millis(1));
        }
        let forked = fork_children(o);
        let deadline = Instant::now() + CHILD_WAIT;
        let ends: Vec<(i32, Ended)> = match &forked {
            Ok((kids, _)) => kids
                .iter()
                .map(|&p| (p, process::wait_until(p, deadline)))
                .collect(),
            Err(_) => Vec::new(),
        };
        stop.store(true, Ordering::SeqCst);
        forked.map(|(_, longest)| (ends, longest))
    });
    let (ends, longest_fork) = forked?;
    truth::write(&json!({
        "type": "fork", "pid": std::process::id(), "child_does": o.child_does.name(),
        "children": ends.iter().map(|(p, e)| json!({"pid": p, "end": e.text()})).collect::<Vec<_>>(),
        "max_fork_ns": longest_fork,
    }));
    println!(
        "fork children={} exits={}",
        ends.len(),
        ends.iter()
            .map(|(_, e)| e.text())
            .collect::<Vec<_>>()
            .join(",")
    );
    if let Some((p, e)) = ends.iter().find(|(_, e)| *e != Ended::Code(0)) {
        return Err(format!("child {p} ended {}", e.text()));
    }
    let mut cs = Checksum::default();
    for (t, (x, c)) in bufs.iter().zip(&counts).enumerate() {
        let want = c.load(Ordering::SeqCst);
        steps::expect_count(&x.words, n, want)
            .map_err(|got| format!("thread {t}: x[0] = {got} but {want} steps were launched"))?;
        cs.add_words(&x.words, n);
    }
    for x in &bufs {
        hip::free(x);
    }
    Ok(Outcome {
        checksum: cs,
        counter: ends.len() as u64,
    })
}
