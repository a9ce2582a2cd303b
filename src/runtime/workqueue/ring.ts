/**
 * A growable first-in first-out ring buffer.
 *
 * Guarantees: `push` and `shift` are O(1) amortised (the backing array doubles when full and
 * never shrinks), and elements come out in the order they went in. Unlike `Array.prototype.shift`
 * on a large array, removing from the front never moves the remaining elements. Slots are cleared
 * when vacated, so the buffer does not keep removed elements alive.
 */
export class Ring<T> {
  #slots: (T | undefined)[];
  /** Capacity minus one; capacity is always a power of two so `& #mask` wraps an index. */
  #mask: number;
  /** Index of the oldest element. */
  #head = 0;
  #size = 0;

  /**
   * @param initialCapacity - rounded up to a power of two.
   * @default 16
   */
  constructor(initialCapacity = 16) {
    let capacity = 1;
    while (capacity < initialCapacity) capacity *= 2;
    this.#slots = new Array<T | undefined>(capacity).fill(undefined);
    this.#mask = capacity - 1;
  }

  /** Number of elements held. */
  get size(): number {
    return this.#size;
  }

  /** Appends `value` at the back. */
  push(value: T): void {
    if (this.#size > this.#mask) this.#grow();
    this.#slots[(this.#head + this.#size) & this.#mask] = value;
    this.#size++;
  }

  /** Removes and returns the front element, or `undefined` when empty. */
  shift(): T | undefined {
    if (this.#size === 0) return undefined;
    const head = this.#head;
    const value = this.#slots[head];
    this.#slots[head] = undefined;
    this.#head = (head + 1) & this.#mask;
    this.#size--;
    return value;
  }

  /** Removes every element. */
  clear(): void {
    this.#slots.fill(undefined);
    this.#head = 0;
    this.#size = 0;
  }

  #grow(): void {
    const old = this.#slots;
    const capacity = old.length * 2;
    const slots = new Array<T | undefined>(capacity).fill(undefined);
    for (let i = 0; i < this.#size; i++) slots[i] = old[(this.#head + i) & this.#mask];
    this.#slots = slots;
    this.#mask = capacity - 1;
    this.#head = 0;
  }
}
