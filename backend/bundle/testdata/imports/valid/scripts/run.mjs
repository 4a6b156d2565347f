// Entrypoint of a well-formed bundle: only Node built-ins and declared files.
// import "lodash";  <- commented out, so not an import
import { readFile } from "node:fs/promises";
import path from "path";
import { createHash } from "crypto";
import { ReadableStream } from "stream/web";
import { format } from "./lib/util.mjs";
export * from "./lib/util.mjs";

const note = 'import("left-pad") inside a string is not an import';

export async function main(input) {
  const { count } = await import("./lib/count.cjs");
  return format(count(input), path.sep, createHash, readFile, ReadableStream, note);
}
