#!/usr/bin/env node
// Runs an ONNX model exported with --state-io in a loop in ONNX Runtime, as a streaming user
// does: each step is fed its own inputs and the state the previous step returned (the first step
// the state the file was exported with), and every step's outputs are compared with PyTorch's.
//
//   node ort_state_loop.js MODEL.onnx LOOP.json [--rtol R] [--atol A]
//   LOOP.json = {"state": [{"input": "_state", "output": "_state_out", "initial": "s0.npy"}, ...],
//                "steps": [{"inputs": {"x": "x0.npy"}, "outputs": {"output_0": "y0.npy", ...}}, ...]}
//   (files relative to LOOP.json; a step's "outputs" names the graph outputs it checks, states too)
// Prints one line per failing output and a summary; exit 0 when every step matched, 1 otherwise.
'use strict';

const fs = require('fs');
const path = require('path');
const {loadOrt, readNpy, compareOutput, toOrtTensor, fromOrtTensor} = require('./ort_compare.js');

async function main() {
  const args = process.argv.slice(2);
  const tol = {rtol: 1e-3, atol: 1e-5};
  const files = [];
  for (let i = 0; i < args.length; ++i) {
    if (args[i] === '--rtol') tol.rtol = Number(args[++i]);
    else if (args[i] === '--atol') tol.atol = Number(args[++i]);
    else files.push(args[i]);
  }
  if (files.length !== 2) {
    console.error('usage: node ort_state_loop.js MODEL.onnx LOOP.json [--rtol R] [--atol A]');
    return 2;
  }
  const [model, loopFile] = files;
  const loop = JSON.parse(fs.readFileSync(loopFile, 'utf8'));
  const dir = path.dirname(loopFile);
  const npy = (f) => readNpy(path.resolve(dir, f));
  const ort = loadOrt();
  const session = await ort.InferenceSession.create(model, {intraOpNumThreads: 1});
  const state = {};
  for (const s of loop.state) state[s.input] = npy(s.initial);
  let failures = 0;
  let worst = 0;
  for (let k = 0; k < loop.steps.length; ++k) {
    const step = loop.steps[k];
    const feeds = {};
    for (const [name, f] of Object.entries(step.inputs)) feeds[name] = toOrtTensor(ort, npy(f));
    for (const [name, value] of Object.entries(state)) feeds[name] = toOrtTensor(ort, value);
    const results = await session.run(feeds);
    for (const [name, f] of Object.entries(step.outputs)) {
      if (!(name in results)) {
        console.log(`step ${k}: the model has no output '${name}'`);
        ++failures;
        continue;
      }
      const r = compareOutput(`step ${k} ${name}`, fromOrtTensor(results[name]), npy(f), tol);
      const err = /max_abs_err (\S+)/.exec(r.line);
      if (err) worst = Math.max(worst, Number(err[1]));
      if (!r.ok) {
        console.log(r.line);
        ++failures;
      }
    }
    for (const s of loop.state) state[s.input] = fromOrtTensor(results[s.output]);
  }
  console.log(`${loop.steps.length} steps, ${failures} outputs differ, max abs error ${worst.toExponential(3)}`);
  return failures === 0 ? 0 : 1;
}

main().then((code) => process.exit(code), (e) => {
  console.error(e.stack || String(e));
  process.exit(1);
});
