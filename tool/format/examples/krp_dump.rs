//! Prints a .krp file as JSON lines (header, events, trailer): `cargo run -p krphase-format
//! --example krp_dump -- FILE`.

use krphase_format::FileReader;

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: krp_dump FILE");
        std::process::exit(2);
    };
    let mut r = match FileReader::open(&path) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    };
    println!("{}", serde_json::to_string(r.header()).expect("json"));
    for e in r.by_ref() {
        match e {
            Ok(e) => println!("{}", serde_json::to_string(&e).expect("json")),
            Err(e) => {
                eprintln!("{path}: {e}");
                std::process::exit(1);
            }
        }
    }
    println!(
        "{{\"trailer\":{},\"truncated\":{}}}",
        serde_json::to_string(&r.trailer()).expect("json"),
        r.truncated()
    );
}
