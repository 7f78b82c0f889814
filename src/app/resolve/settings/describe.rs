//! `--print-config`: each setting with where it came from; secrets masked.

use super::*;

impl Settings {
    /// The `--print-config` text: one line per setting with its source; the password masked;
    /// `extra` rows (key, value, source) at the end in the same columns (the management
    /// settings).
    /// `demo`: for `--demo`, whose in-process practice server has its own address and
    /// password and which never reads or writes the learned store.
    pub fn describe_with(&self, extra: Vec<(&str, String, String)>, demo: bool) -> String {
        let mut rows: Vec<(&str, String, String)> = Vec::new();
        rows.push(("config", self.config.describe(), String::new()));
        match &self.profile {
            Some(p) => rows.push(("server", p.value.clone(), source_text(&p.source))),
            None => rows.push(("server", "(no profile)".into(), String::new())),
        }
        if demo {
            rows.push((
                "host",
                "127.0.0.1 (the built-in practice server, in this process)".into(),
                String::new(),
            ));
            rows.push((
                "port",
                "(a free one, chosen when it starts)".into(),
                String::new(),
            ));
        } else {
            rows.push((
                "host",
                self.host.value.clone(),
                self.host.source.to_string(),
            ));
            rows.push((
                "port",
                self.port.value.to_string(),
                self.port.source.to_string(),
            ));
        }
        let (pw, pw_src) = self.password_row(demo);
        rows.push(("password", pw, pw_src));
        rows.push((
            "timeout",
            format_duration(self.timeout.value),
            self.timeout.source.to_string(),
        ));
        rows.push((
            "sentinel",
            sentinel_name(self.sentinel.value),
            self.sentinel.source.to_string(),
        ));
        rows.push((
            "idle_gap",
            if self.idle_gap.source == Source::Default {
                "adaptive (from round trips and answer times)".to_string()
            } else {
                format_duration(self.idle_gap.value)
            },
            self.idle_gap.source.to_string(),
        ));
        if demo {
            rows.push((
                "learned",
                "(not used: --demo neither reads nor writes the learned store)".into(),
                String::new(),
            ));
        } else if let Ok(route) = self.route() {
            let key = crate::app::learned::key(&route, self.dialect.value.dialect());
            rows.push((
                "learned",
                crate::app::learned::describe(&key),
                String::new(),
            ));
        }
        rows.push((
            "dialect",
            self.dialect.value.dialect().to_string(),
            self.dialect.source.to_string(),
        ));
        if let Some(ssh) = &self.ssh {
            rows.push(("ssh", ssh.value.clone(), ssh.source.to_string()));
        }
        if let Some(proxy) = &self.proxy_command {
            rows.push(("proxy", proxy.value.clone(), proxy.source.to_string()));
        }
        rows.extend(extra);
        columns(rows)
    }

    /// The password's row: how it is given, masked, and where it came from.
    fn password_row(&self, demo: bool) -> (String, String) {
        match &self.password {
            _ if demo => (
                "(not needed: the practice server's own)".to_string(),
                String::new(),
            ),
            None if secrets::can_prompt() => (
                "(not set: will ask on the terminal)".to_string(),
                String::new(),
            ),
            None => (
                "(not set, and no terminal to ask on: a session would fail)".to_string(),
                String::new(),
            ),
            Some(p) => {
                let what = match &p.value {
                    Secret::Value(_) => "********".to_string(),
                    Secret::File(path) => format!("******** (from file {})", path.display()),
                    Secret::Command(_) => "******** (from password_command)".to_string(),
                    Secret::Prompt => "(will ask on the terminal)".to_string(),
                };
                (what, p.source.to_string())
            }
        }
    }
}

/// The rows as aligned columns: key, value and, where there is one, the source.
fn columns(rows: Vec<(&str, String, String)>) -> String {
    let keys = rows.iter().map(|r| r.0.len()).max().unwrap_or(0).max(9);
    let width = rows
        .iter()
        .filter(|r| !r.2.is_empty())
        .map(|r| r.1.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for (key, value, source) in rows {
        if source.is_empty() {
            out.push_str(&format!("{key:<keys$} {value}\n"));
        } else {
            out.push_str(&format!("{key:<keys$} {value:<width$}  {source}\n"));
        }
    }
    out
}

fn source_text(source: &Source) -> String {
    match source {
        Source::Default => format!("default (the '{DEFAULT_PROFILE}' profile applies without -s)"),
        other => other.to_string(),
    }
}

fn sentinel_name(s: SentinelArg) -> String {
    use clap::ValueEnum;
    s.to_possible_value()
        .map(|v| v.get_name().to_string())
        .unwrap_or_default()
}
