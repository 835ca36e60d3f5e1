// Signs the cards in cards.json with @a2a-js/sdk's generateAgentCardSignature
// using ES256, RS256 and EdDSA keys generated for this run, and prints
// {"jwks": …, "vectors": […]} on stdout. Run by internal/verify tests:
//   node sign.mjs [jku]
import { readFileSync } from "node:fs";
import * as jose from "jose";
import { generateAgentCardSignature } from "@a2a-js/sdk";

const jku = process.argv[2];
const cards = JSON.parse(readFileSync(new URL("./cards.json", import.meta.url), "utf8"));

const algs = [
  { alg: "ES256", kid: "es256-key", opts: {} },
  { alg: "RS256", kid: "rs256-key", opts: { modulusLength: 2048 } },
  { alg: "EdDSA", kid: "eddsa-key", opts: { crv: "Ed25519" } },
];

const keys = [];
const jwks = { keys: [] };
for (const a of algs) {
  const { publicKey, privateKey } = await jose.generateKeyPair(a.alg, { ...a.opts, extractable: true });
  const jwk = await jose.exportJWK(publicKey);
  jwks.keys.push({ ...jwk, kid: a.kid, alg: a.alg, use: "sig" });
  keys.push({ ...a, privateKey });
}

function header(a) {
  const h = { alg: a.alg, kid: a.kid, typ: "JOSE" };
  if (jku) h.jku = jku;
  return h;
}

const vectors = [];
for (const { name, card } of cards) {
  for (const a of keys) {
    const signed = await generateAgentCardSignature(a.privateKey, header(a))(card);
    vectors.push({ name: `${name}/${a.alg}`, alg: a.alg, kid: a.kid, card: signed });
  }
  // Key rotation: every key signs the same card, one signature each.
  let multi = card;
  for (const a of keys) {
    multi = await generateAgentCardSignature(a.privateKey, header(a))(multi);
  }
  vectors.push({ name: `${name}/rotation`, alg: "multi", kid: "", card: multi });
}

process.stdout.write(JSON.stringify({ sdk: "@a2a-js/sdk@1.3.0", jwks, vectors }) + "\n");
