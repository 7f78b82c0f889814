//! The hidden password prompt, driven through a real pseudo-terminal (python3's stdlib `pty`,
//! which makes the terminal the child's controlling one, as a login shell would).

use std::path::Path;
use std::process::{Command, Output};

use crate::common::{PASSWORD, home, rcon_bin, rcon_in, run, stderr, stdout};

/// Runs `rcon ARGS` on a pty: waits for "Password", waits until the terminal's echo is off,
/// types KEYS (the password and Enter, or Ctrl-D), then collects everything the terminal showed
/// until rcon exits. Prints the terminal text on stdout and exits with rcon's status.
const DRIVER: &str = r#"
import os, pty, select, sys, termios, time
rcon, keys, args = sys.argv[1], sys.argv[2], sys.argv[3:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(rcon, [rcon] + args)
seen = b""
def pump(until, limit):
    global seen
    end = time.time() + limit
    while time.time() < end:
        if until(seen):
            return True
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                return False
            if not chunk:
                return False
            seen += chunk
    return until(seen)
if not pump(lambda s: b"Password" in s, 20):
    sys.stdout.buffer.write(seen)
    sys.stderr.write("driver: no password prompt\n")
    os.kill(pid, 9)
    sys.exit(90)
end = time.time() + 20
while termios.tcgetattr(fd)[3] & termios.ECHO:
    if time.time() > end:
        sys.stderr.write("driver: echo never turned off\n")
        os.kill(pid, 9)
        sys.exit(91)
    time.sleep(0.01)
os.write(fd, keys.encode())
pump(lambda s: False, 30)
_, status = os.waitpid(pid, 0)
sys.stdout.buffer.write(seen)
sys.exit(os.waitstatus_to_exitcode(status))
"#;

/// Runs `rcon ARGS` on a real pty with the hermetic environment of `rcon_in(home)` and types
/// `keys` at its password prompt once echo is off: the terminal's text is the output's stdout,
/// rcon's status its status. `None`, after a visible skip, where python3's `pty` is missing.
pub fn at_the_prompt(home: &Path, keys: &str, args: &[&str]) -> Option<Output> {
    let ok = Command::new("python3")
        .arg("-c")
        .arg("import pty, termios")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        crate::common::skip("python3 (with pty) not available for the prompt tests");
        return None;
    }
    let template = rcon_in(home);
    let mut cmd = Command::new("python3");
    for (key, value) in template.get_envs() {
        match value {
            Some(v) => cmd.env(key, v),
            None => cmd.env_remove(key),
        };
    }
    cmd.arg("-c")
        .arg(DRIVER)
        .arg(rcon_bin())
        .arg(keys)
        .args(args);
    Some(run(&mut cmd))
}

#[test]
fn prompts_on_the_terminal_without_echo() {
    let server = crate::common::strict_vanilla();
    let home = home();
    let port = server.port().to_string();
    let keys = format!("{PASSWORD}\r");
    let Some(out) = at_the_prompt(
        home.path(),
        &keys,
        &["-H", "127.0.0.1", "-P", &port, "list"],
    ) else {
        return;
    };
    let screen = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{screen}\n{}", stderr(&out));
    assert!(
        screen.contains(&format!("Password for 127.0.0.1:{}", server.port())),
        "{screen}"
    );
    assert!(screen.contains("players online"), "{screen}");
    assert!(
        !screen.contains(PASSWORD),
        "the password was echoed: {screen}"
    );
    assert_eq!(server.commands(), ["list"]);
}
