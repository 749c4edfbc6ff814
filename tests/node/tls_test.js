// The official Vertex AI Node SDK (REST fallback) over HTTPS: reads the job JOB from a server on
// https://127.0.0.1:$PORT whose CA the caller trusts through NODE_EXTRA_CA_CERTS.
'use strict';
const {v1} = require('@google-cloud/aiplatform');
const {check, run} = require('./harness');

const auth = {getRequestHeaders: async () => new Headers(), fetch: (url, init) => fetch(url, init)};
const jobs = new v1.JobServiceClient({
  apiEndpoint: '127.0.0.1', port: Number(process.env.PORT), protocol: 'https', fallback: true, auth,
});

run(async () => {
  const [job] = await jobs.getCustomJob({name: process.env.JOB});
  check('getCustomJob over HTTPS', job.displayName === 'over-tls', job.displayName);
});
