/**
 * Development only: secrets generated once and kept under DATA_DIR/secrets (mode 0600), so a second `npm start`
 * finds the same keys. Production never reaches this (config requires the secrets to be set).
 */
import { randomBytes } from "node:crypto";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";

export async function developmentSecret(dataDir: string, name: string, bytes = 32): Promise<string> {
  const dir = path.join(dataDir, "secrets");
  const file = path.join(dir, name);
  try {
    return (await readFile(file, "utf8")).trim();
  } catch {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const value = `0x${randomBytes(bytes).toString("hex")}`;
    await writeFile(file, value + "\n", { mode: 0o600, flag: "wx" }).catch(async (error) => {
      if (error.code !== "EEXIST") throw error;
    });
    await chmod(file, 0o600);
    return (await readFile(file, "utf8")).trim();
  }
}
