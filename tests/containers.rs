//! e2image files and qcow2 images, against the real tools.
//!
//! - Normal e2image files (`e2image IMG OUT`) of several layouts: `dump` is `dumpe2fs -i`,
//!   `inode N` is `debugfs -i -R "stat <N>"`, `ls` and `cat` are refused in one line as not
//!   present (exit 8), `check` gives the raw image's verdict plus the skipped-pass warning.
//! - `e2image -Q` files: `dump`, `ls -l` and `inode` are the tools' output on the `e2image -r`
//!   conversion; `check` is the raw image's verdict (plus the warning that backups are not
//!   held); file data is absent.
//! - qcow2 images from `qemu-img convert` (plain, deflate and zstd compressed, extended L2
//!   entries, compat 0.10) of whole-disk GPT and MBR images: `dump` is dumpe2fs on the partition.
//! - Refused containers: a qcow2 with a backing file, VMDK and VHDX, in one line.

mod common;
use common::images::*;
use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

const MIB: u64 = 1 << 20;

fn tools_missing(tools: &[&str]) -> bool {
    let missing: Vec<&&str> = tools.iter().filter(|t| !have(t)).collect();
    if !missing.is_empty() {
        eprintln!("SKIP: {missing:?} not installed");
    }
    !missing.is_empty()
}

fn ours(args: &[&str], img: &Path) -> Output {
    let (cmd, rest) = args.split_first().unwrap();
    run(Command::new(bin())
        .env("TZ", "UTC")
        .arg(cmd)
        .arg(img)
        .args(rest))
}

fn tool(name: &str, args: &[&str], img: &Path) -> String {
    let o = run(Command::new(which(name).unwrap())
        .env("TZ", "UTC")
        .args(args)
        .arg(img));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// debugfs output of each request on `img` (with `-i` for a normal e2image file).
fn debugfs_batch(img: &Path, image_file: bool, cmds: &[String]) -> Vec<String> {
    let f = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(f.path(), cmds.join("\n") + "\n").unwrap();
    let mut c = Command::new(which("debugfs").unwrap());
    c.env("TZ", "UTC");
    if image_file {
        c.arg("-i");
    }
    let o = run(c.arg("-f").arg(f.path()).arg(img));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let mut parts: Vec<String> = Vec::new();
    for line in text.split_inclusive('\n') {
        if line.starts_with("debugfs: ") {
            parts.push(String::new());
        } else if let Some(p) = parts.last_mut() {
            p.push_str(line);
        }
    }
    assert_eq!(parts.len(), cmds.len(), "debugfs answered every request");
    parts
}

/// Our `inode` output of each inode, cut before our own "Details:" section.
fn inode_stats(img: &Path, inos: &[u32]) -> Vec<String> {
    let mut args = vec!["inode".to_string(), img.display().to_string()];
    args.extend(inos.iter().map(|i| i.to_string()));
    let o = run(Command::new(bin()).env("TZ", "UTC").args(&args));
    assert_eq!(
        o.status.code(),
        Some(0),
        "inode on {}: {}",
        img.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    let text = String::from_utf8(o.stdout).unwrap();
    let mut out: Vec<String> = Vec::new();
    for l in text.split_inclusive('\n') {
        if l.starts_with("Inode: ") {
            out.push(String::new());
        }
        if let Some(s) = out.last_mut() {
            s.push_str(l);
        }
    }
    out.iter()
        .map(|s| s.split("Details:\n").next().unwrap().to_string())
        .collect()
}

fn used_inodes(img: &Path) -> u32 {
    let t = tool("dumpe2fs", &["-h"], img);
    let field = |k: &str| -> u32 {
        t.lines()
            .find_map(|l| l.strip_prefix(k))
            .map(|v| v.trim().parse().unwrap())
            .unwrap()
    };
    field("Inode count:") - field("Free inodes:")
}

/// `check --json`: exit status and the finding counts per rule.
fn check_counts(img: &Path) -> (i32, Value) {
    let o = run(Command::new(bin()).args(["check", "--json"]).arg(img));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    (
        o.status.code().unwrap_or(-1),
        v["images"][0]["counts"].clone(),
    )
}

/// The raw image's counts plus one `state.passes_skipped` warning.
fn with_skipped(raw: &Value) -> Value {
    let mut v = raw.clone();
    v.as_object_mut()
        .unwrap()
        .insert("state.passes_skipped".into(), 1.into());
    v
}

/// One line on stderr saying the bytes are not present, nothing on stdout, exit 8.
fn assert_absent(o: &Output, what: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(8), "{what}: {err}");
    assert!(o.stdout.is_empty(), "{what}: printed {:?}", o.stdout);
    assert_eq!(err.lines().count(), 1, "{what}: {err}");
    assert!(
        err.contains("not present in this metadata image"),
        "{what}: {err}"
    );
}

struct Layout {
    name: &'static str,
    size: u64,
    args: &'static [&'static str],
}

const LAYOUTS: &[Layout] = &[
    Layout {
        name: "ext4-1k",
        size: 48 * MIB,
        args: &["-t", "ext4", "-b", "1024"],
    },
    Layout {
        name: "ext4-4k",
        size: 64 * MIB,
        args: &["-t", "ext4", "-b", "4096", "-N", "4096"],
    },
    Layout {
        name: "bigalloc",
        size: 64 * MIB,
        args: &["-t", "ext4", "-O", "bigalloc", "-C", "16384"],
    },
    Layout {
        name: "meta_bg",
        size: 48 * MIB,
        args: &["-t", "ext4", "-b", "1024", "-O", "meta_bg,^resize_inode"],
    },
    Layout {
        name: "inline",
        size: 32 * MIB,
        args: &["-t", "ext4", "-O", "inline_data", "-I", "256"],
    },
    Layout {
        name: "ext2",
        size: 32 * MIB,
        args: &["-t", "ext2", "-b", "1024"],
    },
];

/// Inodes whose `stat` debugfs -i cannot print as libext2fs prints it from the filesystem: an
/// inline-data inode with an xattr block (debugfs reads the block from the e2image file at the
/// block's filesystem offset, fails, and leaves out "Size of inline data"; we read the value
/// from the inode, where it is).
fn debugfs_i_reads_garbage(img: &Path, ino: u32) -> bool {
    let s = debugfs_batch(img, false, &[format!("stat <{ino}>")]).remove(0);
    s.contains("Size of inline data") && !s.contains("File ACL: 0\n")
}

#[test]
fn e2image_files_read_as_the_tools_read_them() {
    if tools_missing(&["mke2fs", "dumpe2fs", "debugfs", "e2image"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tree = populated_tree(dir.path());
    for l in LAYOUTS {
        let mut args: Vec<&str> = l.args.to_vec();
        let t = tree.to_str().unwrap();
        args.extend(["-d", t]);
        let img = mkfs(dir.path(), &format!("{}.img", l.name), l.size, &args);
        let e2i = e2image(&[], &img, &dir.path().join(format!("{}.e2i", l.name)));
        let q = e2image(&["-Q"], &img, &dir.path().join(format!("{}.qcow2", l.name)));
        let r = e2image(&["-r"], &q, &dir.path().join(format!("{}.raw", l.name)));
        let name = l.name;

        // dump
        let d = ours(&["dump"], &e2i);
        assert_eq!(d.status.code(), Some(0), "{name}: dump of the e2image file");
        assert!(
            d.stdout == tool("dumpe2fs", &["-i"], &e2i).into_bytes(),
            "{name}: dump differs from dumpe2fs -i"
        );
        // dump -i: the same bytes, and a raw image refused as dumpe2fs -i refuses it
        let di = ours(&["dump", "-i"], &e2i);
        assert_eq!(di.status.code(), Some(0), "{name}: dump -i");
        assert!(
            di.stdout == tool("dumpe2fs", &["-i"], &e2i).into_bytes(),
            "{name}: dump -i differs from dumpe2fs -i"
        );
        let raw_i = ours(&["dump", "-i"], &img);
        assert_eq!(
            raw_i.status.code(),
            Some(8),
            "{name}: dump -i of a raw image"
        );
        assert_eq!(
            String::from_utf8_lossy(&raw_i.stdout),
            tool("dumpe2fs", &["-i"], &img),
            "{name}: dump -i of a raw image"
        );
        assert!(
            String::from_utf8_lossy(&raw_i.stderr)
                .contains("Wrong magic number for Ext2 Image Header"),
            "{name}: dump -i of a raw image"
        );
        assert!(
            ours(&["dump"], &q).stdout == tool("dumpe2fs", &[], &r).into_bytes(),
            "{name}: dump of the -Q file differs from dumpe2fs of its -r conversion"
        );

        // inode N, every used inode and a few free ones
        let inos: Vec<u32> = (1..=used_inodes(&img) + 3).collect();
        let cmds: Vec<String> = inos.iter().map(|i| format!("stat <{i}>")).collect();
        let ours_e2i = inode_stats(&e2i, &inos);
        let theirs_e2i = debugfs_batch(&e2i, true, &cmds);
        let ours_q = inode_stats(&q, &inos);
        let theirs_r = debugfs_batch(&r, false, &cmds);
        let mut skipped = 0;
        for (k, &ino) in inos.iter().enumerate() {
            assert_eq!(ours_q[k], theirs_r[k], "{name}: -Q inode {ino}");
            if ours_e2i[k] != theirs_e2i[k] && debugfs_i_reads_garbage(&img, ino) {
                skipped += 1;
                continue;
            }
            assert_eq!(ours_e2i[k], theirs_e2i[k], "{name}: e2image inode {ino}");
        }
        eprintln!(
            "{name}: {} inodes compared ({skipped} inline with an xattr block skipped on the e2image file)",
            inos.len()
        );

        // ls: refused on the normal file, debugfs' listing on the -Q file
        assert_absent(&ours(&["ls", "/"], &e2i), &format!("{name}: ls /"));
        // JSON always prints its document: the listing's error says why, and the status is 8.
        let j = ours(&["ls", "--json", "/d1"], &e2i);
        assert_eq!(j.status.code(), Some(8), "{name}: ls --json");
        let v: Value = serde_json::from_slice(&j.stdout).unwrap();
        let err = v["listings"][0]["error"].as_str().unwrap_or_default();
        assert!(err.contains("not present in this metadata image"), "{err}");
        for d in ["/", "/d1", "/d1/d2"] {
            let o = ours(&["ls", "-l", d], &q);
            assert_eq!(o.status.code(), Some(0), "{name}: ls -l {d}");
            let theirs = debugfs_batch(&r, false, &[format!("ls -l {d}")]).remove(0);
            assert_eq!(
                String::from_utf8_lossy(&o.stdout),
                theirs,
                "{name}: ls -l {d}"
            );
        }

        // cat of a regular file: its data is in neither
        assert_absent(&ours(&["cat", "/d1/f5"], &e2i), &format!("{name}: cat"));
        assert_absent(&ours(&["cat", "/big"], &q), &format!("{name}: cat -Q"));

        // xattrs and fit --from-image need the xattr blocks: absent from the normal file (one
        // line, exit 8, never figures counting them as empty), held by the -Q file.
        let raw_x = ours(&["xattrs", "--json"], &img);
        let spills = serde_json::from_slice::<Value>(&raw_x.stdout).unwrap()["spill_to_block"]
            .as_u64()
            .unwrap_or(0)
            > 0;
        for cmd in ["xattrs", "fit --from-image"] {
            let run_on = |p: &Path| {
                let mut args: Vec<&std::ffi::OsStr> =
                    cmd.split(' ').map(std::ffi::OsStr::new).collect();
                args.push(p.as_os_str());
                run(Command::new(bin()).env("TZ", "UTC").args(args))
            };
            let strip = |o: &Output, p: &Path| {
                String::from_utf8_lossy(&o.stdout).replace(&p.display().to_string(), "IMG")
            };
            let raw_o = run_on(&img);
            assert_eq!(raw_o.status.code(), Some(0), "{name}: {cmd} raw");
            let q_o = run_on(&q);
            assert_eq!(q_o.status.code(), Some(0), "{name}: {cmd} -Q");
            assert_eq!(strip(&q_o, &q), strip(&raw_o, &img), "{name}: {cmd} -Q");
            let e_o = run_on(&e2i);
            if spills {
                assert_absent(&e_o, &format!("{name}: {cmd} on the e2image file"));
            } else {
                assert_eq!(strip(&e_o, &e2i), strip(&raw_o, &img), "{name}: {cmd}");
            }
        }

        // check: the raw image's verdict (with the skipped passes said)
        let (raw_code, raw_counts) = check_counts(&img);
        assert_eq!(raw_code, 0, "{name}: the raw image is clean");
        assert_eq!(check_counts(&e2i), (0, with_skipped(&raw_counts)), "{name}");
        assert_eq!(check_counts(&q), (0, with_skipped(&raw_counts)), "{name}");
    }
}

/// Damage that e2fsck finds in pass 4 and pass 5: the -Q file (all metadata) gives the raw
/// image's findings; the normal file only those of the passes it can run, and says which not.
#[test]
fn damaged_filesystem_verdicts() {
    if tools_missing(&["mke2fs", "debugfs", "e2image"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tree = populated_tree(dir.path());
    let img = mkfs(
        dir.path(),
        "bad.img",
        32 * MIB,
        &["-t", "ext4", "-d", tree.to_str().unwrap()],
    );
    let o = run(Command::new(which("debugfs").unwrap()).args([
        "-w",
        "-R",
        "sif /d1/f7 links_count 5",
        img.to_str().unwrap(),
    ]));
    assert!(o.status.success());
    let o = run(Command::new(which("debugfs").unwrap()).args([
        "-w",
        "-R",
        "set_bg 0 free_inodes_count 3",
        img.to_str().unwrap(),
    ]));
    assert!(o.status.success());
    let (code, raw) = check_counts(&img);
    assert_eq!(code, 4, "the damage is found: {raw}");
    let q = e2image(&["-Q"], &img, &dir.path().join("bad.qcow2"));
    // The raw image's findings, but for the backup e2fsck -b could start from: the -Q file holds
    // no backup to recommend (and says so).
    let mut want = with_skipped(&raw);
    want.as_object_mut().unwrap().remove("sb.use_backup");
    assert_eq!(check_counts(&q), (4, want));
    let e2i = e2image(&[], &img, &dir.path().join("bad.e2i"));
    let (code, counts) = check_counts(&e2i);
    // Every finding of the normal file is one of the raw image's (the group pass runs), and the
    // pass 4 finding is not invented from absent directories.
    for (rule, n) in counts.as_object().unwrap() {
        if rule != "state.passes_skipped" {
            assert_eq!(
                raw.get(rule),
                Some(n),
                "{rule} on the e2image file: {counts}"
            );
        }
    }
    assert_eq!(counts["state.passes_skipped"], 1);
    assert!(code == 0 || code == 4);
}

#[test]
fn qemu_img_disks_with_partition_tables() {
    if tools_missing(&["mke2fs", "dumpe2fs", "qemu-img"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tree = populated_tree(dir.path());
    let t = tree.to_str().unwrap();
    let fs4 = mkfs(dir.path(), "p4.img", 40 * MIB, &["-t", "ext4", "-d", t]);
    let fs1 = mkfs(
        dir.path(),
        "p1.img",
        40 * MIB,
        &["-t", "ext4", "-b", "1024", "-d", t],
    );
    let g = dir.path().join("gpt.img");
    disk_with(&g, 64 * MIB, &fs4, MIB, |p| gpt(p, &[(MIB, 40 * MIB)]));
    let m = dir.path().join("mbr.img");
    disk_with(&m, 64 * MIB, &fs1, 2 * MIB, |p| {
        write_at(p, 0, &mbr(&[(0x83, 2 * MIB, 40 * MIB)]))
    });
    let variants: &[(&str, &[&str])] = &[
        ("plain", &[]),
        ("deflate", &["-c"]),
        ("zstd", &["-c", "-o", "compression_type=zstd"]),
        ("extl2", &["-o", "extended_l2=on,cluster_size=128k"]),
        ("v2", &["-o", "compat=0.10,cluster_size=4096"]),
    ];
    for (disk, fs, offset) in [(&g, &fs4, MIB), (&m, &fs1, 2 * MIB)] {
        let want = run(Command::new(which("dumpe2fs").unwrap())
            .env("TZ", "UTC")
            .arg(format!("{}?offset={offset}", disk.display())))
        .stdout;
        assert_eq!(want, tool("dumpe2fs", &[], fs).into_bytes());
        for (tag, args) in variants {
            let out = dir.path().join(format!(
                "{}.{tag}.qcow2",
                disk.file_stem().unwrap().to_string_lossy()
            ));
            let q = qemu_convert("qcow2", args, disk, &out);
            let d = ours(&["dump"], &q);
            assert_eq!(d.status.code(), Some(0), "{tag}: {:?}", d.stderr);
            assert!(d.stdout == want, "{}: dump differs", q.display());
            let p = ours(&["dump", "--partition", "1"], &q);
            assert!(p.stdout == want, "{}: --partition 1", q.display());
            // File data is read through the compressed clusters too.
            let c = ours(&["cat", "/big"], &q);
            assert!(
                c.stdout == std::fs::read(tree.join("big")).unwrap(),
                "{}: cat /big",
                q.display()
            );
            let (code, _) = check_counts(&q);
            assert_eq!(code, 0, "{}: check", q.display());
        }
    }
}

#[test]
fn refused_containers_say_what_to_do_in_one_line() {
    if tools_missing(&["mke2fs", "qemu-img"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let img = mkfs(dir.path(), "base.img", 16 * MIB, &["-t", "ext4"]);
    let base = qemu_convert("qcow2", &[], &img, &dir.path().join("base.qcow2"));
    let over = dir.path().join("over.qcow2");
    let o = run(Command::new("qemu-img")
        .args(["create", "-q", "-f", "qcow2", "-F", "qcow2", "-b"])
        .arg(&base)
        .arg(&over));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let vmdk = qemu_convert("vmdk", &[], &img, &dir.path().join("d.vmdk"));
    let vhdx = qemu_convert("vhdx", &[], &img, &dir.path().join("d.vhdx"));
    for (p, want) in [
        (&over, "backing file"),
        (&vmdk, "VMDK disk image: convert it"),
        (&vhdx, "VHDX disk image: convert it"),
    ] {
        for cmd in ["dump", "check", "ls"] {
            let o = ours(&[cmd], p);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(8), "{cmd} {}: {err}", p.display());
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(err.contains(want), "{cmd} {}: {err}", p.display());
        }
    }
}
