//! Headless Chromium driven over the Chrome DevTools Protocol, for the HTML report's browser test.
//!
//! The browser is the distribution's `chromium` package (`tests/setup/chromium.sh`), or the
//! executable `TDQS_GATE_CHROMIUM` names. It is started with `--remote-debugging-pipe`: commands go
//! in on file descriptor 3 and answers and events come out on 4, each a JSON text ended by a NUL
//! byte, so no websocket client is needed. It runs in its own process group with a temporary
//! profile folder; [`Browser`]'s drop ends the whole group and waits for it, so no browser
//! process outlives the test.

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The Chromium to drive: `TDQS_GATE_CHROMIUM`, else `chromium`, `chromium-browser` or
/// `google-chrome` on PATH (the names `tests/setup/chromium.sh` looks for).
pub fn find() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("TDQS_GATE_CHROMIUM").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| {
            [
                "chromium",
                "chromium-browser",
                "google-chrome",
                "google-chrome-stable",
            ]
            .map(|name| dir.join(name))
        })
        .find(|p| p.is_file())
}

fn pipe() -> (OwnedFd, OwnedFd) {
    let mut fds = [0i32; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    assert_eq!(rc, 0, "pipe2: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just created and are owned by nobody else.
    unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
}

/// One headless browser with one page attached.
pub struct Browser {
    child: Child,
    to_browser: std::fs::File,
    from_browser: Receiver<Value>,
    next_id: u64,
    session: String,
    /// Every event of the page's session seen so far.
    pub events: Vec<Value>,
    /// The browser's own standard error, for failure messages.
    stderr_path: PathBuf,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts `program` headless and attaches to a blank page with the Runtime, Log, Network and
    /// Page domains enabled.
    pub fn start(program: &Path) -> Browser {
        let profile = tempfile::Builder::new()
            .prefix("tdqs-chromium-")
            .tempdir()
            .unwrap();
        let (child_in, to_browser) = pipe();
        let (from_browser, child_out) = pipe();
        let stderr_path = profile.path().join("browser-stderr.log");
        let stderr = std::fs::File::create(&stderr_path).unwrap();
        let mut command = Command::new(program);
        command
            .args([
                "--headless",
                // Root (as on CI) cannot use the sandbox; the page is our own report.
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-default-apps",
                "--remote-debugging-pipe",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .process_group(0);
        let (r, w) = (
            std::os::fd::AsRawFd::as_raw_fd(&child_in),
            std::os::fd::AsRawFd::as_raw_fd(&child_out),
        );
        // SAFETY: only async-signal-safe calls (fcntl, dup2) between fork and exec. Both ends are
        // first copied above 4, so placing one cannot overwrite the other, and dup2 onto 3 and 4
        // clears close-on-exec there.
        unsafe {
            command.pre_exec(move || {
                let (r, w) = (
                    libc::fcntl(r, libc::F_DUPFD, 10),
                    libc::fcntl(w, libc::F_DUPFD, 10),
                );
                if r < 0 || w < 0 || libc::dup2(r, 3) < 0 || libc::dup2(w, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                libc::close(r);
                libc::close(w);
                Ok(())
            });
        }
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", program.display()));
        drop(child_in);
        drop(child_out);
        let (tx, rx) = mpsc::channel();
        let mut reader = std::fs::File::from(from_browser);
        std::thread::spawn(move || {
            let mut pending = Vec::new();
            let mut buf = [0u8; 65536];
            loop {
                let n = match reader.read(&mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                pending.extend_from_slice(&buf[..n]);
                while let Some(end) = pending.iter().position(|b| *b == 0) {
                    let message: Vec<u8> = pending.drain(..=end).collect();
                    if let Ok(value) = serde_json::from_slice(&message[..message.len() - 1]) {
                        if tx.send(value).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let mut browser = Browser {
            child,
            to_browser: std::fs::File::from(to_browser),
            from_browser: rx,
            next_id: 0,
            session: String::new(),
            events: Vec::new(),
            stderr_path,
            _profile: profile,
        };
        let target = browser.call(None, "Target.createTarget", json!({"url": "about:blank"}));
        let target_id = target["targetId"].as_str().unwrap().to_string();
        let attached = browser.call(
            None,
            "Target.attachToTarget",
            json!({"targetId": target_id, "flatten": true}),
        );
        browser.session = attached["sessionId"].as_str().unwrap().to_string();
        for domain in ["Runtime", "Log", "Network", "Page"] {
            browser.page(&format!("{domain}.enable"), json!({}));
        }
        browser
    }

    fn describe(&self) -> String {
        let stderr = std::fs::read_to_string(&self.stderr_path).unwrap_or_default();
        let tail: Vec<&str> = stderr.lines().rev().take(20).collect();
        format!(
            "browser stderr (last lines):\n{}",
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        )
    }

    fn receive(&mut self, deadline: Instant) -> Value {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.from_browser.recv_timeout(left) {
            Ok(v) => v,
            Err(RecvTimeoutError::Timeout) => {
                panic!("the browser did not answer\n{}", self.describe())
            }
            Err(RecvTimeoutError::Disconnected) => {
                panic!("the browser closed its pipe\n{}", self.describe())
            }
        }
    }

    /// Sends one command (to the browser, or to the page's session) and returns its result;
    /// events that arrive meanwhile are kept in [`Self::events`].
    pub fn call(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            message["sessionId"] = json!(s);
        }
        let mut bytes = serde_json::to_vec(&message).unwrap();
        bytes.push(0);
        self.to_browser.write_all(&bytes).unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let value = self.receive(deadline);
            if value["id"] == id {
                if let Some(error) = value.get("error") {
                    panic!("{method} failed: {error}\n{}", self.describe());
                }
                return value["result"].clone();
            }
            if value.get("method").is_some() {
                self.events.push(value);
            }
        }
    }

    /// A command to the attached page.
    pub fn page(&mut self, method: &str, params: Value) -> Value {
        let session = self.session.clone();
        self.call(Some(&session), method, params)
    }

    /// Opens `url` and waits for its load event.
    pub fn open(&mut self, url: &str) {
        let seen = self.events.len();
        let result = self.page("Page.navigate", json!({"url": url}));
        assert!(
            result.get("errorText").is_none(),
            "cannot open {url}: {result}"
        );
        let loaded = |events: &[Value]| {
            events[seen..]
                .iter()
                .any(|e| e["method"] == "Page.loadEventFired")
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while !loaded(&self.events) {
            let value = self.receive(deadline);
            if value.get("method").is_some() {
                self.events.push(value);
            }
        }
        // Events the load may still trigger (a late console message) arrive within this round
        // trip: the page answers it only after running what was queued before.
        self.eval("0");
    }

    /// Evaluates `expression` in the page and returns its value (JSON-serialisable results).
    pub fn eval(&mut self, expression: &str) -> Value {
        let result = self.page(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true}),
        );
        assert!(
            result.get("exceptionDetails").is_none(),
            "{expression} threw: {result}"
        );
        result["result"]["value"].clone()
    }

    /// The page's console errors and warnings, uncaught exceptions, browser log entries and failed
    /// network loads, each as one line.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        for e in &self.events {
            let p = &e["params"];
            match e["method"].as_str().unwrap_or("") {
                "Runtime.consoleAPICalled"
                    if matches!(p["type"].as_str(), Some("error" | "warning" | "assert")) =>
                {
                    out.push(format!("console {}: {}", p["type"], p["args"]));
                }
                "Runtime.exceptionThrown" => {
                    out.push(format!("exception: {}", p["exceptionDetails"]));
                }
                "Log.entryAdded" => {
                    out.push(format!(
                        "log {} ({}): {}",
                        p["entry"]["level"], p["entry"]["source"], p["entry"]["text"]
                    ));
                }
                "Network.loadingFailed" => {
                    out.push(format!("failed load: {p}"));
                }
                _ => {}
            }
        }
        out
    }

    /// The URL of every network request the page made.
    pub fn requests(&self) -> Vec<String> {
        self.events
            .iter()
            .filter(|e| e["method"] == "Network.requestWillBeSent")
            .map(|e| {
                e["params"]["request"]["url"]
                    .as_str()
                    .unwrap_or("")
                    .to_string()
            })
            .collect()
    }

    /// The browser's process id (its process group's id too).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The temporary profile folder, named on every browser process's command line.
    pub fn profile(&self) -> PathBuf {
        self._profile.path().to_path_buf()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // Ask politely, then end the whole group whatever the answer.
        let bytes = b"{\"id\":999999,\"method\":\"Browser.close\",\"params\":{}}\0";
        let _ = self.to_browser.write_all(bytes);
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // SAFETY: a signal to the browser's own process group (it was started as its leader).
        unsafe {
            libc::kill(-(self.child.id() as i32), libc::SIGKILL);
        }
        let _ = self.child.wait();
    }
}

/// Processes whose command line mentions `needle` (a profile folder), other than zombies.
pub fn processes_mentioning(needle: &str) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return out;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if text.contains(needle) {
            out.push(format!("{pid}: {text}"));
        }
    }
    out
}
