//! `exit-worker`: `--threads` threads (at least 2) dispatch on their own queues; after
//! `--exit-after` dispatches, thread 0 ends the whole process with `exit(--exit-code)` or
//! `abort()` (`--exit-how`) while the others are still dispatching. Its last act is an `exit`
//! truth line, so the ground truth says when and how the process ended; no result line follows.

use crate::opts::{ExitHow, RunOpts};
use crate::outcome::Outcome;
use crate::program as hip;
use crate::{process, tool_time, truth};
use krphase_kernels::steps;
use serde_json::json;

fn end_process(o: &RunOpts) -> ! {
    let how = match o.exit_how {
        ExitHow::Exit => "exit",
        ExitHow::Abort => "abort",
    };
    truth::write(&json!({
        "type": "exit", "pid": std::process::id(), "how": how, "code": o.exit_code,
        "after": o.exit_after,
    }));
    tool_time::write_truth(how);
    match o.exit_how {
        ExitHow::Exit => process::exit(o.exit_code),
        ExitHow::Abort => std::process::abort(),
    }
}

pub fn run(o: &RunOpts) -> Result<Outcome, String> {
    if o.exit_after == 0 || o.exit_after > o.iterations {
        return Err(format!(
            "--exit-after must be 1 to --iterations ({}), got {}",
            o.iterations, o.exit_after
        ));
    }
    let n = o.elements;
    let threads = o.threads.max(2);
    let bufs: Vec<_> = (0..threads).map(|_| hip::malloc(n)).collect();
    let queues: Vec<_> = (0..threads).map(|_| hip::create_stream()).collect();
    std::thread::scope(|s| {
        for (t, (x, q)) in bufs.iter().zip(&queues).enumerate() {
            s.spawn(move || {
                for i in 0..o.iterations {
                    let x1 = x.clone();
                    hip::launch(q, "multi_queue_step", n, move || {
                        steps::add_step(&x1.words, n, 1)
                    });
                    q.synchronize();
                    if t == 0 && i + 1 == o.exit_after {
                        end_process(o);
                    }
                }
            });
        }
    });
    unreachable!("thread 0 ends the process after --exit-after dispatches")
}
