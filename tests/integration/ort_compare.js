#!/usr/bin/env node
// Runs exported ONNX models in ONNX Runtime and compares their outputs with the eager PyTorch
// outputs recorded by tests/fixtures/make_models.py. ONNX Runtime is the independent judge.
//
//   node ort_compare.js MODEL.onnx MANIFEST.json [options]   one model
//   node ort_compare.js --cases CASES.json [options]         many models in one process;
//        CASES.json = [{"onnx": ..., "manifest": ..., "rtol"?: R, "atol"?: A, "ort_optimization"?: LEVEL}, ...]
//        (LEVEL: ONNX Runtime's graphOptimizationLevel for that case, "all" when absent)
//        (relative paths are relative to CASES.json)
//   node ort_compare.js --check-runtime                      only check onnxruntime-node loads
// Options: --rtol R (default 1e-3)  --atol A (default 1e-5)  --threads N (ORT intra-op threads)
//          --save-actual DIR (write ORT's outputs there as <onnx basename>.actual<k>.npy)
//          --ort-lacks OP-VERSION (repeatable: a model ONNX Runtime cannot load only because it has
//          no kernel for that op version, e.g. RoiAlign-22, is counted "not run", not failed; with
//          --save-actual, <onnx basename>.not_run holds why)
//
// Inputs are fed BY POSITION: manifest input k goes to the k-th input of the ONNX graph,
// whatever the exporter named it. Output k is compared with manifest output k:
// floats pass iff |actual - expected| <= atol + rtol * |expected| elementwise (NaN matches NaN
// only), integers and bools must be equal; shapes and dtypes must match exactly.
// Exit status: 0 if every output of every case passed, 1 otherwise, 2 on bad usage.
'use strict';

const fs = require('fs');
const path = require('path');

const REPO_ROOT = path.resolve(__dirname, '..', '..');
const DEFAULTS = {rtol: 1e-3, atol: 1e-5, threads: 0, saveActual: null};

class HarnessError extends Error {}
// A model ONNX Runtime has no kernel for, as --ort-lacks declares.
class NotRun extends Error {}

// ------------------------------------------------------------------ onnxruntime-node

function loadOrt() {
  let resolved;
  try {
    resolved = require.resolve('onnxruntime-node', {paths: [REPO_ROOT]});
  } catch (e) {
    throw new HarnessError(
        `onnxruntime-node is not installed in ${path.join(REPO_ROOT, 'node_modules')}; ` +
        `run "npm ci --ignore-scripts" in ${REPO_ROOT} (the install script would try to ` +
        `download GPU binaries; the CPU library ships inside the package)`);
  }
  return require(resolved);
}

// ------------------------------------------------------------------ .npy reader / writer

// numpy descr -> our dtype (the ONNX Runtime tensor type name) and typed-array constructor.
const NPY_DTYPES = {
  '<f4': {dtype: 'float32', Array: Float32Array},
  '<f8': {dtype: 'float64', Array: Float64Array},
  '<f2': {dtype: 'float16', Array: Uint16Array},  // IEEE half bits, as ONNX Runtime for Node holds them
  '<i8': {dtype: 'int64', Array: BigInt64Array},
  '<i4': {dtype: 'int32', Array: Int32Array},
  '<i2': {dtype: 'int16', Array: Int16Array},
  '<u2': {dtype: 'uint16', Array: Uint16Array},
  '|i1': {dtype: 'int8', Array: Int8Array},
  '|u1': {dtype: 'uint8', Array: Uint8Array},
  '|b1': {dtype: 'bool', Array: Uint8Array},
};
const DESCR_OF = Object.fromEntries(Object.entries(NPY_DTYPES).map(([d, t]) => [t.dtype, d]));
const NPY_MAGIC = Buffer.from('\x93NUMPY', 'latin1');

function parseNpyHeader(header, file) {
  const descr = /'descr':\s*'([^']+)'/.exec(header);
  const fortran = /'fortran_order':\s*(True|False)/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !fortran || !shape) throw new HarnessError(`${file}: malformed .npy header ${header}`);
  if (fortran[1] === 'True') throw new HarnessError(`${file}: Fortran-order arrays are not supported; save C order`);
  const type = NPY_DTYPES[descr[1].replace(/^=/, '<')];
  if (!type) {
    throw new HarnessError(`${file}: unsupported .npy dtype '${descr[1]}' (supported: ` +
                           `${Object.keys(NPY_DTYPES).join(' ')}, little-endian)`);
  }
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s.length).map(Number);
  return {type, dims};
}

function readNpy(file) {
  const bytes = fs.readFileSync(file);
  if (bytes.length < 10 || !bytes.subarray(0, 6).equals(NPY_MAGIC)) throw new HarnessError(`${file}: not a .npy file`);
  const major = bytes[6];
  const lenSize = major === 1 ? 2 : 4;
  const headerLen = lenSize === 2 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
  const dataStart = 8 + lenSize + headerLen;
  const {type, dims} = parseNpyHeader(bytes.toString('latin1', 8 + lenSize, dataStart), file);
  const count = dims.reduce((a, b) => a * b, 1);
  const byteLength = count * type.Array.BYTES_PER_ELEMENT;
  if (bytes.length - dataStart !== byteLength) {
    throw new HarnessError(`${file}: expected ${byteLength} data bytes for ${type.dtype}[${dims}], found ${bytes.length - dataStart}`);
  }
  const data = new type.Array(count);  // a copy: the file's data offset need not be aligned
  new Uint8Array(data.buffer).set(bytes.subarray(dataStart));
  return {dtype: type.dtype, dims, data};
}

function writeNpy(file, {dtype, dims, data}) {
  const descr = DESCR_OF[dtype];
  if (!descr) throw new HarnessError(`${file}: cannot write dtype ${dtype} to .npy`);
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  const unpadded = NPY_MAGIC.length + 4 + header.length + 1;
  header += ' '.repeat((64 - (unpadded % 64)) % 64) + '\n';
  const prefix = Buffer.alloc(NPY_MAGIC.length + 4);
  NPY_MAGIC.copy(prefix);
  prefix[6] = 1;
  prefix[7] = 0;
  prefix.writeUInt16LE(header.length, 8);
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  fs.writeFileSync(file, Buffer.concat([prefix, Buffer.from(header, 'latin1'), body]));
}

// ------------------------------------------------------------------ comparison

const INTEGER_DTYPES = new Set(['int64', 'int32', 'int16', 'uint16', 'int8', 'uint8', 'bool']);

function unravel(flat, dims) {
  const index = new Array(dims.length);
  for (let d = dims.length - 1; d >= 0; --d) {
    index[d] = flat % dims[d];
    flat = Math.floor(flat / dims[d]);
  }
  return `[${index.join(',')}]`;
}

// Elementwise comparison of two arrays of the same dtype and shape.
function compareValues(actual, expected, {rtol, atol}, exact) {
  let maxAbs = 0;
  let worst = -1;
  let usage = 0;  // max over elements of |a-b| / (atol + rtol*|b|): how close to failing
  let bad = 0;
  let firstBad = -1;
  for (let i = 0; i < expected.length; ++i) {
    let ok;
    let diff;
    if (exact) {  // raw comparison: int64 values past 2**53 must not collapse through Number
      ok = actual[i] === expected[i];
      diff = ok ? 0 : Math.abs(Number(actual[i] - expected[i]));
    } else {
      const a = actual[i];
      const b = expected[i];
      if (a === b) {  // also equal infinities
        ok = true;
        diff = 0;
      } else if (!Number.isFinite(a) || !Number.isFinite(b)) {  // NaN matches only NaN
        ok = Number.isNaN(a) && Number.isNaN(b);
        diff = ok ? 0 : Infinity;
      } else {
        diff = Math.abs(a - b);
        const allowed = atol + rtol * Math.abs(b);
        ok = diff <= allowed;
        usage = Math.max(usage, diff / allowed);
      }
    }
    if (worst < 0 || diff > maxAbs) {
      maxAbs = diff;
      worst = i;
    }
    if (!ok) {
      ++bad;
      if (firstBad < 0) firstBad = i;
    }
  }
  return {maxAbs, worst, bad, firstBad, usage};
}

// float16 data held as its bits (Uint16Array) -> the numbers they stand for.
function halfValues(data) {
  if (!(data instanceof Uint16Array)) return data;
  const out = new Float64Array(data.length);
  for (let i = 0; i < data.length; ++i) {
    const h = data[i];
    const sign = h & 0x8000 ? -1 : 1;
    const exponent = (h >> 10) & 0x1f;
    const fraction = h & 0x3ff;
    if (exponent === 0) out[i] = sign * fraction * 2 ** -24;
    else if (exponent === 31) out[i] = fraction ? NaN : sign * Infinity;
    else out[i] = sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
  }
  return out;
}

function describeElement(i, actual, expected, dims) {
  return `${unravel(i, dims)} got ${actual[i]} want ${expected[i]}`;
}

// Compares one ORT output with its expected array; returns {ok, line}.
function compareOutput(label, actual, expected, tol) {
  const head = `${label} ${expected.dtype}[${expected.dims.join(',')}]`;
  if (actual.dtype !== expected.dtype) {
    return {ok: false, line: `${head}: FAIL dtype: ONNX Runtime produced ${actual.dtype}, expected ${expected.dtype}`};
  }
  if (actual.dims.length !== expected.dims.length || actual.dims.some((d, k) => d !== expected.dims[k])) {
    return {ok: false, line: `${head}: FAIL shape: ONNX Runtime produced [${actual.dims.join(',')}], expected [${expected.dims.join(',')}]`};
  }
  const exact = INTEGER_DTYPES.has(expected.dtype);
  const values = expected.dtype === 'float16' ? halfValues : (data) => data;
  const [got, want] = [values(actual.data), values(expected.data)];
  const r = compareValues(got, want, tol, exact);
  let line = `${head}: max_abs_err ${r.maxAbs.toExponential(3)}`;
  if (r.worst >= 0) line += ` at ${describeElement(r.worst, got, want, expected.dims)}`;
  if (!exact) line += `, tolerance used ${(100 * r.usage).toFixed(1)}%`;
  if (r.bad === 0) return {ok: true, line: `${line} PASS`};
  const rule = exact ? 'exact equality' : `|a-b| <= ${tol.atol} + ${tol.rtol}*|b|`;
  line += ` FAIL: ${r.bad} of ${expected.data.length} elements violate ${rule}, first at ` +
          describeElement(r.firstBad, got, want, expected.dims);
  return {ok: false, line};
}

// ------------------------------------------------------------------ running one case

function readManifest(file) {
  let manifest;
  try {
    manifest = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new HarnessError(`cannot read manifest ${file}: ${e.message}`);
  }
  if (!Array.isArray(manifest.inputs) || !Array.isArray(manifest.outputs)) {
    throw new HarnessError(`manifest ${file} needs "inputs" and "outputs" lists`);
  }
  const dir = path.dirname(file);
  const load = (entry) => readNpy(path.resolve(dir, entry.file));
  return {inputs: manifest.inputs.map(load), outputs: manifest.outputs.map(load)};
}

function checkInputsMatchGraph(session, inputs) {
  const names = session.inputNames;
  if (names.length !== inputs.length) {
    throw new HarnessError(`the ONNX graph has ${names.length} inputs (${names.join(', ')}) ` +
                           `but the manifest gives ${inputs.length}`);
  }
  (session.inputMetadata || []).forEach((meta, k) => {
    // An optional(tensor) input (an Optional argument nothing reads) is fed the manifest's tensor,
    // which ONNX Runtime takes for it; any other non-tensor input it refuses itself.
    if (!meta.isTensor) return;
    const given = inputs[k];
    const rankOk = meta.shape.length === 0 || meta.shape.length === given.dims.length;
    const dimsOk = rankOk && meta.shape.every((d, i) => typeof d !== 'number' || d < 0 || d === given.dims[i]);
    if (meta.type !== given.dtype || !dimsOk) {
      throw new HarnessError(`ONNX input ${k} "${meta.name}" is ${meta.type}[${meta.shape.join(',')}] ` +
                             `but manifest input ${k} is ${given.dtype}[${given.dims.join(',')}]`);
    }
  });
}

function toOrtTensor(ort, {dtype, dims, data}) {
  return new ort.Tensor(dtype, data, dims);
}

function fromOrtTensor(tensor) {
  return {dtype: tensor.type, dims: Array.from(tensor.dims), data: tensor.data};
}

async function runCase(ort, c, options) {
  const label = c.name || path.basename(c.onnx);
  const tol = {rtol: c.rtol ?? options.rtol, atol: c.atol ?? options.atol};
  const start = process.hrtime.bigint();
  const {inputs, outputs: expected} = readManifest(c.manifest);
  const sessionOptions = options.threads > 0 ? {intraOpNumThreads: options.threads} : {};
  if (c.ort_optimization) sessionOptions.graphOptimizationLevel = c.ort_optimization;
  let session;
  try {
    session = await ort.InferenceSession.create(c.onnx, sessionOptions);
  } catch (e) {
    const missing = /Could not find an implementation for (\w+)\((\d+)\)/.exec(e.message);
    if (missing && options.ortLacks.has(`${missing[1]}-${missing[2]}`))
      throw new NotRun(`ONNX Runtime has no kernel for ${missing[1]}-${missing[2]} (--ort-lacks)`);
    throw new HarnessError(`ONNX Runtime cannot load ${c.onnx}: ${e.message}`);
  }
  try {
    checkInputsMatchGraph(session, inputs);
    const feeds = Object.fromEntries(session.inputNames.map((n, k) => [n, toOrtTensor(ort, inputs[k])]));
    const results = await session.run(feeds);
    const names = session.outputNames;
    if (names.length !== expected.length) {
      throw new HarnessError(`the ONNX graph has ${names.length} outputs (${names.join(', ')}) ` +
                             `but the manifest expects ${expected.length}`);
    }
    let ok = true;
    names.forEach((n, k) => {
      const actual = fromOrtTensor(results[n]);
      if (options.saveActual) {
        const base = path.basename(c.onnx).replace(/\.onnx$/, '');
        writeNpy(path.join(options.saveActual, `${base}.actual${k}.npy`), actual);
      }
      const r = compareOutput(`  ${label} out${k} "${n}"`, actual, expected[k], tol);
      console.log(r.line);
      ok = ok && r.ok;
    });
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    console.log(`${ok ? 'PASS' : 'FAIL'} ${label} (${(ms / 1000).toFixed(2)} s, rtol ${tol.rtol}, atol ${tol.atol})`);
    return ok;
  } finally {
    await session.release();
  }
}

// ------------------------------------------------------------------ command line

function parseArgs(argv) {
  const options = {...DEFAULTS, positional: [], cases: null, checkRuntime: false, ortLacks: new Set()};
  const number = (flag, v) => {
    const x = Number(v);
    if (v === undefined || !Number.isFinite(x) || x < 0) throw new HarnessError(`${flag} needs a non-negative number, got ${v}`);
    return x;
  };
  for (let i = 0; i < argv.length; ++i) {
    const arg = argv[i];
    if (arg === '--rtol') options.rtol = number(arg, argv[++i]);
    else if (arg === '--atol') options.atol = number(arg, argv[++i]);
    else if (arg === '--threads') options.threads = number(arg, argv[++i]);
    else if (arg === '--save-actual') options.saveActual = argv[++i];
    else if (arg === '--cases') options.cases = argv[++i];
    else if (arg === '--ort-lacks') {
      const v = argv[++i];
      if (!/^\w+-\d+$/.test(v || '')) throw new HarnessError(`--ort-lacks needs OP-VERSION (e.g. RoiAlign-22), got ${v}`);
      options.ortLacks.add(v);
    }
    else if (arg === '--check-runtime') options.checkRuntime = true;
    else if (arg.startsWith('--')) throw new HarnessError(`unknown option ${arg}`);
    else options.positional.push(arg);
  }
  return options;
}

function casesFrom(options) {
  if (options.cases) {
    if (options.positional.length) throw new HarnessError('give either --cases FILE or MODEL.onnx MANIFEST.json, not both');
    const dir = path.dirname(options.cases);
    let list;
    try {
      list = JSON.parse(fs.readFileSync(options.cases, 'utf8'));
    } catch (e) {
      throw new HarnessError(`cannot read cases file ${options.cases}: ${e.message}`);
    }
    if (!Array.isArray(list)) throw new HarnessError(`${options.cases} must hold a JSON list of {onnx, manifest}`);
    return list.map((c, i) => {
      if (!c.onnx || !c.manifest) throw new HarnessError(`${options.cases}: case ${i} needs "onnx" and "manifest"`);
      return {...c, onnx: path.resolve(dir, c.onnx), manifest: path.resolve(dir, c.manifest)};
    });
  }
  if (options.positional.length !== 2) {
    throw new HarnessError('usage: ort_compare.js MODEL.onnx MANIFEST.json | --cases CASES.json | --check-runtime ' +
                           '[--rtol R] [--atol A] [--threads N] [--save-actual DIR]');
  }
  return [{onnx: options.positional[0], manifest: options.positional[1]}];
}

async function main() {
  let options;
  let cases;
  try {
    options = parseArgs(process.argv.slice(2));
    cases = options.checkRuntime ? [] : casesFrom(options);
  } catch (e) {
    console.error(`ort_compare: ${e.message}`);
    return 2;
  }
  let ort;
  try {
    ort = loadOrt();
  } catch (e) {
    console.error(`ort_compare: ${e.message}`);
    return 1;
  }
  if (options.checkRuntime) {
    const version = require(require.resolve('onnxruntime-node/package.json', {paths: [REPO_ROOT]})).version;
    console.log(`onnxruntime-node ${version} loads (CPU backend) from ${path.dirname(require.resolve('onnxruntime-node', {paths: [REPO_ROOT]}))}`);
    return 0;
  }
  if (options.saveActual) fs.mkdirSync(options.saveActual, {recursive: true});
  let passed = 0;
  let notRun = 0;
  for (const c of cases) {
    let ok = false;
    try {
      ok = await runCase(ort, c, options);
    } catch (e) {
      if (e instanceof NotRun) {
        ++notRun;
        console.log(`NOT RUN ${c.name || path.basename(c.onnx)}: ${e.message}`);
        // Tells eval.op_cases why there is no output to compare with.
        if (options.saveActual) {
          const base = path.basename(c.onnx).replace(/\.onnx$/, '');
          fs.writeFileSync(path.join(options.saveActual, `${base}.not_run`), e.message + '\n');
        }
        continue;
      }
      console.log(`FAIL ${c.name || path.basename(c.onnx)}: ${e instanceof HarnessError ? e.message : e.stack}`);
    }
    if (ok) ++passed;
  }
  const failed = cases.length - passed - notRun;
  console.log(`ort_compare: ${passed} passed, ${failed} failed` + (notRun ? `, ${notRun} not run (--ort-lacks)` : ''));
  return failed === 0 ? 0 : 1;
}

module.exports = {loadOrt, readNpy, writeNpy, compareOutput, toOrtTensor, fromOrtTensor};

if (require.main === module) {
  main().then((code) => { process.exitCode = code; });
}
