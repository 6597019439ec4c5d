#!/usr/bin/env node
// ONNX Runtime (onnxruntime-node) as a long-lived process for shim/onnxruntime.py: one JSON
// request per stdin line, one JSON reply per stdout line, in order.
//
//   {"op": "load", "path": P, "threads": N}      -> {"session": ID, "inputs": [names], "outputs": [names]}
//   {"op": "run", "session": ID, "feeds": {name: T}} -> {"outputs": [T, ...]} (graph output order)
//   {"op": "release", "session": ID}             -> {}
//   T = {"dtype": "float32", "dims": [2, 3], "data": base64 of the little-endian C-order bytes}
// Any failure replies {"error": "one line"}.
'use strict';

const path = require('path');
const readline = require('readline');

const ort = require(require.resolve('onnxruntime-node', {paths: [path.resolve(__dirname, '..', '..')]}));

const ARRAYS = {
  float32: Float32Array, float64: Float64Array, float16: Uint16Array, int8: Int8Array, uint8: Uint8Array,
  int16: Int16Array, uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array, int64: BigInt64Array,
  uint64: BigUint64Array, bool: Uint8Array,
};

function toTensor({dtype, dims, data}) {
  const Array = ARRAYS[dtype];
  if (!Array) throw new Error(`input dtype ${dtype} is not supported`);
  const bytes = Buffer.from(data, 'base64');
  const values = new Array(bytes.length / Array.BYTES_PER_ELEMENT);  // a copy: aligned
  new Uint8Array(values.buffer).set(bytes);
  return new ort.Tensor(dtype, values, dims);
}

function fromTensor(tensor) {
  if (!ARRAYS[tensor.type]) throw new Error(`output dtype ${tensor.type} is not supported`);
  const data = tensor.data;
  return {dtype: tensor.type, dims: Array.from(tensor.dims),
          data: Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64')};
}

const sessions = new Map();
let nextId = 1;

async function handle(request) {
  if (request.op === 'load') {
    const options = {logSeverityLevel: 3, intraOpNumThreads: request.threads || 1};
    const session = await ort.InferenceSession.create(request.path, options);
    const id = nextId++;
    sessions.set(id, session);
    return {session: id, inputs: session.inputNames, outputs: session.outputNames};
  }
  const session = sessions.get(request.session);
  if (!session) throw new Error(`no session ${request.session}`);
  if (request.op === 'run') {
    const feeds = Object.fromEntries(Object.entries(request.feeds).map(([n, t]) => [n, toTensor(t)]));
    // onnxruntime-node's run() wants every input fed; ONNX Runtime itself (and its Python package,
    // which the tests call) lets an optional-typed input be left out: such a feed goes to the session
    // handler, which passes it to ONNX Runtime as it is.
    const leftOut = (session.inputMetadata || []).filter((m) => !(m.name in feeds));
    if (leftOut.length > 0 && leftOut.every((m) => !m.isTensor)) {
      const fetches = Object.fromEntries(session.outputNames.map((n) => [n, null]));
      const results = await session.handler.run(feeds, fetches, {});
      return {outputs: session.outputNames.map((n) => fromTensor(results[n]))};
    }
    const results = await session.run(feeds);
    return {outputs: session.outputNames.map((n) => fromTensor(results[n]))};
  }
  if (request.op === 'release') {
    sessions.delete(request.session);
    await session.release();
    return {};
  }
  throw new Error(`unknown op ${request.op}`);
}

async function main() {
  for await (const line of readline.createInterface({input: process.stdin})) {
    let reply;
    try {
      reply = await handle(JSON.parse(line));
    } catch (e) {
      reply = {error: String(e.message || e).split('\n')[0]};
    }
    process.stdout.write(JSON.stringify(reply) + '\n');
  }
}

main();
