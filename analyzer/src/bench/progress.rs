//! Bench progress: a bar when stderr is a terminal; otherwise one line per measurement (what
//! starts, runs done of all, elapsed, and the time left at the pace so far), so a log or CI job
//! shows where a long bench is. Both give an estimate of the whole once the first run is timed.

use std::cell::Cell;
use std::io::IsTerminal;
use std::time::Instant;

/// Progress over `total` runs (warm-ups included).
pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
    total: u64,
    done: Cell<u64>,
    started: Instant,
    estimated: Cell<bool>,
}

/// `secs` as `42 s`, `3.5 min` or `1.2 h`.
pub fn human(secs: f64) -> String {
    if secs < 90.0 {
        format!("{secs:.0} s")
    } else if secs < 5400.0 {
        format!("{:.1} min", secs / 60.0)
    } else {
        format!("{:.1} h", secs / 3600.0)
    }
}

impl Progress {
    /// Progress over `total` runs; says on stderr how many runs the bench will make.
    pub fn new(total: u64, measurements: usize) -> Progress {
        eprintln!(
            "krphase bench: {measurements} measurement(s), {total} runs (warm-ups included); an \
             estimate of the time follows the first run"
        );
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = indicatif::ProgressBar::new(total);
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "{bar:30} {pos}/{len} runs, ETA {eta} | {msg}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            b
        });
        Progress {
            bar,
            total,
            done: Cell::new(0),
            started: Instant::now(),
            estimated: Cell::new(false),
        }
    }

    /// Seconds left at the pace so far (`None` before the first run).
    fn left(&self) -> Option<f64> {
        let done = self.done.get();
        (done > 0).then(|| {
            let per = self.started.elapsed().as_secs_f64() / done as f64;
            per * self.total.saturating_sub(done) as f64
        })
    }

    /// A measurement starts.
    pub fn start(&self, what: &str) {
        match &self.bar {
            Some(b) => b.set_message(what.to_string()),
            None => eprintln!(
                "krphase bench: [{}/{} runs, {} elapsed{}] {what}",
                self.done.get(),
                self.total,
                human(self.started.elapsed().as_secs_f64()),
                self.left()
                    .map_or(String::new(), |s| format!(", about {} left", human(s)))
            ),
        }
    }

    /// One run finished.
    pub fn inc(&self) {
        self.done.set(self.done.get() + 1);
        if let Some(b) = &self.bar {
            b.inc(1);
        }
        if !self.estimated.replace(true) {
            let first = self.started.elapsed().as_secs_f64();
            self.line(&format!(
                "the first run took {}: about {} for all {} runs at that pace (runs of larger \
                 footprints take longer)",
                human(first),
                human(first * self.total as f64),
                self.total
            ));
        }
    }

    /// A line on stderr that does not tear the bar.
    pub fn line(&self, text: &str) {
        match &self.bar {
            Some(b) => b.suspend(|| eprintln!("krphase bench: {text}")),
            None => eprintln!("krphase bench: {text}"),
        }
    }

    /// Clears the bar.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_in_a_fitting_unit() {
        assert_eq!(human(42.0), "42 s");
        assert_eq!(human(210.0), "3.5 min");
        assert_eq!(human(7200.0), "2.0 h");
    }
}
