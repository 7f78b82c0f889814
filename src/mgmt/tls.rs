//! Which server certificates the management client accepts. Verification is always on: the
//! system's trust store by default (read only when a `wss://` connection is made, so a plain
//! RCON run never pays for it; a compiled-in root list would be touched at every start-up), or a certificate file (a self-signed server
//! certificate, or the CA that signed it), or a pinned SHA-256 fingerprint of the server's
//! certificate. There is deliberately no "accept anything" setting.

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
    /// The system's trust store (rustls-native-certs: the OpenSSL-style files on Linux, the
    /// keychain on macOS, the certificate store on Windows), with the host name checked.
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
                let found = rustls_native_certs::load_native_certs();
                let mut roots = rustls::RootCertStore::empty();
                // Certificates the store holds but rustls cannot use are skipped, as browsers do.
                let (_added, _ignored) = roots.add_parsable_certificates(found.certs);
                if roots.is_empty() {
                    let why = found
                        .errors
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
    fn pem_files() {
        assert!(Trust::from_pem(b"hello", "x").is_err());
        assert!(Trust::from_pem(b"", "x").is_err());
    }
}
