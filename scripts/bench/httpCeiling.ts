/**
 * This machine's HTTP ceiling: a bare Koa server (no router, no database, no authentication) answering a constant
 * JSON body of the size of a request read, in its own process like the API. Measured with the same clients as the
 * API's reads, it shows what part of a read's latency is the HTTP round trip itself at that concurrency.
 */
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";

if (process.argv[2] === "serve") {
  const { default: Koa } = await import("koa");
  const app = new Koa();
  const body = {
    requestId: "00000000-0000-4000-8000-000000000000",
    events: Array.from({ length: 8 }, (_, i) => ({ i, description: "x".repeat(120) })),
  };
  app.use((ctx) => {
    ctx.body = body;
  });
  const server = app.listen(0, "127.0.0.1", () => process.send!({ port: (server.address() as { port: number }).port }));
  process.on("disconnect", () => process.exit(0));
}

export async function startHttpCeiling(): Promise<{ url: string; pid: number; close(): Promise<void> }> {
  const child = fork(fileURLToPath(import.meta.url), ["serve"], { stdio: "ignore" });
  const port = await new Promise<number>((resolve, reject) => {
    child.once("message", (message: { port: number }) => resolve(message.port));
    child.once("exit", () => reject(new Error("the HTTP ceiling server exited")));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    async close() {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill();
      await exited;
    },
  };
}
