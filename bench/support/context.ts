import type { Results } from './results';

export interface BenchContext {
  results: Results;
  /** --quick: every benchmark briefly (figures are indicative only). */
  quick: boolean;
  /** --cpu-prof[=dir]: servers write V8 CPU profiles there. */
  cpuProfDir: string | null;
}
