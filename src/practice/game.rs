//! The practice server's game: what vanilla's server commands change (who is online, the
//! whitelist, operators, bans, time, weather, game rules, difficulty, autosave) and what each
//! answers over RCON, in vanilla 1.21's en_us wording. A command's feedback messages are
//! returned one by one; the server joins them with nothing in between, as vanilla's RCON
//! source does (MC-7569). Commands that need blocks and entities (`give`, `fill`, ...) are not
//! played here. Players are names only: a selector (`@a`, `@p`, ...) picks among those online
//! and its `[...]` filters are not read; the console is no entity, so `@s` picks nobody.

use std::net::IpAddr;

/// Vanilla's message for an unknown or incomplete command (`command.unknown.command`).
pub(super) const UNKNOWN: &str = "Unknown or incomplete command, see below for error";
/// Vanilla's message for a word no usage accepts (`command.unknown.argument`).
const INCORRECT: &str = "Incorrect argument for command";
const NO_PLAYER: &str = "No player was found";
const NO_ENTITY: &str = "No entity was found";

/// Vanilla's parse error: the message, then (no separator, MC-7569) at most ten characters of
/// the input before the cursor (after `...` when there are more), the rest of the input, and
/// `<--[HERE]`. `cursor` is a byte offset in `input`, on a character boundary.
pub(super) fn parse_error(message: &str, input: &str, cursor: usize) -> String {
    let (before, after) = input.split_at(cursor.min(input.len()));
    let chars: Vec<char> = before.chars().collect();
    let dots = if chars.len() > 10 { "..." } else { "" };
    let tail: String = chars[chars.len().saturating_sub(10)..].iter().collect();
    format!("{message}{dots}{tail}{after}<--[HERE]")
}

/// The game rules of `help`'s `/gamerule` usage with their defaults (booleans and integers).
const RULES: [(&str, &str); 46] = [
    ("announceAdvancements", "true"),
    ("blockExplosionDropDecay", "true"),
    ("commandBlockOutput", "true"),
    ("commandModificationBlockLimit", "32768"),
    ("disableElytraMovementCheck", "false"),
    ("disableRaids", "false"),
    ("doDaylightCycle", "true"),
    ("doEntityDrops", "true"),
    ("doFireTick", "true"),
    ("doImmediateRespawn", "false"),
    ("doInsomnia", "true"),
    ("doLimitedCrafting", "false"),
    ("doMobLoot", "true"),
    ("doMobSpawning", "true"),
    ("doPatrolSpawning", "true"),
    ("doTileDrops", "true"),
    ("doTraderSpawning", "true"),
    ("doVinesSpread", "true"),
    ("doWardenSpawning", "true"),
    ("doWeatherCycle", "true"),
    ("drowningDamage", "true"),
    ("enderPearlsVanishOnDeath", "true"),
    ("fallDamage", "true"),
    ("fireDamage", "true"),
    ("forgiveDeadPlayers", "true"),
    ("freezeDamage", "true"),
    ("globalSoundEvents", "true"),
    ("keepInventory", "false"),
    ("lavaSourceConversion", "false"),
    ("logAdminCommands", "true"),
    ("maxCommandChainLength", "65536"),
    ("maxEntityCramming", "24"),
    ("mobExplosionDropDecay", "true"),
    ("mobGriefing", "true"),
    ("naturalRegeneration", "true"),
    ("playersSleepingPercentage", "100"),
    ("randomTickSpeed", "3"),
    ("reducedDebugInfo", "false"),
    ("sendCommandFeedback", "true"),
    ("showDeathMessages", "true"),
    ("snowAccumulationHeight", "1"),
    ("spawnRadius", "10"),
    ("spectatorsGenerateChunks", "true"),
    ("tntExplosionDropDecay", "false"),
    ("universalAnger", "false"),
    ("waterSourceConversion", "true"),
];

const DIFFICULTIES: [&str; 4] = ["peaceful", "easy", "normal", "hard"];

/// The state the server commands read and change.
#[derive(Debug)]
pub(super) struct Game {
    /// Who is online, in the order they joined.
    pub(super) online: Vec<String>,
    whitelist: Vec<String>,
    whitelist_on: bool,
    ops: Vec<String>,
    /// Banned names and IPs, each with its reason.
    bans: Vec<(String, String)>,
    ip_bans: Vec<(String, String)>,
    day_time: i64,
    game_time: i64,
    rules: Vec<(&'static str, String)>,
    difficulty: &'static str,
    autosave: bool,
}

impl Default for Game {
    fn default() -> Self {
        Game {
            online: Vec::new(),
            whitelist: Vec::new(),
            whitelist_on: false,
            ops: Vec::new(),
            bans: Vec::new(),
            ip_bans: Vec::new(),
            day_time: 0,
            game_time: 0,
            rules: RULES.iter().map(|(n, v)| (*n, v.to_string())).collect(),
            difficulty: "easy",
            autosave: true,
        }
    }
}

/// A command line split into words, each with its byte offset.
struct Line<'a> {
    input: &'a str,
    words: Vec<(usize, &'a str)>,
}

impl<'a> Line<'a> {
    fn new(input: &'a str) -> Self {
        let mut words = Vec::new();
        let mut start = None;
        for (i, c) in input.char_indices().chain([(input.len(), ' ')]) {
            match (c == ' ', start) {
                (true, Some(s)) => {
                    words.push((s, &input[s..i]));
                    start = None;
                }
                (false, None) => start = Some(i),
                _ => {}
            }
        }
        Line { input, words }
    }

    fn word(&self, i: usize) -> Option<&'a str> {
        self.words.get(i).map(|(_, w)| *w)
    }

    /// The text from word `i` to the end (a message or a reason).
    fn rest(&self, i: usize) -> Option<&'a str> {
        self.words.get(i).map(|(at, _)| &self.input[*at..])
    }

    /// The command ends before a required argument.
    fn incomplete(&self) -> Vec<String> {
        vec![parse_error(UNKNOWN, self.input, self.input.len())]
    }

    /// No usage accepts word `i`.
    fn incorrect(&self, i: usize) -> Vec<String> {
        let at = self.words.get(i).map_or(self.input.len(), |(at, _)| *at);
        vec![parse_error(INCORRECT, self.input, at)]
    }

    /// A value word `i` refused with brigadier's message, the cursor `at` bytes into the word.
    fn refused(&self, i: usize, (message, at): ReadError) -> Vec<String> {
        let start = self.words.get(i).map_or(self.input.len(), |(s, _)| *s);
        vec![parse_error(&message, self.input, start + at)]
    }

    /// Word `i`, or the command's answer when it is missing; more words after it are
    /// refused unless `more` allows them.
    fn last(&self, i: usize) -> Result<&'a str, Vec<String>> {
        match self.word(i) {
            None => Err(self.incomplete()),
            Some(_) if self.words.len() > i + 1 => Err(self.incorrect(i + 1)),
            Some(w) => Ok(w),
        }
    }
}

fn one(text: impl Into<String>) -> Vec<String> {
    vec![text.into()]
}

fn position(list: &[String], name: &str) -> Option<usize> {
    list.iter().position(|n| n.eq_ignore_ascii_case(name))
}

impl Game {
    /// The answer to `input`, or `None` for a command this game does not play.
    pub(super) fn answer(&mut self, input: &str) -> Option<Vec<String>> {
        let line = Line::new(input);
        let out = match line.word(0)? {
            "list" => self.list(&line),
            "save-all" => match line.word(1) {
                None | Some("flush") if line.words.len() <= 2 => vec![
                    "Saving the game (this may take a moment!)".to_string(),
                    "Saved the game".to_string(),
                ],
                Some("flush") => line.incorrect(2),
                _ => line.incorrect(1),
            },
            "save-on" | "save-off" => self.autosave(&line),
            "whitelist" => self.whitelist(&line),
            "op" | "deop" => self.op(&line),
            "ban" | "pardon" => self.ban(&line),
            "ban-ip" | "pardon-ip" => self.ban_ip(&line),
            "banlist" => self.banlist(&line),
            "kick" => self.kick(&line),
            "msg" | "tell" | "w" => self.tell(&line),
            "me" | "say" if line.word(1).is_none() => line.incomplete(),
            // Broadcast to the players and the log, nothing to the RCON client.
            "me" | "say" => Vec::new(),
            "time" => self.time(&line),
            "weather" => weather(&line),
            "gamerule" => self.gamerule(&line),
            "difficulty" => self.difficulty(&line),
            "setidletimeout" => match line.last(1).map(|w| int_value(w, 0)) {
                Ok(Ok(n)) => one(format!("The player idle timeout is now {n} minute(s)")),
                Ok(Err(refusal)) => line.refused(1, refusal),
                Err(answer) => answer,
            },
            "tp" | "teleport" => self.teleport(&line),
            _ => return None,
        };
        Some(out)
    }

    /// Who a target names among the players online.
    fn select(&self, word: &str) -> Vec<String> {
        match word.split('[').next().unwrap_or(word) {
            "@a" | "@e" => self.online.clone(),
            "@p" | "@r" | "@n" => self.online.first().cloned().into_iter().collect(),
            "@s" => Vec::new(),
            name => self
                .online
                .iter()
                .filter(|p| p.eq_ignore_ascii_case(name))
                .cloned()
                .collect(),
        }
    }

    /// The players a game-profile argument names: anyone by name, online or not; a
    /// selector's players; an error when a selector picks nobody.
    fn profiles(&self, word: &str) -> Result<Vec<String>, Vec<String>> {
        if !word.starts_with('@') {
            return Ok(vec![word.to_string()]);
        }
        let found = self.select(word);
        if found.is_empty() {
            Err(one(NO_PLAYER))
        } else {
            Ok(found)
        }
    }

    /// `list`, and `list uuids` with each player's offline-mode UUID.
    fn list(&self, line: &Line) -> Vec<String> {
        let names: Vec<String> = match line.word(1) {
            None => self.online.clone(),
            Some("uuids") if line.words.len() > 2 => return line.incorrect(2),
            Some("uuids") => self
                .online
                .iter()
                .map(|p| format!("{p} ({})", offline_uuid(p)))
                .collect(),
            Some(_) => return line.incorrect(1),
        };
        one(format!(
            "There are {} of a max of 20 players online: {}",
            names.len(),
            names.join(", ")
        ))
    }

    fn autosave(&mut self, line: &Line) -> Vec<String> {
        if line.words.len() > 1 {
            return line.incorrect(1);
        }
        let on = line.word(0) == Some("save-on");
        match (on, self.autosave == on) {
            (true, true) => one("Saving is already turned on"),
            (false, true) => one("Saving is already turned off"),
            (true, false) => {
                self.autosave = true;
                one("Automatic saving is now enabled")
            }
            (false, false) => {
                self.autosave = false;
                one("Automatic saving is now disabled")
            }
        }
    }

    fn whitelist(&mut self, line: &Line) -> Vec<String> {
        let sub = line.word(1);
        if matches!(sub, Some("on" | "off" | "list" | "reload")) && line.words.len() > 2 {
            return line.incorrect(2);
        }
        match sub {
            None => line.incomplete(),
            Some("on") if self.whitelist_on => one("Whitelist is already turned on"),
            Some("on") => {
                self.whitelist_on = true;
                one("Whitelist is now turned on")
            }
            Some("off") if !self.whitelist_on => one("Whitelist is already turned off"),
            Some("off") => {
                self.whitelist_on = false;
                one("Whitelist is now turned off")
            }
            Some("list") if self.whitelist.is_empty() => one("There are no whitelisted players"),
            Some("list") => one(format!(
                "There are {} whitelisted player(s): {}",
                self.whitelist.len(),
                self.whitelist.join(", ")
            )),
            Some("reload") => one("Reloaded the whitelist"),
            Some(add @ ("add" | "remove")) => {
                let add = add == "add";
                let names = match line.last(2).and_then(|w| self.profiles(w)) {
                    Ok(names) => names,
                    Err(answer) => return answer,
                };
                let (done, failed) = if add {
                    ("Added {} to the whitelist", "Player is already whitelisted")
                } else {
                    ("Removed {} from the whitelist", "Player is not whitelisted")
                };
                toggle(&mut self.whitelist, &names, add, done, failed)
            }
            Some(_) => line.incorrect(1),
        }
    }

    fn op(&mut self, line: &Line) -> Vec<String> {
        let names = match line.last(1).and_then(|w| self.profiles(w)) {
            Ok(names) => names,
            Err(answer) => return answer,
        };
        if line.word(0) == Some("op") {
            let failed = "Nothing changed. The player already is an operator";
            toggle(
                &mut self.ops,
                &names,
                true,
                "Made {} a server operator",
                failed,
            )
        } else {
            let (done, failed) = (
                "Made {} no longer a server operator",
                "Nothing changed. The player is not an operator",
            );
            toggle(&mut self.ops, &names, false, done, failed)
        }
    }

    fn ban(&mut self, line: &Line) -> Vec<String> {
        let pardon = line.word(0) == Some("pardon");
        let names = match line.word(1).map(|w| self.profiles(w)) {
            None => return line.incomplete(),
            Some(Err(answer)) => return answer,
            Some(Ok(_)) if pardon && line.words.len() > 2 => return line.incorrect(2),
            Some(Ok(names)) => names,
        };
        let mut out = Vec::new();
        for name in names {
            let known = self
                .bans
                .iter()
                .position(|(n, _)| n.eq_ignore_ascii_case(&name));
            match (pardon, known) {
                (false, None) => {
                    let reason = line.rest(2).unwrap_or("Banned by an operator.").to_string();
                    out.push(format!("Banned {name}: {reason}"));
                    self.online.retain(|p| !p.eq_ignore_ascii_case(&name));
                    self.bans.push((name, reason));
                }
                (true, Some(i)) => {
                    self.bans.remove(i);
                    out.push(format!("Unbanned {name}"));
                }
                _ => {}
            }
        }
        match (out.is_empty(), pardon) {
            (true, false) => one("Nothing changed. The player is already banned"),
            (true, true) => one("Nothing changed. The player isn't banned"),
            _ => out,
        }
    }

    fn ban_ip(&mut self, line: &Line) -> Vec<String> {
        let pardon = line.word(0) == Some("pardon-ip");
        let ip = match line.word(1) {
            None => return line.incomplete(),
            Some(_) if pardon && line.words.len() > 2 => return line.incorrect(2),
            Some(w) => w,
        };
        if ip.parse::<IpAddr>().is_err() {
            return one(if pardon {
                "Invalid IP address"
            } else {
                "Invalid IP address or unknown player"
            });
        }
        let known = self.ip_bans.iter().position(|(i, _)| i == ip);
        match (pardon, known) {
            (false, Some(_)) => one("Nothing changed. That IP is already banned"),
            (false, None) => {
                let reason = line.rest(2).unwrap_or("Banned by an operator.");
                self.ip_bans.push((ip.to_string(), reason.to_string()));
                one(format!("Banned IP {ip}: {reason}"))
            }
            (true, None) => one("Nothing changed. That IP isn't banned"),
            (true, Some(i)) => {
                self.ip_bans.remove(i);
                one(format!("Unbanned IP {ip}"))
            }
        }
    }

    fn banlist(&self, line: &Line) -> Vec<String> {
        let entries: Vec<&(String, String)> = match line.word(1) {
            None => self.bans.iter().chain(&self.ip_bans).collect(),
            Some("players" | "ips") if line.words.len() > 2 => return line.incorrect(2),
            Some("players") => self.bans.iter().collect(),
            Some("ips") => self.ip_bans.iter().collect(),
            Some(_) => return line.incorrect(1),
        };
        if entries.is_empty() {
            return one("There are no bans");
        }
        let mut out = vec![format!("There are {} ban(s):", entries.len())];
        // The console that banned them is named `Rcon` (its text name).
        out.extend(
            entries
                .iter()
                .map(|(who, reason)| format!("{who} was banned by Rcon: {reason}")),
        );
        out
    }

    fn kick(&mut self, line: &Line) -> Vec<String> {
        let Some(target) = line.word(1) else {
            return line.incomplete();
        };
        let players = self.select(target);
        if players.is_empty() {
            return one(NO_PLAYER);
        }
        let reason = line.rest(2).unwrap_or("Kicked by an operator");
        self.online.retain(|p| !players.contains(p));
        players
            .iter()
            .map(|p| format!("Kicked {p}: {reason}"))
            .collect()
    }

    fn tell(&self, line: &Line) -> Vec<String> {
        let (Some(target), Some(message)) = (line.word(1), line.rest(2)) else {
            return line.incomplete();
        };
        let players = self.select(target);
        if players.is_empty() {
            return one(NO_PLAYER);
        }
        players
            .iter()
            .map(|p| format!("You whisper to {p}: {message}"))
            .collect()
    }

    fn time(&mut self, line: &Line) -> Vec<String> {
        let sub = match line.word(1) {
            None => return line.incomplete(),
            Some(sub @ ("query" | "set" | "add")) => sub,
            Some(_) => return line.incorrect(1),
        };
        let value = match line.last(2) {
            Ok(value) => value,
            Err(answer) => return answer,
        };
        match (sub, value) {
            ("query", "daytime") => one(format!("The time is {}", self.day_time % 24000)),
            ("query", "gametime") => one(format!("The time is {}", self.game_time)),
            ("query", "day") => one(format!("The time is {}", self.day_time / 24000)),
            ("set", word) => {
                let named = match word {
                    "day" => Ok(1000),
                    "noon" => Ok(6000),
                    "night" => Ok(13000),
                    "midnight" => Ok(18000),
                    _ => ticks(word, 0),
                };
                let t = match named {
                    Ok(t) => t,
                    Err(refusal) => return line.refused(2, refusal),
                };
                self.day_time = t;
                one(format!("Set the time to {t}"))
            }
            ("add", word) => {
                let t = match ticks(word, 0) {
                    Ok(t) => t,
                    Err(refusal) => return line.refused(2, refusal),
                };
                self.day_time += t;
                one(format!("Set the time to {}", self.day_time % 24000))
            }
            _ => line.incorrect(2),
        }
    }

    fn gamerule(&mut self, line: &Line) -> Vec<String> {
        let Some(name) = line.word(1) else {
            return line.incomplete();
        };
        let Some(rule) = self.rules.iter_mut().find(|(n, _)| *n == name) else {
            return line.incorrect(1);
        };
        let Some(value) = line.word(2) else {
            return one(format!("Gamerule {name} is currently set to: {}", rule.1));
        };
        let read = if matches!(rule.1.as_str(), "true" | "false") {
            bool_value(value).map(|b| b.to_string())
        } else {
            int_value(value, i32::MIN).map(|n| n.to_string())
        };
        let value = match read {
            Ok(_) if line.words.len() > 3 => return line.incorrect(3),
            Ok(value) => value,
            Err(refusal) => return line.refused(2, refusal),
        };
        rule.1 = value.clone();
        one(format!("Gamerule {name} is now set to: {value}"))
    }

    fn difficulty(&mut self, line: &Line) -> Vec<String> {
        let title = |d: &str| format!("{}{}", d[..1].to_uppercase(), &d[1..]);
        let Some(word) = line.word(1) else {
            return one(format!("The difficulty is {}", title(self.difficulty)));
        };
        let Some(new) = DIFFICULTIES.into_iter().find(|d| *d == word) else {
            return line.incorrect(1);
        };
        if line.words.len() > 2 {
            return line.incorrect(2);
        }
        if new == self.difficulty {
            return one(format!(
                "The difficulty did not change; it is already set to {new}"
            ));
        }
        self.difficulty = new;
        one(format!("The difficulty has been set to {}", title(new)))
    }

    /// `tp <targets> <x> <y> <z>` and `tp <targets> <destination>`; the console itself cannot
    /// be teleported.
    fn teleport(&self, line: &Line) -> Vec<String> {
        let targets = match line.words.len() {
            1 => return line.incomplete(),
            // `tp <destination>` and `tp <x> <y> <z>` move the one who runs it.
            2 | 4 => return one("An entity is required to run this command here"),
            3 | 5 => self.select(line.word(1).unwrap_or_default()),
            _ => return line.incorrect(5),
        };
        let to = if line.words.len() == 3 {
            match self.select(line.word(2).unwrap_or_default()).first() {
                Some(d) => d.clone(),
                None => return one(NO_ENTITY),
            }
        } else {
            let mut coords = Vec::new();
            for (i, centred) in [(2, true), (3, false), (4, true)] {
                match coordinate(line.word(i).unwrap_or_default(), centred) {
                    Some(c) => coords.push(format!("{c:.6}")),
                    None => return line.incorrect(i),
                }
            }
            coords.join(", ")
        };
        match targets.as_slice() {
            [] => one(NO_ENTITY),
            [one_target] => one(format!("Teleported {one_target} to {to}")),
            many => one(format!("Teleported {} entities to {to}", many.len())),
        }
    }
}

/// Adds `names` to `list` (or removes them) and says `done` for each that changed, with the
/// name for `{}`; `failed` when none did.
fn toggle(
    list: &mut Vec<String>,
    names: &[String],
    add: bool,
    done: &str,
    failed: &str,
) -> Vec<String> {
    let mut out = Vec::new();
    for name in names {
        match (add, position(list, name)) {
            (true, None) => list.push(name.clone()),
            (false, Some(i)) => {
                list.remove(i);
            }
            _ => continue,
        }
        out.push(done.replace("{}", name));
    }
    if out.is_empty() { one(failed) } else { out }
}

fn weather(line: &Line) -> Vec<String> {
    let kind = match line.word(1) {
        None => return line.incomplete(),
        Some("clear") => "clear",
        Some("rain") => "rain",
        Some("thunder") => "rain & thunder",
        Some(_) => return line.incorrect(1),
    };
    match line.word(2).map(|d| ticks(d, 1)) {
        Some(Err(refusal)) => line.refused(2, refusal),
        Some(Ok(_)) if line.words.len() > 3 => line.incorrect(3),
        _ => one(format!("Set the weather to {kind}")),
    }
}

/// Why brigadier refused a value, and how many bytes into the word its cursor stopped.
type ReadError = (String, usize);

/// Brigadier's message when a value is followed by more than a space.
const TRAILING: &str = "Expected whitespace to end one argument, but found trailing data";

/// The number at the start of `word` (brigadier reads `0-9`, `.` and `-` as one), as a
/// brigadier `kind` (`integer`, `float`), and the bytes it took.
fn number<T: std::str::FromStr>(word: &str, kind: &str) -> Result<(T, usize), ReadError> {
    let end = word
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
        .unwrap_or(word.len());
    let number = &word[..end];
    if number.is_empty() {
        return Err((format!("Expected {kind}"), 0));
    }
    let n = number
        .parse::<T>()
        .map_err(|_| (format!("Invalid {kind} '{number}'"), 0))?;
    Ok((n, end))
}

/// The start of `word` that brigadier reads as an unquoted string.
fn unquoted_prefix(word: &str) -> &str {
    let end = word
        .find(|c: char| !(c.is_ascii_alphanumeric() || "_-.+".contains(c)))
        .unwrap_or(word.len());
    &word[..end]
}

/// `value`, read from the first `end` bytes of `word`, if nothing but a space follows it.
fn whole<T>(value: T, end: usize, word: &str) -> Result<T, ReadError> {
    if end < word.len() {
        return Err((TRAILING.into(), end));
    }
    Ok(value)
}

/// An integer argument of at least `min`, read as brigadier reads it.
fn int_value(word: &str, min: i32) -> Result<i32, ReadError> {
    let (n, end) = number::<i32>(word, "integer")?;
    if n < min {
        return Err((format!("Integer must not be less than {min}, found {n}"), 0));
    }
    whole(n, end, word)
}

/// A boolean argument, read as brigadier reads it.
fn bool_value(word: &str) -> Result<bool, ReadError> {
    let value = unquoted_prefix(word);
    let b = match value {
        "" => return Err(("Expected boolean".into(), 0)),
        "true" => true,
        "false" => false,
        _ => {
            return Err((
                format!("Invalid boolean, expected 'true' or 'false' but found '{value}'"),
                0,
            ));
        }
    };
    whole(b, value.len(), word)
}

/// A time argument of at least `min` ticks, read as vanilla's `TimeArgument` reads it: a
/// number, then a unit, none or `t` (ticks), `s` (20 ticks) or `d` (24000 ticks).
fn ticks(word: &str, min: i64) -> Result<i64, ReadError> {
    let (value, number) = number::<f32>(word, "float")?;
    let unit = unquoted_prefix(&word[number..]);
    let end = number + unit.len();
    let scale = match unit {
        "" | "t" => 1.0,
        "s" => 20.0,
        "d" => 24000.0,
        _ => return Err(("Invalid unit".into(), end)),
    };
    let t = (value * scale).round() as i64;
    if t < min {
        return Err((
            format!("Tick count must not be less than {min}, found {t}"),
            end,
        ));
    }
    whole(t, end, word)
}

/// The UUID an offline-mode server gives `name`: Java's `UUID.nameUUIDFromBytes` of
/// `OfflinePlayer:NAME`, an MD5-based (version 3) UUID.
fn offline_uuid(name: &str) -> String {
    let mut b = md5(format!("OfflinePlayer:{name}").as_bytes());
    b[6] = (b[6] & 0x0f) | 0x30;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// MD5 (RFC 1321), for [`offline_uuid`] only.
fn md5(data: &[u8]) -> [u8; 16] {
    const SHIFTS: [[u32; 4]; 4] = [
        [7, 12, 17, 22],
        [5, 9, 14, 20],
        [4, 11, 16, 23],
        [6, 10, 15, 21],
    ];
    // floor(|sin(i + 1)| * 2^32) (RFC 1321, section 3.4), as constants: computing them with
    // f64::sin linked libm into every rcon (328 KiB more resident in a one-shot).
    const K: [u32; 64] = [
        0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613,
        0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193,
        0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d,
        0x02441453, 0xd8a1e681, 0xe7d3fbc8, 0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed,
        0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122,
        0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
        0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665, 0xf4292244,
        0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
        0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb,
        0xeb86d391,
    ];
    let mut message = data.to_vec();
    message.push(0x80);
    while message.len() % 64 != 56 {
        message.push(0);
    }
    message.extend((data.len() as u64).wrapping_mul(8).to_le_bytes());
    let mut h: [u32; 4] = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476];
    for block in message.chunks(64) {
        let word =
            |g: usize| u32::from_le_bytes(block[g * 4..g * 4 + 4].try_into().expect("4 bytes"));
        let [mut a, mut b, mut c, mut d] = h;
        for i in 0..64 {
            let (f, g) = match i / 16 {
                0 => ((b & c) | (!b & d), i),
                1 => ((d & b) | (!d & c), (5 * i + 1) % 16),
                2 => (b ^ c ^ d, (3 * i + 5) % 16),
                _ => (c ^ (b | !d), (7 * i) % 16),
            };
            let f = f.wrapping_add(a).wrapping_add(K[i]).wrapping_add(word(g));
            (a, d, c) = (d, c, b);
            b = b.wrapping_add(f.rotate_left(SHIFTS[i / 16][i % 4]));
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d]) {
            *x = x.wrapping_add(y);
        }
    }
    let mut out = [0u8; 16];
    for (i, w) in h.iter().enumerate() {
        out[i * 4..i * 4 + 4].copy_from_slice(&w.to_le_bytes());
    }
    out
}

/// An absolute coordinate; a whole number of `x` or `z` is the centre of its block.
fn coordinate(word: &str, centred: bool) -> Option<f64> {
    let value = word.parse::<f64>().ok().filter(|v| v.is_finite())?;
    Some(if centred && !word.contains('.') {
        value + 0.5
    } else {
        value
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn say(game: &mut Game, command: &str) -> String {
        game.answer(command)
            .unwrap_or_else(|| panic!("{command} is not played"))
            .concat()
    }

    #[test]
    fn parse_errors_show_ten_characters_before_the_cursor_and_the_rest() {
        assert_eq!(
            parse_error(UNKNOWN, "foo", 0),
            "Unknown or incomplete command, see below for errorfoo<--[HERE]"
        );
        assert_eq!(
            parse_error(INCORRECT, "whitelist frobnicate", 10),
            "Incorrect argument for commandwhitelist frobnicate<--[HERE]"
        );
        assert_eq!(
            parse_error(UNKNOWN, "time query", 10),
            "Unknown or incomplete command, see below for errortime query<--[HERE]"
        );
        assert_eq!(
            parse_error(INCORRECT, "gamerule keepInventory maybe", 23),
            "Incorrect argument for command...Inventory maybe<--[HERE]"
        );
    }

    #[test]
    fn offline_uuids_are_version_3_uuids_of_md5() {
        let hex = |b: [u8; 16]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
        assert_eq!(hex(md5(b"")), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(hex(md5(b"abc")), "900150983cd24fb0d6963f7d28e17f72");
        assert_eq!(
            hex(md5(b"The quick brown fox jumps over the lazy dog")),
            "9e107d9d372bb6826bd81d3542a419d6"
        );
        // Two blocks: the length goes in a block of its own.
        assert_eq!(hex(md5(&[b'a'; 60])), "cc7ed669cf88f201c3297c6a91e1d18d");
        // As Python's hashlib and uuid make it from the same bytes.
        assert_eq!(
            offline_uuid("Steve"),
            "5627dd98-e6be-3c21-b8a8-e92344183641"
        );
    }

    #[test]
    fn the_rules_are_the_ones_help_lists() {
        let usage = super::super::HELP
            .iter()
            .find(|u| u.starts_with("/gamerule "))
            .unwrap();
        let listed: Vec<&str> = usage["/gamerule (".len()..usage.len() - 1]
            .split('|')
            .collect();
        let ours: Vec<&str> = RULES.iter().map(|(n, _)| *n).collect();
        assert_eq!(listed, ours);
    }

    #[test]
    fn commands_change_the_game_and_answer_in_vanillas_words() {
        let mut g = Game {
            online: vec!["Steve".into(), "Alex".into()],
            ..Game::default()
        };
        let cases = [
            (
                "save-all",
                "Saving the game (this may take a moment!)Saved the game",
            ),
            ("save-off", "Automatic saving is now disabled"),
            ("save-off", "Saving is already turned off"),
            ("save-on", "Automatic saving is now enabled"),
            ("whitelist list", "There are no whitelisted players"),
            ("whitelist add Bob", "Added Bob to the whitelist"),
            ("whitelist add bob", "Player is already whitelisted"),
            ("whitelist list", "There are 1 whitelisted player(s): Bob"),
            ("whitelist remove Bob", "Removed Bob from the whitelist"),
            ("whitelist on", "Whitelist is now turned on"),
            ("whitelist on", "Whitelist is already turned on"),
            ("whitelist reload", "Reloaded the whitelist"),
            (
                "op @a",
                "Made Steve a server operatorMade Alex a server operator",
            ),
            (
                "op Steve",
                "Nothing changed. The player already is an operator",
            ),
            ("deop Alex", "Made Alex no longer a server operator"),
            ("op @s", "No player was found"),
            ("kick Alex griefing", "Kicked Alex: griefing"),
            ("kick Alex", "No player was found"),
            ("tell Steve hi there", "You whisper to Steve: hi there"),
            ("ban Griefer", "Banned Griefer: Banned by an operator."),
            (
                "ban Griefer",
                "Nothing changed. The player is already banned",
            ),
            ("ban-ip 10.0.0.9 spam", "Banned IP 10.0.0.9: spam"),
            (
                "banlist",
                "There are 2 ban(s):Griefer was banned by Rcon: Banned by an operator.10.0.0.9 was banned by Rcon: spam",
            ),
            ("pardon Griefer", "Unbanned Griefer"),
            ("pardon-ip 10.0.0.9", "Unbanned IP 10.0.0.9"),
            (
                "pardon-ip 10.0.0.9",
                "Nothing changed. That IP isn't banned",
            ),
            ("banlist ips", "There are no bans"),
            ("time set day", "Set the time to 1000"),
            ("time add 1d", "Set the time to 1000"),
            ("time query daytime", "The time is 1000"),
            ("time query day", "The time is 1"),
            ("weather thunder 5m", "Invalid unit...thunder 5m<--[HERE]"),
            (
                "weather thunder 0",
                "Tick count must not be less than 1, found 0... thunder 0<--[HERE]",
            ),
            ("time set 1.5s", "Set the time to 30"),
            (
                "time set -1",
                "Tick count must not be less than 0, found -1...ime set -1<--[HERE]",
            ),
            (
                "gamerule keepInventory maybe",
                "Invalid boolean, expected 'true' or 'false' but found 'maybe'...Inventory maybe<--[HERE]",
            ),
            (
                "gamerule randomTickSpeed 3x",
                "Expected whitespace to end one argument, but found trailing data...ickSpeed 3x<--[HERE]",
            ),
            (
                "gamerule randomTickSpeed x",
                "Expected integer...TickSpeed x<--[HERE]",
            ),
            (
                "gamerule randomTickSpeed 1.5",
                "Invalid integer '1.5'...TickSpeed 1.5<--[HERE]",
            ),
            ("weather rain x", "Expected float...ther rain x<--[HERE]"),
            (
                "time set 1.2.3",
                "Invalid float '1.2.3'time set 1.2.3<--[HERE]",
            ),
            (
                "time set 5s!",
                "Expected whitespace to end one argument, but found trailing data...ime set 5s!<--[HERE]",
            ),
            (
                "gamerule keepInventory true!",
                "Expected whitespace to end one argument, but found trailing data...ntory true!<--[HERE]",
            ),
            (
                "setidletimeout -5",
                "Integer must not be less than 0, found -5...letimeout -5<--[HERE]",
            ),
            (
                "whitelist frobnicate",
                "Incorrect argument for commandwhitelist frobnicate<--[HERE]",
            ),
            (
                "banlist all of them",
                "Incorrect argument for commandbanlist all of them<--[HERE]",
            ),
            (
                "save-all flush now",
                "Incorrect argument for command...all flush now<--[HERE]",
            ),
            ("weather thunder", "Set the weather to rain & thunder"),
            (
                "gamerule keepInventory",
                "Gamerule keepInventory is currently set to: false",
            ),
            (
                "gamerule keepInventory true",
                "Gamerule keepInventory is now set to: true",
            ),
            ("difficulty", "The difficulty is Easy"),
            ("difficulty hard", "The difficulty has been set to Hard"),
            (
                "difficulty hard",
                "The difficulty did not change; it is already set to hard",
            ),
            (
                "tp Steve 0 -60 0",
                "Teleported Steve to 0.500000, -60.000000, 0.500000",
            ),
            (
                "tp @p 0 -60 0",
                "Teleported Steve to 0.500000, -60.000000, 0.500000",
            ),
            (
                "tp 0 -60 0",
                "An entity is required to run this command here",
            ),
            ("say hi", ""),
            (
                "list uuids now",
                "Incorrect argument for command...ist uuids now<--[HERE]",
            ),
            (
                "whitelist",
                "Unknown or incomplete command, see below for errorwhitelist<--[HERE]",
            ),
        ];
        for (command, want) in cases {
            assert_eq!(say(&mut g, command), want, "{command}");
        }
        assert!(g.answer("give @a diamond").is_none());
    }
}
