'use strict';
// Shared helpers for the Node peer launchers (our glue, not the peers' code).
// Uniform interface: <launcher> --password PW [--port 0]; prints one line
// "PORT <n>" once listening; serves until killed or until stdin (if a pipe) closes.
const fs = require('fs');

const LONG_PATTERN = 'é€😀a';
const LIST_REPLY = 'There are 0 of a max of 20 players online: ';

function parseArgs(argv) {
  const out = { password: null, port: 0, host: '127.0.0.1' };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => { if (i + 1 >= argv.length) usage(`missing value for ${a}`); return argv[++i]; };
    if (a === '--password') out.password = next();
    else if (a === '--port') out.port = parseInt(next(), 10);
    else if (a === '--host') out.host = next();
    else usage(`unknown argument ${a}`);
  }
  if (out.password === null) usage('--password is required');
  if (!Number.isInteger(out.port) || out.port < 0 || out.port > 65535) usage('bad --port');
  if (!['127.0.0.1', '::1', 'localhost'].includes(out.host)) usage('refusing to bind anything but loopback');
  return out;
}

function usage(msg) {
  process.stderr.write(`${msg}\nusage: --password PW [--port 0]\n`);
  process.exit(2);
}

function longText(n) {
  const cps = Array.from(LONG_PATTERN); // code points, not UTF-16 units
  const out = [];
  for (let i = 0; i < n; i++) out.push(cps[i % cps.length]);
  return out.join('');
}

function respond(cmd) {
  if (cmd === 'echo') return '';
  if (cmd.startsWith('echo ')) return cmd.slice(5);
  let m = /^(long|along) +(\d+)\s*$/.exec(cmd);
  if (m) {
    const n = parseInt(m[2], 10);
    if (m[1] === 'long') return longText(n);
    return 'abcdefghijklmnopqrstuvwxyz'.repeat(Math.floor(n / 26) + 1).slice(0, n);
  }
  if (cmd === 'list') return LIST_REPLY;
  if (cmd === 'empty') return '';
  return 'Unknown command: ' + cmd;
}

function announce(port) {
  fs.writeSync(1, `PORT ${port}\n`);
}

function exitOnStdinEof() {
  let st;
  try { st = fs.fstatSync(0); } catch (e) { return; }
  if (!(st.isFIFO() || st.isSocket())) return;
  process.stdin.on('data', () => {});
  process.stdin.on('end', () => process.exit(0));
  process.stdin.on('error', () => process.exit(0));
  process.stdin.resume();
}

module.exports = { parseArgs, respond, announce, exitOnStdinEof, longText };
