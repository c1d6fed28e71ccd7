//! `krphase-emu`: subcommand routing. The SDK's exported C functions live in `exports.rs` (and
//! the counting service's in `counting_exports.rs`, ROCr's loader extension table in
//! `loader_exports.rs`), part of this binary crate so they are linked and (with `-rdynamic`)
//! visible to the tools' dlsym.

mod boundary;
mod counting_exports;
mod exports;
mod loader_exports;
mod rocprofv3;
mod service_exports;
mod unavailable_exports;

use std::ffi::OsString;

const USAGE: &str = "usage: krphase-emu run WORKLOAD [options]   (krphase-emu run --help)
       krphase-emu rocprofv3 [--pmc C... | -i FILE] [--replay-mode kernel --kernel-replay-beta-enabled] -- APP ARGS
       krphase-emu calibrate   (this machine's memcpy rate for --device-gbps / KRPHASE_EMU_DEVICE_GBPS)
       krphase-emu stack-plan  (the demo's stack step: builds, STREAM size, repeats, memcpy rate; JSON)
workloads: stream saxpy queue-depth multi-queue graph multi-packet vmem fork churn exit-worker samples";

fn main() {
    exports::keep();
    loader_exports::keep();
    counting_exports::keep();
    service_exports::keep();
    unavailable_exports::keep();
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
        Some("calibrate") => {
            let gbps = krphase_emu::memcpy_rate::measure_gbps();
            let factor = krphase_emu::replay::cost_model::DEVICE_LOCAL_GBPS / gbps;
            println!("device_gbps={gbps:.3} slowdown={factor:.1}");
            0
        }
        Some("stack-plan") => {
            let gbps = krphase_emu::memcpy_rate::measure_gbps();
            println!("{}", krphase_emu::stack_demo::plan_json(gbps));
            0
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
