export function format(...parts) {
  return parts.join(" ");
}
