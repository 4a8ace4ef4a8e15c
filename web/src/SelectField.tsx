import { useId } from 'react';

/**
 * A labelled select of `options` (each its own label). `empty` adds a first option of value ''
 * (`any`): then '' is one of the values `onChange` may give.
 */
export function SelectField<T extends string>({
  label,
  value,
  options,
  onChange,
  empty,
}: {
  label: string;
  value: T;
  options: readonly T[];
  onChange: (value: T) => void;
  empty?: string;
}) {
  const id = useId();
  return (
    <>
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value as T)}>
        {empty !== undefined && <option value="">{empty}</option>}
        {options.map((o) => (
          <option key={o}>{o}</option>
        ))}
      </select>
    </>
  );
}
