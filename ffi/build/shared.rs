//! What the header checks share: the one line that stops the build, ROCm's install root, and
//! reading bindgen's output.

/// The variable naming ROCm's install root, and its default.
pub const ENV_ROCM: &str = "ROCM_PATH";
pub const DEFAULT_ROCM: &str = "/opt/rocm";

/// Stops the build with one line naming what to set.
pub fn fail(msg: &str) -> ! {
    println!("cargo::error={msg}");
    // `cargo::error` alone fails the build; exiting 0 keeps cargo from adding a dump.
    std::process::exit(0);
}

/// Field names of `pub struct|union <name> { ... }` in bindgen output, in declaration order; a
/// `pub type <name> = <other>;` alias (a C typedef of a tagged struct) is followed.
pub fn struct_fields(bindings: &str, name: &str) -> Option<Vec<String>> {
    let found = ["struct", "union"].iter().find_map(|what| {
        let head = format!("pub {what} {name} {{");
        bindings.find(&head).map(|i| i + head.len())
    });
    let Some(start) = found else {
        let head = format!("pub type {name} = ");
        let at = bindings.find(&head)? + head.len();
        let target = bindings[at..].split(';').next()?.trim();
        return (target != name).then(|| struct_fields(bindings, target))?;
    };
    let body = &bindings[start..];
    let end = body.find("\n}")?;
    Some(
        body[..end]
            .lines()
            .filter_map(|l| l.trim().strip_prefix("pub "))
            .filter_map(|l| l.split_once(':').map(|(n, _)| n.trim().to_string()))
            .collect(),
    )
}

/// Whether bindgen output declares the constant `name` (an enum value or a `#define`).
pub fn has_const(bindings: &str, name: &str) -> bool {
    bindings.contains(&format!("pub const {name}:"))
}
