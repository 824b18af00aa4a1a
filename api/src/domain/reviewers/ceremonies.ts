/**
 * The console's WebAuthn ceremonies, verified with @simplewebauthn/server: a reviewer registers a passkey through
 * their invitation (which it uses up) and signs in with it (discoverable credentials: no user name is asked). Both
 * open a console session. Challenges live 5 minutes; a sign-in challenge is consumed by its first answer, right or
 * wrong, so an assertion cannot be replayed. Invitations that are unknown, expired or used are refused alike
 * (410 INVITATION_INVALID): a guesser learns nothing. A refused ceremony changes nothing but the spent challenge.
 */
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from "@simplewebauthn/server";
import { decodeClientDataJSON } from "@simplewebauthn/server/helpers";
import { audit, type RequestMeta } from "../../stores/auditLog.ts";
import type { Principal } from "../../auth/principal.ts";
import type { Config } from "../../config.ts";
import type { DbPool } from "../../db/queryable.ts";
import { withTransaction } from "../../db/transaction.ts";
import { AppError, unauthorized } from "../errors.ts";
import { DepartmentStore } from "../../stores/departmentStore.ts";
import * as store from "../../stores/reviewerStore.ts";
import { invitationTokenHash } from "./manageReviewers.ts";
import { p256KeyOf } from "./passkeyKey.ts";
import { CHALLENGE_SECONDS, ES256, passkeyInvalid, relyingParty } from "./relyingParty.ts";
import { startSession } from "./sessions.ts";

export const invitationInvalid = () =>
  new AppError(410, "INVITATION_INVALID", "This invitation link is not valid: it is unknown, expired or already used");

/** The WebAuthn user handle of a reviewer: their id's 16 bytes. */
const userHandleOf = (reviewerId: string) => new Uint8Array(Buffer.from(reviewerId.replaceAll("-", ""), "hex"));

/** How a reviewer acts in the audit log and the route table: as their department, naming themselves. */
export const reviewerPrincipal = (reviewer: { id: string; departmentCode: string }): Principal => ({
  kind: "department",
  id: reviewer.departmentCode,
  code: reviewer.departmentCode,
  reviewerId: reviewer.id,
});

async function usableInvitation(db: Parameters<typeof store.invitationByTokenHash>[0], token: string, lock = false) {
  const invitation = await store.invitationByTokenHash(db, invitationTokenHash(token), lock);
  if (!invitation || invitation.usedAt || invitation.expiresAt.getTime() <= Date.now()) throw invitationInvalid();
  return invitation;
}

export async function registrationOptions(
  pool: DbPool,
  config: Config,
  input: { token: string; deviceName: string },
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const invitation = await usableInvitation(pool, input.token);
  const rp = relyingParty(config);
  const existing = await store.activePasskeysOf(pool, [invitation.reviewerId]);
  const options = await generateRegistrationOptions({
    rpName: rp.rpName,
    rpID: rp.rpID,
    userID: userHandleOf(invitation.reviewerId),
    userName: invitation.reviewer.name,
    userDisplayName: invitation.reviewer.name,
    timeout: CHALLENGE_SECONDS * 1000,
    attestationType: "none",
    supportedAlgorithmIDs: [ES256],
    authenticatorSelection: { residentKey: "required", requireResidentKey: true, userVerification: "required" },
    excludeCredentials: existing.map((p) => ({ id: p.id, transports: p.transports })),
  });
  await store.startRegistration(pool, invitation.id, {
    challenge: options.challenge,
    expiresAt: new Date(Date.now() + CHALLENGE_SECONDS * 1000),
    deviceName: input.deviceName,
  });
  return options;
}

export async function registerPasskey(
  pool: DbPool,
  config: Config,
  meta: RequestMeta,
  input: { token: string; response: RegistrationResponseJSON },
): Promise<{
  reviewer: { id: string; name: string; departmentCode: string };
  passkey: { id: string; deviceName: string; publicKey: string };
  sessionToken: string;
}> {
  const rp = relyingParty(config);
  return withTransaction(pool, async (tx) => {
    const invitation = await usableInvitation(tx, input.token, true);
    if (
      !invitation.challenge ||
      !invitation.challengeExpiresAt ||
      invitation.challengeExpiresAt.getTime() <= Date.now()
    )
      throw passkeyInvalid(
        400,
        "No registration is in progress for this invitation: ask for registration options again",
      );
    let verified;
    try {
      verified = await verifyRegistrationResponse({
        response: input.response,
        expectedChallenge: invitation.challenge,
        expectedOrigin: rp.origin,
        expectedRPID: rp.rpID,
        requireUserPresence: true,
        requireUserVerification: true,
        supportedAlgorithmIDs: [ES256],
      });
    } catch (error) {
      throw passkeyInvalid(400, `The passkey registration was refused: ${(error as Error).message}`);
    }
    if (!verified.verified) throw passkeyInvalid(400, "The passkey registration could not be verified");
    const { credential, userVerified } = verified.registrationInfo;
    if (!userVerified) throw passkeyInvalid(400, "The passkey must verify the user (PIN or biometrics)");
    const publicKey = p256KeyOf(credential.publicKey);
    if (await store.passkeyExists(tx, credential.id, publicKey))
      throw passkeyInvalid(400, "This passkey is already registered");
    const deviceName = invitation.deviceName ?? "Passkey";
    const passkey = await store.insertPasskey(tx, {
      id: credential.id,
      reviewerId: invitation.reviewerId,
      deviceName,
      cosePublicKey: Buffer.from(credential.publicKey),
      publicKey,
      signCount: credential.counter,
      transports: credential.transports ?? [],
    });
    await store.useInvitation(tx, invitation.id);
    const sessionToken = await startSession(tx, invitation.reviewerId, passkey.id);
    await audit(
      tx,
      { ...meta, principal: reviewerPrincipal(invitation.reviewer) },
      {
        entityType: "REVIEWER",
        entityId: invitation.reviewerId,
        action: "REGISTER_PASSKEY",
        newValue: { invitationId: invitation.id, passkeyId: passkey.id, deviceName, publicKey },
      },
    );
    return {
      reviewer: {
        id: invitation.reviewerId,
        name: invitation.reviewer.name,
        departmentCode: invitation.reviewer.departmentCode,
      },
      passkey: { id: passkey.id, deviceName, publicKey },
      sessionToken,
    };
  });
}

export async function signInOptions(pool: DbPool, config: Config): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const options = await generateAuthenticationOptions({
    rpID: relyingParty(config).rpID,
    userVerification: "required",
    timeout: CHALLENGE_SECONDS * 1000,
  });
  await store.insertSignInChallenge(pool, options.challenge, new Date(Date.now() + CHALLENGE_SECONDS * 1000));
  return options;
}

/** A console sign-in; a refused one is audited (SIGN_IN_FAILED, the credential claimed, never the answer itself). */
export async function signIn(pool: DbPool, config: Config, meta: RequestMeta, response: AuthenticationResponseJSON) {
  try {
    return await passkeySignIn(pool, config, meta, response);
  } catch (error) {
    if (error instanceof AppError && error.status === 401)
      await audit(
        pool,
        { ...meta, principal: undefined, anonymous: true },
        {
          entityType: "REVIEWER",
          entityId: String(response?.id ?? "-").slice(0, 200),
          action: "SIGN_IN_FAILED",
          newValue: { method: "PASSKEY", reason: error.message },
        },
      ).catch(() => undefined); // the refusal is answered even if it cannot be written down
    throw error;
  }
}

async function passkeySignIn(
  pool: DbPool,
  config: Config,
  meta: RequestMeta,
  response: AuthenticationResponseJSON,
): Promise<{
  reviewer: { id: string; name: string };
  department: { code: string; name: string };
  sessionToken: string;
}> {
  const rp = relyingParty(config);
  let challenge: string;
  try {
    challenge = decodeClientDataJSON(response.response.clientDataJSON).challenge;
  } catch {
    throw passkeyInvalid(401, "The sign-in answer's client data cannot be read");
  }
  // Spent by this answer whatever its outcome: a replayed assertion finds no challenge.
  if (typeof challenge !== "string" || !(await store.consumeSignInChallenge(pool, challenge)))
    throw passkeyInvalid(401, "This sign-in challenge is unknown, expired or already used: start again");
  return withTransaction(pool, async (tx) => {
    const passkey = await store.activePasskey(tx, response.id, true);
    if (!passkey) throw passkeyInvalid(401, "This passkey is not registered, or was removed");
    const handle = response.response.userHandle;
    if (handle && handle !== Buffer.from(userHandleOf(passkey.reviewerId)).toString("base64url"))
      throw passkeyInvalid(401, "The passkey's user handle does not match its reviewer");
    let verified;
    try {
      verified = await verifyAuthenticationResponse({
        response,
        expectedChallenge: challenge,
        expectedOrigin: rp.origin,
        expectedRPID: rp.rpID,
        requireUserVerification: true,
        credential: {
          id: passkey.id,
          publicKey: new Uint8Array(passkey.cosePublicKey),
          counter: passkey.signCount,
          transports: passkey.transports,
        },
      });
    } catch (error) {
      throw passkeyInvalid(401, `The sign-in was refused: ${(error as Error).message}`);
    }
    if (!verified.verified) throw passkeyInvalid(401, "The passkey's signature is not valid");
    const department = await new DepartmentStore(tx).byCode(passkey.reviewer.departmentCode);
    if (!department?.isActive) throw unauthorized("The reviewer's department is not active");
    await store.recordPasskeyUse(tx, passkey.id, verified.authenticationInfo.newCounter);
    const sessionToken = await startSession(tx, passkey.reviewerId, passkey.id);
    await audit(
      tx,
      { ...meta, principal: reviewerPrincipal(passkey.reviewer) },
      {
        entityType: "REVIEWER",
        entityId: passkey.reviewerId,
        action: "SIGN_IN",
        newValue: { passkeyId: passkey.id },
      },
    );
    return {
      reviewer: { id: passkey.reviewerId, name: passkey.reviewer.name },
      department: { code: department.code, name: department.name },
      sessionToken,
    };
  });
}

/** Ends the session with this cookie value's hash, if it is live (audited). */
export async function signOut(pool: DbPool, meta: RequestMeta, tokenHash: string | undefined): Promise<void> {
  if (!tokenHash) return;
  await withTransaction(pool, async (tx) => {
    const reviewerId = await store.endSession(tx, tokenHash);
    if (reviewerId) await audit(tx, meta, { entityType: "REVIEWER", entityId: reviewerId, action: "SIGN_OUT" });
  });
}

/** The signed-in reviewer, the passkey they signed in with, and their department as the chain has it. */
export async function consoleMe(pool: DbPool, session: { reviewerId: string; passkeyId: string }) {
  const passkey = await store.activePasskey(pool, session.passkeyId);
  if (!passkey || passkey.reviewerId !== session.reviewerId) throw unauthorized("The console session has ended");
  const department = await new DepartmentStore(pool).byCode(passkey.reviewer.departmentCode);
  if (!department) throw unauthorized("The console session has ended");
  return {
    reviewer: { id: passkey.reviewerId, name: passkey.reviewer.name },
    passkey: { id: passkey.id, deviceName: passkey.deviceName, publicKey: passkey.publicKey },
    department: {
      code: department.code,
      name: department.name,
      custody: department.custody,
      walletAddress: department.walletAddress,
    },
  };
}
