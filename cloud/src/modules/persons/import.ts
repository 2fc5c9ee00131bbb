// Persons from an uploaded spreadsheet (CSV or XLSX, read by infra/spreadsheet): the header row mapped to
// person fields, then the same row-by-row import as JSON rows, each result naming its spreadsheet row.
import { IMPORT_MAX_ROWS, type ImportPersonRow, type ImportPersonsResult } from '@portico/contract';
import { invalidFields } from '../../http/errors.js';
import type { UploadedFile } from '../../http/upload.js';
import { readSpreadsheet } from '../../infra/spreadsheet/read.js';
import type { PersonContext } from './service.js';

type Field = keyof ImportPersonRow;

/** Header spellings (lower-case, letters and digits only, see `headerKey`) -> field. */
const HEADERS: Record<string, Field> = {
  name: 'name',
  fullname: 'name',
  nome: 'name',
  nomecompleto: 'name',
  nombre: 'name',
  document: 'document',
  documentnumber: 'document',
  documento: 'document',
  doc: 'document',
  idnumber: 'document',
  cpf: 'document',
  rg: 'document',
  externalid: 'externalId',
  idexterno: 'externalId',
  codigoexterno: 'externalId',
  employeeid: 'externalId',
  matricula: 'externalId',
  email: 'email',
  emailaddress: 'email',
  mail: 'email',
  phone: 'phone',
  phonenumber: 'phone',
  mobile: 'phone',
  telefone: 'phone',
  celular: 'phone',
  telefono: 'phone',
  birthdate: 'birthDate',
  dateofbirth: 'birthDate',
  dob: 'birthDate',
  nascimento: 'birthDate',
  datanascimento: 'birthDate',
  datadenascimento: 'birthDate',
};

export async function importPersonsFile(
  persons: { importRows(ctx: PersonContext, rows: unknown[]): Promise<ImportPersonsResult> },
  ctx: PersonContext,
  upload: UploadedFile,
): Promise<ImportPersonsResult> {
  const sheet = await readSpreadsheet(upload, { maxDataRows: IMPORT_MAX_ROWS, spellings: HEADERS });
  const missing = [
    sheet.fields.has('name') ? null : 'a name column (name, full name, nome)',
    sheet.fields.has('document') ? null : 'a document column (document, documento, CPF)',
  ].filter((m): m is string => m !== null);
  if (missing.length > 0) {
    throw invalidFields([{ path: 'body.file', message: `the header row needs ${missing.join(' and ')}` }]);
  }
  if (sheet.records.length === 0) {
    throw invalidFields([{ path: 'body.file', message: 'the file has no rows below the header' }]);
  }
  const result = await persons.importRows(
    ctx,
    sheet.records.map((r) => r.values),
  );
  return {
    ...result,
    results: result.results.map((r) => ({ ...r, row: sheet.records[r.index]!.row })),
  };
}
