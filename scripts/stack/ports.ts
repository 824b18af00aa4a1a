/** Port checks: a taken default port fails with a message naming the port and the variable that moves it. */
import { once } from "node:events";
import net from "node:net";

/** Listens on host:port (0: any) and closes again; the port it got. Rejects when the port is taken. */
async function listenAndClose(port: number, host: string): Promise<number> {
  const server = net.createServer().listen(port, host);
  await once(server, "listening");
  const { port: got } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return got;
}

export const isPortFree = (port: number, host = "127.0.0.1"): Promise<boolean> =>
  listenAndClose(port, host).then(
    () => true,
    () => false,
  );

export async function assertPortFree(port: number, what: string, envVar: string, host = "127.0.0.1"): Promise<void> {
  if (!(await isPortFree(port, host))) {
    throw new Error(
      `Port ${port} (${what}) on ${host} is already in use. Set ${envVar} to a free port, e.g. ${envVar}=${port + 100}.`,
    );
  }
}

/**
 * A port free now, for tests (which always pick their own). Drawn below the OS's ephemeral range (32768 and up on
 * Linux), where outgoing connections take their local ports: a port the OS handed out as "free" could otherwise be
 * taken by some connection before the test's server binds it.
 */
export async function freePort(host = "127.0.0.1"): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (await isPortFree(port, host)) return port;
  }
}
