// node-localstorage@3 ships no types: the part the store uses (store.ts replaces its start-up scan, `_sync`).
declare module 'node-localstorage' {
  export class LocalStorage {
    constructor(location: string, quota?: number);
    protected _location: string;
    protected _bytesInUse: number;
    protected _keys: string[];
    /** Per decoded key: its file name, its position in `_keys` and its size counted against the quota. */
    protected _metaKeyMap: Record<string, { key: string; index: number; size: number }>;
    length: number;
    protected _sync(): void;
  }
}
