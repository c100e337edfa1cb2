//! `e4inspect inode` and `e4inspect xattrs` against debugfs on images populated with `mke2fs -d`
//! from a generated tree (files of many sizes, directories, fast and slow symlinks, hard links, a
//! FIFO, inline-data files, xattrs in the user/trusted/security namespaces of many sizes, POSIX
//! ACLs), for inode sizes 128, 256, 512 and 1024.
//!
//! For every inode slot in use (and a few beyond), the text `e4inspect inode` prints before its
//! `Details:` section must equal `debugfs -R "stat <N>"` byte for byte (TZ=UTC), `ea_list` must list
//! the same names and sizes as our JSON, and the xattr totals of `e4inspect xattrs --json` must
//! equal what the generator set.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

mod common;
use common::{bin, have};

/// A tiny deterministic generator (no dependency needed for test data).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// What the generator set: name -> (count, value bytes), for names it set with setfattr.
type Expected = BTreeMap<String, (u64, u64)>;

fn setfattr(path: &Path, name: &str, size: usize, rng: &mut Lcg, exp: &mut Expected) {
    // Printable values so setfattr takes them as text; size 0 is an empty value.
    let value: String = (0..size)
        .map(|_| (b'a' + rng.below(26) as u8) as char)
        .collect();
    let st = Command::new("setfattr")
        .args(["-n", name, "-v"])
        .arg(if size == 0 {
            "\"\"".to_string()
        } else {
            format!("\"{value}\"")
        })
        .arg(path)
        .status()
        .expect("setfattr runs");
    assert!(st.success(), "setfattr {name} on {}", path.display());
    let e = exp.entry(name.to_string()).or_default();
    e.0 += 1;
    e.1 += size as u64;
}

/// Build the tree; returns the xattrs set (None when setfattr is missing).
fn generate(root: &Path, with_xattrs: bool) -> Option<Expected> {
    let mut rng = Lcg(0x5eed);
    let xattrs = with_xattrs && have("setfattr");
    let acls = with_xattrs && have("setfacl");
    if with_xattrs && !xattrs {
        eprintln!("SKIP xattr part: setfattr not installed (apt-get install attr)");
    }
    if with_xattrs && !acls {
        eprintln!("SKIP ACL part: setfacl not installed (apt-get install acl)");
    }
    let mut exp = Expected::new();
    let sizes = [0usize, 1, 40, 59, 60, 61, 100, 150, 700, 3000, 5000, 70_000];
    std::fs::create_dir_all(root.join("dir/sub/deeper")).unwrap();
    std::fs::create_dir_all(root.join("many")).unwrap();
    for (i, &sz) in sizes.iter().enumerate() {
        let data: Vec<u8> = (0..sz).map(|j| (j * 7 + i) as u8).collect();
        std::fs::write(root.join(format!("file{i}")), &data).unwrap();
        std::fs::write(root.join(format!("dir/sub/f{i}")), &data).unwrap();
    }
    for i in 0..150 {
        std::fs::write(
            root.join(format!("many/entry-with-a-longish-name-{i:04}")),
            b"x",
        )
        .unwrap();
    }
    // A 600 KB file (double indirect blocks with 1 KiB blocks) and a sparse file of 12 data
    // runs (an extent tree deeper than the 4 extents i_block holds).
    std::fs::write(root.join("big"), vec![7u8; 600_000]).unwrap();
    {
        use std::io::{Seek, SeekFrom, Write};
        let mut f = std::fs::File::create(root.join("sparse")).unwrap();
        for k in 0..12u64 {
            f.seek(SeekFrom::Start(k * 65536)).unwrap();
            f.write_all(&[1u8 + k as u8; 4096]).unwrap();
        }
    }
    std::os::unix::fs::symlink("file1", root.join("fast")).unwrap();
    std::os::unix::fs::symlink("l".repeat(59), root.join("fast59")).unwrap();
    std::os::unix::fs::symlink("s".repeat(60), root.join("slow60")).unwrap();
    std::os::unix::fs::symlink("t".repeat(200), root.join("slow200")).unwrap();
    std::fs::hard_link(root.join("file6"), root.join("dir/hardlink6")).unwrap();
    let _ = Command::new("mkfifo").arg(root.join("fifo")).status();
    if xattrs {
        // Many sizes and all three namespaces, on files without hard links.
        let vsizes = [0usize, 1, 3, 4, 5, 16, 27, 31, 40, 64, 100, 200, 400, 900];
        for i in 0..40 {
            let p = root.join(format!("x{i:02}"));
            std::fs::write(&p, vec![b'q'; (i * 13) % 90]).unwrap();
            let n = 1 + rng.below(4);
            for k in 0..n {
                let ns = ["user", "trusted", "security"][rng.below(3) as usize];
                let name = format!("{ns}.a{}{}", "n".repeat(rng.below(12) as usize), k);
                let vs = vsizes[rng.below(vsizes.len() as u64) as usize];
                setfattr(&p, &name, vs, &mut rng, &mut exp);
            }
        }
        setfattr(
            &root.join("dir"),
            "security.selinux",
            27,
            &mut rng,
            &mut exp,
        );
        setfattr(&root.join("fast"), "trusted.onlink", 8, &mut rng, &mut exp);
    }
    if acls {
        let run = |args: &[&str], p: &Path| {
            let st = Command::new("setfacl").args(args).arg(p).status().unwrap();
            assert!(st.success());
        };
        run(&["-m", "u:1000:rw,g:100:r"], &root.join("file3"));
        run(&["-d", "-m", "u:1000:rwx"], &root.join("dir/sub"));
        run(&["-m", "u:1001:r"], &root.join("dir/sub"));
    }
    Some(exp)
}

fn mkfs(img: &Path, tree: &Path, fstype: &str, inode_size: u32) -> bool {
    let mut c = Command::new("mke2fs");
    let bs = if fstype == "ext4" { "4096" } else { "1024" };
    c.env("E2FSPROGS_FAKE_TIME", "1700000000")
        .args(["-q", "-F", "-t", fstype, "-b", bs])
        .args([
            "-U",
            "01234567-89ab-cdef-0123-456789abcdef",
            "-E",
            "hash_seed=01234567-89ab-cdef-0123-456789abcdef",
        ])
        .args(["-I", &inode_size.to_string()]);
    if inode_size >= 256 && fstype == "ext4" {
        c.args(["-O", "inline_data"]);
    }
    let out = c.arg("-d").arg(tree).arg(img).arg("16M").output().unwrap();
    if !out.status.success() {
        eprintln!(
            "mke2fs -I {inode_size} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    out.status.success()
}

/// debugfs output of each request, split on its echoed command lines.
fn debugfs_batch(img: &Path, cmds: &[String]) -> Vec<String> {
    let f = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(f.path(), cmds.join("\n") + "\n").unwrap();
    let out = Command::new("debugfs")
        .env("TZ", "UTC")
        .arg("-f")
        .arg(f.path())
        .arg(img)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
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

fn used_inodes(img: &Path) -> u32 {
    let out = Command::new("dumpe2fs")
        .arg("-h")
        .arg(img)
        .output()
        .unwrap();
    let t = String::from_utf8_lossy(&out.stdout);
    let field = |k: &str| -> u32 {
        t.lines()
            .find_map(|l| l.strip_prefix(k))
            .map(|v| v.trim().parse().unwrap())
            .unwrap()
    };
    field("Inode count:") - field("Free inodes:")
}

fn ea_list_names(s: &str) -> Vec<(String, u64)> {
    s.lines()
        .filter_map(|l| l.strip_prefix("  "))
        .filter_map(|l| {
            let (name, rest) = l.split_once(" (")?;
            let size = rest.split(')').next()?.parse().ok()?;
            Some((name.to_string(), size))
        })
        .collect()
}

fn check_image(img: &Path, inode_size: u32, exp: Option<&Expected>) -> String {
    // Inodes are allocated in order by mke2fs -d: check every used slot and a few free ones.
    let last = used_inodes(img) + 5;
    let inos: Vec<u32> = (1..=last).collect();
    let args: Vec<String> = inos.iter().map(|i| i.to_string()).collect();
    let ours = Command::new(bin())
        .env("TZ", "UTC")
        .arg("inode")
        .arg(img)
        .args(&args)
        .output()
        .unwrap();
    assert!(
        ours.status.code() == Some(0),
        "inode exit {:?}: {}",
        ours.status.code(),
        String::from_utf8_lossy(&ours.stderr)
    );
    let text = String::from_utf8(ours.stdout).unwrap();
    let chunks: Vec<&str> = text
        .split_inclusive('\n')
        .fold(Vec::<(usize, usize)>::new(), |mut v, l| {
            let start = v.last().map(|x| x.1).unwrap_or(0);
            if l.starts_with("Inode: ") || v.is_empty() {
                v.push((start, start + l.len()));
            } else if let Some(x) = v.last_mut() {
                x.1 += l.len();
            }
            v
        })
        .into_iter()
        .map(|(a, b)| &text[a..b])
        .collect();
    assert_eq!(chunks.len(), inos.len());
    let cmds: Vec<String> = inos
        .iter()
        .flat_map(|i| [format!("stat <{i}>"), format!("ea_list <{i}>")])
        .collect();
    let theirs = debugfs_batch(img, &cmds);
    let json_out = Command::new(bin())
        .arg("inode")
        .arg("--json")
        .arg(img)
        .args(&args)
        .output()
        .unwrap();
    let js: Value = serde_json::from_slice(&json_out.stdout).unwrap();
    let js = js["inodes"].as_array().unwrap();
    let mut compared_xattrs = 0;
    for (k, &ino) in inos.iter().enumerate() {
        let ours = chunks[k].split("Details:\n").next().unwrap();
        assert_eq!(ours, theirs[2 * k], "-I {inode_size}: stat <{ino}> differs");
        // ea_list names and sizes equal the JSON xattrs, in order.
        let want = ea_list_names(&theirs[2 * k + 1]);
        let j = &js[k];
        assert_eq!(j["ino"], ino);
        let got: Vec<(String, u64)> = j["xattrs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| {
                (
                    x["name"].as_str().unwrap().to_string(),
                    x["value_size"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(got, want, "-I {inode_size}: ea_list <{ino}>");
        compared_xattrs += got.len();
        // JSON fields against the debugfs text.
        let st = &theirs[2 * k];
        let mode = j["mode"]["raw"].as_u64().unwrap();
        assert!(st.contains(&format!("Mode:  0{:03o}", mode & 0o7777)));
        assert!(st.contains(&format!("Links: {}", j["links_count"])));
        assert!(st.contains(&format!("User: {:5}", j["uid"].as_u64().unwrap())));
        assert!(st.contains(&format!("Group: {:5}", j["gid"].as_u64().unwrap())));
        assert!(st.contains(&format!(
            "Flags: 0x{:x}",
            j["flags"]["raw"].as_u64().unwrap()
        )));
        // Space accounting is consistent: in-inode costs add up to the bytes used.
        let used: u64 = j["xattrs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| x["location"] == "inode")
            .map(|x| x["used_bytes"].as_u64().unwrap())
            .sum();
        let sp = &j["xattr_space"]["inode"];
        assert_eq!(sp["used_bytes"].as_u64().unwrap(), used);
        assert!(
            sp["used_bytes"].as_u64().unwrap() + sp["free_bytes"].as_u64().unwrap()
                <= sp["capacity_bytes"].as_u64().unwrap()
        );
        assert!(j["problems"].as_array().unwrap().is_empty(), "{j}");
    }
    eprintln!(
        "-I {inode_size}: {} inodes identical to debugfs stat, {compared_xattrs} xattrs identical to ea_list",
        inos.len()
    );
    // Paths resolve to the inode debugfs finds.
    for p in [
        "/dir/sub/deeper",
        "/dir/hardlink6",
        "/many/entry-with-a-longish-name-0149",
        "/fast",
    ] {
        let ours = Command::new(bin())
            .args(["inode", "--json"])
            .arg(img)
            .arg(p)
            .output()
            .unwrap();
        let j: Value = serde_json::from_slice(&ours.stdout).unwrap();
        let dbg = Command::new("debugfs")
            .arg("-R")
            .arg(format!("stat {p}"))
            .arg(img)
            .output()
            .unwrap();
        let first = String::from_utf8_lossy(&dbg.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .to_string();
        assert!(
            first.starts_with(&format!("Inode: {}   ", j["inodes"][0]["ino"])),
            "{p}: {first}"
        );
    }
    // Totals of the scan against the generator.
    let scan = Command::new(bin())
        .args(["xattrs", "--json", "--top", "100000"])
        .arg(img)
        .output()
        .unwrap();
    assert_eq!(scan.status.code(), Some(0));
    let s: Value = serde_json::from_slice(&scan.stdout).unwrap();
    let names: BTreeMap<String, (u64, u64)> = s["top_names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["name"].as_str().unwrap().to_string(),
                (n["count"].as_u64().unwrap(), n["bytes"].as_u64().unwrap()),
            )
        })
        .collect();
    if let Some(exp) = exp {
        for (name, want) in exp {
            assert_eq!(
                names.get(name),
                Some(want),
                "-I {inode_size}: totals of {name}"
            );
        }
        let user_set: u64 = exp.values().map(|v| v.0).sum();
        let seen: u64 = names
            .iter()
            .filter(|(n, _)| !n.starts_with("system."))
            .map(|(_, v)| v.0)
            .sum();
        assert_eq!(seen, user_set, "-I {inode_size}: no unexpected xattrs");
        let with = s["inodes_with_xattrs"].as_u64().unwrap();
        assert_eq!(s["use_ea_inode"], 0);
        assert_eq!(
            with,
            s["all_in_inode"].as_u64().unwrap() + s["spill_to_block"].as_u64().unwrap(),
            "without EA inodes, every inode with xattrs is either all in-inode or spills"
        );
        if inode_size == 128 {
            assert_eq!(
                s["bytes_in_inode"], 0,
                "128-byte inodes have no in-inode xattrs"
            );
            assert_eq!(s["all_in_inode"], 0);
        } else {
            assert!(s["all_in_inode"].as_u64().unwrap() > 0);
        }
        assert!(s["spill_to_block"].as_u64().unwrap() > 0);
    }
    text
}

#[test]
fn inode_and_xattrs_match_debugfs() {
    for t in ["mke2fs", "debugfs", "dumpe2fs"] {
        if !have(t) {
            eprintln!("SKIP: {t} not installed (apt-get install e2fsprogs)");
            return;
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    std::fs::create_dir(&tree).unwrap();
    let exp = generate(&tree, true);
    for isz in [128u32, 256, 512, 1024] {
        let img = dir.path().join(format!("i{isz}.img"));
        assert!(mkfs(&img, &tree, "ext4", isz), "mke2fs -I {isz}");
        let text = check_image(&img, isz, exp.as_ref());
        assert!(
            text.contains("(ETB0):"),
            "an extent tree with an index level was compared"
        );
    }
    // Classic block maps (direct, indirect, double indirect, holes) on ext2/ext3 with 1 KiB blocks.
    let plain = dir.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    generate(&plain, false);
    for (t, isz) in [("ext2", 128u32), ("ext3", 256)] {
        let img = dir.path().join(format!("{t}.img"));
        assert!(mkfs(&img, &plain, t, isz), "mke2fs -t {t}");
        let text = check_image(&img, isz, None);
        assert!(
            text.contains("(DIND):"),
            "double indirect blocks were compared"
        );
    }
}
