/** Code graphs: repos, symbols, nodes, impact and context packets. `args` are the hash route's segments after `graphs`. */
export function Graphs({ args }: { args: string[] }) {
  return (
    <section aria-labelledby="graphs-title">
      <h1 id="graphs-title">Code graphs</h1>
      <p className="status">{args.join('/')}</p>
    </section>
  );
}
