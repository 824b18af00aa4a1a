/**
 * `npm start`: launches the supervisor (scripts/stack/supervisor.ts) in a process group of its own and passes it one
 * stop order on Ctrl-C. Ctrl-C sends SIGINT to the terminal's whole foreground group: there, Postgres, anvil, Ponder
 * and the APIs would die at once, before the supervisor could stop them in order and save the chain.
 * package.json runs `exec node scripts/start.ts`: a non-interactive sh between npm and this launcher would die of the
 * SIGINT, and npm would return the prompt before "Stopped.".
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
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const)
  process.on(signal, () => {
    if (!forwarded && child.exitCode === null) child.kill(signal === "SIGHUP" ? "SIGTERM" : signal);
    forwarded = true;
  });
child.once("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
