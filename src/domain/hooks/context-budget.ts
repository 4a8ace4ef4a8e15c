/** Claude Code cuts a hook's additionalContext past this many characters: never sent longer. */
export const CLAUDE_CODE_CONTEXT_CAP = 10_000;

/** Characters per token, for budgets: the usual rule of thumb for English and code. */
export const CHARS_PER_TOKEN = 4;

/**
 * The lines of one hook answer within a budget of tokens (chars / 4, never over Claude Code's
 * 10,000-character cap): a line that does not fit is left out, whole, and later shorter ones may
 * still fit; sections without a line that fits are left out with their heading.
 */
export class ContextBudget {
  private readonly maxChars: number;
  private readonly parts: string[] = [];
  private used = 0;
  private pendingHeading: string | undefined;

  /** `intro` opens the text (its first line), counted in the budget. */
  constructor(
    tokens: number,
    private readonly intro: string,
  ) {
    this.maxChars = Math.min(CLAUDE_CODE_CONTEXT_CAP, Math.max(0, Math.floor(tokens * CHARS_PER_TOKEN)));
    this.used = intro.length;
  }

  /** A heading, written only if a line follows it. */
  heading(text: string): void {
    this.pendingHeading = text;
  }

  /** Adds the line if it fits (with its heading, when it is the section's first); whether it did. */
  add(line: string): boolean {
    const heading = this.pendingHeading === undefined ? '' : `${this.pendingHeading}\n`;
    const cost = heading.length + line.length + 1;
    if (this.used + cost > this.maxChars) return false;
    if (heading) this.parts.push(this.pendingHeading!);
    this.pendingHeading = undefined;
    this.parts.push(line);
    this.used += cost;
    return true;
  }

  /** Whether nothing was added. */
  get empty(): boolean {
    return this.parts.length === 0;
  }

  /** The intro and the lines that fit; empty when none did. */
  text(): string {
    return this.parts.length === 0 ? '' : [this.intro, ...this.parts].join('\n');
  }
}
