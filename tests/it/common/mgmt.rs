//! Helpers for the management-protocol tests: a self-signed certificate generated per test
//! (never a committed key), the practice management server over TLS, and `rcon --mgmt`
//! pointed at it with verification on and the certificate trusted by file.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;

use rconsole::mgmt::practice::{MgmtPracticeConfig, MgmtPracticeServer, MgmtVersion};

/// A 40-character secret like the real server's.
pub const SECRET: &str = "Zq3Tn8Wk2Lp5Rx7Vb9Hc4Jd6Mf1Gs0Ya2Ue4Io8";

/// A generated certificate and key for 127.0.0.1 and localhost.
pub struct Tls {
    /// Holds the files.
    pub dir: tempfile::TempDir,
    /// The certificate, PEM.
    pub cert: PathBuf,
    /// The certificate's SHA-256 fingerprint, `AB:CD:...`.
    pub fingerprint: String,
    cert_pem: String,
    key_pem: String,
}

/// Generates a fresh self-signed certificate.
pub fn tls() -> Tls {
    let ck = rcgen::generate_simple_self_signed(vec!["127.0.0.1".into(), "localhost".into()])
        .expect("generate a certificate");
    let dir = tempfile::tempdir().expect("temp dir");
    let cert = dir.path().join("server.pem");
    let cert_pem = ck.cert.pem();
    std::fs::write(&cert, &cert_pem).unwrap();
    Tls {
        fingerprint: rconsole::mgmt::tls::fingerprint(ck.cert.der()),
        cert,
        cert_pem,
        key_pem: ck.signing_key.serialize_pem(),
        dir,
    }
}

/// Starts the practice management server on `bind` (port 0: a free one) with TLS, playing
/// the newest vanilla schema; `allowed_origins` are the browser Origins it admits.
pub fn start(
    bind: SocketAddr,
    tls: &Tls,
    allowed_origins: Option<Vec<String>>,
) -> MgmtPracticeServer {
    start_with(MgmtPracticeConfig {
        bind,
        allowed_origins: allowed_origins.unwrap_or_default(),
        ..config(tls)
    })
}

/// The practice server's settings for this certificate and [`SECRET`], on a free port.
pub fn config(tls: &Tls) -> MgmtPracticeConfig {
    MgmtPracticeConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        secret: SECRET.into(),
        tls: Some((
            tls.cert_pem.clone().into_bytes(),
            tls.key_pem.clone().into_bytes(),
        )),
        ..MgmtPracticeConfig::default()
    }
}

/// Starts one with these settings.
pub fn start_with(config: MgmtPracticeConfig) -> MgmtPracticeServer {
    MgmtPracticeServer::start(config).expect("start the practice management server")
}

/// Starts one on a free loopback port.
pub fn server(tls: &Tls) -> MgmtPracticeServer {
    start("127.0.0.1:0".parse().unwrap(), tls, None)
}

/// Starts one on a free loopback port playing `version`'s schema.
pub fn server_of(tls: &Tls, version: MgmtVersion) -> MgmtPracticeServer {
    start_with(MgmtPracticeConfig {
        version,
        ..config(tls)
    })
}

/// Its URL.
pub fn url(server: &MgmtPracticeServer) -> String {
    format!("wss://127.0.0.1:{}", server.port())
}

/// `rcon --mgmt URL --mgmt-cert CERT` with the secret in RCON_MGMT_SECRET.
pub fn rcon(server: &MgmtPracticeServer, tls: &Tls, home: &Path) -> Command {
    let mut cmd = crate::common::rcon_in(home);
    cmd.args(["--mgmt", &url(server), "--mgmt-cert"])
        .arg(&tls.cert)
        .env("RCON_MGMT_SECRET", SECRET);
    cmd
}

/// The arguments of `rcon --mgmt URL --mgmt-cert CERT --mgmt-secret-file FILE` for a terminal
/// test (a PTY child gets no RCON_MGMT_SECRET of its own): the secret is written to `home`.
pub fn pty_args(server: &MgmtPracticeServer, tls: &Tls, home: &Path) -> Vec<String> {
    let secret = home.join("secret");
    std::fs::write(&secret, SECRET).unwrap();
    vec![
        "--mgmt".into(),
        url(server),
        "--mgmt-cert".into(),
        tls.cert.display().to_string(),
        "--mgmt-secret-file".into(),
        secret.display().to_string(),
    ]
}

/// The venv python of tests/peers-mgmt, or `None` (with a loud note) when it is not
/// installed; under `RCONSOLE_STRICT=1` that is a failure.
pub fn peer_python() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers-mgmt");
    // The venv layout of the OS running the tests (a Linux venv is "not installed" for the
    // Windows build under Wine); a missing peer fails only under RCONSOLE_STRICT=1.
    let py = super::venv_python(&dir);
    if py.exists() {
        return Some(py);
    }
    super::skip("the management peer is not installed (run tests/peers-mgmt/install.sh)");
    None
}

/// The peer client script.
pub fn peer_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers-mgmt/mgmt_client.py")
}
