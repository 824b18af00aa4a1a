/**
 * A real webhook receiver on 127.0.0.1 for the stack tests. It records every request, verifies each signature with
 * its own HMAC code (constant-time) and with the Standard Webhooks library, and answers what the test sets: a
 * status, a redirect, or no listener at all (`down()`, then `up()` again on the same port). It can hold each answer
 * for a while (`hold(ms)`) and counts the requests it is answering at once (`mostAtOnce()`).
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  json: any;
  /** Both checks passed with the secret registered for this path (undefined: no secret known). */
  verified?: boolean;
  at: number;
  /** What the receiver answered. */
  status: number;
}

export function verifySignatures(secret: string, body: string, headers: http.IncomingHttpHeaders): boolean {
  const expected = Buffer.from(`sha256=${createHmac("sha256", secret).update(body).digest("hex")}`);
  const given = Buffer.from(String(headers["x-webhook-signature"] ?? ""));
  const ours = given.length === expected.length && timingSafeEqual(given, expected);
  let library = false;
  try {
    new Webhook(secret, { format: "raw" }).verify(body, headers as Record<string, string>);
    library = true;
  } catch {
    library = false;
  }
  return ours && library;
}

/** `host`: another loopback address (e.g. 127.0.0.2) is another host to the API. */
export async function startReceiver(secrets: Record<string, string> = {}, host = "127.0.0.1") {
  const received: Received[] = [];
  let status = 200;
  let holdMs = 0;
  let atOnce = 0;
  let mostAtOnce = 0;
  const server = http.createServer((req, res) => {
    mostAtOnce = Math.max(mostAtOnce, ++atOnce);
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      const path = req.url ?? "";
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      const secret = secrets[path];
      received.push({
        path,
        headers: req.headers,
        body,
        json,
        verified: secret ? verifySignatures(secret, body, req.headers) : undefined,
        at: Date.now(),
        status,
      });
      const answer = () => {
        atOnce--;
        if (status === 302) res.writeHead(302, { location: "/elsewhere" }).end();
        else res.writeHead(status).end("ok");
      };
      if (holdMs > 0) setTimeout(answer, holdMs);
      else answer();
    });
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => resolve());
    });
  await listen(0);
  const port = (server.address() as AddressInfo).port;
  const base = `http://${host}:${port}`;
  return {
    base,
    url: `${base}/hooks`,
    received,
    /** Requests to one path. */
    at: (path: string) => received.filter((r) => r.path === path),
    secrets,
    answer: (code: number) => (status = code),
    /** Holds each answer this long (0: answers at once). */
    hold: (ms: number) => (holdMs = ms),
    /** The most requests it was answering at the same time, since it started or since `resetMostAtOnce()`. */
    mostAtOnce: () => mostAtOnce,
    resetMostAtOnce: () => (mostAtOnce = atOnce),
    /** Stops listening: deliveries get connection refused. */
    down: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
    up: () => listen(port),
    stop: () =>
      new Promise<void>((resolve) => {
        if (!server.listening) return resolve();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
export type Receiver = Awaited<ReturnType<typeof startReceiver>>;
