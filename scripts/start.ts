/**
 * `npm start`: launches the stack's supervisor (scripts/stack/supervisor.ts) in a process group of its own and
 * passes it one stop order on Ctrl-C.
 *
 * Ctrl-C in a terminal sends SIGINT to the whole foreground process group. Were Postgres, anvil, Ponder and the
 * APIs in it, they would all die at once, before the supervisor could stop them in order and save the chain (and it
 * would take the indexer's exit for a crash). In its own group only this launcher (and npm) get the signal.
 *
 * package.json runs it as `exec node scripts/start.ts`: npm runs scripts through `sh -c`, and a non-interactive sh
 * (dash) dies of the terminal's SIGINT while it waits; npm then exits 130 at once, the prompt returns while the stack
 * is still stopping and "Stopped." comes after it. With exec no shell stands between npm and this launcher.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const supervisor = path.join(path.dirname(fileURLToPath(import.meta.url)), "stack", "supervisor.ts");
const child = spawn(process.execPath, [supervisor, ...process.argv.slice(2)], {
  detached: true,
  stdio: ["ignore", "inherit", "inherit", "ipc"],
});

// npm forwards the terminal's SIGINT as well: the supervisor gets one order, whoever sends it how many times.
let forwarded = false;
const forward = (signal: NodeJS.Signals) => {
  if (forwarded || child.exitCode !== null) return;
  forwarded = true;
  child.kill(signal);
};
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const)
  process.on(signal, () => forward(signal === "SIGHUP" ? "SIGTERM" : signal));
child.once("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
