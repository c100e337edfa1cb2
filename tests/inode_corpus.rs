//! `inode` and `xattrs` over every image of the e2fsprogs corpus: no panic, no hang, exit codes from
//! the contract, and findings on the images known to carry damaged inodes.

mod common;
use common::{corpus, wait_bounded};
use serde_json::Value;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Run with a deadline; returns (exit code, stdout). A timeout or a crash fails the test.
fn run(args: &[String], what: &str) -> (i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_e4inspect"))
        .args(args)
        .env("TZ", "UTC")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out.read_to_end(&mut s);
        s
    });
    let (status, timed_out) = wait_bounded(&mut child, Duration::from_secs(20));
    assert!(!timed_out, "{what}: no answer within 20 s");
    let stdout = String::from_utf8_lossy(&reader.join().unwrap()).into_owned();
    let mut err = String::new();
    let _ = child.stderr.take().unwrap().read_to_string(&mut err);
    let code = status
        .code()
        .unwrap_or_else(|| panic!("{what}: killed by a signal\n{err}"));
    assert!(
        [0, 4, 8].contains(&code),
        "{what}: exit {code} (a panic exits 101)\n{err}"
    );
    assert!(!err.contains("panicked"), "{what}: {err}");
    (code, stdout)
}

#[test]
fn corpus_inode_and_xattrs_never_panic() {
    let Some(dir) = corpus() else {
        eprintln!("SKIP: ../shared/corpus/e2fsprogs not present");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("image.gz").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let targets: Vec<String> = (1..=40)
        .map(|i| i.to_string())
        .chain(["/".into(), "/lost+found".into()])
        .collect();
    let mut findings = std::collections::BTreeMap::new();
    for name in &names {
        let img = tmp.path().join(format!("{name}.img"));
        let gz = std::fs::File::open(dir.join(name).join("image.gz")).unwrap();
        let out = std::fs::File::create(&img).unwrap();
        let st = Command::new("gunzip")
            .arg("-c")
            .stdin(gz)
            .stdout(out)
            .status()
            .unwrap();
        assert!(st.success(), "{name}: gunzip");
        let imgs = img.display().to_string();
        let mut args = vec!["inode".to_string(), "--json".into(), imgs.clone()];
        args.extend(targets.iter().cloned());
        let (code, js) = run(&args, &format!("{name}: inode"));
        let mut problems = 0;
        if code != 8 || !js.trim().is_empty() {
            if let Ok(doc) = serde_json::from_str::<Value>(&js) {
                problems = doc["inodes"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|i| i["problems"].as_array().map_or(0, |p| p.len()))
                    .sum::<usize>();
            }
        }
        let (xcode, xs) = run(
            &["xattrs".to_string(), "--json".into(), imgs.clone()],
            &format!("{name}: xattrs"),
        );
        let scan_problems = serde_json::from_str::<Value>(&xs)
            .ok()
            .and_then(|v| v["problem_count"].as_u64())
            .unwrap_or(0);
        // Text forms too (they take other code paths).
        let mut targs = vec!["inode".to_string(), imgs.clone()];
        targs.extend(targets.iter().cloned());
        run(&targs, &format!("{name}: inode text"));
        run(
            &["xattrs".to_string(), imgs],
            &format!("{name}: xattrs text"),
        );
        findings.insert(name.clone(), (code, problems, xcode, scan_problems));
        let _ = std::fs::remove_file(&img);
    }
    eprintln!("image: inode exit, inode problems, xattrs exit, scan problems");
    for (n, f) in &findings {
        eprintln!("{n}: {f:?}");
    }
    // The images whose damage lives in inodes, extents, xattrs and inline data must yield
    // findings (or a clean operational error), never silence.
    for name in [
        "f_extents",
        "f_ea_checks",
        "f_inlinedata_repair",
        "f_bad_inode_csum",
    ] {
        let Some(&(code, problems, xcode, scan)) = findings.get(name) else {
            eprintln!("SKIP {name}: not in the corpus");
            continue;
        };
        assert!(
            problems > 0 || code == 4 || xcode == 4 || scan > 0,
            "{name}: no finding (inode exit {code}, xattrs exit {xcode})"
        );
    }
}

/// Paths through an htree directory with an index level resolve to the inode debugfs lists.
#[test]
fn corpus_htree_paths_resolve() {
    let Some(dir) = corpus() else {
        eprintln!("SKIP: ../shared/corpus/e2fsprogs not present");
        return;
    };
    let gz = dir.join("f_h_normal/image.gz");
    if !gz.is_file() {
        eprintln!("SKIP: f_h_normal not in the corpus");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let img = tmp.path().join("h.img");
    let st = Command::new("gunzip")
        .arg("-c")
        .stdin(std::fs::File::open(gz).unwrap())
        .stdout(std::fs::File::create(&img).unwrap())
        .status()
        .unwrap();
    assert!(st.success());
    let ls = Command::new("debugfs")
        .args(["-R", "ls -p /test2"])
        .arg(&img)
        .output();
    let Ok(ls) = ls else {
        eprintln!("SKIP: debugfs not installed");
        return;
    };
    let listing = String::from_utf8_lossy(&ls.stdout).into_owned();
    let entries: Vec<(String, String)> = listing
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split('/').collect();
            (f.len() >= 6 && !f[5].is_empty() && f[1] != "0" && f[5] != "." && f[5] != "..")
                .then(|| (f[1].to_string(), f[5].to_string()))
        })
        .step_by(37)
        .collect();
    assert!(entries.len() > 10, "the test directory is large");
    let paths: Vec<String> = entries.iter().map(|(_, n)| format!("/test2/{n}")).collect();
    let mut args = vec![
        "inode".to_string(),
        "--json".into(),
        img.display().to_string(),
    ];
    args.extend(paths.iter().cloned());
    let (code, js) = run(&args, "f_h_normal paths");
    assert_ne!(code, 8, "every path resolves");
    let v: Value = serde_json::from_str(&js).unwrap();
    let root: Value = serde_json::from_str(
        &run(
            &[
                "inode".to_string(),
                "--json".into(),
                img.display().to_string(),
                "/test2".into(),
            ],
            "htree root",
        )
        .1,
    )
    .unwrap();
    assert!(
        root["inodes"][0]["htree"]["indirect_levels"]
            .as_u64()
            .unwrap()
            >= 1
    );
    for (k, (ino, name)) in entries.iter().enumerate() {
        assert_eq!(v["inodes"][k]["ino"].to_string(), *ino, "/test2/{name}");
    }
}
