// Prisma's `contains`/`startsWith` put the caller's text into a LIKE pattern as is, so `%` and `_` in a
// search would act as wildcards (`q=%` matching everyone). Backslash is PostgreSQL's LIKE escape.
export const likeLiteral = (text: string): string => text.replace(/[\\%_]/g, '\\$&');
