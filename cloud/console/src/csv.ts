// Reading a CSV file in the browser for the persons import (the API takes rows as JSON): RFC 4180
// quoting, comma or semicolon (whichever the header line has more of), the first row as field names.
export function parseCsv(text: string): Record<string, string>[] {
  const body = text.replace(/^\uFEFF/, '');
  const firstLine = body.split(/\r?\n/, 1)[0] ?? '';
  const sep = (firstLine.match(/;/g)?.length ?? 0) > (firstLine.match(/,/g)?.length ?? 0) ? ';' : ',';
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (quoted) {
      if (c === '"' && body[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === sep) {
      row.push(cell);
      cell = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && body[i + 1] === '\n') i++;
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
    } else cell += c;
  }
  if (cell !== '' || row.length > 0) rows.push([...row, cell]);
  const [header, ...data] = rows.filter((r) => r.some((v) => v.trim() !== ''));
  if (!header) return [];
  const names = header.map((h) => h.trim());
  return data.map((r) =>
    Object.fromEntries(
      names.flatMap((n, i) => (n && r[i] !== undefined && r[i]!.trim() !== '' ? [[n, r[i]!.trim()]] : [])),
    ),
  );
}
