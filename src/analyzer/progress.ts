/** Where an analysis is: `listing` files, `parsing` them, `resolving` references, `done`. */
export type AnalysisPhase = 'listing' | 'parsing' | 'resolving' | 'done';

export interface AnalysisProgress {
  phase: AnalysisPhase;
  /** Files of the current phase done so far, over all languages. */
  filesDone: number;
  filesTotal: number;
  elapsedMs: number;
}

/** Counts files per phase over every language analyzer and hands the totals to `onProgress`. */
export interface ProgressReporter {
  /** `done` files of the current language are through `phase`. */
  step(phase: AnalysisPhase, done: number): void;
}

/**
 * A reporter for one language at a time: `offset` files of earlier languages are already through
 * every phase, so the totals stay over all files.
 */
export function progressFor(
  onProgress: ((p: AnalysisProgress) => void) | undefined,
  started: number,
  filesTotal: number,
  offset: number,
): ProgressReporter {
  return {
    step(phase, done) {
      onProgress?.({ phase, filesDone: offset + done, filesTotal, elapsedMs: Math.round(performance.now() - started) });
    },
  };
}
