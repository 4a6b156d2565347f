// The contract between the shell (main.ts) and each view module.
export interface View {
  /** The view's root element; the shell mounts it once. */
  el: HTMLElement;
  /** Title for document.title. */
  title: string;
  /** Called with the route segments after the view name (#/runs/<id> → [id]). */
  route(parts: string[]): void;
  /** Unsubscribes from events and timers. */
  destroy(): void;
}
