// The type of texts.js for the service, which writes a few of these texts into HTML itself
// (modules/pages/document.ts); the browser loads texts.js as it is.
export declare const TEXTS: Record<'en' | 'pt-BR', Record<string, string>>;
