//! The hidden password prompt, driven through a real pseudo-terminal (python3's stdlib `pty`,
//! which makes the terminal the child's controlling one, as a login shell would).

use std::process::Command;

use crate::common::{PASSWORD, home, rcon_in, run, stderr, stdout};

/// Runs `rcon ARGS` on a pty: waits for "Password", waits until the terminal's echo is off,
/// types the password, then collects everything the terminal showed until rcon exits.
/// Prints the terminal text on stdout and exits with rcon's status.
const DRIVER: &str = r#"
import os, pty, select, sys, termios, time
rcon, password, args = sys.argv[1], sys.argv[2], sys.argv[3:]
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
os.write(fd, (password + "\r").encode())
pump(lambda s: False, 30)
_, status = os.waitpid(pid, 0)
sys.stdout.buffer.write(seen)
sys.exit(os.waitstatus_to_exitcode(status))
"#;

fn python() -> Option<&'static str> {
    let ok = Command::new("python3")
        .arg("-c")
        .arg("import pty, termios")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        crate::common::skip("python3 (with pty) not available for the prompt test");
        return None;
    }
    Some("python3")
}

#[test]
fn prompts_on_the_terminal_without_echo() {
    let Some(python) = python() else { return };
    let server = crate::common::strict_vanilla();
    let home = home();
    // The hermetic environment of rcon_in, applied to the driver (which passes it on).
    let template = rcon_in(home.path());
    let mut cmd = Command::new(python);
    for (key, value) in template.get_envs() {
        match value {
            Some(v) => cmd.env(key, v),
            None => cmd.env_remove(key),
        };
    }
    cmd.arg("-c")
        .arg(DRIVER)
        .arg(env!("CARGO_BIN_EXE_rcon"))
        .arg(PASSWORD)
        .args(["-H", "127.0.0.1", "-P", &server.port().to_string(), "list"]);
    let out = run(&mut cmd);
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
