//! The HTML report opened in a real browser: Debian's headless Chromium loads
//! `report.html` from disk, dumps the DOM it built and takes a screenshot; the
//! test checks that the charts are in the DOM as SVG with data, and that the
//! screenshot shows them (non-blank, with the first series' colour).
//!
//! Without Chromium the test is skipped loudly; under CI (`CI` set) a missing
//! Chromium fails it, so a green CI never hides a skip.

use canyon_bench::report::{charts, write_all};
use canyon_bench::testing::sample_report;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "0" && v != "false")
}

fn find_chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |d| d.join(name)))
        .find(|p| p.is_file())
}

/// Runs Chromium headless on `url` with `extra` arguments; returns stdout.
/// Bounded: killed after 90 s.
fn chromium(bin: &Path, profile: &Path, extra: &[String], url: &str) -> String {
    let mut child = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--no-first-run",
            "--hide-scrollbars",
            "--window-size=1280,2400",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    let mut out = child.stdout.take().expect("piped stdout");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let mut err = child.stderr.take().expect("piped stderr");
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + Duration::from_secs(90);
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait for chromium") {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 90 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let stdout = reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    assert!(status.success(), "chromium failed ({status}):\n{stderr}");
    stdout
}

/// Decodes an 8-bit RGB or RGBA, non-interlaced PNG into RGB pixels.
fn decode_png(data: &[u8]) -> (u32, u32, Vec<[u8; 3]>) {
    assert_eq!(&data[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
    let (mut width, mut height, mut channels) = (0u32, 0u32, 0usize);
    let mut idat = Vec::new();
    let mut at = 8;
    while at + 8 <= data.len() {
        let len = u32::from_be_bytes(data[at..at + 4].try_into().expect("4 bytes")) as usize;
        let kind = &data[at + 4..at + 8];
        let body = &data[at + 8..at + 8 + len];
        match kind {
            b"IHDR" => {
                width = u32::from_be_bytes(body[0..4].try_into().expect("4 bytes"));
                height = u32::from_be_bytes(body[4..8].try_into().expect("4 bytes"));
                assert_eq!(body[8], 8, "bit depth");
                channels = match body[9] {
                    2 => 3,
                    6 => 4,
                    t => panic!("PNG colour type {t}"),
                };
                assert_eq!(body[12], 0, "interlaced PNG");
            }
            b"IDAT" => idat.extend_from_slice(body),
            b"IEND" => break,
            _ => {}
        }
        at += 12 + len;
    }
    let mut raw = Vec::new();
    flate2::read::ZlibDecoder::new(&idat[..])
        .read_to_end(&mut raw)
        .expect("inflate IDAT");
    let stride = width as usize * channels;
    assert_eq!(raw.len(), (stride + 1) * height as usize, "image size");
    let mut prev = vec![0u8; stride];
    let mut pixels = Vec::with_capacity((width * height) as usize);
    for row in raw.chunks(stride + 1) {
        let filter = row[0];
        let mut cur = row[1..].to_vec();
        for i in 0..stride {
            let a = if i >= channels { cur[i - channels] } else { 0 };
            let b = prev[i];
            let c = if i >= channels { prev[i - channels] } else { 0 };
            let pred = match filter {
                0 => 0,
                1 => a,
                2 => b,
                3 => ((u16::from(a) + u16::from(b)) / 2) as u8,
                4 => {
                    let p = i16::from(a) + i16::from(b) - i16::from(c);
                    let (pa, pb, pc) = (
                        (p - i16::from(a)).abs(),
                        (p - i16::from(b)).abs(),
                        (p - i16::from(c)).abs(),
                    );
                    if pa <= pb && pa <= pc {
                        a
                    } else if pb <= pc {
                        b
                    } else {
                        c
                    }
                }
                f => panic!("PNG filter {f}"),
            };
            cur[i] = cur[i].wrapping_add(pred);
        }
        pixels.extend(cur.chunks(channels).map(|p| [p[0], p[1], p[2]]));
        prev = cur;
    }
    (width, height, pixels)
}

#[test]
fn html_report_renders_its_charts_in_headless_chromium() {
    let Some(bin) = find_chromium() else {
        let msg = "chromium is not installed: run scripts/install-deps.sh (make deps). SKIPPING this test.";
        assert!(!in_ci(), "{msg} (not allowed under CI)");
        eprintln!("\n!!!!!!!! {msg} !!!!!!!!\n");
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let report = sample_report();
    write_all(dir.path(), &report);
    let html = dir.path().join("report.html");
    let url = format!("file://{}", html.display());
    let n_charts = charts(&report).len();
    assert!(n_charts >= 2);

    // The DOM Chromium built from the file: every chart is an <svg> element
    // with its lines and points.
    let profile = tempfile::tempdir().expect("profile dir");
    let dom = chromium(&bin, profile.path(), &["--dump-dom".into()], &url);
    assert_eq!(
        dom.matches("<svg").count(),
        n_charts,
        "svg elements in the DOM"
    );
    assert!(
        dom.matches("<polyline").count() >= n_charts,
        "chart lines in the DOM"
    );
    assert!(dom.contains("<circle"), "data points in the DOM");
    assert!(dom.contains("throughput vs client threads"));
    assert!(dom.contains("<th>syscalls/txn</th>"));

    // The pixels: a page with charts is far from blank, and the first series'
    // colour (plotters' blue, #1f77b4) is drawn.
    let shot = dir.path().join("shot.png");
    let profile = tempfile::tempdir().expect("profile dir");
    chromium(
        &bin,
        profile.path(),
        &[format!("--screenshot={}", shot.display())],
        &url,
    );
    let png = std::fs::read(&shot).expect("the screenshot was written");
    let (w, h, px) = decode_png(&png);
    assert!(w >= 1000 && h >= 1000, "{w}x{h}");
    let non_white = px.iter().filter(|p| p.iter().any(|&c| c < 240)).count();
    let share = non_white as f64 / px.len() as f64;
    assert!(
        share > 0.02,
        "the page looks blank: {:.2}% non-white",
        share * 100.0
    );
    let blue = px
        .iter()
        .filter(|p| {
            (i16::from(p[0]) - 31).abs() < 25
                && (i16::from(p[1]) - 119).abs() < 25
                && (i16::from(p[2]) - 180).abs() < 25
        })
        .count();
    assert!(blue > 200, "no chart series drawn ({blue} blue pixels)");
}
