//! Where a compared set of numbers came from, for any text a reader may act on without the
//! database (a pull-request section, a report page): the krphase that computed them (version and
//! the git commit it was built from), where and when the runs ran, how many runs each side has,
//! the order the runs ran in (from the phase files' own start times), the commands that
//! produced the rows, and whether the emulator produced them. One struct, rendered to Markdown
//! here; other renderers (an HTML page) read the same fields.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use anyhow::Result;
use rusqlite::Connection;
use serde::Serialize;

use crate::db::emulated::{command_is_emulated, markdown_note};
use crate::db::measurements::StoredMeasurement;

/// The git commit this krphase was built from (`build.rs`), `unknown` outside a checkout.
pub const COMMIT: &str = env!("KRPHASE_GIT_COMMIT");

/// One side of a comparison.
#[derive(Debug, Clone, Serialize)]
pub struct SideProvenance {
    /// `A` or `B`.
    pub side: String,
    /// The label (or run id) that selects it.
    pub selector: String,
    /// Whole-run rows compared.
    pub rows: usize,
    /// Timed runs behind its rows (phase-file launches, else the rows' sample counts), the
    /// smallest and largest over its rows.
    pub runs_min: usize,
    pub runs_max: usize,
    /// Warm-up launches found and left out.
    pub warmup_files: usize,
    /// Where its rows came from (`krphase-bench`, `replay_perf`, `rocprofv3-benchmark`).
    pub sources: Vec<String>,
}

/// Everything a reader needs to trust, or re-make, the numbers.
#[derive(Debug, Clone, Serialize)]
pub struct Provenance {
    pub krphase_version: String,
    pub krphase_commit: String,
    /// Hosts the runs ran on (from their phase files), else this machine.
    pub hosts: Vec<String>,
    /// When this text was made (UTC).
    pub generated_utc: String,
    pub sides: Vec<SideProvenance>,
    /// The order the two sides' runs started in, e.g. `A B A B A B`, when the phase files tell.
    pub run_order: Option<String>,
    /// The commands that produced the rows, then the one that made this text.
    pub commands: Vec<String>,
    /// True when the emulator (krphase-emu) produced any of the numbers.
    pub emulated: bool,
}

fn this_host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

/// The runs of `rows` (timed launches' files), with host, command and start.
fn run_facts(conn: &Connection, rows: &[&StoredMeasurement]) -> Result<Vec<(String, String, i64)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT COALESCE(host, ''), COALESCE(command, ''), COALESCE(clock_realtime_ns, 0)
         FROM krphase_run WHERE id = ?1",
    )?;
    let mut out = Vec::new();
    for m in rows {
        for launch in &m.launches {
            if let Some(first) = launch.first() {
                out.push(stmt.query_row([first], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?);
            }
        }
    }
    Ok(out)
}

/// `A B A B …` from the two sides' launch start times, runs of one side shortened as `A×5`.
fn order_text(mut starts: Vec<(i64, String)>) -> Option<String> {
    if starts.len() < 2 || starts.iter().any(|(t, _)| *t == 0) {
        return None;
    }
    starts.sort_unstable();
    let mut parts: Vec<(String, usize)> = Vec::new();
    for (_, s) in starts {
        match parts.last_mut() {
            Some((c, n)) if *c == s => *n += 1,
            _ => parts.push((s, 1)),
        }
    }
    let sides: BTreeSet<&String> = parts.iter().map(|(c, _)| c).collect();
    let interleaved = parts.iter().all(|(_, n)| *n == 1);
    let text = parts
        .iter()
        .map(|(c, n)| {
            if *n == 1 {
                c.clone()
            } else {
                format!("{c}×{n}")
            }
        })
        .collect::<Vec<_>>()
        .join(" ");
    Some(if interleaved {
        format!("{text} (interleaved)")
    } else if parts.len() == sides.len() {
        format!("{text} (one side after the other: drift between them reads as a change)")
    } else {
        text
    })
}

fn side(tag: &str, selector: &str, rows: &[&StoredMeasurement]) -> SideProvenance {
    let runs: Vec<usize> = rows
        .iter()
        .map(|m| {
            if m.launches.is_empty() {
                m.samples.unwrap_or(0).max(0) as usize
            } else {
                m.launches.len()
            }
        })
        .collect();
    let sources: BTreeSet<String> = rows.iter().filter_map(|m| m.source.clone()).collect();
    SideProvenance {
        side: tag.into(),
        selector: selector.into(),
        rows: rows.len(),
        runs_min: runs.iter().copied().min().unwrap_or(0),
        runs_max: runs.iter().copied().max().unwrap_or(0),
        warmup_files: rows.iter().map(|m| m.warmup_runs.len()).sum(),
        sources: sources.into_iter().collect(),
    }
}

/// One side to describe: its tag (`A`, `B`, …), its selector and its rows.
pub type Side<'a> = (String, String, Vec<&'a StoredMeasurement>);

impl Provenance {
    /// The provenance of the rows of `sides`; `command` is the one that makes this text.
    pub fn of_sides(conn: &Connection, sides: &[Side<'_>], command: &str) -> Result<Provenance> {
        let mut facts = Vec::new();
        for (tag, _, rows) in sides {
            for f in run_facts(conn, rows)? {
                facts.push((tag.clone(), f));
            }
        }
        let hosts: BTreeSet<String> = facts
            .iter()
            .map(|(_, f)| f.0.clone())
            .filter(|h| !h.is_empty())
            .collect();
        let row_commands: BTreeSet<String> = sides
            .iter()
            .flat_map(|(_, _, rows)| rows.iter().filter_map(|m| m.command.clone()))
            .collect();
        let emulated = facts.iter().any(|(_, f)| command_is_emulated(&f.1))
            || row_commands.iter().any(|c| command_is_emulated(c));
        let starts = facts.iter().map(|(t, f)| (f.2, t.clone())).collect();
        let mut commands: Vec<String> = row_commands.into_iter().collect();
        commands.push(command.to_string());
        let sides = sides
            .iter()
            .map(|(tag, sel, rows)| side(tag, sel, rows))
            .collect();
        Ok(Provenance::made_now(
            hosts,
            sides,
            order_text(starts),
            commands,
            emulated,
        ))
    }

    /// The provenance of a report on runs `ids` (no sides): the hosts they ran on, the
    /// commands that produced them, whether the emulator did; `command` made the text.
    pub fn of_runs(conn: &Connection, ids: &[i64], command: &str) -> Result<Provenance> {
        let mut stmt = conn.prepare_cached(
            "SELECT COALESCE(host, ''), COALESCE(command, '') FROM krphase_run WHERE id = ?1",
        )?;
        let mut hosts = BTreeSet::new();
        let mut commands = BTreeSet::new();
        for id in ids {
            let (h, c): (String, String) = stmt.query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))?;
            if !h.is_empty() {
                hosts.insert(h);
            }
            if !c.is_empty() {
                commands.insert(c);
            }
        }
        let emulated = commands.iter().any(|c| command_is_emulated(c));
        let mut commands: Vec<String> = commands.into_iter().collect();
        commands.push(command.to_string());
        Ok(Provenance::made_now(
            hosts,
            Vec::new(),
            None,
            commands,
            emulated,
        ))
    }

    /// A block made now by this krphase; this machine stands in for unknown hosts.
    fn made_now(
        hosts: BTreeSet<String>,
        sides: Vec<SideProvenance>,
        run_order: Option<String>,
        commands: Vec<String>,
        emulated: bool,
    ) -> Provenance {
        Provenance {
            krphase_version: env!("CARGO_PKG_VERSION").into(),
            krphase_commit: COMMIT.into(),
            hosts: if hosts.is_empty() {
                vec![this_host()]
            } else {
                hosts.into_iter().collect()
            },
            generated_utc: crate::db::now_utc(),
            sides,
            run_order,
            commands,
            emulated,
        }
    }

    /// The block as HTML: the Markdown rendering, turned into HTML (one definition).
    pub fn to_html(&self) -> String {
        crate::render::html::markdown_to_html(&self.to_markdown())
    }

    /// The block as Markdown: a short list, then the commands in a code block.
    pub fn to_markdown(&self) -> String {
        let mut s = String::new();
        if self.emulated {
            let _ = writeln!(s, "{}\n", markdown_note());
        }
        let _ = writeln!(
            s,
            "- krphase {} (commit `{}`), generated {}",
            self.krphase_version, self.krphase_commit, self.generated_utc
        );
        let _ = writeln!(s, "- host: {}", self.hosts.join(", "));
        for p in &self.sides {
            let runs = if p.runs_min == p.runs_max {
                p.runs_min.to_string()
            } else {
                format!("{} to {}", p.runs_min, p.runs_max)
            };
            let warm = match p.warmup_files {
                0 => String::new(),
                n => format!("; {n} warm-up phase file(s) left out"),
            };
            let _ = writeln!(
                s,
                "- {} = `{}`: {} row(s), n = {runs} timed run(s) a row; from {}{warm}",
                p.side,
                p.selector,
                p.rows,
                p.sources.join(", ")
            );
        }
        if !self.sides.is_empty() {
            let _ = writeln!(
                s,
                "- run order: {}",
                self.run_order
                    .as_deref()
                    .unwrap_or("not recorded (no phase-file start times)")
            );
        }
        s.push_str("\nCommands:\n\n```sh\n");
        for c in &self.commands {
            let _ = writeln!(s, "{c}");
        }
        s.push_str("```\n");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_order_says_interleaved_or_one_after_the_other() {
        let o =
            |v: &[(i64, &str)]| order_text(v.iter().map(|(t, s)| (*t, s.to_string())).collect());
        assert_eq!(
            o(&[(1, "A"), (2, "B"), (3, "A"), (4, "B")]).unwrap(),
            "A B A B (interleaved)"
        );
        let seq = o(&[(3, "B"), (1, "A"), (2, "A"), (4, "B")]).unwrap();
        assert!(seq.starts_with("A×2 B×2 (one side after"), "{seq}");
        assert_eq!(o(&[(0, "A"), (1, "B")]), None, "unknown start");
    }

    #[test]
    fn the_commit_is_embedded() {
        assert!(!COMMIT.is_empty());
        let p = Provenance {
            krphase_version: "0.1.0".into(),
            krphase_commit: COMMIT.into(),
            hosts: vec!["h".into()],
            generated_utc: "2026-12-02T00:00:00Z".into(),
            sides: Vec::new(),
            run_order: None,
            commands: vec!["krphase compare a b".into()],
            emulated: true,
        };
        let md = p.to_markdown();
        assert!(md.starts_with("**EMULATED**"), "{md}");
        assert!(md.contains(&format!("commit `{COMMIT}`")), "{md}");
        assert!(md.contains("```sh\nkrphase compare a b\n```"), "{md}");
    }
}
