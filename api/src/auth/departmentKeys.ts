/**
 * Department API-key authentication: X-API-Key + X-Department-Code → Principal {kind: "department", id: code, code}.
 *
 * 1. The department row by code (visible only once its registration is indexed), the key's SHA-256 compared in
 *    constant time (an unknown code runs the same comparison against a dummy hash);
 * 2. the department must be active on chain: index.departments.active is read on every request (no cache), so a
 *    deactivation confirmed on chain stops the key at once in every API process (PATCH answers after the index
 *    has the deactivation);
 * 3. signed requests (requestSigning.ts) are required when the department has require_signed_requests, or for
 *    every department when REQUIRE_SIGNED_REQUESTS=true (a setting, read at start);
 *    a signature sent anyway is always verified.
 *
 * Every failure is 401 UNAUTHORIZED; the message never says whether the code exists.
 */
import { timingSafeEqual } from "node:crypto";
import type { Context } from "koa";
import { AppError } from "../domain/errors.ts";
import type { DepartmentCredentialStore } from "./departmentCredentialStore.ts";
import type { DepartmentKeyCheck } from "./index.ts";
import type { Principal } from "./principal.ts";
import { sha256Hex, verifySecret } from "./secrets.ts";
import {
  NONCE_PATTERN,
  SIGNATURE_RETENTION_SECONDS,
  SIGNATURE_WINDOW_SECONDS,
  bodyHashesOf,
  hmacHex,
  signingString,
} from "./requestSigning.ts";

/** Compared against when the code is unknown, so an unknown code costs the same as a wrong key. */
const DUMMY_HASH = `sha256:${sha256Hex("no such department")}`;
const PURGE_EVERY_MS = 60_000;

const unauthorized = (message: string) =>
  new AppError(401, "UNAUTHORIZED", message, undefined, { "WWW-Authenticate": "ApiKey" });

export interface DepartmentKeyCheckDeps {
  credentials: DepartmentCredentialStore;
  /** Opens a department's sealed API secret (the key vault holds the sealing key). */
  openSecret: (code: string, sealed: Buffer) => string;
  /** REQUIRE_SIGNED_REQUESTS: every department signs, whatever it was registered with. */
  signingRequiredForAll: boolean;
}

export function createDepartmentKeyCheck({
  credentials,
  openSecret,
  signingRequiredForAll,
}: DepartmentKeyCheckDeps): DepartmentKeyCheck {
  let lastPurge = 0;

  const purgeUsedSignatures = async () => {
    if (Date.now() - lastPurge < PURGE_EVERY_MS) return;
    lastPurge = Date.now();
    await credentials.purgeUsedSignatures(SIGNATURE_RETENTION_SECONDS);
  };

  const verifySignature = async (code: string, sealedSecret: Buffer, ctx: Context): Promise<void> => {
    const timestamp = ctx.get("x-timestamp");
    const signature = ctx.get("x-signature").toLowerCase();
    const nonce = ctx.get("x-nonce");
    if (!timestamp || !signature)
      throw unauthorized("This department must sign its requests: X-Timestamp and X-Signature are required");
    if (!/^\d{1,12}$/.test(timestamp)) throw unauthorized("X-Timestamp must be unix seconds");
    if (!/^[0-9a-f]{64}$/.test(signature)) throw unauthorized("X-Signature must be 64 hex characters (HMAC-SHA256)");
    if (nonce && !NONCE_PATTERN.test(nonce))
      throw unauthorized("X-Nonce must be 1-64 characters of A-Z a-z 0-9 . _ ~ -");
    const skew = Math.abs(Math.floor(Date.now() / 1000) - Number(timestamp));
    if (skew > SIGNATURE_WINDOW_SECONDS)
      throw unauthorized(`X-Timestamp is more than ${SIGNATURE_WINDOW_SECONDS / 60} minutes from the server's time`);
    const bodyHashes = bodyHashesOf(ctx);
    if (!bodyHashes) throw unauthorized("Signed requests carry a JSON body or no body");

    const secret = openSecret(code, sealedSecret);
    const given = Buffer.from(signature, "hex");
    let valid = false;
    for (const bodyHash of bodyHashes) {
      const expected = Buffer.from(
        hmacHex(secret, signingString(ctx.method, ctx.originalUrl, timestamp, nonce, bodyHash)),
        "hex",
      );
      if (timingSafeEqual(expected, given)) valid = true;
    }
    if (!valid) throw unauthorized("The request signature is not valid");

    await purgeUsedSignatures();
    if (!(await credentials.recordSignature(code, signature, Number(timestamp))))
      throw unauthorized("This request signature was already used");
  };

  return async (apiKey: string, departmentCode: string, ctx: Context): Promise<Principal | undefined> => {
    const row = await credentials.byCode(departmentCode);
    const keyMatches = await verifySecret(apiKey, row?.apiKeyHash ?? DUMMY_HASH);
    if (!row || !keyMatches) throw unauthorized("The API key is not valid for this department");
    if (!row.active) throw unauthorized("The department is deactivated");
    const signed = Boolean(ctx.get("x-signature") || ctx.get("x-timestamp") || ctx.get("x-nonce"));
    if (signed || row.requireSignedRequests || signingRequiredForAll)
      await verifySignature(row.code, row.apiSecretSealed, ctx);
    return { kind: "department", id: row.code, code: row.code };
  };
}
