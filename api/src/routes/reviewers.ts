/** Reviewers of a department: invitations, passkey registration, console sign-in and sessions. */
import { z } from "zod/v4";
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import { clearedSessionCookie, requireConsoleSession, sessionCookie } from "../auth/consoleSessions.ts";
import type { DomainContext } from "../domain/context.ts";
import { relyingParty } from "../domain/reviewers/relyingParty.ts";
import {
  consoleMe,
  registerPasskey,
  registrationOptions,
  signIn,
  signInOptions,
  signOut,
} from "../domain/reviewers/ceremonies.ts";
import { inviteReviewer, listReviewers, removePasskey, removeReviewer } from "../domain/reviewers/manageReviewers.ts";
import { routeGroup, type RouteDefinition } from "../http/routeTable.ts";
import { DateTime, Uuid } from "./schemas/common.ts";

const route = routeGroup({ tags: ["Review console"], access: [{ kind: "public" }] });
/** A department's reviewers, managed by the department itself (its API key) or an administrator. */
const reviewersRoute = routeGroup({
  tags: ["Reviewers"],
  access: [{ kind: "apiKey" }, { kind: "admin" }],
  responses: { 401: "Not authenticated", 403: "Not this department" },
});

const CodeParams = z.object({ departmentCode: z.string().min(1).max(64) });
const ReviewerParams = CodeParams.extend({ reviewerId: Uuid });
const PasskeyParams = ReviewerParams.extend({ passkeyId: z.string().min(1).max(1024) });

const Base64Url = z
  .string()
  .max(65_536)
  .regex(/^[A-Za-z0-9_-]*$/, "must be base64url");
const InvitationToken = z.string().min(1).max(256).describe("The token of the invitation link (after #/invite/)");
const PublicKeyHex = z
  .string()
  .regex(/^0x[0-9a-f]{128}$/)
  .describe("The passkey's P-256 key, 0x qx ‖ qy (64 bytes): what a DepartmentPasskeyAccount stores");

/** What navigator.credentials.create gave the page (@simplewebauthn/browser's startRegistration). */
const RegistrationResponse = z
  .looseObject({
    id: Base64Url.min(1),
    rawId: Base64Url.min(1),
    type: z.literal("public-key"),
    response: z.looseObject({ clientDataJSON: Base64Url, attestationObject: Base64Url }),
    clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
  })
  .describe("RegistrationResponseJSON");

/** What navigator.credentials.get gave the page (@simplewebauthn/browser's startAuthentication). */
export const AuthenticationResponse = z
  .looseObject({
    id: Base64Url.min(1),
    rawId: Base64Url.min(1),
    type: z.literal("public-key"),
    response: z.looseObject({
      clientDataJSON: Base64Url,
      authenticatorData: Base64Url,
      signature: Base64Url,
      userHandle: Base64Url.optional(),
    }),
    clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
  })
  .describe("AuthenticationResponseJSON");

const InvitationSchema = z
  .object({ reviewerId: Uuid, invitationId: Uuid, invitationUrl: z.string(), expiresAt: DateTime })
  .meta({ id: "ReviewerInvitation" });
const PasskeySchema = z
  .object({
    id: z.string().describe("The WebAuthn credential id, base64url"),
    deviceName: z.string(),
    publicKey: PublicKeyHex,
    createdAt: DateTime,
    lastUsedAt: DateTime.nullable(),
  })
  .meta({ id: "ReviewerPasskey" });
const ReviewerSchema = z
  .object({
    id: Uuid,
    name: z.string(),
    createdAt: DateTime,
    invitation: z.object({ expiresAt: DateTime, used: z.boolean() }).nullable().describe("The latest invitation"),
    passkeys: z.array(PasskeySchema),
  })
  .meta({ id: "Reviewer" });
const SignedInPasskey = z.object({ id: z.string(), deviceName: z.string(), publicKey: PublicKeyHex });
const ConsoleMeSchema = z
  .object({
    reviewer: z.object({ id: Uuid, name: z.string() }),
    passkey: SignedInPasskey,
    department: z.object({ code: z.string(), name: z.string(), custody: z.string(), walletAddress: z.string() }),
  })
  .meta({ id: "ConsoleMe" });
const OptionsSchema = z.object({ options: z.record(z.string(), z.unknown()) });

export function reviewerRoutes(context: DomainContext): RouteDefinition[] {
  const { pool, config } = context;
  return [
    reviewersRoute.post("/departments/:departmentCode/reviewer-invitations", "inviteReviewer", {
      summary: "Invite a reviewer to the review console",
      description:
        "Creates a reviewer of the department and a one-time invitation link, valid 72 hours, shown only in this answer (only its sha256 is kept). Opening it in the console registers the reviewer's passkey (ES256, user verification required). The department's own API key or an administrator; another department's key is 403, a console session 403. Audited (REVIEWER INVITE).",
      params: CodeParams,
      body: z.object({ name: z.string().trim().min(1).max(200) }),
      // The answer holds a secret link: never stored for replay.
      idempotent: false,
      responses: {
        201: { description: "Invited", schema: InvitationSchema },
        400: "Invalid body",
        404: "No such department",
      },
      handler: async ({ params, body, meta }) => ({
        body: await inviteReviewer(pool, meta, {
          departmentCode: params.departmentCode,
          name: body.name,
          consoleOrigin: relyingParty(config).origin,
        }),
      }),
    }),
    reviewersRoute.get("/departments/:departmentCode/reviewers", "listReviewers", {
      summary: "A department's active reviewers and their passkeys",
      params: CodeParams,
      responses: {
        200: {
          description: "Active reviewers, oldest first",
          schema: z.object({ reviewers: z.array(ReviewerSchema) }),
        },
        404: "No such department",
      },
      handler: async ({ params, principal }) => ({
        body: { reviewers: await listReviewers(pool, principal, params.departmentCode) },
      }),
    }),
    reviewersRoute.delete("/departments/:departmentCode/reviewers/:reviewerId", "removeReviewer", {
      summary: "Remove a reviewer",
      description:
        "Removes the reviewer and their passkeys off chain at once: they can no longer sign in or sign, and their console sessions end. A key on the department's passkey account leaves it only through a reviewer change signed on chain. Audited (REVIEWER REMOVE).",
      params: ReviewerParams,
      responses: { 204: "Removed", 404: "No such active reviewer" },
      handler: async ({ params, meta }) => {
        await removeReviewer(pool, meta, params.departmentCode, params.reviewerId);
        return {};
      },
    }),
    reviewersRoute.delete(
      "/departments/:departmentCode/reviewers/:reviewerId/passkeys/:passkeyId",
      "removeReviewerPasskey",
      {
        summary: "Remove one passkey of a reviewer",
        description:
          "The passkey stops signing in and signing at once; sessions opened with it end. Audited (REVIEWER REMOVE_PASSKEY).",
        params: PasskeyParams,
        responses: { 204: "Removed", 404: "No such active passkey" },
        handler: async ({ params, meta }) => {
          await removePasskey(pool, meta, params.departmentCode, params.reviewerId, params.passkeyId);
          return {};
        },
      },
    ),
    route.post("/console/invitations/registration-options", "consoleRegistrationOptions", {
      summary: "Start registering a passkey through an invitation",
      description:
        "PublicKeyCredentialCreationOptionsJSON for @simplewebauthn/browser's startRegistration (ES256, resident key and user verification required, attestation none); the challenge is kept with the invitation for 5 minutes, with the device name. An unknown, expired or used invitation: 410 INVITATION_INVALID, whichever it is.",
      body: z.object({ token: InvitationToken, deviceName: z.string().trim().min(1).max(100) }),
      idempotent: false,
      responses: {
        200: { description: "Creation options", schema: OptionsSchema },
        400: "Invalid body",
        410: "Invitation not valid",
      },
      handler: async ({ body }) => ({ body: { options: await registrationOptions(pool, config, body) } }),
    }),
    route.post("/console/invitations/register", "consoleRegisterPasskey", {
      summary: "Register the passkey and sign in",
      description:
        "Verifies the authenticator's answer to the options (challenge, origin, RP ID, user verification, ES256), stores the passkey and its P-256 key, uses the invitation up and signs the browser in (Set-Cookie console_session). Refused answers: 400 PASSKEY_INVALID; an unknown, expired or used invitation: 410 INVITATION_INVALID. Audited (REVIEWER REGISTER_PASSKEY).",
      body: z.object({ token: InvitationToken, response: RegistrationResponse }),
      idempotent: false,
      responses: {
        201: {
          description: "Registered and signed in",
          schema: z.object({
            reviewer: z.object({ id: Uuid, name: z.string(), departmentCode: z.string() }),
            passkey: SignedInPasskey,
          }),
        },
        400: "Invalid body or passkey refused",
        410: "Invitation not valid",
      },
      handler: async ({ body, meta }) => {
        const { sessionToken, ...registered } = await registerPasskey(pool, config, meta, {
          token: body.token,
          response: body.response as unknown as RegistrationResponseJSON,
        });
        return { body: registered, headers: { "Set-Cookie": sessionCookie(sessionToken, config) } };
      },
    }),
    route.post("/console/sign-in/options", "consoleSignInOptions", {
      summary: "Start signing in with a passkey",
      description:
        "PublicKeyCredentialRequestOptionsJSON for startAuthentication (no allowed credentials: passkeys are discoverable; user verification required). The challenge is good for one answer within 5 minutes.",
      body: z.object({}),
      idempotent: false,
      responses: { 200: { description: "Request options", schema: OptionsSchema } },
      handler: async () => ({ body: { options: await signInOptions(pool, config) } }),
    }),
    route.post("/console/sign-in", "consoleSignIn", {
      summary: "Sign in with a passkey",
      description:
        "Verifies the assertion (the challenge is spent by its first answer; origin, RP ID, user verification, the signature, a counter that does not go back) of an active passkey of an active reviewer, and opens a console session (Set-Cookie console_session: HttpOnly, SameSite=Strict; 30 minutes idle, 12 hours at most). Otherwise 401 PASSKEY_INVALID. Audited (REVIEWER SIGN_IN).",
      body: z.object({ response: AuthenticationResponse }),
      idempotent: false,
      responses: {
        200: {
          description: "Signed in",
          schema: z.object({
            reviewer: z.object({ id: Uuid, name: z.string() }),
            department: z.object({ code: z.string(), name: z.string() }),
          }),
        },
        400: "Invalid body",
        401: "Passkey refused",
      },
      handler: async ({ body, meta }) => {
        const { sessionToken, ...signedIn } = await signIn(
          pool,
          config,
          meta,
          body.response as unknown as AuthenticationResponseJSON,
        );
        return { body: signedIn, headers: { "Set-Cookie": sessionCookie(sessionToken, config) } };
      },
    }),
    route.post("/console/sign-out", "consoleSignOut", {
      summary: "Sign out of the console",
      description: "Ends the session of the cookie (if live) and clears the cookie. Audited (REVIEWER SIGN_OUT).",
      idempotent: false,
      responses: { 204: "Signed out", 403: "Cross-site request (CSRF_REJECTED)" },
      handler: async ({ ctx, meta }) => {
        await signOut(pool, meta, ctx.state.consoleSession?.tokenHash);
        return { headers: { "Set-Cookie": clearedSessionCookie(config) } };
      },
    }),
    route.get("/console/me", "consoleMe", {
      summary: "The signed-in reviewer",
      description: "The reviewer of the console session, the passkey they signed in with, and their department.",
      access: [{ kind: "apiKey" }],
      responses: {
        200: { description: "The signed-in reviewer", schema: ConsoleMeSchema },
        401: "No live console session",
        403: "Not a console session",
      },
      handler: async ({ ctx }) => ({ body: await consoleMe(pool, requireConsoleSession(ctx)) }),
    }),
  ];
}
