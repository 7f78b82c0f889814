//! Where the commands and events come from: files and stdin read through the mcfunction rules
//! ([`files`]), the schedule of `--countdown`, `--every` and
//! `--if` ([`schedule`]), and `--follow`'s events, polled or pushed ([`follow`]). The `-c`
//! words are the plan's (`resolve::plan`); a runner ([`super::runner`]) sends them all.

pub mod files;
pub mod follow;
pub mod schedule;
