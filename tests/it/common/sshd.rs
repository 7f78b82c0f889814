//! A private OpenSSH `sshd` on a free loopback port with generated host and user keys, for
//! the `--ssh` tests. Unix only.

use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::{PASSWORD, rcon_in};

/// Where Debian installs the OpenSSH server.
pub const SSHD: &str = "/usr/sbin/sshd";

/// A private sshd on a free loopback port, killed on drop.
pub struct Sshd {
    child: Child,
    /// The port it listens on (127.0.0.1).
    pub port: u16,
    dir: tempfile::TempDir,
    /// The user the tests log in as (the current one).
    pub user: String,
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether sshd, ssh and ssh-keygen are installed (a loud skip otherwise; a failure under CI).
pub fn tools_present() -> bool {
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
        super::skip(&format!(
            "{SSHD}, ssh or ssh-keygen not installed (apt-get install openssh-server openssh-client)"
        ));
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

/// A port nothing listens on right now, for sshd to bind (it cannot be handed a socket).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

impl Sshd {
    /// A started sshd, or `None` (after a loud note; a failure under CI) when OpenSSH is not
    /// installed.
    pub fn start_if_installed() -> Option<Sshd> {
        tools_present().then(Sshd::start)
    }

    pub fn start() -> Sshd {
        Sshd::start_with("")
    }

    /// [`Sshd::start_if_installed`] with more sshd_config lines (`SetEnv ...` for `--remote`).
    pub fn start_with_if_installed(extra: &str) -> Option<Sshd> {
        tools_present().then(|| Sshd::start_with(extra))
    }

    /// A started sshd whose config ends with `extra`.
    pub fn start_with(extra: &str) -> Sshd {
        let dir = tempfile::tempdir().expect("temp dir");
        let p = |name: &str| dir.path().join(name);
        keygen(&p("host_key"));
        keygen(&p("user_key"));
        keygen(&p("wrong_key"));
        fs::copy(p("user_key.pub"), p("authorized_keys")).expect("authorized_keys");
        // sshd running as root needs its privilege separation directory.
        let _ = fs::create_dir_all("/run/sshd");
        let host_pub = fs::read_to_string(p("host_key.pub")).expect("host key");
        fs::write(p("empty_known_hosts"), "").expect("empty known_hosts");
        // sshd binds its port itself, so a port found free may be taken by a test running
        // beside before sshd binds it: sshd then says it cannot bind and exits, and another
        // port is tried. Nothing else is tried again.
        let mut tries = 0;
        let (child, port) = loop {
            tries += 1;
            let port = free_port();
            fs::write(
                p("known_hosts"),
                format!("[127.0.0.1]:{port} {}", host_pub.trim()),
            )
            .expect("known_hosts");
            let config = format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {host}\nPidFile {pid}\n\
                 AuthorizedKeysFile {keys}\nStrictModes no\nUsePAM no\nPubkeyAuthentication yes\n\
                 PasswordAuthentication no\nKbdInteractiveAuthentication no\nAllowTcpForwarding yes\n\
                 PermitRootLogin yes\nPermitTTY no\nX11Forwarding no\nLogLevel VERBOSE\n{extra}",
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
            // Up once it says it listens (a connect could reach another test's listener).
            let listening = format!("Server listening on 127.0.0.1 port {port}.");
            let until = Instant::now() + Duration::from_secs(15);
            let up = loop {
                let log = fs::read_to_string(p("sshd.log")).unwrap_or_default();
                if log.contains(&listening) {
                    break true;
                }
                if let Ok(Some(status)) = child.try_wait() {
                    let log = fs::read_to_string(p("sshd.log")).unwrap_or_default();
                    if log.contains("Address already in use") && tries < 5 {
                        break false;
                    }
                    panic!("sshd exited with {status}: {log}");
                }
                assert!(
                    Instant::now() < until,
                    "sshd did not listen on {port}: {log}"
                );
                std::thread::sleep(Duration::from_millis(20));
            };
            if up {
                break (child, port);
            }
        };
        Sshd {
            child,
            port,
            dir,
            user: current_user(),
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn destination(&self) -> String {
        format!("{}@127.0.0.1:{}", self.user, self.port)
    }

    /// ssh options with the given key and known_hosts file.
    pub fn options(&self, key: &str, known_hosts: &str) -> Vec<String> {
        vec![
            format!("IdentityFile={}", self.path(key).display()),
            "IdentitiesOnly=yes".into(),
            format!("UserKnownHostsFile={}", self.path(known_hosts).display()),
            "GlobalKnownHostsFile=/dev/null".into(),
            "StrictHostKeyChecking=yes".into(),
        ]
    }

    /// `rcon --ssh ...` to the RCON server on `rcon_port` (as seen from the sshd side).
    pub fn rcon(&self, home: &Path, key: &str, known_hosts: &str, rcon_port: u16) -> Command {
        let mut cmd = self.rcon_through(home, key, known_hosts);
        cmd.args(["-H", "127.0.0.1", "-P", &rcon_port.to_string()]);
        cmd
    }

    /// `rcon --ssh ...` through this sshd, the servers still to name (`--target`s).
    pub fn rcon_through(&self, home: &Path, key: &str, known_hosts: &str) -> Command {
        let mut cmd = rcon_in(home);
        cmd.env("RCON_PASSWORD", PASSWORD)
            .args(["--ssh", &self.destination()]);
        for option in self.options(key, known_hosts) {
            cmd.args(["--ssh-option", &option]);
        }
        cmd
    }

    pub fn log(&self) -> String {
        fs::read_to_string(self.path("sshd.log")).unwrap_or_default()
    }
}
