import _ from "lodash";
import { format } from "./lib/util";
import secrets from "../../secrets.mjs";
export * from "./lib/extra.mjs";

export async function main(input) {
  const mod = await import(`./plugins/${input.name}.mjs`);
  return format(_, secrets, mod);
}
