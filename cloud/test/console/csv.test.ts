// The console's CSV reader for the persons import (runs in the browser; pure, so tested here).
import { describe, expect, it } from 'vitest';
import { parseCsv } from '../../console/src/csv.js';

describe('console CSV reader', () => {
  it('reads the header row as field names and skips empty cells and blank lines', () => {
    expect(parseCsv('name,document,email\r\nAna,1,ana@example.com\r\n\r\nBruno,2,\n')).toEqual([
      { name: 'Ana', document: '1', email: 'ana@example.com' },
      { name: 'Bruno', document: '2' },
    ]);
  });

  it('takes semicolons when the header has more of them (spreadsheets in Brazilian Portuguese)', () => {
    expect(parseCsv('\uFEFFname;document\nJoão, filho;3\n')).toEqual([
      { name: 'João, filho', document: '3' },
    ]);
  });

  it('keeps separators, quotes and line breaks inside quoted cells', () => {
    expect(parseCsv('name,document\n"Lobo, Rita ""RL""",4\n"two\nlines",5')).toEqual([
      { name: 'Lobo, Rita "RL"', document: '4' },
      { name: 'two\nlines', document: '5' },
    ]);
  });

  it('answers no rows for an empty file or a header alone', () => {
    expect(parseCsv('')).toEqual([]);
    expect(parseCsv('name,document\n')).toEqual([]);
  });
});
