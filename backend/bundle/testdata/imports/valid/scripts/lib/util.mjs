import { inspect } from "node:util";

export function format(...parts) {
  return parts.map((p) => inspect(p)).join(" ");
}
