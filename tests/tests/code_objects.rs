//! The workloads' code objects (`kernels/hip/code-objects/`), read here independently of the
//! emulator: every fixture is an AMDGPU ELF whose metadata note (`NT_AMDGPU_METADATA`,
//! MessagePack) lists its kernels; every workload kernel's `.kd` name is among its source's in
//! every target and version; and the emulator, loaded with each fixture directory, reports every
//! kernel through the SDK's kernel-symbol callback (seen by the probe tool) with that name and
//! with the sizes the metadata gives, the entry the ELF's symbols give, and registers decoded the
//! SDK's way (granules of 4 VGPRs and 16 SGPRs, at least what the metadata counts).

use krphase_kernels::KERNEL_SYMBOLS;
use krphase_tests::{artifacts, scratch_dir};
use object::read::elf::SectionHeader;
use object::{Object, ObjectSymbol};
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The fixture directories: gfx90a and gfx940, code-object v4 and v5 (clang-15 builds neither
/// gfx942 nor v6).
const SETS: [&str; 4] = ["gfx90a-v4", "gfx90a-v5", "gfx940-v4", "gfx940-v5"];

/// `NT_AMDGPU_METADATA`.
const NT_AMDGPU_METADATA: object::elf::NoteType = object::elf::NoteType(32);

#[derive(Deserialize)]
struct Metadata {
    #[serde(rename = "amdhsa.kernels")]
    kernels: Vec<Kernel>,
}

#[derive(Deserialize, Debug, Clone)]
struct Kernel {
    #[serde(rename = ".symbol")]
    symbol: String,
    #[serde(rename = ".kernarg_segment_size")]
    kernarg: u32,
    #[serde(rename = ".group_segment_fixed_size")]
    group: u32,
    #[serde(rename = ".private_segment_fixed_size")]
    private: u32,
    #[serde(rename = ".sgpr_count")]
    sgprs: u32,
    #[serde(rename = ".vgpr_count")]
    vgprs: u32,
}

/// One fixture's kernels by symbol, each with its entry offset from its descriptor (the FUNC
/// symbol's address less the `.kd` symbol's).
fn read_fixture(path: &Path) -> BTreeMap<String, (Kernel, i64)> {
    let bytes = std::fs::read(path).unwrap();
    let elf = object::read::elf::ElfFile64::<object::Endianness>::parse(&*bytes)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(
        elf.elf_header().e_machine.get(elf.endian()),
        object::elf::EM_AMDGPU
    );
    let mut meta = None;
    for section in elf.sections() {
        let Ok(Some(mut notes)) = section.elf_section_header().notes(elf.endian(), elf.data())
        else {
            continue;
        };
        while let Some(n) = notes.next().unwrap() {
            if n.name() == b"AMDGPU" && n.n_type(elf.endian()) == NT_AMDGPU_METADATA {
                meta = Some(rmp_serde::from_slice::<Metadata>(n.desc()).expect("metadata"));
            }
        }
    }
    let meta = meta.unwrap_or_else(|| panic!("{}: no AMDGPU metadata note", path.display()));
    let address = |name: &str| {
        elf.symbols()
            .find(|s| s.name() == Ok(name))
            .map(|s| s.address() as i64)
            .unwrap_or_else(|| panic!("{}: no symbol {name}", path.display()))
    };
    meta.kernels
        .into_iter()
        .map(|k| {
            let entry = address(k.symbol.trim_end_matches(".kd")) - address(&k.symbol);
            (k.symbol.clone(), (k, entry))
        })
        .collect()
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels/hip/code-objects")
}

#[test]
fn every_workload_kernel_has_its_fixture_in_every_target_and_version() {
    let mut count = 0;
    for set in SETS {
        for entry in std::fs::read_dir(fixtures().join(set)).unwrap() {
            let path = entry.unwrap().path();
            assert!(!read_fixture(&path).is_empty(), "{}", path.display());
            count += 1;
        }
        for (source, symbol) in KERNEL_SYMBOLS {
            let kernels = read_fixture(&fixtures().join(set).join(format!("{source}.co")));
            assert!(
                kernels.contains_key(symbol),
                "{set}/{source}.co lacks {symbol}"
            );
        }
    }
    assert_eq!(count, 36, "9 sources x 2 targets x 2 versions");
}

/// The probe's kernel-symbol records of a saxpy run with `--code-objects DIR`.
fn reported(set: &str) -> Vec<Value> {
    let a = artifacts();
    let dir = scratch_dir(&format!("code-objects-{set}"));
    let out = dir.join("probe.json");
    let mut cmd = Command::new(&a.emu);
    for k in krphase_tests::TOOL_AND_EMU_ENV {
        cmd.env_remove(k);
    }
    let o = cmd
        .args(["run", "saxpy", "--elements", "64", "--iterations", "1"])
        .arg("--code-objects")
        .arg(fixtures().join(set))
        .env("ROCP_TOOL_LIBRARIES", &a.probe_lib)
        .env("PROBE_SCENARIO", "basic")
        .env("PROBE_OUT", &out)
        .output()
        .expect("run krphase-emu");
    assert!(o.status.success(), "{}", krphase_tests::output_text(&o));
    let v: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    v["kernel_symbols"].as_array().unwrap().clone()
}

#[test]
fn the_sdk_reports_each_kernel_as_its_code_object_describes_it() {
    for set in SETS {
        let records = reported(set);
        assert_eq!(records.len(), KERNEL_SYMBOLS.len(), "{set}");
        for r in records {
            let id = r["kernel_id"].as_u64().unwrap() as usize;
            let (source, symbol) = KERNEL_SYMBOLS[id - 1];
            assert_eq!(r["name"], symbol, "{set}: the SDK's name is the .kd symbol");
            let fixture = read_fixture(&fixtures().join(set).join(format!("{source}.co")));
            let (k, entry) = &fixture[symbol];
            let n = |f: &str| r[f].as_i64().unwrap();
            assert_eq!(
                n("kernarg_segment_size"),
                i64::from(k.kernarg),
                "{set} {symbol}"
            );
            assert_eq!(n("kernarg_segment_alignment"), 16);
            assert_eq!(
                n("group_segment_size"),
                i64::from(k.group),
                "{set} {symbol}"
            );
            assert_eq!(
                n("private_segment_size"),
                i64::from(k.private),
                "{set} {symbol}"
            );
            assert_eq!(n("kernel_code_entry_byte_offset"), *entry, "{set} {symbol}");
            assert_eq!(n("kernel_address") - n("kernel_object"), *entry);
            let (vgprs, sgprs) = (n("arch_vgpr_count"), n("sgpr_count"));
            assert!(
                vgprs >= i64::from(k.vgprs) && vgprs % 4 == 0,
                "{set} {symbol}: {vgprs}"
            );
            assert!(
                sgprs >= i64::from(k.sgprs) && sgprs % 16 == 0,
                "{set} {symbol}: {sgprs}"
            );
        }
    }
}

#[test]
fn a_directory_without_a_workload_kernel_is_refused_in_one_line() {
    let a = artifacts();
    let dir = scratch_dir("code-objects-missing");
    for f in std::fs::read_dir(fixtures().join("gfx90a-v4")).unwrap() {
        let p = f.unwrap().path();
        if p.file_name().unwrap() != "names.co" {
            std::fs::copy(&p, dir.join(p.file_name().unwrap())).unwrap();
        }
    }
    let o = Command::new(&a.emu)
        .args([
            "run",
            "saxpy",
            "--elements",
            "64",
            "--iterations",
            "1",
            "--code-objects",
        ])
        .arg(&dir)
        .output()
        .expect("run krphase-emu");
    assert!(!o.status.success());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("names.co"), "{stderr}");
}
