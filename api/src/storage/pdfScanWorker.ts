/**
 * The PDF scan's thread (started by pdfActiveContent.ts for each upload): reads the file, scans it within the limits
 * it is given, and posts the findings. Its heap is limited and it is terminated when it runs too long, so neither a
 * bug nor a hostile file in the scan can hold the API's event loop or memory.
 */
import { readFileSync } from "node:fs";
import { parentPort, workerData } from "node:worker_threads";
import { scanPdfBytes, type ScanLimits } from "./pdfActiveContent.ts";

const { filePath, limits } = workerData as { filePath: string; limits: ScanLimits };
parentPort!.postMessage(scanPdfBytes(readFileSync(filePath), limits));
