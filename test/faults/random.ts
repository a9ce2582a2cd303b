/** A seeded random source (mulberry32), so a failing fault run can be replayed with FAULTS_SEED. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The seed of this run: FAULTS_SEED, else one from the clock (printed by the cases). */
export const seed = Number(process.env.FAULTS_SEED ?? Date.now() % 1_000_000);
