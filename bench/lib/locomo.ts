import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

/** The LoCoMo data set beside the repository: corpus.jsonl (dialogue turns) and queries.jsonl. */
export const LOCOMO_DIR = fileURLToPath(new URL('../../../shared/bench/locomo/', import.meta.url));

/** One dialogue turn of corpus.jsonl. */
export interface Turn {
  id: string;
  conv: string;
  content: string;
}

/** One question of queries.jsonl, with the ids of the turns that answer it. */
export interface Question {
  qid: string;
  conv: string;
  question: string;
  category: number;
  evidence: string[];
}

/** The records of a JSON-lines file (blank lines skipped). */
export async function readJsonl<T>(file: string): Promise<T[]> {
  const text = await readFile(file, 'utf8');
  return text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as T);
}

/** The LoCoMo turns and questions. */
export async function readLocomo(): Promise<{ turns: Turn[]; questions: Question[] }> {
  return {
    turns: await readJsonl<Turn>(`${LOCOMO_DIR}corpus.jsonl`),
    questions: await readJsonl<Question>(`${LOCOMO_DIR}queries.jsonl`),
  };
}

const STOP_WORDS = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between both but by ' +
    'can did do does doing down during each few for from further had has have having he her here hers herself him himself his ' +
    'how i if in into is it its itself just me more most my myself no nor not now of off on once only or other our ours ' +
    'ourselves out over own same she should so some such than that the their theirs them themselves then there these they ' +
    'this those through to too under until up very was we were what when where which while who whom why will with you your ' +
    'yours yourself yourselves'
  ).split(' '),
);

/**
 * Project `copy`'s vocabulary: every word but the stop words gets a suffix of its own, so that copies
 * of the corpus in 17 projects talk about different things (copy 0 is the text as it is).
 */
export function dialect(text: string, copy: number): string {
  if (copy === 0) return text;
  const suffix = String.fromCharCode(97 + (copy % 26), 97 + (Math.floor(copy / 26) % 26), 122);
  return text.replace(/[A-Za-z]{2,}/g, (w) => (STOP_WORDS.has(w.toLowerCase()) ? w : `${w}${suffix}`));
}
