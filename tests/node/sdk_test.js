// The official Vertex AI Node SDK (@google-cloud/aiplatform 7.x, REST fallback, no credentials)
// against a Trainyard server on 127.0.0.1:$PORT: persistent resources with operation.promise(),
// custom jobs across pages, cancel, delete, and the gRPC codes errors surface with
// (docs/wire-format.md, "What the Node SDK sends"). Prints "ok - …" / "not ok - …" and exits 1 on
// any failure.
'use strict';
const {v1} = require('@google-cloud/aiplatform');
const {check, code, until, run} = require('./harness');

const port = Number(process.env.PORT);
const parent = 'projects/demo/locations/us-central1';
const auth = {getRequestHeaders: async () => new Headers(), fetch: (url, init) => fetch(url, init)};
const opts = {apiEndpoint: '127.0.0.1', port, protocol: 'http', fallback: true, auth};
const jobs = new v1.JobServiceClient(opts);
const prs = new v1.PersistentResourceServiceClient(opts);
// LRO polls start at 100 ms; the server's virtual time runs fast, so a few seconds suffice.
const fast = {longrunning: {initialRetryDelayMillis: 100, retryDelayMultiplier: 1.3,
                            maxRetryDelayMillis: 1000, totalTimeoutMillis: 60000}};

// An LRO result is a protobufjs message when polled, a plain object when born done.
const plain = (m) => (m && typeof m.toJSON === 'function' ? m.toJSON() : m);

const H100 = {machineType: 'a3-highgpu-8g', acceleratorType: 'NVIDIA_H100_80GB', acceleratorCount: 8};

function job(displayName, extra = {}, duration = '60s') {
  return {
    displayName,
    jobSpec: {
      workerPoolSpecs: [{
        machineSpec: H100,
        replicaCount: 1,
        containerSpec: {imageUri: 'us-docker.pkg.dev/trainyard/peft/lora:1.0',
                        env: [{name: 'TRAINYARD_SIM_DURATION', value: duration}]},
      }],
      ...extra,
    },
  };
}

async function persistentResources() {
  const name = `${parent}/persistentResources/node-pr`;
  const [op] = await prs.createPersistentResource({
    parent, persistentResourceId: 'node-pr',
    persistentResource: {displayName: 'node', resourcePools: [{machineSpec: H100, replicaCount: 2}]},
  }, fast);
  check('createPersistentResource returns an operation', /\/operations\/\d+$/.test(op.name), op.name);
  const [created] = await op.promise();
  check('operation.promise() resolves with the RUNNING resource', plain(created).state === 'RUNNING',
        plain(created));

  const [got] = await prs.getPersistentResource({name});
  check('getPersistentResource', got.state === 'RUNNING' && got.resourcePools[0].replicaCount === '2', got);
  const [list] = await prs.listPersistentResources({parent});
  check('listPersistentResources', list.some((r) => r.name.endsWith('/node-pr')), list.map((r) => r.name));

  const [update] = await prs.updatePersistentResource({
    persistentResource: {name, displayName: 'renamed', labels: {team: 'node'}},
    updateMask: {paths: ['display_name', 'labels']},
  }, fast);
  const [updated] = await update.promise();
  check('updatePersistentResource', plain(updated).displayName === 'renamed', plain(updated));
  check('the update shows', (await prs.getPersistentResource({name}))[0].labels.team === 'node');
  check('a bad update mask is INVALID_ARGUMENT (3)', await code(prs.updatePersistentResource({
    persistentResource: {name, network: 'x'}, updateMask: {paths: ['network']},
  })) === 3);

  const [reboot] = await prs.rebootPersistentResource({name}, fast);
  const [rebooted] = await reboot.promise();
  check('rebootPersistentResource ends RUNNING', plain(rebooted).state === 'RUNNING', plain(rebooted));

  // A job on the resource runs to the end.
  const [onPr] = await jobs.createCustomJob({parent, customJob: job('node-on-pr', {persistentResourceId: 'node-pr'})});
  const done = await until('the job on the resource', async () => {
    const [j] = await jobs.getCustomJob({name: onPr.name});
    return ['JOB_STATE_SUCCEEDED', 'JOB_STATE_FAILED'].includes(j.state) && j;
  });
  check('a job on the resource SUCCEEDS', done.state === 'JOB_STATE_SUCCEEDED', done.state);

  check('creating a taken id is ALREADY_EXISTS (6)', await code(prs.createPersistentResource({
    parent, persistentResourceId: 'node-pr',
    persistentResource: {resourcePools: [{machineSpec: H100, replicaCount: 1}]},
  })) === 6);
  check('a bad id is INVALID_ARGUMENT (3)', await code(prs.createPersistentResource({
    parent, persistentResourceId: 'Bad_Id',
    persistentResource: {resourcePools: [{machineSpec: H100, replicaCount: 1}]},
  })) === 3);

  // The operations mixin, polled under /ui.
  const ops = [];
  for await (const o of prs.listOperationsAsync({name: parent})) ops.push(o);
  check('listOperationsAsync sees the create', ops.some((o) => o.name === op.name), ops.length);
  const [fetched] = await prs.getOperation({name: op.name});
  check('getOperation', fetched.done === true, fetched);
  await prs.cancelOperation({name: op.name});
  check('cancelOperation on a done operation', true);

  const [del] = await prs.deletePersistentResource({name}, fast);
  await del.promise();
  check('deletePersistentResource', true);
  check('then getPersistentResource is NOT_FOUND (5)', await code(prs.getPersistentResource({name})) === 5);
  await prs.deleteOperation({name: del.name});
  check('deleteOperation', await code(prs.getOperation({name: del.name})) === 5);
}

async function customJobs() {
  const created = [];
  // The last one runs for ten virtual hours: still running when it is deleted below.
  for (let i = 0; i < 3; i++) {
    const [j] = await jobs.createCustomJob({parent, customJob: job(`node-${i}`, {}, i === 2 ? '36000s' : '60s')});
    created.push(j.name);
  }
  check('createCustomJob', created.every((n) => /customJobs\/\d{19}$/.test(n)), created);
  const [one] = await jobs.getCustomJob({name: created[0]});
  check('getCustomJob', one.displayName === 'node-0' && one.jobSpec.workerPoolSpecs[0].replicaCount === '1', one);

  const [page, next] = await jobs.listCustomJobs({parent, pageSize: 2}, {autoPaginate: false});
  check('listCustomJobs gives a page of 2 and a next page', page.length === 2 && next && next.pageToken, page.length);
  const all = [];
  for await (const j of jobs.listCustomJobsAsync({parent, pageSize: 2})) all.push(j.name);
  check('listCustomJobsAsync walks every page without repeats',
        created.every((n) => all.includes(n)) && new Set(all).size === all.length, all.length);

  await jobs.cancelCustomJob({name: created[1]});
  const cancelled = await until('the cancel', async () => {
    const [j] = await jobs.getCustomJob({name: created[1]});
    return ['JOB_STATE_CANCELLED', 'JOB_STATE_SUCCEEDED'].includes(j.state) && j;
  });
  check('cancelCustomJob ends CANCELLED', cancelled.state === 'JOB_STATE_CANCELLED', cancelled.state);
  const [del] = await jobs.deleteCustomJob({name: created[1]}, fast);
  await del.promise();
  check('deleteCustomJob', await code(jobs.getCustomJob({name: created[1]})) === 5);
  check('deleting a running job is FAILED_PRECONDITION (9)',
        await code(jobs.deleteCustomJob({name: created[2]})) === 9);

  check('a missing job is NOT_FOUND (5)',
        await code(jobs.getCustomJob({name: `${parent}/customJobs/1234567890123456789`})) === 5);
  check('a bad job is INVALID_ARGUMENT (3)', await code(jobs.createCustomJob({
    parent, customJob: {displayName: 'bad', jobSpec: {workerPoolSpecs: [{machineSpec: {machineType: 'nope'}, replicaCount: 1,
                                                                         containerSpec: {imageUri: 'x'}}]}},
  })) === 3);
}

run(persistentResources, customJobs);
