-- The start of the receiver's answer to a webhook attempt (bounded by the dispatcher, secrets redacted),
-- so the console's delivery log shows why a receiver refused a delivery.
ALTER TABLE "webhook_attempts" ADD COLUMN "response_excerpt" TEXT;
