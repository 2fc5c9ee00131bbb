// The resource-shaped calls of both SDKs (`portico.persons.create(…)`, `portico.persons.list(…)`),
// generated from the service's OpenAPI document and one table, RESOURCES, naming each call's
// operationId. Both SDKs are written from the same table and the same document by the same rules, so
// they cannot drift apart: a call added here appears in TypeScript and Python at once, and
// test/generated.test.ts fails when either generated file differs from what the service documents.
//
// The rules, the same in both languages:
// - path parameters are positional, in the order of the path;
// - then the JSON body: one object in TypeScript (`create({ name, document })`), keyword arguments in
//   Python (`create(name=…, document=…)`, snake_case for the camelCase fields);
// - then the query: one optional object in TypeScript, keyword arguments in Python;
// - last, per-call options (`headers`, `idempotencyKey`/`idempotency_key`, `signal`/`timeout`);
// - an operation answering `{ items, nextCursor }` returns an auto-paginating iterator with `.page()`;
// - a multipart upload takes `{ file, filename }` (a `format: binary` field);
// - Python names a method that is a keyword with a trailing underscore (`import_`).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import prettier from 'prettier';

const here = path.dirname(fileURLToPath(import.meta.url));
export const RESOURCES_TS_FILE = path.resolve(here, '..', 'src', 'generated', 'resources.ts');
export const RESOURCES_PY_FILE = path.resolve(
  here,
  '..',
  '..',
  'sdk-python',
  'src',
  'portico',
  '_generated.py',
);

/** resource (dotted for a nested one) -> method -> operationId. */
export const RESOURCES: Record<string, Record<string, string>> = {
  persons: {
    create: 'createPerson',
    get: 'getPerson',
    update: 'updatePerson',
    delete: 'deletePerson',
    list: 'listPersons',
    upsert: 'upsertPerson',
    import: 'importPersons',
    anonymise: 'anonymisePerson',
    sendEnrollmentLink: 'sendEnrollmentLink',
  },
  enrollment: {
    onboard: 'onboardPerson',
    enroll: 'enrollFace',
    register: 'registerPerson',
    verifyToken: 'verifyEnrollmentToken',
    health: 'onboardingHealth',
  },
  checkin: {
    identify: 'checkinIdentify',
    stepUp: 'checkinStepUp',
    livenessChallenge: 'checkinLivenessChallenge',
    qrToken: 'checkinGetQrToken',
    revokeQrToken: 'checkinRevokeQrToken',
    qr: 'checkinByQr',
    link: 'checkinByLink',
    manual: 'checkinManual',
    void: 'voidCheckin',
  },
  events: {
    create: 'createEvent',
    get: 'getEvent',
    update: 'updateEvent',
    delete: 'deleteEvent',
    list: 'listEvents',
    status: 'setEventStatus',
    configure: 'configureEvent',
    attendance: 'getEventAttendance',
  },
  guests: {
    list: 'listGuests',
    create: 'createGuest',
    update: 'updateGuest',
    delete: 'deleteGuest',
    import: 'importGuests',
    invite: 'inviteGuests',
    reinvite: 'reinviteGuests',
  },
  applications: {
    list: 'listApplications',
    create: 'createApplication',
    delete: 'deleteApplication',
  },
  'applications.keys': {
    list: 'listApiKeys',
    create: 'createApiKey',
    rotate: 'rotateApiKey',
    revoke: 'revokeApiKey',
  },
  tenants: {
    get: 'getTenant',
    update: 'updateTenant',
    settings: 'getTenantSettings',
    updateSettings: 'updateTenantSettings',
    sandbox: 'getSandbox',
    resetSandbox: 'resetSandbox',
  },
  checkins: {
    list: 'adminListCheckins',
  },
  webhooks: {
    deliveries: 'adminListWebhookDeliveries',
    delivery: 'adminGetWebhookDelivery',
    retryDelivery: 'adminRetryWebhookDelivery',
    test: 'adminSendTestWebhook',
  },
};

// --- the OpenAPI document, as far as the generator reads it ----------------------------------------

interface Schema {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
  additionalProperties?: boolean | Schema;
  nullable?: boolean;
  description?: string;
}
interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: Schema;
}
interface Operation {
  operationId: string;
  summary?: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, { schema: Schema }> };
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

interface Call {
  resource: string;
  method: string;
  httpMethod: string;
  path: string;
  op: Operation;
  pathParams: string[];
  query: Parameter[];
  json?: Schema;
  multipart?: Schema;
  bodyRequired: boolean;
  answers: Schema[];
  noContent: boolean;
  /** The item schema when the answer is a `{ items, nextCursor }` page. */
  pageItem?: Schema;
}

const refName = (ref: string) => ref.replace('#/components/schemas/', '');

function resolve(document: Document, schema: Schema): Schema {
  return schema.$ref ? resolve(document, document.components.schemas[refName(schema.$ref)]!) : schema;
}

export function calls(document: Document): Call[] {
  const byId = new Map<string, { httpMethod: string; path: string; op: Operation }>();
  for (const [p, item] of Object.entries(document.paths)) {
    for (const [httpMethod, op] of Object.entries(item))
      byId.set(op.operationId, { httpMethod, path: p, op });
  }
  const out: Call[] = [];
  for (const [resource, methods] of Object.entries(RESOURCES)) {
    for (const [method, operationId] of Object.entries(methods)) {
      const found = byId.get(operationId);
      if (!found) throw new Error(`${resource}.${method}: the document has no operation ${operationId}`);
      const { op, path: p, httpMethod } = found;
      const params = op.parameters ?? [];
      const content = op.requestBody?.content ?? {};
      const answers: Schema[] = [];
      let noContent = false;
      for (const [status, response] of Object.entries(op.responses)) {
        if (!/^2\d\d$/.test(status)) continue;
        const schema = response.content?.['application/json']?.schema;
        if (schema) answers.push(schema);
        else noContent = true;
      }
      const page = answers.length === 1 ? resolve(document, answers[0]!) : undefined;
      const isPage = page?.properties?.items?.items && page.properties.nextCursor;
      out.push({
        resource,
        method,
        httpMethod: httpMethod.toUpperCase(),
        path: p,
        op,
        pathParams: [...p.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!),
        query: params.filter((x) => x.in === 'query'),
        json: content['application/json']?.schema,
        multipart: content['multipart/form-data']?.schema,
        bodyRequired: op.requestBody?.required ?? false,
        answers,
        noContent,
        pageItem: isPage ? page.properties!.items!.items : undefined,
      });
    }
  }
  return out;
}

// --- TypeScript ---------------------------------------------------------------------------------

const TS_HEADER =
  "// Generated by `pnpm --filter @portico/sdk generate` from the service's /docs-json and the table in\n" +
  '// scripts/resources.ts. Do not edit: a test fails when this file differs from what the service documents.\n';

function tsSchema(schema: Schema, fallback: string): string {
  return schema.$ref ? `S['${refName(schema.$ref)}']` : fallback;
}

function tsCall(c: Call): string {
  const opType = `operations['${c.op.operationId}']`;
  const args: string[] = c.pathParams.map((name) => `${name}: string`);
  const init: string[] = [];
  if (c.pathParams.length) init.push(`path: { ${c.pathParams.join(', ')} }`);
  if (c.json || c.multipart) {
    const types: string[] = [];
    if (c.json) {
      types.push(tsSchema(c.json, `NonNullable<${opType}['requestBody']>['content']['application/json']`));
    }
    if (c.multipart) types.push('Upload');
    args.push(`body${c.bodyRequired ? '' : '?'}: ${types.join(' | ')}`);
    init.push('body');
  }
  if (c.query.length) {
    const required = c.query.some((q) => q.required);
    args.push(`query${required ? '' : '?'}: NonNullable<${opType}['parameters']['query']>`);
    init.push('query');
  }
  args.push('options?: RequestOptions');
  const uniqueAnswers = [...new Set(c.answers.map((a) => tsSchema(a, `Answer<'${c.op.operationId}'>`)))];
  if (c.noContent) uniqueAnswers.push('undefined');
  const doc = `/** \`${c.httpMethod} ${c.path}\` (${c.op.operationId})${c.op.summary ? `: ${c.op.summary.replace(/\*\//g, '*\\/')}` : ''} */`;
  const request = `'${c.httpMethod}', '${c.path}', { ${init.join(', ')} }, options`;
  if (c.pageItem) {
    const pageType = tsSchema(c.answers[0]!, `Answer<'${c.op.operationId}'>`);
    return `${doc}\n${c.method}: (${args.join(', ')}): PageIterator<${pageType}> => call.list(${request}),`;
  }
  const result = uniqueAnswers.length ? uniqueAnswers.join(' | ') : 'undefined';
  return `${doc}\n${c.method}: (${args.join(', ')}): Promise<${result}> => call.one(${request}),`;
}

export async function resourcesTs(document: Document): Promise<string> {
  const tree = new Map<string, string[]>();
  for (const c of calls(document)) {
    if (!tree.has(c.resource)) tree.set(c.resource, []);
    tree.get(c.resource)!.push(tsCall(c));
  }
  const object = (prefix: string): string => {
    const lines = [...(prefix === 'webhooks' ? ['...webhookHelpers,'] : []), ...(tree.get(prefix) ?? [])];
    for (const child of tree.keys()) {
      if (child.startsWith(`${prefix}.`) && !child.slice(prefix.length + 1).includes('.')) {
        lines.push(`${child.slice(prefix.length + 1)}: ${object(child)},`);
      }
    }
    return `{\n${lines.join('\n')}\n}`;
  };
  const top = [...tree.keys()].filter((k) => !k.includes('.'));
  const body = top.map((k) => `${k}: ${object(k)},`).join('\n');
  const source =
    TS_HEADER +
    "import type { components, operations } from './openapi.js';\n" +
    "import type { Caller, PageIterator, RequestOptions, Upload } from '../resource-call.js';\n" +
    "import { webhookHelpers } from '../webhooks.js';\n\n" +
    "type S = components['schemas'];\n" +
    (body.includes('Answer<') ? ANSWER_TYPE : '\n') +
    '/** Every resource of the API, its calls typed by the generated OpenAPI types. */\n' +
    'export function createResources(call: Caller) {\n' +
    `return {\n${body}\n};\n}\n\n` +
    'export type Resources = ReturnType<typeof createResources>;\n';
  const options = (await prettier.resolveConfig(RESOURCES_TS_FILE)) ?? {};
  return prettier.format(source, { ...options, filepath: RESOURCES_TS_FILE });
}

const ANSWER_TYPE =
  '/** The JSON answer of an operation whose schema has no name. */\n' +
  'type Answer<K extends keyof operations> = operations[K] extends {\n' +
  "  responses: { 200: { content: { 'application/json': infer A } } };\n" +
  '}\n' +
  '  ? A\n' +
  '  : unknown;\n\n';

// --- Python -------------------------------------------------------------------------------------

const PY_KEYWORDS = new Set([
  'import',
  'from',
  'class',
  'def',
  'global',
  'lambda',
  'pass',
  'return',
  'yield',
  'in',
  'is',
  'not',
  'and',
  'or',
  'if',
  'else',
  'for',
  'while',
  'with',
  'as',
  'try',
  'except',
  'finally',
  'raise',
  'del',
  'assert',
  'break',
  'continue',
  'None',
  'True',
  'False',
  'async',
  'await',
  'nonlocal',
  'elif',
]);

const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`).replace(/-/g, '_');
const pyName = (name: string) => (PY_KEYWORDS.has(snake(name)) ? `${snake(name)}_` : snake(name));
/** The class of a resource (`applications.keys` -> `ApplicationsKeysResource`). */
const pascal = (name: string) =>
  name
    .split('.')
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('') + 'Resource';
const pyString = (text: string) => JSON.stringify(text);

function pyType(schema: Schema, quoted = false): string {
  if (schema.$ref) return quoted ? `"${refName(schema.$ref)}"` : refName(schema.$ref);
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  const nullable = types.includes('null') || schema.nullable === true;
  const inner = (): string => {
    if (schema.enum) {
      const values = schema.enum.filter((v) => v !== null);
      if (values.length) return `Literal[${values.map((v) => JSON.stringify(v)).join(', ')}]`;
    }
    if (schema.const !== undefined) return `Literal[${JSON.stringify(schema.const)}]`;
    const alternatives = schema.oneOf ?? schema.anyOf;
    if (alternatives) {
      const parts = [...new Set(alternatives.map((s) => pyType(s, quoted)))];
      return parts.length === 1 ? parts[0]! : `Union[${parts.join(', ')}]`;
    }
    if (schema.allOf?.length === 1) return pyType(schema.allOf[0]!, quoted);
    const t = types.filter((x) => x !== 'null');
    if (t.length !== 1) return 'Any';
    switch (t[0]) {
      case 'string':
        return 'str';
      case 'integer':
        return 'int';
      case 'number':
        return 'float';
      case 'boolean':
        return 'bool';
      case 'array':
        return `List[${schema.items ? pyType(schema.items, quoted) : 'Any'}]`;
      case 'object':
        if (
          schema.additionalProperties &&
          typeof schema.additionalProperties === 'object' &&
          !schema.properties
        ) {
          return `Dict[str, ${pyType(schema.additionalProperties, quoted)}]`;
        }
        return 'Dict[str, Any]';
      default:
        return 'Any';
    }
  };
  const base = inner();
  return nullable && base !== 'Any' ? `Optional[${base}]` : base;
}

/** The fields of an object body, its alternatives (oneOf) and parts (allOf) merged. */
function objectFields(
  document: Document,
  schema: Schema,
): { properties: Record<string, Schema>; required: Set<string> } {
  const resolved = resolve(document, schema);
  const alternatives = resolved.oneOf ?? resolved.anyOf;
  if (alternatives) {
    const each = alternatives.map((a) => objectFields(document, a));
    const properties: Record<string, Schema> = {};
    for (const e of each) {
      for (const [field, schema] of Object.entries(e.properties)) {
        const seen = properties[field];
        // A discriminator (`factor: 'qr'` in one, `'staff'` in another): every value.
        properties[field] =
          seen?.enum && schema.enum
            ? { ...seen, enum: [...new Set([...seen.enum, ...schema.enum])] }
            : (seen ?? schema);
      }
    }
    return {
      properties,
      // Required only when every alternative requires it.
      required: new Set([...each[0]!.required].filter((f) => each.every((e) => e.required.has(f)))),
    };
  }
  if (resolved.allOf) {
    const each = resolved.allOf.map((a) => objectFields(document, a));
    return {
      properties: Object.assign({}, ...each.map((e) => e.properties)) as Record<string, Schema>,
      required: new Set(each.flatMap((e) => [...e.required])),
    };
  }
  return { properties: resolved.properties ?? {}, required: new Set(resolved.required ?? []) };
}

function pyModel(name: string, schema: Schema): string {
  const [base, extension, ...more] = schema.allOf ?? [];
  if (base?.$ref && extension?.properties && !more.length) {
    // `allOf: [Base, { extra fields }]`: a TypedDict extending the base's.
    return pyModel(name, { ...extension, description: schema.description }).replace(
      `class ${name}(TypedDict):`,
      `class ${name}(${refName(base.$ref)}):`,
    );
  }
  const doc = schema.description
    ? `    """${schema.description.replace(/"""/g, "'''").replace(/\\/g, '\\\\')}"""\n\n`
    : '';
  if (!schema.properties) return `${name} = ${pyType({ ...schema, description: undefined }, true)}\n`;
  const required = new Set(schema.required ?? []);
  const fields = Object.entries(schema.properties).map(([field, s]) => {
    const t = pyType(s);
    return [field, required.has(field) ? t : `NotRequired[${t}]`] as const;
  });
  const identifiers = fields.every(([field]) => /^[A-Za-z_]\w*$/.test(field) && !PY_KEYWORDS.has(field));
  if (!identifiers) {
    // Field names that are not Python identifiers: the functional form.
    const quoted = Object.entries(schema.properties).map(([f, s]) => {
      const t = pyType(s, true);
      return `${pyString(f)}: ${required.has(f) ? t : `NotRequired[${t}]`}`;
    });
    return `${name} = TypedDict(${pyString(name)}, {${quoted.join(', ')}})\n`;
  }
  const body = fields.length ? fields.map(([f, t]) => `    ${f}: ${t}`).join('\n') : '    pass';
  return `class ${name}(TypedDict):\n${doc}${body}\n`;
}

interface PyArg {
  /** The Python parameter. */
  name: string;
  /** The field on the wire. */
  wire: string;
  type: string;
  required: boolean;
}

function pyCall(document: Document, c: Call): string {
  const positional = c.pathParams.map((p) => `${pyName(p)}: str`);
  const keywords: PyArg[] = [];
  const bodyArgs: PyArg[] = [];
  const queryArgs: PyArg[] = [];
  if (c.json || c.multipart) {
    const schemas = [c.json, c.multipart].filter((s): s is Schema => s !== undefined);
    const both = schemas.length > 1;
    for (const schema of schemas) {
      const { properties, required } = objectFields(document, schema);
      for (const [field, s] of Object.entries(properties)) {
        if (bodyArgs.some((a) => a.wire === field)) continue;
        const binary = s.format === 'binary';
        const type = binary
          ? 'bytes'
          : field === 'frame'
            ? 'Photo'
            : field === 'frames'
              ? 'Sequence[Photo]'
              : pyType(s);
        bodyArgs.push({
          name: pyName(field),
          wire: field,
          type,
          required: c.bodyRequired && !both && required.has(field),
        });
      }
    }
    if (c.multipart) bodyArgs.push({ name: 'filename', wire: '', type: 'str', required: false });
  }
  for (const q of c.query) {
    queryArgs.push({
      name: pyName(q.name),
      wire: q.name,
      type: q.schema ? pyType(q.schema) : 'Any',
      required: !!q.required,
    });
  }
  keywords.push(...bodyArgs, ...queryArgs);
  const names = new Set([...c.pathParams.map(pyName)]);
  for (const k of keywords) {
    if (names.has(k.name) || k.name === 'options' || k.name === 'self') {
      throw new Error(`${c.resource}.${c.method}: the Python parameter ${k.name} is taken twice`);
    }
    names.add(k.name);
  }
  const signature = [
    'self',
    ...positional,
    ...(keywords.length ? ['*'] : []),
    ...keywords.filter((k) => k.required).map((k) => `${k.name}: ${k.type}`),
    ...keywords.filter((k) => !k.required).map((k) => `${k.name}: ${k.type} = OMIT`),
  ];
  if (!keywords.length) signature.push('*');
  signature.push('options: Optional[RequestOptions] = None');
  const answers = [...new Set(c.answers.map((a) => (a.$ref ? refName(a.$ref) : 'Dict[str, Any]')))];
  if (c.noContent) answers.push('None');
  let result =
    answers.length === 0 ? 'None' : answers.length === 1 ? answers[0]! : `Union[${answers.join(', ')}]`;
  const pathArgs = c.pathParams.map((p) => `${pyString(p)}: ${pyName(p)}`).join(', ');
  const pairs = (args: PyArg[]) => args.filter((a) => a.wire).map((a) => `${pyString(a.wire)}: ${a.name}`);
  const call = [
    pyString(c.httpMethod),
    pyString(c.path),
    `params={${pathArgs}}`,
    ...(c.json || c.multipart ? [`body={${pairs(bodyArgs).join(', ')}}`] : []),
    ...(c.multipart ? [`multipart=${c.json ? '"file"' : 'True'}`, 'filename=filename'] : []),
    ...(c.query.length ? [`query={${pairs(queryArgs).join(', ')}}`] : []),
    'options=options',
  ].join(', ');
  const fields = (label: string, args: PyArg[]) =>
    args.filter((a) => a.wire).length
      ? `\n\n        ${label}: ${args
          .filter((a) => a.wire)
          .map((a) => `\`\`${a.name}\`\`${a.required ? ' (required)' : ''}`)
          .join(', ')}.`
      : '';
  const summary = `${c.httpMethod} ${c.path} (${c.op.operationId})${c.op.summary ? `: ${c.op.summary}` : ''}`;
  let doc =
    summary.replace(/\\/g, '\\\\').replace(/"""/g, "'''") +
    fields(c.json?.$ref ? `Body (${refName(c.json.$ref)})` : 'Body', bodyArgs) +
    fields('Query', queryArgs);
  let body: string;
  if (c.pageItem) {
    const item = c.pageItem.$ref ? refName(c.pageItem.$ref) : 'Dict[str, Any]';
    result = `PageIterator[${item}]`;
    doc +=
      '\n\n        Iterates every item, page by page (following ``nextCursor``); ``.page()`` is the first page.';
    body = `return PageIterator(self._client, ${call})`;
  } else {
    body =
      result === 'None'
        ? `self._client.call(${call})`
        : `return cast(${pyString(result)}, self._client.call(${call}))`;
  }
  const name = pyName(c.method);
  return (
    `    def ${name}(${signature.join(', ')}) -> ${result}:\n` +
    `        """${doc}"""\n` +
    `        ${body}\n`
  );
}

const PY_HEADER = `"""Generated by \`pnpm --filter @portico/sdk generate\` from the service's /docs-json and the table in
shared/sdk-typescript/scripts/resources.ts (the TypeScript SDK's resources come from the same table).
Do not edit: a test fails when this file differs from what the service documents.

The wire types (TypedDicts, the fields as the API names them) and the resource classes."""

# fmt: off
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Literal, NotRequired, Optional, Sequence, TypedDict, Union, cast

from ._call import OMIT, PageIterator, Photo, RequestOptions
from .webhooks import WebhookHelpers

if TYPE_CHECKING:
    from .client import Portico
`;

export function resourcesPy(document: Document): string {
  const schemas = Object.entries(document.components.schemas).sort(([a], [b]) => a.localeCompare(b));
  // Extensions (allOf) last: a class's base must be defined before it.
  const extending = ([, schema]: [string, Schema]) => (schema.allOf?.[0]?.$ref ? 1 : 0);
  schemas.sort((a, b) => extending(a) - extending(b));
  const models = schemas.map(([name, schema]) => pyModel(name, schema)).join('\n\n');
  const byResource = new Map<string, Call[]>();
  for (const c of calls(document)) {
    if (!byResource.has(c.resource)) byResource.set(c.resource, []);
    byResource.get(c.resource)!.push(c);
  }
  const classes: string[] = [];
  // Children first, so a parent can make its children in __init__.
  const names = [...byResource.keys()].sort((a, b) => b.split('.').length - a.split('.').length);
  for (const resource of names) {
    const children = names.filter(
      (n) => n.startsWith(`${resource}.`) && !n.slice(resource.length + 1).includes('.'),
    );
    const init =
      `    def __init__(self, client: "Portico") -> None:\n        self._client = client\n` +
      children
        .map((child) => `        self.${pyName(child.split('.').pop()!)} = ${pascal(child)}(client)\n`)
        .join('');
    // Webhooks: the signature helpers (hand-written, webhooks.py) next to the generated calls.
    const base = resource === 'webhooks' ? '(WebhookHelpers)' : '';
    classes.push(
      `class ${pascal(resource)}${base}:\n    """\`\`portico.${resource
        .split('.')
        .map(pyName)
        .join('.')}\`\`"""\n\n${init}\n${byResource
        .get(resource)!
        .map((c) => pyCall(document, c))
        .join('\n')}`,
    );
  }
  const top = names.filter((n) => !n.includes('.'));
  const resources =
    'class Resources:\n    """Every resource of the API (``Portico`` inherits them)."""\n\n' +
    `    def _init_resources(self, client: "Portico") -> None:\n${top
      .map((n) => `        self.${pyName(n)} = ${pascal(n)}(client)\n`)
      .join('')}`;
  const exported = [...schemas.map(([name]) => name), ...names.map(pascal), 'Resources'].sort();
  return `${PY_HEADER}\n\n# --- wire types ---\n\n${models}\n\n# --- resources ---\n\n${classes.join('\n\n')}\n\n${resources}\n\n__all__ = [\n${exported.map((n) => `    ${pyString(n)},`).join('\n')}\n]\n`;
}
