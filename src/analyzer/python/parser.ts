import type { Parser } from 'web-tree-sitter';
import { treeSitterParser } from '../tree-sitter.js';

/** A tree-sitter parser for Python (treeSitterParser); the caller must `delete()` it. */
export const pythonParser = (): Promise<Parser> => treeSitterParser('python');
