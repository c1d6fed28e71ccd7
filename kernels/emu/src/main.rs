//! `krphase-emu`: subcommand routing. The SDK's exported C functions live in `exports.rs`, part
//! of this binary crate so they are linked and (with `-rdynamic`) visible to the tools' dlsym.

mod exports;

use std::ffi::OsString;

const USAGE: &str = "usage: krphase-emu run WORKLOAD [options]   (krphase-emu run --help)
workloads: stream saxpy queue-depth multi-queue graph multi-packet vmem";

fn main() {
    exports::keep();
    let args: Vec<OsString> = std::env::args_os().collect();
    let code = match args.get(1).and_then(|a| a.to_str()) {
        Some("run") => krphase_emu::run::main(&args[1..]),
        // Further subcommands hook in here, e.g. `Some("rocprofv3") => rocprofv3::main(&args[1..]),`.
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            0
        }
        Some(other) => {
            eprintln!("krphase-emu: unknown subcommand {other:?}\n{USAGE}");
            2
        }
        None => {
            eprintln!("{USAGE}");
            2
        }
    };
    std::process::exit(code);
}
