/** The machine a benchmark ran on, as each result file records it. */
import os from "node:os";

export interface MachineFacts {
  cpus: number;
  model: string | undefined;
  memoryGiB: number;
  node: string;
  /** The load averages when the benchmark ended: how quiet the machine was. */
  loadavg: number[];
}

/** This machine's cores, CPU model, memory, the Node.js that runs the benchmark, and its load now. */
export function machineFacts(): MachineFacts {
  return {
    cpus: os.cpus().length,
    model: os.cpus()[0]?.model,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    loadavg: os.loadavg(),
  };
}
