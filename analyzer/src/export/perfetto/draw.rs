//! Drawing runs into a sink on two threads: this one reads the database ([`super::rows`]) while
//! a second one draws the rows ([`super::windows`]) through the trace's model, batch by batch.

use std::sync::mpsc::{Receiver, sync_channel};

use anyhow::Result;
use rusqlite::Connection;

use super::model::{RunWriter, Sink};
use super::rows::{Batch, read_runs};
use super::windows::{Names, draw_plain_dispatches, draw_windows};

/// Writes `runs` into `sink`, one after the other: this thread reads the database
/// ([`rows`](super::rows)) while a second one draws the rows into the sink, batch by batch.
pub fn write_runs<S: Sink + Send>(conn: &Connection, runs: &[i64], sink: &mut S) -> Result<()> {
    // A few batches in flight keep both threads busy without holding the run in memory.
    let (tx, rx) = sync_channel::<Batch>(4);
    std::thread::scope(|scope| {
        let drawer = scope.spawn(move || draw_runs(&rx, sink));
        let read = read_runs(conn, runs, &tx);
        drop(tx);
        let drawn = drawer
            .join()
            .map_err(|_| anyhow::anyhow!("the trace drawing thread panicked"))?;
        // When drawing failed, reading stopped for it: drawing's error is the one to report.
        drawn.and(read)
    })
}

/// Draws the batches of each run as they arrive; returns when the reader is done (or stopped).
fn draw_runs<S: Sink>(rx: &Receiver<Batch>, sink: &mut S) -> Result<()> {
    while let Ok(b) = rx.recv() {
        let Batch::Run(info) = b else {
            anyhow::bail!("trace rows out of order: a batch before its run");
        };
        sink.begin_run(&info)?;
        let mut w = RunWriter::new(&mut *sink, info.id);
        let mut names = Names::default();
        loop {
            match rx.recv() {
                Ok(Batch::Windows(b)) => draw_windows(&b, &mut names, &mut w)?,
                Ok(Batch::Plain(b)) => draw_plain_dispatches(&b, &mut w)?,
                Ok(Batch::RunEnd) => break,
                // The reader stopped on an error, which it reports.
                Ok(Batch::Run(_)) | Err(_) => return Ok(()),
            }
        }
        w.write_in_flight()?;
        sink.end_run()?;
    }
    Ok(())
}
