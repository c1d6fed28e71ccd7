//! The host programs of the workloads (the HIP `main`s), run against the emulated runtime. Each
//! checks its result against the host-side reference and returns the result-line values.

use crate::device::KernelBody;
use crate::opts::{RunOpts, Workload};
use crate::program::{self as hip, code_object};
use krphase_kernels::checksum::Checksum;
use krphase_kernels::device_memory::{fill_f64, get_f64, get_u64};
use krphase_kernels::{samples, saxpy, steps, stream};
use std::sync::Arc;

pub use crate::outcome::Outcome;

pub fn run(o: &RunOpts) -> Result<Outcome, String> {
    match o.workload {
        Workload::Stream => run_stream(o.elements, o.iterations),
        Workload::Saxpy => run_saxpy(o.elements, o.iterations),
        Workload::QueueDepth => run_steps(o, "queue_depth_step", o.depth, Submit::Single),
        Workload::MultiQueue => run_multi_queue(o.elements, o.iterations, o.threads, o.agents),
        Workload::Graph => run_steps(o, "graph_node", 3, Submit::Graph),
        Workload::MultiPacket => run_steps(o, "multi_packet_node", 2, Submit::Batch),
        Workload::Vmem => run_vmem(o.elements, o.iterations),
        Workload::Fork => crate::faults::fork::run(o),
        Workload::Churn => crate::faults::churn::run(o),
        Workload::ExitWorker => crate::faults::exit_worker::run(o),
        Workload::Samples => run_samples(o.iterations),
        Workload::Names => run_names(o.elements, o.iterations),
    }
}

fn run_stream(n: usize, iterations: usize) -> Result<Outcome, String> {
    let (a, b, c) = (hip::malloc(n), hip::malloc(n), hip::malloc(n));
    let sum = hip::host_malloc(1);
    fill_f64(&a.words, n, stream::INIT_A);
    fill_f64(&b.words, n, stream::INIT_B);
    fill_f64(&c.words, n, stream::INIT_C);
    let q = hip::create_stream();
    for _ in 0..iterations {
        let (a1, c1) = (a.clone(), c.clone());
        hip::launch(&q, "stream_copy", n, move || {
            stream::copy(&a1.words, &c1.words, n)
        });
        let (b1, c1) = (b.clone(), c.clone());
        hip::launch(&q, "stream_mul", n, move || {
            stream::mul(&b1.words, &c1.words, n)
        });
        let (a1, b1, c1) = (a.clone(), b.clone(), c.clone());
        hip::launch(&q, "stream_add", n, move || {
            stream::add(&a1.words, &b1.words, &c1.words, n)
        });
        let (a1, b1, c1) = (a.clone(), b.clone(), c.clone());
        hip::launch(&q, "stream_triad", n, move || {
            stream::triad(&a1.words, &b1.words, &c1.words, n)
        });
        let (a1, b1, s1) = (a.clone(), b.clone(), sum.clone());
        hip::launch(&q, "stream_dot", n, move || {
            stream::dot(&a1.words, &b1.words, &s1.words, n)
        });
        q.synchronize();
    }
    let (ea, eb, ec, es) = stream::expected(iterations, n);
    for (name, r, want) in [("a", &a, ea), ("b", &b, eb), ("c", &c, ec)] {
        if let Some(i) = (0..n).find(|&i| get_f64(&r.words, i) != want) {
            return Err(format!(
                "{name}[{i}] = {} but the reference gives {want}",
                get_f64(&r.words, i)
            ));
        }
    }
    if iterations > 0 && !stream::close(get_f64(&sum.words, 0), es, 1e-8) {
        return Err(format!(
            "dot = {} but the reference gives {es}",
            get_f64(&sum.words, 0)
        ));
    }
    let mut cs = Checksum::default();
    for r in [&a, &b, &c] {
        cs.add_words(&r.words, n);
    }
    cs.add_words(&sum.words, 1);
    for r in [&a, &b, &c, &sum] {
        hip::free(r);
    }
    Ok(Outcome {
        checksum: cs,
        counter: 0,
    })
}

fn run_saxpy(n: usize, iterations: usize) -> Result<Outcome, String> {
    let (x, y) = (hip::malloc(n), hip::malloc(n));
    fill_f64(&x.words, n, saxpy::INIT_X);
    fill_f64(&y.words, n, saxpy::INIT_Y);
    let counter = code_object().saxpy_calls.clone();
    let q = hip::create_stream();
    for _ in 0..iterations {
        let (x1, y1, c1) = (x.clone(), y.clone(), counter.clone());
        hip::launch(&q, "saxpy", n, move || {
            saxpy::saxpy(&x1.words, &y1.words, &c1.words, n)
        });
        q.synchronize();
    }
    let (ey, ec) = saxpy::expected(iterations);
    let calls = get_u64(&counter.words, 0);
    if let Some(i) = (0..n).find(|&i| get_f64(&y.words, i) != ey) {
        return Err(format!(
            "y[{i}] = {} but the reference gives {ey}",
            get_f64(&y.words, i)
        ));
    }
    if calls != ec {
        return Err(format!("saxpy_calls = {calls} but {ec} launches were made"));
    }
    let mut cs = Checksum::default();
    cs.add_words(&y.words, n);
    cs.add_u64(calls);
    hip::free(&x);
    hip::free(&y);
    Ok(Outcome {
        checksum: cs,
        counter: calls,
    })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Submit {
    Single,
    Graph,
    Batch,
}

/// queue-depth (K single launches between syncs), graph (3 nodes per launch) and multi-packet
/// (2 packets per write): every launch adds 1 to each element.
fn run_steps(
    o: &RunOpts,
    kernel: &'static str,
    per_round: usize,
    how: Submit,
) -> Result<Outcome, String> {
    let n = o.elements;
    let x = hip::malloc(n);
    let q = hip::create_stream();
    for _ in 0..o.iterations {
        let body = |x: Arc<crate::memory::Region>| -> KernelBody {
            Arc::new(move || steps::add_step(&x.words, n, 1))
        };
        match how {
            Submit::Single => {
                for _ in 0..per_round {
                    let x1 = x.clone();
                    hip::launch(&q, kernel, n, move || steps::add_step(&x1.words, n, 1));
                }
            }
            Submit::Graph => hip::graph_launch(
                &q,
                (0..per_round)
                    .map(|_| (kernel, n, body(x.clone())))
                    .collect(),
            ),
            Submit::Batch => hip::launch_batch(
                &q,
                (0..per_round)
                    .map(|_| (kernel, n, body(x.clone())))
                    .collect(),
            ),
        }
        q.synchronize();
    }
    let want = (o.iterations * per_round) as u64;
    steps::expect_count(&x.words, n, want)
        .map_err(|got| format!("x[0] = {got} but {want} steps were launched"))?;
    let mut cs = Checksum::default();
    cs.add_words(&x.words, n);
    hip::free(&x);
    Ok(Outcome {
        checksum: cs,
        counter: 0,
    })
}

/// Thread t uses GPU agent t mod `agents`: its buffer and its queue live there.
fn run_multi_queue(
    n: usize,
    iterations: usize,
    threads: usize,
    agents: u64,
) -> Result<Outcome, String> {
    let agent = |t: usize| crate::agents::gpu_agent(t as u64 % agents);
    let bufs: Vec<_> = (0..threads).map(|t| hip::malloc_on(agent(t), n)).collect();
    let queues: Vec<_> = (0..threads)
        .map(|t| hip::create_stream_on(agent(t)))
        .collect();
    std::thread::scope(|s| {
        for (x, q) in bufs.iter().zip(&queues) {
            s.spawn(move || {
                for _ in 0..iterations {
                    let x1 = x.clone();
                    hip::launch(q, "multi_queue_step", n, move || {
                        steps::add_step(&x1.words, n, 1)
                    });
                    q.synchronize();
                }
            });
        }
    });
    let mut cs = Checksum::default();
    for (t, x) in bufs.iter().enumerate() {
        steps::expect_count(&x.words, n, iterations as u64).map_err(|got| {
            format!("thread {t}: x[0] = {got} but {iterations} steps were launched")
        })?;
        cs.add_words(&x.words, n);
    }
    for x in &bufs {
        hip::free(x);
    }
    Ok(Outcome {
        checksum: cs,
        counter: 0,
    })
}

/// A kernel touching a live vmem mapping: the SDK declines replay as untracked memory.
fn run_vmem(n: usize, iterations: usize) -> Result<Outcome, String> {
    let v = hip::vmem_malloc(n);
    let q = hip::create_stream();
    for _ in 0..iterations {
        let v1 = v.clone();
        hip::launch(&q, "vmem_touch", n, move || {
            steps::add_step(&v1.words, n, 1)
        });
        q.synchronize();
    }
    steps::expect_count(&v.words, n, iterations as u64)
        .map_err(|got| format!("v[0] = {got} but {iterations} steps were launched"))?;
    let mut cs = Checksum::default();
    cs.add_words(&v.words, n);
    hip::free(&v);
    Ok(Outcome {
        checksum: cs,
        counter: 0,
    })
}

/// The SDK kernel-replay samples' application: two 4-byte device counters set to 0, then
/// `bump<<<1, 67>>>` on the first (the samples' clients replay it) and `nudge<<<1, 64>>>` on the
/// second (they opt it out); each adds 1. Both must read 1 after every round, which after a
/// replay of `bump` holds only if each pass started from the restored 0.
fn run_samples(iterations: usize) -> Result<Outcome, String> {
    let bumped =
        crate::memory::allocate(4, crate::memory::MemKind::Coarse, crate::agents::GPU_AGENT);
    let nudged =
        crate::memory::allocate(4, crate::memory::MemKind::Coarse, crate::agents::GPU_AGENT);
    let q = hip::create_stream();
    let mut cs = Checksum::default();
    for round in 0..iterations {
        samples::reset(&bumped.words);
        samples::reset(&nudged.words);
        let b = bumped.clone();
        hip::launch_shaped(
            &q,
            "bump",
            samples::BUMP_BLOCK,
            samples::BUMP_BLOCK,
            move || samples::bump(&b.words),
        );
        let n = nudged.clone();
        hip::launch_shaped(
            &q,
            "nudge",
            samples::NUDGE_BLOCK,
            samples::NUDGE_BLOCK,
            move || samples::nudge(&n.words),
        );
        q.synchronize();
        let (vb, vn) = (samples::read(&bumped.words), samples::read(&nudged.words));
        if (vb, vn) != (1, 1) {
            return Err(format!(
                "round {round}: bump's counter = {vb}, nudge's = {vn}, both should be 1"
            ));
        }
        cs.add_u64(u64::from(vb) << 32 | u64::from(vn));
    }
    hip::free(&bumped);
    hip::free(&nudged);
    Ok(Outcome {
        checksum: cs,
        counter: iterations as u64,
    })
}

/// `names.hip`: each of its six kernels once per iteration, each on its own array, adding 1
/// (the `touch` overload with an increment adds 2).
fn run_names(n: usize, iterations: usize) -> Result<Outcome, String> {
    const KERNELS: [(&str, u64); 6] = [
        ("names_saxpy", 1),
        ("names_step_u64", 1),
        ("names_step_i64", 1),
        ("names_touch", 1),
        ("names_touch_by", 2),
        ("names_plain", 1),
    ];
    let arrays: Vec<_> = KERNELS.iter().map(|_| hip::malloc(n)).collect();
    let q = hip::create_stream();
    for _ in 0..iterations {
        for ((kernel, by), x) in KERNELS.iter().zip(&arrays) {
            let (x1, by) = (x.clone(), *by);
            hip::launch(&q, kernel, n, move || steps::add_step(&x1.words, n, by));
        }
        q.synchronize();
    }
    let mut cs = Checksum::default();
    for ((kernel, by), x) in KERNELS.iter().zip(&arrays) {
        let want = iterations as u64 * by;
        steps::expect_count(&x.words, n, want)
            .map_err(|got| format!("{kernel}: x[0] = {got} but it should be {want}"))?;
        cs.add_words(&x.words, n);
        hip::free(x);
    }
    Ok(Outcome {
        checksum: cs,
        counter: 0,
    })
}
