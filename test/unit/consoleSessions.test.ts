/**
 * Console sessions as credentials (api/src/auth/consoleSessions.ts): the cookie's flags, and the routes a reviewer's
 * session may reach; and the P-256 key read from a passkey's COSE key (api/src/domain/reviewers/passkeyKey.ts).
 */
import { expect } from "chai";
import {
  assertConsoleSessionMayCall,
  clearedSessionCookie,
  sessionCookie,
} from "../../api/src/auth/consoleSessions.ts";
import type { Principal } from "../../api/src/auth/principal.ts";
import { p256KeyOf } from "../../api/src/domain/reviewers/passkeyKey.ts";
import { isoCBOR } from "@simplewebauthn/server/helpers";
import { createSoftwarePasskey } from "../stack/support/softwarePasskey.ts";

const session: Principal = {
  kind: "department",
  id: "WATER",
  code: "WATER",
  reviewerId: "0b5c1c3e-0000-4000-8000-000000000001",
};
const apiKey: Principal = { kind: "department", id: "WATER", code: "WATER" };
const route = (operationId: string, path: string, access: { kind: string }[] = [{ kind: "apiKey" }]) => ({
  operationId,
  path,
  access,
});

describe("console session cookie and reach (consoleSessions.ts)", () => {
  it("the cookie is HttpOnly, SameSite=Strict, Path=/, and Secure in production only", () => {
    expect(sessionCookie("abc", { nodeEnv: "test" } as never)).to.equal(
      "console_session=abc; Max-Age=43200; Path=/; HttpOnly; SameSite=Strict",
    );
    expect(sessionCookie("abc", { nodeEnv: "production" } as never)).to.match(/; Secure$/);
    expect(clearedSessionCookie({ nodeEnv: "test" } as never)).to.match(/^console_session=; Max-Age=0;/);
  });

  it("a session reaches the reviewer's routes, /console/ routes and public ones; nothing else", () => {
    for (const allowed of [
      route("getRequest", "/requests/:requestId"),
      route("approveRequest", "/requests/:requestId/approve"),
      route("getDecisionTypedData", "/requests/:requestId/decision-typed-data"),
      route("getConsoleQueue", "/console/queue"),
      route("verifyLicence", "/verify/:tokenId", [{ kind: "public" }]),
    ])
      expect(() => assertConsoleSessionMayCall(allowed, session), allowed.operationId).not.to.throw();
    for (const refused of [
      route("inviteReviewer", "/departments/:departmentCode/reviewer-invitations"),
      route("createWebhook", "/webhooks"),
      route("getDepartmentStats", "/departments/:departmentCode/stats"),
      route("refuseDepartmentWalletChange", "/departments/:departmentCode/wallet-change/refuse"),
    ]) {
      expect(() => assertConsoleSessionMayCall(refused, session), refused.operationId).to.throw(
        /A console session cannot/,
      );
      // The department's API key is not limited.
      expect(() => assertConsoleSessionMayCall(refused, apiKey)).not.to.throw();
    }
  });
});

describe("a passkey's P-256 key (passkeyKey.ts)", () => {
  it("reads qx ‖ qy from an ES256 COSE key", () => {
    const passkey = createSoftwarePasskey();
    expect(p256KeyOf(passkey.cosePublicKey)).to.equal(passkey.publicKey);
  });

  it("refuses another algorithm or curve (400 PASSKEY_INVALID)", () => {
    const x = new Uint8Array(32).fill(1);
    for (const [alg, crv] of [
      [-8, 6],
      [-35, 2],
      [-7, 2],
    ]) {
      const key = isoCBOR.encode(
        new Map<number, number | Uint8Array>([
          [1, 2],
          [3, alg!],
          [-1, crv!],
          [-2, x],
          [-3, x],
        ]),
      );
      expect(() => p256KeyOf(key))
        .to.throw()
        .with.property("code", "PASSKEY_INVALID");
    }
  });
});
