/** Tasks board of one project. */
export function Board({ args }: { args: string[] }) {
  return (
    <section aria-labelledby="board-title">
      <h1 id="board-title">Tasks</h1>
      <p className="status">{args.join('/')}</p>
    </section>
  );
}
