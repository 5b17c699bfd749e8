//! The result cache (`src/cache/`) as a studio's farm uses it: `report` over every shared asset
//! twice takes every result from the cache the second time and prints the same bytes; damaged
//! and foreign entries are refused and recomputed; a `.skp` written from the cache is the one
//! written without it; shards merge into the single run's report; and the HTTP backend does
//! the same against a real server (nginx with WebDAV `PUT`, as Bazel's documentation sets one
//! up), including a server stopped in the middle of a run.

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::player::{skelpack, skelpack_ok};

/// What the cache summary line on standard error counts.
#[derive(Debug, Default, PartialEq, Eq)]
struct Counts {
    hits: u64,
    computed: u64,
    stored: u64,
    rejected: u64,
    errors: u64,
}

fn counts(stderr: &[u8]) -> Counts {
    let text = String::from_utf8_lossy(stderr);
    let line = text
        .lines()
        .rev()
        .find(|l| l.starts_with("cache "))
        .unwrap_or_else(|| panic!("no cache summary in: {text}"));
    let n = |label: &str| -> u64 {
        let before = line
            .split(label)
            .next()
            .unwrap_or_else(|| panic!("'{label}' in {line}"));
        before
            .rsplit([' ', ':', ','])
            .find(|w| !w.is_empty())
            .and_then(|w| w.parse().ok())
            .unwrap_or_else(|| panic!("count before '{label}' in {line}"))
    };
    Counts {
        hits: n(" from the cache"),
        computed: n(" computed"),
        stored: n(" stored"),
        rejected: n(" rejected"),
        errors: n(" errors"),
    }
}

/// `report --json` over every shared asset (with `extra` flags); standard output and error.
fn report(extra: &[&str]) -> (Vec<u8>, Vec<u8>) {
    let assets = common::assets();
    let mut args = vec!["report", "--json"];
    args.extend_from_slice(extra);
    let out = skelpack(&args, &[&assets]);
    assert!(
        out.status.code() == Some(0),
        "report {extra:?} exited {:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    (out.stdout, out.stderr)
}

fn clip_count(report: &[u8]) -> u64 {
    let v: serde_json::Value = serde_json::from_slice(report).expect("report JSON");
    v["totals"]["clips"].as_u64().expect("totals.clips")
}

/// The files under `dir`, sorted.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if !p.file_name().unwrap().to_string_lossy().starts_with('.') {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The blob an action record names (the 64 hex digits it holds), under `root/cas`.
fn named_blob(root: &Path, action: &Path) -> PathBuf {
    let text = String::from_utf8_lossy(&std::fs::read(action).unwrap()).into_owned();
    let hash = text
        .as_bytes()
        .windows(64)
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .find(|w| {
            w.bytes()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        })
        .expect("an action names a blob");
    // The folder backend spreads blobs over 256 sub-folders; a WebDAV server keeps them flat.
    let sharded = root.join("cas").join(&hash[..2]).join(&hash);
    if sharded.exists() {
        sharded
    } else {
        root.join("cas").join(hash)
    }
}

/// Removes every whole-file report (blobs starting `SKPF`), so the next run goes to the
/// clips' results. Returns how many there were.
fn remove_file_reports(root: &Path) -> usize {
    let reports: Vec<PathBuf> = files_under(&root.join("cas"))
        .into_iter()
        .filter(|b| std::fs::read(b).unwrap().starts_with(b"SKPF"))
        .collect();
    for r in &reports {
        std::fs::remove_file(r).unwrap();
    }
    reports.len()
}

/// With the file reports removed, damages three clip results three ways: a result blob
/// truncated, a result blob with one byte changed, and an action record replaced by
/// another clip's (a foreign entry: a valid blob of another clip). Returns 3.
fn damage(root: &Path) -> u64 {
    assert!(
        remove_file_reports(root) > 0,
        "no file reports under {}",
        root.display()
    );
    let clip_actions: Vec<(PathBuf, PathBuf)> = files_under(&root.join("ac"))
        .into_iter()
        .map(|a| (named_blob(root, &a), a))
        .filter(|(b, _)| b.exists())
        .collect();
    assert!(clip_actions.len() >= 4, "too few clip results");
    let (first_blob, _) = &clip_actions[0];
    let bytes = std::fs::read(first_blob).unwrap();
    std::fs::write(first_blob, &bytes[..bytes.len() / 2]).unwrap();
    let (second_blob, _) = &clip_actions[1];
    let mut bytes = std::fs::read(second_blob).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x40;
    std::fs::write(second_blob, &bytes).unwrap();
    // The last clip's action now names the third clip's blob.
    std::fs::copy(&clip_actions[2].1, &clip_actions.last().unwrap().1).unwrap();
    3
}

#[test]
fn a_folder_cache_serves_every_result_refuses_damaged_ones_and_shards_merge() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let cache_arg = cache.to_str().unwrap();

    let (cold, err) = report(&["--cache", cache_arg]);
    let clips = clip_count(&cold);
    let c = counts(&err);
    assert_eq!(
        (c.hits, c.computed, c.stored),
        (0, clips, clips),
        "cold run"
    );

    let started = Instant::now();
    let (warm, err) = report(&["--cache", cache_arg]);
    let warm_time = started.elapsed();
    assert_eq!(counts(&err).hits, clips, "warm run");
    assert!(
        warm == cold,
        "the warm run printed other bytes than the cold one"
    );
    eprintln!("warm run over {clips} clips: {warm_time:?}");

    // Without the whole-file reports (as after re-exporting every file from the DCC: new
    // bytes, same motion), every clip comes from its own result.
    remove_file_reports(&cache);
    let (clipwise, err) = report(&["--cache", cache_arg]);
    assert_eq!(counts(&err).hits, clips, "clip results");
    assert!(clipwise == cold, "the clip results printed other bytes");

    // Damaged and foreign entries are refused, recomputed and stored again.
    let damaged = damage(&cache);
    let (again, err) = report(&["--cache", cache_arg]);
    let c = counts(&err);
    assert_eq!(c.rejected, damaged, "{c:?}");
    assert_eq!((c.hits, c.computed), (clips - damaged, damaged), "{c:?}");
    let strip = |r: &[u8]| {
        let mut v: serde_json::Value = serde_json::from_slice(r).unwrap();
        for e in v["clips"].as_array_mut().unwrap() {
            e["report"]["compress_ms"] = serde_json::Value::Null;
        }
        v
    };
    assert_eq!(strip(&again), strip(&cold), "recomputed results differ");
    let (latest, err) = report(&["--cache", cache_arg]);
    assert_eq!(
        counts(&err).hits,
        clips,
        "the recomputed results were not stored again"
    );

    // A .skp written from the cache is the one written without it.
    let fox = common::asset("Fox.glb");
    let plain = dir.path().join("plain.skp");
    let cached = dir.path().join("cached.skp");
    skelpack_ok(&["compress", "-o", plain.to_str().unwrap()], &[&fox]);
    let out = skelpack_ok(
        &[
            "compress",
            "--cache",
            cache_arg,
            "-o",
            cached.to_str().unwrap(),
        ],
        &[&fox],
    );
    assert!(counts(&out.stderr).hits > 0);
    assert!(
        std::fs::read(&plain).unwrap() == std::fs::read(&cached).unwrap(),
        "the .skp from the cache differs"
    );

    // Clips with playback flags (a loop with root motion, an additive clip on the rest pose
    // and one in sync with another clip) come back from the cache with their metadata.
    let character = dir.path().join("character.glb");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/default_character.glb"),
        &character,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("character.glb.skelpack.toml"),
        "[clips.Walk]\nlooping = true\nroot_motion = true\n\n\
         [clips.JumpAttack]\nadditive = { base = \"rest\" }\n\n\
         [clips.Idle]\nadditive = { base = \"Walk\" }\n",
    )
    .unwrap();
    let plain = dir.path().join("character_plain.skp");
    let cached = dir.path().join("character_cached.skp");
    // (Full-body clips marked additive need not hold every joint: the exit code may be 1,
    // and must be the same from the cache.)
    let code = skelpack(&["compress", "-o", plain.to_str().unwrap()], &[&character])
        .status
        .code();
    assert!(matches!(code, Some(0 | 1)), "compress exited {code:?}");
    for round in 0..2 {
        let out = skelpack(
            &[
                "compress",
                "--cache",
                cache_arg,
                "-o",
                cached.to_str().unwrap(),
            ],
            &[&character],
        );
        assert_eq!(out.status.code(), code);
        assert_eq!(counts(&out.stderr).hits, round * 3, "round {round}");
    }
    assert!(
        std::fs::read(&plain).unwrap() == std::fs::read(&cached).unwrap(),
        "a .skp with playback flags written from the cache differs"
    );

    // Four shards, merged, give the single run's report byte for byte.
    let mut shard_files = Vec::new();
    let mut shard_clips = 0;
    for i in 0..4 {
        let shard = format!("{i}/4");
        let (out, _) = report(&["--cache", cache_arg, "--shard", &shard]);
        shard_clips += clip_count(&out);
        let f = dir.path().join(format!("shard{i}.json"));
        std::fs::write(&f, &out).unwrap();
        shard_files.push(f);
    }
    assert_eq!(shard_clips, clips, "the shards do not hold every clip once");
    let mut args = vec!["report", "--merge"];
    args.extend(shard_files.iter().map(|f| f.to_str().unwrap()));
    let merged = skelpack_ok(&args, &[]);
    // (The recomputed clips' compress_ms are the ones the cache now holds.)
    assert!(
        merged.stdout == latest,
        "the merged shards differ from the single run"
    );
    // A missing shard is an error, not a smaller report.
    let out = skelpack(&["report", "--merge"], &[&shard_files[0], &shard_files[1]]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing shards: 2/4, 3/4"));
}

/// nginx serving `root` over HTTP with WebDAV `PUT` on a free port of 127.0.0.1.
struct Nginx {
    child: Child,
    port: u16,
}

impl Nginx {
    fn start(dir: &Path) -> Nginx {
        let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx"]
            .into_iter()
            .find(|p| Path::new(p).exists())
            .expect("the HTTP cache test needs nginx (Debian: apt-get install nginx; .ci/run installs it)");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let root = dir.join("www");
        std::fs::create_dir_all(&root).unwrap();
        let d = dir.display();
        let conf = format!(
            "daemon off;\nmaster_process off;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
             events {{ worker_connections 64; }}\n\
             http {{\n  access_log off;\n  client_body_temp_path {d}/body;\n  \
             proxy_temp_path {d}/proxy;\n  fastcgi_temp_path {d}/fastcgi;\n  \
             uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n  \
             server {{\n    listen 127.0.0.1:{port};\n    root {};\n    \
             client_max_body_size 1g;\n    location / {{\n      dav_methods PUT;\n      \
             create_full_put_path on;\n      dav_access user:rw group:r all:r;\n    }}\n  }}\n}}\n",
            root.display()
        );
        let conf_path = dir.join("nginx.conf");
        std::fs::write(&conf_path, conf).unwrap();
        let child = Command::new(nginx)
            .arg("-c")
            .arg(&conf_path)
            .arg("-p")
            .arg(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start nginx");
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "nginx did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        Nginx { child, port }
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        self.stop();
    }
}

#[test]
fn an_http_cache_in_nginx_serves_every_result_and_a_stopped_server_only_slows_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Nginx::start(dir.path());
    let url = format!("http://127.0.0.1:{}/skelpack", server.port);

    let (cold, err) = report(&["--cache", &url]);
    let clips = clip_count(&cold);
    let c = counts(&err);
    assert_eq!(
        (c.hits, c.computed, c.stored, c.errors),
        (0, clips, clips, 0),
        "cold"
    );
    let (warm, err) = report(&["--cache", &url]);
    assert_eq!(counts(&err).hits, clips, "warm");
    assert!(warm == cold, "the warm run printed other bytes");

    // Entries damaged on the server are refused and recomputed.
    let damaged = damage(&dir.path().join("www/skelpack"));
    let (_, err) = report(&["--cache", &url]);
    let c = counts(&err);
    assert_eq!((c.rejected, c.computed), (damaged, damaged), "{c:?}");

    // The server stopped in the middle of a cold run: the run ends as it would without a
    // cache, and says the cache failed.
    let (plain, _) = report(&[]);
    let cold_url = format!("http://127.0.0.1:{}/second", server.port);
    let mut run = Command::new(env!("CARGO_BIN_EXE_skelpack"))
        .args(["report", "--json", "--cache", &cold_url])
        .arg(common::assets())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    server.stop();
    let mut stdout = Vec::new();
    run.stdout.take().unwrap().read_to_end(&mut stdout).unwrap();
    let mut stderr = Vec::new();
    run.stderr.take().unwrap().read_to_end(&mut stderr).unwrap();
    let status = run.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&stderr)
    );
    let c = counts(&stderr);
    assert!(c.errors > 0, "the stopped server was not noticed: {c:?}");
    assert_eq!(c.hits, 0);
    let strip = |r: &[u8]| {
        let mut v: serde_json::Value = serde_json::from_slice(r).unwrap();
        for e in v["clips"].as_array_mut().unwrap() {
            e["report"]["compress_ms"] = serde_json::Value::Null;
        }
        v
    };
    assert_eq!(strip(&stdout), strip(&plain));
}

/// The files under `dir` with their bytes, by path below `dir`.
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    files_under(dir)
        .into_iter()
        .map(|f| {
            let bytes = std::fs::read(&f).unwrap();
            (f.strip_prefix(dir).unwrap().to_path_buf(), bytes)
        })
        .collect()
}

/// The summary line of `compress --jsonl`.
fn batch_summary(stdout: &[u8]) -> serde_json::Value {
    let text = String::from_utf8_lossy(stdout);
    let last = text.lines().last().expect("a summary line");
    serde_json::from_str::<serde_json::Value>(last).expect("summary JSON")["summary"].clone()
}

#[test]
fn a_compress_batch_shards_by_file_and_a_warm_cache_rewrites_it_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let assets = common::assets();
    let cache = dir.path().join("cache");
    let cache_arg = cache.to_str().unwrap();
    let run = |out: &str, extra: &[&str]| {
        let out_dir = dir.path().join(out);
        let mut args = vec!["compress", "--jsonl", "--cache", cache_arg, "--out-dir"];
        args.push(out_dir.to_str().unwrap());
        args.extend_from_slice(extra);
        let out = skelpack(&args, &[&assets]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "compress {extra:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        (batch_summary(&out.stdout), counts(&out.stderr))
    };
    let (cold, cold_counts) = run("cold", &[]);
    let clips = cold["clips"].as_u64().unwrap();
    let written = cold["written"].as_u64().unwrap();
    assert!(clips >= 40 && written >= 20, "{cold}");
    assert_eq!(cold_counts.computed, clips);
    // Every output is a .skp that opens, below the folder of its source.
    let outputs = tree(&dir.path().join("cold"));
    assert_eq!(outputs.len() as u64, written);
    assert!(
        outputs
            .iter()
            .any(|(p, _)| p.starts_with("acl") && p.extension().unwrap() == "skp")
    );
    for (p, _) in &outputs {
        skelpack_ok(&["inspect"], &[&dir.path().join("cold").join(p)]);
    }

    let (warm, warm_counts) = run("warm", &[]);
    assert_eq!(warm["clips"], cold["clips"]);
    assert_eq!(warm_counts.hits, clips, "{warm_counts:?}");
    assert_eq!(warm_counts.computed, 0);
    assert!(
        tree(&dir.path().join("warm")) == outputs,
        "a warm batch differs"
    );

    // Four shards into one folder write every file once: the single run's folder.
    let mut files = 0;
    for i in 0..4 {
        let (s, _) = run("sharded", &["--shard", &format!("{i}/4")]);
        files += s["files"].as_u64().unwrap();
        assert_eq!(s["batch_files"], cold["batch_files"]);
    }
    assert_eq!(files, cold["files"].as_u64().unwrap());
    assert!(
        tree(&dir.path().join("sharded")) == outputs,
        "the shards' outputs differ from the single run's"
    );
}

#[test]
fn a_gltf_export_comes_from_the_cache_and_a_damaged_one_is_recomputed() {
    let dir = tempfile::tempdir().unwrap();
    let source = common::assets().join("CesiumMan.glb");
    let cache = dir.path().join("cache");
    let export = |name: &str| {
        let out = dir.path().join(name);
        let o = skelpack(
            &["compress", "--cache", cache.to_str().unwrap(), "-o"],
            &[&out, &source],
        );
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        (std::fs::read(&out).unwrap(), o.stdout, counts(&o.stderr))
    };
    let (cold, cold_table, c) = export("cold.glb");
    assert_eq!((c.hits, c.computed, c.stored), (0, 1, 1), "{c:?}");
    let (warm, warm_table, c) = export("warm.glb");
    assert_eq!((c.hits, c.computed), (1, 0), "{c:?}");
    assert!(warm == cold, "the cached export differs");
    // The table is the same but for the output's name.
    let table = String::from_utf8_lossy(&warm_table).replace("warm.glb", "cold.glb");
    assert_eq!(table, String::from_utf8_lossy(&cold_table));

    // One byte of the cached file changed: refused, recomputed, the same export again.
    let blobs: Vec<PathBuf> = files_under(&cache.join("cas"))
        .into_iter()
        .filter(|b| std::fs::read(b).unwrap().starts_with(b"SKPG"))
        .collect();
    assert_eq!(blobs.len(), 1);
    let mut bytes = std::fs::read(&blobs[0]).unwrap();
    let at = bytes.len() - 100;
    bytes[at] ^= 0x20;
    std::fs::write(&blobs[0], &bytes).unwrap();
    let (again, _, c) = export("again.glb");
    assert_eq!((c.rejected, c.computed), (1, 1), "{c:?}");
    assert!(again == cold, "the recomputed export differs");
}

#[test]
fn a_conversion_comes_from_the_cache_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    for source in ["pirouette.bvh", "fbx/pab_walk.fbx"] {
        let source = common::assets().join(source);
        let convert = |name: &str| {
            let out = dir.path().join(name);
            let o = skelpack(
                &["convert", "--cache", cache.to_str().unwrap()],
                &[&source, &out],
            );
            assert_eq!(
                o.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&o.stderr)
            );
            let text = String::from_utf8_lossy(&o.stdout).replace(out.to_str().unwrap(), "OUT");
            (std::fs::read(&out).unwrap(), text, counts(&o.stderr))
        };
        let (cold, cold_text, c) = convert("cold.glb");
        assert_eq!((c.hits, c.computed, c.stored), (0, 1, 1), "{c:?}");
        let (warm, warm_text, c) = convert("warm.glb");
        assert_eq!((c.hits, c.computed), (1, 0), "{c:?}");
        assert!(
            warm == cold,
            "{}: the cached conversion differs",
            source.display()
        );
        assert_eq!(warm_text, cold_text);
    }
}

/// A studio-wide settings file can name the cache (`cache = "..."`, given with `--settings`);
/// where results are kept is not part of their key, so a run with `--cache` and one with the
/// settings file share results.
#[test]
fn a_settings_file_names_the_cache_and_stays_out_of_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let source = common::assets().join("pirouette.bvh");
    let out = skelpack(&["report", "--cache", cache.to_str().unwrap()], &[&source]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(counts(&out.stderr).computed, 1);
    let studio = dir.path().join("studio.skelpack.toml");
    std::fs::write(&studio, format!("cache = {:?}\n", cache.to_str().unwrap())).unwrap();
    for command in ["report", "compress"] {
        let mut args = vec![command, "--settings", studio.to_str().unwrap()];
        let target = dir.path().join("p.skp");
        if command == "compress" {
            args.extend(["-o", target.to_str().unwrap()]);
        }
        let out = skelpack(&args, &[&source]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let c = counts(&out.stderr);
        assert_eq!((c.hits, c.computed), (1, 0), "{command}: {c:?}");
    }
    // --no-cache wins over the settings file.
    let out = skelpack(
        &[
            "report",
            "--no-cache",
            "--settings",
            studio.to_str().unwrap(),
        ],
        &[&source],
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("cache "));
}
