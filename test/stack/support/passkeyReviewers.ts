/**
 * Reviewers with software passkeys for the passkey custody tests: a console "browser" (keeps the session cookie,
 * sends the console's Origin on writes), invitation → registration (signed in), and signing a signing request.
 */
import { expect } from "chai";
import { TypedDataEncoder } from "ethers";
import { departmentClient, type CreatedTestDepartment } from "./departmentClient.ts";
import type { Json } from "./httpClient.ts";
import {
  authenticationResponse,
  createSoftwarePasskey,
  registrationResponse,
  type CeremonyOptions,
  type SoftwarePasskey,
} from "./softwarePasskey.ts";

export interface Result {
  status: number;
  body: Json;
}

/** A browser tab on the console of `api`, at `origin`. */
export function consoleBrowser(api: string, origin: string) {
  let cookie: string | undefined;
  const call = async (method: string, route: string, body?: unknown): Promise<Result> => {
    const response = await fetch(`${api}/api/v1${route}`, {
      method,
      headers: {
        ...(method === "GET" ? {} : { origin }),
        ...(cookie ? { cookie } : {}),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const setCookie = response.headers.getSetCookie().find((c) => c.startsWith("console_session="));
    if (setCookie) {
      const value = setCookie.split(";")[0]!;
      cookie = value === "console_session=" ? undefined : value;
    }
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : undefined) as Json };
  };
  return {
    get: (route: string) => call("GET", route),
    post: (route: string, body: unknown = {}) => call("POST", route, body),
  };
}
export type ConsoleBrowser = ReturnType<typeof consoleBrowser>;

export interface Reviewer {
  name: string;
  reviewerId: string;
  passkey: SoftwarePasskey;
  browser: ConsoleBrowser;
}

/** The console's origin and RP ID, as the API's invitation links give them. */
export async function relyingPartyOf(api: string, department: CreatedTestDepartment) {
  const probe = await departmentClient(api, department).post(`/departments/${department.code}/reviewer-invitations`, {
    name: "Probe (never registers)",
  });
  expect(probe.status, JSON.stringify(probe.body)).to.equal(201);
  const url = new URL(probe.body.invitationUrl);
  return { origin: url.origin, rpId: url.hostname };
}

/** A reviewer of `department` invited by its key, with a passkey registered through the invitation: signed in. */
export async function registeredReviewer(
  api: string,
  department: CreatedTestDepartment,
  name: string,
  rp: { origin: string; rpId: string },
): Promise<Reviewer> {
  const invited = await departmentClient(api, department).post(`/departments/${department.code}/reviewer-invitations`, {
    name,
  });
  expect(invited.status, JSON.stringify(invited.body)).to.equal(201);
  const token = String(invited.body.invitationUrl).split("#/invite/")[1]!;
  const browser = consoleBrowser(api, rp.origin);
  const options = await browser.post("/console/invitations/registration-options", { token, deviceName: "Laptop" });
  expect(options.status, JSON.stringify(options.body)).to.equal(200);
  const passkey = createSoftwarePasskey();
  const done = await browser.post("/console/invitations/register", {
    token,
    response: registrationResponse(passkey, options.body.options, rp),
  });
  expect(done.status, JSON.stringify(done.body)).to.equal(201);
  return { name, reviewerId: invited.body.reviewerId, passkey, browser };
}

/** `reviewer`'s assertion over the signing request's challenge (as navigator.credentials.get answers it). */
export function assertionFor(
  reviewer: Reviewer,
  signingRequest: Json,
  ceremony: CeremonyOptions,
): ReturnType<typeof authenticationResponse> {
  return authenticationResponse(
    reviewer.passkey,
    {
      challenge: signingRequest.challenge,
      allowCredentials: (signingRequest.allowCredentials ?? []).map((id: string) => ({ id })),
    },
    ceremony,
  );
}

/** `reviewer` signs the signing request from their console session. */
export async function sign(reviewer: Reviewer, signingRequest: Json, ceremony: CeremonyOptions): Promise<Result> {
  const seen = await reviewer.browser.get(`/console/signing-requests/${signingRequest.id}`);
  expect(seen.status, JSON.stringify(seen.body)).to.equal(200);
  expect(seen.body.allowCredentials, `${reviewer.name} may sign`).to.deep.equal([reviewer.passkey.id]);
  return reviewer.browser.post(`/console/signing-requests/${signingRequest.id}/assertions`, {
    response: assertionFor(reviewer, seen.body, ceremony),
  });
}

/**
 * The EIP-712 digest of a signing request's typed data, computed here as a reviewer's browser computes it: a client
 * hashes what it shows instead of taking the server's digest.
 */
export function digestOfTypedData(typedData: {
  domain: Record<string, unknown>;
  types: Record<string, { name: string; type: string }[]>;
  message: Record<string, unknown>;
}): string {
  const { EIP712Domain: _domain, ...types } = typedData.types;
  return TypedDataEncoder.hash(typedData.domain, types, typedData.message);
}
