//! The house's rules, read from the sources themselves: module layering (no sibling cycles in any
//! crate, the analyzer's rooms in layers, the same table as `docs/architecture.md`), no `#[path]`
//! in any crate's `src/`, no oversized file, the format crate wire-only, and the window model
//! depending only on the format crate. Each rule's checker is also tried on an input that breaks
//! it, so a checker that sees nothing cannot pass unnoticed.

mod cycles;
mod format_wire;
mod layers;
mod modules;
mod no_path;
mod sizes;
mod windows_deps;
