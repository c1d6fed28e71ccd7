//! `krphase`: the analyzer command line.

fn main() {
    eprintln!("krphase: the analyzer is not built yet; `krphase demo` will run the emulator with libkrphase.so, import the phase files and print a report");
    std::process::exit(2);
}
