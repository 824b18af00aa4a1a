/**
 * `node scripts/bench/passkeyVerification.ts [N]`: CPU milliseconds the API spends on one reviewer's passkey
 * assertion before relaying it: the relying party's check (@simplewebauthn/server verifyAuthenticationResponse,
 * P-256 in node:crypto) and its conversion to the account's form (DER to low-s r, s; field indexes). Assertions are
 * made here with a real P-256 key, as an authenticator makes them; the figure goes to docs/benchmarks.md by hand.
 */
import { createHash, generateKeyPairSync, randomBytes, sign } from "node:crypto";
import { verifyAuthenticationResponse } from "@simplewebauthn/server";
import { isoCBOR } from "@simplewebauthn/server/helpers";
import { accountAssertion } from "../../api/src/domain/passkeys/passkeySignature.ts";

const runs = Number(process.argv[2] ?? 500);
const rpId = "localhost";
const origin = "http://localhost:3000";
const sha256 = (data: Buffer | string) => createHash("sha256").update(data).digest();
const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
const jwk = publicKey.export({ format: "jwk" });
const coseKey = isoCBOR.encode(
  new Map<number, number | Uint8Array>([
    [1, 2],
    [3, -7],
    [-1, 1],
    [-2, new Uint8Array(Buffer.from(jwk.x!, "base64url"))],
    [-3, new Uint8Array(Buffer.from(jwk.y!, "base64url"))],
  ]),
);

function assertion(digest: Buffer, counter: number) {
  const authenticatorData = Buffer.concat([sha256(rpId), Buffer.from([0x05]), Buffer.alloc(4)]);
  authenticatorData.writeUInt32BE(counter, 33);
  const clientDataJSON = JSON.stringify({ type: "webauthn.get", challenge: digest.toString("base64url"), origin });
  const signature = sign("sha256", Buffer.concat([authenticatorData, sha256(clientDataJSON)]), privateKey);
  const id = "bench-credential";
  return {
    id,
    rawId: id,
    type: "public-key" as const,
    clientExtensionResults: {},
    response: {
      clientDataJSON: Buffer.from(clientDataJSON).toString("base64url"),
      authenticatorData: authenticatorData.toString("base64url"),
      signature: signature.toString("base64url"),
    },
  };
}

const work = Array.from({ length: runs }, (_, i) => {
  const digest = randomBytes(32);
  return { digest, response: assertion(digest, i + 1) };
});
const cpuBefore = process.cpuUsage();
const started = performance.now();
for (const [i, { digest, response }] of work.entries()) {
  const { verified } = await verifyAuthenticationResponse({
    response,
    expectedChallenge: digest.toString("base64url"),
    expectedOrigin: origin,
    expectedRPID: rpId,
    requireUserVerification: true,
    credential: { id: response.id, publicKey: new Uint8Array(coseKey), counter: i },
  });
  if (!verified) throw new Error("an assertion was refused");
  accountAssertion(response, `0x${digest.toString("hex")}`);
}
const cpu = process.cpuUsage(cpuBefore);
const ms = (cpu.user + cpu.system) / 1000 / runs;
console.log(
  `${runs} assertions: ${ms.toFixed(3)} CPU-ms each (relying-party check + conversion), ${((performance.now() - started) / runs).toFixed(3)} ms wall each`,
);
