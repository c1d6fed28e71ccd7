//! How answers are written for people, whatever they answer: the output formats a command offers
//! ([`Format`]), figures (durations, bytes, shares: [`fmt`]), tables in the report's style
//! ([`table`]) fitted to the terminal ([`term_table`]), and self-contained HTML pages ([`html`]).
//! Knows no answer: the report, `compare`, `runs`, the bench summary and the demo all write
//! through it.

pub mod fmt;
pub mod html;
pub mod table;
pub mod term_table;

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Csv,
    Json,
    Markdown,
    /// One self-contained page (tables, plots inlined, no network needed).
    Html,
}
