//! From argv, the environment and the config file to one resolved plan: a personality's command
//! line translated into rcon's first ([`compat`]), the clap arguments ([`args`]), the settings with their provenance ([`settings`], the config file in [`config`],
//! `--targets` inventories in [`inventory`], the management rows of `--print-config` in
//! [`mgmt_describe`], secrets' sources in [`secrets`], value syntax in
//! [`values`]), and the [`plan::Mode`] that `app::run` matches on ([`plan`]). Nothing outside
//! this folder reads the clap arguments.

pub mod args;
pub mod compat;
pub mod config;
pub mod inventory;
pub mod mgmt_describe;
pub mod modes;
pub mod plan;
pub mod secrets;
pub mod settings;
pub mod ssh_sharing;
pub mod values;
