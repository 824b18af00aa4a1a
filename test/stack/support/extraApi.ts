import path from "node:path";
import { spawnNode, type ManagedProcess } from "../../../scripts/stack/managedProcess.ts";
import { freePort } from "../../../scripts/stack/ports.ts";
import { REPO_ROOT } from "../../../scripts/stack/stack.ts";
import { current } from "./stackFixture.ts";

/** Another API process on the stack's database and chain, with extra settings (like scripts/stack/stack.ts starts it). */
export interface ExtraApi {
  url: string;
  stop(): Promise<void>;
}
export async function startApiProcess(name: string, env: Record<string, string>): Promise<ExtraApi> {
  const port = await freePort();
  const apiUrl = `http://127.0.0.1:${port}`;
  const child: ManagedProcess = await spawnNode({
    name,
    script: path.join(REPO_ROOT, "api", "src", "main.ts"),
    env: {
      ...current().env,
      PORT: String(port),
      PUBLIC_BASE_URL: apiUrl,
      JWT_ISSUER: current().config.jwtIssuer, // tokens of all the processes are interchangeable
      ...env,
    },
    cwd: REPO_ROOT,
    logDir: path.join(current().config.dataDir, "logs"),
    ipc: true,
  });
  await new Promise<void>((resolve, reject) => {
    child.child.on("message", (message: { type?: string }) => message?.type === "listening" && resolve());
    child.exited.then(() => reject(new Error(`${name} exited during start-up:\n${child.tail()}`)));
  });
  return { url: apiUrl, stop: () => child.stop() };
}
