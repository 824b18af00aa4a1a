/**
 * Which methods a path allows, from the route table: the routes of the most specific path pattern that matches,
 * where a static segment wins over a parameter (so /webhooks/logs is not /webhooks/:webhookId). The router would
 * otherwise count every pattern that matches (Allow on /webhooks/logs would list DELETE /webhooks/:webhookId) and
 * run a parameter route for a path that belongs to a static one.
 */
import type { Context, Next } from "koa";
import type { RouteDefinition } from "./routeTable.ts";

type Segment = { static: string } | { param: string };

interface Pattern {
  path: string;
  segments: Segment[];
  methods: Set<string>;
}

const KNOWN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

export class MethodTable {
  readonly #patterns: Pattern[] = [];

  constructor(routes: Pick<RouteDefinition, "method" | "path">[]) {
    for (const route of routes) {
      let pattern = this.#patterns.find((p) => p.path === route.path);
      if (!pattern) {
        pattern = { path: route.path, segments: segmentsOf(route.path), methods: new Set() };
        this.#patterns.push(pattern);
      }
      pattern.methods.add(route.method.toUpperCase());
      if (route.method === "get") pattern.methods.add("HEAD");
    }
  }

  /** The declared path of the most specific pattern matching `path` (relative to the router's prefix), if any. */
  resolve(path: string): string | undefined {
    const parts = partsOf(path);
    let best: Pattern | undefined;
    for (const pattern of this.#patterns) {
      if (!matches(pattern.segments, parts)) continue;
      if (!best || moreSpecific(pattern.segments, best.segments)) best = pattern;
    }
    return best?.path;
  }

  /** The Allow header's methods for `path`, or undefined when no route has its pattern. */
  allowed(path: string): string[] | undefined {
    const resolved = this.resolve(path);
    if (resolved === undefined) return undefined;
    const methods = this.#patterns.find((p) => p.path === resolved)!.methods;
    return [...methods, "OPTIONS"].filter((m, i, all) => all.indexOf(m) === i);
  }
}

/**
 * After the router: a path of the table that no route answered with this method gets OPTIONS → 204 with Allow, a
 * known method → 405 with Allow (the error middleware adds the body), an unknown method → 501.
 */
export function allowedMethods(prefix: string, table: MethodTable) {
  return async (ctx: Context, next: Next) => {
    await next();
    if (ctx.body !== undefined || (ctx.status !== 404 && ctx.status !== 405)) return;
    if (!ctx.path.startsWith(prefix)) return;
    const allowed = table.allowed(ctx.path.slice(prefix.length) || "/");
    if (!allowed) return;
    if (!KNOWN_METHODS.has(ctx.method)) {
      ctx.status = 501;
      return;
    }
    // The pattern allows this method but the router matched no route (e.g. "/workflows//": a trailing slash too
    // many for the router): the path is not found, not a method that is not allowed.
    if (ctx.method !== "OPTIONS" && allowed.includes(ctx.method)) return;
    ctx.set("Allow", allowed.join(", "));
    ctx.status = ctx.method === "OPTIONS" ? 204 : 405;
  };
}

/** The segments of a path, a trailing slash ignored (the router is not strict): "/" has none. */
function partsOf(path: string): string[] {
  return path.replace(/\/+$/, "").split("/").slice(1);
}

function segmentsOf(path: string): Segment[] {
  return partsOf(path).map((part) =>
    part.startsWith(":") ? { param: part.slice(1) } : { static: part.toLowerCase() },
  );
}

function matches(segments: Segment[], parts: string[]): boolean {
  if (segments.length !== parts.length) return false;
  return segments.every((segment, i) =>
    "static" in segment ? segment.static === parts[i].toLowerCase() : parts[i].length > 0,
  );
}

/** Compares segment by segment from the left: the first difference where one is static and the other a parameter decides. */
function moreSpecific(a: Segment[], b: Segment[]): boolean {
  for (let i = 0; i < a.length; i++) {
    const aStatic = "static" in a[i];
    const bStatic = "static" in b[i];
    if (aStatic !== bStatic) return aStatic;
  }
  return false;
}
