-- The persons' search text, kept by a trigger as the guests' is (migration guest_search_text): name,
-- e-mail, document (also without its dots, dashes, slashes and spaces) and externalId, with case and
-- accents folded by the same fold_text, so `GET /v1/persons?q=joao` finds João on PGlite and PostgreSQL
-- alike. The list is newest first: an index on (tenant_id, created_at) serves both directions.

-- AlterTable
ALTER TABLE "persons" ADD COLUMN "search_text" TEXT;

CREATE FUNCTION persons_search_text() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.search_text := fold_text(concat_ws(chr(1), NEW.name, NEW.email, NEW.document,
    regexp_replace(NEW.document, '[-./[:space:]]', '', 'g'), NEW.external_id));
  RETURN NEW;
END
$$;

CREATE TRIGGER persons_search_text BEFORE INSERT OR UPDATE OF name, email, document, external_id ON "persons"
  FOR EACH ROW EXECUTE FUNCTION persons_search_text();

UPDATE "persons" SET "search_text" = fold_text(concat_ws(chr(1), "name", "email", "document",
  regexp_replace("document", '[-./[:space:]]', '', 'g'), "external_id"));

-- CreateIndex
CREATE INDEX "persons_tenant_id_created_at_idx" ON "persons"("tenant_id", "created_at");
