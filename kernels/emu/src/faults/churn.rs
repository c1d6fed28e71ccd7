//! `churn`: `--churn-threads` short-lived threads, `--threads` alive at a time, each launching
//! one dispatch on a shared queue and waiting for it, then exiting. Every element of the buffer
//! ends at the thread count.

use crate::opts::RunOpts;
use crate::outcome::Outcome;
use crate::program as hip;
use krphase_kernels::checksum::Checksum;
use krphase_kernels::steps;

pub fn run(o: &RunOpts) -> Result<Outcome, String> {
    let n = o.elements;
    let x = hip::malloc(n);
    let q = hip::create_stream();
    let mut started = 0;
    while started < o.churn_threads {
        let wave = o.threads.min(o.churn_threads - started);
        std::thread::scope(|s| {
            for _ in 0..wave {
                let (x, q) = (&x, &q);
                s.spawn(move || {
                    let x1 = x.clone();
                    hip::launch(q, "multi_queue_step", n, move || {
                        steps::add_step(&x1.words, n, 1)
                    });
                    q.synchronize();
                });
            }
        });
        started += wave;
    }
    let want = o.churn_threads as u64;
    steps::expect_count(&x.words, n, want)
        .map_err(|got| format!("x[0] = {got} but {want} threads launched one step each"))?;
    let mut cs = Checksum::default();
    cs.add_words(&x.words, n);
    hip::free(&x);
    Ok(Outcome {
        checksum: cs,
        counter: want,
    })
}
