/** Document storage module (STUB: replaced by the implementation). */
import type { Config } from "../config.ts";
import type { RouteDefinition } from "../http/routeTable.ts";
import type { Readable } from "node:stream";

export interface DocumentStore {
  readonly backend: "local" | "s3";
  put(key: string, sourceFile: string, contentType: string): Promise<void>;
  read(key: string): Promise<Readable>;
  exists(key: string): Promise<boolean>;
  delete(key: string): Promise<void>;
  signedUrl(key: string, expiresInSeconds: number, downloadName?: string): Promise<{ url: string; expiresAt: Date }>;
}

export async function createDocumentStore(_config: Config): Promise<DocumentStore> {
  const missing = async (): Promise<never> => {
    throw new Error("document storage not implemented yet");
  };
  return { backend: "local", put: missing, read: missing, exists: missing, delete: missing, signedUrl: missing };
}

export function fileRoutes(_store: DocumentStore, _config: Config): RouteDefinition[] {
  return [];
}
