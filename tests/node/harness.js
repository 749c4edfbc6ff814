// What the Node SDK suites share: TAP-like "ok - …" lines, the gRPC code a call fails with, a
// poll with a deadline, and the exit status.
'use strict';

let failures = 0;

function check(name, ok, detail) {
  if (ok) {
    console.log(`ok - ${name}`);
  } else {
    failures++;
    console.log(`not ok - ${name}${detail === undefined ? '' : ': ' + JSON.stringify(detail)}`);
  }
}

// The google.rpc code a call fails with, or 'no error'.
async function code(promise) {
  try {
    await promise;
    return 'no error';
  } catch (e) {
    return e.code;
  }
}

async function until(what, fn, seconds = 60) {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// Runs the suite's steps in order, then exits 0 only when every check passed.
async function run(...steps) {
  try {
    for (const step of steps) await step();
  } catch (e) {
    failures++;
    console.log(`not ok - unexpected error: ${e.stack || e}`);
  }
  console.log(failures === 0 ? '# all passed' : `# ${failures} failed`);
  process.exit(failures === 0 ? 0 : 1);
}

module.exports = {check, code, until, run};
