// Values turned into what the console shows or sends: times from inputs, enum lists, import problems.
import type { AdminCheckin } from '@portico/contract';
import { t } from './i18n.js';

/** `datetime-local` input value -> ISO instant (empty stays undefined). */
export function isoOf(local: string): string | undefined {
  return local ? new Date(local).toISOString() : undefined;
}

/**
 * Every value of a union from the contract, in display order: written as a record so that the compiler
 * refuses a list that misses a value or has one too many (the bundle takes no runtime code from the contract).
 */
export const valuesOf = <T extends string>(all: Record<T, true>) => Object.keys(all) as T[];

/** A row's problem from an import report: the field (without the `rows.N.` the row number says) and why. */
export function rowProblem(e: { path: string; message: string }): string {
  const field = e.path.replace(/^rows\.\d+\.?/, '');
  const why = /received undefined/.test(e.message) ? t('missing') : e.message;
  return field ? `${field}: ${why}` : why;
}

/** Hands a downloaded body to the browser as a file. */
export function saveFile(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** The check-in methods, in the order the console lists them. */
export const METHODS = valuesOf<AdminCheckin['method']>({ facial: true, qr: true, link: true, manual: true });
