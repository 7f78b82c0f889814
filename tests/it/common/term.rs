//! `rcon` in a real pseudo-terminal, read back through a terminal emulator (vt100), so tests
//! assert on what a person would see. A Unix PTY, or ConPTY on Windows (portable-pty).

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::num::NonZeroU16;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};

use super::PASSWORD;

/// How long any wait on the screen may take.
pub const LIMIT: Duration = Duration::from_secs(20);

/// `rcon` running in a PTY.
pub struct Term {
    parser: Arc<Mutex<vt100::Parser>>,
    raw: Arc<Mutex<Vec<u8>>>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
    _master: Box<dyn portable_pty::MasterPty + Send>,
    /// The thread copying the PTY's output; it ends when the child's side is closed.
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Term {
    /// Starts `rcon` for `addr` in a fresh PTY with a hermetic environment rooted at `home`.
    pub fn start(addr: SocketAddr, home: &Path, extra: &[&str]) -> Term {
        let port = addr.port().to_string();
        let mut args = vec!["-H", "127.0.0.1", "-P", port.as_str()];
        args.extend_from_slice(extra);
        Term::start_with(home, &args)
    }

    /// Starts `rcon ARGS` in a fresh PTY with a hermetic environment rooted at `home` (PATH is
    /// kept, so `ssh` can be found).
    pub fn start_with(home: &Path, args: &[&str]) -> Term {
        Term::start_with_env(home, args, &[])
    }

    /// [`Term::start_with`], then each `(KEY, Some(VALUE))` set and each `(KEY, None)` removed
    /// (`TERM` and `NO_COLOR` are set by default).
    pub fn start_with_env(home: &Path, args: &[&str], env: &[(&str, Option<&str>)]) -> Term {
        Term::start_program(home, &super::rcon_bin(), args, env)
    }

    /// [`Term::start_with_env`] for another program (a shell that redirects rcon's stdout).
    pub fn start_program(
        home: &Path,
        program: &Path,
        args: &[&str],
        env: &[(&str, Option<&str>)],
    ) -> Term {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: 30,
                cols: 100,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open a pty");
        let mut cmd = CommandBuilder::new(program);
        cmd.env_clear();
        cmd.env("HOME", home);
        cmd.env("XDG_DATA_HOME", home.join("data"));
        cmd.env("XDG_CONFIG_HOME", home.join("config"));
        cmd.env("RCON_DATA_DIR", home.join("data").join("rconsole"));
        cmd.env("RCON_CONFIG_DIR", home.join("config").join("rconsole"));
        // Windows programs need these to start at all (SystemRoot for Winsock).
        #[cfg(windows)]
        for key in [
            "SystemRoot",
            "windir",
            "TEMP",
            "TMP",
            "USERPROFILE",
            "ComSpec",
        ] {
            if let Some(value) = std::env::var_os(key) {
                cmd.env(key, value);
            }
        }
        cmd.env("TERM", "xterm-256color");
        cmd.env("NO_COLOR", "1");
        cmd.env("RCON_PASSWORD", PASSWORD);
        let workdir = home.join("work");
        std::fs::create_dir_all(&workdir).unwrap();
        cmd.cwd(&workdir);
        if let Some(path) = std::env::var_os("PATH") {
            cmd.env("PATH", path);
        }
        for (key, value) in env {
            match value {
                Some(value) => cmd.env(key, value),
                None => cmd.env_remove(key),
            }
        }
        cmd.args(args);
        let child = pair
            .slave
            .spawn_command(cmd)
            .expect("spawn rcon in the pty");
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().unwrap();
        let writer = pair.master.take_writer().unwrap();
        let parser = Arc::new(Mutex::new(vt100::Parser::new(
            NonZeroU16::new(30).unwrap(),
            NonZeroU16::new(100).unwrap(),
            0,
        )));
        let raw = Arc::new(Mutex::new(Vec::new()));
        let reader = {
            let (parser, raw) = (parser.clone(), raw.clone());
            std::thread::spawn(move || {
                let mut buf = [0u8; 8192];
                loop {
                    match reader.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            parser.lock().unwrap().process(&buf[..n]);
                            raw.lock().unwrap().extend_from_slice(&buf[..n]);
                        }
                    }
                }
            })
        };
        Term {
            parser,
            raw,
            writer,
            child,
            _master: pair.master,
            reader: Some(reader),
        }
    }

    pub fn screen(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    pub fn raw(&self) -> String {
        String::from_utf8_lossy(&self.raw.lock().unwrap()).into_owned()
    }

    /// Waits until the screen shows `needle`.
    pub fn wait_for(&self, needle: &str) {
        let start = Instant::now();
        while start.elapsed() < LIMIT {
            if self.screen().contains(needle) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!(
            "screen never showed {needle:?}; it shows:\n{}",
            self.screen()
        );
    }

    /// Waits until everything written so far contains `needle` (for output longer than a screen).
    pub fn wait_for_raw(&self, needle: &str) {
        let start = Instant::now();
        while start.elapsed() < LIMIT {
            if self.raw().contains(needle) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("output never contained {} bytes expected", needle.len());
    }

    /// Waits until the prompt line shows `text` after the prompt (what is being edited).
    pub fn wait_for_line(&self, prompt: &str, text: &str) {
        let start = Instant::now();
        let want = format!("{prompt}{text}");
        while start.elapsed() < LIMIT {
            let screen = self.screen();
            let last = screen.lines().rfind(|l| l.starts_with(prompt));
            if last.is_some_and(|l| l.trim_end() == want.trim_end()) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!(
            "edited line never became {want:?}; screen:\n{}",
            self.screen()
        );
    }

    pub fn send(&mut self, keys: &str) {
        self.writer.write_all(keys.as_bytes()).unwrap();
        self.writer.flush().unwrap();
    }

    /// Types a line, waits until it shows, and presses Enter, as a person would (keys typed
    /// ahead past an Enter are kept on Unix, see docs/console.md, but a test that sends a line
    /// at a time sees each prompt).
    pub fn line(&mut self, prompt: &str, text: &str) {
        self.send(text);
        self.wait_for_line(prompt, text);
        self.send("\r");
    }

    /// Like [`Term::line`], then waits for the next empty prompt: the command has finished.
    pub fn enter(&mut self, prompt: &str, text: &str) {
        self.line(prompt, text);
        self.wait_for_line(prompt, "");
    }

    /// Waits for the process to end; returns its exit code.
    pub fn exit_code(&mut self) -> u32 {
        let start = Instant::now();
        while start.elapsed() < LIMIT {
            if let Some(status) = self.child.try_wait().unwrap() {
                // Everything it printed is read before its exit is reported (on a loaded
                // machine the reader thread can lag behind the exit).
                while self.reader.as_ref().is_some_and(|r| !r.is_finished())
                    && start.elapsed() < LIMIT
                {
                    std::thread::sleep(Duration::from_millis(5));
                }
                return status.exit_code();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        panic!("rcon did not exit; screen:\n{}", self.screen());
    }
}

impl Drop for Term {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
    }
}
