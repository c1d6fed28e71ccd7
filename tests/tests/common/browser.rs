//! A page loaded in a real headless browser: Debian's `chromium`, run with a fresh profile and
//! no network features, its console messages read from its log on stderr and a screenshot of
//! the first screen taken.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Where Debian installs Chromium.
const CHROMIUM: &str = "/usr/bin/chromium";

/// The browser, or a failure saying how to install it.
pub fn chromium() -> PathBuf {
    let p =
        std::env::var_os("KRPHASE_CHROMIUM").map_or_else(|| PathBuf::from(CHROMIUM), PathBuf::from);
    assert!(
        p.is_file(),
        "{} not found: this test loads the HTML report in a headless browser; install it with \
         `apt-get install -y chromium` (Debian), or point KRPHASE_CHROMIUM at a Chromium binary",
        p.display()
    );
    p
}

/// What loading a page showed.
pub struct Loaded {
    /// The page's console messages (errors, warnings, logs) as Chromium logged them.
    pub console: Vec<String>,
    /// The screenshot of the first 1280 × 2000 pixels.
    pub screenshot: PathBuf,
}

/// Loads `html` in headless Chromium; its screenshot goes into `scratch`.
pub fn load(html: &Path, scratch: &Path) -> Loaded {
    std::fs::create_dir_all(scratch).expect("scratch dir");
    let profile = scratch.join("profile");
    let _ = std::fs::remove_dir_all(&profile);
    let shot = scratch.join("first-screen.png");
    let _ = std::fs::remove_file(&shot);
    let url = format!(
        "file://{}",
        std::path::absolute(html).expect("absolute path").display()
    );
    let o = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1280,2000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(&url)
        .output()
        .expect("run chromium");
    let log = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.success() && shot.is_file(),
        "chromium failed ({}):\n{log}",
        o.status
    );
    Loaded {
        // Chromium logs each console message of the page as `...:CONSOLE(line)] "text", source:`.
        console: log
            .lines()
            .filter(|l| l.contains(":CONSOLE"))
            .map(String::from)
            .collect(),
        screenshot: shot,
    }
}

/// Pixel statistics of a PNG: how many pixels differ from the first (the background), and how
/// many distinct colours it holds (a blank or single-colour page has one or two).
pub fn png_stats(png: &Path) -> (usize, usize) {
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(png).expect("open screenshot"),
    ));
    let mut reader = decoder.read_info().expect("PNG header");
    let mut buf = vec![0; reader.output_buffer_size().expect("PNG size")];
    let info = reader.next_frame(&mut buf).expect("PNG frame");
    let px = info.color_type.samples();
    let data = &buf[..info.buffer_size()];
    let first = &data[..px];
    let mut colours = std::collections::HashSet::new();
    let mut differ = 0;
    for p in data.chunks(px) {
        if p != first {
            differ += 1;
        }
        if colours.len() < 4096 {
            colours.insert(p.to_vec());
        }
    }
    (differ, colours.len())
}
