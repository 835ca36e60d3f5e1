// Verifies a card's signatures with the official A2A JavaScript SDK's
// verifyAgentCardSignature, for internal/a2aagent/sign_test.go.
//
// usage: node verify.mjs <card.json> <jwks.json>
// Prints "verified", or the SDK's error and exits 1.
import { readFileSync } from 'node:fs';
import { verifyAgentCardSignature } from '@a2a-js/sdk';

const [cardPath, jwksPath] = process.argv.slice(2);
const card = JSON.parse(readFileSync(cardPath, 'utf8'));
const jwks = JSON.parse(readFileSync(jwksPath, 'utf8'));
try {
  await verifyAgentCardSignature(async (kid) => {
    const key = jwks.keys.find((k) => k.kid === kid);
    if (!key) throw new Error(`no key ${kid}`);
    return key;
  })(card);
  console.log('verified');
} catch (e) {
  console.log(String(e?.message ?? e));
  process.exit(1);
}
