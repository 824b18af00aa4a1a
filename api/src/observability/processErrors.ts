/**
 * A promise rejection nobody handled (a library's async listener that throws, say) is logged with its error and the
 * process keeps serving, instead of Node's default of ending the process: one bad request must not take the API (and
 * every request in flight) down with it (review M3).
 */
import type { Logger } from "pino";

export function logUnhandledRejections(logger: Logger): void {
  process.on("unhandledRejection", (reason) => {
    logger.error(
      { err: reason instanceof Error ? reason : { message: String(reason) } },
      "unhandled promise rejection",
    );
  });
}
