// A real Minecraft-protocol server (PrismarineJS node-minecraft-protocol) for rconsole's status
// ping tests. Listens on 127.0.0.1, a free port; prints {"port": N} on stdout once listening and
// exits when stdin closes. Usage: node slp-server.js [modern|legacy-only] [motd-json]
//   modern:      answers the modern Server List Ping and the legacy FE 01 ping (library default)
//   legacy-only: drops the connection on a modern status request, like a server from before 1.7;
//                the FE 01 ping is still answered by the library's own legacy handler
'use strict'
const mc = require('minecraft-protocol')

const mode = process.argv[2] || 'modern'
const motdMsg = process.argv[3] ? JSON.parse(process.argv[3]) : undefined

const server = mc.createServer({
  'online-mode': false,
  host: '127.0.0.1',
  port: 0,
  version: '1.20.4',
  motd: '\u00a7aPeer \u00a7lMOTD',
  motdMsg,
  maxPlayers: 42,
  // The three-argument form: answering `false` makes the library drop the connection.
  beforePing: (response, client, answer) => {
    if (mode === 'legacy-only') return answer(null, false)
    response.players.online = 2
    response.players.sample = [
      { name: 'Alex', id: '00000000-0000-0000-0000-000000000001' },
      { name: 'Steve', id: '00000000-0000-0000-0000-000000000002' }
    ]
    answer(null, response)
  }
})
server.on('listening', () => {
  process.stdout.write(JSON.stringify({ port: server.socketServer.address().port }) + '\n')
})
server.on('error', (e) => { console.error(e); process.exit(1) })
process.stdin.on('end', () => process.exit(0))
process.stdin.resume()
