import { Prisma } from '../../generated/prisma/client.js';
// Prisma's `contains`/`startsWith` put the caller's text into a LIKE pattern as is, so `%` and `_` in a
// search would act as wildcards (`q=%` matching everyone). Backslash is PostgreSQL's LIKE escape.
export const likeLiteral = (text: string): string => text.replace(/[\\%_]/g, '\\$&');

// Accents and case folded alike in SQL and in JS, on PostgreSQL and PGlite, without the `unaccent`
// extension (not in every installation): a table of Latin letters with diacritics mapped to their base
// letter, then lower(). "João", "JOÃO" and "joao" fold to "joao".
const ACCENTED = 'ÀÁÂÃÄÅàáâãäåÇçÈÉÊËèéêëÌÍÎÏìíîïÑñÒÓÔÕÖØòóôõöøÙÚÛÜùúûüÝýÿ';
const PLAIN = 'AAAAAAaaaaaaCcEEEEeeeeIIIIiiiiNnOOOOOOooooooUUUUuuuuYyy';
const FOLD = new Map([...ACCENTED].map((c, i) => [c, PLAIN[i]!]));

/** `text` folded as `foldedSql` folds a column. */
export const foldText = (text: string): string =>
  [...text]
    .map((c) => FOLD.get(c) ?? c)
    .join('')
    .toLowerCase();

/** SQL of `expr` with accents and case folded (compare with `foldText` of the caller's text). */
export const foldedSql = (expr: Prisma.Sql): Prisma.Sql =>
  Prisma.sql`lower(translate(${expr}, ${ACCENTED}, ${PLAIN}))`;

/** A `LIKE` pattern that finds `text` anywhere, its wildcards taken literally. */
export const containsPattern = (text: string): string => `%${likeLiteral(text)}%`;
