//! Issue 24, decoders: Samba's `user.DOSATTRIB` and `security.NTACL` values made by Samba's own
//! NDR code (python3-samba: `ndr_pack`, read back with `ndr_unpack` and `descriptor.as_sddl`) and
//! Lustre's `trusted.lma/link/lov/fid/som` values built from the uapi layouts, set on files of a
//! test image with `debugfs ea_set`, then read by `e4inspect inode --json` and compared field by
//! field. Hostile values (every truncation, lengths past the end, counts in the billions) are
//! decoded in-process and through the CLI: each ends as a value or a `decode_error`, never a panic.

mod common;

use common::{bin, have, mkfs, run, which};
use e4inspect::reader::xattr::decode_value;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Files `names` (empty) in a fresh ext4 image, then each `(file, xattr, value file)` set with
/// `debugfs -w ea_set -f`.
fn image_with_values(dir: &Path, sets: &[(String, String, PathBuf)]) -> PathBuf {
    let tree = dir.join("tree");
    std::fs::create_dir_all(&tree).unwrap();
    for (file, _, _) in sets {
        std::fs::write(tree.join(file), b"").unwrap();
    }
    let img = mkfs(
        dir,
        "x.img",
        64 << 20,
        &["-t", "ext4", "-I", "256", "-d", tree.to_str().unwrap()],
    );
    let cmds: String = sets
        .iter()
        .map(|(f, name, val)| format!("ea_set -f {} /{f} {name}\n", val.display()))
        .collect();
    let cmdfile = dir.join("cmds");
    std::fs::write(&cmdfile, cmds).unwrap();
    let out = run(Command::new(which("debugfs").unwrap())
        .arg("-w")
        .arg("-f")
        .arg(&cmdfile)
        .arg(&img));
    assert!(out.status.success(), "debugfs: {out:?}");
    img
}

/// `inode --json` of every file: the `xattrs` entry named `name` of each, in order.
fn xattrs_of(img: &Path, sets: &[(String, String, PathBuf)]) -> Vec<Value> {
    let out = run(Command::new(bin())
        .arg("inode")
        .arg("--json")
        .arg(img)
        .args(sets.iter().map(|(f, _, _)| format!("/{f}"))));
    assert!(out.status.code().is_some(), "e4inspect died: {out:?}");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let inodes = doc["inodes"].as_array().expect("inodes").clone();
    assert_eq!(inodes.len(), sets.len());
    inodes
        .iter()
        .zip(sets)
        .map(|(ino, (f, name, _))| {
            ino["xattrs"]
                .as_array()
                .and_then(|xs| xs.iter().find(|x| x["name"] == json!(name)))
                .unwrap_or_else(|| panic!("{f}: no {name} in {ino}"))
                .clone()
        })
        .collect()
}

/// The NTTIME of a decoded time field (`{nttime, utc}`), else the field itself.
fn plain(v: &Value) -> Value {
    v.get("nttime").cloned().unwrap_or_else(|| v.clone())
}

#[test]
fn samba_values_match_samba_ndr() {
    if !have("mke2fs") || !have("debugfs") {
        println!("SKIP: mke2fs/debugfs missing");
        return;
    }
    let samba = Command::new("/usr/bin/python3")
        .args(["-c", "import samba"])
        .output();
    if !samba.map(|o| o.status.success()).unwrap_or(false) {
        println!("SKIP: python3-samba missing (/usr/bin/python3 cannot import samba)");
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let vals = t.path().join("vals");
    std::fs::create_dir_all(&vals).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/samba_values.py");
    let out = run(Command::new("/usr/bin/python3").arg(&script).arg(&vals));
    assert!(out.status.success(), "samba_values.py: {out:?}");
    let cases: Vec<Value> =
        serde_json::from_slice(&std::fs::read(vals.join("cases.json")).unwrap()).unwrap();
    assert!(cases.len() > 100, "{} cases", cases.len());
    let sets: Vec<(String, String, PathBuf)> = cases
        .iter()
        .map(|c| {
            (
                c["file"].as_str().unwrap().to_string(),
                c["name"].as_str().unwrap().to_string(),
                PathBuf::from(c["value"].as_str().unwrap()),
            )
        })
        .collect();
    let img = image_with_values(t.path(), &sets);
    let got = xattrs_of(&img, &sets);
    let (mut fields, mut ntacls, mut odd) = (0, 0, 0);
    for (c, x) in cases.iter().zip(&got) {
        let d = &x["decoded"];
        assert!(d.is_object(), "{}: not decoded: {x}", c["file"]);
        for (k, want) in c["expect"].as_object().unwrap() {
            assert_eq!(
                &plain(&d[k]),
                want,
                "{} {} field {k}: {d}",
                c["file"],
                c["name"]
            );
            fields += 1;
        }
        if c["name"] == "security.NTACL" {
            ntacls += 1;
            let sddl = c["expect"]["sddl"].as_str().unwrap();
            odd += usize::from(sddl.contains("ALOL") || sddl.contains("0x"));
        }
    }
    assert!(ntacls >= 60 && odd > 0, "{ntacls} NTACLs, {odd} unusual");
    // The text view names the decoded value after the debugfs-identical part.
    let text = run(Command::new(bin()).arg("inode").arg(&img).arg("/f000"));
    let s = String::from_utf8_lossy(&text.stdout);
    assert!(
        s.contains("user.DOSATTRIB [inode]") && s.contains("dosattrib v1"),
        "{s}"
    );
    // `xattrs`: per name, where the instances live (as `inode --json` placed each one), and the
    // files by DOS attribute (as Samba read each value).
    let x = xattrs_json(&img);
    for name in ["user.DOSATTRIB", "security.NTACL"] {
        let places: Vec<&str> = got
            .iter()
            .filter(|v| v["name"] == json!(name))
            .map(|v| v["location"].as_str().unwrap())
            .collect();
        let row = x["top_names"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == json!(name))
            .unwrap();
        for (field, loc) in [
            ("in_inode", "inode"),
            ("in_block", "block"),
            ("in_ea_inode", "ea_inode"),
        ] {
            let n = places.iter().filter(|p| **p == loc).count();
            assert_eq!(row[field], json!(n), "{name} {field}: {row}");
        }
        assert_eq!(row["count"], json!(places.len()));
    }
    let attribs: Vec<u64> = cases
        .iter()
        .filter(|c| c["name"] == "user.DOSATTRIB")
        .map(|c| c["expect"]["attrib"].as_u64().unwrap())
        .collect();
    let dos = &x["decoders"]["dos_attributes"];
    assert_eq!(dos["files"], json!(attribs.len()));
    for (bit, name) in [
        (0x1, "READONLY"),
        (0x2, "HIDDEN"),
        (0x20, "ARCHIVE"),
        (0x10, "DIRECTORY"),
    ] {
        let want = attribs.iter().filter(|a| *a & bit != 0).count();
        let got = dos["by_attribute"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["attribute"] == json!(name))
            .map_or(json!(0), |r| r["files"].clone());
        assert_eq!(got, json!(want), "{name}: {dos}");
    }
    // The text report says the same as the JSON.
    let text = run(Command::new(bin())
        .args(["xattrs", "--no-progress"])
        .arg(&img));
    let attrs: Vec<String> = dos["by_attribute"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| format!("{} {}", r["attribute"].as_str().unwrap(), r["files"]))
        .collect();
    let line = format!(
        "Samba DOS attributes (user.DOSATTRIB): {} files: {}",
        attribs.len(),
        attrs.join(", ")
    );
    assert!(
        String::from_utf8_lossy(&text.stdout)
            .lines()
            .any(|l| l == line),
        "xattrs text lacks `{line}`"
    );
    println!(
        "{} values, {fields} fields equal to Samba's reading",
        cases.len()
    );
}

/// `xattrs --json` of an image.
fn xattrs_json(img: &Path) -> Value {
    let out = run(Command::new(bin())
        .args(["xattrs", "--json", "--no-progress"])
        .arg(img));
    assert!(out.status.code().is_some(), "e4inspect died: {out:?}");
    serde_json::from_slice(&out.stdout).expect("JSON")
}

fn fid_le(seq: u64, oid: u32, ver: u32) -> Vec<u8> {
    [
        &seq.to_le_bytes()[..],
        &oid.to_le_bytes(),
        &ver.to_le_bytes(),
    ]
    .concat()
}

fn fid_be(seq: u64, oid: u32, ver: u32) -> Vec<u8> {
    [
        &seq.to_be_bytes()[..],
        &oid.to_be_bytes(),
        &ver.to_be_bytes(),
    ]
    .concat()
}

/// `lov_mds_md_v1` (or v3 with `pool`) with `objs` of `(oi_id, oi_seq, ost_idx)`.
fn lov(
    stripe_size: u32,
    count: u16,
    gen: u16,
    pool: Option<&str>,
    objs: &[(u64, u64, u32)],
) -> Vec<u8> {
    let magic: u32 = if pool.is_some() {
        0x0BD3_0BD0
    } else {
        0x0BD1_0BD0
    };
    let mut v = magic.to_le_bytes().to_vec();
    v.extend(1u32.to_le_bytes()); // LOV_PATTERN_RAID0
    v.extend(fid_le(0x2_0000_0401, 0x2a, 0));
    v.extend(stripe_size.to_le_bytes());
    v.extend(count.to_le_bytes());
    v.extend(gen.to_le_bytes());
    if let Some(p) = pool {
        let mut name = [0u8; 16];
        name[..p.len()].copy_from_slice(p.as_bytes());
        v.extend(name);
    }
    for (id, seq, idx) in objs {
        v.extend(id.to_le_bytes());
        v.extend(seq.to_le_bytes());
        v.extend(0u32.to_le_bytes());
        v.extend(idx.to_le_bytes());
    }
    v
}

/// `lov_comp_md_v1` holding `comps` of `(extent_start, extent_end, layout)`.
fn lov_comp(gen: u32, comps: &[(u64, u64, Vec<u8>)]) -> Vec<u8> {
    let head = 32 + 48 * comps.len();
    let total = head + comps.iter().map(|c| c.2.len()).sum::<usize>();
    let mut v = 0x0BD6_0BD0u32.to_le_bytes().to_vec();
    v.extend((total as u32).to_le_bytes());
    v.extend(gen.to_le_bytes());
    v.extend(0u16.to_le_bytes());
    v.extend((comps.len() as u16).to_le_bytes());
    v.extend([0u8; 16]);
    let mut off = head;
    for (i, (s, e, l)) in comps.iter().enumerate() {
        v.extend((i as u32 + 1).to_le_bytes());
        v.extend(0x10u32.to_le_bytes()); // LCME_FL_INIT
        v.extend(s.to_le_bytes());
        v.extend(e.to_le_bytes());
        v.extend((off as u32).to_le_bytes());
        v.extend((l.len() as u32).to_le_bytes());
        v.extend((gen + i as u32).to_le_bytes());
        v.extend([0u8; 12]);
        off += l.len();
    }
    for (_, _, l) in comps {
        v.extend(l);
    }
    v
}

/// `link_ea_header` + big-endian entries of `(parent seq, parent oid, name)`.
/// A `struct lov_foreign_md` (lustre_user.h): magic, lfm_length, lfm_type, lfm_flags, value.
fn lov_foreign(ftype: u32, flags: u32, value: &[u8]) -> Vec<u8> {
    let mut v = 0x0BD7_0BD0u32.to_le_bytes().to_vec();
    v.extend((value.len() as u32).to_le_bytes());
    v.extend(ftype.to_le_bytes());
    v.extend(flags.to_le_bytes());
    v.extend(value);
    v
}

fn link(entries: &[(u64, u32, &str)]) -> Vec<u8> {
    let body: Vec<u8> = entries
        .iter()
        .flat_map(|(seq, oid, name)| {
            let mut e = ((18 + name.len()) as u16).to_be_bytes().to_vec();
            e.extend(fid_be(*seq, *oid, 0));
            e.extend(name.as_bytes());
            e
        })
        .collect();
    let mut v = 0x11EA_F1DFu32.to_le_bytes().to_vec();
    v.extend((entries.len() as u32).to_le_bytes());
    v.extend(((24 + body.len()) as u64).to_le_bytes());
    v.extend([0u8; 8]);
    v.extend(body);
    v
}

/// Lustre values with the answers the uapi layouts give.
fn lustre_cases() -> Vec<(&'static str, Vec<u8>, Value)> {
    let mut lma = [&0u32.to_le_bytes()[..], &0u32.to_le_bytes()].concat();
    lma.extend(fid_le(0x2_0000_0401, 0x1, 0));
    let mut ost_lma = [&8u32.to_le_bytes()[..], &0u32.to_le_bytes()].concat();
    ost_lma.extend(fid_le(0x1_0000_0000, 0x2b, 0));
    ost_lma.extend(fid_le(0x2_0000_0401, 0x2a, 1));
    ost_lma.extend([0u8; 24]);
    let idif = 0x1_0000_0000u64;
    let mut som = 1u16.to_le_bytes().to_vec();
    som.extend([0u8; 6]);
    som.extend(123_456u64.to_le_bytes());
    som.extend(248u64.to_le_bytes());
    let mut ffid = fid_le(0x2_0000_0401, 0x2a, 3);
    ffid.extend((1u32 << 20).to_le_bytes());
    ffid.extend(4u32.to_le_bytes());
    ffid.extend(0u64.to_le_bytes());
    ffid.extend(u64::MAX.to_le_bytes());
    ffid.extend(1u32.to_le_bytes());
    ffid.extend(7u32.to_le_bytes());
    ffid.extend(0u32.to_le_bytes());
    vec![
        (
            "trusted.lma",
            lma,
            json!({"compat": 0, "incompat": 0, "fid": {"seq": 0x2_0000_0401u64, "oid": 1, "ver": 0}}),
        ),
        (
            "trusted.lma",
            ost_lma,
            json!({"compat": 8, "fid": {"seq": idif, "oid": 0x2b, "ver": 0}, "ost": {"parent": {"seq": 0x2_0000_0401u64, "oid": 0x2a, "ver": 1}}}),
        ),
        (
            "trusted.link",
            link(&[
                (0x2_0000_0007, 5, "file"),
                (0x2_0000_0401, 0x10, "hard link ✓"),
            ]),
            json!({"links": [{"parent": {"seq": 0x2_0000_0007u64, "oid": 5, "ver": 0}, "name": "file"}, {"parent": {"seq": 0x2_0000_0401u64, "oid": 0x10, "ver": 0}, "name": "hard link ✓"}]}),
        ),
        (
            "trusted.lov",
            lov(
                1 << 20,
                2,
                0,
                None,
                &[(0x1234, 0, 0), (0x1_0000_0005, 0x77, 5)],
            ),
            json!({"magic": "v1", "stripe_size": 1 << 20, "stripe_count": 2, "pool": null, "objects": [{"oid": 0x1234, "seq": 0, "ost_idx": 0}, {"oid": 0x5_0000_0077u64, "seq": 0, "ost_idx": 5}]}),
        ),
        (
            "trusted.lov",
            lov(4 << 20, 1, 2, Some("flash"), &[(0x2_8000_0400, 0x99, 7)]),
            json!({"magic": "v3", "stripe_size": 4 << 20, "stripe_count": 1, "pool": "flash", "layout_gen": 2, "objects": [{"oid": 0x99, "seq": 0x2_8000_0400u64, "ost_idx": 7}]}),
        ),
        (
            "trusted.lov",
            lov_comp(
                3,
                &[
                    (0, 1 << 20, lov(1 << 20, 1, 0, None, &[(0x11, 0, 0)])),
                    (
                        1 << 20,
                        u64::MAX,
                        lov(4 << 20, 2, 0, Some("p"), &[(0x12, 0, 1), (0x13, 0, 2)]),
                    ),
                ],
            ),
            json!({"magic": "comp", "layout_gen": 3, "stripe_count": 2, "objects": [{"oid": 0x11, "seq": 0, "ost_idx": 0}, {"oid": 0x12, "seq": 0, "ost_idx": 1}, {"oid": 0x13, "seq": 0, "ost_idx": 2}]}),
        ),
        (
            "trusted.lov",
            lov(1 << 20, 4, 0, None, &[]),
            json!({"magic": "v1", "stripe_count": 4, "objects": []}),
        ),
        (
            "trusted.lov",
            lov_foreign(0xda05, 0, b"/archive/obj"),
            json!({"magic": "foreign", "stripe_count": null, "objects": [], "foreign": {"type": 0xda05, "type_name": "symlink", "flags": 0, "length": 12, "value": "/archive/obj", "value_hex": "2f617263686976652f6f626a"}}),
        ),
        (
            "trusted.lov",
            lov_comp(
                4,
                &[
                    (0, u64::MAX, lov(1 << 20, 1, 0, None, &[(0x21, 0, 3)])),
                    (0, u64::MAX, lov_foreign(7, 2, &[0xff, 0x01])),
                ],
            ),
            json!({"magic": "comp", "stripe_count": 1, "objects": [{"oid": 0x21, "seq": 0, "ost_idx": 3}], "components": [{"layout": {"stripe_count": 1}}, {"layout": null, "foreign": {"type": 7, "type_name": null, "flags": 2, "value": null, "value_hex": "ff01"}}]}),
        ),
        (
            "trusted.fid",
            ffid,
            json!({"parent": {"seq": 0x2_0000_0401u64, "oid": 0x2a, "ver": 3}, "stripe_index": 3, "stripe_count": 4, "layout_version": 7}),
        ),
        (
            "trusted.som",
            som,
            json!({"valid": 1, "size": 123_456, "blocks": 248}),
        ),
    ]
}

/// `want`'s fields (recursively, arrays element by element) are in `got`.
fn assert_subset(got: &Value, want: &Value, ctx: &str) {
    match (got, want) {
        (_, Value::Object(w)) => {
            for (k, v) in w {
                assert_subset(&got[k], v, &format!("{ctx}.{k}"));
            }
        }
        (Value::Array(g), Value::Array(w)) => {
            assert_eq!(g.len(), w.len(), "{ctx}: {got}");
            for (i, (a, b)) in g.iter().zip(w).enumerate() {
                assert_subset(a, b, &format!("{ctx}[{i}]"));
            }
        }
        _ => assert_eq!(got, want, "{ctx}"),
    }
}

/// Hostile versions of a valid value: every truncation, and overwrites of every 4-byte word with
/// 0xffffffff (counts, lengths and offsets in the billions).
fn hostile(v: &[u8]) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = (0..v.len()).map(|n| v[..n].to_vec()).collect();
    for at in 0..v.len().saturating_sub(3) {
        let mut h = v.to_vec();
        h[at..at + 4].copy_from_slice(&[0xff; 4]);
        out.push(h);
    }
    out
}

#[test]
fn lustre_values_and_hostile_values() {
    let cases = lustre_cases();
    // In-process: the known answers, then every hostile variant decodes or fails, never panics.
    let mut variants = 0;
    for (name, v, want) in &cases {
        let d = decode_value(name, v).expect("known name").expect("decodes");
        assert_subset(&serde_json::to_value(&d).unwrap(), want, name);
        for h in hostile(v) {
            let _ = decode_value(name, &h);
            variants += 1;
        }
    }
    assert!(variants > 500, "{variants}");
    if !have("mke2fs") || !have("debugfs") {
        println!("SKIP: mke2fs/debugfs missing (in-process checks done)");
        return;
    }
    // Through an image: the known answers, and hostile values reported with a decode_error.
    let t = tempfile::tempdir().unwrap();
    let mut sets = Vec::new();
    let mut wants = Vec::new();
    for (i, (name, v, want)) in cases.iter().enumerate() {
        let p = t.path().join(format!("l{i}.val"));
        std::fs::write(&p, v).unwrap();
        sets.push((format!("l{i}"), name.to_string(), p));
        wants.push(Some(want.clone()));
    }
    let bad: Vec<(&str, Vec<u8>)> = vec![
        ("trusted.link", {
            let mut l = link(&[(1, 1, "a")]);
            l[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
            l
        }),
        ("trusted.link", {
            let mut l = link(&[(1, 1, "a")]);
            l[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
            l
        }),
        ("trusted.lov", {
            let mut l = lov_comp(1, &[(0, 1, lov(1, 1, 0, None, &[(1, 0, 0)]))]);
            l[14..16].copy_from_slice(&u16::MAX.to_le_bytes());
            l
        }),
        ("trusted.lov", vec![0xd0, 0x0b, 0xd1]),
        ("trusted.lma", vec![0; 23]),
        ("trusted.som", vec![1; 10]),
        ("trusted.fid", vec![0; 20]),
        ("user.DOSATTRIB", b"0x20\0\x03\0\x03\0".to_vec()),
        ("security.NTACL", vec![4, 0, 4, 0, 0, 0, 2, 0, 4, 0, 2, 0]),
        ("security.NTACL", {
            let mut n = vec![1, 0, 1, 0, 0, 0, 2, 0, 1, 0, 4, 0x80];
            n.extend(0xffff_fff0u32.to_le_bytes());
            n.extend([0u8; 12]);
            n
        }),
    ];
    for (i, (name, v)) in bad.iter().enumerate() {
        let p = t.path().join(format!("h{i}.val"));
        std::fs::write(&p, v).unwrap();
        sets.push((format!("h{i}"), name.to_string(), p));
        wants.push(None);
    }
    let img = image_with_values(t.path(), &sets);
    let got = xattrs_of(&img, &sets);
    for ((x, want), (f, name, _)) in got.iter().zip(&wants).zip(&sets) {
        match want {
            Some(w) => assert_subset(&x["decoded"], w, &format!("{f} {name}")),
            None => {
                assert!(x.get("decoded").is_none(), "{f} {name}: {x}");
                let e = x["decode_error"].as_str().unwrap_or_default();
                assert!(!e.is_empty(), "{f} {name}: no decode_error: {x}");
            }
        }
    }
    // `xattrs` counts layouts by stripe count (a composite layout by its largest component, a
    // foreign layout as 0) and the values that do not decode, in JSON and in the text.
    let mut by_count = std::collections::BTreeMap::new();
    for (name, _, want) in &cases {
        if *name == "trusted.lov" {
            *by_count
                .entry(want["stripe_count"].as_u64().unwrap_or(0))
                .or_insert(0u64) += 1;
        }
    }
    let undecodable = bad.iter().filter(|(n, _)| *n == "trusted.lov").count();
    let lov = &xattrs_json(&img)["decoders"]["lustre_stripe_counts"];
    assert_eq!(lov["files"], json!(by_count.values().sum::<u64>()), "{lov}");
    assert_eq!(lov["undecodable"], json!(undecodable), "{lov}");
    let rows: Vec<Value> = by_count
        .iter()
        .map(|(c, n)| json!({"stripe_count": c, "files": n}))
        .collect();
    assert_eq!(lov["by_stripe_count"], json!(rows));
    let text = run(Command::new(bin())
        .args(["xattrs", "--no-progress"])
        .arg(&img));
    let line = format!(
        "Lustre layouts (trusted.lov) by stripe count: {} ({undecodable} undecodable)",
        by_count
            .iter()
            .map(|(c, n)| format!("{c}: {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    assert!(
        String::from_utf8_lossy(&text.stdout)
            .lines()
            .any(|l| l == line),
        "xattrs text lacks `{line}`"
    );
    println!(
        "{} Lustre values, {} hostile ones through the CLI, {variants} in-process",
        cases.len(),
        bad.len()
    );
}
