#!/usr/bin/env node
'use strict';
// Launcher for the npm package `minecraft-protocol` (PrismarineJS) createServer:
// a Minecraft Java *game port* peer that answers the Server List Ping (status,
// handshake next-state 1) and the legacy FE / FE 01 ping. It is NOT an RCON
// server; --password is accepted (and ignored) only to keep the uniform interface.
//
// Usage: node npm_mc_status.js [--password PW] [--port 0] [--motd TEXT]
//            [--max-players N] [--online N] [--mc-version 1.20.4]
//
// Prints "PORT <n>" once listening. Status reply: version = the server's
// (default: the library's default version) unless --echo-version, in which case
// the client's protocol number is echoed (library option version:false).
const fs = require('fs');
const path = require('path');

const opts = { port: 0, host: '127.0.0.1', motd: 'A §aMinecraft§r test server', maxPlayers: 20, online: 0, mcVersion: undefined, echo: false };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const v = () => argv[++i];
  if (a === '--password') v();
  else if (a === '--port') opts.port = parseInt(v(), 10);
  else if (a === '--host') opts.host = v();
  else if (a === '--motd') opts.motd = v();
  else if (a === '--max-players') opts.maxPlayers = parseInt(v(), 10);
  else if (a === '--online') opts.online = parseInt(v(), 10);
  else if (a === '--mc-version') opts.mcVersion = v();
  else if (a === '--echo-version') opts.echo = true;
  else { process.stderr.write(`unknown argument ${a}\n`); process.exit(2); }
}
if (!['127.0.0.1', '::1', 'localhost'].includes(opts.host)) {
  process.stderr.write('refusing to bind anything but loopback\n'); process.exit(2);
}

const mc = require(path.join(__dirname, 'node_modules', 'minecraft-protocol'));
const server = mc.createServer({
  host: opts.host,
  port: opts.port,
  motd: opts.motd,
  maxPlayers: opts.maxPlayers,
  'online-mode': false, // never contact any auth service
  version: opts.echo ? false : opts.mcVersion,
  hideErrors: true,
});
server.playerCount = opts.online;
server.on('listening', () => {
  fs.writeSync(1, `PORT ${server.socketServer.address().port}\n`);
  let st = null;
  try { st = fs.fstatSync(0); } catch (e) { /* no stdin */ }
  if (st && (st.isFIFO() || st.isSocket())) {
    process.stdin.on('data', () => {});
    process.stdin.on('end', () => process.exit(0));
    process.stdin.resume();
  }
});
server.on('error', (e) => { process.stderr.write(`server error: ${e}\n`); process.exit(1); });
// A login attempt would get as far as the game; kick politely instead.
server.on('playerJoin', (client) => client.end('rconsole test peer: status only'));
