/**
 * The API's Node HTTP server with its time limits set explicitly rather than left to Node's defaults (review M3):
 * a client that sends its headers or its body too slowly (slowloris) is answered 408 and disconnected, so it cannot
 * hold a connection and its memory indefinitely. The check runs every `checkEveryMs`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";

export interface ServerTimeouts {
  /** Time to receive the headers (HEADERS_TIMEOUT_MS). */
  headersMs: number;
  /** Time to receive the whole request, body included: a 10 MB upload on a slow link (REQUEST_TIMEOUT_MS). */
  requestMs: number;
  /** How often connections are checked against both. */
  checkEveryMs?: number;
}

export function createHttpServer(
  handle: (request: IncomingMessage, response: ServerResponse) => void,
  timeouts: ServerTimeouts,
): Server {
  return createServer(
    {
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      connectionsCheckingInterval: timeouts.checkEveryMs ?? Math.min(5_000, timeouts.headersMs),
    },
    handle,
  );
}
