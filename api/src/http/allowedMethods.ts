/**
 * Which methods a path allows, from the layers the routers matched (`ctx.matched`): only the route-table layers
 * (named by operationId) of the most specific path pattern, where a static segment wins over a parameter. The
 * router's own allowedMethods() would count every pattern that matches (Allow on /webhooks/logs would list DELETE
 * /webhooks/:webhookId) and answer OPTIONS with 200 and an Allow without OPTIONS; it still answers the system routes.
 */
import type { RouterContext } from "@koa/router";
import type { Context, Next } from "koa";

const KNOWN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** The table layers of the most specific pattern the request's path matched (none: not a table path). */
export function mostSpecificLayers(ctx: Context) {
  const layers = ((ctx as RouterContext).matched ?? []).filter((layer) => layer.name);
  const best = layers.reduce<string | undefined>(
    (a, { path }) => (!a || moreSpecific(String(path), a) ? String(path) : a),
    undefined,
  );
  return layers.filter((layer) => layer.path === best);
}

/**
 * After the routers: a table path that no route answered with this method gets OPTIONS → 204 with Allow, a known
 * method → 405 with Allow (the error middleware adds the body), an unknown method → 501.
 */
export function allowedMethods() {
  return async (ctx: Context, next: Next) => {
    await next();
    if (ctx.body !== undefined || ctx.status !== 404) return;
    const layers = mostSpecificLayers(ctx);
    if (layers.length === 0) return;
    if (!KNOWN_METHODS.has(ctx.method)) {
      ctx.status = 501;
      return;
    }
    // The router lists HEAD before GET; the Allow header keeps the table's order with HEAD after its GET.
    const methods = layers.flatMap((layer) =>
      layer.methods.flatMap((m) => (m === "HEAD" ? [] : m === "GET" ? [m, "HEAD"] : [m])),
    );
    ctx.set("Allow", [...new Set(methods), "OPTIONS"].join(", "));
    ctx.status = ctx.method === "OPTIONS" ? 204 : 405;
  };
}

/** Compares segment by segment from the left: the first difference where one is static and the other a parameter decides. */
function moreSpecific(a: string, b: string): boolean {
  const [x, y] = [a.split("/"), b.split("/")];
  const i = x.findIndex((segment, i) => segment.startsWith(":") !== y[i]?.startsWith(":"));
  return i >= 0 && !x[i].startsWith(":");
}
