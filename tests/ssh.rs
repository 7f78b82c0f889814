//! `--ssh` and `--proxy-command` end to end: a real OpenSSH `sshd` started on loopback with a
//! generated host key and user key, tunnelling to a practice server. Needs `sshd`, `ssh` and
//! `ssh-keygen` (Debian: openssh-server, openssh-client); without them the sshd tests skip
//! loudly, or fail when CI is set.
#![cfg(unix)]

mod common;

use std::fs;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use rconsole::practice::{Mode, sample_text};

const SSHD: &str = "/usr/sbin/sshd";

/// A private sshd on a free loopback port, killed on drop.
struct Sshd {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
    user: String,
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn tools_present() -> bool {
    let found = Path::new(SSHD).exists()
        && Command::new("ssh-keygen")
            .arg("-?")
            .stderr(Stdio::null())
            .status()
            .is_ok()
        && Command::new("ssh")
            .arg("-V")
            .stderr(Stdio::null())
            .status()
            .is_ok();
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "sshd/ssh/ssh-keygen missing but CI is set: .ci/run must install openssh-server and openssh-client"
        );
        eprintln!(
            "SKIPPED: {SSHD}, ssh or ssh-keygen not installed (apt-get install openssh-server openssh-client)"
        );
    }
    found
}

fn keygen(path: &Path) {
    let status = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "rcon-test", "-f"])
        .arg(path)
        .stdin(Stdio::null())
        .status()
        .expect("run ssh-keygen");
    assert!(status.success(), "ssh-keygen failed");
}

fn current_user() -> String {
    let out = Command::new("id").arg("-un").output().expect("run id");
    String::from_utf8(out.stdout)
        .expect("user name")
        .trim()
        .to_string()
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

impl Sshd {
    fn start() -> Sshd {
        let dir = tempfile::tempdir().expect("temp dir");
        let p = |name: &str| dir.path().join(name);
        keygen(&p("host_key"));
        keygen(&p("user_key"));
        keygen(&p("wrong_key"));
        fs::copy(p("user_key.pub"), p("authorized_keys")).expect("authorized_keys");
        // sshd running as root needs its privilege separation directory.
        let _ = fs::create_dir_all("/run/sshd");
        let port = free_port();
        let host_pub = fs::read_to_string(p("host_key.pub")).expect("host key");
        fs::write(
            p("known_hosts"),
            format!("[127.0.0.1]:{port} {}", host_pub.trim()),
        )
        .expect("known_hosts");
        fs::write(p("empty_known_hosts"), "").expect("empty known_hosts");
        let config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {host}\nPidFile {pid}\n\
             AuthorizedKeysFile {keys}\nStrictModes no\nUsePAM no\nPubkeyAuthentication yes\n\
             PasswordAuthentication no\nKbdInteractiveAuthentication no\nAllowTcpForwarding yes\n\
             PermitRootLogin yes\nPermitTTY no\nX11Forwarding no\nLogLevel VERBOSE\n",
            host = p("host_key").display(),
            pid = p("sshd.pid").display(),
            keys = p("authorized_keys").display(),
        );
        fs::write(p("sshd_config"), config).expect("sshd_config");
        let log = fs::File::create(p("sshd.log")).expect("sshd log");
        let mut child = Command::new(SSHD)
            .args(["-D", "-e", "-f"])
            .arg(p("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start sshd");
        let until = Instant::now() + Duration::from_secs(15);
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                let log = fs::read_to_string(p("sshd.log")).unwrap_or_default();
                panic!("sshd exited with {status}: {log}");
            }
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                break;
            }
            assert!(Instant::now() < until, "sshd did not listen on {port}");
            std::thread::sleep(Duration::from_millis(20));
        }
        Sshd {
            child,
            port,
            dir,
            user: current_user(),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn destination(&self) -> String {
        format!("{}@127.0.0.1:{}", self.user, self.port)
    }

    /// ssh options with the given key and known_hosts file.
    fn options(&self, key: &str, known_hosts: &str) -> Vec<String> {
        vec![
            format!("IdentityFile={}", self.path(key).display()),
            "IdentitiesOnly=yes".into(),
            format!("UserKnownHostsFile={}", self.path(known_hosts).display()),
            "GlobalKnownHostsFile=/dev/null".into(),
            "StrictHostKeyChecking=yes".into(),
        ]
    }

    /// `rcon --ssh ...` to the RCON server on `rcon_port` (as seen from the sshd side).
    fn rcon(&self, home: &Path, key: &str, known_hosts: &str, rcon_port: u16) -> Command {
        let mut cmd = rcon_in(home);
        cmd.env("RCON_PASSWORD", PASSWORD)
            .args(["--ssh", &self.destination()])
            .args(["-H", "127.0.0.1", "-P", &rcon_port.to_string()]);
        for option in self.options(key, known_hosts) {
            cmd.args(["--ssh-option", &option]);
        }
        cmd
    }

    fn log(&self) -> String {
        fs::read_to_string(self.path("sshd.log")).unwrap_or_default()
    }
}

#[test]
fn commands_run_through_a_real_sshd() {
    if !tools_present() {
        return;
    }
    let sshd = Sshd::start();
    let server = strict_vanilla();
    let home = home();
    let out = run(sshd
        .rcon(home.path(), "user_key", "known_hosts", server.port())
        .args(["-c", "list", "-c", "chars 10000", "-c", "echo done"]));
    assert!(
        out.status.success(),
        "{}\nsshd log:\n{}",
        stderr(&out),
        sshd.log()
    );
    assert_eq!(
        stdout(&out),
        format!(
            "There are 0 of a max of 20 players online: \n{}\ndone\n",
            sample_text(10000)
        )
    );
    assert_eq!(server.violations(), Vec::<String>::new());
    assert_eq!(server.connections(), 1);
    assert_eq!(server.commands(), ["list", "chars 10000", "echo done"]);
    assert!(
        !stderr(&out).contains(PASSWORD) && !stdout(&out).contains(PASSWORD),
        "password leaked"
    );
}

#[test]
fn wrong_key_exits_9_naming_the_ssh_failure() {
    if !tools_present() {
        return;
    }
    let sshd = Sshd::start();
    let server = strict_vanilla();
    let home = home();
    let started = Instant::now();
    let out = run(sshd
        .rcon(home.path(), "wrong_key", "known_hosts", server.port())
        .arg("list"));
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.starts_with("rcon: error: "), "{err}");
    assert!(
        err.contains("ssh ") && err.contains("Permission denied"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert_eq!(server.connections(), 0, "nothing reached the RCON server");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "failed fast, never prompted"
    );
}

#[test]
fn unknown_host_key_exits_9() {
    if !tools_present() {
        return;
    }
    let sshd = Sshd::start();
    let server = strict_vanilla();
    let home = home();
    let out = run(sshd
        .rcon(home.path(), "user_key", "empty_known_hosts", server.port())
        .arg("list"));
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Host key verification failed"),
        "{}",
        stderr(&out)
    );
    assert_eq!(server.connections(), 0);
}

#[test]
fn closed_rcon_port_behind_the_tunnel_exits_9_with_the_reason() {
    if !tools_present() {
        return;
    }
    let sshd = Sshd::start();
    let home = home();
    let closed = free_port();
    let out = run(sshd
        .rcon(home.path(), "user_key", "known_hosts", closed)
        .arg("list"));
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("open failed") || err.contains("refused"),
        "{err}"
    );
}

#[test]
fn proxy_command_runs_ssh_with_placeholders() {
    if !tools_present() {
        return;
    }
    let sshd = Sshd::start();
    let server = strict_vanilla();
    let home = home();
    let mut proxy = String::from("ssh -o BatchMode=yes");
    for option in sshd.options("user_key", "known_hosts") {
        proxy.push_str(&format!(" -o '{option}'"));
    }
    proxy.push_str(&format!(
        " -p {} -W %h:%p {}@127.0.0.1",
        sshd.port, sshd.user
    ));
    let out = run(rcon_in(home.path())
        .env("RCON_PASSWORD", PASSWORD)
        .args(["--proxy-command", &proxy])
        .args(["-H", "127.0.0.1", "-P", &server.port().to_string()])
        .args(["-c", "seed", "-c", "chars 5000"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        format!("Seed: [-4172144997902289642]\n{}\n", sample_text(5000))
    );
}

#[test]
fn failing_proxy_command_exits_9_with_its_message() {
    let home = home();
    let out = run(rcon_in(home.path())
        .env("RCON_PASSWORD", PASSWORD)
        .args([
            "--proxy-command",
            "echo \"tunnel to %h port %p refused\" >&2; exit 3",
        ])
        .args(["-H", "mc.invalid", "-P", "25575", "list"]));
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "rcon: error: command 'list': proxy command failed (exit status 3): tunnel to mc.invalid port 25575 refused\n"
    );
}

#[test]
fn bad_ssh_destination_and_placeholder_are_usage_errors() {
    let home = home();
    for args in [
        &["--ssh", "user@", "list"][..],
        &["--ssh", "-oProxyCommand=x", "list"],
        &["--proxy-command", "nc %x", "list"],
    ] {
        let out = run(rcon_in(home.path())
            .env("RCON_PASSWORD", PASSWORD)
            .args(args));
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn practice_server_in_palworld_mode_works_through_a_proxy_command_with_the_dialect() {
    // The tunnel is transparent to the dialect: `cat`-like plumbing via a shell proxy that
    // execs a second rcon practice client would be overkill; bash's /dev/tcp is enough.
    if Command::new("bash").arg("-c").arg("true").status().is_err() {
        eprintln!("SKIPPED: bash not installed");
        return;
    }
    let server = server(Mode::Palworld, Duration::ZERO);
    let home = home();
    let proxy = "exec bash -c 'exec 3<>/dev/tcp/%h/%p; cat <&3 & cat >&3; wait'";
    let out = run(rcon_in(home.path())
        .env("RCON_PASSWORD", PASSWORD)
        .args(["--proxy-command", proxy, "--dialect", "palworld"])
        .args(["-H", "127.0.0.1", "-P", &server.port().to_string()])
        .args(["-c", "echo hi", "-c", "list"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "hi\nThere are 0 of a max of 20 players online: \n"
    );
}

#[test]
fn several_targets_share_one_ssh_host() {
    if !tools_present() {
        return;
    }
    let sshd = Sshd::start();
    let live = strict_vanilla();
    let home = home();
    let mut cmd = rcon_in(home.path());
    cmd.env("RCON_PASSWORD", PASSWORD)
        .args(["--ssh", &sshd.destination()])
        .args(["--target", &format!("live=127.0.0.1:{}", live.port())])
        .args(["--target", &format!("gone=127.0.0.1:{}", free_port())]);
    for option in sshd.options("user_key", "known_hosts") {
        cmd.args(["--ssh-option", &option]);
    }
    let out = run(cmd.arg("seed"));
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    assert_eq!(stdout(&out), "[live] Seed: [-4172144997902289642]\n");
    assert!(
        stderr(&out).contains("1 of 2 servers failed: gone (exit 9)"),
        "{}",
        stderr(&out)
    );
}
