//! The value of every dataset column for a row decoded from a phase file, as the SQLite path's
//! query would read it after `import`: the window's phases and bases are the view's
//! (`db::summary::fill`, the view's CASEs with no SDK log joined), the runs' columns are
//! `import`'s `krphase_run` row. Each table's columns are resolved to getters once, by name, so
//! a column added to a table without a getter here fails every `--from` export (and its test)
//! instead of writing NULLs.

use anyhow::{Result, bail};
use krphase_windows::{CounterReading, PlainDispatch};
use rusqlite::types::{Value, ValueRef};

use crate::db::basis::Basis;
use crate::db::phases::{PHASES, WindowRow};
use crate::export::parquet::columns::Column;
use crate::import::krp::{PassValues, RunFacts, WindowRows};

fn int(v: Option<i64>) -> ValueRef<'static> {
    v.map_or(ValueRef::Null, ValueRef::Integer)
}

fn text(v: Option<&str>) -> ValueRef<'_> {
    v.map_or(ValueRef::Null, |s| ValueRef::Text(s.as_bytes()))
}

fn basis(b: Option<Basis>) -> ValueRef<'static> {
    text(b.map(Basis::code))
}

fn minus(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    Some(a? - b?)
}

/// One window as the windows table reads it: its row, the view's figures and its ids.
pub struct WindowCells<'a> {
    /// The window's id in the dataset (its place in the run, from 1).
    pub id: i64,
    pub w: &'a WindowRows,
    pub v: &'a WindowRow,
    /// The kernel name as rocprofv3 shows it.
    pub kernel: Option<&'a str>,
}

/// How a windows column gets its value.
#[derive(Clone, Copy)]
pub enum WindowGet {
    Id,
    Kernel,
    Phase(usize),
    Basis(usize),
    Row(fn(&WindowRows) -> ValueRef<'_>),
    View(fn(&WindowRow) -> ValueRef<'_>),
}

/// The getter of the windows column `c`.
pub fn window_getter(c: &Column) -> Result<WindowGet> {
    if let Some(k) = PHASES.iter().position(|p| p.column == c.name) {
        return Ok(WindowGet::Phase(k));
    }
    if let Some(k) = PHASES.iter().position(|p| p.basis_column == c.name) {
        return Ok(WindowGet::Basis(k));
    }
    use WindowGet::{Id, Kernel, Row, View};
    Ok(match c.name {
        "window_id" => Id,
        "kernel" => Kernel,
        "dispatch_id" => Row(|w| ValueRef::Integer(w.dispatch_id)),
        "correlation_id" => Row(|w| int(w.correlation_id)),
        "kernel_id" => Row(|w| int(w.kernel_id)),
        "kernel_symbol" => Row(|w| text(w.kernel.as_deref())),
        "agent" => Row(|w| int(w.agent)),
        "queue" => Row(|w| int(w.queue)),
        "thread" => Row(|w| ValueRef::Integer(i64::from(w.thread))),
        "outcome" => Row(|w| text(Some(w.outcome))),
        "reason" => Row(|w| text(Some(&w.reason))),
        "source" => Row(|w| text(Some(w.source))),
        "requested_passes" => Row(|w| int(w.requested_passes)),
        "executed_passes" => Row(|w| ValueRef::Integer(w.executed_passes)),
        "start_ns" => Row(|w| int(w.start)),
        "end_ns" => Row(|w| int(w.end)),
        "restores" => Row(|w| ValueRef::Integer(w.restores)),
        "stuck_ns" => Row(|w| int(w.stuck_ns)),
        "bytes_upper" => Row(|w| int(w.bytes_upper)),
        "regions" => Row(|w| int(w.regions)),
        // Import writes no per-part byte split: NULL in the database too.
        "bytes_tracked" | "bytes_module" => Row(|_| ValueRef::Null),
        // No SDK log is joined on this path.
        "sdk_log_joined" => Row(|_| ValueRef::Integer(0)),
        "snapshot_bytes" => View(|v| int(v.snapshot_bytes)),
        "snapshot_bytes_basis" => View(|v| basis(v.bytes_basis)),
        other => bail!("windows.{other}: no value from a phase file"),
    })
}

impl WindowCells<'_> {
    pub fn get(&self, g: WindowGet) -> ValueRef<'_> {
        match g {
            WindowGet::Id => ValueRef::Integer(self.id),
            WindowGet::Kernel => text(self.kernel),
            WindowGet::Phase(k) => int(self.v.phase_ns[k]),
            WindowGet::Basis(k) => basis(self.v.phase_basis[k]),
            WindowGet::Row(f) => f(self.w),
            WindowGet::View(f) => f(self.v),
        }
    }
}

/// One pass as the passes table reads it.
pub struct PassCells<'a> {
    pub window_id: i64,
    pub w: &'a WindowRows,
    /// pass_index, start, end, gpu_start, gpu_end, restore_start, restore_end, incomplete,
    /// continue_ns, complete_host.
    pub p: &'a PassValues,
}

/// How a passes column gets its value.
pub type PassGet = fn(&PassCells<'_>) -> ValueRef<'static>;

fn measured(v: Option<i64>) -> ValueRef<'static> {
    text(v.map(|_| "in_process"))
}

/// The getter of the passes column `name`.
pub fn pass_getter(name: &str) -> Result<PassGet> {
    Ok(match name {
        "window_id" => |c| ValueRef::Integer(c.window_id),
        "dispatch_id" => |c| ValueRef::Integer(c.w.dispatch_id),
        "pass_index" => |c| int(c.p[0]),
        "start_ns" => |c| int(c.p[1]),
        "end_ns" => |c| int(c.p[2]),
        "host_ns" => |c| int(minus(c.p[2], c.p[1])),
        "host_basis" => |c| measured(minus(c.p[2], c.p[1])),
        "complete_host_ns" => |c| int(c.p[9]),
        "gpu_start_ns" => |c| int(c.p[3]),
        "gpu_end_ns" => |c| int(c.p[4]),
        "gpu_ns" => |c| int(minus(c.p[4], c.p[3])),
        "gpu_basis" => |c| measured(minus(c.p[4], c.p[3])),
        "continue_ns" => |c| int(c.p[8]),
        "continue_basis" => |c| measured(c.p[8]),
        "restore_start_ns" => |c| int(c.p[5]),
        "restore_end_ns" => |c| int(c.p[6]),
        "restore_ns" => |c| int(minus(c.p[6], c.p[5])),
        // Observe mode's restore is completion to the next enqueue (the view's rule).
        "restore_basis" => |c| match minus(c.p[6], c.p[5]) {
            None => ValueRef::Null,
            Some(_) if c.w.source == "observe" => text(Some("dispatch")),
            Some(_) => text(Some("in_process")),
        },
        "incomplete" => |c| int(c.p[7]),
        other => bail!("passes.{other}: no value from a phase file"),
    })
}

/// One dispatch as the dispatches table reads it.
pub struct DispatchCells<'a> {
    pub id: i64,
    pub d: &'a PlainDispatch,
    pub kernel: Option<&'a str>,
}

fn u(v: Option<u64>) -> ValueRef<'static> {
    int(v.map(|x| x as i64))
}

fn span(a: Option<u64>, b: Option<u64>) -> ValueRef<'static> {
    int(minus(a.map(|x| x as i64), b.map(|x| x as i64)))
}

/// How a dispatches column gets its value.
pub type DispatchGet = for<'a> fn(&DispatchCells<'a>) -> ValueRef<'a>;

/// The getter of the dispatches column `name`.
pub fn dispatch_getter(name: &str) -> Result<DispatchGet> {
    Ok(match name {
        "id" => |c| ValueRef::Integer(c.id),
        "dispatch_id" => |c| ValueRef::Integer(c.d.dispatch_id as i64),
        "correlation_id" => |c| u(c.d.correlation_id),
        "kernel" => |c| text(c.kernel),
        "kernel_symbol" => |c| text(c.d.kernel_name.as_deref()),
        "agent" => |c| u(c.d.agent),
        "queue" => |c| u(c.d.queue),
        "thread" => |c| ValueRef::Integer(i64::from(c.d.thread)),
        "had_config" => |c| ValueRef::Integer(i64::from(c.d.had_config)),
        "start_ns" => |c| u(c.d.enqueue_enter),
        "end_ns" => |c| u(c.d.enqueue_exit),
        "enqueue_ns" => |c| span(c.d.enqueue_exit, c.d.enqueue_enter),
        "gpu_start_ns" => |c| u(c.d.gpu_start),
        "gpu_end_ns" => |c| u(c.d.gpu_end),
        "gpu_ns" => |c| span(c.d.gpu_end, c.d.gpu_start),
        other => bail!("dispatches.{other}: no value from a phase file"),
    })
}

/// One counter value with the window it belongs to.
pub struct CounterCells<'a> {
    pub window_id: Option<i64>,
    pub c: &'a CounterReading,
}

/// How a counters column gets its value.
pub type CounterGet = for<'a> fn(&CounterCells<'a>) -> ValueRef<'a>;

/// The getter of the counters column `name`.
pub fn counter_getter(name: &str) -> Result<CounterGet> {
    Ok(match name {
        "window_id" => |c| int(c.window_id),
        "dispatch_id" => |c| ValueRef::Integer(c.c.dispatch_id as i64),
        "pass_index" => |c| ValueRef::Integer(i64::from(c.c.pass)),
        "counter_id" => |c| ValueRef::Integer(c.c.counter as i64),
        "counter" => |c| text(c.c.name.as_deref()),
        "value" => |c| ValueRef::Real(c.c.value.0),
        "instances" => |c| ValueRef::Integer(i64::from(c.c.instances)),
        "basis" => |_| text(Some("sdk_counting")),
        other => bail!("counters.{other}: no value from a phase file"),
    })
}

/// Everything the runs table says of a run decoded from `path`.
pub struct RunCells<'a> {
    pub path: &'a str,
    pub hash: &'a str,
    pub facts: &'a RunFacts,
    /// When the dataset was made: this path's import time.
    pub made_at: &'a str,
}

fn opt_text(v: Option<&str>) -> Value {
    v.map_or(Value::Null, |s| Value::Text(s.to_string()))
}

fn opt_int(v: Option<i64>) -> Value {
    v.map_or(Value::Null, Value::Integer)
}

/// The value of the runs column `name`, as `import` stores it in `krphase_run`.
pub fn run_value(name: &str, r: &RunCells<'_>) -> Result<Value> {
    use krphase_format::trailer::flags;
    let (f, h) = (r.facts, &r.facts.header);
    let t = f.trailer.as_ref();
    let tr = |g: fn(&krphase_format::Trailer) -> u64| opt_int(t.map(|t| g(t) as i64));
    Ok(match name {
        "label" => Value::Null,
        "hostname" => Value::Text(h.hostname.clone()),
        "rank" => opt_int(h.rank.as_ref().map(|x| i64::from(x.rank))),
        "world_size" => opt_int(h.rank.as_ref().and_then(|x| x.world_size.map(i64::from))),
        "rank_var" => opt_text(h.rank.as_ref().map(|x| x.var.as_str())),
        "pid" => Value::Integer(i64::from(h.pid)),
        "ppid" => Value::Integer(i64::from(h.ppid)),
        "command" => Value::Text(h.command_line.clone()),
        "emulated" => Value::Integer(i64::from(crate::db::emulated::command_is_emulated(
            &h.command_line,
        ))),
        "mode" => Value::Text(f.mode.name().to_string()),
        "passes" => Value::Integer(i64::from(h.passes)),
        "layout" => opt_text(f.layout),
        "kernel_filter" => opt_text((!h.filter.is_empty()).then_some(h.filter.as_str())),
        "sdk_version" => Value::Text(format!(
            "{}.{}.{}",
            h.sdk_version.0, h.sdk_version.1, h.sdk_version.2
        )),
        "format_version" => Value::Integer(i64::from(f.version.major)),
        "format_minor" => Value::Integer(i64::from(f.version.minor)),
        "path" => Value::Text(r.path.to_string()),
        "file_hash" => Value::Text(r.hash.to_string()),
        "clock_boottime_ns" => Value::Integer(h.boottime_ns as i64),
        "clock_realtime_ns" => Value::Integer(h.realtime_ns as i64),
        "utc_offset_s" => opt_int(h.utc_offset_s.map(i64::from)),
        "start_ns" => opt_int(f.start),
        "end_ns" => opt_int(f.end),
        "wall_ns" => opt_int(minus(f.end, f.start)),
        "finalize_ns" => opt_int(t.map(|t| t.finalize_ns as i64).filter(|&x| x > 0)),
        "truncated" => Value::Integer(i64::from(f.truncated)),
        "events" => Value::Integer(f.events as i64),
        "trailer_windows" => tr(|t| t.windows),
        "trailer_declines" => tr(|t| t.declines),
        "trailer_dispatches" => tr(|t| t.events_written),
        "dropped" => tr(|t| t.dropped_dispatch + t.dropped_allocation + t.dropped_window),
        "dropped_dispatch" => tr(|t| t.dropped_dispatch),
        "dropped_allocation" => tr(|t| t.dropped_allocation),
        "dropped_window" => tr(|t| t.dropped_window),
        "dropped_names" => tr(|t| t.dropped_names),
        "stall_ns" => tr(|t| t.stall_ns),
        "stalled" => opt_int(t.map(|t| i64::from(t.flags & flags::STALLED != 0))),
        "reader_note" => opt_text(f.note.as_deref()),
        "imported_at" => Value::Text(r.made_at.to_string()),
        other => bail!("runs.{other}: no value from a phase file"),
    })
}
