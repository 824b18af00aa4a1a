/** The local storage backend's signed downloads: `GET /api/v1/files/{token}`. */
import { z } from "zod/v4";
import type { Config } from "../config.ts";
import { AppError, notFound } from "../domain/errors.ts";
import { routeGroup, ErrorSchema, type RouteDefinition } from "../http/routeTable.ts";
import { LocalDocumentStore, type DocumentStore } from "../storage/index.ts";
import { contentDisposition } from "../storage/signedUrl.ts";

const route = routeGroup({ tags: ["Files"] });

/**
 * `GET /api/v1/files/{token}`: the local backend's signed downloads. Public: the signature is the credential.
 * A tampered, incomplete or expired URL → 403 FORBIDDEN; a deleted file → 404; with the S3 backend → 404 (S3 serves
 * its own presigned URLs).
 */
export function fileRoutes(store: DocumentStore, _config: Config): RouteDefinition[] {
  return [
    route.get("/files/:token", "downloadFile", {
      summary: "Download a stored document through a signed URL",
      description:
        "Served only with local storage; the URL comes from an API response and expires. The response has the document's stored content type and `Content-Disposition: attachment`.",
      access: [{ kind: "public" }],
      params: z.object({ token: z.string() }),
      query: z.object({
        // Anything malformed (missing, repeated) becomes undefined, so it fails the signature check: 403, not 400.
        expires: z
          .string()
          .optional()
          .catch(undefined)
          .meta({ description: "Unix time (seconds) after which the URL is refused" }),
        name: z.string().optional().catch(undefined).meta({ description: "Download file name" }),
        signature: z
          .string()
          .optional()
          .catch(undefined)
          .meta({ description: "HMAC-SHA256 (hex) of the key, expiry and name" }),
      }),
      responses: {
        200: {
          description: "The file's bytes",
          contentType: "application/octet-stream",
          schema: z.string().meta({ format: "binary" }),
        },
        403: { description: "Invalid or expired link", schema: ErrorSchema },
        404: { description: "No such file (or storage is not local)", schema: ErrorSchema },
      },
      handler: async ({ params, query, ctx }) => {
        if (!(store instanceof LocalDocumentStore)) throw notFound("File");
        const check = store.verifyUrl(params.token, query);
        if (!check.ok) {
          throw new AppError(
            403,
            "FORBIDDEN",
            check.reason === "EXPIRED" ? "This download link has expired" : "This download link is invalid",
          );
        }
        const file = await store.open(check.key);
        const headers = {
          "Content-Type": file.contentType,
          "Content-Length": String(file.size),
          "Content-Disposition": contentDisposition(check.downloadName),
          "X-Content-Type-Options": "nosniff",
          "Cache-Control": "private, no-store",
        };
        // Koa never reads (nor closes) a HEAD response's body stream: close the file now.
        if (ctx.method === "HEAD") {
          file.stream.destroy();
          return { headers };
        }
        return { body: file.stream, headers };
      },
    }),
  ];
}
