/** Tells every listener; one that throws does not keep the others from hearing, nor breaks the teller. */
export function tellAll<T>(listeners: Iterable<(value: T) => void>, value: T): void {
  for (const l of listeners) {
    try {
      l(value);
    } catch {
      // A listener's failure is its own.
    }
  }
}
