//! Demangled names against the real `c++filt` (GNU binutils): every kernel-descriptor symbol of
//! every code-object fixture, and a set of names with the constructs kernel names carry
//! (namespaces, templates, nested templates, anonymous namespaces, lambdas, operators, const
//! members, function-pointer and array arguments, `extern "C"`), each with `(\.kd)$` stripped
//! before `c++filt` sees it, as rocprofv3 strips it before demangling.

use object::{Object, ObjectSymbol};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels/hip/code-objects")
}

/// Every `.kd` symbol of every fixture.
fn fixture_symbols() -> Vec<String> {
    let mut out = Vec::new();
    for dir in std::fs::read_dir(fixtures()).expect("the code-object fixtures") {
        for f in std::fs::read_dir(dir.unwrap().path()).unwrap() {
            let bytes = std::fs::read(f.unwrap().path()).unwrap();
            let elf = object::File::parse(&*bytes).expect("an ELF code object");
            for s in elf.symbols() {
                let name = s.name().unwrap();
                if name.ends_with(".kd") {
                    out.push(name.to_string());
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// `c++filt`'s output for each name, one line each (`.kd` stripped first).
fn cxxfilt(names: &[String]) -> Vec<String> {
    let mut child = Command::new("c++filt")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("c++filt from binutils (scripts/test installs it)");
    let input: String = names
        .iter()
        .map(|n| format!("{}\n", n.strip_suffix(".kd").unwrap_or(n)))
        .collect();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn check(names: &[String]) {
    let want = cxxfilt(names);
    assert_eq!(want.len(), names.len());
    for (n, w) in names.iter().zip(&want) {
        assert_eq!(&krphase_names::demangle_symbol(n), w, "{n}");
        assert_eq!(
            &krphase_names::format(n, krphase_names::NameForm::Demangled),
            w,
            "{n}"
        );
    }
}

#[test]
fn fixture_kernel_names_equal_cxxfilt() {
    let names = fixture_symbols();
    // 9 sources: 5 stream kernels, saxpy, 6 in names.hip, bump and nudge, one in each other five.
    assert_eq!(names.len(), 19, "{names:?}");
    assert!(names.iter().any(|n| n == "_ZN3krp5saxpyEPym.kd"));
    check(&names);
}

#[test]
fn tricky_names_equal_cxxfilt() {
    let names: Vec<String> = [
        "_ZN2ns5saxpyEPfPKffi.kd",
        "_ZN12_GLOBAL__N_16kernelEPi.kd",
        "_Z6reduceILi256EN3cub3SumEEvPKfPfi.kd",
        "_ZN5outer5innerIN3foo3BarIiEEE3runIdEEvPT_.kd",
        "_ZZ4mainENKUlPiE_clES_.kd",
        "_ZN3MatplERKS_.kd",
        "_ZNK3Vec4normEv.kd",
        "_Z5applyPFviEPA4_i.kd",
        "_Z4stepIyEvPT_m.kd",
        "_Z5touchPymy.kd",
        "names_plain.kd",
        "not_mangled",
        "_Z", // not a valid mangled name: both leave it as it is
    ]
    .into_iter()
    .map(str::to_string)
    .collect();
    check(&names);
}
