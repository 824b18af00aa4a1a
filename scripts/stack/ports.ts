/** Port checks: a taken default port fails with a message naming the port and the variable that moves it. */
import net from "node:net";

export function isPortFree(port: number, host = "127.0.0.1"): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

export async function assertPortFree(port: number, what: string, envVar: string, host = "127.0.0.1"): Promise<void> {
  if (!(await isPortFree(port, host))) {
    throw new Error(
      `Port ${port} (${what}) on ${host} is already in use. Set ${envVar} to a free port, e.g. ${envVar}=${port + 100}.`,
    );
  }
}

/** A port the OS reports free now (for tests, which always pick their own). */
export function freePort(host = "127.0.0.1"): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, host, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
