import { useId } from 'react';

/** A labelled, required search box (at most 2000 characters, the API's limit on a query). */
export function SearchField({
  label,
  value,
  onChange,
  placeholder,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  placeholder?: string;
}) {
  const id = useId();
  return (
    <>
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        type="search"
        value={value}
        onChange={(e) => onChange(e.target.value)}
        required
        maxLength={2000}
        placeholder={placeholder}
      />
    </>
  );
}
