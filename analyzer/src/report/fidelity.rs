//! The report's pass-fidelity section (`answers/fidelity`): per kernel, pass 0 against the later
//! passes with the interval and n, the spread among the later passes, the stitching bound with
//! its basis, each pass's times by index, the counters collected in more than one pass, and the
//! pass plan's extra passes with their cost. As text or Markdown, and as CSV rows.

use crate::answers::fidelity::detect::{Flag, Median};
use crate::answers::fidelity::{KernelFidelity, Measure, RunFidelity, advice};
use crate::answers::run_report::RunReport;
use crate::db::basis::Basis;
use crate::render::fmt::{duration, percent, wrap};
use crate::render::table::{push_table, table};

/// A ratio with its interval: `0.71 [0.69, 0.73] n=40`, or without one below six windows.
fn ratio(m: &Option<Median>) -> String {
    match m {
        None => "-".into(),
        Some(m) => match (m.lo95, m.hi95) {
            (Some(lo), Some(hi)) => format!("{:.3} [{lo:.3}, {hi:.3}] n={}", m.estimate, m.n),
            _ => format!("{:.3} (no interval) n={}", m.estimate, m.n),
        },
    }
}

fn rel(m: &Option<Median>) -> String {
    match m {
        None => "-".into(),
        Some(m) => match (m.lo95, m.hi95) {
            (Some(lo), Some(hi)) => format!(
                "{} [{}, {}] n={}",
                percent(Some(m.estimate)),
                percent(Some(lo)),
                percent(Some(hi)),
                m.n
            ),
            _ => format!("{} n={}", percent(Some(m.estimate)), m.n),
        },
    }
}

fn median_ns(m: &Option<Median>) -> String {
    m.map_or("-".into(), |m| {
        format!("{} n={}", duration(m.estimate), m.n)
    })
}

fn verdict(k: &KernelFidelity) -> String {
    match &k.flagged {
        Some((what, Flag::Shift)) => format!("FLAGGED: {what} shifts"),
        Some((what, Flag::Stray)) => format!("FLAGGED: {what} strays"),
        None if k.bound.is_none() => "no evidence".into(),
        None => "within threshold".into(),
    }
}

/// One line of prose under the section, wrapped to the report's width and indented.
fn say(out: &mut String, text: &str) {
    say_at(out, "  ", text);
}

fn say_at(out: &mut String, indent: &str, text: &str) {
    out.push_str(&wrap(text, 98, indent, &format!("{indent}  ")));
}

/// The section, when the run has kernels with two passes or more.
pub fn render(r: &RunReport, markdown: bool, out: &mut String) {
    let f = &r.fidelity;
    if f.is_empty() {
        return;
    }
    say_at(
        out,
        "",
        &format!(
            "pass fidelity (threshold ±{}; each window's later passes against its reference pass, \
         median over windows with its distribution-free 95 % interval; windows are the unit):",
            percent(Some(f.threshold))
        ),
    );
    if markdown {
        out.push('\n');
    }
    let mut t = table(
        markdown,
        &[
            "kernel",
            "later / reference GPU [95%] n",
            "spread 1…N−1",
            "bound",
            "verdict",
        ],
    );
    for k in &f.kernels {
        let bound = k.bound.as_ref().map_or("-".into(), |b| {
            format!(
                "{} {} [{}]",
                percent(Some(b.value)),
                b.measure,
                b.basis.marker()
            )
        });
        t.add_row(vec![
            k.kernel.clone(),
            ratio(&k.gpu.as_ref().and_then(|g| g.detection.ratio)),
            rel(&k.later_spread),
            bound,
            verdict(k),
        ]);
    }
    push_table(out, &t, markdown);
    render_passes(f, markdown, out);
    render_counters(f, markdown, out);
    render_plan(f, out);
    for k in f.flagged() {
        if let Some((_, flag)) = &k.flagged {
            say(out, &format!("{}: {}.", k.kernel, advice(*flag)));
        }
    }
}

fn render_passes(f: &RunFidelity, markdown: bool, out: &mut String) {
    say(
        out,
        &format!(
            "each pass by index [{}] (median over windows):",
            Basis::InProcess.marker()
        ),
    );
    let mut t = table(
        markdown,
        &["kernel", "pass", "role", "GPU time", "host time"],
    );
    for k in &f.kernels {
        for p in &k.passes {
            t.add_row(vec![
                k.kernel.clone(),
                p.pass.to_string(),
                p.role.word().to_string(),
                median_ns(&p.gpu_ns),
                median_ns(&p.host_ns),
            ]);
        }
    }
    push_table(out, &t, markdown);
}

fn counter_row(kernel: &str, m: &Measure) -> Vec<String> {
    let d = &m.detection;
    vec![
        kernel.to_string(),
        format!("{} [{}]", m.name, m.basis.marker()),
        ratio(&d.ratio),
        rel(&d.stray),
        d.max_rel_diff.map_or("-".into(), |v| percent(Some(v))),
        match (d.exact, d.flag) {
            (true, _) => "exactly equal".into(),
            (_, Some(Flag::Shift)) => "FLAGGED: shifts".into(),
            (_, Some(Flag::Stray)) => "FLAGGED: strays".into(),
            _ => "within threshold".into(),
        },
    ]
}

fn render_counters(f: &RunFidelity, markdown: bool, out: &mut String) {
    if f.kernels.iter().all(|k| k.counters.is_empty()) {
        return;
    }
    say(
        out,
        "counters collected in more than one pass (later passes against the first that \
         collected each, per window):",
    );
    let mut t = table(
        markdown,
        &[
            "kernel",
            "counter",
            "later / first [95%] n",
            "stray [95%] n",
            "largest",
            "verdict",
        ],
    );
    for k in &f.kernels {
        for m in &k.counters {
            t.add_row(counter_row(&k.kernel, m));
        }
    }
    push_table(out, &t, markdown);
}

fn render_plan(f: &RunFidelity, out: &mut String) {
    if let Some(e) = &f.plan_error {
        say(
            out,
            &format!(
                "the tool's pass plan could not be read ({e}): every pass is taken as counted."
            ),
        );
    }
    let Some(p) = &f.plan else {
        return;
    };
    if let Some(why) = &p.refused {
        say(
            out,
            &format!("the tool counted nothing for this run: {why}"),
        );
    }
    if !p.reference.is_empty() {
        say(
            out,
            &format!(
                "reference counters {} in each of {} group(s): no extra pass; each takes a slot of \
             its block in every group.",
                p.reference.join(", "),
                p.groups.len()
            ),
        );
    }
    if let Some(c) = &f.extra {
        let what: Vec<&str> = [
            (p.warmup, "a warm-up pass"),
            (p.verify, "a verification pass"),
        ]
        .into_iter()
        .filter_map(|(on, w)| on.then_some(w))
        .collect();
        say(
            out,
            &format!(
                "cost of {} in every window [{}]: {} extra passes, {} GPU and {} host in all ({} of all passes' host time).",
                what.join(" and "),
                Basis::InProcess.marker(),
                c.passes,
                duration(c.gpu_ns as f64),
                duration(c.host_ns as f64),
                percent(c.share_of_pass_host)
            ),
        );
    }
    for k in &f.kernels {
        if let Some(w) = &k.warmup {
            say(
                out,
                &format!(
                    "{}: the counted passes ran at {} of the warm-up pass's GPU time (what the \
                 warm-up absorbed; left out of the ratios above).",
                    k.kernel,
                    ratio(&w.detection.ratio)
                ),
            );
        }
    }
}

/// The section as `run_id,label,section,name,metric,value,basis` records (section
/// `pass_fidelity`, name the kernel, or `kernel/counter`).
pub fn csv_rows(r: &RunReport) -> Vec<[String; 7]> {
    let id = r.run_id.to_string();
    let label = r.label.clone().unwrap_or_default();
    let mut rows = Vec::new();
    let mut push = |name: &str, metric: &str, value: String, basis: &str| {
        rows.push([
            id.clone(),
            label.clone(),
            "pass_fidelity".into(),
            name.to_string(),
            metric.to_string(),
            value,
            basis.to_string(),
        ]);
    };
    let f = &r.fidelity;
    for k in &f.kernels {
        let mut measures: Vec<(String, &Measure)> = Vec::new();
        measures.extend(k.gpu.iter().map(|m| (k.kernel.clone(), m)));
        measures.extend(
            k.counters
                .iter()
                .map(|m| (format!("{}/{}", k.kernel, m.name), m)),
        );
        for (name, m) in measures {
            let b = m.basis.code();
            let d = &m.detection;
            if let Some(r) = d.ratio {
                push(&name, "ratio_to_reference", format!("{}", r.estimate), b);
                push(
                    &name,
                    "ratio_lo95",
                    r.lo95.map_or(String::new(), |v| v.to_string()),
                    b,
                );
                push(
                    &name,
                    "ratio_hi95",
                    r.hi95.map_or(String::new(), |v| v.to_string()),
                    b,
                );
                push(&name, "windows", r.n.to_string(), "");
            }
            if let Some(s) = d.stray {
                push(&name, "stray", format!("{}", s.estimate), b);
            }
            if let Some(v) = d.max_rel_diff {
                push(&name, "max_rel_diff", format!("{v}"), b);
            }
            push(&name, "exact", u8::from(d.exact).to_string(), "");
            push(&name, "flagged", u8::from(d.flag.is_some()).to_string(), "");
        }
        if let Some(s) = k.later_spread {
            push(
                &k.kernel,
                "later_spread",
                format!("{}", s.estimate),
                Basis::InProcess.code(),
            );
        }
        if let Some(b) = &k.bound {
            push(
                &k.kernel,
                "stitching_bound",
                format!("{}", b.value),
                b.basis.code(),
            );
        }
        for p in &k.passes {
            let name = format!("{}/pass {}", k.kernel, p.pass);
            push(&name, "role", p.role.word().into(), "");
            if let Some(g) = p.gpu_ns {
                push(
                    &name,
                    "gpu_ns_median",
                    format!("{}", g.estimate),
                    Basis::InProcess.code(),
                );
            }
            if let Some(h) = p.host_ns {
                push(
                    &name,
                    "host_ns_median",
                    format!("{}", h.estimate),
                    Basis::InProcess.code(),
                );
            }
        }
    }
    if let Some(c) = &f.extra {
        let b = Basis::InProcess.code();
        push("extra passes", "count", c.passes.to_string(), "");
        push("extra passes", "gpu_ns", c.gpu_ns.to_string(), b);
        push("extra passes", "host_ns", c.host_ns.to_string(), b);
    }
    rows
}
