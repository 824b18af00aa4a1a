import Router from "@koa/router";
import { expect } from "chai";
import { loadConfig } from "../../api/src/config.ts";
import { declaredRoutes } from "../../api/src/http/openApiDocument.ts";
import { defineRoute, mountRoutes, type RouteDefinition } from "../../api/src/http/routeTable.ts";

/** Every route that writes to the chain under an Idempotency-Key must be able to rebuild its answer after a crash. */
describe("routes that write to the chain under Idempotency-Key", function () {
  const route = (extra: Partial<RouteDefinition>): RouteDefinition =>
    defineRoute({
      method: "post",
      path: "/things",
      operationId: "makeThing",
      summary: "Make a thing",
      tags: ["Things"],
      access: [{ kind: "public" }],
      sendsTransactions: true,
      responses: { 200: { description: "Made" } },
      handler: () => ({ body: {} }),
      ...extra,
    });
  const mount = (definition: RouteDefinition) => () => mountRoutes(new Router(), [definition], async () => undefined);

  it("cannot be mounted without recoverIdempotent", function () {
    expect(mount(route({}))).to.throw(/POST \/things \(makeThing\) writes to the chain under Idempotency-Key/);
    expect(mount(route({ method: "put" }))).to.throw(/recoverIdempotent/);
  });

  it("mounts with one, and routes that ignore the key or send nothing need none", function () {
    expect(mount(route({ recoverIdempotent: async () => ({ body: {} }) }))).to.not.throw();
    expect(mount(route({ idempotent: false }))).to.not.throw();
    expect(mount(route({ sendsTransactions: undefined }))).to.not.throw();
    expect(mount(route({ method: "delete" }))).to.not.throw();
  });

  it("holds for the API's own route table: every route mounts as main.ts mounts it", function () {
    const { api, root } = declaredRoutes(loadConfig({}));
    expect(() => mountRoutes(new Router(), api, async () => undefined)).to.not.throw();
    expect(() => mountRoutes(new Router(), root, async () => undefined)).to.not.throw();
  });
});
