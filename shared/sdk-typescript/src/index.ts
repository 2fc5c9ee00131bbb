// @portico/sdk: the typed client (generated from the service's OpenAPI document) and the hand-written
// parts around it. The MQTT helper is a separate entry, `@portico/sdk/mqtt`.
export { createPortico, type Portico, type PorticoOptions, type Schemas } from './client.js';
export {
  ok,
  PorticoConnectionError,
  PorticoError,
  PorticoHttpError,
  PorticoTimeoutError,
  type ErrorCode,
  type Problem,
} from './errors.js';
export { paginate, type Page } from './pagination.js';
export type { Resources } from './generated/resources.js';
export type { PageIterator, RequestOptions, Upload } from './resource-call.js';
export { DEFAULT_TIMEOUT_MS, USER_AGENT, type RetryOptions } from './transport.js';
export { VERSION } from './version.js';
export {
  constructWebhookEvent,
  DEFAULT_TOLERANCE_SECONDS,
  SIGNATURE_HEADER,
  SIGNATURE_V2_HEADER,
  TIMESTAMP_HEADER,
  verifyWebhookSignature,
  WebhookSignatureError,
  type PorticoEvent,
  type WebhookHeaders,
  type WebhookInput,
} from './webhooks.js';
export type { components, operations, paths } from './generated/openapi.js';
export type { Environment, EventData, EventDataMap, EventName } from './generated/events.js';
