//! `krphase-emu`: subcommand routing. The SDK's exported C functions live in `exports.rs` (and
//! the counting service's in `counting_exports.rs`), part of this binary crate so they are linked and (with `-rdynamic`) visible to the tools' dlsym.

mod counting_exports;
mod exports;
mod rocprofv3;

use std::ffi::OsString;

const USAGE: &str = "usage: krphase-emu run WORKLOAD [options]   (krphase-emu run --help)
       krphase-emu rocprofv3 [--pmc C... | -i FILE] [--replay-mode kernel --kernel-replay-beta-enabled] -- APP ARGS
workloads: stream saxpy queue-depth multi-queue graph multi-packet vmem fork churn exit-worker samples";

fn main() {
    exports::keep();
    counting_exports::keep();
    let args: Vec<OsString> = std::env::args_os().collect();
    let code = match args.get(1).and_then(|a| a.to_str()) {
        Some("run") => krphase_emu::run::main(&args[1..]),
        Some("rocprofv3") => {
            let rest: Vec<String> = args[2..]
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            rocprofv3::main(&rest)
        }
        // Further subcommands hook in here.
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}\n");
            krphase_emu::run::main(&[OsString::from("run"), OsString::from("--help")])
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
