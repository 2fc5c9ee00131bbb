/** Bounded selection of the k highest scores (a min-heap of size k), for scans over large galleries. */
export class TopK {
  private readonly scores: Float64Array;
  private readonly items: Int32Array;
  private count = 0;

  constructor(readonly k: number) {
    this.scores = new Float64Array(k);
    this.items = new Int32Array(k);
  }

  /** The score a new item must beat to enter (−Infinity until full). */
  get floor(): number {
    return this.count < this.k ? -Infinity : this.scores[0]!;
  }

  push(item: number, score: number): void {
    if (this.k === 0) return;
    if (this.count < this.k) {
      let i = this.count++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (this.scores[parent]! <= score) break;
        this.scores[i] = this.scores[parent]!;
        this.items[i] = this.items[parent]!;
        i = parent;
      }
      this.scores[i] = score;
      this.items[i] = item;
      return;
    }
    if (score <= this.scores[0]!) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= this.k) break;
      const r = l + 1;
      const c = r < this.k && this.scores[r]! < this.scores[l]! ? r : l;
      if (this.scores[c]! >= score) break;
      this.scores[i] = this.scores[c]!;
      this.items[i] = this.items[c]!;
      i = c;
    }
    this.scores[i] = score;
    this.items[i] = item;
  }

  /** Items with scores, best first. */
  sorted(): Array<{ item: number; score: number }> {
    const out: Array<{ item: number; score: number }> = [];
    for (let i = 0; i < this.count; i++) out.push({ item: this.items[i]!, score: this.scores[i]! });
    return out.sort((a, b) => b.score - a.score);
  }
}
