/**
 * Failed sign-ins (a wrong client secret or API key, a refused identity-locker sign-in) are counted per credential
 * and address (FailedCredentials) and then written to the audit trail, without the secret that was tried. Counting
 * comes first: once an allowance is spent the answer is 429 and nothing is written, so failures cannot flood the
 * audit table.
 */
import type { Context } from "koa";
import type { AuditEntity } from "../stores/auditLog.ts";
import type { FailedCredentials } from "../http/rateLimit.ts";
import { requestMeta } from "../http/requestMeta.ts";
import type { AuditRecorder } from "./clientRoutes.ts";

export interface SignInFailure {
  /** What was being signed in as: CLIENT (client_id), DEPARTMENT (department code), APPLICANT (identity-locker id). */
  entityType: Extract<AuditEntity, "CLIENT" | "DEPARTMENT" | "APPLICANT">;
  /** The id the caller claimed (it may not exist), or "-" when none is known. */
  claimed: string | undefined;
  method: string;
  reason: string;
}

/** Longest claimed id written to an audit row (a claimed id is the caller's text). */
const MAX_CLAIMED = 200;

export type FailedSignIn = (ctx: Context, credential: string, failure: SignInFailure) => Promise<void>;

/** Counts a failed sign-in (429 once spent) and records it; an audit write that fails is logged, not answered. */
export function failedSignIns(record: AuditRecorder, failures?: FailedCredentials): FailedSignIn {
  return async (ctx, credential, failure) => {
    await failures?.failed(credential, ctx.ip);
    const claimed = failure.claimed ? failure.claimed.slice(0, MAX_CLAIMED) : "-";
    await record(
      { ...requestMeta(ctx), principal: undefined, anonymous: true },
      {
        entityType: failure.entityType,
        entityId: claimed,
        action: "SIGN_IN_FAILED",
        newValue: { method: failure.method, reason: failure.reason },
      },
    ).catch((error: Error) => ctx.state.log?.error({ err: error }, "a failed sign-in could not be audited"));
  };
}
