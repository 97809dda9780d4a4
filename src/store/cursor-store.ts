/** Named positions kept across restarts (a relay's sync position). */
export interface CursorStore {
  /** The cursor's value, or undefined if never set. */
  get(name: string): Promise<string | undefined>;
  set(name: string, value: string): Promise<void>;
}
