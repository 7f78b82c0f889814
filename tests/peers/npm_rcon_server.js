#!/usr/bin/env node
'use strict';
// Launcher for the npm package `rcon-server` (class RCONServer, by TheArmagan).
// Usage: node npm_rcon_server.js --password PW [--port 0] [--crash-on-error]
const path = require('path');
const common = require('./_common');
const { RCONServer } = require(path.join(__dirname, 'node_modules', 'rcon-server'));

// --crash-on-error: keep the library's own failure mode. It throws from its
// 'data' handler on a chunk shorter than 12 bytes (e.g. a packet split across
// two TCP segments), which kills a plain Node process. By default we log the
// exception and keep serving so one bad probe does not take down a test run.
const argv = process.argv.slice(2);
const crashIdx = argv.indexOf('--crash-on-error');
if (crashIdx >= 0) argv.splice(crashIdx, 1);
else process.on('uncaughtException', (e) => process.stderr.write(`rcon-server threw: ${e && e.stack || e}\n`));
const args = common.parseArgs(argv);
const server = new RCONServer({
  port: args.port,
  host: args.host,
  password: args.password,
  clientLimit: 1000, // the default of 1 refuses a 2nd logged-in connection
  destroySocketOnLimitExceeded: true,
  emitAdvancedEvents: false,
});
server.on('listening', () => {
  common.announce(server.getSocketServer().address().port);
  common.exitOnStdinEof();
});
server.on('commandRequest', (req) => {
  req.resolve(common.respond(req.body));
});
server.connect();
