/** Who made a change and from where, read from the request: what routes hand to use cases for the audit trail. */
import type { Context } from "koa";
import type { RequestMeta } from "../stores/auditLog.ts";

export function requestMeta(ctx: Context): RequestMeta {
  return {
    principal: ctx.state.principal,
    ip: ctx.ip,
    userAgent: ctx.get("user-agent") || undefined,
    requestId: ctx.state.requestId,
  };
}
