// Enrolled persons written straight to the tables in bulk, for benchmarks and tests of large galleries:
// one multi-row INSERT ... SELECT per batch for persons and one for their templates, each template
// encrypted as the service does (AES-256-GCM, bound to tenant and person). The parameters are single
// strings (ids comma-joined, the sealed templates as one base64 text cut in SQL): through Prisma and
// the driver adapters, array and bytea parameters cost several times more.
import { embeddingToBuffer } from '@portico/face-engine';
import type { AppDeps } from '../../src/deps.js';
import { newId } from '../../src/infra/db/index.js';
import { templateContext } from '../../src/modules/faces/gallery.js';

const BATCH = 10_000;

export async function seedEnrolled(
  deps: Pick<AppDeps, 'db' | 'cipher'>,
  options: {
    tenantId: string;
    modelId: string;
    count: number;
    /** Enrolment and template time (an hour ago, say: rows this fresh are re-read by every delta read). */
    enrolledAt: Date;
    /** The i-th template (unit vector). */
    embedding: (i: number) => Float32Array;
    /** Person names are `${namePrefix}${i}` (default "Synthetic "). */
    namePrefix?: string;
  },
): Promise<string[]> {
  const { prisma } = deps.db;
  const { tenantId, modelId, enrolledAt } = options;
  const personIds: string[] = [];
  for (let from = 0; from < options.count; from += BATCH) {
    const size = Math.min(BATCH, options.count - from);
    const persons = Array.from({ length: size }, () => newId());
    const templates = Array.from({ length: size }, () => newId());
    const sealed = persons.map((personId, i) =>
      deps.cipher.encrypt(
        embeddingToBuffer(options.embedding(from + i)),
        templateContext(tenantId, personId),
      ),
    );
    const length = sealed[0]!.length;
    if (sealed.some((s) => s.length !== length)) throw new Error('sealed templates differ in length');
    const prefix = options.namePrefix ?? 'Synthetic ';
    const personList = persons.join(',');
    await prisma.$executeRaw`
      INSERT INTO persons (id, tenant_id, name, document, enrolled_at, created_at, updated_at)
      SELECT p.id, ${tenantId}, ${prefix} || (${from}::int + p.n - 1), substr(md5(p.id), 1, 12),
             ${enrolledAt}, ${enrolledAt}, ${enrolledAt}
        FROM unnest(string_to_array(${personList}, ',')) WITH ORDINALITY AS p(id, n)`;
    await prisma.$executeRaw`
      INSERT INTO face_templates (id, tenant_id, person_id, model_id, embedding_enc, quality, created_at)
      SELECT t.id, ${tenantId}, t.person_id, ${modelId},
             substring(d.sealed FROM ((t.n - 1) * ${length})::int + 1 FOR ${length}::int), 0.9, ${enrolledAt}
        FROM (SELECT decode(${Buffer.concat(sealed).toString('base64')}, 'base64') AS sealed) d,
             unnest(string_to_array(${templates.join(',')}, ','), string_to_array(${personList}, ','))
               WITH ORDINALITY AS t(id, person_id, n)`;
    personIds.push(...persons);
  }
  return personIds;
}
