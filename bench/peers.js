// Driver for npm rcon-client in bench/clients.py: `node peers.js HOST PORT PASSWORD MODE ARG`,
// MODE `oneshot CMD` (print the output) or `stream N` (run `echo i` for i < N in one session).
const { Rcon } = require("./node/node_modules/rcon-client");

async function main() {
  const [host, port, password, mode, arg] = process.argv.slice(2);
  const rcon = await Rcon.connect({ host, port: Number(port), password });
  if (mode === "oneshot") {
    process.stdout.write((await rcon.send(arg)) + "\n");
  } else {
    const out = [];
    for (let i = 0; i < Number(arg); i++) {
      out.push(await rcon.send(`echo ${i}`));
    }
    process.stdout.write(out.join("\n") + "\n");
  }
  await rcon.end();
}

main().catch((e) => {
  console.error(String(e));
  process.exit(1);
});
