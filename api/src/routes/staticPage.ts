/** A static page or asset (the home page, the verification page, the review console): public, GET only, served with its Content-Security-Policy. */
import { defineRoute, type RouteDefinition } from "../http/routeTable.ts";

export function staticPageRoute(page: {
  path: string;
  operationId: string;
  summary: string;
  body: string | Buffer;
  contentType: string;
  csp: string;
  cacheControl?: string;
}): RouteDefinition {
  return defineRoute({
    method: "get",
    path: page.path,
    operationId: page.operationId,
    summary: page.summary,
    tags: ["Pages"],
    access: [{ kind: "public" }],
    idempotent: false,
    responses: { 200: { description: page.summary, contentType: page.contentType } },
    handler: () => ({
      body: page.body,
      headers: {
        "content-type": `${page.contentType}; charset=utf-8`,
        "content-security-policy": page.csp,
        "cache-control": page.cacheControl ?? "no-cache",
      },
    }),
  });
}
