//! The management settings in `--print-config`: URL, TLS, how the certificate is trusted,
//! Origin and where the secret comes from (never the secret), each with its source, in the
//! order `--mgmt` resolves them (src/app/mode/mgmt.rs). Pure text: no TLS code, so a build
//! without the `mgmt` feature shows them too.

use toml::Spanned;

use super::args::Args;
use super::config::Profile;
use super::settings::{Origins, Settings, Source};

/// The rows, or none when nothing about the management protocol is set (no `--mgmt`, no
/// `--mgmt-*` flag, no `mgmt_*` key in the profile).
pub fn rows(
    args: &Args,
    origins: &Origins,
    settings: &Settings,
) -> Vec<(&'static str, String, String)> {
    let prof = profile(settings);
    let key = |f: fn(&Profile) -> &Option<Spanned<String>>| -> Option<(String, Source)> {
        let (name, p, config) = prof?;
        let s = f(p).as_ref()?;
        Some((
            s.get_ref().clone(),
            Source::Profile {
                name: name.to_string(),
                at: config.at(s.span()),
            },
        ))
    };
    let keys = [
        key(|p| &p.mgmt_url).or_else(|| key(|p| &p.mgmt)),
        key(|p| &p.mgmt_cert),
        key(|p| &p.mgmt_fingerprint),
        key(|p| &p.mgmt_origin),
        key(|p| &p.mgmt_secret_file),
        key(|p| &p.mgmt_secret_command),
    ];
    let flags = args.mgmt.is_some()
        || args.mgmt_cert.is_some()
        || args.mgmt_fingerprint.is_some()
        || args.mgmt_origin.is_some()
        || args.mgmt_secret_file.is_some();
    if !flags && keys.iter().all(Option::is_none) {
        return Vec::new();
    }
    let [url, cert, fingerprint, origin, secret_file, secret_command] = keys;
    let mut rows = Vec::new();
    let mut push = |k: &'static str, v: String, s: Option<Source>| {
        rows.push((k, v, s.map(|s| s.to_string()).unwrap_or_default()));
    };

    let url = match args.mgmt.as_deref().filter(|u| !u.is_empty()) {
        Some(u) => Some((u.to_string(), Source::Flag("--mgmt".into()))),
        None => url,
    };
    let unix = url.as_ref().is_some_and(|(u, _)| u.starts_with("unix:"));
    let tls = url.as_ref().map(|(u, _)| !u.starts_with("ws://") && !unix);
    match &url {
        Some((u, s)) => push("mgmt_url", u.clone(), Some(s.clone())),
        None => push(
            "mgmt_url",
            "(not set: --mgmt URL or a profile's mgmt_url)".into(),
            None,
        ),
    }
    push(
        "mgmt_tls",
        match tls {
            Some(true) => "on (wss://)".into(),
            Some(false) if unix => "off (a Unix socket: its file permissions guard it)".into(),
            Some(false) => "off (ws://)".into(),
            None => "(no URL)".into(),
        },
        url.as_ref().map(|(_, s)| s.clone()),
    );

    let base = prof.and_then(|(_, _, c)| c.path.parent().map(|p| p.to_path_buf()));
    let trust = trust(args, origins, cert, fingerprint, base.as_deref());
    match (tls, trust) {
        (Some(false), _) => push("mgmt_trust", "(no TLS)".into(), None),
        (_, Some((v, s))) => push("mgmt_trust", v, Some(s)),
        (_, None) => push(
            "mgmt_trust",
            "the system's trust store".into(),
            Some(Source::Default),
        ),
    }

    let origin = match &args.mgmt_origin {
        Some(o) => Some((o.clone(), origins.source_of("mgmt_origin"))),
        None => origin,
    };
    match origin {
        Some((o, s)) => push("mgmt_origin", o, Some(s)),
        None => push("mgmt_origin", "(none sent)".into(), Some(Source::Default)),
    }

    let (what, source) = secret(args, origins, secret_file, secret_command, base.as_deref());
    push("mgmt_secret", what, source);
    rows
}

/// How the server's certificate is trusted, if a flag or the profile says: a certificate file
/// or a pinned fingerprint, flags first.
fn trust(
    args: &Args,
    origins: &Origins,
    cert: Option<(String, Source)>,
    fingerprint: Option<(String, Source)>,
    base: Option<&std::path::Path>,
) -> Option<(String, Source)> {
    if let Some(path) = &args.mgmt_cert {
        Some((
            format!("certificate file {}", path.display()),
            origins.source_of("mgmt_cert"),
        ))
    } else if let Some(fp) = &args.mgmt_fingerprint {
        Some((
            format!("pinned SHA-256 {fp}"),
            origins.source_of("mgmt_fingerprint"),
        ))
    } else if let Some((path, s)) = cert {
        let path = super::secrets::resolve_path(&path, base);
        Some((format!("certificate file {}", path.display()), s))
    } else {
        fingerprint.map(|(fp, s)| (format!("pinned SHA-256 {fp}"), s))
    }
}

/// Where the secret comes from, shown masked: `RCON_MGMT_SECRET`, then `--mgmt-secret-file`,
/// then the profile's keys.
fn secret(
    args: &Args,
    origins: &Origins,
    secret_file: Option<(String, Source)>,
    secret_command: Option<(String, Source)>,
    base: Option<&std::path::Path>,
) -> (String, Option<Source>) {
    let env_secret = std::env::var("RCON_MGMT_SECRET").is_ok_and(|s| !s.is_empty());
    let file_flag = args
        .mgmt_secret_file
        .as_ref()
        .filter(|f| !f.as_os_str().is_empty());
    if env_secret {
        (
            "********".to_string(),
            Some(Source::Env("RCON_MGMT_SECRET".into())),
        )
    } else if let Some(f) = file_flag {
        (
            format!("******** (from file {})", f.display()),
            Some(origins.source_of("mgmt_secret_file")),
        )
    } else if let Some((f, s)) = secret_file {
        let path = super::secrets::resolve_path(&f, base);
        (format!("******** (from file {})", path.display()), Some(s))
    } else if let Some((_, s)) = secret_command {
        ("******** (from mgmt_secret_command)".to_string(), Some(s))
    } else {
        ("(the password's sources: see password)".to_string(), None)
    }
}

/// The profile this run uses: its name, table and file.
fn profile(settings: &Settings) -> Option<(&str, &Profile, &super::config::ParsedConfig)> {
    let name = settings.profile.as_ref()?;
    let config = settings.config.config()?;
    let p = config.servers.get(&name.value)?;
    Some((name.value.as_str(), p.get_ref(), config))
}
