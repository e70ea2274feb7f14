/** A view the router mounts: it owns its timers and streams until `destroy`. */
export interface View {
  destroy(): void;
}
