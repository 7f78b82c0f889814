//! Which server certificates the management client accepts. Verification is always on: the
//! system's trust store by default (read only when a `wss://` connection is made, so a plain
//! RCON run never pays for it; a compiled-in root list would be touched at every start-up), or a certificate file (a self-signed server
//! certificate, or the CA that signed it), or a pinned SHA-256 fingerprint of the server's
//! certificate. There is deliberately no "accept anything" setting.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::DigitallySignedStruct;
use rustls::SignatureScheme;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};

use super::{MgmtError, MgmtResult};

/// How the server's certificate is checked.
#[derive(Debug, Clone)]
pub enum Trust {
    /// The system's trust store, with the host name checked: rustls-native-certs (the
    /// OpenSSL-style files on Linux, the certificate store on Windows); on macOS the system's
    /// PEM bundle `/etc/ssl/cert.pem` (see [`system_roots`]). `SSL_CERT_FILE` and
    /// `SSL_CERT_DIR` replace the store on every platform.
    PublicRoots,
    /// These certificates as roots (a self-signed server certificate is its own root), with the
    /// host name checked.
    Certificates(Vec<CertificateDer<'static>>),
    /// The server's certificate must have this SHA-256 fingerprint (host name not checked: the
    /// pin names the one certificate accepted).
    Pin([u8; 32]),
}

impl Trust {
    /// Reads PEM certificates from `pem` (the contents of a `.pem`/`.crt` file).
    pub fn from_pem(pem: &[u8], what: &str) -> MgmtResult<Trust> {
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(pem)
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| MgmtError::Trust(format!("{what}: not a PEM certificate file: {e}")))?;
        if certs.is_empty() {
            return Err(MgmtError::Trust(format!(
                "{what}: no certificate in it (expected -----BEGIN CERTIFICATE-----)"
            )));
        }
        Ok(Trust::Certificates(certs))
    }

    /// Parses a fingerprint: 64 hex digits, colons allowed (`AB:CD:...`), `sha256:` prefix
    /// allowed.
    pub fn from_fingerprint(text: &str) -> MgmtResult<Trust> {
        let t = text.trim();
        let t = t
            .strip_prefix("sha256:")
            .or_else(|| t.strip_prefix("SHA256:"))
            .unwrap_or(t);
        let hex: String = t.chars().filter(|c| *c != ':').collect();
        let bad = || {
            MgmtError::Trust(format!(
                "fingerprint '{text}' is not a SHA-256 fingerprint (64 hex digits, colons allowed)"
            ))
        };
        if hex.len() != 64 || !hex.is_ascii() {
            return Err(bad());
        }
        let mut out = [0u8; 32];
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
        }
        Ok(Trust::Pin(out))
    }

    /// The rustls client configuration for this trust.
    pub fn client_config(&self) -> MgmtResult<rustls::ClientConfig> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| MgmtError::Trust(e.to_string()))?;
        let config = match self {
            Trust::PublicRoots => {
                let (certs, errors) = system_roots();
                let mut roots = rustls::RootCertStore::empty();
                // Certificates the store holds but rustls cannot use are skipped, as browsers do.
                let (_added, _ignored) = roots.add_parsable_certificates(certs);
                if roots.is_empty() {
                    let why = errors
                        .first()
                        .map(|e| format!(" ({e})"))
                        .unwrap_or_default();
                    return Err(MgmtError::Trust(format!(
                        "the system's trust store has no usable certificate{why}; give --mgmt-cert FILE or --mgmt-fingerprint SHA256"
                    )));
                }
                builder.with_root_certificates(roots).with_no_client_auth()
            }
            Trust::Certificates(certs) => {
                let mut roots = rustls::RootCertStore::empty();
                for c in certs {
                    roots.add(c.clone()).map_err(|e| {
                        MgmtError::Trust(format!("cannot trust the certificate: {e}"))
                    })?;
                }
                builder.with_root_certificates(roots).with_no_client_auth()
            }
            Trust::Pin(want) => builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(Pinned {
                    want: *want,
                    provider,
                }))
                .with_no_client_auth(),
        };
        Ok(config)
    }
}

/// The system's root certificates, and what could not be read of them.
#[cfg(not(target_os = "macos"))]
pub fn system_roots() -> (Vec<CertificateDer<'static>>, Vec<String>) {
    let found = rustls_native_certs::load_native_certs();
    let errors = found.errors.iter().map(ToString::to_string).collect();
    (found.certs, errors)
}

/// The system's root certificates, and what could not be read of them. On macOS: the PEM
/// bundle Apple ships and updates with the system, `/etc/ssl/cert.pem` (what `curl` and
/// LibreSSL there read), or what `SSL_CERT_FILE` / `SSL_CERT_DIR` name. Not the keychain:
/// reading it needs Apple's Security framework, which would make `rcon` link only with
/// the macOS SDK; a certificate added to the keychain is given with `--mgmt-cert` instead.
#[cfg(target_os = "macos")]
pub fn system_roots() -> (Vec<CertificateDer<'static>>, Vec<String>) {
    let var = |name| std::env::var_os(name).filter(|v| !v.is_empty());
    pem_bundles(&bundle_paths(var("SSL_CERT_FILE"), var("SSL_CERT_DIR")))
}

/// The PEM files that make up the store: `SSL_CERT_FILE` and every file in `SSL_CERT_DIR` when
/// either is set, else the system bundle.
#[cfg_attr(not(target_os = "macos"), allow(dead_code))]
fn bundle_paths(file: Option<OsString>, dir: Option<OsString>) -> Vec<PathBuf> {
    if file.is_none() && dir.is_none() {
        return vec![PathBuf::from("/etc/ssl/cert.pem")];
    }
    let mut paths: Vec<PathBuf> = file.into_iter().map(PathBuf::from).collect();
    if let Some(dir) = dir {
        paths.extend(files_in(Path::new(&dir)));
    }
    paths
}

/// The regular files in `dir`, sorted (an OpenSSL hashed directory holds one certificate in
/// each); none when it cannot be read.
#[cfg_attr(not(target_os = "macos"), allow(dead_code))]
fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    files
}

/// Every certificate in these PEM files; a file that cannot be read or parsed is an error
/// naming it, and the others still count.
#[cfg_attr(not(target_os = "macos"), allow(dead_code))]
fn pem_bundles(paths: &[PathBuf]) -> (Vec<CertificateDer<'static>>, Vec<String>) {
    let mut certs = Vec::new();
    let mut errors = Vec::new();
    for path in paths {
        match std::fs::read(path) {
            Ok(bytes) => {
                for cert in CertificateDer::pem_slice_iter(&bytes) {
                    match cert {
                        Ok(cert) => certs.push(cert),
                        Err(e) => {
                            errors.push(format!("{}: {e}", path.display()));
                            break;
                        }
                    }
                }
            }
            Err(e) => errors.push(format!("{}: {e}", path.display())),
        }
    }
    (certs, errors)
}

/// The SHA-256 fingerprint of a DER certificate, as `AB:CD:...`.
pub fn fingerprint(der: &[u8]) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, der);
    digest
        .as_ref()
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// Accepts exactly the certificate with the pinned fingerprint, and still checks that the
/// server holds its key (the handshake signatures).
#[derive(Debug)]
struct Pinned {
    want: [u8; 32],
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Pinned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        let got = ring::digest::digest(&ring::digest::SHA256, end_entity.as_ref());
        if got.as_ref() == self.want {
            Ok(ServerCertVerified::assertion())
        } else {
            Err(rustls::Error::General(format!(
                "the server's certificate has fingerprint {}, not the pinned one",
                fingerprint(end_entity.as_ref())
            )))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints() {
        let hex = "ab".repeat(32);
        assert!(matches!(Trust::from_fingerprint(&hex), Ok(Trust::Pin(p)) if p == [0xab; 32]));
        let colons = vec!["AB"; 32].join(":");
        assert!(matches!(
            Trust::from_fingerprint(&format!("sha256:{colons}")),
            Ok(Trust::Pin(_))
        ));
        for bad in ["", "abcd", &"zz".repeat(32), &"ab".repeat(33)] {
            assert!(Trust::from_fingerprint(bad).is_err(), "{bad}");
        }
        assert_eq!(fingerprint(b"").len(), 95);
    }

    #[test]
    fn pem_bundles_read_every_certificate_and_name_the_files_they_cannot() {
        let dir = tempfile::tempdir().unwrap();
        let key = rcgen::KeyPair::generate().unwrap();
        let pem = |name: &str| {
            rcgen::CertificateParams::new(vec![name.to_string()])
                .unwrap()
                .self_signed(&key)
                .unwrap()
                .pem()
        };
        // A bundle of two, a hashed-directory style file of one, a file that is not PEM.
        std::fs::write(dir.path().join("bundle.pem"), pem("a") + &pem("b")).unwrap();
        std::fs::write(dir.path().join("5ad8a5d6.0"), pem("c")).unwrap();
        std::fs::write(
            dir.path().join("junk.pem"),
            "-----BEGIN CERTIFICATE-----\n!!\n",
        )
        .unwrap();
        std::fs::create_dir(dir.path().join("subdir")).unwrap();
        let files = files_in(dir.path());
        assert_eq!(files.len(), 3, "{files:?}");
        let missing = dir.path().join("missing.pem");
        let (certs, errors) = pem_bundles(&[files, vec![missing]].concat());
        assert_eq!(certs.len(), 3);
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(errors[0].contains("junk.pem"), "{errors:?}");
        assert!(errors[1].contains("missing.pem"), "{errors:?}");
    }

    #[test]
    fn the_store_is_the_system_bundle_unless_ssl_cert_file_or_dir_names_one() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("b.pem"), "").unwrap();
        std::fs::write(dir.path().join("a.pem"), "").unwrap();
        let system = [PathBuf::from("/etc/ssl/cert.pem")];
        assert_eq!(bundle_paths(None, None), system);
        let file = OsString::from("/x/ca.pem");
        assert_eq!(
            bundle_paths(Some(file.clone()), None),
            [PathBuf::from("/x/ca.pem")]
        );
        let d = Some(dir.path().as_os_str().to_owned());
        let in_dir = [dir.path().join("a.pem"), dir.path().join("b.pem")];
        assert_eq!(bundle_paths(None, d.clone()), in_dir);
        let mut both = vec![PathBuf::from("/x/ca.pem")];
        both.extend(in_dir);
        assert_eq!(bundle_paths(Some(file), d), both);
        // A directory that cannot be read adds nothing; the system bundle is not read then.
        assert!(bundle_paths(None, Some("/no/such/dir".into())).is_empty());
    }

    #[test]
    fn pem_files() {
        assert!(Trust::from_pem(b"hello", "x").is_err());
        assert!(Trust::from_pem(b"", "x").is_err());
    }
}
