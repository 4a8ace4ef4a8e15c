/**
 * The text of the string or key being read, from the tokeniser's pieces (256 characters at most
 * each, far fewer where escapes are dense). Joined into flat strings every PIECES_PER_GROUP
 * pieces: accumulating them one by one would hold a string as millions of small heap objects,
 * about eight times its size.
 */
export class TextPieces {
  private static readonly PIECES_PER_GROUP = 1024;
  private groups: string[] = [];
  private pieces: string[] = [];

  start(): void {
    this.groups = [];
    this.pieces = [];
  }

  add(piece: string): void {
    this.pieces.push(piece);
    if (this.pieces.length >= TextPieces.PIECES_PER_GROUP) {
      this.groups.push(this.pieces.join(''));
      this.pieces = [];
    }
  }

  end(): string {
    const tail = this.pieces.length === 1 ? this.pieces[0]! : this.pieces.join('');
    const whole = this.groups.length === 0 ? tail : [...this.groups, tail].join('');
    this.groups = [];
    this.pieces = [];
    return whole;
  }
}
