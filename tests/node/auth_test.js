// The official Vertex AI Node SDK (REST fallback) with a Trainyard bearer token: the SDK's auth
// client adds the Authorization header to every call. Reads PORT, TOKEN (an editor of team-a) and
// OTHER (a token of team-b). Prints "ok - …" / "not ok - …" and exits 1 on any failure.
'use strict';
const {v1} = require('@google-cloud/aiplatform');
const {check, code, run} = require('./harness');

const port = Number(process.env.PORT);
const parent = 'projects/team-a/locations/us-central1';

// google-gax's REST stub sends every request through auth.fetch and leaves the credentials to it
// (as google-auth-library's clients do), so that is where the header goes.
function client(token) {
  const auth = {
    getRequestHeaders: async () => new Headers({Authorization: `Bearer ${token}`}),
    fetch: (url, init) => {
      const headers = new Headers(init.headers);
      headers.set('Authorization', `Bearer ${token}`);
      return fetch(url, {...init, headers});
    },
  };
  return new v1.JobServiceClient({apiEndpoint: '127.0.0.1', port, protocol: 'http', fallback: true, auth});
}

async function tokens() {
  const jobs = client(process.env.TOKEN);
  const [job] = await jobs.createCustomJob({
    parent,
    customJob: {
      displayName: 'node-with-token',
      jobSpec: {workerPoolSpecs: [{
        machineSpec: {machineType: 'a3-highgpu-8g', acceleratorType: 'NVIDIA_H100_80GB', acceleratorCount: 8},
        replicaCount: 1,
        containerSpec: {imageUri: 'us-docker.pkg.dev/demo/lora:1'},
      }]},
    },
  });
  check('createCustomJob with the token', /\/customJobs\/\d+$/.test(job.name), job.name);
  const [got] = await jobs.getCustomJob({name: job.name});
  check('getCustomJob with the token', got.displayName === 'node-with-token', got.displayName);
  // google.rpc codes: 16 UNAUTHENTICATED, 7 PERMISSION_DENIED.
  check('a wrong token is UNAUTHENTICATED (16)',
        await code(client('ty1_1_' + 'A'.repeat(43)).getCustomJob({name: job.name})) === 16);
  check("another project's token is PERMISSION_DENIED (7)",
        await code(client(process.env.OTHER).getCustomJob({name: job.name})) === 7);
}

run(tokens);
