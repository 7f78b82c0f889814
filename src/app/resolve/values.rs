//! Parsing the values the command line, the environment and the config file give as text:
//! durations (`5s`, `500ms`) and `HOST[:PORT]`. The library takes typed values; the syntax is
//! the application's.

use std::time::Duration;

/// Parses `5s`, `500ms`, `1.5s`, `2m` or a bare number of seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("invalid duration '{text}' (examples: 5s, 500ms, 1.5s, 2m)"))?;
    let scale = match unit.trim() {
        "" | "s" | "sec" | "secs" => 1.0,
        "ms" => 0.001,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => {
            return Err(format!(
                "invalid duration unit in '{text}' (use ms, s, m or h)"
            ));
        }
    };
    let secs = value * scale;
    if !secs.is_finite() || secs > 86_400.0 * 365.0 {
        return Err(format!("duration '{text}' is out of range"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Parses a TCP or UDP port, 1 to 65535, with a message that says so (std's would be "invalid
/// digit found in string").
pub fn parse_port(text: &str) -> Result<u16, String> {
    match text.trim().parse::<u32>() {
        Ok(p) if (1..=65535).contains(&p) => Ok(p as u16),
        _ => Err("expected a port number from 1 to 65535".into()),
    }
}

/// Parses a count of 0 or more (`--retry`).
pub fn parse_count(text: &str) -> Result<u32, String> {
    text.trim()
        .parse::<u32>()
        .map_err(|_| format!("expected a whole number from 0 to {}", u32::MAX))
}

/// Parses a count of 1 or more (`--parallel`).
pub fn parse_positive_count(text: &str) -> Result<u32, String> {
    match text.trim().parse::<u32>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("expected a whole number from 1 to {}", u32::MAX)),
    }
}

/// Like [`parse_duration`], for time limits: zero would fail every wait at once, so it is
/// refused.
pub fn parse_time_limit(text: &str) -> Result<Duration, String> {
    let d = parse_duration(text)?;
    if d.is_zero() {
        return Err(format!(
            "a time limit of '{text}' would fail at once (give more than 0, e.g. 5s)"
        ));
    }
    Ok(d)
}

/// Splits `HOST`, `HOST:PORT`, `[IPv6]` or `[IPv6]:PORT` (a bare IPv6 address has no port).
/// Anything else with a colon or a scheme is an error: a port that is not 1-65535, `HOST:`,
/// an unclosed `[`, `http://HOST`.
pub fn parse_host_port(input: &str) -> Result<(String, Option<u16>), String> {
    let port = |text: &str| -> Result<u16, String> {
        if text.is_empty() {
            return Err(format!("'{input}' has no port after ':'"));
        }
        match text.parse::<u32>() {
            Ok(p) if (1..=65535).contains(&p) => Ok(p as u16),
            _ => Err(format!(
                "'{input}': port '{text}' is not a number from 1 to 65535"
            )),
        }
    };
    if input.contains("://") {
        return Err(format!(
            "'{input}' is a URL; give a host name or address, optionally with :PORT"
        ));
    }
    if let Some(rest) = input.strip_prefix('[') {
        let Some((host, after)) = rest.split_once(']') else {
            return Err(format!("'{input}' opens '[' without closing it"));
        };
        if host.is_empty() {
            return Err(format!("'{input}' has no address inside [ ]"));
        }
        return match after {
            "" => Ok((host.to_string(), None)),
            _ => match after.strip_prefix(':') {
                Some(p) => Ok((host.to_string(), Some(port(p)?))),
                None => Err(format!("'{input}': unexpected '{after}' after ']'")),
            },
        };
    }
    match input.matches(':').count() {
        0 => Ok((input.to_string(), None)),
        1 => {
            let (host, p) = input.split_once(':').expect("one colon");
            Ok((host.to_string(), Some(port(p)?)))
        }
        // A bare IPv6 address: no port (use [ADDR]:PORT for one).
        _ => Ok((input.to_string(), None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("5s"), Ok(Duration::from_secs(5)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("3"), Ok(Duration::from_secs(3)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert!(parse_duration("fast").is_err());
        assert!(parse_duration("5y").is_err());
        assert!(parse_duration("").is_err());
        assert!(parse_time_limit("0").is_err());
        assert!(parse_time_limit("0ms").is_err());
        assert_eq!(parse_time_limit("1ms"), Ok(Duration::from_millis(1)));
    }

    #[test]
    fn ports_and_counts() {
        assert_eq!(parse_port("25575"), Ok(25575));
        assert_eq!(parse_port("65535"), Ok(65535));
        for bad in ["0", "65536", "abc", "-1", ""] {
            assert_eq!(
                parse_port(bad),
                Err("expected a port number from 1 to 65535".into()),
                "{bad}"
            );
        }
        assert_eq!(parse_count("0"), Ok(0));
        assert!(
            parse_count("x")
                .unwrap_err()
                .starts_with("expected a whole number from 0")
        );
        assert_eq!(parse_positive_count("3"), Ok(3));
        assert!(
            parse_positive_count("0")
                .unwrap_err()
                .starts_with("expected a whole number from 1")
        );
    }

    #[test]
    fn host_and_port() {
        let ok = |s: &str| parse_host_port(s).unwrap();
        assert_eq!(ok("mc.example:25576"), ("mc.example".into(), Some(25576)));
        assert_eq!(ok("mc.example"), ("mc.example".into(), None));
        assert_eq!(ok("[::1]:25575"), ("::1".into(), Some(25575)));
        assert_eq!(ok("[::1]"), ("::1".into(), None));
        assert_eq!(ok("::1"), ("::1".into(), None));
        assert_eq!(ok("127.0.0.1:1"), ("127.0.0.1".into(), Some(1)));
        for bad in [
            "127.0.0.1:99999",
            "127.0.0.1:abc",
            "127.0.0.1:",
            "127.0.0.1:0",
            "[::1",
            "[::1]x",
            "[::1]:",
            "http://x",
        ] {
            assert!(parse_host_port(bad).is_err(), "{bad} accepted");
        }
    }
}
