//! Where each setting came from, and the one rule of precedence: flag (or the variable clap
//! reads for it) > other environment variables > the profile's key > the built-in default.

use super::*;

/// Where a setting came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A command-line flag, e.g. `--host`.
    Flag(String),
    /// An environment variable, e.g. `RCON_HOST` (or mcrcon's `MCRCON_HOST`).
    Env(String),
    /// A config profile key: the profile's name and `path:line`.
    Profile { name: String, at: String },
    /// The built-in default.
    Default,
}

impl Source {
    /// Precedence: lower wins.
    pub(super) fn rank(&self) -> u8 {
        match self {
            Source::Flag(_) => 0,
            Source::Env(_) => 1,
            Source::Profile { .. } => 2,
            Source::Default => 3,
        }
    }
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Flag(flag) => write!(f, "flag {flag}"),
            Source::Env(var) => write!(f, "env {var}"),
            Source::Profile { name, at } => write!(f, "profile {name} ({at})"),
            Source::Default => f.write_str("default"),
        }
    }
}

/// A value and where it came from.
#[derive(Debug, Clone)]
pub struct Sourced<T> {
    /// The value.
    pub value: T,
    /// Its origin.
    pub source: Source,
}

impl<T> Sourced<T> {
    pub fn new(value: T, source: Source) -> Self {
        Self { value, source }
    }
}

/// For each argument clap filled, whether it came from the command line or its environment
/// variable (clap applies the `RCON_*` variables named in `args.rs` itself).
#[derive(Debug, Clone, Default)]
pub struct Origins(BTreeMap<String, Source>);

impl Origins {
    /// Reads the value sources out of clap's matches.
    pub fn from_matches(cmd: &Command, matches: &ArgMatches) -> Self {
        let mut map = BTreeMap::new();
        for arg in cmd.get_arguments() {
            let id = arg.get_id().as_str();
            let source = match matches.value_source(id) {
                Some(ValueSource::CommandLine) => Source::Flag(match arg.get_long() {
                    Some(long) => format!("--{long}"),
                    None => id.to_string(),
                }),
                Some(ValueSource::EnvVariable) => {
                    let name = arg.get_env().map(|e| e.to_string_lossy().into_owned());
                    // An empty variable (`RCON_HOST=`) counts as unset.
                    if name
                        .as_ref()
                        .and_then(std::env::var_os)
                        .is_some_and(|v| v.is_empty())
                    {
                        map.insert(id.to_string(), Source::Default);
                        continue;
                    }
                    Source::Env(name.unwrap_or_else(|| id.to_string()))
                }
                _ => continue,
            };
            map.insert(id.to_string(), source);
        }
        Origins(map)
    }

    /// Records where the value of argument `id` came from when clap cannot know: a
    /// personality's translated command line (mcrcon's `-H`, `MCRCON_HOST`, rcon-cli's config
    /// file).
    pub fn set(&mut self, id: &str, source: Source) {
        self.0.insert(id.to_string(), source);
    }

    /// Where the argument `id` came from (`None`: not given; `Default`: an empty variable).
    pub fn get(&self, id: &str) -> Option<&Source> {
        self.0.get(id)
    }

    pub(super) fn is_flag(&self, id: &str) -> bool {
        matches!(self.get(id), Some(Source::Flag(_)))
    }

    /// A value clap filled, with its source (`None` for an empty environment variable).
    pub(super) fn sourced<T: Clone>(&self, value: &Option<T>, id: &str) -> Option<Sourced<T>> {
        if self.get(id) == Some(&Source::Default) {
            return None;
        }
        value.clone().map(|v| Sourced::new(v, self.source_of(id)))
    }

    /// Where the value of argument `id` came from: its flag or the variable clap read for it.
    pub fn source_of(&self, id: &str) -> Source {
        self.get(id)
            .cloned()
            .unwrap_or_else(|| Source::Flag(format!("--{}", id.replace('_', "-"))))
    }
}

/// The layers one setting is looked up in, for every setting of a profile: the flags (with the
/// variables clap reads for them, as [`Origins`] says), the selected profile's keys (their
/// source is the profile and `path:line`), then a default.
pub(super) struct Layers<'a> {
    /// Where each clap value came from.
    pub origins: &'a Origins,
    /// The selected profile, if any.
    pub profile: Option<&'a Profile>,
    /// A profile key's source from its span in the file.
    pub at: &'a dyn Fn(std::ops::Range<usize>) -> Source,
}

/// One setting on its way through the layers: the first layer with a value wins.
pub(super) struct Pick<'l, 'a, T> {
    layers: &'l Layers<'a>,
    found: Option<Sourced<T>>,
}

impl<'a> Layers<'a> {
    /// Starts with the flag `id` (or its clap variable).
    pub fn flag<'l, T: Clone>(&'l self, value: &Option<T>, id: &str) -> Pick<'l, 'a, T> {
        Pick {
            layers: self,
            found: self.origins.sourced(value, id),
        }
    }
}

impl<'a, T> Pick<'_, 'a, T> {
    /// Then a value from another environment variable (mcrcon's, say).
    pub fn or_env(mut self, value: Option<Sourced<T>>) -> Self {
        if self.found.is_none() {
            self.found = value;
        }
        self
    }

    /// Then the profile's key, converted to the setting's type.
    pub fn or_key<K: 'a>(
        mut self,
        key: impl FnOnce(&'a Profile) -> Option<&'a toml::Spanned<K>>,
        convert: impl FnOnce(&K) -> T,
    ) -> Self {
        if self.found.is_none()
            && let Some(s) = self.layers.profile.and_then(key)
        {
            self.found = Some(Sourced::new(
                convert(s.get_ref()),
                (self.layers.at)(s.span()),
            ));
        }
        self
    }

    /// The value if any layer had one.
    pub fn found(self) -> Option<Sourced<T>> {
        self.found
    }

    /// The value, else the built-in default.
    pub fn or_default(self, value: T) -> Sourced<T> {
        self.found
            .unwrap_or_else(|| Sourced::new(value, Source::Default))
    }
}
