/**
 * The API's Node HTTP server with its time limits set explicitly rather than left to Node's defaults: a client
 * that sends its headers or its body too slowly (slowloris) is answered 408 and disconnected, so it cannot hold a
 * connection and its memory indefinitely. The check runs every `checkEveryMs`.
 *
 * What Node's HTTP parser refuses never reaches the app; Node would answer it with a bare status line. It gets the
 * API's error shape here instead: 431 past the 16 KiB limit on the request line and headers, 408 when too slow,
 * 400 for anything else that is not HTTP.
 */
import { STATUS_CODES, createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";

export interface ServerTimeouts {
  /** Time to receive the headers (the headers timeout). */
  headersMs: number;
  /** Time to receive the whole request, body included: a 10 MB upload on a slow link (the request timeout). */
  requestMs: number;
  /** How often connections are checked against both. */
  checkEveryMs?: number;
}

export function createHttpServer(
  handle: (request: IncomingMessage, response: ServerResponse) => void,
  timeouts: ServerTimeouts,
): Server {
  const server = createServer(
    {
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      connectionsCheckingInterval: timeouts.checkEveryMs ?? Math.min(5_000, timeouts.headersMs),
    },
    handle,
  );
  server.on("clientError", answerClientError);
  return server;
}

const CLIENT_ERRORS: Record<string, [status: number, code: string, message: string]> = {
  HPE_HEADER_OVERFLOW: [431, "HEADERS_TOO_LARGE", "The request line and headers are larger than 16 KiB"],
  ERR_HTTP_REQUEST_TIMEOUT: [408, "REQUEST_TIMEOUT", "The request did not arrive in time"],
};

function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, code, message] = CLIENT_ERRORS[error.code ?? ""] ?? [
    400,
    "BAD_REQUEST",
    "The request is not valid HTTP/1.1",
  ];
  const body = JSON.stringify({ code, message });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
