/**
 * Structured logs (pino). Secrets are redacted by key wherever they appear, and request logs carry only the
 * method, route, status and timing: never headers or bodies.
 */
import pino, { type Logger } from "pino";

const REDACTED_KEYS = [
  "authorization",
  "password",
  "secret",
  "apiKey",
  "api_key",
  "apiSecret",
  "privateKey",
  "private_key",
  "masterKey",
  "client_secret",
  "access_token",
  "token",
  "encrypted_key",
  "raw_tx",
  "x-api-key",
  "x-signature",
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  const paths = REDACTED_KEYS.flatMap((key) => [key, `*.${key}`, `*.*.${key}`]);
  return pino(
    {
      level,
      base: { service: "licence-api", pid: process.pid },
      redact: { paths, censor: "[REDACTED]" },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}
