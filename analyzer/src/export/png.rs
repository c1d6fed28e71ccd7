//! Rasterizes a plot's SVG to PNG (for documents and viewers without SVG), with resvg and the
//! system's fonts.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use anyhow::{Context, Result, bail};
use resvg::{tiny_skia, usvg};

/// Sans-serif faces, in order of preference.
const SANS: &[&str] = &["DejaVu Sans", "Liberation Sans", "Noto Sans", "Arial"];

/// The system's fonts, loaded once; `None` when there is no font at all.
fn fonts() -> Option<Arc<usvg::fontdb::Database>> {
    static DB: OnceLock<Option<Arc<usvg::fontdb::Database>>> = OnceLock::new();
    DB.get_or_init(|| {
        let mut db = usvg::fontdb::Database::new();
        db.load_system_fonts();
        // fontdb maps `sans-serif` to Arial, which Linux systems rarely have: take the first
        // installed face of the ones the plots' text widths are laid out for.
        let installed = |f: &str| {
            db.faces()
                .any(|face| face.families.iter().any(|(n, _)| n == f))
        };
        if let Some(f) = SANS.iter().find(|f| installed(f)) {
            db.set_sans_serif_family(*f);
        }
        (!db.is_empty()).then(|| Arc::new(db))
    })
    .clone()
}

/// `svg` rendered at `scale` (2.0: twice the SVG's pixel size) as PNG bytes.
pub fn render_png(svg: &str, scale: f32) -> Result<Vec<u8>> {
    let Some(fontdb) = fonts() else {
        bail!("no system fonts found: PNGs would have no text (install fonts-dejavu-core)");
    };
    let opts = usvg::Options {
        fontdb,
        ..usvg::Options::default()
    };
    let tree = usvg::Tree::from_str(svg, &opts).context("cannot parse the plot's SVG")?;
    let size = tree
        .size()
        .to_int_size()
        .scale_by(scale)
        .context("empty plot")?;
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height()).context("empty plot")?;
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    pixmap.encode_png().context("cannot encode the PNG")
}

/// Writes `FILE.png` beside each `FILE.svg` in `svgs`; returns the PNGs written.
pub fn write_pngs(svgs: &[PathBuf]) -> Result<Vec<PathBuf>> {
    svgs.iter().map(|p| write_png(p)).collect()
}

fn write_png(svg_path: &Path) -> Result<PathBuf> {
    let svg = std::fs::read_to_string(svg_path)
        .with_context(|| format!("cannot read {}", svg_path.display()))?;
    let png = render_png(&svg, 2.0).with_context(|| svg_path.display().to_string())?;
    let out = svg_path.with_extension("png");
    std::fs::write(&out, png).with_context(|| format!("cannot write {}", out.display()))?;
    Ok(out)
}
