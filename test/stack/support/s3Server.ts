/**
 * A real S3-compatible server for tests: s3rver on 127.0.0.1, a free port, its data in a temp directory that
 * stop() removes. s3rver accepts any credentials; use the returned ones.
 */
import { mkdtemp, rm } from "node:fs/promises";
import type { Server } from "node:http";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";

interface S3rverInstance {
  run(): Promise<{ address: string; port: number }>;
  close(): Promise<void>;
  httpServer?: Server;
}
type S3rverClass = new (options: Record<string, unknown>) => S3rverInstance;

export interface S3ServerHandle {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  directory: string;
  stop(): Promise<void>;
}

export async function startS3Server(): Promise<S3ServerHandle> {
  const S3rver = createRequire(import.meta.url)("s3rver") as S3rverClass;
  const directory = await mkdtemp(path.join(os.tmpdir(), "s3rver-"));
  const server = new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory });
  const { port } = await server.run();
  let stopped = false;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    accessKeyId: "S3RVER",
    secretAccessKey: "S3RVER",
    region: "us-east-1",
    directory,
    async stop() {
      if (stopped) return;
      stopped = true;
      server.httpServer?.closeAllConnections();
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
