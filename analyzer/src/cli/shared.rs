//! Arguments that mean the same in several subcommands, defined once so that their help reads
//! the same everywhere.

use clap::Args;

use crate::render::Format;

/// `--db`'s help (a global option: every subcommand shows it).
pub const DB_HELP: &str = "SQLite database the command reads and writes [default: krphase.db]. \
    `bench` records into it only when given; `demo` (its database is DIR/krphase.db), `doctor`, \
    `completions` and `man` use none and refuse it";

/// `--format`'s help wherever a report is printed.
pub const FORMAT_HELP: &str = "Output format: an aligned table for the terminal; CSV, JSON or \
    Markdown for other programs and documents; HTML for one self-contained page";

/// `--label` of the import commands: what the imported rows are called.
#[derive(Debug, Clone, Args)]
pub struct ImportLabel {
    /// Label every run or measurement this import stores (e.g. `stream-2p`, `baseline`);
    /// `report --label` and `compare A B` select by it.
    #[arg(long, value_name = "NAME")]
    pub label: Option<String>,
}

/// `--format` of the per-run reports (`runs`, `report`).
#[derive(Debug, Clone, Args)]
pub struct ReportFormat {
    #[arg(long, value_enum, default_value = "table", help = FORMAT_HELP)]
    pub format: Format,
}

/// `--truncate-kernels` / `--mangled-kernels` of the commands that show kernel names: the form
/// rocprofv3's options of the same names give (`db/kernel_names.rs`).
#[derive(Debug, Clone, Default, Args)]
pub struct KernelNames {
    /// Show kernel names cut to the function name, as rocprofv3's --truncate-kernels
    /// (`void step<long long>(long long*, unsigned long)` shows as `step`). Default: demangled,
    /// with `.kd` stripped.
    #[arg(long)]
    pub truncate_kernels: bool,
    /// Show kernel names as the SDK reports them (mangled, `.kd` kept), as rocprofv3's
    /// --mangled-kernels.
    #[arg(long)]
    pub mangled_kernels: bool,
}

impl KernelNames {
    pub fn form(&self) -> krphase_names::NameForm {
        krphase_names::NameForm::from_switches(self.truncate_kernels, self.mangled_kernels)
    }
}
